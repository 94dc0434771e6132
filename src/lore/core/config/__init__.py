"""The config file: find it, parse it, validate it, freeze it (docs/design.md, Spaces).

Light on purpose (stdlib + platformdirs): the session-start hook imports it. Every error names the
file, the line where it can be found, and the fix. One module per reason to change, and this one
the import surface every caller uses (`from lore.core.config import Config, load_config`; the limits
and defaults are `model`'s, the TOML keys' patterns `parse`'s):

- `model`: what a valid config is (frozen dataclasses, defaults and limits, the starter file);
- `parse`: a file's TOML text to a Config, each key and value validated, errors with their line;
- `load`: where the file is, reading it (a regular file only), the live copy that reloads;
- `checks`: what `lore doctor` says about a config that parsed (stale paths, unreachable spaces).
"""

from lore.core.config.checks import claimed_twice, stale_paths, unreachable_spaces
from lore.core.config.load import (
    MAX_CONFIG_BYTES,
    LiveConfig,
    Signature,
    config_path,
    expand_user,
    file_signature,
    load_config,
    read_config_text,
)
from lore.core.config.model import STARTER_CONFIG, Config, EmbedderSettings, SpaceConfig, foreign, local_only
from lore.core.config.parse import parse_config

__all__ = [
    "MAX_CONFIG_BYTES",
    "STARTER_CONFIG",
    "Config",
    "EmbedderSettings",
    "LiveConfig",
    "Signature",
    "SpaceConfig",
    "claimed_twice",
    "config_path",
    "expand_user",
    "file_signature",
    "foreign",
    "load_config",
    "local_only",
    "parse_config",
    "read_config_text",
    "stale_paths",
    "unreachable_spaces",
]
