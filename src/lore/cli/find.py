"""`lore search QUERY [--explain]`: search notes from a terminal, through the same use case as the
`search_notes` tool (lore.service.search), here or on the server this machine uses (lore.cli.gateway);
`--explain` shows, for every candidate of the keyword and the vector lists, its rank and score on each
side, the fused score, the threshold, and why each one that is not a hit was dropped (below the
threshold, marked irrelevant for a close query, beyond the limit, or in another space that this
workspace's session does not read)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from lore.cli.context import gateway
from lore.core.ranking import Hit


def run(args: argparse.Namespace) -> int:
    with gateway() as gw:
        found = gw.search(args.workspace, args.query, kinds=args.kinds, limit=args.limit)
    if args.json:
        print(json.dumps(_json(found, args.explain), ensure_ascii=False, indent=2))
        return 0
    if not found["results"]:
        print(f"No notes match {args.query.strip()!r} (space {found['space']}).")
    for hit in found["results"]:
        print(Hit.of(hit).line())
    if args.explain:
        _explain(found)
    return 0


def _explain(found: dict[str, Any]) -> None:
    print()
    print(
        f"Threshold: a hit needs a keyword match or a similarity of at least {found['min_similarity']:g}, "
        f"and a fused score of at least {found['floor']:.3f} (a share of the best)."
    )
    print(f"{'note':<8} {'keyword':>14} {'vector':>14} {'fused':>7}  outcome")
    for row in found["candidates"]:
        kw = f"#{row['keyword_rank']} {row['keyword_score']:.3f}" if row["keyword_rank"] else "-"
        vec = f"#{row['vector_rank']} {row['similarity']:.3f}" if row["vector_rank"] else "-"
        fused = f"{row['fused']:.3f}" if row["fused"] is not None else "-"
        print(f"n_{row['lineage']:<6} {kw:>14} {vec:>14} {fused:>7}  {row['outcome']}")
    for other in found["other_spaces"]:
        print(
            f"{other['id']:<8} {'':>14} {'':>14} {'':>7}  "
            f"dropped: other space ({other['space']}: not read from here)"
        )


def _json(found: dict[str, Any], explain: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"results": found["results"]}
    if explain:
        keys = ("floor", "min_similarity", "candidates", "other_spaces")
        out |= {k: found[k] for k in keys}
    return out
