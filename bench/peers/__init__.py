"""Peers for bench/locomo.py, each loaded with the same memories through its own MCP tools and asked
the same questions: the reference MCP memory server (npm) and basic-memory (PyPI).

Both install into a cache dir on first use (`$LORE_BENCH_CACHE`, default ~/.cache/lore-bench), only
here, never for `make test`. A peer that cannot install or run says why; its row is then missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

SERVER_MEMORY = "@modelcontextprotocol/server-memory@2026.8.31"
BASIC_MEMORY = "basic-memory==0.24.1"


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
        subprocess.run([npm, "install", "--prefix", str(prefix), SERVER_MEMORY, "--no-audit", "--no-fund"],
                       check=True, capture_output=True, timeout=600)  # fmt: skip
    return js


def _python312() -> str | None:
    """basic-memory needs Python >= 3.12; lore's venv may be 3.11."""
    candidates = ["python3.13", "python3.12"]
    found = [shutil.which(c) for c in candidates]
    pyenv = Path.home() / ".pyenv" / "versions"
    if pyenv.is_dir():
        found += [str(p / "bin" / "python3") for p in sorted(pyenv.iterdir(), reverse=True)
                  if p.name.startswith(("3.12", "3.13", "3.14"))]  # fmt: skip
    for exe in found:
        if exe and subprocess.run([exe, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"],
                                  capture_output=True).returncode == 0:  # fmt: skip
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
        done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", BASIC_MEMORY],
                              capture_output=True, text=True, timeout=1800)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"pip install {BASIC_MEMORY} failed: {done.stderr.strip().splitlines()[-1:]}")
    return exe


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def _session(command: str, args: list[str], env: dict[str, str],
                   body: Callable[[Any], Awaitable[None]]) -> None:  # fmt: skip
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command, args=args, env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await body(session)


def run_peers(spaces: list[Any], root: Path) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    import anyio
    from locomo import Scores

    results: dict[str, dict[str, Any]] = {}
    notes: dict[str, str] = {}
    base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root)}

    # --- the reference MCP memory server: a JSON-lines knowledge graph, substring search ---
    name = "server-memory (npm)"
    try:
        js = _server_memory_js()
        node = shutil.which("node") or "node"
        scores: dict[str, Any] = {}
        for space in spaces:
            env = {**base_env, "MEMORY_FILE_PATH": str(root / f"server-memory-{space.name}.jsonl")}

            async def go(s: Any, space: Any = space) -> None:
                for i in range(0, len(space.memories), 200):
                    chunk = space.memories[i : i + 200]
                    entities = [
                        {"name": mid, "entityType": "memory", "observations": [text]} for mid, text in chunk
                    ]
                    await s.call_tool("create_entities", {"entities": entities})
                for q in space.questions:
                    t = time.perf_counter()
                    result = await s.call_tool("search_nodes", {"query": q.text})
                    ms = (time.perf_counter() - t) * 1000
                    data = result.structured_content or {}
                    names = [e["name"] for e in data.get("entities", [])] if isinstance(data, dict) else []
                    scores.setdefault(space.view, Scores()).add(names, q.gold, ms)

            anyio.run(_session, node, [str(js)], env, go)
        results[name] = scores
        notes[name] = (f"{SERVER_MEMORY} stores one entity per memory (create_entities) and answers "
                       "search_nodes by case-insensitive substring match of the whole query, so full "
                       "questions rarely match anything; results come back unranked.")  # fmt: skip
    except Exception as exc:  # a peer that cannot run is reported, not fatal
        notes[name] = f"could not run: {exc!r}"

    # --- basic-memory: markdown notes with SQLite FTS (+ optional vectors) ---
    name = "basic-memory (PyPI)"
    try:
        exe = _basic_memory_bin()
        scores = {}
        for space in spaces:
            home = root / f"bm-{space.name}"
            home.mkdir(parents=True, exist_ok=True)
            env = {**base_env, "HOME": str(home), "BASIC_MEMORY_HOME": str(home / "notes"),
                   "BASIC_MEMORY_SEMANTIC_SEARCH_ENABLED": "false"}  # fmt: skip
            ids: dict[str, str] = {}

            async def go(s: Any, space: Any = space, ids: dict[str, str] = ids) -> None:
                for mid, text in space.memories:
                    title = f"m {mid.replace(':', '-')}"
                    await s.call_tool("write_note", {"title": title, "content": text, "directory": "mem"})
                    ids[title.lower()] = mid
                for q in space.questions:
                    t = time.perf_counter()
                    result = await s.call_tool("search_notes", {"query": q.text, "page_size": 10})
                    ms = (time.perf_counter() - t) * 1000
                    found = [ids.get(str(r.get("title", "")).lower(), "") for r in _bm_results(result)]
                    scores.setdefault(space.view, Scores()).add(found, q.gold, ms)

            anyio.run(_session, str(exe), ["mcp"], env, go)
        results[name] = scores
        notes[name] = f"{BASIC_MEMORY}, one note per memory (write_note), search_notes with the question."
    except Exception as exc:
        notes[name] = f"could not run: {exc!r}"
    return results, notes


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
