"""Signed-in users' configs, cached per server process, as they act: each entry naming another user's
space kept only while that user's config names this one back (lore.core.links).

A config pushed through this server applies at once, to its user and to the teammates it links or
unlinks; one pushed through another replica (or with `lore config push --user` straight into the
database) applies within `TTL` seconds, when the cached copy's version is checked again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace

import anyio
from psycopg_pool import ConnectionPool

from lore.core import links
from lore.core.errors import LoreError
from lore.db import connect as db
from lore.store import userconfig
from lore.store.userconfig import UserConfig

TTL = 2.0
Key = tuple[int, tuple[tuple[str, int], ...]]


class Accounts:
    def __init__(self, pool: Callable[[], ConnectionPool], ttl: float = TTL) -> None:
        self._pool = pool
        self._ttl = ttl
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[UserConfig, float]] = {}  # as pushed
        self._linked: dict[str, tuple[Key, UserConfig]] = {}  # as it acts

    def get(self, user: str) -> UserConfig:
        """The config as it acts, from cached copies (any age), loading what is missing."""
        return self._link(self._raw(user))

    async def fresh(self, user: str) -> UserConfig:
        """The config as it acts, each copy it depends on (the user's, the named teammates') checked
        against the database when older than TTL."""
        own = await self._fresh(user)
        for other in links.named_users(own.config, user):
            await self._fresh(other)
        return self._link(own)

    def pushed(self, user: str) -> UserConfig:
        """The config as the user pushed it (teammates' entries whether linked or not)."""
        return self._raw(user)

    def store(self, config: UserConfig) -> None:
        with self._lock:
            self._cache[config.user] = (config, time.monotonic())

    def _raw(self, user: str) -> UserConfig:
        with self._lock:
            hit = self._cache.get(user)
        return hit[0] if hit is not None else self._load(user, None)

    async def _fresh(self, user: str) -> UserConfig:
        with self._lock:
            hit = self._cache.get(user)
        if hit is not None and time.monotonic() - hit[1] < self._ttl:
            return hit[0]
        return await anyio.to_thread.run_sync(self._load, user, hit[0] if hit else None)

    def _link(self, own: UserConfig) -> UserConfig:
        """`own` with its teammates' entries checked against theirs; the same object while no version
        changed (what resolves a workspace is cached by the config's identity)."""
        named = links.named_users(own.config, own.user)
        if not named:
            return own
        others = {}
        for other in named:
            try:
                others[other] = self._raw(other)
            except LoreError:  # a teammate's config that does not load now: no link to it
                continue
        key: Key = (own.version, tuple((name, c.version) for name, c in others.items()))
        with self._lock:
            hit = self._linked.get(own.user)
        if hit is not None and hit[0] == key:
            return hit[1]
        acting = replace(
            own, config=links.effective(own.config, own.user, {n: c.config for n, c in others.items()})
        )
        with self._lock:
            if len(self._linked) > 10_000:
                self._linked.clear()
            self._linked[own.user] = (key, acting)
        return acting

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
