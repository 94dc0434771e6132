"""Bad input over a real stdio MCP session: hypothesis over every tool's arguments (odd unicode, huge
strings, wrong types, extra keys such as `space`) and malformed JSON-RPC. Every request gets an answer
(an error that says what is wrong), the server stays up, and nothing is half-written."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.db import empty_schema

from lore.core.validate import NOTE_KINDS
from lore.store.graph import RELATIONS
from reliability.rawmcp import RawSession, tool_failed, tool_text

EXAMPLES = int(os.environ.get("LORE_FUZZ_EXAMPLES", "30"))
TABLES = ("facts", "notes", "tasks", "task_events", "messages", "edges", "irrelevant", "forget_log")


@pytest.fixture(scope="module")
def fuzz_project(
    tmp_path_factory: pytest.TempPathFactory, pg_data_dir: Path, db_url: str
) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("fuzz")
    here, there, home = root / "p", root / "q", root / "home"
    for d in (here, there, home):
        d.mkdir()
    empty_schema(db_url)  # module-scoped: start from no rows, whatever earlier modules left
    config = root / "config.toml"
    config.write_text(
        f'[[space]]\nid = "p"\npaths = ["{here}"]\n\n'
        f'[[space]]\nid = "q"\npaths = ["{there}"]\naccepts_from = ["p"]\n'
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LORE_DATA_DIR": str(pg_data_dir),
        "LORE_CONFIG": str(config),
        "LORE_EMBEDDER": "fake",
    }
    with RawSession(env, here) as session, psycopg.connect(db_url, autocommit=True) as conn:
        session.initialize()
        listed = session.call("tools/list")
        assert listed is not None
        tools = {t["name"]: t["inputSchema"] for t in listed["result"]["tools"]}
        seeded = [session.tool("remember_note", {"body": f"seed note {i}"}) for i in range(2)]
        seeded.append(session.tool("remember_fact", {"statement": "seed fact"}))
        seeded.append(session.tool("file_task", {"title": "seed", "body": "task"}))
        seeded.append(session.tool("send_message", {"to": "q", "body": "seed message"}))
        ids = [a["result"]["structuredContent"]["id"] for a in seeded if a and not tool_failed(a)]
        yield {"session": session, "conn": conn, "tools": tools, "ids": ids}


# --- strategies ---------------------------------------------------------------------------------------

ODD = st.sampled_from(
    [
        "\u202eevil\u202c",
        "e\u0301\u0301\u0301",
        "\U0001f600\U0001f9d1\u200d\U0001f4bb",
        "\ufeffbom",
        "\u0000nul",
        "\ud800",
        "a\udfffb",
        "\u200b\u200b",
        "  ",
        "",
        "\n\t\r",
        "'; DROP TABLE facts; --",
        "%s %(x)s {0}",
        "\\x00\\u0000",
        "ｆｕｌｌ",
        "\U00010000\U0010ffff",
        "ñ" * 3,
        "<script>alert(1)</script>",
        "../../etc/passwd",
    ]
)
TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=30),
    ODD,
    st.tuples(st.sampled_from("aé€\U0001f600"), st.integers(1_000, 300_000)).map(lambda t: t[0] * t[1]),
)
WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def _valid(name: str, ids: list[str]) -> st.SearchStrategy[Any]:
    if name in ("id", "note_id", "from", "reply_to"):
        return st.sampled_from([*ids, "f_999999", "n_999999", "m_999999", "x_1", "f_-1", "n_" + "9" * 30])
    if name == "kind":
        return st.sampled_from([*NOTE_KINDS, "Note", "task "])
    if name == "kinds":
        return st.lists(st.sampled_from([*NOTE_KINDS, "bogus"]), max_size=3)
    if name == "relation":
        return st.sampled_from([*RELATIONS, "likes"])
    if name == "status":
        return st.sampled_from(["inbox", "todo", "doing", "blocked", "done", "DONE", "finished"])
    if name == "to":
        return st.sampled_from(["p", "q", "nowhere", "../p", "alice/p"])
    if name in ("valid_from", "valid_to", "as_of", "valid_at"):
        return st.sampled_from(
            ["2026-01-01", "2026-13-45", "yesterday", "1970-01-01T00:00:00Z", "9999-12-31"]
        )
    if name == "limit":
        return st.integers(min_value=-5, max_value=50)
    if name == "wait_seconds":  # a long valid wait would only slow the test down
        return st.sampled_from([0, 0.1, -1, 61, 1e9])
    if name == "tags":
        return st.lists(TEXT, max_size=20)
    return TEXT


@st.composite
def arguments(draw: st.DrawFn, schema: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        required = name in schema.get("required", [])
        choice = draw(st.sampled_from(["valid", "valid", "odd", "wrong", "missing"]))
        if choice == "missing" and not required:
            continue
        if choice == "wrong":
            args[name] = draw(WRONG)
        elif choice == "odd" and prop.get("type") != "array":
            args[name] = draw(TEXT)
        elif choice != "missing":
            args[name] = draw(_valid(name, ids))
    if draw(st.integers(0, 4)) == 0:
        args[draw(st.sampled_from(["space", "Space", "allow_secret", "__proto__", "x" * 300]))] = draw(
            TEXT | WRONG
        )
    return args


def _counts(conn: psycopg.Connection) -> tuple[int, ...]:
    row = conn.execute("SELECT " + ", ".join(f"(SELECT count(*) FROM {t})" for t in TABLES)).fetchone()
    assert row is not None
    return tuple(row)


def _invariants(conn: psycopg.Connection) -> None:
    broken = conn.execute(
        """SELECT
             (SELECT count(*) FROM (SELECT lineage FROM facts WHERE superseded_at IS NULL
                                    GROUP BY lineage HAVING count(*) > 1) f),
             (SELECT count(*) FROM (SELECT lineage FROM notes WHERE superseded_at IS NULL
                                    GROUP BY lineage HAVING count(*) > 1) n),
             (SELECT count(*) FROM tasks t WHERE NOT EXISTS
                 (SELECT 1 FROM notes n WHERE n.lineage = t.lineage AND n.kind = 'task')),
             (SELECT count(*) FROM tasks t WHERE NOT EXISTS
                 (SELECT 1 FROM task_events e WHERE e.lineage = t.lineage)),
             (SELECT count(*) FROM edges e
                WHERE NOT EXISTS (SELECT 1 FROM notes n WHERE n.lineage = e.from_note)
                   OR NOT EXISTS (SELECT 1 FROM notes n WHERE n.lineage = e.to_note))"""
    ).fetchone()
    assert broken == (0, 0, 0, 0, 0)


# The examples go to the profile's database (tests/conftest.py): a failure found on a laptop is tried
# first on the next run there; CI runs derandomized. @given on the test itself (not an inner function)
# gives each tool its own database key (Hypothesis adds the parametrize id to it).
@pytest.mark.parametrize(
    "tool",
    [
        "remember_fact",
        "remember_note",
        "recall_facts",
        "search_notes",
        "revise_fact",
        "forget",
        "link_notes",
        "mark_irrelevant",
        "file_task",
        "update_task",
        "send_message",
        "read_messages",
    ],
)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_tool_answers_every_argument(
    fuzz_project: dict[str, Any], tool: str, data: st.DataObject
) -> None:
    session: RawSession = fuzz_project["session"]
    conn: psycopg.Connection = fuzz_project["conn"]
    args = data.draw(arguments(fuzz_project["tools"][tool], fuzz_project["ids"]), label="args")
    before = _counts(conn)
    answer = session.tool(tool, args, timeout=60)
    assert answer is not None, f"no answer to {tool} {json.dumps(args)[:200]}"
    assert session.alive()
    if tool_failed(answer):
        said = tool_text(answer) or answer.get("error", {}).get("message", "")
        assert said.strip(), answer
        assert "Traceback" not in said and "psycopg" not in said
        assert len(said) < 3_000, "an error must not echo a huge argument back"
        assert _counts(conn) == before, f"{tool} failed but wrote: {json.dumps(args)[:200]}"
    if "space" in args:  # refused (a protocol error, e.g. bad unicode, may come first)
        assert tool_failed(answer)
        assert "error" in answer or "space" in tool_text(answer)
    _invariants(conn)
    assert session.call("ping") is not None


MALFORMED = [
    b"not json at all\n",
    b"[]\n",
    b"[1, 2, 3]\n",
    b'"a string"\n',
    b"null\n",
    b"{}\n",
    b"{" * 100_000 + b"\n",
    b"\xff\xfe\xfa not utf-8\n",
    b"x" * 3_000_000 + b"\n",
    b'{"jsonrpc": "2.0", "id": 901}\n',
    b'{"jsonrpc": "2.0", "method": "tools/call"}\n',
    b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}\n',
    b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}\n',
    b'{"jsonrpc": "2.0", "id": 902, "method": 7}\n',
    b'{"jsonrpc": "2.0", "method": "notifications/unknown", "params": {"x": 1}}\n',
    b'{"jsonrpc": "2.0", "id": 905, "result": {}}\n',
    b'{"jsonrpc": "2.0", "id": 906, "error": {"code": 1, "message": "x"}}\n',
]
# Requests whose id can still be read: each must get an error naming the problem.
ANSWERED = [
    (b'{"jsonrpc": "1.0", "id": 910, "method": "ping"}\n', -32600, "jsonrpc"),
    (b'{"jsonrpc": "2.0", "id": 911, "method": "tools/call", "params": "str"}\n', -32600, "params"),
    (
        b'{"jsonrpc": "2.0", "id": 912, "method": "tools/call", "params": {"name": "remember_fact", '
        b'"arguments": {"statement": "\\ud800 lone"}}}\n',
        -32700,
        "surrogate",
    ),
    (b'{"jsonrpc": "2.0", "id": 913, "method": "no/such/method"}\n', -32601, ""),
    (
        b'{"jsonrpc": "2.0", "id": 914, "method": "tools/call", "params": {"name": "nope", '
        b'"arguments": {}}}\n',
        None,
        "nope",
    ),
    (
        b'{"jsonrpc": "2.0", "id": 915, "method": "tools/call", "params": {"name": "remember_fact", '
        b'"arguments": [1, 2]}}\n',
        -32602,
        "",
    ),
]


def test_malformed_json_rpc_never_stops_the_server(fuzz_project: dict[str, Any]) -> None:
    session: RawSession = fuzz_project["session"]
    conn: psycopg.Connection = fuzz_project["conn"]
    before = _counts(conn)
    for garbage in MALFORMED:
        session.send_bytes(garbage)
        answer = session.call("ping", timeout=30)
        assert answer is not None and answer.get("result") == {}, garbage[:60]
        assert session.alive()
    for line, code, words in ANSWERED:
        session.send_bytes(line)
        ident = json.loads(line.decode("utf-8", "surrogatepass"))["id"]
        answer = session.response(ident, timeout=30)
        assert answer is not None, f"no answer to {line[:80]!r}"
        if code is None:  # a tool error rather than a protocol error
            assert tool_failed(answer) and words in tool_text(answer)
        else:
            assert answer["error"]["code"] == code, answer
            assert words in answer["error"]["message"], answer
    assert _counts(conn) == before
    ok = session.tool("remember_fact", {"statement": "still serving after the garbage"})
    assert ok is not None and not tool_failed(ok), ok
