"""The MCP session ids a stateless `lore serve` hands out (`--stateless`, behind a load balancer
without affinity): the id carries the client's name and version from its `initialize`, so any
replica answering a later request of the session knows who the client is from the request itself.
The rest of a session's state that must outlive a change of replica (the space it was last given)
is in the database, keyed by the id (lore.store.mcp_sessions).

    lore1.<base64url of ["name", "version"]>.<128 random bits, hex>

The name is what the client said of itself, as in any `initialize`: nothing here is a credential
(every request carries its bearer token; the key of the stored state includes the user).
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets

PREFIX = "lore1"
MAX_NAME = 200
MAX_VERSION = 100
MAX_ID = 1000


def issue(name: str | None, version: str | None) -> str:
    """A new session id for a client that named itself `name` (None: it did not)."""
    data = json.dumps([(name or "")[:MAX_NAME], (version or "")[:MAX_VERSION]], ensure_ascii=False)
    encoded = base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")
    return f"{PREFIX}.{encoded}.{secrets.token_hex(16)}"


def client_of(session_id: str | None) -> tuple[str, str | None] | None:
    """(name, version) from an id `issue` made, or None: another kind of id (the SDK's, in stateful
    mode), a malformed one, or a client that gave no name."""
    if not session_id or len(session_id) > MAX_ID:
        return None
    parts = session_id.split(".")
    if len(parts) != 3 or parts[0] != PREFIX:
        return None
    try:
        raw = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        name, version = json.loads(raw.decode())
    except (ValueError, binascii.Error, UnicodeDecodeError, TypeError):
        return None
    if not isinstance(name, str) or not isinstance(version, str) or not name:
        return None
    return name[:MAX_NAME], (version[:MAX_VERSION] or None)


def well_formed(session_id: str) -> bool:
    """Whether `session_id` has the shape `issue` gives every id (whatever name it carries): the
    prefix, a payload that decodes to [name, version], and 128 bits in hex."""
    parts = session_id.split(".")
    if len(session_id) > MAX_ID or len(parts) != 3 or parts[0] != PREFIX:
        return False
    if len(parts[2]) != 32 or any(c not in "0123456789abcdef" for c in parts[2]):
        return False
    try:
        raw = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4))
        decoded = json.loads(raw.decode())
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return False
    return isinstance(decoded, list) and len(decoded) == 2 and all(isinstance(v, str) for v in decoded)


def issued(session_id: str | None) -> bool:
    """Whether `session_id` is one of these (its state then lives in the database, not a process)."""
    return bool(session_id) and str(session_id).startswith(PREFIX + ".")


def state_key(user: str | None, session_id: str) -> str:
    """The key of a session's state in the database: its user (none in local mode) and its id."""
    return f"{user or ''}|{session_id}"
