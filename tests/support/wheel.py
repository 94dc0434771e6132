"""lore as a user installs it: `python -m build` on a copy of the checkout, then the wheel alone
installed into a fresh venv with `pip install --no-index` from a local wheelhouse.

- The build runs once per test run (pytest-xdist workers share it under a file lock) on a copy of
  the tracked and untracked-but-not-ignored files, so the checkout gets no `build/` or egg-info and
  the copy holds no `.venv`: the model files come from setup.py's build step (copied from the venv's
  `make models` folder, else fetched with pip), as for any user.
- The wheelhouse (`~/.cache/lore-tests/wheelhouse`, or `$LORE_TEST_CACHE/../wheelhouse`) holds
  lore's dependencies as wheels, pinned to the versions this venv runs. It is filled with
  `pip download` once and reused across runs; the install itself never reaches an index.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
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


def checkout_files() -> list[str]:
    """The checkout as a clone plus the work in progress would have it: tracked files that still
    exist and untracked files that are not ignored."""
    out = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT)
    return sorted({f for f in out.split("\0") if f and (ROOT / f).is_file()})


def build(out: Path) -> tuple[Path, Path]:
    """(wheel, sdist) built by `python -m build` from a copy of the checkout, once per `out`."""
    with locked(out / ".lock"):
        dist = out / "dist"
        wheels, sdists = sorted(dist.glob("shared_lore-*.whl")), sorted(dist.glob("shared_lore-*.tar.gz"))
        if wheels and sdists:
            return wheels[0], sdists[0]
        source = out / "source"
        shutil.rmtree(source, ignore_errors=True)
        for name in checkout_files():
            target = source / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)
        env = {k: v for k, v in os.environ.items() if k != "LORE_MODELS_DIR"}
        _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)], env=env)
        shutil.rmtree(source, ignore_errors=True)
        return sorted(dist.glob("shared_lore-*.whl"))[0], sorted(dist.glob("shared_lore-*.tar.gz"))[0]


def wheelhouse() -> Path:
    cache = os.environ.get("LORE_TEST_CACHE")
    base = Path(cache).expanduser().parent if cache else Path.home() / ".cache" / "lore-tests"
    return base / "wheelhouse"


def _constraints(path: Path) -> Path:
    """This venv's versions of everything: the wheelhouse gets the same dependencies it runs."""
    pins = sorted(
        {
            f"{d.metadata['Name']}=={d.version}"
            for d in metadata.distributions()
            if d.metadata["Name"] and d.metadata["Name"].lower() != "shared-lore"
        }
    )
    path.write_text("\n".join(pins) + "\n")
    return path


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
