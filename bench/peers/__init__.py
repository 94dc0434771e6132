"""Peers for bench/locomo.py, each loaded with the same memories and asked the same questions: the
reference MCP memory server (npm) and basic-memory (PyPI) through their own MCP tools, here, and
engram-search (PyPI) in-process with lore's embedder injected, in engram_search.py.

Both install into a cache dir on first use (`$LORE_BENCH_CACHE`, default ~/.cache/lore-bench), only
here, never for `make test`. A peer that cannot install or run says why; its rows are then missing.
Results are kept per space (one space = one conversation and view), so that a peer run on a subset
of the conversations is compared with lore on the same subset.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

SERVER_MEMORY = "@modelcontextprotocol/server-memory@2026.8.31"
BASIC_MEMORY = "basic-memory==0.24.1"
SERVER_MEMORY_NAME = "server-memory (npm)"
BASIC_MEMORY_NAME = "basic-memory (PyPI)"


def cache_dir() -> Path:
    env = os.environ.get("LORE_BENCH_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "lore-bench"


def _server_memory_js() -> Path:
    prefix = cache_dir() / "npm"
    js = prefix / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    if not js.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is not installed")
        command = [npm, "install", "--prefix", str(prefix), SERVER_MEMORY, "--no-audit", "--no-fund"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise RuntimeError(f"npm install {SERVER_MEMORY} failed: {done.stderr.strip().splitlines()[-3:]}")
    return js


def _python312() -> str | None:
    """basic-memory needs Python >= 3.12; lore's venv may be 3.11."""
    candidates = ["python3.13", "python3.12"]
    found = [shutil.which(c) for c in candidates]
    pyenv = Path.home() / ".pyenv" / "versions"
    if pyenv.is_dir():
        found += [
            str(p / "bin" / "python3")
            for p in sorted(pyenv.iterdir(), reverse=True)
            if p.name.startswith(("3.12", "3.13", "3.14"))
        ]
    check = ["-c", "import sys; sys.exit(sys.version_info < (3, 12))"]
    for exe in found:
        if exe and subprocess.run([exe, *check], capture_output=True).returncode == 0:
            return exe
    return None


def _basic_memory_bin() -> Path:
    venv = cache_dir() / "basic-memory"
    exe = venv / "bin" / "basic-memory"
    if not exe.exists():
        python = _python312()
        if python is None:
            raise RuntimeError("basic-memory needs Python >= 3.12 and none was found (PATH, ~/.pyenv)")
        subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", BASIC_MEMORY],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if done.returncode != 0:
            raise RuntimeError(f"pip install {BASIC_MEMORY} failed: {done.stderr.strip().splitlines()[-1:]}")
    return exe


async def _session(
    command: str, args: list[str], env: dict[str, str], body: Callable[[Any], Awaitable[None]]
) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command, args=args, env=env)
    with open(os.devnull, "w") as quiet:  # both peers print banners and logs on stderr
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await body(session)


def _text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)[:300]


def server_memory(spaces: Sequence[Any], root: Path, scores: Callable[[], Any]) -> dict[str, Any]:
    """One entity per memory (create_entities, 200 per call); each question through search_nodes."""
    import anyio

    js = _server_memory_js()
    node = shutil.which("node") or "node"
    out: dict[str, Any] = {}
    for space in spaces:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root),
            "MEMORY_FILE_PATH": str(root / f"server-memory-{space.name}.jsonl"),
        }
        result = out[space.name] = scores()

        async def go(s: Any, space: Any = space, result: Any = result) -> None:
            for i in range(0, len(space.memories), 200):
                entities = [
                    {"name": mid, "entityType": "memory", "observations": [text]}
                    for mid, text in space.memories[i : i + 200]
                ]
                done = await s.call_tool("create_entities", {"entities": entities})
                if done.is_error:
                    raise RuntimeError(f"create_entities failed: {_text(done)}")
            for q in space.questions:
                started = time.perf_counter()
                found = await s.call_tool("search_nodes", {"query": q.text})
                ms = (time.perf_counter() - started) * 1000
                data = found.structured_content or {}
                names = [e["name"] for e in data.get("entities", [])] if isinstance(data, dict) else []
                result.add(names, q.gold, ms)

        anyio.run(_session, node, [str(js)], env, go)
    return out


def basic_memory(spaces: Sequence[Any], root: Path, scores: Callable[[], Any]) -> dict[str, Any]:
    """One project per space, one note per memory (write_note), each question through search_notes
    (JSON output, 10 results). Semantic search stays off: it needs fastembed to download a model."""
    import anyio

    exe = _basic_memory_bin()
    out: dict[str, Any] = {}
    for space in spaces:
        home = root / f"bm-{space.name}"
        home.mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "BASIC_MEMORY_HOME": str(home / "notes"),
            "BASIC_MEMORY_SEMANTIC_SEARCH_ENABLED": "false",
            "NO_COLOR": "1",
        }
        result = out[space.name] = scores()
        ids: dict[str, str] = {}

        async def go(s: Any, space: Any = space, result: Any = result, ids: dict[str, str] = ids) -> None:
            for mid, text in space.memories:
                title = f"m {mid.replace(':', '-')}"
                done = await s.call_tool("write_note", {"title": title, "content": text, "directory": "mem"})
                if done.is_error:
                    raise RuntimeError(f"write_note failed: {_text(done)}")
                ids[title.lower()] = mid
            for q in space.questions:
                started = time.perf_counter()
                found = await s.call_tool(
                    "search_notes", {"query": q.text, "page_size": 10, "output_format": "json"}
                )
                ms = (time.perf_counter() - started) * 1000
                if found.is_error:
                    raise RuntimeError(f"search_notes failed: {_text(found)}")
                ranked = [ids.get(str(r.get("title", "")).lower(), "") for r in _bm_results(found)]
                result.add(ranked, q.gold, ms)

        anyio.run(_session, str(exe), ["mcp"], env, go)
    return out


def _bm_results(result: Any) -> list[dict[str, Any]]:
    data = result.structured_content
    if isinstance(data, dict):
        inner = data.get("result", data)
        if isinstance(inner, dict) and isinstance(inner.get("results"), list):
            return [r for r in inner["results"] if isinstance(r, dict)]
    return []


if __name__ == "__main__":  # install only: python bench/peers/__init__.py
    print(_server_memory_js())
    print(_basic_memory_bin(), file=sys.stderr)
