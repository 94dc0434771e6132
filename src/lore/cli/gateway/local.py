"""The gateway to this machine's database: each method resolves the command's session (its workspace,
as a session's) and calls the use case of lore.service, answering in lore.service.wire's JSON, the
same the server's `/api` routes answer with (lore.cli.gateway.remote)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

import anyio

from lore.cli.gateway import workspace_path
from lore.core import advice
from lore.core.session import SessionContext
from lore.service import data, handoffs, log, memory, search, tidy, wire, work
from lore.service.runtime import Runtime, first_error
from lore.service.session_start import session_start

Json = dict[str, Any]
SOURCE = "cli"


class Local:
    where = "this machine"

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def _session(self, workspace: str | None) -> SessionContext:
        return self.rt.command_session(workspace)

    def which(self, workspace: str | None) -> Json:
        return wire.session(self._session(workspace))

    # --- facts and notes ---------------------------------------------------------------------------

    def facts(self, workspace: str | None, *, usage: bool = False) -> Json:
        session = self._session(workspace)
        found = memory.recall(self.rt, session)
        used = log.usage(self.rt, session.readable, [f.id for f in found.facts]) if usage else None
        return wire.recalled(found, session.space, used)

    def fact_history(self, workspace: str | None, fact_id: str) -> Json:
        readable = self._session(workspace).readable
        versions = memory.fact_history(self.rt, readable, fact_id)
        return wire.history(versions, tidy.merged_into(self.rt, readable, fact_id))

    def remember_fact(self, workspace: str | None, statement: str, **fields: Any) -> Json:
        done = memory.remember_fact(self.rt, self._session(workspace), statement, **fields)
        return wire.remembered(done, "fact", advice.CLI)

    def revise_fact(self, workspace: str | None, fact_id: str, statement: str | None, **fields: Any) -> Json:
        _, new = memory.revise_fact(self.rt, self._session(workspace), fact_id, statement=statement, **fields)
        return {"fact": wire.row(new)}

    def remember_note(self, workspace: str | None, body: str, **fields: Any) -> Json:
        done = memory.remember_note(self.rt, self._session(workspace), body, **fields)
        return wire.remembered(done, "note", advice.CLI)

    def search(self, workspace: str | None, query: str, *, kinds: Sequence[str] | None, limit: int) -> Json:
        session = self._session(workspace)
        others = self.rt.config().ids

        async def go() -> search.Explanation:
            return await search.explain(
                self.rt, session.readable, query, session_space=session.space, others=others,
                kinds=kinds, limit=limit,
            )  # fmt: skip

        return wire.explanation(anyio.run(go), session.space)

    def handoff(self, workspace: str | None) -> Json:
        session = self._session(workspace)
        return wire.handoff(session, handoffs.last_here(self.rt, session).text)

    def session_start(self, workspace: str | None, client: str) -> Json:
        session = self._session(workspace)
        started = session_start(self.rt, session, client, via="cli")
        return {"text": started.text, "space": session.space}

    # --- tasks and messages ------------------------------------------------------------------------

    def tasks(self, workspace: str | None, *, every: bool) -> Json:
        space = self._session(workspace).space
        return wire.tasks(space, *work.person_tasks(self.rt, space, every=every))

    def task(self, workspace: str | None, task_id: str) -> Json:
        found, events = work.task(self.rt, self._session(workspace).readable, task_id)
        return wire.task(found, events)

    def file_task(self, workspace: str | None, title: str, body: str, **fields: Any) -> Json:
        return wire.task(work.file_task(self.rt, self._session(workspace), title, body, **fields))

    def update_task(self, workspace: str | None, task_id: str, status: str, note: str | None) -> Json:
        before, found = work.update_task(self.rt, self._session(workspace), task_id, status, note)
        return wire.updated(before, found)

    def messages(self, workspace: str | None) -> Json:
        space = self._session(workspace).space
        return wire.message_list(space, work.recent_messages(self.rt, space))

    def read_messages(self, workspace: str | None) -> Json:
        session = self._session(workspace)
        return wire.inbox(session.space, work.read_messages(self.rt, session, SOURCE))

    def send_message(
        self, workspace: str | None, to: str, body: str, *, on_sent: Callable[[Json], None], **fields: Any
    ) -> Json:
        session = self._session(workspace)
        return anyio.run(self._send, session, to, body, on_sent, fields)

    async def _send(
        self, session: SessionContext, to: str, body: str, on_sent: Callable[[Json], None], fields: Json
    ) -> Json:
        def send() -> Awaitable[work.Sent]:
            return work.send_message(
                self.rt, session, to, body, reader=SOURCE, on_sent=lambda m: on_sent(wire.row(m)), **fields
            )

        if not fields.get("wait_seconds"):
            sent = await send()
        else:
            try:
                async with anyio.create_task_group() as group:
                    self.rt.replies.attach(group)  # the reply comes on one LISTEN connection, as in servers
                    sent = await send()
                    group.cancel_scope.cancel()
            except BaseExceptionGroup as failed:
                raise first_error(failed) from None
        return wire.sent(sent)

    # --- the record, tidying, export ---------------------------------------------------------------

    def log(self, **filters: Any) -> Json:
        spaces = self.rt.config().ids  # a person reads every space of their config
        where = filters.pop("workspace", None)
        where = workspace_path(where, self.rt.env, self.rt.cwd) if where else None  # as the server's
        rows = log.recent(self.rt, spaces, workspace=where, **filters)
        return wire.records(spaces, rows, handoffs.public_ids(self.rt, spaces, [r.handoff for r in rows]))

    def log_record(self, record_id: str) -> Json:
        spaces = self.rt.config().ids
        found = log.get(self.rt, spaces, record_id)
        return {"record": wire.injection(found, handoffs.public_ids(self.rt, spaces, [found.handoff]))}

    def tidy(self, workspace: str | None) -> Json:
        session = self._session(workspace)
        return wire.tidy_report(tidy.report(self.rt, session.space, here=str(session.root), check_paths=True))

    def tidy_act(self, workspace: str | None, act: str, payload: Json) -> Json:
        items = payload.get("others" if act == "merge" else "ids") or ()
        done = tidy.act(self.rt, self._session(workspace), act, items=items, **tidy.fields(payload))
        assert done is not None, act  # the parser offers only tidy.ACTS
        return wire.tidied_act(done)

    def export(self, space: str | None) -> Iterator[str]:
        self.rt.config_optional = True  # moving a whole database needs no usable config file
        return data.export(self.rt, space)
