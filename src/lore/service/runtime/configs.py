"""Which config a call runs under: the local config file as it is now (lore.core.config.LiveConfig,
read again when it changed, logged when it changed or broke), or, in sign-in mode (`lore serve
--sign-in`), the signed-in user's config from the database (lore.store.accounts)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from lore.core.config import Config, LiveConfig, file_signature
from lore.core.errors import ConfigError, Refused
from lore.service.runtime.connections import Settings

if TYPE_CHECKING:
    from lore.store.accounts import Accounts

log = logging.getLogger("lore.service.runtime")


class Configs:
    """The config of the current call, and whose it is."""

    def __init__(self, env: Mapping[str, str], optional: bool = False) -> None:
        self.env = env
        self.live = LiveConfig(env)
        # Commands that move a whole database (export, import, purge) need no usable config file.
        self.optional = optional
        # Sign-in mode: each request's user and their config from the database.
        self.accounts: Accounts | None = None
        # Sign-in mode: who the current request is (the HTTP layer sets it: the bearer token's subject).
        self.identity: Callable[[], str | None] | None = None

    def sign_in(self, accounts: Accounts, identity: Callable[[], str | None]) -> None:
        """Sign-in mode: each request's user (`identity()`) and their config from `accounts`,
        instead of the local config file."""
        self.accounts = accounts
        self.identity = identity

    def user(self) -> str | None:
        """The signed-in user of the current request in sign-in mode; None in local mode."""
        if self.accounts is None:
            return None
        subject = self.identity() if self.identity is not None else None
        if not subject:
            raise Refused("This request is not signed in.", "Send `Authorization: Bearer <lore token>`.")
        return subject

    def current(self) -> Config:
        """The config of the current call: the signed-in user's, else the local file's."""
        if self.accounts is not None:
            return self.accounts.get(self.user() or "").config
        return self.local()

    async def scope(self) -> tuple[Config, Mapping[str, str], str]:
        """(config, environment to resolve with, cache prefix) for the current request."""
        user = self.user()
        if self.accounts is None or user is None:
            return self.current(), self.env, ""
        account = await self.accounts.fresh(user)
        return account.config, account.env(), f"{user}|{account.version}|"

    def local(self) -> Config:
        """The config file as it is now: one os.stat per call, parsed again when it changed. An
        invalid file raises its ConfigError (file, line, fix), never the last good config."""
        live, loads = self.live, self.live.loads
        try:
            config = live.get()
        except ConfigError as exc:
            if live.loads != loads:
                log.warning("config %s is not usable: %s", live.path, exc.message)
            raise
        if loads and live.loads != loads:
            log.info("config %s changed: read again (spaces: %s)", live.path, ", ".join(config.ids))
        return config

    def optional_local(self) -> Config | None:
        """The config file when there is a usable one. No file is no config, said nowhere (a server
        host needs none); a file that is there and broken is still logged."""
        if file_signature(self.live.path) is None:
            return None
        try:
            return self.local()
        except ConfigError:
            return None

    def database(self) -> Settings:
        """What the config file says of the database: (url, `[database] listen_url`, `pooler`). A
        local process needs a usable file; a server in sign-in mode, and the commands that move a
        whole database (tokens, export, import, purge), need none: LORE_DATABASE_URL is enough."""
        config = self.optional_local()
        listen_url, pooler = (
            (config.database_listen_url, config.database_pooler) if config is not None else (None, None)
        )
        if self.accounts is None and not self.optional:
            return self.local().database_url, listen_url, pooler
        config = self.optional_local()
        return (config.database_url if config is not None else None), listen_url, pooler
