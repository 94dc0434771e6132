"""Trust round 4, item 5: `lore purge` of a handoff left its quoted message lines in the record of
what agents were told (`lore log show`); only the heading line naming the id went. The real hooks
write the handoff and the session start that quotes it; the real CLI purges and shows the record."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import psycopg
from integration.test_handoffs import hook as end_hook
from integration.test_handoffs import stop
from integration.test_hook import context, hook
from support import cli

from lore.core.session import Origin
from lore.store import facts


def test_purging_a_handoff_scrubs_its_quoted_lines_from_the_record(
    tmp_path: Path, lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    where = tmp_path / "acme-api"
    where.mkdir()
    subprocess.run(["git", "init", "-q", str(where)], check=True)
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "work"\npaths = ["{where}"]\n')
    env = {**lore_env, "LORE_HOOK_DEADLINE": "3"}
    facts.remember(conn, Origin("work", "cli", str(where)), "deploys with make ship")
    conn.commit()
    message = "QUOTE-ALPHA rotated the staging key\nQUOTE-BETA pasted it here by mistake\nQUOTE-GAMMA oops"
    end_hook(env, "session-end", stop(where, message))
    text = context(hook(env, {"cwd": str(where), "source": "startup", "session_id": "next"}))
    assert "QUOTE-ALPHA" in text and "QUOTE-BETA" in text and "(handoff n_1)" in text
    [record] = json.loads(cli.run("log", "--json", env=env, cwd=where).stdout)

    purged = cli.run("purge", "n_1", "--yes", env=env, cwd=where)
    assert purged.returncode == 0, purged.stderr
    shown = cli.run("log", "show", str(record["id"]), env=env, cwd=where)
    assert shown.returncode == 0, shown.stderr
    for gone in ("QUOTE-ALPHA", "QUOTE-BETA", "QUOTE-GAMMA", "n_1", "Last session here"):
        assert gone not in shown.stdout, (gone, shown.stdout)
    assert "deploys with make ship" in shown.stdout  # the rest of what was sent stays
    stored = conn.execute("SELECT string_agg(text, '') FROM injections").fetchone()
    assert stored is not None and "QUOTE-" not in str(stored[0])
