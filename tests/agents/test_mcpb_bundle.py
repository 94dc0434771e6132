"""Claude Desktop's one-click install: `make mcpb` builds dist/lore-<version>.mcpb; the official
`@anthropic-ai/mcpb` CLI from npm reads it (`info`), unpacks it and validates its manifest; and the
launch configuration that mcpb's own library derives from the manifest (what the desktop app runs)
starts the installed lore's MCP server, which answers with lore's tools and this user's memory."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support.mcpclient import lore_stdio_session, ok, text

from lore.mcp.tools import TOOLS

from .conftest import Project

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
LORE = Path(sys.executable).parent / "lore"
# Claude Desktop's way from a manifest to the command it runs: mcpb's getMcpConfigForManifest.
RESOLVE = """
const [lib, manifestPath, home, userConfig] = process.argv.slice(1);
const { getMcpConfigForManifest } = await import(lib);
const { readFileSync } = await import("node:fs");
const { dirname } = await import("node:path");
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
const config = await getMcpConfigForManifest({
  manifest, extensionPath: dirname(manifestPath), systemDirs: { HOME: home },
  userConfig: JSON.parse(userConfig), pathSeparator: "/",
});
console.log(JSON.stringify(config));
"""


def _run(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory: pytest.TempPathFactory, mcpb_cli: Path) -> Path:
    """`make mcpb` into a folder of the test's, then `mcpb info` and `mcpb unpack` on the bundle."""
    dist = tmp_path_factory.mktemp("dist")
    built = _run("make", "--no-print-directory", "mcpb", f"MCPB_DIST={dist}")
    assert built.returncode == 0, built.stderr
    bundle = dist / f"lore-{VERSION}.mcpb"
    assert bundle.is_file() and f"{bundle} sha256 " in built.stdout
    info = _run(mcpb_cli, "info", bundle)
    assert info.returncode == 0 and f"lore-{VERSION}.mcpb" in info.stdout, info.stdout + info.stderr
    out = dist / "unpacked"
    done = _run(mcpb_cli, "unpack", bundle, out)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _resolve(mcpb_cli: Path, manifest: Path, home: Path, user_config: dict[str, Any]) -> Any:
    lib = mcpb_cli.resolve().parents[1] / "index.js"  # .bin/mcpb -> @anthropic-ai/mcpb/dist/cli/cli.js
    assert lib.is_file(), lib
    done = _run(
        "node", "--input-type=module", "-e", RESOLVE, lib.as_uri(), manifest, home, json.dumps(user_config)
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_official_cli_validates_the_bundle_make_builds(unpacked: Path, mcpb_cli: Path) -> None:
    validated = _run(mcpb_cli, "validate", unpacked)
    assert validated.returncode == 0 and "Manifest schema validation passes!" in validated.stdout, (
        validated.stdout + validated.stderr
    )
    manifest = json.loads((unpacked / "manifest.json").read_text())
    assert manifest["version"] == VERSION
    assert [(t["name"], t["description"]) for t in manifest["tools"]] == [
        (t.__name__, t.__lore_tool__)  # type: ignore[attr-defined]
        for t in TOOLS
    ]
    readme = (unpacked / "README.md").read_text()
    assert (
        readme.count("pipx install git+URL") == 1
        and "Not yet available: `pipx install\nshared-lore`" in readme
    )
    # ... and the same CLI refuses a manifest that breaks its schema
    del manifest["author"]
    broken = unpacked.parent / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text(json.dumps(manifest))
    refused = _run(mcpb_cli, "validate", broken)
    assert refused.returncode == 1 and "author" in refused.stdout


@pytest.mark.anyio
async def test_the_manifest_runs_the_installed_lore_mcp(
    unpacked: Path, mcpb_cli: Path, project: Project, conn: psycopg.Connection
) -> None:
    """A user who ran `pipx install git+URL` (lore in ~/.local/bin) and opened the bundle."""
    project.remember(conn, "acme-api deploys with make ship")
    bin_dir = project.home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "lore").symlink_to(LORE)
    config = _resolve(mcpb_cli, unpacked / "manifest.json", project.home, {})
    assert (config["command"], config["args"]) == ("lore", ["mcp"])
    assert config["env"]["PATH"].split(":")[0] == str(bin_dir)
    # the setting that names another lore replaces the command
    custom = _resolve(mcpb_cli, unpacked / "manifest.json", project.home, {"lore_command": str(LORE)})
    assert (custom["command"], custom["args"]) == (str(LORE), ["mcp"])

    # The desktop app starts it with its own environment; lore's test database and config come in
    # LORE_*; the app has no project folder, so the session is the config's default space (alpha).
    env = {**{k: v for k, v in project.env.items() if k != "PATH"}, **config["env"]}
    async with lore_stdio_session(env, cwd=project.home, binary=config["command"]) as session:
        tools = [t.name for t in (await session.list_tools()).tools]
        assert tools == [t.__name__ for t in TOOLS]
        recalled = await ok(session, "recall_facts")
        assert "acme-api deploys with make ship" in text(recalled)
        assert recalled.structured_content is not None and recalled.structured_content["space"] == "alpha"
