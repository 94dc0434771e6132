"""Install and drive the real Claude Code CLI headless, against :mod:`tests.e2e.mock_anthropic`.

Findings (Claude Code 2.1.332 on Linux x64, node 20, running as root, November 2026):

* The npm package is a wrapper whose ``bin/claude.exe`` is a placeholder; its postinstall
  (``node install.cjs``) hard-links the native binary from the optional dependency
  ``@anthropic-ai/claude-code-<platform>`` over it. npm 11 prints an "install scripts not yet covered
  by allowScripts" warning but still runs it. If scripts are disabled (``ignore-scripts``) the
  placeholder stays, so we verify ``--version`` and fall back to the platform package's binary.
* ``engines.node`` says ``>=22`` but the binary is self-contained (it embeds its own runtime, and
  reports ``x-stainless-runtime-version: v26``): node 20 only prints an EBADENGINE warning. We pass
  ``--engine-strict=false`` so a developer's ``engine-strict`` npmrc cannot break the install.
* Install: ~8 s (downloads ~400 MB unpacked) once; ``claude --version`` ~10 ms; a ``-p`` run against
  the mock takes well under 1 s without MCP servers, ~1-2 s with a Python stdio MCP server.
* ``-p`` mode needs NO onboarding/trust flags in ``~/.claude.json``: an empty isolated HOME works
  (Claude Code writes ``.claude.json`` and ``.claude/`` there itself). Workspace trust is not asked in
  ``-p`` mode.
* ``--dangerously-skip-permissions`` is refused as root ("cannot be used with root/sudo privileges",
  exit 1). Use ``--allowedTools NAME`` (e.g. ``mcp__plugin_x_y__ping``) to let a mocked tool_use run;
  a tool not allowed comes back to the model as an error tool_result (a permission denial), not a
  prompt.
* stdin must be closed (``DEVNULL``): with ``-p`` Claude Code otherwise waits on an inherited stdin.
* With ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` a plain ``-p`` run makes exactly ONE request
  (``POST /v1/messages?beta=true``, streaming, with tools); without it there is also a
  ``HEAD /api/hello`` connectivity probe. No count_tokens, no title/summary haiku call in ``-p`` mode.
* ``ENABLE_TOOL_SEARCH=false`` puts MCP tools in ``tools[]`` (else they are deferred behind tool
  search); ``MCP_CONNECTION_NONBLOCKING=0`` makes the first request wait for MCP servers.
* The environment is built from an allow-list, so the developer's real ``ANTHROPIC_*``/cloud
  credentials, ``CLAUDE_CONFIG_DIR`` and ``XDG_*`` never reach the CLI, its hooks or MCP servers.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

#: The exact Claude Code version the e2e tests are pinned to (``npm view @anthropic-ai/claude-code version``).
CLAUDE_CODE_VERSION = "2.1.332"
PACKAGE = "@anthropic-ai/claude-code"

# Copied from the developer's environment when set (everything else is dropped).
_ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SYSTEMROOT")


class ClaudeInstallError(RuntimeError):
    """The pinned Claude Code CLI could not be installed or does not run. Tests must fail on this."""


class ClaudeTimeoutError(RuntimeError):
    def __init__(self, message: str, stdout: str, stderr: str) -> None:
        super().__init__(f"{message}\n--- stdout ---\n{stdout[-4000:]}\n--- stderr ---\n{stderr[-4000:]}")
        self.stdout = stdout
        self.stderr = stderr


def cache_dir() -> Path:
    """``$LORE_TEST_CACHE`` if set, else ``~/.cache/lore-tests/npm``."""
    env = os.environ.get("LORE_TEST_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "lore-tests" / "npm"


def _platform_package() -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine, machine)
    system = sys.platform
    if system.startswith("linux"):
        musl = Path("/etc/alpine-release").exists() or any(Path("/lib").glob("ld-musl-*"))
        return f"{PACKAGE}-linux-{arch}{'-musl' if musl else ''}"
    if system == "darwin":
        return f"{PACKAGE}-darwin-{arch}"
    return f"{PACKAGE}-win32-{arch}"


def _candidates(prefix: Path) -> list[Path]:
    modules = prefix / "node_modules"
    exe = "claude.exe" if sys.platform == "win32" else "claude"
    return [
        modules / PACKAGE / "bin" / "claude.exe",  # the postinstall-replaced wrapper binary
        modules / _platform_package() / exe,  # fallback when install scripts did not run
    ]


def _runs(binary: Path) -> bool:
    if not binary.is_file() or not os.access(binary, os.X_OK):
        return False
    try:
        out = subprocess.run(
            [str(binary), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            env=_base_env(Path(os.environ.get("TMPDIR", "/tmp"))),
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and out.stdout.strip().startswith(CLAUDE_CODE_VERSION)


def _find_working(prefix: Path) -> Path | None:
    return next((c for c in _candidates(prefix) if _runs(c)), None)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # serialise concurrent installs (e.g. pytest-xdist workers)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_claude_cli(version: str = CLAUDE_CODE_VERSION) -> Path:
    """Install the pinned Claude Code into the cache once; return the runnable ``claude`` binary.

    Raises :class:`ClaudeInstallError` (never skips) when npm is missing, the registry is unreachable,
    or the install does not yield a binary that reports the pinned version.
    """
    if version != CLAUDE_CODE_VERSION:
        raise ValueError("only the pinned version is supported")
    root = cache_dir()
    prefix = root / f"claude-code-{version}"
    found = _find_working(prefix)
    if found is not None:
        return found
    with _locked(root / f".claude-code-{version}.lock"):
        found = _find_working(prefix)  # another process may have finished the install meanwhile
        if found is not None:
            return found
        npm = shutil.which("npm")
        if npm is None:
            raise ClaudeInstallError("npm is not on PATH: cannot install the Claude Code CLI for e2e tests")
        prefix.mkdir(parents=True, exist_ok=True)
        cmd = [
            npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--no-save",
            "--engine-strict=false",
            "--include=optional",
            "--ignore-scripts=false",
            f"{PACKAGE}@{version}",
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as exc:
            raise ClaudeInstallError(f"npm install of {PACKAGE}@{version} timed out after 900 s") from exc
        if proc.returncode != 0:
            raise ClaudeInstallError(
                f"npm install of {PACKAGE}@{version} failed (exit {proc.returncode}); is the npm registry "
                f"reachable?\n{proc.stderr[-3000:]}"
            )
        found = _find_working(prefix)
        if found is None:
            raise ClaudeInstallError(
                f"npm installed {PACKAGE}@{version} into {prefix} but no runnable binary reports "
                f"{version} (tried {', '.join(map(str, _candidates(prefix)))}; platform package "
                f"{_platform_package()} missing?)\n{proc.stderr[-3000:]}"
            )
        return found


def _base_env(home: Path) -> dict[str, str]:
    env = {k: os.environ[k] for k in _ENV_ALLOW if k in os.environ}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env["HOME"] = str(home)
    return env


def claude_env(home: Path, mock_url: str, env_extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a headless run (see the module docstring for why each variable is set)."""
    env = _base_env(home)
    env.update(
        {
            "ANTHROPIC_BASE_URL": mock_url,
            "ANTHROPIC_API_KEY": "dummy",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "MCP_CONNECTION_NONBLOCKING": "0",
            "ENABLE_TOOL_SEARCH": "false",
        }
    )
    if env_extra:
        env.update(env_extra)
    return env


def run_claude(
    prompt: str,
    *,
    cwd: Path,
    home: Path,
    mock_url: str,
    plugin_dir: Path | None = None,
    extra_args: Sequence[str] = (),
    env_extra: Mapping[str, str] | None = None,
    timeout: float = 120,
    claude: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``claude -p PROMPT --output-format json`` headless in ``cwd`` with an isolated ``home``.

    Does not check the exit code (tests assert on it). On timeout the whole process group (the CLI,
    its hooks and MCP servers) is killed and :class:`ClaudeTimeoutError` is raised.
    """
    binary = claude or ensure_claude_cli()
    home.mkdir(parents=True, exist_ok=True)
    args = [str(binary), "-p", prompt, "--output-format", "json"]
    if plugin_dir is not None:
        args += ["--plugin-dir", str(plugin_dir)]
    args += list(extra_args)
    proc = subprocess.Popen(
        args,
        cwd=cwd,
        env=claude_env(home, mock_url, env_extra),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # own process group: a timeout can kill hooks and MCP servers too
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise ClaudeTimeoutError(f"claude -p did not finish within {timeout} s", stdout, stderr) from None
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # reap any hook/MCP server the CLI left behind (our group only)
    return subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)


def result_json(cp: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The ``--output-format json`` result object (``result``, ``is_error``, ``num_turns``, ...)."""
    try:
        data = json.loads(cp.stdout)
    except ValueError as exc:
        raise AssertionError(
            f"claude printed no JSON result (exit {cp.returncode})\nstdout: {cp.stdout[-2000:]}\n"
            f"stderr: {cp.stderr[-2000:]}"
        ) from exc
    if not isinstance(data, dict):
        raise AssertionError(f"unexpected claude result: {data!r}")
    return data


def write_plugin(
    root: Path,
    name: str,
    *,
    session_start_stdout: str | None = None,
    session_start_matcher: str = "startup|clear",
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """Write a minimal Claude Code plugin into ``root`` (loaded with ``--plugin-dir root``).

    ``session_start_stdout``: the hook prints exactly this text (it is stored in
    ``hooks/session_start.out``); the hook's stdin JSON is saved to ``hook-stdin.json`` so a test can
    prove the hook ran. ``mcp_servers`` is the ``mcpServers`` table of the plugin's ``.mcp.json``
    (``${CLAUDE_PLUGIN_ROOT}`` expands in its args). Tools appear as ``mcp__plugin_<name>_<server>__<tool>``.
    """
    (root / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    manifest = {"name": name, "version": "0.0.1", "description": f"{name} (e2e test plugin)"}
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest, indent=2))
    if session_start_stdout is not None:
        hooks = root / "hooks"
        hooks.mkdir(exist_ok=True)
        (hooks / "session_start.out").write_text(session_start_stdout)
        command = (
            'cat > "${CLAUDE_PLUGIN_ROOT}/hook-stdin.json"; '
            'cat "${CLAUDE_PLUGIN_ROOT}/hooks/session_start.out"'
        )
        config = {
            "hooks": {
                "SessionStart": [
                    {"matcher": session_start_matcher, "hooks": [{"type": "command", "command": command}]}
                ]
            }
        }
        (hooks / "hooks.json").write_text(json.dumps(config, indent=2))
    if mcp_servers is not None:
        (root / ".mcp.json").write_text(json.dumps({"mcpServers": dict(mcp_servers)}, indent=2))
    return root
