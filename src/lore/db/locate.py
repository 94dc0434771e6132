"""Which database, the one rule: `LORE_DATABASE_URL`, else the config's `[database] url`, else the
embedded server of this user. Driver-free: the hooks and lore.db.connect both ask here."""

from __future__ import annotations

from collections.abc import Mapping

from lore.db import embedded


def configured(env: Mapping[str, str], config_url: str | None) -> str | None:
    """An external database named by the environment or the config (None: the embedded one)."""
    return (env.get("LORE_DATABASE_URL") or "").strip() or (config_url or "").strip() or None


def current(env: Mapping[str, str], config_url: str | None) -> str | None:
    """The URL to use now without starting anything: the configured one, else the embedded server's
    if it is up (None: it is not)."""
    return configured(env, config_url) or embedded.running_url(env)
