"""The wheel is the whole product: the wheel (and the sdist) that the README's `make wheel` built
on a fresh clone (support.quickstart, once per run) installs alone, in a fresh venv with no index
and away from the checkout, and has working local embeddings and every command
(tests/support/wheel.py installs it).

Cost here: ~10 s; the build and the install are the quick start's.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import wheel as wheels
from support.mcpclient import lore_stdio_session, ok, text
from support.quickstart import Outcome

from lore.embeddings.files import MINILM_ONNX_SHA256, PINS

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="session")
def built(quickstart: Outcome) -> tuple[Path, Path]:
    """(wheel, sdist): what the quick start's `make wheel` built in its fresh clone."""
    if quickstart.wheel is None or quickstart.sdist is None:
        raise wheels.WheelError(f"the README's quick start built no wheel and sdist: {quickstart.failure}")
    return Path(quickstart.wheel), Path(quickstart.sdist)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_wheel_and_the_sdist_carry_the_model_files(built: tuple[Path, Path]) -> None:
    wheel, sdist = built
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for folder, pins in PINS.items():
            for name, digest in pins.items():
                assert _sha(archive.read(f"lore/models/{folder}/{name}")) == digest, (folder, name)
        assert "lore/models/NOTICE.md" in names  # where each file comes from, and its licence
        for resource in ("lore/db/migrations/0001_initial.sql", "lore/http/web/templates/base.html"):
            assert resource in names
        assert not [n for n in names if n.startswith(("tests/", "scripts/", "bench/"))]
    assert wheel.stat().st_size < 40 * 1024 * 1024
    with tarfile.open(sdist) as tar:  # a wheel built from the sdist needs no network either
        members = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
    assert {
        "setup.py",
        "scripts/fetch_models.py",
        "src/lore/models/all-MiniLM-L6-v2/tokenizer.json",
    } <= members


@pytest.fixture
def installed(quickstart: Outcome) -> Path:
    """The `lore` of the fresh venv the quick start installed the wheel into (only the test below
    uses it: it removes the model files at its end)."""
    if quickstart.lore is None:
        raise wheels.WheelError(f"the README's quick start installed no wheel: {quickstart.failure}")
    return Path(quickstart.lore)


@pytest.fixture
def user_env(lore_env: dict[str, str], installed: Path, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The test database and a fresh HOME; PATH has the fresh venv first and no other lore."""
    checkout = str(Path(sys.executable).parent)
    path = [str(installed.parent), *(p for p in lore_env["PATH"].split(":") if p and p != checkout)]
    yield {**lore_env, "PATH": ":".join(path), "LORE_EMBED_TIMEOUT": "60"}


def _lore(lore: Path, env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(lore), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


async def test_the_installed_wheel_alone_embeds_searches_and_runs_every_command(
    installed: Path, user_env: dict[str, str], tmp_path: Path
) -> None:
    project = tmp_path / "acme-api"
    project.mkdir()
    Path(user_env["LORE_CONFIG"]).write_text(
        f'default_space = "acme"\n[[space]]\nid = "acme"\npaths = ["{project}"]\n'
    )
    venv = installed.parent.parent
    python = str(venv / "bin" / "python")
    # Away from the checkout: the package, its models and every resource come from the venv.
    probe = subprocess.run(
        [python, "-c", _PROBE], env=user_env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert probe.returncode == 0, probe.stderr
    package = Path(probe.stdout.strip())
    assert package.is_relative_to(venv), package
    assert (
        _sha((package / "models" / "all-MiniLM-L6-v2" / "tokenizer.json").read_bytes())
        == (PINS["all-MiniLM-L6-v2"]["tokenizer.json"])
    )

    version = _lore(installed, user_env, "--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("lore "), version
    doctor = _lore(installed, user_env, "doctor", cwd=project)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    embedder = next(line for line in doctor.stdout.splitlines() if " embedder " in f" {line}")
    assert embedder.startswith("OK   embedder local: all-MiniLM-L6-v2-int8, 384 dimensions"), embedder
    assert str(package / "models" / "all-MiniLM-L6-v2") in embedder

    note = "The deploy pipeline ships the containers to production every Friday afternoon."
    async with lore_stdio_session(user_env, cwd=project, client="claude-code", binary=str(installed)) as s:
        await ok(s, "remember_note", body=note, kind="devenv")
    reindex = _lore(installed, user_env, "reindex", cwd=project)  # the write embedded it already
    assert reindex.returncode == 0 and "Embedded 0 notes with all-MiniLM-L6-v2-int8" in reindex.stdout, (
        reindex
    )
    query = "what weekday are releases"  # no word (or stem) in common with the note; cosine 0.44
    async with lore_stdio_session(user_env, cwd=project, binary=str(installed)) as s:
        found = (await ok(s, "search_notes", query=query)).structured_content
    assert found is not None and [r["why"] for r in found["results"]] == ["semantic"], found
    keyword_only = {**user_env, "LORE_EMBEDDER": "none"}
    async with lore_stdio_session(keyword_only, cwd=project, binary=str(installed)) as s:
        assert "No notes match" in text(await ok(s, "search_notes", query=query))

    # Every command parses and its module imports from the wheel (no command is left out of it).
    for command in _COMMANDS:
        helped = _lore(installed, user_env, *command, "--help", cwd=tmp_path)
        assert helped.returncode == 0 and "usage: lore" in helped.stdout, (command, helped.stderr)

    # Without the model files, doctor fails loudly and says how to get them back.
    for folder in PINS:
        for name in PINS[folder]:
            (package / "models" / folder / name).unlink()
    broken = _lore(installed, user_env, "doctor", cwd=project)
    assert broken.returncode == 1
    line = next(line for line in broken.stdout.splitlines() if " embedder " in f" {line}")
    assert line.startswith("FAIL embedder local") and "missing" in line and "keyword only" in line, line
    assert "Traceback" not in broken.stderr


def test_pip_installs_lore_from_the_repository_url(quickstart: Outcome, tmp_path: Path) -> None:
    """The README's `pipx install git+URL` (or `uv tool install git+URL`), done with pip as the quick
    start does its `pipx install` (neither pipx nor uv is on the test machines): the quick start's
    fresh clone by its `git+file://` URL, built from source (setup.py fetches the model files) in an
    isolated build, installed into a fresh venv; pip and the build reach no index (the wheelhouse)."""
    if not quickstart.clone or quickstart.lore is None:
        raise wheels.WheelError(f"the README's quick start did not get that far: {quickstart.failure}")
    clone = Path(quickstart.clone)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()
    house = wheels.wheelhouse()
    offline = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "LORE_", "VIRTUAL_ENV"))},
        "PIP_NO_INDEX": "1",  # the isolated build's own pip and setup.py's `pip download` too
        "PIP_FIND_LINKS": str(house),
    }
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    url = f"shared-lore @ git+file://{clone}@{commit}"
    with wheels.locked(house.parent / "wheelhouse.lock"):  # read while no other run fills it
        done = subprocess.run(
            [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-compile", url],
            env=offline,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lore = venv / "bin" / "lore"
    version = subprocess.run(
        [str(lore), "--version"], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert version.returncode == 0 and version.stdout.startswith("lore "), version
    models = subprocess.run(
        [python, "-c", "import lore, pathlib; print(pathlib.Path(lore.__path__[0]) / 'models')"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    folder = Path(models.stdout.strip())
    assert folder.is_relative_to(venv), folder
    for name, digest in PINS["all-MiniLM-L6-v2"].items():
        assert _sha((folder / "all-MiniLM-L6-v2" / name).read_bytes()) == digest, name


# Imports every module of the installed package and reads each kind of package data.
_PROBE = f"""
import importlib, pkgutil, lore
from importlib import resources
for info in pkgutil.walk_packages(lore.__path__, "lore."):
    importlib.import_module(info.name)
root = resources.files("lore")
assert root.joinpath("http", "web", "templates", "base.html").is_file()
assert root.joinpath("http", "web", "static", "lore.css").is_file()
assert root.joinpath("installers", "assets", "opencode-plugin.js").is_file()
assert root.joinpath("db", "migrations", "0001_initial.sql").is_file()
from lore.embeddings.local import _packaged_onnx
from lore.embeddings.files import check
check(_packaged_onnx(), "{MINILM_ONNX_SHA256}")
print(lore.__path__[0])
"""
_COMMANDS = [
    ["mcp"],
    ["serve"],
    ["run"],
    ["doctor"],
    ["facts", "list"],
    ["notes", "add"],
    ["export"],
    ["import"],
    ["import-markdown"],
    ["purge"],
    ["install"],
    ["hook"],
    ["completion"],
]
