"""`lore config push [FILE] [--user USER]`: upload a config file as a signed-in user's spaces.

Validated here first (errors name the file and line), then by the server. Over HTTP to the server this
machine uses (`lore login`, or `$LORE_URL` with `$LORE_TOKEN`: what a user does), or with `--user`
straight into the database (what an admin on the server does). `~` in the file stands for this
machine's HOME, sent along.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from lore.core.config import config_path, parse_config, read_config_text
from lore.core.errors import InvalidInput


def push(file: str | None, user: str | None) -> int:
    path = Path(file).expanduser() if file else config_path(os.environ)
    text = read_config_text(path)
    config = parse_config(text, path)
    home = os.environ.get("HOME") or str(Path.home())
    if user:
        from lore.cli.context import runtime
        from lore.core.users import local_name
        from lore.service import accounts

        with runtime(config_optional=True) as rt:
            pushed = accounts.push_config(rt, user, text, home)
        spaces = [local_name(user, s) for s in pushed.config.ids]
        return _report(user, pushed.version, spaces, list(pushed.ignored), path)
    from lore.hooks.credentials import server

    where = server(os.environ)
    if where is None or not where.token:
        raise InvalidInput(
            "lore config push needs a server: `lore login URL`, or LORE_URL and LORE_TOKEN "
            "(or --user USER on the server)",
            "run `lore login https://lore.example.com`, then push again",
        )
    from lore.cli.gateway.remote import Remote

    answer = Remote(where, os.environ, os.getcwd()).push_config(text, home)
    ids = answer.get("spaces", [s.id for s in config.spaces])
    done = _report(answer.get("user", "?"), answer.get("version", 0), ids, answer.get("ignored", []), path)
    for link in answer.get("links") or []:
        state = (
            "linked"
            if link.get("linked")
            else f"not linked yet: {link.get('names')} must name yours back in its {link.get('key')}"
        )
        print(f"  {link.get('space')}.{link.get('key')} names {link.get('names')}: {state}")
    return done


def _report(user: str, version: int, spaces: list[str], ignored: list[str], path: Path) -> int:
    print(f"Pushed {path} for {user} (version {version}): spaces {', '.join(spaces) or 'none'}.")
    for item in ignored:
        print(f"  ignored: {item}", file=sys.stderr)
    return 0
