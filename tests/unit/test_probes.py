"""What a kept session-start text depends on (lore.core.probes, ago_changes): asked again, a probe
answers as it did only while the disk says the same; "how long ago" says when it next changes."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lore.core import last_session, probes, stale, workspace


def test_probes_answer_again_as_they_did_until_the_disk_changes(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / ".git" / "config").write_text('[remote "origin"]\n\turl = git@h:o/r.git\n')
    (tmp_path / "repo" / "src").mkdir()
    with probes.recording() as seen:
        git = workspace.git_info(tmp_path / "repo" / "src")
        stale.forget_cache()
        gone = stale.gone("see src/app.py", str(tmp_path / "repo"), str(tmp_path / "repo"))
    assert git is not None and gone == ["src/app.py"]
    kinds = {kind for kind, _, _ in seen}
    assert {"realpath", "mode", "stat", "isdir", "exists"} <= kinds
    assert probes.still(seen)
    (tmp_path / "repo" / "src" / "app.py").write_text("")  # the named file appears
    assert not probes.still(seen)
    os.unlink(tmp_path / "repo" / "src" / "app.py")
    assert probes.still(seen)
    (tmp_path / "repo" / ".git" / "config").write_text('[remote "origin"]\n\turl = git@h:o/other.git\n')
    assert not probes.still(seen)  # another remote: the space may resolve otherwise


def test_nothing_is_noted_outside_a_recording(tmp_path: Path) -> None:
    with probes.recording() as seen:
        pass
    workspace.git_info(tmp_path)
    assert seen == []


def test_how_long_ago_says_when_it_next_reads_otherwise() -> None:
    then = datetime(2026, 12, 5, 10, 0, tzinfo=UTC)
    for after in (0, 30, 59, 60, 61, 3599, 3600, 7300, 47 * 3600, 49 * 3600, 10 * 86400):
        now = then + timedelta(seconds=after)
        changes = last_session.ago_changes(then, now)
        assert changes > now
        said = last_session.ago(then, now)
        assert last_session.ago(then, changes - timedelta(microseconds=1)) == said, after
        assert last_session.ago(then, changes) != said, after
