"""`lore mcp`'s import list: start it in a fresh interpreter, answer initialize and tools/list, and
list what it imported. Spawn-to-tools/list is mostly the SDK's own import (docs/benchmarks.md, lore
mcp start-up); nothing of the embedder, the web UI, the HTTP server or the installers may join it,
and the count may not creep up unnoticed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.jsonrpc import INITIALIZED, initialize

# Loaded only when a tool needs them (an embedding, a page, `lore serve`, `lore install`). (The
# background embedder imports lore.embeddings.local at start, which loads onnxruntime only when a
# note needs a vector; the SDK itself imports rich for its log handler.)
NOT_AT_START = (
    "onnxruntime",
    "numpy",
    "tokenizers",
    "jinja2",
    "lore.http.web",
    "lore.http",
    "lore.installers",
    "lore.embeddings.static",
    "lore.embeddings.remote",
    "lore.store.transfer",
    "lore.store.markdown",
    "lore.store.instructions",
)
# What `lore mcp` imported when this test was written: 787 modules, submodules included; plus room.
MAX_MODULES = 870  # 827 with the agent events' use cases, outcomes and the spool (issue 36); 842 with
# retrieval round 3's when, keywords, context and the e5 availability check (issue 42); 852 once config,
# the runtime and render were split into modules with one reason to change each (issue 39: files, not weight)

PROBE = """
import atexit, json, sys
atexit.register(lambda: sys.stderr.write("\\nMODULES=" + json.dumps(sorted(sys.modules)) + "\\n"))
from lore.cli.main import main
sys.exit(main(["mcp", "--workspace", sys.argv[1]]))
"""
REQUESTS = [initialize("t"), INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]


def test_lore_mcp_imports_only_what_serving_needs(lore_env: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "acme"
    project.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "acme"\npaths = ["{project}"]\n')
    proc = subprocess.Popen(
        [sys.executable, "-c", PROBE, str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=lore_env,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    for request in REQUESTS:
        proc.stdin.write(json.dumps(request) + "\n")
    proc.stdin.flush()
    answers: list[dict[str, Any]] = []
    while not any(a.get("id") == 2 for a in answers):  # tools/list answered: then end the session
        line = proc.stdout.readline()
        assert line, "lore mcp exited before answering tools/list"
        answers.append(json.loads(line))
    assert answers[-1]["result"]["tools"]
    _, stderr = proc.communicate(timeout=60)  # stdin closed: the server ends, atexit lists modules
    line = next(x for x in stderr.splitlines() if x.startswith("MODULES="))
    modules = set(json.loads(line.removeprefix("MODULES=")))
    loaded = sorted(m for m in modules for heavy in NOT_AT_START if m == heavy or m.startswith(heavy + "."))
    assert not loaded, loaded
    assert len(modules) <= MAX_MODULES, f"lore mcp now imports {len(modules)} modules (at most {MAX_MODULES})"
