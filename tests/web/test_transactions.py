"""Issue 39, item 6: one use case, one transaction per page and per form. Every route of the web UI
(lore.http.web.routes.PAGES and FORMS), requested in this process (local mode, the one-time link),
with every pooled connection the runtime hands out counted: each page and each form takes exactly
one (lore.service.pages, lore.service.forms), and its status says it did all it does."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self

import psycopg
import pytest
from psycopg.pq import TransactionStatus
from starlette.applications import Starlette
from starlette.testclient import TestClient

from lore.core import injection
from lore.core.config import Config
from lore.core.outcomes import Outcome
from lore.core.session import Origin
from lore.http.web import routes
from lore.service.runtime import Runtime
from lore.store import facts, graph, injections, messages, notes, tasks

BASE = "http://127.0.0.1:8765"


@dataclass(frozen=True)
class Seeded:
    facts: list[str]
    notes: list[str]
    task: str
    record: int


def _seed(conn: psycopg.Connection, project: Path, config: Config) -> Seeded:
    work = Origin("work", "claude-code", str(project / "work"))
    home = Origin("home", "codex", str(project / "home"))
    made = [
        facts.remember(conn, work, "acme-api deploys with make ship", subject="work"),
        facts.remember(conn, work, "Staging is refreshed every Monday night"),
        facts.remember(conn, work, "The staging database is refreshed on Mondays"),
        facts.remember(conn, work, "Releases are tagged vX.Y.Z"),
    ]
    facts.remember(conn, home, "Dotfiles live in ~/dotfiles")
    written = [
        notes.remember(conn, work, f"Deploys, part {i}: make ship rolls the pods.", kind="devenv")
        for i in range(4)
    ]
    graph.link(conn, work, ["work"], written[0].lineage, "depends_on", written[1].lineage)
    task = tasks.file(conn, config, home, "work", "Bump the base image", "Security fix.")
    first = messages.send(conn, config, home, "work", "Is the deploy freeze on?")
    messages.send(conn, config, work, "home", "Yes, until Friday.", reply_to=first.num)
    row = injection.outcome_row(
        "session-start",
        Outcome("shown"),
        client="claude-code",
        workspace=str(project / "work"),
        space="work",
        readable=["work", "home"],
        text="- acme-api deploys with make ship",
    )
    record = injections.record(conn, row, 30)
    conn.commit()
    return Seeded([f.id for f in made], [n.id for n in written], task.id, record)


class _Watched(psycopg.Cursor[Any]):
    """A cursor that notes each statement run outside a transaction block (autocommit: a
    transaction of its own)."""

    alone: ClassVar[list[str]] = []

    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Self:
        if self.connection.info.transaction_status == TransactionStatus.IDLE:
            _Watched.alone.append(str(query)[:200])
        return super().execute(query, params, **kwargs)


@pytest.fixture
def counted(lore_env: dict[str, str], tmp_path: Path) -> Iterator[tuple[Runtime, list[int]]]:
    """A local-mode runtime whose every pooled connection is counted (what `transact` and every
    use case reach the database through), and whose every statement is watched (_Watched.alone:
    those run outside a transaction block)."""
    project = tmp_path / "proj"
    for name in ("work", "home"):
        (project / name).mkdir(parents=True)
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'default_space = "work"\n[[space]]\nid = "work"\npaths = ["{project}/work"]\n'
        'reads_from = ["home"]\naccepts_from = ["home"]\n'
        f'[[space]]\nid = "home"\npaths = ["{project}/home"]\naccepts_from = ["work"]\n'
    )
    rt = Runtime(env={**lore_env, "LORE_EMBEDDER": "fake"}, transport="http")
    rt.pool()  # opened (and migrated) before counting
    taken: list[int] = []
    real = rt.connection

    @contextmanager
    def connection() -> Iterator[psycopg.Connection]:
        taken.append(1)
        with real() as conn:
            conn.cursor_factory = _Watched
            try:
                yield conn
            finally:
                conn.cursor_factory = psycopg.Cursor

    rt.connection = connection  # type: ignore[method-assign]
    try:
        yield rt, taken
    finally:
        rt.close()


def _signed_in(rt: Runtime) -> TestClient:
    app = Starlette()
    link = routes.mount(app, rt, sign_in=False, base_url=BASE)
    assert link is not None
    client = TestClient(app, base_url=BASE, follow_redirects=False)
    form = client.get(link.removeprefix(BASE))
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert form.status_code == 200 and csrf is not None
    code = link.rsplit("code=", 1)[1]
    done = client.post("/sign-in", data={"code": code, "csrf": csrf.group(1), "next": "/spaces"})
    assert done.status_code == 303, done.text
    return client


def _csrf(client: TestClient) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get("/spaces").text)
    assert found is not None
    return found.group(1)


def test_every_page_and_every_form_is_one_transaction(
    counted: tuple[Runtime, list[int]], conn: psycopg.Connection, tmp_path: Path
) -> None:
    rt, taken = counted
    seeded = _seed(conn, tmp_path / "proj", rt.config())
    fact, other, alike, last = seeded.facts
    note, _, third, gone = seeded.notes
    pages: list[tuple[str, str]] = [
        ("/spaces", "/spaces"),
        ("/spaces", f"/spaces?which={tmp_path / 'proj' / 'work'}"),
        ("/facts", "/facts"),
        ("/facts", "/facts?space=home"),
        ("/facts/{id}", f"/facts/{fact}"),
        ("/facts/{id}", f"/facts/{fact}?said=remembered&similar={other}&conflicts={alike}"),
        ("/notes", "/notes"),
        ("/notes", "/notes?kind=handoff"),
        ("/notes", "/notes?q=deploys+make+ship"),
        ("/notes", "/notes?q=deploys&explain=1&space=work"),
        ("/notes/{id}", f"/notes/{note}"),
        ("/tasks", "/tasks"),
        ("/messages", "/messages"),
        ("/sessions", "/sessions"),
        ("/log", "/log"),
        ("/log/{id}", f"/log/{seeded.record}"),
        ("/tidy", "/tidy"),
    ]
    forms: list[tuple[str, str, dict[str, str | list[str]]]] = [
        ("/facts/add", "/facts/add?space=work", {"statement": "The CI runs on every push"}),
        ("/facts/{id}/revise", f"/facts/{fact}/revise", {"statement": "acme-api deploys with make release"}),
        ("/facts/{id}/forget", f"/facts/{last}/forget", {"reason": "no longer true"}),
        ("/notes/{id}/edit", f"/notes/{note}/edit", {"body": "make ship, then watch", "kind": "devenv"}),
        ("/notes/{id}/link", f"/notes/{note}/link", {"other": third, "relation": "relates_to"}),
        ("/notes/{id}/forget", f"/notes/{gone}/forget", {"reason": "a copy"}),
        ("/tasks/{id}", f"/tasks/{seeded.task}", {"action": "accept"}),
        ("/tidy/act", "/tidy/act?space=work", {"act": "keep", "item": [other, alike]}),
    ]
    assert {route for route, _ in pages} == set(routes.PAGES)
    assert {route for route, _, _ in forms} == set(routes.FORMS)
    client = _signed_in(rt)
    csrf = _csrf(client)
    seen: dict[str, int] = {}
    alone: dict[str, list[str]] = {}
    for _, url in pages:
        taken.clear()
        _Watched.alone.clear()
        answer = client.get(url)
        assert answer.status_code == 200, f"{url}: {answer.status_code} {answer.text[:500]}"
        seen[f"GET {url}"], alone[f"GET {url}"] = len(taken), list(_Watched.alone)
    for _, url, form in forms:
        taken.clear()
        _Watched.alone.clear()
        answer = client.post(url, data={**form, "csrf": csrf})
        assert answer.status_code == 303, f"{url}: {answer.status_code} {answer.text[:500]}"
        seen[f"POST {url}"], alone[f"POST {url}"] = len(taken), list(_Watched.alone)
    assert seen == dict.fromkeys(seen, 1)  # one connection each,
    assert alone == {key: [] for key in alone}  # and on it, one transaction


def test_a_form_never_writes_an_item_of_another_persons_space(
    counted: tuple[Runtime, list[int]], conn: psycopg.Connection, tmp_path: Path
) -> None:
    """An item the person cannot read is not found, whatever the form: nothing written."""
    rt, _ = counted
    seeded = _seed(conn, tmp_path / "proj", rt.config())
    stranger = Origin("someone-else", "claude-code", None)
    theirs = facts.remember(conn, stranger, "their fact")
    their_note = notes.remember(conn, stranger, "their note", kind="note")
    conn.commit()
    client = _signed_in(rt)
    csrf = _csrf(client)
    for url, form in [
        (f"/facts/{theirs.id}/revise", {"statement": "changed"}),
        (f"/facts/{theirs.id}/forget", {"reason": "x"}),
        (f"/notes/{their_note.id}/edit", {"body": "changed", "kind": "note"}),
        (f"/notes/{their_note.id}/link", {"other": seeded.notes[0], "relation": "relates_to"}),
        (f"/notes/{seeded.notes[0]}/link", {"other": their_note.id, "relation": "relates_to"}),
        (f"/notes/{their_note.id}/forget", {"reason": "x"}),
    ]:
        answer = client.post(url, data={**form, "csrf": csrf})
        assert answer.status_code in (403, 404), f"{url}: {answer.status_code}"
    for url in (f"/facts/{theirs.id}", f"/notes/{their_note.id}"):
        answer = client.get(url)
        assert answer.status_code == 404 and "their" not in answer.text
    with conn.cursor() as cur:
        assert cur.execute("SELECT count(*) FROM facts WHERE space = 'someone-else'").fetchone() == (1,)
        assert cur.execute("SELECT count(*) FROM notes WHERE space = 'someone-else'").fetchone() == (1,)
        assert cur.execute("SELECT count(*) FROM edges").fetchone() == (1,)
