"""`lore config push [FILE] [--user USER]`: upload a config file as a signed-in user's spaces.

Validated here first (errors name the file and line), then by the server. Over HTTP to the server this
machine uses (`lore login`, or `$LORE_URL` with `$LORE_TOKEN`: what a user does), or with `--user`
straight into the database (what an admin on the server does). `~` in the file stands for this
machine's HOME, sent along.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from lore.core.config import config_path, parse_config, read_config_text
from lore.core.documents import json_object
from lore.core.errors import InvalidInput, LoreError, Refused


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
    answer = _put(f"{where.url}/api/config", where.token, {"toml": text, "home": home}, where.named)
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


def _put(url: str, token: str, payload: dict[str, str], named: str = "LORE_TOKEN") -> dict[str, Any]:
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        method="PUT",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        from lore.hooks.remote import opener

        with opener().open(request, timeout=30) as response:
            answer = json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        with exc:
            body = json_object(exc.read())
        if 300 <= exc.code < 400:
            from urllib.parse import urljoin

            from lore.core.login import origin

            where = origin(urljoin(url, exc.headers.get("Location") or ""))
            raise Refused(
                f"the server answered with a redirect ({exc.code}) to {where}; lore does not follow "
                "redirects (your token would go along)",
                "set LORE_URL to the server's final address and push again",
            ) from None
        if exc.code == 401:
            raise Refused(f"the server refused {named} (401)", "check it, or ask for a new one") from None
        raise LoreError(
            f"the server answered {exc.code}: {body.get('error', '')}", str(body.get("hint", ""))
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        raise LoreError(f"cannot reach {url}: {exc}", "check LORE_URL and that the server runs") from None
    return answer if isinstance(answer, dict) else {}
