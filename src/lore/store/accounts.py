"""Signed-in users' configs, cached per server process.

A config pushed through this server applies at once; one pushed through another replica (or with
`lore config push --user` straight into the database) applies within `TTL` seconds, when the cached
copy's version is checked again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import anyio
from psycopg_pool import ConnectionPool

from lore.db import connect as db
from lore.store import userconfig
from lore.store.userconfig import UserConfig

TTL = 2.0


class Accounts:
    def __init__(self, pool: Callable[[], ConnectionPool], ttl: float = TTL) -> None:
        self._pool = pool
        self._ttl = ttl
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[UserConfig, float]] = {}

    def get(self, user: str) -> UserConfig:
        """The cached config (any age), else loaded now."""
        with self._lock:
            hit = self._cache.get(user)
        return hit[0] if hit is not None else self._load(user, None)

    async def fresh(self, user: str) -> UserConfig:
        """The config, checked against the database when the cached copy is older than TTL."""
        with self._lock:
            hit = self._cache.get(user)
        if hit is not None and time.monotonic() - hit[1] < self._ttl:
            return hit[0]
        return await anyio.to_thread.run_sync(self._load, user, hit[0] if hit else None)

    def store(self, config: UserConfig) -> None:
        with self._lock:
            self._cache[config.user] = (config, time.monotonic())

    def _load(self, user: str, cached: UserConfig | None) -> UserConfig:
        with db.translated(), self._pool().connection() as conn:
            if cached is not None and userconfig.version(conn, user) == cached.version:
                loaded = cached
            else:
                loaded = userconfig.load(conn, user)
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[user] = (loaded, time.monotonic())
        return loaded
