"""`lore doctor` on a machine that uses a server (`lore login`, or `LORE_URL`): the server is checked
instead of a local database, which is never started, created or looked at. Whether the server answers
and is ready (its schema against the one this lore expects), whether it takes the token and until
when, whether the config pushed there is this machine's config file, and the last outcome of each of
the user's hooks as the server recorded it (`/api/log`). Standard library HTTP only."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from lore.core.config import Config
from lore.core.errors import LoreError
from lore.hooks import remote
from lore.hooks.credentials import Server

Lines = list[tuple[str, str]]
TIMEOUT = 10.0
GOOD = ("shown", "nothing", "stored")
SOON = 7 * 86400  # a token that runs out within a week is said to


def check(server: Server, local: Config | None, lines: Lines) -> None:
    how = f"`lore login` as {server.user}" if server.stored else "LORE_URL"
    lines.append(("OK", f"this machine uses the server {server.origin} ({how}): no local database is used"))
    if not _ready(server, lines) or not _token(server, lines):
        return
    _config(server, local, lines)
    _records(server, lines)


def _get(server: Server, path: str) -> dict[str, Any]:
    return remote.call(server.url, server.token, path, None, timeout=TIMEOUT, named=server.named)


def _ready(server: Server, lines: Lines) -> bool:
    from lore.service import database

    started = time.monotonic()
    try:
        ready = remote.call(server.url, "", "/readyz", None, timeout=TIMEOUT)
    except LoreError as exc:
        lines.append(
            ("FAIL", f"server {server.origin}: {exc.message} → check the URL, the network, the server")
        )
        return False
    took = (time.monotonic() - started) * 1000
    lines.append(("OK", f"server {server.origin} reachable ({took:,.0f} ms) and ready"))
    schema, expected = ready.get("schema"), database.latest_schema()
    if schema == expected:
        lines.append(("OK", f"server schema current (version {schema})"))
    elif isinstance(schema, int) and schema > expected:
        lines.append(
            ("WARN", f"server schema {schema} is newer than this lore's ({expected}) → upgrade lore here")
        )
    else:
        lines.append(("FAIL", f"server schema {schema}, this lore expects {expected} → upgrade the server"))
    return True


def _token(server: Server, lines: Lines) -> bool:
    if not server.token:
        fix = "run `lore login URL`" if not server.stored else "run `lore login URL` again"
        lines.append(("FAIL", f"no token for {server.origin} → {fix} (or set LORE_TOKEN)"))
        return False
    try:
        me = _get(server, "/api/me")
    except LoreError as exc:
        lines.append(("FAIL", f"token: {exc.message}"))
        return False
    ends = me.get("expires_at")
    if not ends:
        lines.append(("OK", f"token valid: signed in as {me.get('user')} (no expiry)"))
        return True
    left = (datetime.fromisoformat(ends) - datetime.now(UTC)).total_seconds()
    if server.oauth:  # an OAuth access token: lore renews it as it runs out
        lines.append(("OK", f"token valid: signed in as {me.get('user')} (OAuth, renewed as it runs out)"))
    elif left < SOON:
        lines.append(
            ("WARN", f"token of {me.get('user')} runs out {ends} → ask for a new one, `lore login URL`")
        )
    else:
        lines.append(("OK", f"token valid: signed in as {me.get('user')}, until {ends}"))
    return True


def _config(server: Server, local: Config | None, lines: Lines) -> None:
    try:
        pushed = _get(server, "/api/spaces")
    except LoreError as exc:
        lines.append(("FAIL", f"pushed config: {exc.message}"))
        return
    if pushed.get("version") == 0:
        lines.append(
            ("WARN", "you never pushed a config: one space, personal, holds everything → `lore config push`")
        )
        return
    if local is None:
        lines.append(
            ("OK", f"config: the server's (version {pushed.get('version')}); no local config file here")
        )
        return
    differ = differences(local, pushed)
    if differ:
        what = "; ".join(differ[:5])
        fix = "`lore config push` (or edit the file to match)"
        lines.append(("WARN", f"the config pushed to the server differs from {local.path}: {what} → {fix}"))
    else:
        lines.append(
            ("OK", f"config pushed to the server (version {pushed.get('version')}) matches {local.path}")
        )


def differences(local: Config, pushed: dict[str, Any]) -> list[str]:
    """What differs between this machine's config file and the one the server holds (by local name)."""
    user = pushed.get("user") or ""

    def mine(ids: list[str]) -> list[str]:
        """Own ids by local name; a teammate's space (`bob/work`) is the server's to link, and this
        machine's copy of the file leaves it out when read (lore.core.config.load_config)."""
        return sorted(i.removeprefix(f"{user}/") for i in ids if "/" not in i.removeprefix(f"{user}/"))

    theirs = {s["name"]: s for s in pushed.get("spaces", [])}
    out = []
    for name in sorted(set(theirs) ^ set(local.ids)):
        out.append(f"space {name} only {'on the server' if name in theirs else 'here'}")
    for space in local.spaces:
        other = theirs.get(space.id)
        for key in ("paths", "remotes", "reads_from", "accepts_from") if other else ():
            here = (
                sorted(getattr(space, key))
                if key in ("paths", "remotes")
                else mine(list(getattr(space, key)))
            )
            there = sorted(other[key]) if key in ("paths", "remotes") else mine(other[key])  # type: ignore[index]
            if here != there:
                out.append(f"{space.id}.{key}")
    default = (pushed.get("default_space") or "").removeprefix(f"{user}/") or None
    if default != local.default_space:
        out.append("default_space")
    return out


def _records(server: Server, lines: Lines) -> None:
    try:
        records = _get(server, "/api/log?limit=200").get("records", [])
    except LoreError as exc:
        lines.append(("FAIL", f"the server's records of your hooks: {exc.message}"))
        return
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records:  # newest first
        latest.setdefault((record["client"], record["kind"]), record)
    if not latest:
        lines.append(("WARN", "the server has no record of your hooks yet → start a session in an agent"))
    for (client, kind), record in sorted(latest.items()):
        head = f"hook {client} {kind}: last on the server {record['at'][:16]}"
        if record["outcome"] in GOOD:
            lines.append(("OK", f"{head}, {record['outcome']} ({record.get('space') or 'no space'})"))
        else:
            level = "WARN" if record["outcome"] == "spooled" else "FAIL"
            lines.append(
                (
                    level,
                    f"{head}, {record['outcome']}: {record.get('detail') or ''} "
                    f"→ `lore log show {record['id']}`",
                )
            )
