"""Is the database there, and is its schema the one this lore needs: what `/readyz` (a load
balancer's check) and `lore doctor` ask."""

from __future__ import annotations

from dataclasses import dataclass

from lore.db import migrate
from lore.service.runtime import Runtime


@dataclass(frozen=True)
class Schema:
    version: int | None  # the applied migration (None: no lore schema)
    expected: int  # the newest this lore has
    listen: str = ""  # where LISTEN goes (lore.core.pooling.Plan.listen_why)
    warning: str | None = None  # e.g. listening would go through a transaction pooler: what to set

    @property
    def current(self) -> bool:
        """A newer schema is fine too: a newer replica migrated it, and migrations only add and relax."""
        return self.version is not None and self.version >= self.expected


def schema(rt: Runtime) -> Schema:
    version = rt.transact(migrate.current_version)
    plan = rt.target().plan
    if plan is None:
        return Schema(version, migrate.latest_version())
    return Schema(version, migrate.latest_version(), plan.listen_why, plan.warning)
