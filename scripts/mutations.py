#!/usr/bin/env python3
"""A small mutation check of the rules that matter: break one rule in the source, run the tests that
should notice, put the source back. A mutation the tests do not notice "survives": a rule nothing
checks. `make mutations` runs them all; the result goes to docs/reliability.md with --write.

    .venv/bin/python scripts/mutations.py                       # all, one at a time
    .venv/bin/python scripts/mutations.py --only auth-revoked   # one (repeat --only for more)
    .venv/bin/python scripts/mutations.py --list                # names, rules and tests

Each mutation is one exact source snippet (or a few) and its replacement. A snippet that is not in
the file exactly once stops the run before anything is changed: when the code moves, the mutation
is rewritten, never silently skipped. The file is restored in a `finally` (also on Ctrl-C, SIGTERM
or a timeout) with its original bytes and modification time, and its SHA-256 checked. If someone
edited the file while the mutation was in place, only the mutated snippets are put back (their edit
stays) and the run stops.

Exit status: 0 every mutation was killed, 1 at least one survived, 2 the check itself failed (a
snippet moved, the unmutated tests fail, pytest could not run the tests, or a restore failed).

It edits files of the working tree for about a minute per mutation: run it when nobody else is
running tests in the same tree.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "reliability.md"
BEGIN, END = "<!-- mutations:begin -->", "<!-- mutations:end -->"
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
PYTEST_ARGS = ("-x", "-q", "-p", "no:cacheprovider")


@dataclass(frozen=True)
class Mutation:
    name: str
    rule: str  # the rule the mutation breaks, as the table says it
    path: str  # relative to the repository root
    edits: tuple[tuple[str, str], ...]  # (exact snippet, replacement); each snippet once in the file
    tests: tuple[str, ...]  # pytest paths or node ids that should fail


HOOK_TESTS = ("tests/unit/test_hook_clients.py", "tests/agents/test_hook_fixtures.py")
FORGET_TESTS = (
    "tests/integration/test_forget_rows.py",
    "tests/tools/test_mcp_stdio.py::test_forget_hides_and_keeps_audit",
)
SIGNIN_TESTS = (
    "tests/integration/test_tokens.py",
    "tests/unit/test_auth.py",
    "tests/http/test_signin.py::test_every_refusal_is_the_same_401_and_leaks_nothing",
)

MUTATIONS: tuple[Mutation, ...] = (
    # --- the rules of the core that every entry point relies on
    Mutation(
        "secret-refusal-off",
        "a write that looks like a credential is refused (facts, notes, tasks, messages)",
        "src/lore/core/secrets/__init__.py",
        (("    hits = findings(fields)\n    if not hits:\n", "    hits = findings(fields)\n    if True:\n"),),
        ("tests/reliability/test_secret_writes.py",),
    ),
    Mutation(
        "reads-from-both-ways",
        "reads_from is one-way: a space that is read does not read its reader",
        "src/lore/core/config/model.py",
        (
            (
                "        return tuple(dict.fromkeys((id, *(space.reads_from if space else ()))))\n",
                "        readers = tuple(s.id for s in self.spaces if id in s.reads_from)\n"
                "        return tuple(dict.fromkeys((id, *(space.reads_from if space else ()), *readers)))\n",
            ),
        ),
        ("tests/unit/test_config.py", "tests/tools/test_mcp_stdio.py"),
    ),
    Mutation(
        "read-isolation-any-space",
        "facts are read from the session's readable spaces only (space = ANY(readable))",
        "src/lore/db/migrations/0006_shared_predicates.sql",
        (("    WHERE f.space = ANY(spaces)\n", "    WHERE (f.space = ANY(spaces) OR true)\n"),),
        ("tests/integration/test_shared_predicates.py", "tests/http/test_isolation.py"),
    ),
    Mutation(
        "bitemporal-ignores-belief",
        "a superseded version is not current belief (the shared predicate's belief-time test)",
        "src/lore/db/migrations/0006_shared_predicates.sql",
        (
            (
                "      AND (f.superseded_at IS NULL OR (as_of IS NOT NULL AND f.superseded_at > as_of))\n",
                "      AND (f.superseded_at IS NULL OR as_of IS NULL OR f.superseded_at > as_of)\n",
            ),
        ),
        ("tests/integration/test_facts_sql.py", "tests/integration/test_shared_predicates.py"),
    ),
    Mutation(
        "bitemporal-valid-to-inclusive",
        "valid time is half-open: at exactly valid_to a fact no longer holds (the shared predicate)",
        "src/lore/db/migrations/0006_shared_predicates.sql",
        (
            (
                "      AND (f.valid_to IS NULL OR f.valid_to > coalesce(valid_at, now()))\n",
                "      AND (f.valid_to IS NULL OR f.valid_to >= coalesce(valid_at, now()))\n",
            ),
        ),
        ("tests/integration/test_facts_sql.py::test_a_fact_stops_being_valid_at_exactly_its_valid_to",),
    ),
    Mutation(
        "redact-identity",
        "a database URL's password is masked in everything printed or logged (lore.core.redact)",
        "src/lore/core/redact.py",
        (
            (
                '    return _URL_PASSWORD.sub(r"\\1***@", _KV_PASSWORD.sub(r"\\1***", text))\n',
                "    return text\n",
            ),
        ),
        ("tests/unit/test_redact.py",),
    ),
    Mutation(
        "git-lazy-fetch",
        "the session-end hook's git fetches nothing (no lazy fetch, no transport allowed)",
        "src/lore/core/capture.py",
        (("        **NO_FETCH,\n", ""),),
        ("tests/reliability/test_git_attacks.py",),
    ),
    Mutation(
        "budget-unclamped",
        "the session-start budget is clamped for Claude Code (at most 9,500 of its 10,000)",
        "src/lore/core/render.py",
        (("        value = min(value, CLAUDE_CODE_MAX_CHARS)\n", "        value = value\n"),),
        (
            "tests/unit/test_render.py",
            "tests/integration/test_hook.py::test_budget_is_clamped_for_claude_code",
        ),
    ),
    Mutation(
        "revise-no-op-accepted",
        "a revision that changes nothing is refused (no new version)",
        "src/lore/core/admission.py",
        (
            (
                "            return Refusal(InvalidInput(_SAME.format(old.id), SAME_FACT_HINT))\n",
                "            pass\n",
            ),
        ),
        ("tests/integration/test_revise_rules.py",),
    ),
    # --- which space: a tie is an error, never a guess
    Mutation(
        "pool-dead-connection",
        "a pooled connection the server ended is checked before it is handed out again",
        "src/lore/service/runtime/connections.py",
        (("        if recent and not _readable(conn):\n", "        if recent:\n"),),
        ("tests/integration/test_pool.py",),
    ),
    # --- through a transaction pooler (PgBouncer): nothing prepared, nothing left on a connection
    Mutation(
        "pooler-prepares",
        "through a transaction pooler the pool prepares no statement server-side",
        "src/lore/service/runtime/connections.py",
        (('            kwargs["prepare_threshold"] = None\n', "            pass\n"),),
        ("tests/http/test_pooler.py::test_every_tool_through_the_pooler",),
    ),
    Mutation(
        "hook-statement-timeout-leaks",
        "the hook's psql sets its statement_timeout for its own transaction only",
        "src/lore/db/literals.py",
        (("SET LOCAL statement_timeout = {max(50", "SET statement_timeout = {max(50"),),
        ("tests/http/test_pooler.py::test_the_api_the_web_ui_and_the_hooks_through_the_pooler",),
    ),
    Mutation(
        "stateless-session-state-in-process",
        "a stateless replica reads a session's last space from the database, not its own memory",
        "src/lore/mcp/sessions.py",
        (("        if shared and (last is None or", "        if False and (last is None or"),),
        ("tests/http/test_team.py",),
    ),
    Mutation(
        "instructions-own-files",
        "session start leaves out the instruction files the client loads itself",
        "src/lore/core/session_start.py",
        (
            (
                "        skip_families=tuple(known.loads) if known is not None else (),\n",
                "        skip_families=(),\n",
            ),
        ),
        ("tests/integration/test_instructions.py",),
    ),
    Mutation(
        "client-canonical-id",
        "source is lore's client id, not the name the agent gave",
        "src/lore/service/runtime/sessions.py",
        (("            return canonical(name)\n        if len", "            return name\n        if len"),),
        ("tests/reliability/test_client_names.py",),
    ),
    Mutation(
        "spaces-path-tie",
        "two spaces whose paths match equally well: an error",
        "src/lore/core/spaces.py",
        (("    if len(tied) > 1:\n", "    if len(tied) > 99:\n"),),
        ("tests/unit/test_spaces.py",),
    ),
    Mutation(
        "spaces-remote-tie",
        "two spaces whose git remotes match: an error",
        "src/lore/core/spaces.py",
        (("    if len(hits) > 1:\n", "    if len(hits) > 99:\n"),),
        ("tests/unit/test_spaces.py",),
    ),
    # --- the embedded database: only the OS user running lore gets in, never over TCP
    Mutation(
        "embedded-trust",
        "the embedded cluster's access rules: peer over the socket, no trust",
        "src/lore/db/embedded/cluster.py",
        (('    "local all all peer map=lore\\n"\n', '    "local all all trust\\n"\n'),),
        ("tests/unit/test_embedded_access.py", "tests/integration/test_embedded_security.py"),
    ),
    Mutation(
        "embedded-tcp-on-command-line",
        "every start passes no TCP listener on the server's command line",
        "src/lore/db/embedded/sockets.py",
        (
            (
                '    return ["-k", str(socket_dir), "-h", "", "-c", "unix_socket_permissions=0700"]\n',
                '    return ["-k", str(socket_dir), "-c", "unix_socket_permissions=0700"]\n',
            ),
        ),
        ("tests/unit/test_embedded_access.py", "tests/integration/test_embedded_security.py"),
    ),
    Mutation(
        "embedded-socket-mode",
        "the socket is 0700 (set on the command line)",
        "src/lore/db/embedded/sockets.py",
        (
            (
                '    return ["-k", str(socket_dir), "-h", "", "-c", "unix_socket_permissions=0700"]\n',
                '    return ["-k", str(socket_dir), "-h", "", "-c", "unix_socket_permissions=0777"]\n',
            ),
        ),
        ("tests/unit/test_embedded_access.py", "tests/integration/test_embedded_security.py"),
    ),
    # --- a running server follows the config file as it is now
    Mutation(
        "config-never-reloaded",
        "the config file is read again when its stat signature changes",
        "src/lore/core/config/load.py",
        (
            (
                "            if self.loads == 0 or signature != self._signature:\n",
                "            if self.loads == 0:\n",
            ),
        ),
        ("tests/unit/test_config_reload.py", "tests/tools/test_live_config.py"),
    ),
    # --- the memory envelope: nothing stored can close or reopen it
    Mutation(
        "envelope-escape-off",
        "everything inside either envelope (lore-memory, lore-inbox) is made inert: no stored text closes it",
        "src/lore/core/envelope.py",
        (("        body = inert(inside)\n", "        body = inside\n"),),
        ("tests/unit/test_envelope.py",),
    ),
    Mutation(
        "envelope-nonce-constant",
        "every injection's envelope carries a fresh nonce stored text cannot know (lore.core.envelope)",
        "src/lore/core/envelope.py",
        (("    return os.urandom(NONCE_BYTES).hex()\n", '    return "0" * 2 * NONCE_BYTES\n'),),
        ("tests/unit/test_envelope.py::test_every_injection_draws_its_own_nonce",),
    ),
    # --- local HTTP: another OS user may not use /api or /mcp (the local secret)
    Mutation(
        "local-secret-unchecked",
        "a local lore serve answers /api and /mcp only with the owner's local secret",
        "src/lore/core/local_secret.py",
        (("    return hmac.compare_digest(given.strip().encode(), secret.encode())\n", "    return True\n"),),
        ("tests/http/test_local_secret.py",),
    ),
    # --- local HTTP: a web page of another origin may not use /api
    Mutation(
        "api-any-origin",
        "/api refuses a foreign or null Origin in local mode",
        "src/lore/http/api.py",
        (("    origin = None if sign_in else foreign_origin(request)\n", "    origin = None\n"),),
        ("tests/http/test_local_origin.py",),
    ),
    # --- a tool never takes a space
    Mutation(
        "mcp-space-argument",
        "a tool argument naming a space is refused",
        "src/lore/mcp/server.py",
        (
            (
                "            extra = sorted(set(arguments) - declared)\n",
                '            extra = sorted(set(arguments) - declared - {"space"})\n',
            ),
        ),
        (
            "tests/tools/test_mcp_stdio.py::test_space_argument_is_refused_and_nothing_written",
            "tests/work/test_mcp_work.py::test_without_accepts_from_nothing_is_written",
        ),
    ),
    # --- forget keeps the audit: the version is closed (never deleted) and forget_log has a row
    Mutation(
        "facts-forget-deletes",
        "forgetting a fact closes its version (no DELETE)",
        "src/lore/store/versions.py",
        (
            (
                "            self.close(conn, old)\n",
                '            (conn.execute(sql.SQL("DELETE FROM {} WHERE version_id = %s").format('
                'sql.Identifier(self.table)), (old.version_id,)) if self.item == "fact" '
                "else self.close(conn, old))\n",
            ),
        ),
        FORGET_TESTS,
    ),
    Mutation(
        "facts-forget-no-log",
        "forgetting a fact writes a forget_log row",
        "src/lore/store/versions.py",
        (
            (
                '            conn.execute(\n                "INSERT INTO forget_log (',
                '            (lambda *a: None if self.item == "fact" else conn.execute(*a))(\n'
                '                "INSERT INTO forget_log (',
            ),
        ),
        FORGET_TESTS,
    ),
    Mutation(
        "notes-forget-deletes",
        "forgetting a note closes its version (no DELETE)",
        "src/lore/store/versions.py",
        (
            (
                "            self.close(conn, old)\n",
                '            (conn.execute(sql.SQL("DELETE FROM {} WHERE version_id = %s").format('
                'sql.Identifier(self.table)), (old.version_id,)) if self.item == "note" '
                "else self.close(conn, old))\n",
            ),
        ),
        FORGET_TESTS,
    ),
    Mutation(
        "notes-forget-no-log",
        "forgetting a note writes a forget_log row",
        "src/lore/store/versions.py",
        (
            (
                '            conn.execute(\n                "INSERT INTO forget_log (',
                '            (lambda *a: None if self.item == "note" else conn.execute(*a))(\n'
                '                "INSERT INTO forget_log (',
            ),
        ),
        FORGET_TESTS,
    ),
    # --- accepts_from on every write into another space
    Mutation(
        "inbox-accepts-anyone",
        "check_target: only spaces in accepts_from may write",
        "src/lore/core/inbox.py",
        (
            (
                "    if target == sender or sender in accepted.accepts_from:\n",
                "    if True:\n",
            ),
        ),
        ("tests/work/test_inbox_rules.py",),
    ),
    Mutation(
        "messages-new-thread-unchecked",
        "send_message (new thread) checks accepts_from",
        "src/lore/store/messages.py",
        (
            (
                "        if reply_to is None:\n            check_target(config, origin.space, to)\n",
                "        if reply_to is None:\n            pass\n",
            ),
        ),
        ("tests/work/test_messages.py",),
    ),
    Mutation(
        "messages-reply-unchecked",
        "continuing one's own thread into another space checks accepts_from",
        "src/lore/store/messages.py",
        (
            (
                "  # continuing a thread this space started\n"
                "                check_target(config, origin.space, to)\n",
                "  # continuing a thread this space started\n                pass\n",
            ),
        ),
        ("tests/work/test_messages.py",),
    ),
    Mutation(
        "tasks-file-unchecked",
        "filing a task into another space checks accepts_from (tasks.file, for the CLI and MCP alike)",
        "src/lore/store/tasks.py",
        (("    check_target(config, origin.space, target)\n", "    pass\n"),),
        ("tests/work/test_tasks.py", "tests/work/test_cli_work.py", "tests/work/test_mcp_work.py"),
    ),
    # --- a waiting send_message is woken by the commit (LISTEN/NOTIFY), never by polling
    Mutation(
        "wait-for-reply-polls",
        "waiting for a reply polls nothing: it sleeps on the LISTEN socket",
        "src/lore/store/messages.py",
        (
            (  # both waits (send_message with wait_seconds, lore messages send --wait) go through here
                "        look = await woken(remaining)\n",
                "        await woken(min(remaining, 0.5))\n        look = True\n",
            ),
        ),
        (
            "tests/work/test_mcp_work.py::test_a_waiting_send_message_runs_no_query_while_it_waits",
            "tests/work/test_listen.py::test_a_reply_is_delivered_by_listen_and_the_wait_is_bounded",
        ),
    ),
    # --- what each agent reads from the session-start hook
    Mutation(
        "hook-claude-code-flat",
        "Claude Code: hookSpecificOutput.additionalContext (a flat key is dropped)",
        "src/lore/core/clients.py",
        (
            (
                '    "claude-code": ClientHook("claude-code", _nested, loads=("claude",)),\n',
                '    "claude-code": ClientHook("claude-code", '
                'lambda t: json.dumps({"additionalContext": t}), loads=("claude",)),\n',
            ),
        ),
        HOOK_TESTS,
    ),
    Mutation(
        "hook-gemini-no-event-name",
        "Gemini CLI: hookEventName in hookSpecificOutput",
        "src/lore/core/clients.py",
        (
            (
                '    "gemini": ClientHook("gemini", _nested, loads=("gemini",)),\n',
                '    "gemini": ClientHook("gemini", lambda t: json.dumps('
                '{"hookSpecificOutput": {"additionalContext": t}}), loads=("gemini",)),\n',
            ),
        ),
        HOOK_TESTS,
    ),
    Mutation(
        "hook-codex-no-event-name",
        "Codex: hookEventName in hookSpecificOutput",
        "src/lore/core/clients.py",
        (
            (
                '    "codex": ClientHook("codex", _nested, loads=("agents",)),\n',
                '    "codex": ClientHook("codex", lambda t: json.dumps('
                '{"hookSpecificOutput": {"additionalContext": t}}), loads=("agents",)),\n',
            ),
        ),
        HOOK_TESTS,
    ),
    Mutation(
        "hook-cursor-key",
        "Cursor: additional_context",
        "src/lore/core/clients.py",
        (('json.dumps({"additional_context": text})', 'json.dumps({"additionalContext": text})'),),
        HOOK_TESTS,
    ),
    Mutation(
        "hook-cline-key",
        "Cline: contextModification",
        "src/lore/core/clients.py",
        (('json.dumps({"contextModification": text})', 'json.dumps({"context": text})'),),
        HOOK_TESTS,
    ),
    Mutation(
        "hook-copilot-injects",
        "Copilot CLI: a flat additionalContext (it drops the nested shape)",
        "src/lore/core/clients.py",
        (
            (
                '"copilot", lambda text: json.dumps({"additionalContext": text}), loads=',
                '"copilot", _nested, loads=',
            ),
        ),
        HOOK_TESTS,
    ),
    # --- export writes every column
    Mutation(
        "export-drops-subject",
        "export keeps every column: subject",
        "src/lore/store/transfer/export.py",
        (
            (
                '{"table": table, "row": {c: row.get(c) for c in cols}}',
                '{"table": table, "row": {c: row.get(c) for c in cols if c != "subject"}}',
            ),
        ),
        ("tests/reliability/test_transfer.py",),
    ),
    Mutation(
        "export-drops-valid-to",
        "export keeps every column: valid_to",
        "src/lore/store/transfer/export.py",
        (
            (
                '{"table": table, "row": {c: row.get(c) for c in cols}}',
                '{"table": table, "row": {c: row.get(c) for c in cols if c != "valid_to"}}',
            ),
        ),
        ("tests/reliability/test_transfer.py",),
    ),
    # --- tokens
    Mutation(
        "auth-any-token",
        "a wrong token signs in nobody",
        "src/lore/store/auth.py",
        (
            ("           WHERE hash = %s AND kind", "           WHERE (hash = %s OR true) AND kind"),
            (
                "    if row is None or not hmac.compare_digest(bytes(row[3]), wanted):\n",
                "    if row is None:\n",
            ),
        ),
        SIGNIN_TESTS,
    ),
    Mutation(
        "auth-revoked-accepted",
        "a revoked token signs in nobody",
        "src/lore/store/auth.py",
        (("kind = ANY(%s) AND revoked_at IS NULL\n", "kind = ANY(%s)\n"),),
        SIGNIN_TESTS,
    ),
    Mutation(
        "auth-expired-accepted",
        "an expired token signs in nobody",
        "src/lore/store/auth.py",
        (
            (
                "             AND (expires_at IS NULL OR expires_at > now())",
                "             AND (expires_at IS NULL OR expires_at > now() OR true)",
            ),
        ),
        SIGNIN_TESTS,
    ),
    Mutation(
        "auth-any-kind",
        "an OAuth refresh token is no bearer token",
        "src/lore/store/auth.py",
        (
            (
                "           WHERE hash = %s AND kind = ANY(%s)",
                "           WHERE hash = %s AND (kind = ANY(%s) OR true)",
            ),
        ),
        ("tests/http/test_oauth.py", *SIGNIN_TESTS),
    ),
    Mutation(
        "kept-text-ignores-the-stamp",
        "a kept session-start text is shown again only while the memory stamp of its spaces is unchanged",
        "src/lore/db/migrations/0023_memory_stamp.sql",
        (("    IF lore_memory_stamp(p_spaces) <> p_stamp THEN\n", "    IF false THEN\n"),),
        ("tests/integration/test_hook_fast.py::test_any_write_to_a_space_read_composes_anew",),
    ),
    Mutation(
        "kept-text-while-a-write-is-in-progress",
        "nothing is kept from a read while another transaction holds a transaction id",
        "src/lore/db/migrations/0023_memory_stamp.sql",
        (
            (
                "                 AND NOT EXISTS (SELECT 1 FROM pg_locks l",
                "                 AND true OR EXISTS (SELECT 1 FROM pg_locks l",
            ),
        ),
        (
            "tests/integration/test_hook_fast.py::test_a_transaction_in_progress_when_it_was_read_keeps_nothing",
        ),
    ),
    Mutation(
        "spool-delivers-twice",
        "a spooled write is claimed (renamed) before it is delivered, so two replayers never both deliver it",
        "src/lore/core/spool.py",
        (("        os.rename(path, claimed)\n", "        os.link(path, claimed)\n"),),
        ("tests/unit/test_spool.py::test_racing_replayers_deliver_each_write_once",),
    ),
)


# --- applying and restoring ------------------------------------------------------------------------


class CheckError(Exception):
    """The check itself cannot go on (exit status 2)."""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def mutated_text(mutation: Mutation, text: str) -> str:
    """The file's text with the mutation applied; CheckError when a snippet is not there exactly once."""
    for old, new in mutation.edits:
        found = text.count(old)
        if found != 1:
            raise CheckError(
                f"{mutation.name}: the snippet is in {mutation.path} {found} times, not once "
                f"(the code moved: rewrite the mutation):\n{old}"
            )
        text = text.replace(old, new)
    return text


@contextmanager
def applied(mutation: Mutation) -> Iterator[None]:
    """The mutation in place for the block; the original bytes and mtime back afterwards, always."""
    path = ROOT / mutation.path
    stat = path.stat()
    original = path.read_bytes()
    mutated = mutated_text(mutation, original.decode()).encode()
    _write(path, mutated)
    try:
        yield
    finally:
        _restore(mutation, path, original, mutated, stat.st_atime_ns, stat.st_mtime_ns)


def _write(path: Path, data: bytes) -> None:
    """Replace the file at once (a process importing it meanwhile sees one version or the other)."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".mutation")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temp, path.stat().st_mode & 0o7777)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _restore(mutation: Mutation, path: Path, original: bytes, mutated: bytes, atime: int, mtime: int) -> None:
    current = path.read_bytes()
    if current == mutated:
        _write(path, original)
        # The original mtime back: bytecode cached from the original stays valid, any cached from
        # the mutant does not (it records the mutant's mtime and size).
        os.utime(path, ns=(atime, mtime))
        if _sha(path.read_bytes()) != _sha(original):
            raise CheckError(f"{mutation.path}: restored, but its SHA-256 differs from the original")
        return
    # Someone edited the file while the mutation was in: undo only the mutated snippets.
    text = current.decode()
    for old, new in reversed(mutation.edits):
        if text.count(new) != 1:
            raise CheckError(
                f"{mutation.path} changed while mutation {mutation.name} was in place and the mutated "
                f"snippet is not there once: restore by hand, replacing\n{new}\nwith\n{old}"
            )
        text = text.replace(new, old)
    _write(path, text.encode())
    raise CheckError(
        f"{mutation.path} changed while mutation {mutation.name} was in place: the mutated snippets "
        "were put back (the other edit kept); the result of this run is not trustworthy, run again"
    )


# --- running the tests -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    status: str  # killed | survived | error
    seconds: float
    detail: str = ""


def existing(tests: Sequence[str]) -> tuple[list[str], list[str]]:
    present = [t for t in tests if (ROOT / t.split("::", 1)[0]).exists()]
    return present, [t for t in tests if t not in present]


def run_pytest(tests: Sequence[str], timeout: float) -> Outcome:
    """pytest in its own process group; on timeout SIGINT (pytest tears its fixtures down and stops
    the embedded database), then SIGKILL to the group."""
    python = str(VENV_PYTHON if VENV_PYTHON.exists() else sys.executable)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.monotonic()
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(
            [python, "-m", "pytest", *PYTEST_ARGS, *tests],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            _stop_group(proc)
        seconds = time.monotonic() - started
        log.seek(0)
        tail = "\n".join(log.read().splitlines()[-15:])
    if code is None:
        return Outcome("killed", seconds, f"the tests did not finish within {timeout:.0f} s")
    if code == 0:
        return Outcome("survived", seconds)
    if code == 1:  # tests failed
        first = next((x for x in tail.splitlines() if x.startswith(("FAILED ", "ERROR "))), "")
        return Outcome("killed", seconds, first.partition(" ")[2].split(" - ")[0])
    return Outcome("error", seconds, f"pytest exited {code}:\n{tail}")


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    for sig, grace in ((signal.SIGINT, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


# --- report ------------------------------------------------------------------------------------------


def table(rows: Sequence[tuple[Mutation, Outcome]]) -> str:
    lines = ["| mutation | rule it breaks | file | result | s |", "|---|---|---|---|---|"]
    for m, o in rows:
        result = {"killed": "killed", "survived": "**survived**", "error": "error"}[o.status]
        if o.status == "killed" and o.detail:
            result += f" by `{_test_name(o.detail)}`" if "::" in o.detail else f" ({o.detail})"
        lines.append(f"| `{m.name}` | {m.rule} | `{m.path}` | {result} | {o.seconds:.0f} |")
    return "\n".join(lines)


def _test_name(node: str) -> str:
    """A failing test's node id without its parameters (`test_x[…]`): a parameter may be anything a
    test feeds in, a made-up credential included, and the table goes into a document that lore's
    own secret check reads."""
    name, bracket, _ = node.partition("[")
    return f"{name}[…]" if bracket else name


def write_doc(rows: Sequence[tuple[Mutation, Outcome]], total: float) -> None:
    text = DOC.read_text()
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise CheckError(f"{DOC} has no single {BEGIN} ... {END} block to replace")
    survived = [m.name for m, o in rows if o.status == "survived"]
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    head = (
        f"Latest run ({when}, {os.cpu_count()} cores, {total / 60:.0f} min): {len(rows)} mutations, "
        f"{sum(o.status == 'killed' for _, o in rows)} killed, {len(survived)} survived"
        + (f" ({', '.join(f'`{s}`' for s in survived)})" if survived else "")
        + f", {sum(o.status == 'error' for _, o in rows)} errors."
    )
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    DOC.write_text(text[:start] + "\n" + head + "\n\n" + table(rows) + "\n" + text[end:])


# --- main --------------------------------------------------------------------------------------------


def _on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(2)  # unwinds through the finally blocks: the file is restored


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", action="append", metavar="NAME", help="run this mutation (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--check", action="store_true", help="only check that every snippet is in place")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per pytest run (default 600)")
    parser.add_argument("--no-baseline", action="store_true", help="skip running the tests unmutated first")
    parser.add_argument("--write", action="store_true", help=f"write the table into {DOC.relative_to(ROOT)}")
    args = parser.parse_args(argv)

    by_name = {m.name: m for m in MUTATIONS}
    unknown = sorted(set(args.only or ()) - set(by_name))
    if unknown:
        parser.error(f"unknown mutation(s) {', '.join(unknown)}; --list shows them")
    chosen = [by_name[n] for n in args.only] if args.only else list(MUTATIONS)
    if args.list:
        for m in chosen:
            print(f"{m.name}: {m.rule}\n    {m.path}; tests: {' '.join(m.tests)}")
        return 0
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if args.check:
            for m in chosen:
                mutated_text(m, (ROOT / m.path).read_text())
            print(f"{len(chosen)} mutations: every snippet is in place")
            return 0
        return _run(chosen, args.timeout, not args.no_baseline, args.write)
    except CheckError as exc:
        print(f"mutation check failed: {exc}", file=sys.stderr)
        return 2


def _run(chosen: Sequence[Mutation], timeout: float, baseline: bool, write: bool) -> int:
    for m in chosen:  # every snippet in place before any file is touched
        mutated_text(m, (ROOT / m.path).read_text())
    started = time.monotonic()
    if baseline:
        union, missing = existing(list(dict.fromkeys(t for m in chosen for t in m.tests)))
        print(f"baseline: {len(union)} test paths, unmutated ...", flush=True)
        outcome = run_pytest(union, timeout)
        if outcome.status != "survived":
            raise CheckError(f"the tests fail without any mutation ({outcome.detail}); fix that first")
        print(f"baseline: passed in {outcome.seconds:.0f} s", flush=True)
    rows: list[tuple[Mutation, Outcome]] = []
    for i, m in enumerate(chosen, 1):
        tests, missing = existing(m.tests)
        if missing:
            print(f"  ({m.name}: not present, skipped: {' '.join(missing)})", flush=True)
        if not tests:
            raise CheckError(f"{m.name}: none of its tests exist")
        print(f"[{i}/{len(chosen)}] {m.name} ({m.path}) ...", end=" ", flush=True)
        with applied(m):
            outcome = run_pytest(tests, timeout)
        print(outcome.status + (f": {outcome.detail}" if outcome.detail else ""), flush=True)
        rows.append((m, outcome))
        if outcome.status == "error":
            raise CheckError(f"{m.name}: pytest could not run its tests: {outcome.detail}")
    total = time.monotonic() - started
    print("\n" + table(rows))
    survived = [m.name for m, o in rows if o.status == "survived"]
    print(f"\n{len(rows)} mutations: {len(rows) - len(survived)} killed, {len(survived)} survived", end="")
    print(f" ({', '.join(survived)})" if survived else "", f"in {total / 60:.1f} min")
    if write:
        write_doc(rows, total)
        print(f"written to {DOC.relative_to(ROOT)}")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
