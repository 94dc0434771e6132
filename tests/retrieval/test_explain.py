"""`lore search QUERY --explain`: why each candidate came or went, from the same code as search_notes
(its trace): ranks and scores on each side, the fused score, the threshold, and the reason for every
candidate that is not a hit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import psycopg
from support import cli

from lore.core.session import Origin
from lore.store import notes, search


def test_explain_names_the_threshold_the_rejection_and_the_other_space(
    tmp_path: Path, lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    work, home = tmp_path / "acme", tmp_path / "blog"
    for d in (work, home):
        d.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'[[space]]\nid = "work"\npaths = ["{work}"]\n[[space]]\nid = "home"\npaths = ["{home}"]\n'
    )
    env = {**lore_env, "LORE_EMBEDDER": "none"}  # keyword only: the scores are exact
    here = Origin("work", "cli", str(work))
    strong = notes.remember(
        conn, here, "deploy deploy deploy: the deploy runs make ship, deploy by deploy", title="Deploy"
    )
    weak = notes.remember(conn, here, "A long note about many things. " * 40 + "It mentions a deploy once.")
    unwanted = notes.remember(
        conn, here, "Deploy notes from the old system: deploy with fabric", title="Old deploy"
    )
    search.mark_irrelevant(conn, here, ["work"], unwanted.lineage, "deploy", vector=None, model=None)
    theirs = notes.remember(conn, Origin("home", "cli", str(home)), "home deploy of the blog")
    conn.commit()
    done = cli.run("search", "deploy", "--explain", "--json", env=env, cwd=work)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert [r["id"] for r in found["results"]] == [strong.id]
    fate = {f"n_{c['lineage']}": c for c in found["candidates"]}
    assert fate[strong.id]["outcome"] == "hit 1" and fate[strong.id]["keyword_rank"] == 1
    assert fate[weak.id]["outcome"].startswith("dropped: below the threshold"), fate[weak.id]
    assert fate[unwanted.id]["outcome"] == "dropped: marked irrelevant for a close query"
    assert found["other_spaces"] == [{"id": theirs.id, "space": "home"}]
    text = cli.run("search", "deploy", "--explain", env=env, cwd=work).stdout
    assert "Threshold:" in text and "dropped: other space (home: not read from here)" in text
