"""Install pinned agent CLIs from npm into a cache once, for the e2e tests (the approach of
tests/e2e/claude.py, for any package).

A package that cannot be installed (no npm, registry unreachable, a binary that does not report the
pinned version) raises :class:`NpmInstallError`: the tests FAIL with that reason, never skip.
Installs are serialised with a file lock (pytest-xdist workers) and reused across runs.

Pinned versions (``npm view PACKAGE version``, November 2026) and what one install costs here:
Gemini CLI 0.61.0 ~10 s, Codex 0.171.0 ~11 s, OpenCode 1.18.33 ~15 s, OpenCode's plugin package
~5 s, Cline 3.0.65 ~18 s, Copilot CLI 1.0.102 ~4 s (its first start then unpacks ~235 MB, ~4 s: see
:func:`copilot_package`). Cached runs cost nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Package:
    name: str  # the npm package
    version: str
    bin: str  # the executable under node_modules/.bin
    slug: str  # the cache folder: <slug>-<version>


GEMINI = Package("@google/gemini-cli", "0.61.0", "gemini", "gemini-cli")
CODEX = Package("@openai/codex", "0.171.0", "codex", "codex")
OPENCODE = Package("opencode-ai", "1.18.33", "opencode", "opencode")
#: The Cline CLI (a Bun binary from `@cline/cli-linux-x64`), not the VS Code extension.
CLINE = Package("cline", "3.0.65", "cline", "cline")
#: Copilot CLI: a Node loader and the native binary from `@github/copilot-linux-x64`.
COPILOT = Package("@github/copilot", "1.0.102", "copilot", "copilot")
#: OpenCode runs `npm install @opencode-ai/plugin@<its version>` in each config dir at start (which
#: hangs without the registry); tests link a cached install into the config dir instead.
OPENCODE_PLUGIN = Package("@opencode-ai/plugin", OPENCODE.version, "", "opencode-plugin")
#: The official MCP bundle CLI (`mcpb validate`, `unpack`, `info`) and its library (the launch config
#: Claude Desktop derives from a manifest); ~4 s to install here.
MCPB = Package("@anthropic-ai/mcpb", "2.1.2", "mcpb", "mcpb")


class NpmInstallError(RuntimeError):
    """A pinned CLI could not be installed or does not run. Tests must fail on this."""


def cache_dir() -> Path:
    """``$LORE_TEST_CACHE`` if set, else ``~/.cache/lore-tests/npm`` (shared with tests/e2e)."""
    env = os.environ.get("LORE_TEST_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "lore-tests" / "npm"


def prefix(package: Package) -> Path:
    return cache_dir() / f"{package.slug}-{package.version}"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def version_home() -> Path:
    """The HOME of every `--version` check (a CLI may leave state there, never in a test's HOME)."""
    return cache_dir() / ".version-home"


def _version_ok(binary: Path, version: str) -> bool:
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        return False
    home = version_home()
    home.mkdir(parents=True, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "CODEX_HOME": str(home)}
    try:
        out = subprocess.run(
            [str(binary), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and version in out.stdout


def _installed(package: Package) -> Path | None:
    root = prefix(package)
    if not package.bin:
        marker = root / "node_modules" / package.name / "package.json"
        return root if marker.is_file() and f'"version": "{package.version}"' in marker.read_text() else None
    binary = root / "node_modules" / ".bin" / package.bin
    return binary if _version_ok(binary, package.version) else None


def ensure(package: Package) -> Path:
    """The runnable binary (or, for a library, its install folder), installed once into the cache."""
    found = _installed(package)
    if found is not None:
        return found
    with _locked(cache_dir() / f".{package.slug}-{package.version}.lock"):
        found = _installed(package)
        if found is not None:
            return found
        npm = shutil.which("npm")
        if npm is None:
            raise NpmInstallError(f"npm is not on PATH: cannot install {package.name} for the e2e tests")
        root = prefix(package)
        root.mkdir(parents=True, exist_ok=True)
        cmd = [
            npm,
            "install",
            "--prefix",
            str(root),
            "--no-audit",
            "--no-fund",
            "--engine-strict=false",
            "--include=optional",
            "--ignore-scripts=false",
        ]
        if package.bin:
            cmd += ["--no-save", f"{package.name}@{package.version}"]
        else:  # a library, laid out as OpenCode lays out its config dir
            (root / "package.json").write_text(
                f'{{"dependencies": {{"{package.name}": "{package.version}"}}}}\n'
            )
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise NpmInstallError(f"npm install of {package.name}@{package.version} timed out") from exc
        if proc.returncode != 0:
            raise NpmInstallError(
                f"npm install of {package.name}@{package.version} failed (exit {proc.returncode}); is the "
                f"npm registry reachable?\n{proc.stderr[-3000:]}"
            )
        found = _installed(package)
        if found is None:
            raise NpmInstallError(
                f"npm installed {package.name}@{package.version} into {root}, but it does not run or does "
                f"not report {package.version}\n{proc.stderr[-3000:]}"
            )
        return found


def copilot_package(binary: Path) -> Path:
    """Copilot CLI unpacks its package (~235 MB: the JS, the native runtime) into
    `$XDG_CACHE_HOME/copilot/pkg/` on its first start; the version check has done it under
    :func:`version_home`. Tests link a fresh cache's `copilot/pkg` here, so each run starts in a
    second and nothing else (its MCP tool cache) is shared between tests."""
    pkg = version_home() / ".cache" / "copilot" / "pkg"
    if not any(pkg.glob(f"*/{COPILOT.version}")):  # <platform>/<version>
        with _locked(cache_dir() / f".{COPILOT.slug}-{COPILOT.version}.lock"):
            if not _version_ok(binary, COPILOT.version) or not any(pkg.glob(f"*/{COPILOT.version}")):
                raise NpmInstallError(f"{binary} --version did not unpack Copilot CLI into {pkg}")
    return pkg
