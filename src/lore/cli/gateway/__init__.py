"""The one way a `lore` command reaches memory: a gateway, this machine's database (`Local`: a Runtime
and the use cases of lore.service) or a server (`Remote`: the same use cases behind `/api`), chosen
once per command (`open_gateway`): `LORE_URL`, else the login `lore login URL` stored, else local.
Every command calls the gateway's methods and prints their answers, which are the same JSON either way
(lore.service.wire): a command never asks which gateway it has, nor composes a use case itself.

Commands a server does not offer (`lore import`, `purge`, `reindex`, the embedded database's) say so
on a client through `local_only`, rather than answering from an empty local database."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from lore.core.errors import LoreError, Refused
from lore.core.workspace import command_signal

if TYPE_CHECKING:
    from lore.hooks.credentials import Server

Json = dict[str, Any]


class Gateway(Protocol):
    """What the commands ask of memory; every answer is lore.service.wire's JSON."""

    where: str  # "this machine", or the server's origin (what messages say)

    def which(self, workspace: str | None) -> Json: ...

    def facts(self, workspace: str | None, *, usage: bool = False) -> Json: ...
    def fact_history(self, workspace: str | None, fact_id: str) -> Json: ...
    def remember_fact(self, workspace: str | None, statement: str, **fields: Any) -> Json: ...
    def revise_fact(
        self, workspace: str | None, fact_id: str, statement: str | None, **fields: Any
    ) -> Json: ...
    def remember_note(self, workspace: str | None, body: str, **fields: Any) -> Json: ...
    def search(
        self, workspace: str | None, query: str, *, kinds: Sequence[str] | None, limit: int
    ) -> Json: ...
    def handoff(self, workspace: str | None) -> Json: ...
    def session_start(self, workspace: str | None, client: str) -> Json: ...
    def tasks(self, workspace: str | None, *, every: bool) -> Json: ...
    def task(self, workspace: str | None, task_id: str) -> Json: ...
    def file_task(self, workspace: str | None, title: str, body: str, **fields: Any) -> Json: ...
    def update_task(self, workspace: str | None, task_id: str, status: str, note: str | None) -> Json: ...
    def messages(self, workspace: str | None) -> Json: ...
    def read_messages(self, workspace: str | None) -> Json: ...
    def send_message(
        self, workspace: str | None, to: str, body: str, *, on_sent: Callable[[Json], None], **fields: Any
    ) -> Json: ...
    def log(self, **filters: Any) -> Json: ...
    def log_record(self, record_id: str) -> Json: ...
    def tidy(self, workspace: str | None) -> Json: ...
    def tidy_act(self, workspace: str | None, act: str, payload: Json) -> Json: ...
    def export(self, space: str | None) -> Iterator[str]: ...


@contextmanager
def open_gateway(env: Mapping[str, str], cwd: str) -> Iterator[Gateway]:
    """The server when one is in use, else this machine's database (opened on first use)."""
    env = dict(env)
    server = _server(env)
    if server is not None:
        from lore.cli.gateway.remote import Remote

        yield Remote(server, env, cwd)
        return
    from lore.cli.gateway.local import Local
    from lore.service.runtime import Runtime

    with Runtime(env=env, transport="cli", cwd=cwd) as rt:
        yield Local(rt)


def _server(env: Mapping[str, str]) -> Server | None:
    """The server this machine uses (lore.hooks.credentials: LORE_URL, else `lore login`'s), or None."""
    from lore.hooks import credentials

    return credentials.server(dict(env), timeout=10.0)


def local_only(command: str, why: str) -> None:
    """Refuse `command` on a machine that uses a server: it would act on this machine's database,
    which holds none of the memory there. Says which server, and where the command does work."""
    server = _server(os.environ)
    if server is None:
        return
    raise Refused(
        f"`lore {command}` works on this machine's database, and this machine uses the server at "
        f"{server.origin} ({'`lore login`' if server.stored else 'LORE_URL'}).",
        why,
    )


def local_note(command: str) -> str | None:
    """What a command that works on this machine's database by nature (`lore mcp`, a local `lore
    serve`, `lore run`, `lore db`) says on a machine that uses a server: that it is local-only."""
    try:
        server = _server(os.environ)
    except LoreError:
        return None
    if server is None:
        return None
    return (
        f"note: `lore {command}` works on this machine's own database, which holds none of the memory "
        f"of the server this machine uses ({server.origin}); `lore install claude-code` wires agents to it"
    )


def workspace_path(workspace: str | None, env: Mapping[str, str], cwd: str) -> str:
    """The directory a command speaks for: `--workspace DIR` (made absolute), else the signals a session
    has (the agent's variables, then the working directory): one rule, local or remote."""
    return str(command_signal(workspace, env, cwd).path)
