"""How each agent hands a hook its input and reads its output (docs/design.md, Session start). A registry: one
adapter per client; an unknown name lists the known ones."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class HookInput:
    cwd: str | None
    source: str | None  # startup | resume | clear | compact (None when the client does not say)
    session_id: str | None = None  # the client's own id for its session (the injection record)


@dataclass(frozen=True)
class ClientHook:
    name: str
    shape: Callable[[str], str]  # additional context -> exactly what to print on stdout
    injects: bool = True  # False: the client ignores session-start output
    # The instruction file families it loads itself (lore.instructions.family_of): session start
    # does not repeat their sections. From each client's docs (docs/instruction-files.md).
    loads: tuple[str, ...] = ()


def _nested(text: str) -> str:
    # A flat {"additionalContext": ...} is valid JSON that Claude Code silently drops.
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}})


def _plain(text: str) -> str:
    return text


CLIENTS: dict[str, ClientHook] = {
    "claude-code": ClientHook("claude-code", _nested, loads=("claude",)),
    "gemini": ClientHook("gemini", _nested, loads=("gemini",)),
    "codex": ClientHook("codex", _nested, loads=("agents",)),
    "vscode": ClientHook("vscode", _nested, loads=("copilot", "agents")),
    "cursor": ClientHook(
        "cursor", lambda text: json.dumps({"additional_context": text}), loads=("cursor", "agents")
    ),
    "cline": ClientHook(
        "cline",
        lambda text: json.dumps({"contextModification": text}),
        loads=("cline", "cursor", "windsurf", "agents"),
    ),
    "opencode": ClientHook("opencode", _plain, loads=("agents", "claude")),
    # Copilot CLI reads a flat additionalContext (a user message before the prompt) and drops the
    # nested shape (tests/agents/test_copilot_cli.py).
    "copilot": ClientHook(
        "copilot", lambda text: json.dumps({"additionalContext": text}), loads=("copilot", "agents")
    ),
}


# What each agent calls itself in MCP's `initialize` (clientInfo.name), seen from the real programs
# (tests/agents, tests/e2e) or their docs, -> lore's client id: the same id `lore install`, the hook
# log and doctor use, so `source` says `gemini` whichever door the write came through. Keys are
# compared in lower case; an unknown name is stored as given.
MCP_NAMES: dict[str, str] = {
    "claude-code": "claude-code",
    "claude code": "claude-code",
    "gemini-cli-mcp-client": "gemini",
    "gemini-cli": "gemini",
    "codex-mcp-client": "codex",
    "codex": "codex",
    "cursor-vscode": "cursor",
    "cursor": "cursor",
    "visual studio code": "vscode",
    "visual studio code - insiders": "vscode",
    "vscode": "vscode",
    "opencode": "opencode",
    "@cline/core": "cline",
    "cline": "cline",
    "copilot-cli": "copilot",
    "github-copilot-cli": "copilot",
}


def canonical(name: str) -> str:
    """lore's id for a client name an agent gave (`gemini-cli-mcp-client` -> `gemini`); a lore id
    stays itself; an unknown name is returned as given (stripped)."""
    cleaned = name.strip()
    return MCP_NAMES.get(cleaned.lower(), cleaned) or "unknown"


def client(name: str) -> ClientHook:
    try:
        return CLIENTS[canonical(name)]
    except KeyError:
        raise ValueError(f"unknown client {name!r}; known: {', '.join(sorted(CLIENTS))}") from None


def parse_input(raw: str) -> HookInput:
    """The workspace comes from the hook's JSON (`cwd`; Cursor: `workspace_roots[0]`), never from
    the hook process's own working directory."""
    data: Any = json.loads(raw) if raw.strip() else {}
    if not isinstance(data, Mapping):
        raise ValueError("hook input is not a JSON object")
    cwd = data.get("cwd")
    for key in ("workspace_roots", "workspaceRoots"):
        roots = data.get(key)
        if not cwd and isinstance(roots, list) and roots and isinstance(roots[0], str):
            cwd = roots[0]
    source = data.get("source")
    return HookInput(
        cwd if isinstance(cwd, str) and cwd else None,
        source if isinstance(source, str) else None,
        _first_str(data, _SESSION_KEYS),
    )


@dataclass(frozen=True)
class EndInput:
    """What an end-of-turn or end-of-session event says (docs/agents/): the session, where, which
    event, the agent's final message when the event carries it, the transcript it names."""

    cwd: str | None
    session_id: str | None
    event: str
    message: str | None
    transcript: str | None
    started_at: str | None  # lore's OpenCode plugin says when the session began (ISO 8601)


# Where each client's end event carries the agent's final message: Claude Code's and Codex's `Stop`
# (`last_assistant_message`), Gemini CLI's `AfterAgent` (`prompt_response`), Cursor's
# `afterAgentResponse` (`text`). lore's OpenCode plugin sends `last_assistant_message` too.
_MESSAGE_KEYS = ("last_assistant_message", "prompt_response", "text")
_SESSION_KEYS = ("session_id", "sessionId", "conversation_id", "taskId")
_EVENT_KEYS = ("hook_event_name", "hookEventName", "hookName")


def _first_str(data: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def parse_end(raw: str) -> EndInput:
    data: Any = json.loads(raw) if raw.strip() else {}
    if not isinstance(data, Mapping):
        raise ValueError("hook input is not a JSON object")
    where = parse_input(raw)
    return EndInput(
        cwd=where.cwd,
        session_id=_first_str(data, _SESSION_KEYS),
        event=(_first_str(data, _EVENT_KEYS) or "end")[:64],
        message=_first_str(data, _MESSAGE_KEYS),
        transcript=_first_str(data, ("transcript_path",)),
        started_at=_first_str(data, ("started_at",)),
    )


# Sources on which a session starts with an empty context: only then is memory injected.
# VS Code (and Copilot) call a fresh session "new".
INJECT_ON = frozenset({"startup", "clear", "new"})
