"""Average metadata overhead per fact in the session-start text, and how many facts fit.

The renderer's line is `- statement [f_ID · subject · YYYY-MM-DD]`; everything but the statement
is overhead paid in every session's context. This measures it on a realistic mix (ids up to 5
digits, half the facts with a subject) and counts how many facts fit the default budget, the
frame and the "more facts" line included.

Rerun: .venv/bin/python bench/render_overhead.py
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from lore.core import measure, render
from lore.core.rows import Fact

SUBJECTS = ["acme-api", "acme-web", "infra", "billing", "docs"]


def facts(n: int, rng: random.Random) -> list[Fact]:
    words = [
        "deploy",
        "build",
        "cache",
        "test",
        "retry",
        "queue",
        "schema",
        "index",
        "token",
        "service",
        "client",
        "config",
        "release",
    ]
    base = datetime(2026, 11, 1, tzinfo=UTC)
    out = []
    for i in range(n):
        length = rng.randint(8, 28)
        statement = " ".join(rng.choice(words) for _ in range(length))
        subject = rng.choice(SUBJECTS) if rng.random() < 0.5 else None
        when = base + timedelta(minutes=i)
        lineage = rng.randint(1, 99_999)
        out.append(
            Fact(
                lineage=lineage,
                version_id=lineage,
                space="acme",
                recorded_at=when,
                superseded_at=None,
                source="claude-code",
                workspace=None,
                statement=statement,
                subject=subject,
                valid_from=when,
                valid_to=None,
            )
        )
    return out


def main() -> None:
    rng = random.Random(42)
    sample = facts(10_000, rng)
    overhead = [measure.size(render.fact_line(f)) - measure.size(f.statement) for f in sample]
    statements = sum(measure.size(f.statement) for f in sample) / len(sample)
    out = render.session_start(sample, space="work", total=len(sample))
    frame = render.session_start(sample[:1], space="work")
    print("| measure | value |\n|---|---|")
    print(f"| facts sampled | {len(sample):,} |")
    print(f"| mean statement length | {statements:.1f} chars |")
    print(f"| mean metadata overhead per fact | {sum(overhead) / len(overhead):.1f} chars |")
    print(f"| overhead without subject / with subject | {min(overhead)}-{max(overhead)} chars |")
    fixed = measure.size(frame.text) - measure.size(render.fact_line(sample[0])) - 1
    print(f"| fence + label (fixed, once) | {fixed} chars |")
    print(f"| facts shown in the 8,000-char budget | {out.shown} (text {measure.size(out.text):,} chars) |")


if __name__ == "__main__":
    main()
