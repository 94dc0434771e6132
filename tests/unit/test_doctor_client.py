"""What `lore doctor` on a client calls a difference between this machine's config file and the one
pushed to the server (lore.cli.doctor_client.differences): pure."""

from __future__ import annotations

from pathlib import Path

from lore.cli.doctor_client import differences
from lore.core.config import load_config


def _pushed(accepts: list[str], paths: list[str]) -> dict[str, object]:
    space = {"id": "alice/work", "name": "work", "paths": paths, "remotes": [], "reads_from": [],
             "accepts_from": accepts}  # fmt: skip
    return {"user": "alice", "default_space": "alice/work", "spaces": [space]}


def test_a_teammates_linked_space_is_no_difference_and_a_path_is(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text(
        'default_space = "work"\n[[space]]\nid = "work"\npaths = ["~/w"]\naccepts_from = ["bob/work"]\n'
    )
    local = load_config({"LORE_CONFIG": str(file)}, file)
    assert differences(local, _pushed(["bob/work"], ["~/w"])) == []
    assert differences(local, _pushed([], ["~/w"])) == []
    assert differences(local, _pushed(["bob/work"], ["~/elsewhere"])) == ["work.paths"]
    assert differences(local, {"user": "alice", "spaces": []}) == ["space work only here", "default_space"]
