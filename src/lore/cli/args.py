"""lore's command line as an argparse parser: every command, option, default and help text. `lore`
parses with it, `lore completion` completes from it (lore.cli.reference), and the README's command
table is made from it (scripts/readme_commands.py). `lore hook …` never builds it (lore.cli.main)."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Sequence
from typing import Any, NoReturn

_PORT_HELP = "TCP port (default: $LORE_PORT if set, else 8765; 0: any free port, shown at start)"
_PORT_EPILOG = "environment: LORE_PORT=N is the port when --port is not given (default 8765)."
_WORKSPACE = "the project directory whose space is used (default: the current directory)"
_CLIENTS = "claude-code gemini codex cursor vscode opencode cline copilot"


class _Help(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the default is None/False or the help
    already says it (tests/unit/test_cli_reference.py checks each one)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        if action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            return f"{text} (default: %(default)s)".lstrip()
        return text


class _Version(argparse.Action):
    """`--version`, read from the installed metadata only when asked: reading it costs ~25 ms, and
    every command (the session-start hook too) builds this parser."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from lore import __version__

        print(f"lore {__version__}")
        parser.exit()


class Parser(argparse.ArgumentParser):
    """lore's parser: its subcommands are Parsers too (add_subparsers uses the parent's class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """A typo'd command or choice: one line saying what was meant, not the whole list."""
        found = _INVALID.search(message)
        if found:
            given, choices = found.group(1), re.findall(r"'([^']*)'", found.group(2))
            near = difflib.get_close_matches(given, choices, n=1, cutoff=0.6)
            hint = f"did you mean `{near[0]}`?" if near else f"choose from: {', '.join(choices)}"
            self.exit(2, f"{self.prog}: {given!r} is not a {self.prog} choice here; {hint}\n")
        super().error(message)


_INVALID = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


def parser() -> argparse.ArgumentParser:
    """The whole command line: what `lore` parses, `lore completion` completes and the README's
    command table lists (scripts/readme_commands.py)."""
    return _parser()


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="lore", description="One memory shared by every AI coding agent.")
    p.add_argument("--version", action=_Version)
    p.add_argument("-v", "--verbose", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    mcp = sub.add_parser("mcp", help="stdio MCP server for one agent session")
    mcp.add_argument("--workspace", metavar="DIR", help=_WORKSPACE + "; agents pass their project")

    serve = sub.add_parser(
        "serve",
        help="MCP over streamable HTTP at /mcp, JSON API at /api, web UI at /, /healthz, /readyz "
        "(without --sign-in: loopback only); port: --port, else $LORE_PORT, else 8765 (0: any free port)",
        description="MCP over streamable HTTP at /mcp, the JSON API at /api and the web UI at /. "
        "Without --sign-in: loopback only, your own config file; /api and /mcp need your local secret "
        "(`lore token local`).",
        epilog=_PORT_EPILOG,
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None, metavar="PORT", help=_PORT_HELP)
    serve.add_argument("--sign-in", action="store_true", help="every request needs a token; spaces per user")
    serve.add_argument("--oauth", action="store_true", help="--sign-in, plus the MCP OAuth flow")
    serve.add_argument("--public-url", metavar="URL", help="how clients reach this server (behind a proxy)")
    serve.add_argument("--stateless", action="store_true", help="no MCP session state: any replica answers")
    serve.add_argument(
        "--log-level", default="warning", choices=["debug", "info", "warning", "error"], help="what to log"
    )
    serve.add_argument(
        "--log-format",
        default="text",
        choices=["text", "json"],
        help="json: one JSON object a line, and one a request (request id, route, status, ms; no body)",
    )

    token = sub.add_parser(
        "token", help="sign-in tokens for `lore serve --sign-in`; `local`: the local serve's secret"
    )
    token.add_argument(
        "action",
        choices=["create", "list", "revoke", "local"],
        help="what to do (local: print the secret a local `lore serve` asks of /api and /mcp)",
    )
    token.add_argument("target", nargs="?", metavar="USER|ID", help="create: the user; revoke: the token id")
    token.add_argument("--expires", metavar="WHEN", help="create: 90min, 12h, 30d, 2w, 1y or a date")
    token.add_argument("--label", help="create: what the token is for (e.g. laptop)")
    token.add_argument("--user", help="list: one user's tokens; revoke: every token of this user")

    login = sub.add_parser(
        "login",
        help="sign this machine in to a lore server: every command, hook and install then uses it",
        description="Store a server and your token (owner-only, in lore's config directory): every lore "
        "command, hook and `lore install` on this machine then uses that server. The token is pasted at "
        "a prompt, read from standard input (--with-token), or never seen (--browser: the server's "
        "OAuth flow). Without URL: which server is in use. LORE_URL and LORE_TOKEN still win.",
    )
    login.add_argument("url", nargs="?", metavar="URL", help="the server's base URL")
    login.add_argument("--with-token", action="store_true", help="read the token from standard input")
    login.add_argument(
        "--browser", action="store_true", help="sign in in a browser (a server run with --oauth)"
    )
    login.add_argument("--no-open", action="store_true", help="--browser: print the link, open nothing")
    sub.add_parser("logout", help="forget the server and token `lore login` stored (revoking OAuth ones)")
    sub.add_parser(
        "mcp-headers",
        help="the Authorization header of this machine's login as JSON (a hosted MCP entry's headersHelper)",
    )

    cfg = sub.add_parser("config", help="upload your config to the server you use (your spaces there)")
    cfg.add_argument("action", choices=["push"], help="push: upload it")
    cfg.add_argument("file", nargs="?", help="the config to push (default: your lore config file)")
    cfg.add_argument("--user", help="write straight into the database for USER (admin), not over HTTP")

    run = sub.add_parser(
        "run",
        help="what `make run` runs: a starter config, the database up and migrated, then `lore serve` "
        "(same port rule)",
        description="What `make run` runs: a starter config if none, the embedded database up and "
        "migrated, then `lore serve` on 127.0.0.1.",
        epilog=_PORT_EPILOG,
    )
    run.add_argument("--port", type=int, default=None, metavar="PORT", help=_PORT_HELP)

    db = sub.add_parser("db", help="the embedded PostgreSQL")
    db.add_argument("action", choices=["start", "stop", "status", "url"], help="what to do")

    svc = sub.add_parser(
        "service", help="start the embedded database at each login (systemd user unit / launchd agent)"
    )
    svc.add_argument("action", choices=["install", "uninstall", "status"], help="what to do")
    svc.add_argument(
        "--no-enable",
        action="store_true",
        help="write or remove the file only; print the command that (de)activates it",
    )

    sub.add_parser("init", help="write a starter config if none exists")
    which = sub.add_parser("which", help="print the space for a directory and why")
    which.add_argument("dir", nargs="?", default=None, help="default: the current directory")
    sub.add_parser(
        "doctor",
        help="check config, paths, database, schema, embedder and each installed agent; "
        "each line OK, WARN or FAIL with the fix",
    )

    fcts = sub.add_parser("facts", help="facts from a terminal: list, history, add, revise")
    verbs = fcts.add_subparsers(dest="action", required=True, metavar="ACTION")
    for verb, what in (("list", "current facts"), ("history", "every version of one fact")):
        v = verbs.add_parser(verb, help=what)
        if verb == "history":
            v.add_argument("id", help="the fact, f_N")
        else:
            v.add_argument("--usage", action="store_true", help="how often each was shown, cut, returned")
        v.add_argument("--workspace", metavar="DIR", help=_WORKSPACE)
    for verb in ("add", "revise"):
        v = verbs.add_parser(
            verb, help="remember a fact" if verb == "add" else "write a new version of a fact"
        )
        if verb == "revise":
            v.add_argument("id", help="the fact, f_N")
        v.add_argument(
            "statement",
            help="the statement, - for standard input (revise: the same one to change only dates)",
        )
        v.add_argument("--subject", help="what it is about, e.g. the repository")
        v.add_argument("--valid-from", metavar="DATE", help="true from (default: now)")
        v.add_argument("--valid-to", metavar="DATE", help="true until (default: still true)")
        v.add_argument("--allow-secret", action="store_true", help="even if it looks like a credential")
        if verb == "add":
            v.add_argument("--supersedes", metavar="ID", help="facts this one replaces (f_4, or f_4,f_7)")
        v.add_argument("--workspace", metavar="DIR", help=_WORKSPACE)

    hand = sub.add_parser("handoff", help="what the last agent session here left: its final message, changes")
    hand.add_argument("--workspace", metavar="DIR", help="default: the current directory")

    find = sub.add_parser(
        "search", help="search notes as search_notes does; --explain says why each came or went"
    )
    find.add_argument("query", help="what to look for")
    find.add_argument(
        "--explain", action="store_true", help="every candidate: ranks, scores, threshold, why dropped"
    )
    find.add_argument("--kind", action="append", dest="kinds", metavar="KIND", help="only notes of this kind")
    find.add_argument("--limit", type=int, default=5, help="at most this many hits (1-20)")
    find.add_argument("--workspace", metavar="DIR", help=_WORKSPACE)
    find.add_argument("--json", action="store_true", help="as JSON")

    logs = sub.add_parser("log", help="what lore told your agents: each injection, newest first")
    logs.add_argument("action", nargs="?", choices=["show"], help="show ID: the exact text an agent received")
    logs.add_argument("id", nargs="?", help="show: the record's id")
    logs.add_argument("--client", help="only this agent's (claude-code, gemini, …)")
    logs.add_argument("--workspace", metavar="DIR", help="only sessions in this directory (or below it)")
    logs.add_argument("--since", metavar="WHEN", help="only since this ISO date or time")
    logs.add_argument("--limit", type=int, default=20, help="how many records at most")
    logs.add_argument("--json", action="store_true", help="as JSON (one object, or a list)")

    start = sub.add_parser(
        "session-start", help="the memory an agent gets here before its first prompt (what its hook injects)"
    )
    start.add_argument("--client", default="claude-code", help="the agent (its budget and instruction files)")
    start.add_argument("--workspace", metavar="DIR", help=_WORKSPACE)

    tidy = sub.add_parser(
        "tidy",
        help="near duplicates, likely conflicts and stale items of this space; merge, keep, forget, undo",
        description="Without an action: what there is to tidy in this workspace's space. merge ID ID...: "
        'keep the first, forget the others ("merged into ID"); keep ID ID...: they are all right; '
        "forget ID...: forget stale items; undo N: take back tidy action N; redo N: do undone action N "
        "again. Every act is recorded.",
    )
    tidy.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", "merge", "keep", "forget", "undo", "redo"],
        help="what to do",
    )
    tidy.add_argument(
        "args", nargs="*", help="merge: INTO OTHER...; keep: ID ID...; forget: ID...; undo, redo: N"
    )
    tidy.add_argument("--statement", help="merge: the kept fact's new statement")
    tidy.add_argument("--reason", help="forget: why")
    tidy.add_argument("--json", action="store_true", help="list: as JSON")
    tidy.add_argument("--workspace", metavar="DIR", help=_WORKSPACE)

    nts = sub.add_parser("notes", help="write a note from a terminal")
    nts.add_argument("action", choices=["add"], help="add: remember a note")
    nts.add_argument("body", nargs="?", help="the note's text; - reads it from standard input")
    nts.add_argument("--file", metavar="PATH", help="read the note's text from this file")
    nts.add_argument("--kind", default="note", help="brief, product, pattern, tech, … (as remember_note)")
    nts.add_argument("--title", help="a short title")
    nts.add_argument("--tag", action="append", dest="tags", metavar="TAG", help="a tag (repeatable)")
    nts.add_argument("--when", metavar="DATE", help="when it happened, ISO 8601 (default: now)")
    nts.add_argument("--allow-secret", action="store_true", help="even if it looks like a credential")
    nts.add_argument("--workspace", metavar="DIR", help=_WORKSPACE)

    tasks = sub.add_parser("tasks", help="this space's tasks: list, file, update, show")
    tasks.add_argument(
        "action", nargs="?", default="list", choices=["list", "file", "update", "show"], help="what to do"
    )
    tasks.add_argument("args", nargs="*", help="file: TITLE [BODY]; update: ID STATUS; show: ID")
    tasks.add_argument("--to", metavar="SPACE", help="file: into that space's inbox")
    tasks.add_argument("--note", help="update: why")
    tasks.add_argument("--all", action="store_true", help="list: done tasks too")
    tasks.add_argument("--workspace", metavar="DIR", help=_WORKSPACE)
    tasks.add_argument("--allow-secret", action="store_true", help="file: even if it looks like a credential")

    msgs = sub.add_parser("messages", help="messages to and from this space: list, read, send")
    msgs.add_argument(
        "action", nargs="?", default="list", choices=["list", "read", "send"], help="what to do"
    )
    msgs.add_argument("args", nargs="*", help="send: TO BODY")
    msgs.add_argument("--reply-to", metavar="ID", help="send: the m_ id answered")
    msgs.add_argument("--wait", type=float, default=0, metavar="SECONDS", help="send: wait for the reply")
    msgs.add_argument("--workspace", metavar="DIR", help=_WORKSPACE)
    msgs.add_argument("--allow-secret", action="store_true", help="send: even if it looks like a credential")

    listen = sub.add_parser(
        "listen", help="print (and show on the desktop) messages and inbox tasks as they arrive"
    )
    listen.add_argument("--workspace", metavar="DIR", help=_WORKSPACE)
    listen.add_argument("--no-desktop", action="store_true", help="print only; no desktop notification")

    exp = sub.add_parser("export", help="the memory as JSON Lines (history included) on stdout or --output")
    exp.add_argument("--space", help="only this space's rows (default: every space)")
    exp.add_argument("--output", "-o", metavar="FILE", help="write it there, owner-only (default: stdout)")
    imp = sub.add_parser("import", help="load a `lore export` file (all or nothing; ids kept when free)")
    imp.add_argument("file", help="the export file, or - for stdin")
    imd = sub.add_parser("import-markdown", help="markdown memory bank / CLAUDE.md -> notes, one per section")
    imd.add_argument("path", metavar="DIR", help="a folder of .md files, or one file")
    imd.add_argument("--workspace", metavar="DIR", help="whose space (default: the current directory's)")
    imd.add_argument("--allow-secret", action="store_true", help="even sections that look like credentials")
    ins = sub.add_parser(
        "import-instructions",
        help="agents' instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, .cursor/rules, …) -> notes, "
        "one per section; again: changed sections revised, removed ones forgotten",
    )
    ins.add_argument(
        "path", nargs="?", metavar="DIR", help="where to look, subfolders too (default: the project)"
    )
    ins.add_argument("--workspace", metavar="DIR", help="whose space (default: the current directory's)")
    ins.add_argument("--allow-secret", action="store_true", help="even sections that look like credentials")
    prg = sub.add_parser("purge", help="erase an item and all its history for good (a pasted secret)")
    prg.add_argument("id", help="f_N, n_N or m_N")
    prg.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    prg.add_argument("--full", action="store_true", help="also rewrite the tables (VACUUM FULL)")

    reindex = sub.add_parser(
        "reindex", help="embed every note that lacks a vector of the configured model (progress bar)"
    )
    reindex.add_argument("--all", action="store_true", help="re-embed every note, not only missing ones")

    for verb in ("install", "uninstall"):
        what = "wire lore's MCP server and hooks into" if verb == "install" else "remove lore's entries from"
        inst = sub.add_parser(verb, help=f"{what} an agent's config ({_CLIENTS})")
        inst.add_argument("client", metavar="CLIENT", help=_CLIENTS)
        inst.add_argument("--project", action="store_true", help="this repository's files, not your user's")
        inst.add_argument("--dry-run", action="store_true", help="show the change; write nothing")
        if verb == "install":
            inst.add_argument("--server", metavar="URL", help="a `lore serve --sign-in` (token: $LORE_TOKEN)")

    hook = sub.add_parser(
        "hook",
        help="agent hooks, stdin: the client's hook JSON (session-start: memory before the first prompt; "
        "prompt: what arrived since the last prompt; session-end: the handoff)",
    )
    hook.add_argument("event", choices=["session-start", "prompt", "session-end"], help="the event")
    hook.add_argument("--client", default="claude-code", metavar="CLIENT", help=_CLIENTS)

    comp = sub.add_parser(
        "completion",
        help="print the shell completion script (bash, zsh, fish)",
        description="Print lore's completion script for a shell, made from this parser. "
        'bash: eval "$(lore completion bash)" in ~/.bashrc; zsh: eval "$(lore completion zsh)" in '
        "~/.zshrc; fish: lore completion fish > ~/.config/fish/completions/lore.fish",
    )
    comp.add_argument("shell", choices=["bash", "zsh", "fish"], help="which shell")
    return p
