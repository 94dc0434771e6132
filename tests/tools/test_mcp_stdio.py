"""The six tools through the SDK's real client against lore's MCP server and the real database: the
server in this process (tests/support/mcpclient.py), and one smoke test of the real `lore mcp`
process over stdio."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support.mcpclient import call, lore_session, lore_stdio_session, ok, text

pytestmark = pytest.mark.anyio


@pytest.fixture
def projects(tmp_path: Path, lore_env: dict[str, str]) -> dict[str, Path]:
    """Three projects in three spaces: alpha, beta, and gamma which reads_from alpha."""
    dirs = {name: tmp_path / "code" / name for name in ("alpha", "beta", "gamma")}
    for d in dirs.values():
        d.mkdir(parents=True)
    Path(lore_env["LORE_CONFIG"]).write_text(
        f"""
[[space]]
id = "alpha"
paths = ["{dirs["alpha"]}"]

[[space]]
id = "beta"
paths = ["{dirs["beta"]}"]

[[space]]
id = "gamma"
paths = ["{dirs["gamma"]}"]
reads_from = ["alpha"]
"""
    )
    return dirs


async def test_spaces_are_isolated_and_reads_from_is_read_only(
    projects: dict[str, Path], lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    async with lore_session(lore_env, cwd=projects["alpha"], client="agent-a") as a:
        await ok(a, "remember_fact", statement="alpha deploys with make ship")
        alpha_id = (await ok(a, "remember_fact", statement="alpha uses PostgreSQL 18")).structured_content
        assert alpha_id is not None
    async with lore_session(lore_env, cwd=projects["beta"], client="agent-b") as b:
        recalled = text(await ok(b, "recall_facts"))
        assert "alpha deploys" not in recalled and "No facts" in recalled
        # an id from another space behaves exactly as a missing one
        missing = await call(b, "revise_fact", id=alpha_id["id"], statement="hijacked")
        assert missing.is_error and "No fact" in text(missing)
        gone = await call(b, "forget", id=alpha_id["id"], reason="x")
        assert gone.is_error and "No fact" in text(gone)
    async with lore_session(lore_env, cwd=projects["gamma"], client="agent-c") as c:
        recalled = text(await ok(c, "recall_facts"))
        assert "alpha deploys with make ship" in recalled
        written = (await ok(c, "remember_fact", statement="gamma builds with bazel")).structured_content
        assert written == {"id": written["id"], "space": "gamma"}
        refused = await call(c, "revise_fact", id=alpha_id["id"], statement="changed from gamma")
        assert refused.is_error and "may read but not change" in text(refused)
    spaces: dict[str, str] = dict(conn.execute("SELECT statement, space FROM facts").fetchall())
    assert spaces == {
        "alpha deploys with make ship": "alpha",
        "alpha uses PostgreSQL 18": "alpha",
        "gamma builds with bazel": "gamma",
    }
    async with lore_session(lore_env, cwd=projects["alpha"]) as a:
        assert "gamma builds" not in text(await ok(a, "recall_facts"))  # reads_from is one-way


async def test_source_is_the_client_name_and_workspace_recorded(
    projects: dict[str, Path], lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    sub = projects["alpha"] / "src"
    sub.mkdir()
    async with lore_session(lore_env, cwd=sub, client="claude-code") as s:
        await ok(s, "remember_fact", statement="from a subfolder")
    row = conn.execute("SELECT space, source, workspace FROM facts").fetchone()
    assert row == ("alpha", "claude-code", str(sub))


async def test_the_real_lore_mcp_process_over_stdio(
    projects: dict[str, Path], lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    """What an agent starts: `lore mcp` as a process, its stdio framed by the SDK's client; the six
    tools listed, a write into the space of the process's working directory, read back."""
    async with lore_stdio_session(lore_env, cwd=projects["beta"], client="smoke") as s:
        listed = [t.name for t in (await s.list_tools()).tools]
        assert listed[:6] == [
            "remember_fact",
            "remember_note",
            "recall_facts",
            "search_notes",
            "revise_fact",
            "forget",
        ]
        stored = await ok(s, "remember_fact", statement="over real stdio")
        assert stored.structured_content == {"id": "f_1", "space": "beta"}
        assert "over real stdio" in text(await ok(s, "recall_facts"))
    assert conn.execute("SELECT space, source, statement FROM facts").fetchall() == [
        ("beta", "smoke", "over real stdio")
    ]


async def test_workspace_argument_and_roots_beat_cwd(
    projects: dict[str, Path], lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    # Cursor starts stdio servers in / : --workspace carries the project.
    async with lore_session(lore_env, cwd="/", workspace=projects["beta"]) as s:
        assert (await ok(s, "remember_fact", statement="via --workspace")).structured_content[
            "space"
        ] == "beta"
    # A client that answers roots/list: the first root is the workspace.
    async with lore_session(lore_env, cwd=lore_env["HOME"], roots=[projects["gamma"]]) as s:
        assert (await ok(s, "remember_fact", statement="via roots")).structured_content["space"] == "gamma"
    # Client environment wins over roots and cwd.
    env = {**lore_env, "CLAUDE_PROJECT_DIR": str(projects["alpha"])}
    async with lore_session(env, cwd="/", roots=[projects["gamma"]]) as s:
        assert (await ok(s, "remember_fact", statement="via env")).structured_content["space"] == "alpha"


async def test_space_argument_is_refused_and_nothing_written(
    projects: dict[str, Path], lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    async with lore_session(lore_env, cwd=projects["alpha"]) as s:
        for tool, args in [
            ("remember_fact", {"statement": "sneaky"}),
            ("remember_note", {"body": "sneaky"}),
            ("recall_facts", {}),
            ("search_notes", {"query": "x"}),
        ]:
            result = await call(s, tool, **args, space="beta")
            assert result.is_error, tool
            assert "tools take no `space`" in text(result)
        unknown = await call(s, "remember_fact", statement="x", colour="red")
        assert unknown.is_error and "colour" in text(unknown)
    assert conn.execute("SELECT count(*) FROM facts").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM notes").fetchone() == (0,)


async def test_revise_keeps_history_and_time_travel(
    projects: dict[str, Path], lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    async with lore_session(lore_env, cwd=projects["alpha"]) as s:
        first = (
            await ok(s, "remember_fact", statement="deploys with make ship", valid_from="2026-01-01")
        ).structured_content
        fid = first["id"]
        before_revision = datetime.now(UTC).isoformat()
        await ok(s, "revise_fact", id=fid, statement="deploys with make release", valid_from="2026-06-01")
        now_text = text(await ok(s, "recall_facts"))
        assert "make release" in now_text and "make ship" not in now_text
        believed = text(await ok(s, "recall_facts", as_of=before_revision))
        assert "make ship" in believed and "make release" not in believed
        # valid_at under current belief: before 2026-06-01 the current version was not yet true
        early = text(await ok(s, "recall_facts", valid_at="2026-03-01"))
        assert "make release" not in early and "make ship" not in early
        late = text(await ok(s, "recall_facts", valid_at="2026-07-01"))
        assert "make release" in late
        # both axes: what lore believed before the revision about March
        both = text(await ok(s, "recall_facts", as_of=before_revision, valid_at="2026-03-01"))
        assert "make ship" in both
    versions = conn.execute(
        "SELECT statement, superseded_at IS NULL FROM facts WHERE lineage = %s ORDER BY version_id",
        (int(fid.removeprefix("f_")),),
    ).fetchall()
    assert versions == [("deploys with make ship", False), ("deploys with make release", True)]


async def test_forget_hides_and_keeps_audit(
    projects: dict[str, Path], lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    async with lore_session(lore_env, cwd=projects["alpha"], client="agent-x") as s:
        fid = (await ok(s, "remember_fact", statement="temporary fact")).structured_content["id"]
        nid = (await ok(s, "remember_note", body="a note about caching", kind="decision")).structured_content[
            "id"
        ]
        before = datetime.now(UTC).isoformat()
        await ok(s, "forget", id=fid, reason="no longer true")
        await ok(s, "forget", id=nid, reason="obsolete")
        assert "temporary fact" not in text(await ok(s, "recall_facts"))
        assert "No notes match" in text(await ok(s, "search_notes", query="caching"))
        assert "temporary fact" in text(await ok(s, "recall_facts", as_of=before))
        again = await call(s, "forget", id=fid, reason="again")
        assert again.is_error and "forgotten" in text(again)
    audit = conn.execute("SELECT item_kind, reason, source, space FROM forget_log ORDER BY id").fetchall()
    assert audit == [("fact", "no longer true", "agent-x", "alpha"), ("note", "obsolete", "agent-x", "alpha")]
    # the rows stay, their belief closed (superseded_at set), for the fact and for the note alike
    assert conn.execute("SELECT count(*), count(superseded_at) FROM facts").fetchone() == (1, 1)
    assert conn.execute("SELECT count(*), count(superseded_at) FROM notes").fetchone() == (1, 1)
    closed = conn.execute(
        "SELECT body, superseded_at >= recorded_at FROM notes WHERE lineage = %s",
        (int(nid.removeprefix("n_")),),
    ).fetchall()
    assert closed == [("a note about caching", True)]
    logged = conn.execute("SELECT item_kind, lineage FROM forget_log ORDER BY id").fetchall()
    assert logged == [("fact", int(fid.removeprefix("f_"))), ("note", int(nid.removeprefix("n_")))]


async def test_notes_search_filters_and_compact_results(
    projects: dict[str, Path], lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    # Words only: the relevance threshold over keyword ranks, whatever the embedding worker has done
    # by the time of the search. Once n_2 is embedded, its cosine with "deploy retries" (0.38) is over
    # MiniLM's floor of 0.3 and it is a fair semantic hit: when the worker got to it before the
    # search, this test failed (once in CI, 2026-12-05).
    lore_env = {**lore_env, "LORE_EMBEDDER": "none"}
    async with lore_session(lore_env, cwd=projects["alpha"]) as s:
        await ok(
            s,
            "remember_note",
            body="Retry failed deploys with exponential backoff",
            kind="pattern",
            title="Deploy retries",
            tags=["deploy", "ci"],
        )
        await ok(s, "remember_note", body="The deploy pipeline runs on self-hosted runners", kind="devenv")
        hits = await ok(s, "search_notes", query="deploy retries")
        lines = text(hits).splitlines()
        assert lines[0].startswith("n_1 [pattern] Deploy retries")
        # n_2 shares one word, in its body only: under the relevance threshold (lore.search)
        assert len(lines) == 1
        assert "n_2 [devenv]" in text(await ok(s, "search_notes", query="deploy pipeline"))
        only = await ok(s, "search_notes", query="deploy", kinds=["devenv"])
        assert [r["id"] for r in only.structured_content["results"]] == ["n_2"]
        tagged = await ok(s, "search_notes", query="deploy", tags=["ci"])
        assert [r["id"] for r in tagged.structured_content["results"]] == ["n_1"]
    async with lore_session(lore_env, cwd=projects["beta"]) as b:
        assert "No notes match" in text(await ok(b, "search_notes", query="deploy"))


@pytest.mark.parametrize(
    ("tool", "args", "expect"),
    [
        ("remember_fact", {"statement": "x" * 1001}, "limit is 1,000"),
        ("remember_fact", {"statement": "bad\x00byte"}, "NUL"),
        ("remember_fact", {"statement": "   "}, "empty"),
        ("remember_fact", {"statement": 42}, "valid string"),
        ("remember_fact", {"statement": "ok", "valid_from": "yesterday"}, "ISO 8601"),
        (
            "remember_fact",
            {"statement": "ok", "valid_from": "2026-02-01", "valid_to": "2026-01-01"},
            "not after",
        ),
        ("remember_note", {"body": "y" * (32 * 1024 + 1)}, "32 KiB"),
        ("remember_note", {"body": "ok", "kind": "diary"}, "Unknown note kind"),
        ("remember_note", {"body": "ok", "tags": [f"t{i}" for i in range(17)]}, "limit is 16"),
        ("remember_note", {"body": "ok", "tags": ["x" * 65]}, "limit is 64"),
        ("remember_note", {"body": "ok", "tags": "notalist"}, "valid list"),
        ("revise_fact", {"id": "f_999", "statement": "x"}, "No fact f_999"),
        ("revise_fact", {"id": "n_1", "statement": "x"}, "not a fact id"),
        ("revise_fact", {"id": "12; DROP TABLE facts", "statement": "x"}, "not a lore id"),
        ("forget", {"id": "f_1"}, "reason"),
        ("recall_facts", {"as_of": "2026-13-45"}, "ISO 8601"),
        ("search_notes", {"query": "x", "limit": 500}, "between 1 and 20"),
    ],
)
async def test_bad_input_gets_a_clear_error_and_writes_nothing(
    projects: dict[str, Path],
    lore_env: dict[str, str],
    conn: psycopg.Connection,
    tool: str,
    args: dict[str, Any],
    expect: str,
) -> None:
    async with lore_session(lore_env, cwd=projects["alpha"]) as s:
        result = await call(s, tool, **args)
        assert result.is_error
        assert expect in text(result)
    counts = conn.execute(
        "SELECT (SELECT count(*) FROM facts), (SELECT count(*) FROM notes), (SELECT count(*) FROM forget_log)"
    ).fetchone()
    assert counts == (0, 0, 0)


async def test_tools_list_is_small_and_exact(projects: dict[str, Path], lore_env: dict[str, str]) -> None:
    async with lore_session(lore_env, cwd=projects["alpha"]) as s:
        tools = (await s.list_tools()).tools
    names = [t.name for t in tools]
    assert names[:6] == [
        "remember_fact",
        "remember_note",
        "recall_facts",
        "search_notes",
        "revise_fact",
        "forget",
    ]
    listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    # What the agents here pass to their model: name, description and input schema (Claude Code and
    # Gemini CLI were seen to send neither outputSchema nor annotations: tests/e2e/test_claude_code.py,
    # tests/agents/test_gemini_extension.py). 3,961 characters when outputSchema came (item 8), 3,995 now.
    model_sees = [{k: t[k] for k in ("name", "description", "inputSchema")} for t in listed]
    assert len(json.dumps(model_sees)) <= 6000
    # The whole answer, with each tool's title, outputSchema and annotations (compacted): 7,944 before
    # titles, `openWorldHint: false`, remember_*'s `idempotentHint` and `anyOf` for nullable values
    # (+293, +288, +48, +84 characters), and remember_fact's result declaring `likely` and `replaces`
    # (issue 40): 8,775. No model reads the outputSchema (above): this bound is the client's parsing.
    assert len(json.dumps(listed)) <= 9000
    for tool in tools:
        assert "space" not in tool.input_schema.get("properties", {})
        assert tool.description and len(tool.description) <= 200


async def test_ambiguous_config_is_an_error_not_a_guess(tmp_path: Path, lore_env: dict[str, str]) -> None:
    project = tmp_path / "shared"
    project.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'[[space]]\nid = "one"\npaths = ["{project}"]\n\n[[space]]\nid = "two"\npaths = ["{project}"]\n'
    )
    async with lore_session(lore_env, cwd=project) as s:
        result = await call(s, "remember_fact", statement="where do I go?")
        message = text(result)
        assert result.is_error
        assert "one" in message and "two" in message and str(project) in message
