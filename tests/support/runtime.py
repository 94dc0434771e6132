"""A Runtime over the test database for one space (`w`) whose folder is `<tmp>/app`: what the
integration tests that call use cases directly (as the CLI's local gateway does) start from."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lore.service.runtime import Runtime


@contextmanager
def one_space(tmp_path: Path, lore_env: dict[str, str]) -> Iterator[Runtime]:
    work = tmp_path / "app"
    work.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "w"\npaths = ["{work}"]\n')
    with Runtime(env=lore_env, transport="cli", cwd=str(work)) as runtime:
        yield runtime
