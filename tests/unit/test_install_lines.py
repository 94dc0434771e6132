"""Every install line that the README and the bundles show a user (the Claude Desktop bundle, the
Gemini CLI extension and its guide, the MCP registry entry) either is run by the test suite or says,
in its own paragraph, that it is not yet available. Nothing is published on the package index, so
`pipx install shared-lore` must never read as if it worked (issue 41: it was in five places)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [
    "README.md",
    "mcpb/README.md",
    "mcpb/manifest.json",
    "gemini-extension/gemini-extension.json",
    "gemini-extension/hooks/hooks.json",
    "docs/agents/gemini.md",
    "server.json",
]
INSTALL = re.compile(r"\b(pipx install|pipx run|uv tool install|uvx|pip install)\s+`?([^\s`\"'),;]+)")
# What the suite runs, and where (each test must exist). `pipx` and `uv` are not on the test
# machines: each is run as pip (`pip install` of the same file or URL into a fresh venv).
EXERCISED = {
    "dist/shared_lore-*.whl": ("tests/tools/test_quickstart.py", "test_the_readme_quick_start_on_a_fresh"),
    "git+URL": ("tests/tools/test_wheel.py", "test_pip_installs_lore_from_the_repository_url"),
}
NOT_PUBLISHED = {"shared-lore"}  # the package index's name: each mention says it is not yet available
NOT_AN_INSTALL = {  # words after "pip install" that name no package: (what follows, why)
    "the": "the same file",  # "uv tool install / pip install the same file": the wheel line's
    "/": "the same file",  # alternatives, run as the quick start runs that line (pip, the same file)
    "lore": "another project",  # the README's warning that `pip install lore` is someone else's
}


def _paragraphs(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        strings: list[str] = []

        def walk(node: object) -> None:
            if isinstance(node, str):
                strings.append(node)
            elif isinstance(node, dict):
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(json.loads(text))
        return strings
    return re.split(r"\n\s*\n", text)


def test_every_install_line_is_run_by_the_suite_or_says_it_is_not_yet_available() -> None:
    problems, seen = [], set()
    for source in SOURCES:
        for paragraph in _paragraphs(ROOT / source):
            for found in INSTALL.finditer(paragraph):
                target = found.group(2)
                seen.add(target)
                where = f"{source}: `{found.group(0)}`"
                if target in EXERCISED:
                    continue
                if target in NOT_PUBLISHED:
                    if "not yet available" not in paragraph.lower():
                        problems.append(f"{where}: say 'not yet available' beside it (nothing is published)")
                elif target in NOT_AN_INSTALL:
                    if NOT_AN_INSTALL[target] not in paragraph[found.start() :]:
                        problems.append(f"{where}: not an install line the test knows")
                else:
                    problems.append(f"{where}: run it in a test (and list it in EXERCISED) or mark it")
    assert problems == [], "\n".join(problems)
    assert {"dist/shared_lore-*.whl", "git+URL", "shared-lore"} <= seen, seen
    for test_file, test in EXERCISED.values():
        assert f"def {test}" in (ROOT / test_file).read_text(encoding="utf-8"), (test_file, test)


def test_the_registry_entry_names_the_package_the_readme_says_is_not_yet_published() -> None:
    entry = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
    assert [p["identifier"] for p in entry["packages"]] == ["shared-lore"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    registry = next(p for p in _paragraphs(ROOT / "README.md") if "**MCP registry**" in p)
    assert "not yet available" in registry and "uvx shared-lore mcp" in registry
    assert "Nothing is published on the package index yet" in readme
