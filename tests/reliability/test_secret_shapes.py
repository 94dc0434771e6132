"""Trust round 4, item 4: the secret scanner stored 40 of 88 realistic shapes (connection strings with
an empty user, jdbc and ODBC forms, passwords of letters and digits, passwords on command lines, a
URL-encoded token, provider tokens the public scanners know). Every shape of tests/reliability/
shapes.py is refused by `lore facts add` and redacted in a handoff; every benign item is stored.
The counts are in docs/reliability.md (Secrets, round 4). The scanner before this round found 12 of
these 98 shapes."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from lore.core import capture, secrets
from reliability.conftest import Project
from reliability.shapes import benign, shapes

SHAPES = shapes()
BENIGN = benign()
LORE = str(Path(sys.executable).parent / "lore")


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_is_found_and_its_finding_names_it(name: str) -> None:
    text = SHAPES[name]
    found = secrets.scan(text)
    assert found, f"{name}: {text[:80]!r}"
    hit = found[0]
    assert text[hit.start : hit.end] not in hit.describe()  # never the whole credential


@pytest.mark.parametrize("name", sorted(BENIGN))
def test_each_benign_item_is_not_a_finding(name: str) -> None:
    assert secrets.scan(BENIGN[name]) == [], [f.describe() for f in secrets.scan(BENIGN[name])]


def test_the_counts_and_other_draws() -> None:
    """The table test: at least 88 shapes and 50 benign items, every shape found and no benign item
    flagged in this draw and three more (precision and recall both 1.0 on the corpus)."""
    assert len(SHAPES) >= 88 and len(BENIGN) >= 50
    for seed in range(3):
        missed = [n for n, text in shapes(seed + 300).items() if not secrets.scan(text)]
        flagged = [n for n, text in benign(seed + 300).items() if secrets.scan(text)]
        assert (missed, flagged) == ([], [])


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_each_shape_is_redacted_and_the_next_line_is_kept(name: str) -> None:
    """What the session-end hook stores of a final message: nothing left that looks like a credential,
    and the redaction stops at its line (the next line's first word stays)."""
    message = f"Deployed with this:\n{SHAPES[name]}\nNext step: rotate it tomorrow."
    stored, _ = capture.bound_message(message)
    assert stored is not None and "[redacted: " in stored
    assert secrets.scan(stored) == [], (name, stored)
    assert stored.endswith("\nNext step: rotate it tomorrow."), (name, stored)
    assert stored.startswith("Deployed with this:\n"), (name, stored)


def test_lore_facts_add_refuses_every_shape_and_stores_every_benign_item(
    project: Project, conn: psycopg.Connection
) -> None:
    for name, text in SHAPES.items():
        refused = project.lore("facts", "add", text[:1000])
        assert refused.returncode == 1, (name, refused.stdout)
        assert "looks like it holds a credential" in refused.stderr, (name, refused.stderr)
    assert conn.execute("SELECT count(*) FROM facts").fetchone() == (0,)
    for name, text in BENIGN.items():
        stored = project.lore("facts", "add", text)
        assert stored.returncode == 0, (name, stored.stderr)
    assert conn.execute("SELECT count(*) FROM facts").fetchone() == (len(BENIGN),)


def test_the_session_end_hook_redacts_every_shape(project: Project, conn: psycopg.Connection) -> None:
    """The real `lore hook session-end`, its final message holding the shapes (a few per turn, within
    the message's 4,000 characters): the stored handoff and its note hold none of them."""
    names = sorted(SHAPES)
    chunks = [names[i : i + 12] for i in range(0, len(names), 12)]
    env = {**project.env, "LORE_HOOK_DEADLINE": "3"}
    for k, chunk in enumerate(chunks):
        message = "\n".join(f"shape {names.index(name)}: {SHAPES[name]}" for name in chunk)
        payload = {"session_id": f"s-{k}", "cwd": str(project.dir), "last_assistant_message": message}
        done = subprocess.run(
            [LORE, "hook", "session-end", "--client", "claude-code"],
            input=json.dumps(payload),
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
            cwd="/",
        )
        assert done.returncode == 0 and done.stdout == "", done.stderr
    rows = conn.execute("SELECT session_id, message FROM handoffs ORDER BY session_id").fetchall()
    assert len(rows) == len(chunks), rows
    bodies = [str(r[0]) for r in conn.execute("SELECT body FROM notes WHERE kind = 'handoff'")]
    for session, message in rows:
        k = int(str(session).removeprefix("s-"))
        assert str(message).count("[redacted: ") >= len(chunks[k]), message
        kept = [n for n in chunks[k] if f"shape {names.index(n)}: " not in str(message)]
        assert kept == [], message  # the rest of each line is kept
        assert secrets.scan(str(message)) == [], message
    for body in bodies:
        assert secrets.scan(body) == [], body


def test_a_redaction_stops_at_its_line() -> None:
    """Trust round 4, item 7: a base64-encoded token at the end of a line took the next line's first
    word with it (`[redacted: …] step: rotate it`): a base64 run continues onto the next line only
    after a line as wide as base64 is wrapped at."""
    token = "ghp_" + "aB3d" * 9
    message = f"token (b64): {base64.b64encode(token.encode()).decode()}\nNext step: rotate it"
    stored, _ = capture.bound_message(message)
    assert stored == "token (b64): [redacted: GitHub token, base64-encoded]\nNext step: rotate it"


def test_a_private_key_is_redacted_to_its_end_line() -> None:
    """The finding of a key block ended after its first line of key material: a handoff kept the rest
    of the key. It now runs to the END line."""
    body = "\n".join("MIIEowIBAAKCAQEA" + chunk * 12 for chunk in ("x9Kq", "Zp3W", "r7Tm"))
    message = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\nNext step: rotate it"
    stored, _ = capture.bound_message(message)
    assert stored == "[redacted: private key block]\nNext step: rotate it"
