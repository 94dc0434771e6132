"""SQL as psql reads it from a script (stdin, never argv, which every local user can read): values as
literals, any text at all kept one literal by dollar-quoting, and psql's own arguments. Standard
library only: the hook's fast path (lore.hooks.quick) writes its one statement with it."""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # no `typing` at run time: the hook's fast path imports this
if TYPE_CHECKING:
    from typing import Any


def dollar_quoted(text: str) -> str:
    """`text` as a dollar-quoted SQL literal under a tag it does not contain (64 random bits)."""
    tag = f"$h{os.urandom(8).hex()}$"
    while tag in text:
        tag = f"$h{os.urandom(8).hex()}$"
    return f"{tag}{text}{tag}"


def literal(value: Any, sql_type: str) -> str:
    """`value` as a SQL literal of `sql_type`: text and documents dollar-quoted, numbers as numbers,
    lists as arrays, None as a typed NULL."""
    if value is None:
        return f"NULL::{sql_type}"
    if sql_type in ("jsonb", "json"):
        return f"{dollar_quoted(json.dumps(value, ensure_ascii=False))}::{sql_type}"
    if sql_type.endswith("[]"):
        inner = sql_type[:-2]
        return f"ARRAY[{', '.join(literal(v, inner) for v in value)}]::{sql_type}"
    if isinstance(value, bool):
        return f"{'true' if value else 'false'}::{sql_type}"
    if isinstance(value, int):
        return f"{int(value)}::{sql_type}"
    return f"{dollar_quoted(str(value))}::{sql_type}"


def call(name: str, types: tuple[str, ...], *args: Any) -> str:
    """`SELECT to_json(name(literals...));`: one function's call, its one result as JSON."""
    values = ", ".join(literal(v, t) for v, t in zip(args, types, strict=True))
    return f"SELECT to_json({name}({values}));"


def psql_args(psql: str, target: str | None) -> list[str]:
    """psql quiet, unaligned, tuples only, no ~/.psqlrc, on `target` (a URL without its password)."""
    return [psql, "-X", "-q", "-A", "-t", *(["-d", target] if target else [])]


def transaction_head(timeout: float) -> str:
    """How a hook's psql script begins: stop at the first error, and a statement timeout for this
    transaction only (SET LOCAL: through a transaction pooler a plain SET would stay behind on the
    server connection for its next client)."""
    return f"\\set ON_ERROR_STOP on\nBEGIN;\nSET LOCAL statement_timeout = {max(50, int(timeout * 1000))};\n"


def psql_env(connect_timeout: int) -> dict[str, str]:
    """The environment a hook's psql runs in: nothing of the hook's own but PATH (never a secret of
    the agent's), a connect timeout, and its name in pg_stat_activity."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PGCONNECT_TIMEOUT": str(connect_timeout),
        "PGAPPNAME": "lore-hook",
    }
