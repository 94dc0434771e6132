"""The database started (the embedded server, on demand) and migrated: the one place that does both,
for `lore db start`, `lore run` and every Runtime's first connection."""

from __future__ import annotations

from collections.abc import Mapping

from lore.db import connect, migrate


def ready(
    env: Mapping[str, str],
    config_url: str | None,
    *,
    release: bool = False,
    listen_url: str | None = None,
    pooler: str | None = None,
) -> connect.Target:
    """Which database (lore.db.locate's rule: started when it is the embedded one; `release`: the user
    asked, after `lore db stop` too), its schema brought up to this lore's."""
    target = connect.target(config_url, env, release=release, listen_url=listen_url, pooler=pooler)
    with connect.connect(target.url, pooled=target.pooled) as conn:
        migrate.upgrade(conn)
    return target


def latest_schema() -> int:
    """The newest schema version this lore has."""
    return migrate.latest_version()
