"""Each `lore` command's options, arguments and help: one builder a command, which adds the
command's parser to lore's subcommands under the name lore.cli.commands gives it (the table that
also names the command's handler)."""

from __future__ import annotations

TYPE_CHECKING = False

if TYPE_CHECKING:
    import argparse

    from lore.cli.parser import Parser

    Subcommands = argparse._SubParsersAction[Parser]

_PORT_HELP = "TCP port (default: $LORE_PORT if set, else 8765; 0: any free port, shown at start)"
_PORT_EPILOG = "environment: LORE_PORT=N is the port when --port is not given (default 8765)."
_WORKSPACE = "the project directory whose space is used (default: the current directory)"
_CLIENTS = "claude-code gemini codex cursor vscode opencode cline copilot"
_CREDENTIAL = "even if it looks like a credential"


def _workspace(p: argparse.ArgumentParser, text: str = _WORKSPACE) -> None:
    """`--workspace DIR`: the project whose space a command works in."""
    p.add_argument("--workspace", metavar="DIR", help=text)


def _allow_secret(p: argparse.ArgumentParser, text: str = _CREDENTIAL) -> None:
    """`--allow-secret`: write what looks like a credential all the same (a person's choice)."""
    p.add_argument("--allow-secret", action="store_true", help=text)


def _port(p: argparse.ArgumentParser) -> None:
    """`--port PORT` of `lore serve` and `lore run`: the same rule (else $LORE_PORT, else 8765)."""
    p.add_argument("--port", type=int, default=None, metavar="PORT", help=_PORT_HELP)


def _importing(p: argparse.ArgumentParser) -> None:
    """What the import commands share: whose space, and sections that look like credentials."""
    _workspace(p, "whose space (default: the current directory's)")
    _allow_secret(p, "even sections that look like credentials")


def mcp(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="stdio MCP server for one agent session")
    _workspace(p, _WORKSPACE + "; agents pass their project")


def serve(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(
        name,
        help="MCP over streamable HTTP at /mcp, JSON API at /api, web UI at /, /healthz, /readyz "
        "(without --sign-in: loopback only); port: --port, else $LORE_PORT, else 8765 (0: any free port)",
        description="MCP over streamable HTTP at /mcp, the JSON API at /api and the web UI at /. "
        "Without --sign-in: loopback only, your own config file; /api and /mcp need your local secret "
        "(`lore token local`).",
        epilog=_PORT_EPILOG,
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    _port(p)
    p.add_argument("--sign-in", action="store_true", help="every request needs a token; spaces per user")
    p.add_argument("--oauth", action="store_true", help="--sign-in, plus the MCP OAuth flow")
    p.add_argument("--public-url", metavar="URL", help="how clients reach this server (behind a proxy)")
    p.add_argument("--stateless", action="store_true", help="no MCP session state: any replica answers")
    p.add_argument(
        "--log-level", default="warning", choices=["debug", "info", "warning", "error"], help="what to log"
    )
    p.add_argument(
        "--log-format",
        default="text",
        choices=["text", "json"],
        help="json: one JSON object a line, and one a request (request id, route, status, ms; no body)",
    )


def token(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(
        name, help="sign-in tokens for `lore serve --sign-in`; `local`: the local serve's secret"
    )
    p.add_argument(
        "action",
        choices=["create", "list", "revoke", "local"],
        help="what to do (local: print the secret a local `lore serve` asks of /api and /mcp)",
    )
    p.add_argument("target", nargs="?", metavar="USER|ID", help="create: the user; revoke: the token id")
    p.add_argument("--expires", metavar="WHEN", help="create: 90min, 12h, 30d, 2w, 1y or a date")
    p.add_argument("--label", help="create: what the token is for (e.g. laptop)")
    p.add_argument("--user", help="list: one user's tokens; revoke: every token of this user")


def login(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(
        name,
        help="sign this machine in to a lore server: every command, hook and install then uses it",
        description="Store a server and your token (owner-only, in lore's config directory): every lore "
        "command, hook and `lore install` on this machine then uses that server. The token is pasted at "
        "a prompt, read from standard input (--with-token), or never seen (--browser: the server's "
        "OAuth flow). Without URL: which server is in use. LORE_URL and LORE_TOKEN still win.",
    )
    p.add_argument("url", nargs="?", metavar="URL", help="the server's base URL")
    p.add_argument("--with-token", action="store_true", help="read the token from standard input")
    p.add_argument("--browser", action="store_true", help="sign in in a browser (a server run with --oauth)")
    p.add_argument("--no-open", action="store_true", help="--browser: print the link, open nothing")


def logout(sub: Subcommands, name: str) -> None:
    sub.add_parser(name, help="forget the server and token `lore login` stored (revoking OAuth ones)")


def mcp_headers(sub: Subcommands, name: str) -> None:
    sub.add_parser(
        name,
        help="the Authorization header of this machine's login as JSON (a hosted MCP entry's headersHelper)",
    )


def config(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="upload your config to the server you use (your spaces there)")
    p.add_argument("action", choices=["push"], help="push: upload it")
    p.add_argument("file", nargs="?", help="the config to push (default: your lore config file)")
    p.add_argument("--user", help="write straight into the database for USER (admin), not over HTTP")


def run(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(
        name,
        help="what `make run` runs: a starter config, the database up and migrated, then `lore serve` "
        "(same port rule)",
        description="What `make run` runs: a starter config if none, the embedded database up and "
        "migrated, then `lore serve` on 127.0.0.1.",
        epilog=_PORT_EPILOG,
    )
    _port(p)


def db(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="the embedded PostgreSQL")
    p.add_argument("action", choices=["start", "stop", "status", "url"], help="what to do")


def service(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(
        name, help="start the embedded database at each login (systemd user unit / launchd agent)"
    )
    p.add_argument("action", choices=["install", "uninstall", "status"], help="what to do")
    p.add_argument(
        "--no-enable",
        action="store_true",
        help="write or remove the file only; print the command that (de)activates it",
    )


def init(sub: Subcommands, name: str) -> None:
    sub.add_parser(name, help="write a starter config if none exists")


def which(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="print the space for a directory and why")
    p.add_argument("dir", nargs="?", default=None, help="default: the current directory")


def doctor(sub: Subcommands, name: str) -> None:
    sub.add_parser(
        name,
        help="check config, paths, database, schema, embedder and each installed agent; "
        "each line OK, WARN or FAIL with the fix",
    )


def facts(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="facts from a terminal: list, history, add, revise")
    verbs = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    for verb, what in (("list", "current facts"), ("history", "every version of one fact")):
        v = verbs.add_parser(verb, help=what)
        if verb == "history":
            v.add_argument("id", help="the fact, f_N")
        else:
            v.add_argument("--usage", action="store_true", help="how often each was shown, cut, returned")
        _workspace(v)
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
        _allow_secret(v)
        if verb == "add":
            v.add_argument("--supersedes", metavar="ID", help="facts this one replaces (f_4, or f_4,f_7)")
        _workspace(v)


def handoff(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="what the last agent session here left: its final message, changes")
    _workspace(p, "default: the current directory")


def search(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="search notes as search_notes does; --explain says why each came or went")
    p.add_argument("query", help="what to look for")
    p.add_argument(
        "--explain", action="store_true", help="every candidate: ranks, scores, threshold, why dropped"
    )
    p.add_argument("--kind", action="append", dest="kinds", metavar="KIND", help="only notes of this kind")
    p.add_argument("--limit", type=int, default=5, help="at most this many hits (1-20)")
    _workspace(p)
    p.add_argument("--json", action="store_true", help="as JSON")


def log(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="what lore told your agents: each injection, newest first")
    p.add_argument("action", nargs="?", choices=["show"], help="show ID: the exact text an agent received")
    p.add_argument("id", nargs="?", help="show: the record's id")
    p.add_argument("--client", help="only this agent's (claude-code, gemini, …)")
    _workspace(p, "only sessions in this directory (or below it)")
    p.add_argument("--since", metavar="WHEN", help="only since this ISO date or time")
    p.add_argument("--limit", type=int, default=20, help="how many records at most")
    p.add_argument("--json", action="store_true", help="as JSON (one object, or a list)")


def session_start(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(
        name, help="the memory an agent gets here before its first prompt (what its hook injects)"
    )
    p.add_argument("--client", default="claude-code", help="the agent (its budget and instruction files)")
    _workspace(p)


def tidy(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(
        name,
        help="near duplicates, likely conflicts and stale items of this space; merge, keep, forget, undo",
        description="Without an action: what there is to tidy in this workspace's space. merge ID ID...: "
        'keep the first, forget the others ("merged into ID"); keep ID ID...: they are all right; '
        "forget ID...: forget stale items; undo N: take back tidy action N; redo N: do undone action N "
        "again. Every act is recorded.",
    )
    p.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", "merge", "keep", "forget", "undo", "redo"],
        help="what to do",
    )
    p.add_argument(
        "args", nargs="*", help="merge: INTO OTHER...; keep: ID ID...; forget: ID...; undo, redo: N"
    )
    p.add_argument("--statement", help="merge: the kept fact's new statement")
    p.add_argument("--reason", help="forget: why")
    p.add_argument("--json", action="store_true", help="list: as JSON")
    _workspace(p)


def notes(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="write a note from a terminal")
    p.add_argument("action", choices=["add"], help="add: remember a note")
    p.add_argument("body", nargs="?", help="the note's text; - reads it from standard input")
    p.add_argument("--file", metavar="PATH", help="read the note's text from this file")
    p.add_argument("--kind", default="note", help="brief, product, pattern, tech, … (as remember_note)")
    p.add_argument("--title", help="a short title")
    p.add_argument("--tag", action="append", dest="tags", metavar="TAG", help="a tag (repeatable)")
    p.add_argument("--when", metavar="DATE", help="when it happened, ISO 8601 (default: now)")
    _allow_secret(p)
    _workspace(p)


def tasks(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="this space's tasks: list, file, update, show")
    p.add_argument(
        "action", nargs="?", default="list", choices=["list", "file", "update", "show"], help="what to do"
    )
    p.add_argument("args", nargs="*", help="file: TITLE [BODY]; update: ID STATUS; show: ID")
    p.add_argument("--to", metavar="SPACE", help="file: into that space's inbox")
    p.add_argument("--note", help="update: why")
    p.add_argument("--all", action="store_true", help="list: done tasks too")
    _workspace(p)
    _allow_secret(p, "file: " + _CREDENTIAL)


def messages(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="messages to and from this space: list, read, send")
    p.add_argument("action", nargs="?", default="list", choices=["list", "read", "send"], help="what to do")
    p.add_argument("args", nargs="*", help="send: TO BODY")
    p.add_argument("--reply-to", metavar="ID", help="send: the m_ id answered")
    p.add_argument("--wait", type=float, default=0, metavar="SECONDS", help="send: wait for the reply")
    _workspace(p)
    _allow_secret(p, "send: " + _CREDENTIAL)


def listen(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="print (and show on the desktop) messages and inbox tasks as they arrive")
    _workspace(p)
    p.add_argument("--no-desktop", action="store_true", help="print only; no desktop notification")


def export(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="the memory as JSON Lines (history included) on stdout or --output")
    p.add_argument("--space", help="only this space's rows (default: every space)")
    p.add_argument("--output", "-o", metavar="FILE", help="write it there, owner-only (default: stdout)")


def load(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="load a `lore export` file (all or nothing; ids kept when free)")
    p.add_argument("file", help="the export file, or - for stdin")


def import_markdown(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="markdown memory bank / CLAUDE.md -> notes, one per section")
    p.add_argument("path", metavar="DIR", help="a folder of .md files, or one file")
    _importing(p)


def import_instructions(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(
        name,
        help="agents' instruction files (CLAUDE.md, AGENTS.md, GEMINI.md, .cursor/rules, …) -> notes, "
        "one per section; again: changed sections revised, removed ones forgotten",
    )
    p.add_argument(
        "path", nargs="?", metavar="DIR", help="where to look, subfolders too (default: the project)"
    )
    _importing(p)


def purge(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(name, help="erase an item and all its history for good (a pasted secret)")
    p.add_argument("id", help="f_N, n_N or m_N")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--full", action="store_true", help="also rewrite the tables (VACUUM FULL)")


def reindex(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(
        name, help="embed every note that lacks a vector of the configured model (progress bar)"
    )
    p.add_argument("--all", action="store_true", help="re-embed every note, not only missing ones")


def installer(sub: Subcommands, name: str) -> None:
    """`install` and `uninstall`."""
    what = "wire lore's MCP server and hooks into" if name == "install" else "remove lore's entries from"
    p = sub.add_parser(name, help=f"{what} an agent's config ({_CLIENTS})")
    p.add_argument("client", metavar="CLIENT", help=_CLIENTS)
    p.add_argument("--project", action="store_true", help="this repository's files, not your user's")
    p.add_argument("--dry-run", action="store_true", help="show the change; write nothing")
    if name == "install":
        p.add_argument("--server", metavar="URL", help="a `lore serve --sign-in` (token: $LORE_TOKEN)")


def hook(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(
        name,
        help="agent hooks, stdin: the client's hook JSON (session-start: memory before the first prompt; "
        "prompt: what arrived since the last prompt; session-end: the handoff)",
    )
    p.add_argument("event", choices=["session-start", "prompt", "session-end"], help="the event")
    p.add_argument("--client", default="claude-code", metavar="CLIENT", help=_CLIENTS)


def completion(sub: Subcommands, name: str) -> None:
    p = sub.add_parser(
        name,
        help="print the shell completion script (bash, zsh, fish)",
        description="Print lore's completion script for a shell, made from this parser. "
        'bash: eval "$(lore completion bash)" in ~/.bashrc; zsh: eval "$(lore completion zsh)" in '
        "~/.zshrc; fish: lore completion fish > ~/.config/fish/completions/lore.fish",
    )
    p.add_argument("shell", choices=["bash", "zsh", "fish"], help="which shell")
