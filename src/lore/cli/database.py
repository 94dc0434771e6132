"""`lore db start|stop|status|url`: the embedded PostgreSQL."""

from __future__ import annotations

import os
import sys

from lore.core import outcomes
from lore.core.config import load_config
from lore.core.errors import ConfigError
from lore.core.redact import redact
from lore.db import embedded, locate


def _external_url() -> str | None:
    """The external database lore uses (lore.db.locate's rule), or None: the embedded one."""
    try:
        config_url = load_config().database_url
    except ConfigError:
        config_url = None
    return locate.configured(os.environ, config_url)


def run(action: str) -> int:
    from lore.cli.gateway import local_note

    note = local_note(f"db {action}")
    if note:
        print(note, file=sys.stderr)
    external = _external_url()
    if external and action in ("start", "stop"):
        print(f"lore uses an external database ({redact(external)}); nothing to {action}.")
        return 0
    if action == "url":
        if external:
            print(external)
            return 0
        print(embedded.start())  # after `lore db stop`, says so: `lore db start` is the user's
        return 0
    if action == "start":
        from lore.service import database

        url = database.ready(os.environ, None, release=True).url
        print(f"running: {url}")
        return 0
    if action == "stop":
        stopped = embedded.stop(hold=True)
        print(
            ("stopped" if stopped else "not running")
            + "; it stays stopped (servers and hooks will not start it) until `lore db start`"
        )
        return 0
    status = embedded.status()
    if external:
        print(f"external database: {redact(external)}")
    elif status.running:
        print(f"running (pid {status.pid}) data {status.pgdata}\nurl {status.url}")
    elif embedded.held():
        print(f"stopped; data {status.pgdata}. {embedded.STOPPED_BY_USER} {outcomes.HELD_HINT}")
    else:
        print(f"stopped; data {status.pgdata}. {outcomes.NOT_RUNNING}")
    return 0
