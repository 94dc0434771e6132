"""What one `lore` command runs on. Memory commands take a gateway (lore.cli.gateway): this machine's
database, or the server this machine uses (`LORE_URL`, or `lore login`), chosen once per command.
Commands that act on a database itself (import, purge, reindex, tokens) take a runtime: the same
Runtime the servers run (the live config, a pooled connection to the migrated database), for the
command's environment and working directory, closed when the command ends."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from lore.cli.gateway import Gateway, open_gateway
from lore.service.runtime import Runtime


def runtime(*, config_optional: bool = False) -> Runtime:
    """`config_optional`: a command that moves a whole database (export, import, purge, tokens)
    needs no usable config file: the database alone is enough."""
    return Runtime(env=dict(os.environ), transport="cli", cwd=os.getcwd(), config_optional=config_optional)


@contextmanager
def gateway() -> Iterator[Gateway]:
    with open_gateway(os.environ, os.getcwd()) as gw:
        yield gw
