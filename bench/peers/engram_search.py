"""engram-search (PyPI) as a peer of bench/locomo.py, in-process, offline.

Run the way its README's Python quickstart runs it: every memory embedded with the embedder's
`encode_documents` and stored as an engram `Document` in a `FaissBackend` (FAISS + SQLite), then each
question through `RetrievalPipeline.search(query, documents, top_k=10)`: dense cosine over the
documents, its own BM25, its name and quoted-phrase boosts, reciprocal rank fusion (k=60). The
cross-encoder reranker is off: it and engram's default embedder (bge-large) need sentence-transformers
and torch, which are not installed. In their place lore's own model (`LORE_EMBEDDER`, default `local`:
all-MiniLM-L6-v2 int8 ONNX, 384 dims) is injected through `LoreEmbedder`, engram's embedder interface.
engram's own LoCoMo script (benchmarks/locomo_bench.py in its repository) makes the same call; FAISS
stores the vectors but takes no part in this ranking (the pipeline's dense stage is exact, over the
documents it is given, and its `dense_top_k` is unused). Its MCP tool `search_memory` is another path:
FAISS top 3 x k above a 0.45 cosine floor (set for bge-large), then a 0.6/0.4 blend with BM25.

Installed into `<cache>/engram-site` with `pip --target --no-deps` (numpy comes from lore's venv),
only here, never into lore's venv and never for `make test`; the dir goes on sys.path for the run.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from . import cache_dir

ENGRAM = "engram-search==0.1.7"
FAISS_CPU = "faiss-cpu==1.15.1"  # a cp310-abi3 manylinux wheel: imports with lore's Python and numpy 2
ENGRAM_NAME = "engram-search (PyPI)"
# engram also declares rank-bm25 (never imported: its BM25 is its own, engram/retrieval/sparse.py) and
# sentence-transformers (only for its default embedder and the reranker, both unused here).
_FORBIDDEN = ("sentence_transformers", "torch", "transformers")


def _dist_info(spec: str) -> str:
    name, version = spec.split("==")
    return f"{name.replace('-', '_')}-{version}.dist-info"


def _engram_site() -> Path:
    site = cache_dir() / "engram-site"
    if not all((site / _dist_info(spec)).is_dir() for spec in (ENGRAM, FAISS_CPU)):
        site.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="engram-site-", dir=site.parent))
        try:
            command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            command += ["--target", str(staging), "--no-deps", "--only-binary", ":all:", ENGRAM, FAISS_CPU]
            done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
            if done.returncode != 0:
                raise RuntimeError(f"pip install {ENGRAM} {FAISS_CPU} failed: {done.stderr.strip()[-300:]}")
            shutil.rmtree(site, ignore_errors=True)
            staging.rename(site)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return site


class LoreEmbedder:
    """engram's embedder interface (engram/retrieval/embedder.py `Embedder`) over lore's Runner.
    No query prefix: engram adds one only for its bge models. No chunking: engram's mean-pools chunks
    of texts over max_seq_length * 4 characters, and no LoCoMo memory is that long (the longest is
    444); the model truncates at 256 tokens, as sentence-transformers does for MiniLM."""

    needs_query_prefix = False

    def __init__(self, runner: Any) -> None:
        from lore.embeddings.local import MAX_TOKENS

        self._runner = runner
        self.max_seq_length = MAX_TOKENS
        self.dimension: int | None = getattr(runner.embedder, "dim", None)

    def _encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = np.asarray(self._runner.batch(list(texts), timeout=3600), dtype=np.float32)
        return vectors.reshape(len(texts), -1)

    def encode_documents(self, texts: list[str], batch_size: int = 64) -> npt.NDArray[np.float32]:
        return self._encode(texts)

    def encode_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._encode([text]).reshape(-1)  # (1, dim) -> (dim,)

    def encode_queries(self, texts: list[str], batch_size: int = 32) -> npt.NDArray[np.float32]:
        return self._encode(texts)


def engram(spaces: Sequence[Any], root: Path, scores: Callable[[], Any]) -> dict[str, Any]:
    """One FAISS store per space (one Document per memory, id = the memory id); each question
    through RetrievalPipeline.search, 10 results, reranker off, no question date (LoCoMo has none,
    so the temporal boost never fires)."""
    site = str(_engram_site())
    if site not in sys.path:
        sys.path.append(site)  # after lore's own packages: numpy stays lore's
    package = importlib.import_module("engram")
    where = str(package.__file__)
    if package.__version__ != ENGRAM.split("==")[1] or not where.startswith(site):
        raise RuntimeError(f"imported engram {package.__version__} from {where}, not {ENGRAM}")
    Document = importlib.import_module("engram.backends.base").Document
    FaissBackend = importlib.import_module("engram.backends.faiss_backend").FaissBackend
    RetrievalPipeline = importlib.import_module("engram.retrieval.pipeline").RetrievalPipeline
    from lore.embeddings.runner import Runner

    runner = Runner({"LORE_EMBEDDER": os.environ.get("LORE_EMBEDDER", "local")})
    out: dict[str, Any] = {}
    try:
        embedder = LoreEmbedder(runner)
        pipeline = RetrievalPipeline(embedder=embedder, reranker=None, use_reranker=False, dense_top_k=50)
        for space in spaces:
            vectors = embedder.encode_documents([text for _, text in space.memories])
            documents = [
                Document(
                    id=mid,
                    text=text,
                    embedding=vector.tolist(),
                    metadata={"session_id": f"session_{space.sessions[mid]}"},
                )
                for (mid, text), vector in zip(space.memories, vectors, strict=True)
            ]
            backend = FaissBackend(path=root / f"engram-{space.name}", dimension=vectors.shape[1])
            backend.add(documents)
            if backend.count() != len(space.memories):
                raise RuntimeError(f"engram stored {backend.count()} of {len(space.memories)} memories")
            result = out[space.name] = scores()
            pipeline.search("warm up", documents=documents, top_k=10)
            for q in space.questions:
                started = time.perf_counter()
                found = pipeline.search(q.text, documents=documents, top_k=10)
                ms = (time.perf_counter() - started) * 1000
                result.add([d.id for d in found], q.gold, ms)
        loaded = [m for m in _FORBIDDEN if m in sys.modules]
        if loaded or pipeline._reranker is not None:
            raise RuntimeError(f"engram loaded {loaded or 'its reranker'}: not the configuration described")
    finally:
        runner.close()
    return out
