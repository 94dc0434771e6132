"""The runtime of one `lore` command: the same Runtime the servers run (the live config, a pooled
connection to the migrated database), for the command's environment and working directory, closed
when the command ends."""

from __future__ import annotations

import os

from lore.service.runtime import Runtime


def runtime(*, config_optional: bool = False) -> Runtime:
    """`config_optional`: a command that moves a whole database (export, import, purge, tokens)
    needs no usable config file: the database alone is enough."""
    return Runtime(env=dict(os.environ), transport="cli", cwd=os.getcwd(), config_optional=config_optional)
