"""`lore search QUERY [--explain]`: search notes from a terminal, through the same use case as the
`search_notes` tool (lore.service.search); `--explain` shows, for every candidate of the keyword and
the vector lists, its rank and score on each side, the fused score, the threshold, and why each one
that is not a hit was dropped (below the threshold, marked irrelevant for a close query, beyond the
limit, or in another space that this workspace's session does not read)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

import anyio

from lore.cli.context import runtime
from lore.service import search


def run(args: argparse.Namespace) -> int:
    with runtime() as rt:
        session = rt.command_session(args.workspace)
        others = rt.config().ids

        async def go() -> search.Explanation:
            return await search.explain(
                rt, session.readable, args.query, session_space=session.space, others=others,
                kinds=args.kinds, limit=args.limit,
            )  # fmt: skip

        found = anyio.run(go)
    if args.json:
        print(json.dumps(_json(found, args.explain), ensure_ascii=False, indent=2))
        return 0
    if not found.hits:
        print(f"No notes match {args.query.strip()!r} (space {session.space}).")
    for hit in found.hits:
        title = f"{hit.title} — " if hit.title else ""
        same = f", +{len(hit.similar)} similar: {', '.join(hit.similar)}" if hit.similar else ""
        when = f", {hit.when}" if hit.when else ""
        print(f"{hit.id} [{hit.kind}{when}] {title}{hit.snippet} ({hit.score:g}, {hit.via or hit.why}{same})")
    if args.explain:
        print()
        print(
            f"Threshold: a hit needs a keyword match or a similarity of at least {found.min_similarity:g}, "
            f"and a fused score of at least {found.floor:.3f} (a share of the best)."
        )
        print(f"{'note':<8} {'keyword':>14} {'vector':>14} {'fused':>7}  outcome")
        for row in found.rows:
            kw = f"#{row.keyword_rank} {row.keyword_score:.3f}" if row.keyword_rank else "-"
            vec = f"#{row.vector_rank} {row.similarity:.3f}" if row.vector_rank else "-"
            fused = f"{row.fused:.3f}" if row.fused is not None else "-"
            print(f"n_{row.lineage:<6} {kw:>14} {vec:>14} {fused:>7}  {row.outcome}")
        for note_id, space in found.other_spaces:
            print(
                f"{note_id:<8} {'':>14} {'':>14} {'':>7}  dropped: other space ({space}: not read from here)"
            )
    return 0


def _json(found: search.Explanation, explain: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "results": [{k: v for k, v in h.__dict__.items() if v is not None} for h in found.hits]
    }
    if explain:
        out |= {
            "floor": found.floor,
            "min_similarity": found.min_similarity,
            "candidates": [asdict(r) for r in found.rows],
            "other_spaces": [{"id": i, "space": s} for i, s in found.other_spaces],
        }
    return out
