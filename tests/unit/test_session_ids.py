"""The session ids a stateless `lore serve` hands out carry the client's name (lore.core.session_ids)."""

from __future__ import annotations

import pytest

from lore.core import session_ids


def test_an_issued_id_gives_back_the_clients_name_and_version() -> None:
    first, second = session_ids.issue("claude-code", "2.1.332"), session_ids.issue("claude-code", "2.1.332")
    assert first != second  # 128 random bits each
    assert session_ids.client_of(first) == ("claude-code", "2.1.332")
    assert session_ids.issued(first) and all(0x21 <= ord(c) <= 0x7E for c in first)  # a header's characters
    assert session_ids.client_of(session_ids.issue("Zoë's agent ✓", "")) == ("Zoë's agent ✓", None)
    assert session_ids.client_of(session_ids.issue(None, None)) is None  # no name given: none carried
    long = session_ids.client_of(session_ids.issue("x" * 500, "v" * 500))
    assert long == ("x" * 200, "v" * 100)


@pytest.mark.parametrize(
    "other",
    [
        None,
        "",
        "0f1e2d3c4b5a69788796a5b4c3d2e1f0",  # the SDK's own (stateful mode)
        "lore1.not-base64!.00",
        "lore1.WyJvbmx5LW9uZSJd.00",  # ["only-one"]
        "lore2.WyJhIiwiYiJd.00",
        "lore1." + "A" * 2000 + ".00",
        "lore1.WyIiLCAiIl0.00",  # ["", ""]: a client that gave no name (an id, but no name in it)
    ],
)
def test_anything_else_names_no_client(other: str | None) -> None:
    assert session_ids.client_of(other) is None


def test_the_state_key_names_the_user() -> None:
    sid = session_ids.issue("a", "1")
    assert session_ids.state_key("alice", sid) != session_ids.state_key("bob", sid)
    assert session_ids.state_key(None, sid) == f"|{sid}"


def test_only_the_shape_lore_issues_is_well_formed() -> None:
    """A stateless server answers 404 to any other id (lore.http.stateless): one it cannot have issued."""
    for name, version in (("claude-code", "2.1.332"), (None, None), ("Zoë ✓", "")):
        assert session_ids.well_formed(session_ids.issue(name, version))
    issued = session_ids.issue("a", "1")
    prefix, payload, bits = issued.split(".")
    for other in (
        "",
        "0f1e2d3c4b5a69788796a5b4c3d2e1f0",  # the SDK's own (stateful mode)
        f"lore2.{payload}.{bits}",
        f"{prefix}.{payload}.{bits[:-1]}",  # 124 bits
        f"{prefix}.{payload}.{bits.upper()}",
        f"{prefix}.not-base64!.{bits}",
        f"{prefix}.WyJvbmx5LW9uZSJd.{bits}",  # ["only-one"]
        f"{prefix}.WzEsIDJd.{bits}",  # [1, 2]
        f"{prefix}.{payload}.{bits}.x",
        f"{prefix}.{'A' * 2000}.{bits}",
    ):
        assert not session_ids.well_formed(other), other
