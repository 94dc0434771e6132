"""Embeddings of the synthetic corpus (bench/corpus.py), computed once and kept on disk.

Embedding 100,000 notes with the default model takes most of an hour on a 2-core machine; the
vectors depend only on (corpus version, seed, model), so they are cached in chunks of CHUNK notes
under `$LORE_BENCH_CACHE/vectors/` (default ~/.cache/lore-bench): an interrupted fill resumes, and
a longer run reuses the chunks a shorter one made. The notes are regenerated from the seed (cheap);
each chunk stores the sha256 of its texts, so a stale chunk is recomputed, never trusted.

Vectors are made by the same embedder and text (`lore.store.vectors.note_text`) as the worker.

    .venv/bin/python bench/vector_cache.py --notes 100000     # fill the cache only
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from corpus import Note

CHUNK = 5_000
SUB_BATCH = 500  # texts per embed() call: the embedder sorts each call by length (less padding)


def cache_root() -> Path:
    env = os.environ.get("LORE_BENCH_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "lore-bench"


def notes(count: int, seed: int) -> list[Note]:
    rng = random.Random(seed)
    return [corpus.note(rng) for _ in range(count)]


def texts_of(batch: list[Note]) -> list[str]:
    from lore.store.vectors import note_text

    return [note_text(title, tags, body) for _, title, body, tags in batch]


def _digest(texts: list[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode())
        h.update(b"\0")
    return h.hexdigest()


def _folder(model: str, seed: int) -> Path:
    return cache_root() / "vectors" / f"corpus-v{corpus.VERSION}-seed{seed}-{model}"


def _chunk_path(folder: Path, index: int) -> Path:
    return folder / f"chunk-{index:04d}.npz"


def _load_chunk(path: Path, texts: list[str]) -> Any:
    import numpy as np

    if not path.exists():
        return None
    with np.load(path) as data:
        if str(data["digest"]) != _digest(texts):
            return None
        return data["vectors"]


def _embed_chunk(job: tuple[dict[str, str], str, int, int, int]) -> tuple[int, int, float]:
    env, folder, seed, index, count = job
    import numpy as np

    from lore.embeddings import load

    embedder = load(env)
    assert embedder is not None
    texts = texts_of(notes(count, seed)[index * CHUNK : (index + 1) * CHUNK])
    started = time.monotonic()
    out = []
    for start in range(0, len(texts), SUB_BATCH):
        out.extend(embedder.embed(texts[start : start + SUB_BATCH]))
    took = time.monotonic() - started
    path = _chunk_path(Path(folder), index)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, vectors=np.asarray(out, dtype=np.float32), digest=np.array(_digest(texts)))
    tmp.replace(path)
    return index, len(texts), took


def model_name(env: dict[str, str]) -> str:
    from lore.embeddings import load

    embedder = load(env)
    if embedder is None:
        raise SystemExit("the embedder is `none`: nothing to cache")
    return embedder.model


def vectors(count: int, seed: int, env: dict[str, str], procs: int = 2) -> tuple[Any, str, float | None]:
    """(float32 array of shape (count, dim), model, texts/s of this fill or None if all cached)."""
    import numpy as np

    model = model_name(env)
    folder = _folder(model, seed)
    folder.mkdir(parents=True, exist_ok=True)
    all_notes = notes(count, seed)
    chunks = (count + CHUNK - 1) // CHUNK
    # A chunk always holds CHUNK notes of the stream (the last one too), so any count reuses it.
    full = notes(chunks * CHUNK, seed) if count % CHUNK else all_notes
    missing = [
        i
        for i in range(chunks)
        if _load_chunk(_chunk_path(folder, i), texts_of(full[i * CHUNK : (i + 1) * CHUNK])) is None
    ]
    rate = None
    if missing:
        worker_env = {**env, "LORE_EMBED_THREADS": "1"}
        print(
            f"embedding {len(missing)} chunk(s) of {CHUNK} notes into {folder} ({procs} processes)",
            flush=True,
        )
        started, done = time.monotonic(), 0
        jobs = [(worker_env, str(folder), seed, i, chunks * CHUNK) for i in missing]
        with multiprocessing.get_context("spawn").Pool(procs) as pool:
            for index, n, took in pool.imap_unordered(_embed_chunk, jobs):
                done += n
                print(f"  chunk {index}: {n / took:.1f} notes/s; {done}/{len(missing) * CHUNK}", flush=True)
        rate = done / (time.monotonic() - started)
    parts = []
    for i in range(chunks):
        part = _load_chunk(_chunk_path(folder, i), texts_of(full[i * CHUNK : (i + 1) * CHUNK]))
        assert part is not None, f"chunk {i} missing after the fill"
        parts.append(part)
    return np.concatenate(parts)[:count], model, rate


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--notes", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--procs", type=int, default=2)
    args = p.parse_args()
    env = {k: v for k, v in os.environ.items() if k.startswith("LORE_")}
    array, model, rate = vectors(args.notes, args.seed, env, args.procs)
    print(f"{array.shape[0]} vectors of {model} ({array.shape[1]} dims); fill rate: {rate}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
