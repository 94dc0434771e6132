"""Never show a secret: passwords in connection strings are masked before anything is printed or logged."""

from __future__ import annotations

import re

# `scheme://user:PASSWORD@host`: the user may be empty (`redis://:pw@host`), and the password may hold
# a raw `@` or a space (pasted unencoded): everything from the user's colon to the last `@` of the
# line that a host follows is masked, never crossing a `/` (a path) or a line.
_URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^/\n]*@(?=[A-Za-z0-9\[])")
# `password=...` in a keyword string or a query; a quoted value may hold spaces.
_KV_PASSWORD = re.compile(r"""(password\s*=\s*)(?:'[^'\n]*'|"[^"\n]*"|[^\s&;]+)""", re.IGNORECASE)


def redact(text: str) -> str:
    return _URL_PASSWORD.sub(r"\1***@", _KV_PASSWORD.sub(r"\1***", text))
