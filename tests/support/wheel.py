"""lore as a user installs it: the wheel `make wheel` built in the README's quick start
(support.quickstart: a fresh clone of this checkout), installed alone into a fresh venv with
`pip install --no-index` from a local wheelhouse.

The wheelhouse (`~/.cache/lore-tests/wheelhouse`, or `$LORE_TEST_CACHE/../wheelhouse`) holds, as
wheels pinned to the versions this venv runs, lore's dependencies and whatever else the quick start
installs (pip, the build backend, `build`, the model files' wheels). It is filled with `pip download`
once and reused across runs: the installs themselves never reach an index.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PIP = [sys.executable, "-m", "pip"]


class WheelError(RuntimeError):
    """The wheel could not be built or installed: the tests fail on this, never skip."""


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise WheelError(
            f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )
    return done.stdout


def wheelhouse() -> Path:
    cache = os.environ.get("LORE_TEST_CACHE")
    base = Path(cache).expanduser().parent if cache else Path.home() / ".cache" / "lore-tests"
    return base / "wheelhouse"


def _pins() -> list[str]:
    """This venv's versions of everything: the wheelhouse gets the same dependencies it runs."""
    return sorted(
        {
            f"{d.metadata['Name']}=={d.version}"
            for d in metadata.distributions()
            if d.metadata["Name"] and d.metadata["Name"].lower() != "shared-lore"
        }
    )


def _constraints(path: Path) -> Path:
    path.write_text("\n".join(_pins()) + "\n")
    return path


def stock(requirements: list[str], singles: list[list[str]], scratch: Path) -> Path:
    """The wheelhouse, holding `requirements` with their dependencies (at this venv's versions) and
    each of `singles` (one `pip download --no-deps` each, with its own options). Filled with
    `pip download` the first time a set is asked for; a stamp file names each set filled since."""
    key = json.dumps([sorted(requirements), singles, _pins()])
    house = wheelhouse()
    stamp = house / f".stocked-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    with locked(house.parent / "wheelhouse.lock"):
        if stamp.exists():
            return house
        house.mkdir(parents=True, exist_ok=True)
        scratch.mkdir(parents=True, exist_ok=True)
        download = [*PIP, "download", "--quiet", "--only-binary=:all:", "--dest", str(house)]
        _run([*download, "--constraint", str(_constraints(scratch / "constraints.txt")), *requirements])
        for single in singles:
            _run([*PIP, "download", "--quiet", "--no-deps", "--dest", str(house), *single])
        stamp.touch()
    return house


def install(wheel: Path, venv: Path) -> Path:
    """A fresh venv holding the wheel and its dependencies, installed with `--no-index` from the
    wheelhouse (filled first with `pip download` when something is missing). Returns its `lore`."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    house = wheelhouse()
    offline = [*PIP, "--python", python, "install", "--quiet", "--no-compile", "--no-index"]
    offline += ["--find-links", str(house), str(wheel)]
    with locked(house.parent / "wheelhouse.lock"):
        house.mkdir(parents=True, exist_ok=True)
        try:
            _run(offline)
        except WheelError:
            download = [*PIP, "download", "--quiet", "--only-binary=:all:", "--dest", str(house)]
            download += ["--constraint", str(_constraints(venv.parent / "constraints.txt")), str(wheel)]
            _run(download)
            for copied in house.glob("shared_lore-*"):  # pip download copies the wheel too: never a stale one
                copied.unlink()
            _run(offline)
    return venv / "bin" / "lore"
