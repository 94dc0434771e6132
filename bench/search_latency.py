"""search_notes latency at scale (docs/design.md, Budgets: 100,000 notes, p50 <= 30 ms, p95 <= 80 ms, query
embedding included), and write throughput.

1. A fresh embedded PostgreSQL (a temporary LORE_DATA_DIR, lore's own settings) and one space.
2. Notes: synthetic engineering notes of realistic length (bench/corpus.py, 100-2,000 characters),
   with vectors of the default embedder computed once and cached (bench/vector_cache.py: the same
   model and text as the worker). All but the last `--mcp-writes + --core-writes` notes are COPYed
   in bulk with their vectors, and the search indexes (GIN, the model's HNSW) are built after the
   load, as a bulk import would. Their creation times are reported.
3. Writes at scale (into the loaded space, all indexes live): `--mcp-writes` notes through
   `remember_note` in a real stdio MCP session, one call at a time, then `--core-writes` through
   `lore.notes.remember` in one connection; then their cached vectors are stored the way the
   worker stores them (one UPDATE per row, HNSW insert included). Embedding throughput of the model
   itself (the worker's path, one thread) is measured on a sample.
4. Queries: `--queries` distinct queries through `search_notes` in one real stdio MCP session
   (`lore mcp`, default embedder: each call embeds its query), after `--warmup` untimed ones;
   wall-clock per call on the client side. Then, in-process, where a call's time goes.

`--keep DIR` keeps the prepared database, `--reuse DIR` measures it again without preparing.
Rerun: .venv/bin/python bench/search_latency.py [--notes 100000] [--write]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import corpus
import vector_cache
from report import machine, replace_section
from scratch import root_base

from lore.core.session import Origin
from lore.db import embedded, migrate

REPO = Path(__file__).resolve().parent.parent
SECTION = "## search_notes latency at 100,000 notes"
SPACE = "bench"
# Indexes on notes that a bulk load builds afterwards (the unique one stays: it guards the data).
REBUILT = ("notes_tsv", "notes_current_by_space", "notes_unembedded")
P = ParamSpec("P")
T = TypeVar("T")


def _copy(conn: psycopg.Connection, rows: list[tuple[Any, ...]]) -> None:
    from pgvector.psycopg import register_vector

    register_vector(conn)
    columns = "lineage, space, kind, title, body, tags, embedding, embedding_model, source, workspace"
    types = ["int8", "text", "text", "text", "text", "text[]", "vector", "text", "text", "text"]
    with conn.cursor() as cur, cur.copy(f"COPY notes ({columns}) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(types)
        for row in rows:
            copy.write_row(row)
    conn.commit()


# The keyword side's term counts of the bulk-loaded notes (migration 0022's backfill, per space)
_COUNT_ALL = """
INSERT INTO note_term_spaces (space, notes)
    SELECT space, count(*) FROM notes WHERE superseded_at IS NULL GROUP BY space;
INSERT INTO note_terms (space, lexeme, notes)
    SELECT space, w, count(*) FROM notes, unnest(tsvector_to_array(ts_filter(tsv, '{a,b,c}'))) w
    WHERE superseded_at IS NULL GROUP BY space, w;
"""


def prepare(url: str, workspace: Path, env: dict[str, str], args: argparse.Namespace) -> dict[str, float]:
    from lore.embeddings import to_pgvector
    from lore.store import notes
    from lore.store.vectors import _FILL

    figures: dict[str, float] = {}
    started = time.perf_counter()
    all_notes = vector_cache.notes(args.notes, args.seed)
    vectors, model, rate = vector_cache.vectors(args.notes, args.seed, env, args.procs)
    if rate is not None:
        figures["cache_fill_per_s"] = rate
    print(f"notes and vectors ready in {time.perf_counter() - started:.0f} s", flush=True)
    written = args.mcp_writes + args.core_writes
    bulk = args.notes - written
    origin = Origin(SPACE, "bench", str(workspace))

    # (a) bulk load: COPY, then the indexes
    with psycopg.connect(url, autocommit=True) as conn:
        indexes = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'notes' "
            "AND (indexname = ANY(%s) OR indexdef LIKE '%%USING hnsw%%')",
            (list(REBUILT),),
        ).fetchall()
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')
    rows = [
        (i + 1, SPACE, kind, title, body, tags, vectors[i], model, origin.source, origin.workspace)
        for i, (kind, title, body, tags) in enumerate(all_notes[:bulk])
    ]
    started = time.perf_counter()
    with psycopg.connect(url) as conn:
        # a bulk load counts the words once at the end (as it builds the indexes), not row by row
        conn.execute("ALTER TABLE notes DISABLE TRIGGER notes_terms")
        _copy(conn, rows)
        conn.execute("SELECT setval('note_lineage_seq', %s)", (bulk,))
        conn.commit()
    figures["copy_per_s"] = bulk / (time.perf_counter() - started)
    started = time.perf_counter()
    with psycopg.connect(url) as conn:
        conn.execute(_COUNT_ALL)
        conn.execute("ALTER TABLE notes ENABLE TRIGGER notes_terms")
        conn.commit()
    figures["terms_s"] = time.perf_counter() - started
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        for name, definition in indexes:
            started = time.perf_counter()
            conn.execute(definition)
            key = "hnsw_s" if "hnsw" in definition else "gin_s" if name == "notes_tsv" else "other_index_s"
            figures[key] = figures.get(key, 0.0) + time.perf_counter() - started
        conn.execute("VACUUM ANALYZE notes")
    print(f"bulk load: {figures}", flush=True)

    # (b) writes at scale through MCP (the whole path) and the core function
    async def mcp_writes(batch: list[corpus.Note]) -> float:
        from support.mcpclient import lore_session, ok

        async with lore_session({**env, "LORE_EMBEDDER": "none"}, cwd=workspace, client="bench") as s:
            await ok(s, "search_notes", query="warm up")
            started = time.perf_counter()
            for kind, title, body, tags in batch:
                await ok(s, "remember_note", body=body, kind=kind, title=title, tags=tags)
            return time.perf_counter() - started

    took = asyncio.run(mcp_writes(all_notes[bulk : bulk + args.mcp_writes]))
    figures["mcp_writes_per_s"] = args.mcp_writes / took
    started = time.perf_counter()
    with psycopg.connect(url) as conn:
        for kind, title, body, tags in all_notes[bulk + args.mcp_writes :]:
            notes.remember(conn, origin, body, kind=kind, title=title, tags=tags)
    figures["core_writes_per_s"] = args.core_writes / (time.perf_counter() - started)
    # (c) their vectors, stored like the worker stores them (lineage k is note k-1 of the corpus)
    with psycopg.connect(url) as conn:
        pending = conn.execute(
            "SELECT version_id, lineage FROM notes WHERE embedding IS NULL ORDER BY lineage"
        ).fetchall()
        conn.commit()
        assert len(pending) == written, (len(pending), written)
        started = time.perf_counter()
        for i in range(0, len(pending), 32):
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(
                    _FILL.format(guard="embedding IS NULL"),
                    [(to_pgvector(vectors[lineage - 1]), model, vid) for vid, lineage in pending[i : i + 32]],
                )
        figures["vector_store_per_s"] = written / (time.perf_counter() - started)
    figures["embed_per_s"] = embed_rate(env, all_notes[: args.embed_sample])
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE notes")
    return figures


def embed_rate(env: dict[str, str], sample: list[corpus.Note]) -> float:
    """The worker's embedding path (lore.store.vectors.note_text, batches of 32), one thread."""
    from lore.embeddings.runner import Runner
    from lore.store.vectors import BATCH

    runner = Runner({**env, "LORE_EMBED_THREADS": "1"})
    texts = vector_cache.texts_of(sample)
    runner.batch(texts[:4], timeout=600)  # loads the model
    started = time.perf_counter()
    for i in range(0, len(texts), BATCH):
        runner.batch(texts[i : i + BATCH], timeout=600)
    took = time.perf_counter() - started
    runner.close()
    return len(texts) / took


def _queries(args: argparse.Namespace) -> list[str]:
    rng = random.Random(args.seed + 1)
    return list(dict.fromkeys(corpus.query(rng) for _ in range(args.queries * 3 + args.warmup * 3)))


async def measure(env: dict[str, str], workspace: Path, args: argparse.Namespace) -> dict[str, Any]:
    from support.mcpclient import lore_session, ok

    queries = _queries(args)
    warm, timed = queries[: args.warmup], queries[args.warmup : args.warmup + args.queries]
    times, sizes, why = [], [], {"keyword": 0, "semantic": 0, "linked": 0}
    load = os.getloadavg()[0]
    async with lore_session(env, cwd=workspace, client="bench") as s:
        for q in warm:
            await ok(s, "search_notes", query=q)
        for q in timed:
            started = time.perf_counter()
            result = await ok(s, "search_notes", query=q, limit=5)
            times.append((time.perf_counter() - started) * 1000)
            hits = result.structured_content["results"]
            sizes.append(len(hits))
            for h in hits:
                why[h["why"]] += 1
    times.sort()
    return {
        "p50": statistics.median(times),
        "p95": times[int(0.95 * (len(times) - 1))],
        "p99": times[int(0.99 * (len(times) - 1))],
        "max": times[-1],
        "queries": len(times),
        "hits_mean": statistics.mean(sizes),
        "why": why,
        "load": load,
    }


def breakdown(url: str, env: dict[str, str], args: argparse.Namespace) -> dict[str, float]:
    """p50 of each step of one search, in-process (the same functions the tool calls)."""
    from lore.embeddings.runner import Runner
    from lore.store import search

    runner = Runner(env)
    queries = _queries(args)[args.warmup : args.warmup + min(args.queries, 100)]
    runner.query("warm up")
    steps: dict[str, list[float]] = {}

    def timed(name: str, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        started = time.perf_counter()
        out = fn(*args, **kwargs)
        steps.setdefault(name, []).append((time.perf_counter() - started) * 1000)
        return out

    floor = runner.min_similarity()
    model = runner.model
    assert model is not None, "the breakdown times the vector half: it needs an embedder"
    from lore.embeddings import e5

    second = Runner(env, choose=lambda e, _s: e5.E5Small(e)) if e5.available() else None
    if second is not None:
        second.query("warm up")
    with psycopg.connect(url) as conn:
        for q in queries:
            vector = timed("query embedding", runner.query, q)
            assert vector is not None
            if second is not None:
                timed("the second model's query embedding (e5, with the extra only)", second.query, q)
            forms = timed("parse", search.parse, conn, q)[0]
            assert forms is not None
            timed("term counts (the words' idf)", search.weights, conn, [SPACE], forms)
            timed("keyword candidates", search.keyword_candidates, conn, [SPACE], forms, model=model)
            timed(
                "keyword candidates as before round 3 (ts_rank, any-word pool)", _before, conn, forms, model
            )
            timed("vector candidates", search.vector_candidates, conn, [SPACE], vector, model=model)
            conn.commit()
            unbounded = "keyword, every match ranked (pool unbounded)"
            if len(steps.get(unbounded, [])) < 30:  # slow: a sample is enough
                timed(unbounded, search.keyword_candidates, conn, [SPACE], forms, model=model, pool=10**9)
            timed(
                "whole lore.search.search",
                search.search,
                conn,
                [SPACE],
                q,
                session_space=SPACE,
                vector=vector,
                model=model,
                min_similarity=floor,
            )
            conn.commit()
    runner.close()
    if second is not None:
        second.close()
    return {name: statistics.median(values) for name, values in steps.items()}


# The keyword half as it was before retrieval round 3 (lore.store.search at bb92e25): ts_rank over a
# pool of every-word then any-word matches, no idf. Timed beside today's on the same queries.
_BEFORE = """
WITH pool AS (
  (SELECT n.lineage, n.tsv, n.embedding_model FROM notes n
   WHERE n.tsv @@ {every}::tsquery AND n.space = ANY(%(spaces)s) AND n.superseded_at IS NULL LIMIT 600)
  UNION ALL
  (SELECT n.lineage, n.tsv, n.embedding_model FROM notes n
   WHERE n.tsv @@ {any}::tsquery AND n.space = ANY(%(spaces)s) AND n.superseded_at IS NULL LIMIT 600)
  LIMIT 600
)
SELECT lineage, ts_rank(tsv, {rank}::tsquery) AS score, coalesce(embedding_model = {model}, false)
FROM (SELECT DISTINCT ON (lineage) * FROM pool) p
ORDER BY score DESC, lineage DESC LIMIT 50
"""


def _before(conn: psycopg.Connection, forms: Any, model: str) -> list[Any]:
    from psycopg import sql

    def literal(text: str) -> sql.Literal:
        return sql.Literal(text.replace("%", "%%"))

    statement = sql.SQL(_BEFORE).format(
        every=literal(forms.every), any=literal(forms.any), rank=literal(forms.rank), model=sql.Literal(model)
    )
    return conn.execute(statement, {"spaces": [SPACE]}).fetchall()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--notes", type=int, default=100_000)
    p.add_argument("--mcp-writes", type=int, default=1_000)
    p.add_argument("--core-writes", type=int, default=2_000)
    p.add_argument("--embed-sample", type=int, default=320, help="notes embedded to time the model")
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--procs", type=int, default=2, help="embedding processes when the cache is filled")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--keep", metavar="DIR", help="keep the prepared data dir here")
    p.add_argument("--reuse", metavar="DIR", help="reuse a data dir kept by --keep (skips preparing)")
    p.add_argument("--write", action="store_true", help="replace this section of docs/benchmarks.md")
    args = p.parse_args()

    root = Path(args.reuse or args.keep or tempfile.mkdtemp(prefix="lore-bench-latency-", dir="/tmp"))
    root.mkdir(parents=True, exist_ok=True)
    workspace = root / "workspace"
    workspace.mkdir(exist_ok=True)
    config = root / "config.toml"
    config.write_text(f'[[space]]\nid = "{SPACE}"\npaths = ["{workspace}"]\n')
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "LORE_DATA_DIR": str(root / "data"),
        "LORE_ROOT_BASE": root_base(),  # as root: see scratch.py
        "LORE_CONFIG": str(config),
    }
    for name in ("LORE_EMBEDDER", "LORE_BENCH_CACHE"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    # lore's default: the first model alone (the extra `shared-lore[e5]` adds a second one, whose
    # 100,000 vectors this benchmark does not make: its query's cost is timed in the breakdown)
    env["LORE_SECOND_EMBEDDER"] = os.environ.get("LORE_SECOND_EMBEDDER", "none")
    url = embedded.start(env)
    try:
        with psycopg.connect(url) as conn:
            migrate.upgrade(conn)
            row = conn.execute("SELECT count(*) FROM notes").fetchone()
        figures: dict[str, float] = {}
        if not row or row[0] == 0:
            figures = prepare(url, workspace, env, args)
            print(f"prepared: {figures}", flush=True)
        elif not args.reuse:
            raise SystemExit(f"{root} already holds notes: pass --reuse {root} to measure them again")
        with psycopg.connect(url) as conn:
            stats = conn.execute(
                "SELECT count(*), count(embedding), max(embedding_model), avg(length(body)),"
                " percentile_cont(0.5) WITHIN GROUP (ORDER BY length(body)) FROM notes"
            ).fetchone()
        assert stats is not None
        result = asyncio.run(measure(env, workspace, args))
        print(result, flush=True)
        steps = breakdown(url, env, args)
        print(steps, flush=True)
        report(args, figures, stats, result, steps)
    finally:
        embedded.stop(env)
        if not args.keep and not args.reuse:
            shutil.rmtree(root, ignore_errors=True)
    return 0


def report(
    args: argparse.Namespace,
    figures: dict[str, float],
    stats: tuple[Any, ...],
    result: dict[str, Any],
    steps: dict[str, float],
) -> None:
    total, with_vectors, model, mean_chars, median_chars = stats
    p50, p95 = result["p50"], result["p95"]
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    lines = [
        SECTION,
        "",
        "What an agent waits for on `search_notes` when one space holds 100,000 notes: a real MCP client",
        "session (the SDK's, lore's server in-process) with the default embedder (the second model off),",
        "each call embedding its query, then keyword (GIN, BM25-style) and vector (HNSW) candidates,",
        "fusion, the date bonus, threshold, feedback and 1-hop expansion.",
        f"Notes: synthetic engineering notes (`bench/corpus.py`), {median_chars:.0f} characters median,",
        f"{mean_chars:.0f} mean (100-2,000), title and two tags each. Its vocabulary is small (a few hundred",
        "words: a query word typically occurs in 15-70 % of the notes), the worst case for the keyword side.",
        "",
        f"- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {machine()}; load average when the queries started: {result['load']:.1f}",
        f"- lore commit: {commit} (with uncommitted changes)" if commit else "- lore commit: unknown",
        f"- Notes: {total:,} in one space, {with_vectors:,} with vectors ({model}); embedded PostgreSQL",
        "  with lore's own settings (shared_buffers 128 MB)",
        f"- Queries: {result['queries']} distinct (`corpus.query`), after {args.warmup} untimed; "
        f"{result['hits_mean']:.1f} results per query on average (limit 5, threshold applied);",
        f"  why: {result['why']}",
        f"- Command: `.venv/bin/python bench/search_latency.py --notes {args.notes} --write`",
        "",
        "| search_notes through MCP (client wall clock) | p50 ms | p95 ms | p99 ms | max ms |",
        "|---|---:|---:|---:|---:|",
        f"| {total:,} notes | {p50:.1f} | {p95:.1f} | {result['p99']:.1f} | {result['max']:.1f} |",
        "",
        "Where the time goes (in-process, p50 of each step over the same queries; the unbounded keyword",
        "row over 30 of them, for comparison). `search_notes` runs the keyword half in PostgreSQL while",
        "it embeds the query, and the vector half on a second connection as soon as the vector is there,",
        "so a call costs less than the sum; the MCP round trip, JSON and validation make the rest:",
        "",
        "| step | p50 ms |",
        "|---|---:|",
        *(f"| {name} | {ms:.1f} |" for name, ms in steps.items()),
        "",
    ]
    if figures:
        lines += [
            "| writes and embedding | per second |",
            "|---|---:|",
            f"| `remember_note` through MCP, one call at a time, into the loaded space "
            f"({args.mcp_writes:,}) | {figures['mcp_writes_per_s']:,.0f} |",
            f"| `lore.notes.remember` in one connection ({args.core_writes:,}) | "
            f"{figures['core_writes_per_s']:,.0f} |",
            f"| storing their vectors like the worker (UPDATE, HNSW insert) | "
            f"{figures['vector_store_per_s']:,.0f} |",
            f"| embedding with {model}, the worker's path, 1 thread ({args.embed_sample} notes) | "
            f"{figures['embed_per_s']:,.1f} |",
            f"| bulk load: COPY with vectors, indexes dropped "
            f"({args.notes - args.mcp_writes - args.core_writes:,}) | {figures['copy_per_s']:,.0f} |",
            "",
            f"Index builds after the bulk load: GIN (full text) {figures.get('gin_s', 0):.0f} s, "
            f"HNSW ({model}) {figures.get('hnsw_s', 0):.0f} s; the keyword side's term counts "
            f"{figures.get('terms_s', 0):.0f} s.",
        ]
        if "cache_fill_per_s" in figures:
            lines.append(
                f"Vectors were computed for this run at {figures['cache_fill_per_s']:.0f} notes/s "
                f"({args.procs} processes); later runs read them from the cache."
            )
        else:
            lines.append(
                "Vectors came from the cache of `bench/vector_cache.py` (same model and text as the worker;"
            )
            lines.append("filling it for 100,000 notes took 72 minutes here, 23 notes/s with 2 processes).")
        lines.append("")
    lines += [
        "What changed after the first measurement (p50 34.1 ms at 3,000 notes, growing with the space):",
        "",
        "- Keyword candidates are bounded: at most 600 rows per search (every-word matches first, then",
        "  any-word ones) are ranked by ts_rank. Ranking every row that holds any query word took 220 to",
        "  1,250 ms per query at 100,000 notes (the unbounded row above). LoCoMo R@5 is unchanged (a pool",
        "  of 400 would lose 0.03 on turns; see the LoCoMo section and docs/decisions.md).",
        "- `search_notes` runs the keyword half while the query is embedded: at 10,000 notes p50 19.1 ->",
        "  16.1 ms, p95 25.2 -> 19.6 ms. At 100,000 notes that alone gave p50 30.1 ms, p95 37.4 ms; running",
        "  the vector half concurrently with the keyword half too (a second pooled connection) gave the",
        "  numbers above. The vector half is slower at this size mostly because the HNSW index (195 MB),",
        "  the heap and the TOASTed vectors do not fit lore's 128 MB of shared buffers: with 512 MB the",
        "  vector query took 4.3 instead of 7.0 ms p50 (measured, not adopted: lore's setting is kept).",
        "- Retrieval round 3: the keyword half ranks each word's ts_rank times its idf (one more query:",
        "  the term counts) and fills its pool rarest word first; the breakdown above times it beside the",
        "  keyword half as it was before (ts_rank, every-word then any-word pool) on the same queries.",
        "  The notes here were written by no agent session, so they have no context: the context changes",
        "  what a note's text holds, not what a search does.",
        "- The vector side walks the model's partial HNSW index (`hnsw.ef_search` 100, iterative scans",
        "  so that space/kind/tag filters still yield 50 rows): top-50 recall against an exact scan 0.98",
        "  at 10,000 notes, 0.95 at 100,000.",
        "",
        "| target (docs/design.md, Budgets) | measured | result |",
        "|---|---|---|",
        f"| p50 <= 30 ms | {p50:.1f} ms | **{'PASS' if p50 <= 30 else 'FAIL'}** |",
        f"| p95 <= 80 ms | {p95:.1f} ms | **{'PASS' if p95 <= 80 else 'FAIL'}** |",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        replace_section(REPO / "docs" / "benchmarks.md", SECTION, text)


if __name__ == "__main__":
    sys.exit(main())
