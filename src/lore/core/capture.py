"""What a session's end leaves behind, captured without a model (docs/design.md, Handoffs): the
agent's final message (from the event, else from the transcript the event names), the working
tree's changes at that moment (`git status --porcelain` and `git diff --stat HEAD`), bounded, with
every likely credential redacted. Standard library only: the session-end hook imports it.

Bounds, and why:

    message     4,000 characters: a final message is the agent's summary (what it did, what is
                left); the session-start block shows only its first lines, the rest is for
                `lore handoff` and search. Longer ones keep their start and their end (where the
                next steps usually are), cut in between with a marker saying how much went.
    git status  the first 50 lines of at most 300 characters, and the count of all of them.
    diff --stat 4,000 characters: the per-file lines first cut, the summary line always kept.
    transcript  its last 256 KiB are read for the final message, its first 4 KiB for when the
                session started: a transcript of hours is megabytes, the hook has 0.9 s.
    git         at most 0.5 s in all, status and diff at once, with optional locks off (the agent
                may be running git itself), every setting that runs a program off and nothing
                fetched (a partial clone's missing object is not asked for).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lore.core import files, secrets

MAX_MESSAGE = 4_000
MAX_STATUS_LINES = 50
MAX_LINE = 300
MAX_DIFFSTAT = 4_000
MAX_TITLE = 200
TAIL_BYTES = 256 * 1024
HEAD_BYTES = 4 * 1024
GIT_TIMEOUT = 0.5
_HEAD_KEEP, _TAIL_KEEP = 2_800, 1_000
# What keeps git from fetching anything while it looks at an untrusted tree (git_changes): no lazy
# fetch of a partial clone's missing objects (git 2.44, and Debian's 2.39.5), and no transport allowed
# should one be tried anyway (an empty list: every protocol refused, the repository's config aside).
NO_FETCH = {"GIT_NO_LAZY_FETCH": "1", "GIT_ALLOW_PROTOCOL": "", "GIT_PROTOCOL_FROM_USER": "0"}


@dataclass(frozen=True)
class Changes:
    """The working tree at one moment: status lines (bounded), how many there were, diff --stat."""

    lines: list[str]
    count: int
    diffstat: str | None

    @staticmethod
    def fields(changes: Changes | None) -> dict[str, Any]:
        """`changes`, `changed` and `diffstat` as a handoff's JSON holds them (None: unknown)."""
        if changes is None:
            return {"changes": None, "changed": 0, "diffstat": None}
        return {"changes": changes.lines, "changed": changes.count, "diffstat": changes.diffstat}


@dataclass(frozen=True)
class Handoff:
    """One handoff as the hook sends it to `lore_handoff_record` (migration 0007)."""

    space: str
    client: str
    session_id: str
    root: str
    workspace: str
    workspace_name: str
    event: str
    message: str | None
    message_chars: int
    changes: Changes | None
    started_at: datetime | None
    at: datetime | None = None  # when the event happened (None: when written)

    def payload(self) -> dict[str, Any]:
        """The JSON the SQL function reads (with its note's title; the database writes the body)."""
        changes = self.changes
        fields = {
            "space": self.space,
            "client": self.client,
            "session_id": self.session_id,
            "root": self.root,
            "workspace": self.workspace,
            "workspace_name": self.workspace_name,
            "event": self.event,
            "message": self.message,
            "message_chars": self.message_chars,
            **Changes.fields(changes),
            "started_at": self.started_at.isoformat() if self.started_at is not None else None,
            "at": self.at.isoformat() if self.at is not None else None,
            "title": title(self.client, self.workspace_name),
        }
        return {k: clean(v) if isinstance(v, str) else v for k, v in fields.items()}


def clean(text: str) -> str:
    """Text PostgreSQL stores: no NUL, no lone surrogate."""
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def redact(text: str) -> str:
    """Every likely credential (lore.secrets) replaced by `[redacted: <kind>]`."""
    found = secrets.scan(text)
    for finding in reversed(found):
        text = text[: finding.start] + f"[redacted: {finding.kind}]" + text[finding.end :]
    return text


def bound_message(text: str | None) -> tuple[str | None, int]:
    """(the message as stored, its length before): redacted, trimmed, cut to MAX_MESSAGE."""
    if text is None:
        return None, 0
    text = redact(clean(text)).strip()
    if not text:
        return None, 0
    size = len(text)
    if size > MAX_MESSAGE:
        cut = size - _HEAD_KEEP - _TAIL_KEEP
        text = f"{text[:_HEAD_KEEP]}\n[… {cut:,} characters cut …]\n{text[-_TAIL_KEEP:]}"
    return text, size


def _line(text: str) -> str:
    text = redact(clean(text.rstrip("\n")))
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1] + "…"


def bound_status(output: str) -> tuple[list[str], int]:
    """`git status --porcelain` output: (its first MAX_STATUS_LINES lines, bounded; how many)."""
    lines = [line for line in output.splitlines() if line.strip()]
    return [_line(line) for line in lines[:MAX_STATUS_LINES]], len(lines)


def bound_diffstat(output: str) -> str | None:
    """`git diff --stat` output within MAX_DIFFSTAT: per-file lines dropped from the end first; the
    summary line (`N files changed, ...`) always kept."""
    lines = [_line(line) for line in output.splitlines() if line.strip()]
    if not lines:
        return None
    summary, files = lines[-1], lines[:-1]
    kept: list[str] = []
    used = len(summary)
    for line in files:
        if used + len(line) + 1 + 40 > MAX_DIFFSTAT:  # room for the "... N more files" line
            kept.append(f" ... {len(files) - len(kept)} more files")
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join([*kept, summary])[:MAX_DIFFSTAT]


def git_changes(
    root: Path, env: Mapping[str, str] | None = None, timeout: float = GIT_TIMEOUT
) -> Changes | None:
    """The working tree's changes now, or None (not a git repository, no git, too slow).

    The repository is not trusted: its config (directly, through an include, in a submodule) can
    name programs git runs while it looks at the tree (`core.fsmonitor`, the `clean`/`process`
    filters of `.gitattributes`, textconv, an external diff). Every one of them is switched off for
    these commands through GIT_CONFIG_COUNT (which wins over every config file and takes any key, an
    `=` in a filter's name included), submodules are not entered, and the filters are the ones git
    itself lists. Runs with only PATH and HOME of `env` (the process's own by default): the client's
    GIT_* never leak in. Each git runs in a process group of its own, killed whole on the deadline.

    Nothing is fetched: in a partial clone (a promisor remote, an object missing) git would fetch the
    object, running the repository's `core.sshCommand`, `core.gitProxy`, `remote.*.uploadpack` or an
    `ext::` remote. NO_FETCH turns lazy fetching off and allows no transport at all (GIT_ALLOW_PROTOCOL
    empty wins over the repository's `protocol.*.allow`); the diff of a missing object fails instead."""
    base_env = _git_env(os.environ if env is None else env)
    deadline = time.monotonic() + timeout
    base = ["git", "-C", str(root), "--no-optional-locks"]
    safe = _safe_settings(base, base_env, deadline)
    if safe is None:
        return None
    outputs = _run_all(
        {
            "status": [
                *base,
                "status",
                "--porcelain=v1",
                "--untracked-files=normal",
                "--ignore-submodules=all",
            ],
            "diff": [
                *base,
                "diff",
                "--stat=200",
                "--no-color",
                "--no-textconv",
                "--no-ext-diff",
                "--ignore-submodules=all",
                "HEAD",
                "--",
            ],
        },
        {**base_env, **_config_env(safe)},
        deadline,
    )
    if outputs is None:
        return None
    code, status = outputs["status"]
    if code != 0:
        return None
    lines, count = bound_status(status)
    diff_code, diff = outputs["diff"]
    return Changes(lines, count, bound_diffstat(diff) if diff_code == 0 else None)


def _git_env(source: Mapping[str, str]) -> dict[str, str]:
    """The whole environment git runs with: PATH and HOME of `source`, nothing else of it."""
    return {
        "PATH": source.get("PATH", "/usr/bin:/bin"),
        "HOME": source.get("HOME", "/"),
        "LC_ALL": "C",
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_PAGER": "cat",
        **NO_FETCH,
    }


def _safe_settings(base: list[str], base_env: dict[str, str], deadline: float) -> dict[str, str] | None:
    """The config that switches off every program the repository could name, its filters included
    (as git lists them); None when git could not list them."""
    safe = {
        "core.fsmonitor": "false",
        "core.quotepath": "off",
        "diff.external": "",
        "status.submoduleSummary": "false",
        "protocol.allow": "never",
    }
    listed = _run_all(
        {"filters": [*base, "config", "--null", "--name-only", "--get-regexp", r"^filter\."]},
        {**base_env, **_config_env(safe)},
        deadline,
    )
    if listed is None or listed["filters"][0] not in (0, 1):  # 1: no filter configured
        return None
    for name in listed["filters"][1].split("\0"):
        driver = name[len("filter.") : name.rfind(".")] if name.count(".") >= 2 else ""
        if driver:
            for key in ("clean", "smudge", "process"):
                safe[f"filter.{driver}.{key}"] = ""
            safe[f"filter.{driver}.required"] = "false"
    return safe


def _config_env(settings: Mapping[str, str]) -> dict[str, str]:
    """`settings` as git's GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n."""
    out = {"GIT_CONFIG_COUNT": str(len(settings))}
    for index, (key, value) in enumerate(settings.items()):
        out[f"GIT_CONFIG_KEY_{index}"], out[f"GIT_CONFIG_VALUE_{index}"] = key, value
    return out


def _run_all(
    commands: Mapping[str, list[str]], env: dict[str, str], deadline: float
) -> dict[str, tuple[int, str]] | None:
    """Each command at once, each in its own process group; their (exit code, stdout), or None when
    one could not start or all did not end by `deadline` (then every group is killed)."""
    started: dict[str, subprocess.Popen[str]] = {}
    try:
        for name, command in commands.items():
            started[name] = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                encoding="utf-8",
                errors="replace",
                env=env,
                start_new_session=True,
            )
        outputs: dict[str, tuple[int, str]] = {}
        for name, proc in started.items():
            out, _ = proc.communicate(timeout=max(0.01, deadline - time.monotonic()))
            outputs[name] = (proc.returncode, out)
        return outputs
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        for proc in started.values():
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)  # git and whatever it started
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


# --- transcripts --------------------------------------------------------------------------------


def _text(content: Any, kinds: tuple[str, ...] = ("text", "output_text")) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block["text"]
            for block in content
            if isinstance(block, Mapping)
            and isinstance(block.get("text"), str)
            and block.get("type", "text") in kinds
        ]
        return "\n".join(parts) if parts else None
    return None


def assistant_text(entry: Any) -> str | None:
    """The assistant's text in one transcript line, in the formats seen: Claude Code
    (`{"type": "assistant", "message": {"content": [...]}}`), Codex (`{"type": "response_item",
    "payload": {"type": "message", "role": "assistant", ...}}`), Gemini CLI (`{"type": "gemini",
    "content": ...}`), and a plain `{"role": "assistant", "content": ...}`."""
    if not isinstance(entry, Mapping):
        return None
    kind = entry.get("type")
    if kind == "assistant" and isinstance(entry.get("message"), Mapping):
        return _text(entry["message"].get("content"))
    payload = entry.get("payload")
    if kind == "response_item" and isinstance(payload, Mapping):
        if payload.get("type") == "message" and payload.get("role") == "assistant":
            return _text(payload.get("content"))
        return None
    if kind == "gemini":
        return _text(entry.get("content"))
    if entry.get("role") == "assistant":
        return _text(entry.get("content"))
    return None


def _regular(path: str | None) -> Path | None:
    if not path:
        return None
    candidate = Path(path)
    try:
        return candidate if candidate.is_file() else None
    except OSError:
        return None


def last_message(transcript: str | None) -> str | None:
    """The last assistant text in a JSON Lines transcript, from its last TAIL_BYTES."""
    path = _regular(transcript)
    if path is None:
        return None
    try:
        with os.fdopen(files.open_regular(path), "rb") as handle:  # never a FIFO swapped in since
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - TAIL_BYTES))
            raw = handle.read(TAIL_BYTES)
    except OSError:
        return None
    lines = raw.decode("utf-8", "replace").splitlines()
    if size > TAIL_BYTES and lines:
        lines = lines[1:]  # the first line is cut
    for line in reversed(lines):
        try:
            text = assistant_text(json.loads(line))
        except ValueError:
            continue
        if text and text.strip():
            return text
    return None


_STARTED = re.compile(r'"(?:timestamp|startTime)"\s*:\s*"([0-9][0-9T:.+\-Z ]{9,40})"')


def transcript_started(transcript: str | None) -> datetime | None:
    """When a transcript began: the first timestamp of its first line (within HEAD_BYTES)."""
    path = _regular(transcript)
    if path is None:
        return None
    try:
        with os.fdopen(files.open_regular(path), "rb") as handle:
            head = handle.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    found = _STARTED.search(head.split("\n", 1)[0])
    return parse_time(found.group(1)) if found else None


def parse_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def title(client: str, workspace_name: str) -> str:
    return f"Handoff: {client} in {workspace_name}"[:MAX_TITLE]
