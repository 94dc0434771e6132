"""Never show a secret: passwords in connection strings are masked before anything is printed or logged."""

from __future__ import annotations

import re

_URL_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@\s]+@")
_KV_PASSWORD = re.compile(r"(password=)\S+", re.IGNORECASE)


def redact(text: str) -> str:
    return _URL_PASSWORD.sub(r"\1***@", _KV_PASSWORD.sub(r"\1***", text))
