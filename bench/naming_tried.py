#!/usr/bin/env python3
"""What else was tried for naming restatements (docs/benchmarks.md, "Naming at write time"): the
same labelled pairs as bench/naming.py, the same held-out discipline, other scores and other ways to
choose. None is shipped; this keeps the measurements that say why.

Each variant is a score and a way to choose its setting on the choosing pairs:

- **score**: `w` x cosine + (1 - `w`) x share of words, at least `t` + `slope` x (the pair's mean
  count of content words - 8): a threshold that may depend on length (short project statements share
  fewer words than long conversational ones). The cosine is MiniLM's (lore's `local` embedder), e5's
  (the `e5` extra), potion-base-8M's (the `static` embedder), or the mean of MiniLM's and another's;
  the share of words is Jaccard (lore's) or Dice. Also MiniLM's cosine corrected for how crowded each
  text's neighbourhood is (`hub_corrected`).
- **pooled**: the most recall over all choosing pairs at precision >= 0.72 (what lore ships: the 834
  LoCoMo pairs outweigh the project pairs by 14 to one). **balanced**: precision >= 0.72 on each set,
  the most recall on the weaker set.

Reported for each: LoCoMo leave one conversation out; the project pairs' choosing half, leave one
project out (each project scored with a setting chosen without it); the held-out half (chosen on all
LoCoMo pairs and the choosing half). Pairs the word rule settles (a copy, a near duplicate, a change or
a conflict) and pairs with different numbers (lore.core.naming.unlike) are settled as in lore.

    .venv/bin/python bench/naming_tried.py   # a markdown table (about a minute; e5 rows need the extra)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))
import month_six  # beside this file: where the LoCoMo conversations are
import naming as bench  # ... the pairs, the halves and the MiniLM cosines

from lore.core import naming, similarity
from lore.core.similarity import Text

PRECISION = bench.PRECISION
WEIGHTS = np.round(np.arange(0, 1.0001, 0.05), 2)
THRESHOLDS = np.round(np.arange(0.3, 0.9001, 0.01), 2)
SLOPES = (0.0, 0.005, 0.01, 0.015, 0.02, 0.03)
Array = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Pairs:
    """Each pair's label, data set, group and what the word rule already settles."""

    items: list[bench.Pair]
    same: Mask  # labelled a restatement
    ruled: Mask  # a copy or a near duplicate: named whatever the setting
    open: Mask  # nothing settled, one subject, no different numbers: named by score
    jaccard: Array
    dice: Array
    length: Array  # the mean count of content words, at most 20

    @classmethod
    def read(cls) -> Pairs:
        """The pairs, with what bench/naming.py's Scorer reads of each (the word rule's verdict and
        the share of words), and Dice and the length beside them."""
        items = bench.pairs()
        scorer = bench.Scorer(items, [None] * len(items))
        dice, length = [], []
        for p in items:
            a, b = Text.of(p.b, p.subject_b), Text.of(p.a, p.subject_a)
            an, bn = similarity._as_now(a, b), similarity._as_now(b, a)
            sizes = len(an.words) + len(bn.words)
            dice.append(2 * len(an.words & bn.words) / sizes if sizes else 0.0)
            length.append(min(sizes / 2, 20.0))
        return cls(
            items,
            np.array([p.label == "same" for p in items], dtype=bool),
            np.array(scorer.ruled, dtype=bool),
            np.array(scorer.open, dtype=bool),
            np.array(scorer.words),
            np.array(dice),
            np.array(length),
        )

    def index(self, data: str, groups: set[str] | None = None) -> npt.NDArray[np.int64]:
        return np.array(
            [i for i, p in enumerate(self.items) if p.data == data and (groups is None or p.group in groups)],
            dtype=np.int64,
        )


def other_cosines(items: Sequence[bench.Pair]) -> dict[str, Array]:
    """The pairs' cosines by the other offline models here: e5 (the `e5` extra) and potion-base-8M
    (lore's `static` embedder), each where it is installed."""
    from lore.embeddings import EmbedderError, e5
    from lore.embeddings.static import Potion

    texts = sorted({t for p in items for t in (p.a, p.b)})
    models: dict[str, Any] = {}
    if e5.available():
        models["e5"] = e5.E5Small(dict(os.environ))
    models["potion"] = Potion(dict(os.environ))
    out = {}
    for name, model in models.items():
        try:
            vectors = dict(zip(texts, model.embed(texts), strict=True))
        except EmbedderError:
            continue  # its files are not installed
        out[name] = np.array([naming.cosine(vectors[p.a], vectors[p.b]) for p in items])
    return out


def hub_corrected(items: Sequence[bench.Pair], k: int, alpha: float) -> Array:
    """MiniLM's cosine less `alpha` x how crowded the two texts' neighbourhoods are (the mean cosine of
    each with its `k` nearest texts of its own collection, over the mean of that; a hubness
    correction in the manner of CSLS): a LoCoMo observation sits among many about the same person, a
    project statement among few about its tool. The collections: every observation of the pair's
    conversation (LoCoMo), every text of the project pairs (one space holding many projects' facts)."""
    import json

    from lore.embeddings.local import MiniLM

    corpora: dict[str, list[str]] = {}
    for conv in json.loads(month_six.LOCOMO.read_text()):
        seen = {o[0] for sess in conv["observation"].values() for obs in sess.values() for o in obs}
        corpora[conv["sample_id"]] = sorted(seen)
    corpora["projects"] = sorted({t for p in items if p.data == "projects" for t in (p.a, p.b)})
    texts = sorted({t for c in corpora.values() for t in c} | {t for p in items for t in (p.a, p.b)})
    model = MiniLM(dict(os.environ))
    unit = {}
    for at in range(0, len(texts), 64):
        for text, v in zip(texts[at : at + 64], model.embed(texts[at : at + 64]), strict=True):
            vector = np.array(v, dtype=float)
            unit[text] = vector / np.linalg.norm(vector)
    matrices = {name: np.stack([unit[t] for t in c]) for name, c in corpora.items()}

    def crowd(text: str, corpus: str) -> float:
        near = np.sort(matrices[corpus] @ unit[text])[::-1]
        return float((near[1:] if text in corpora[corpus] else near)[:k].mean())  # not itself

    where = [p.group if p.data == "locomo" else "projects" for p in items]
    ra = np.array([crowd(p.a, c) for p, c in zip(items, where, strict=True)])
    rb = np.array([crowd(p.b, c) for p, c in zip(items, where, strict=True)])
    cos = np.array([float(unit[p.a] @ unit[p.b]) for p in items])
    corrected: Array = cos - alpha * ((ra + rb) / 2 - float(np.mean(np.r_[ra, rb])))
    return corrected


@dataclass(frozen=True)
class Variant:
    name: str
    cos: Array
    words: Array
    slopes: Sequence[float]
    balanced: bool


def named_grid(v: Variant, d: Pairs, idx: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Whether each pair of `idx` is named, for every (weight, slope, threshold): [w, s, t, pair]."""
    score = WEIGHTS[:, None] * v.cos[idx][None, :] + (1 - WEIGHTS[:, None]) * v.words[idx][None, :]
    shift = np.array(v.slopes)[:, None] * (d.length[idx] - 8)[None, :]
    adjusted = score[:, None, :] - shift[None, :, :]  # [w, s, pair]
    by_score = adjusted[:, :, None, :] >= THRESHOLDS[None, None, :, None]
    return d.ruled[idx] | (d.open[idx] & by_score)


def precision_recall(named: npt.NDArray[np.bool_], same: Mask) -> tuple[Array, Array]:
    tp = (named & same).sum(-1)
    count = named.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, tp / np.maximum(count, 1), np.nan), tp / max(int(same.sum()), 1)


def choose(v: Variant, d: Pairs, sets: Sequence[npt.NDArray[np.int64]]) -> tuple[int, int, int]:
    """The (weight, slope, threshold) indices chosen on `sets` (one per data set)."""
    if v.balanced:
        got = [precision_recall(named_grid(v, d, idx), d.same[idx]) for idx in sets]
        ok = np.all([np.nan_to_num(p) >= PRECISION for p, _ in got], axis=0)
        weakest = np.min([r for _, r in got], axis=0)
        total = np.sum([r for _, r in got], axis=0)
        key = np.where(ok, weakest * 10 + total, -1.0)
    else:
        idx = np.concatenate(list(sets))
        p, r = precision_recall(named_grid(v, d, idx), d.same[idx])
        key = np.where(np.nan_to_num(p) >= PRECISION, r, -1.0)
    w, s, t = np.unravel_index(int(np.argmax(key)), key.shape)
    return int(w), int(s), int(t)


def scored(v: Variant, d: Pairs, idx: npt.NDArray[np.int64], at: tuple[int, int, int]) -> Mask:
    w, s, t = at
    named: Mask = named_grid(v, d, idx)[w, s, t]
    return named


def summary(flags: list[tuple[bool, bool]]) -> str:
    tp = sum(1 for f, s in flags if f and s)
    named = sum(1 for f, _ in flags if f)
    positives = sum(1 for _, s in flags if s)
    precision = f"{tp / named:.3f}" if named else "-"
    return f"{precision} / {tp / positives:.3f}"


def evaluate(v: Variant, d: Pairs, picking: set[str], held: set[str]) -> list[str]:
    locomo = d.index("locomo")
    choosing = d.index("projects", picking)
    loo: list[tuple[bool, bool]] = []
    for conv in sorted({d.items[i].group for i in locomo}):
        train = np.array([i for i in locomo if d.items[i].group != conv], dtype=np.int64)
        test = np.array([i for i in locomo if d.items[i].group == conv], dtype=np.int64)
        at = choose(v, d, [train, choosing])
        loo += list(zip(scored(v, d, test, at), d.same[test], strict=True))
    lopo: list[tuple[bool, bool]] = []
    for project in sorted(picking):
        rest = d.index("projects", picking - {project})
        test = d.index("projects", {project})
        at = choose(v, d, [locomo, rest])
        lopo += list(zip(scored(v, d, test, at), d.same[test], strict=True))
    at = choose(v, d, [locomo, choosing])
    test = d.index("projects", held)
    out = list(zip(scored(v, d, test, at), d.same[test], strict=True))
    setting = f"w {WEIGHTS[at[0]]}, t {THRESHOLDS[at[2]]}, slope {v.slopes[at[1]]}"
    return [v.name, setting, summary(loo), summary(lopo), summary([(bool(a), bool(b)) for a, b in out])]


def main() -> int:
    d = Pairs.read()
    picking, held = bench.project_halves(d.items)
    minilm = np.array(bench.cosines(d.items))
    cosines = {"MiniLM": minilm}
    for name, cos in other_cosines(d.items).items():
        cosines |= {name: cos, f"MiniLM+{name}": (minilm + cos) / 2}
    variants = [Variant("shipped: MiniLM, Jaccard, pooled", minilm, d.jaccard, (0.0,), False)]
    for name, cos in cosines.items():
        for words_name, words in (("Jaccard", d.jaccard), ("Dice", d.dice)):
            for balanced in (False, True):
                way = "balanced" if balanced else "pooled"
                variants.append(Variant(f"{name}, {words_name}, {way}, length", cos, words, SLOPES, balanced))
    for k in (10, 20):
        for alpha in (0.25, 0.5, 1.0):
            cos = hub_corrected(d.items, k, alpha)
            for balanced in (False, True):
                way = "balanced" if balanced else "pooled"
                name = f"MiniLM less crowding (k {k}, a {alpha}), Jaccard, {way}, length"
                variants.append(Variant(name, cos, d.jaccard, SLOPES, balanced))
    print(
        "| variant | chosen (on all LoCoMo + choosing half) | LoCoMo, leave one conversation out | "
        "choosing half, leave one project out | held-out half |"
    )
    print("|---|---|---:|---:|---:|")
    for v in variants:
        print("| " + " | ".join(evaluate(v, d, picking, held)) + " |")
    print("\n(precision / recall of restatements named)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
