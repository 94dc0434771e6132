"""Eight agent processes revising one fact at the same moment: exactly one current version after,
and every writer either succeeded or was told of the conflict. Nothing silently lost."""

from __future__ import annotations

import itertools
from pathlib import Path

import anyio
import psycopg
import pytest
from support.mcpclient import call, lore_stdio_session, ok, text

pytestmark = pytest.mark.anyio
WRITERS = 8


async def test_eight_processes_revise_the_same_fact(
    tmp_path: Path, lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    lore_env = {**lore_env, "LORE_EMBEDDER": "fake"}  # the race is the revise, not embedding
    project = tmp_path / "proj"
    project.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "p"\npaths = ["{project}"]\n')
    async with lore_stdio_session(lore_env, cwd=project) as s:
        fid = (await ok(s, "remember_fact", statement="version 0")).structured_content["id"]

    ready = 0
    go = anyio.Event()
    outcomes: dict[int, tuple[bool, str]] = {}

    async def writer(n: int) -> None:
        nonlocal ready
        async with lore_stdio_session(lore_env, cwd=project, client=f"writer-{n}") as w:
            await ok(w, "recall_facts")  # session resolved, pool connected: the race is the revise
            ready += 1
            if ready == WRITERS:
                go.set()
            await go.wait()
            result = await call(w, "revise_fact", id=fid, statement=f"version from writer {n}")
            outcomes[n] = (bool(result.is_error), text(result))

    async with anyio.create_task_group() as tg:
        for n in range(WRITERS):
            tg.start_soon(writer, n)

    assert len(outcomes) == WRITERS
    succeeded = [n for n, (err, _) in outcomes.items() if not err]
    failed = {n: msg for n, (err, msg) in outcomes.items() if err}
    assert succeeded, outcomes
    for msg in failed.values():
        assert "changed by another session at the same moment" in msg
    lineage = int(fid.removeprefix("f_"))
    current = conn.execute(
        "SELECT count(*) FROM facts WHERE lineage = %s AND superseded_at IS NULL", (lineage,)
    ).fetchone()
    assert current == (1,)
    # every success is a version in history: none silently dropped
    statements = {r[0] for r in conn.execute("SELECT statement FROM facts WHERE lineage = %s", (lineage,))}
    assert statements == {"version 0"} | {f"version from writer {n}" for n in succeeded}
    # belief intervals are contiguous: each version starts when the previous one ended
    rows = conn.execute(
        "SELECT recorded_at, superseded_at FROM facts WHERE lineage = %s ORDER BY recorded_at", (lineage,)
    ).fetchall()
    for (_, ended), (started, _) in itertools.pairwise(rows):
        assert ended == started
