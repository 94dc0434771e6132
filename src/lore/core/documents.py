"""A JSON document read where its sender may be anything (a server's error body, a NOTIFY payload):
its object, or an empty one. Pure."""

from __future__ import annotations

import json
from typing import Any


def json_object(raw: str | bytes) -> dict[str, Any]:
    """The JSON object `raw` holds; {} when it is not JSON or not an object."""
    try:
        data = json.loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
