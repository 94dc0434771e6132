"""The MCP registry entry (`server.json`) against the registry's published schema, kept in the
repository (tests/tools/schemas/README.md says where it came from), and against the registry's rules
that a schema cannot say: the package is this distribution at this version, the README (the package's
PyPI description) names the server, and the command the entry describes is lore's."""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = Path(__file__).parent / "schemas" / "server.schema.json"
SCHEMA_SHA256 = "b482eb1ff78a30d9a2df3bfbd549637e61cd60db23aef95a2c3c9ec498003ab3"
SCHEMA_ID = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _errors(document: Any) -> list[str]:
    schema = _json(SCHEMA)
    Draft7Validator.check_schema(schema)
    return [
        f"{'/'.join(map(str, e.path))}: {e.message}" for e in Draft7Validator(schema).iter_errors(document)
    ]


def _project() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]  # type: ignore[no-any-return]


def test_the_kept_schema_is_the_published_file() -> None:
    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() == SCHEMA_SHA256
    assert _json(SCHEMA)["$id"] == SCHEMA_ID


def test_server_json_is_valid_and_describes_this_distribution() -> None:
    server = _json(ROOT / "server.json")
    assert _errors(server) == []
    assert server["$schema"] == SCHEMA_ID
    project = _project()
    assert server["version"] == project["version"]
    (package,) = server["packages"]
    assert (package["registryType"], package["identifier"]) == ("pypi", project["name"])
    assert package["version"] == project["version"]
    # The registry proves the PyPI package is the publisher's by this line in its description.
    assert f"mcp-name: {server['name']}" in (ROOT / project["readme"]).read_text()
    # A client runs `uvx shared-lore mcp`: the distribution's own name is a command, and it is lore.
    scripts = {e.name: e.value for e in metadata.distribution(project["name"]).entry_points}
    assert scripts[package["identifier"]] == scripts["lore"] == project["scripts"]["lore"]
    assert [a["value"] for a in package["packageArguments"]] == ["mcp"]
    assert package["transport"] == {"type": "stdio"}


def test_the_schema_refuses_what_the_registry_refuses() -> None:
    server = _json(ROOT / "server.json")
    too_long = copy.deepcopy(server)
    too_long["description"] = "x" * 101
    latest = copy.deepcopy(server)
    latest["packages"][0]["version"] = "latest"
    two_slashes = copy.deepcopy(server)
    two_slashes["name"] = "io.github.shared-lore/lore/extra"
    for bad in (too_long, latest, two_slashes):
        assert _errors(bad), bad


def test_every_packaging_says_this_version_and_these_tools() -> None:
    """The version lives in pyproject.toml; the packagings repeat it (and the bundle lists the tools,
    as Claude Desktop shows them before it starts anything)."""
    from lore.mcp.tools import TOOLS

    version = _project()["version"]
    assert _json(ROOT / "gemini-extension" / "gemini-extension.json")["version"] == version
    manifest = _json(ROOT / "mcpb" / "manifest.json")
    assert manifest["version"] == version
    assert [t["name"] for t in manifest["tools"]] == [t.__name__ for t in TOOLS]
    hooks = json.dumps(_json(ROOT / "gemini-extension" / "hooks" / "hooks.json"))
    assert (
        "lore hook session-start --client gemini" in hooks
        and "lore hook session-end --client gemini" in hooks
    )
