"""The README's "Team / hosted" recipe, command by command (the server on 127.0.0.1 instead of
0.0.0.0: tests bind loopback only), against an external-URL database (LORE_DATABASE_URL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.lorehttp import bearer, mcp_session, run_lore, start_server
from support.mcpclient import ok

pytestmark = pytest.mark.anyio
README = Path(__file__).resolve().parents[2] / "README.md"


async def test_the_readme_team_recipe_works(lore_env: dict[str, str], db_url: str, tmp_path: Path) -> None:
    readme = README.read_text()
    section = readme[readme.index("## Team / hosted") : readme.index("## Commands")]
    for line in (
        "lore token create alice --expires 90d",
        "lore serve --sign-in --host 0.0.0.0 --port 8765",
        "lore login http://lore.internal:8765",
        "lore config push",
        "lore install claude-code ",
        'claude mcp add --transport http lore "$LORE_URL/mcp" --header "Authorization: Bearer $LORE_TOKEN" '
        '--header "X-Lore-Workspace: $PWD"',
    ):
        assert line in section, line

    server_env = {**lore_env, "LORE_DATABASE_URL": db_url, "LORE_CONFIG": str(tmp_path / "absent.toml")}
    created = run_lore(server_env, "token", "create", "alice", "--expires", "90d")
    assert created.returncode == 0, created.stderr
    secret = created.stdout.strip()
    server = start_server(server_env, tmp_path / "serve.log", "--sign-in", "--host", "127.0.0.1")
    try:
        project = Path(lore_env["HOME"]) / "codes" / "acme-api"
        project.mkdir(parents=True)
        Path(lore_env["LORE_CONFIG"]).write_text(
            'default_space = "personal"\n[[space]]\nid = "personal"\n'
            '[[space]]\nid = "acme"\npaths = ["~/codes/acme-*"]\n'
        )
        alice = dict(lore_env)  # no LORE_URL, no LORE_TOKEN: what `lore login` stored
        signed = run_lore(alice, "login", server.url, "--with-token", stdin=secret + "\n")
        assert signed.returncode == 0 and secret not in signed.stdout + signed.stderr, signed.stderr
        pushed = run_lore(alice, "config", "push")
        assert pushed.returncode == 0 and "spaces personal, acme" in pushed.stdout, pushed.stderr
        # What `claude mcp add ... --header ...` makes Claude Code send, from inside the project.
        async with mcp_session(server.url, bearer(secret, project), client="claude-code") as s:
            assert (await ok(s, "remember_fact", statement="acme ships with make ship")).structured_content[
                "space"
            ] == "alice/acme"
        hook = run_lore(
            alice, "hook", "session-start", stdin=json.dumps({"cwd": str(project), "source": "startup"})
        )
        context = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "acme ships with make ship" in context and 'space="alice/acme"' in context
    finally:
        server.stop()
