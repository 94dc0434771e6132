"""Every tool declares the shape of its structured result (`outputSchema`) and its hints
(`annotations`), and keeps them: each result of every tool, called through the SDK's client, is
checked against the schema tools/list gave (with jsonschema, independently of the client's own check),
and the hints are checked against what the calls do to the database (a read-only tool writes no
memory; an idempotent one called twice changes nothing the second time)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from jsonschema import Draft202012Validator
from mcp import ClientSession
from mcp_types import CallToolResult
from support.mcpclient import call, lore_session, ok

pytestmark = pytest.mark.anyio

# What each tool says of itself (MCP ToolAnnotations, as sent: only what differs from the protocol's
# defaults, plus `destructiveHint: false` for the tools that only add), and its title. Every tool
# touches lore's memory only: `openWorldHint: false`.
CLOSED = {"openWorldHint": False}
HINTS: dict[str, dict[str, bool]] = {
    # a copy is refused ("Already remembered as ..."): the same call again writes nothing
    "remember_fact": {"destructiveHint": False, "idempotentHint": True, **CLOSED},
    "remember_note": {"destructiveHint": False, "idempotentHint": True, **CLOSED},
    "recall_facts": {"readOnlyHint": True, **CLOSED},
    "search_notes": {"readOnlyHint": True, **CLOSED},
    "revise_fact": {"destructiveHint": False, "idempotentHint": True, **CLOSED},
    "forget": {"destructiveHint": True, "idempotentHint": True, **CLOSED},
    "link_notes": {"destructiveHint": False, "idempotentHint": True, **CLOSED},
    "mark_irrelevant": {"destructiveHint": False, **CLOSED},
    "file_task": {"destructiveHint": False, **CLOSED},
    "update_task": {"destructiveHint": False, **CLOSED},
    "send_message": {"destructiveHint": False, **CLOSED},
    "read_messages": {"destructiveHint": False, **CLOSED},  # not read-only: it marks messages read
}
# The rows a memory write leaves (the usage record, `retrievals`/`injections`, is bookkeeping).
MEMORY = ("facts", "notes", "forget_log", "edges", "irrelevant", "tasks", "task_events", "messages")


@pytest.fixture
def spaces(tmp_path: Path, lore_env: dict[str, str]) -> dict[str, Path]:
    dirs = {name: tmp_path / "code" / name for name in ("alpha", "gamma")}
    for d in dirs.values():
        d.mkdir(parents=True)
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'[[space]]\nid = "alpha"\npaths = ["{dirs["alpha"]}"]\n\n'
        f'[[space]]\nid = "gamma"\npaths = ["{dirs["gamma"]}"]\naccepts_from = ["alpha"]\n'
    )
    return dirs


def _counts(conn: psycopg.Connection) -> dict[str, int]:
    conn.rollback()  # a fresh snapshot
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in MEMORY}  # type: ignore[index]


class Checked:
    """Calls tools and checks each structured result against the schema tools/list declared."""

    def __init__(self, session: ClientSession, schemas: dict[str, dict[str, Any]]) -> None:
        self.session = session
        self.validators = {name: Draft202012Validator(schema) for name, schema in schemas.items()}
        self.seen: dict[str, int] = {}

    async def __call__(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result: CallToolResult = await ok(self.session, tool, **arguments)
        content = result.structured_content
        assert content is not None, f"{tool} returned no structured content"
        errors = [str(e.message) for e in self.validators[tool].iter_errors(content)]
        assert not errors, f"{tool}: {errors} in {json.dumps(content)}"
        self.seen[tool] = self.seen.get(tool, 0) + 1
        return dict(content)


async def _declared(session: ClientSession) -> dict[str, dict[str, Any]]:
    tools = (await session.list_tools()).tools
    assert [t.name for t in tools] == list(HINTS)
    schemas = {}
    for tool in tools:
        assert tool.output_schema is not None, f"{tool.name} declares no outputSchema"
        assert tool.output_schema["type"] == "object"
        Draft202012Validator.check_schema(tool.output_schema)
        assert "$defs" not in json.dumps(tool.output_schema) and '"title": "' not in json.dumps(
            tool.output_schema
        )  # compacted (lore.mcp.schema.compact_output)
        assert tool.title and len(tool.title) <= 20 and tool.title[0].isupper(), tool.name
        assert tool.annotations is not None and tool.annotations.title is None  # one title, the tool's
        # a nullable value is `anyOf [T, null]`, never a list of types (single-type clients refuse it)
        assert '"type": [' not in json.dumps(tool.output_schema), tool.name
        assert tool.annotations.model_dump(by_alias=True, exclude_none=True) == HINTS[tool.name], tool.name
        schemas[tool.name] = tool.output_schema
    message = schemas["read_messages"]["properties"]["messages"]["items"]["properties"]
    assert message["reply_to"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    reply = schemas["send_message"]["properties"]["reply"]["anyOf"]
    assert reply[0]["type"] == "object" and reply[1] == {"type": "null"}
    return schemas


async def test_every_result_matches_the_schema_its_tool_declares(
    spaces: dict[str, Path], lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    async with (
        lore_session(lore_env, cwd=spaces["alpha"], client="agent-alpha") as a,
        lore_session(lore_env, cwd=spaces["gamma"], client="agent-gamma") as g,
    ):
        schemas = await _declared(a)
        run, other = Checked(a, schemas), Checked(g, schemas)

        fact = await run("remember_fact", statement="alpha deploys with make ship", subject="alpha")
        await run("remember_fact", statement="alpha runs PostgreSQL 18", valid_from="2026-01-01")
        deploy = await run(
            "remember_note", body="Deploys: make ship, then watch the dashboard.", title="Deploy"
        )
        await run("remember_note", body="Rollback: make unship.", kind="pattern", tags=["deploy"])
        # idempotent writes: the same fact or note again writes nothing, and says which it is
        before = _counts(conn)
        copy = await run("remember_fact", statement="alpha deploys with make ship", subject="alpha")
        assert copy["duplicate"] and copy["id"] == fact["id"]
        note = await run(
            "remember_note", body="Deploys: make ship, then watch the dashboard.", title="Deploy"
        )
        assert note["duplicate"] and note["id"] == deploy["id"]
        assert _counts(conn) == before
        assert (await run("recall_facts"))["total"] == 2
        await run("recall_facts", subject="alpha", as_of="2030-01-01T00:00:00Z")
        found = await run("search_notes", query="deploys make ship")
        assert found["results"] and found["results"][0]["id"] == deploy["id"]
        assert (await run("search_notes", query="zebra quantum"))["results"] == []
        assert _counts(conn) == before, "a read-only tool wrote memory"

        # idempotent tools: the same call again changes nothing
        rollback = (await run("search_notes", query="rollback unship"))["results"][0]["id"]
        assert (await run("link_notes", **{"from": rollback, "relation": "refines", "to": deploy["id"]}))[
            "created"
        ]
        linked = await run("search_notes", query="rollback unship")
        assert any("via" in r for r in linked["results"])  # a hit brought by the edge
        once = _counts(conn)
        again = await run("link_notes", **{"from": rollback, "relation": "refines", "to": deploy["id"]})
        assert again["created"] is False and _counts(conn) == once
        await run("revise_fact", id=fact["id"], statement="alpha deploys with make release")
        once = _counts(conn)
        assert (
            await call(a, "revise_fact", id=fact["id"], statement="alpha deploys with make release")
        ).is_error
        assert _counts(conn) == once
        await run("forget", id=fact["id"], reason="replaced by CI")
        once = _counts(conn)
        assert (await call(a, "forget", id=fact["id"], reason="replaced by CI")).is_error
        assert _counts(conn) == once

        await run("mark_irrelevant", note_id=rollback, query="deploy dashboard")
        task = await run("file_task", title="Rotate keys", body="before Friday")
        await run("update_task", id=task["id"], status="doing", note="started")
        await run("file_task", title="Review alpha's deploy", body="see n_1", to="gamma")

        await run("send_message", to="gamma", body="Is the deploy green?")  # no wait: no `reply` key
        waited = await run("send_message", to="gamma", body="Anyone?", wait_seconds=0.2)
        assert waited["reply"] is None
        inbox = await other("read_messages")
        assert len(inbox["messages"]) == 2 and inbox["open_tasks"] == 1

        asked: dict[str, Any] = {}

        async def ask() -> None:
            asked["result"] = await run("send_message", to="gamma", body="Which port?", wait_seconds=30)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            for _ in range(200):
                question = (await other("read_messages"))["messages"]
                if question:
                    break
                await anyio.sleep(0.05)
            await other("send_message", to="alpha", body="8765", reply_to=question[0]["id"])
        assert asked["result"]["reply"]["body"] == "8765"
        assert (await run("read_messages"))["tasks"][0]["title"] == "Rotate keys"

    assert set(run.seen) | set(other.seen) == set(HINTS), "a tool was not exercised"
