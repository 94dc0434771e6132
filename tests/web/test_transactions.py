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
from support.lorehttp import push, token

from lore.core import injection
from lore.core.config import Config
from lore.core.outcomes import Outcome
from lore.core.session import Origin
from lore.http.web import routes
from lore.service.runtime import Runtime
from lore.store import facts, graph, injections, messages, notes, tasks, userconfig

BASE = "http://127.0.0.1:8765"


@dataclass(frozen=True)
class Seeded:
    facts: list[str]
    notes: list[str]
    task: str
    record: int


def _seed(conn: psycopg.Connection, project: Path, config: Config, user: str) -> Seeded:
    """Memory of both spaces (`<user>/work` in sign-in mode), as agents write it."""
    prefix = f"{user}/" if user else ""
    work = Origin(f"{prefix}work", "claude-code", str(project / "work"))
    home = Origin(f"{prefix}home", "codex", str(project / "home"))
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
    graph.link(conn, work, [work.space], written[0].lineage, "depends_on", written[1].lineage)
    task = tasks.file(conn, config, home, work.space, "Bump the base image", "Security fix.")
    first = messages.send(conn, config, home, work.space, "Is the deploy freeze on?")
    messages.send(conn, config, work, home.space, "Yes, until Friday.", reply_to=first.num)
    row = injection.outcome_row(
        "session-start",
        Outcome("shown"),
        client="claude-code",
        workspace=str(project / "work"),
        space=work.space,
        readable=[work.space, home.space],
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


@dataclass
class UI:
    """The web UI in this process, signed in; `taken`: the pooled connections handed out since it
    was last cleared (what `transact` and every use case reach the database through)."""

    client: TestClient
    csrf: str
    seeded: Seeded
    project: Path
    taken: list[int]
    sign_in: bool


def _config(project: Path) -> str:
    return (
        f'default_space = "work"\n[[space]]\nid = "work"\npaths = ["{project}/work"]\n'
        'reads_from = ["home"]\naccepts_from = ["home"]\n'
        f'[[space]]\nid = "home"\npaths = ["{project}/home"]\naccepts_from = ["work"]\n'
    )


@pytest.fixture(params=["local", "sign-in"])
def ui(
    request: pytest.FixtureRequest, lore_env: dict[str, str], tmp_path: Path, conn: psycopg.Connection
) -> Iterator[UI]:
    """Local mode (signed in through the one-time link) or sign-in mode (alice, with her personal
    token): the runtime's every pooled connection counted and every statement watched."""
    sign_in = request.param == "sign-in"
    project = tmp_path / "proj"
    for name in ("work", "home"):
        (project / name).mkdir(parents=True)
    secret = ""
    if sign_in:
        secret = token(conn, "alice")
        push(conn, "alice", _config(project))
    else:
        Path(lore_env["LORE_CONFIG"]).write_text(_config(project))
    rt = Runtime(env={**lore_env, "LORE_EMBEDDER": "fake"}, transport="http")
    if sign_in:
        rt.sign_in(lambda: None)
    rt.pool()  # opened (and migrated) before counting
    config = userconfig.load(conn, "alice").config if sign_in else rt.config()
    seeded = _seed(conn, project, config, "alice" if sign_in else "")
    taken: list[int] = []
    real = rt.connections.connection  # what rt.transact takes its connections from

    @contextmanager
    def connection() -> Iterator[psycopg.Connection]:
        taken.append(1)
        with real() as conn:
            conn.cursor_factory = _Watched
            try:
                yield conn
            finally:
                conn.cursor_factory = psycopg.Cursor

    rt.connections.connection = connection  # type: ignore[method-assign]
    try:
        client = _signed_in(rt, sign_in, secret, taken)
        yield UI(client, _csrf(client), seeded, project, taken, sign_in)
    finally:
        rt.close()


def _signed_in(rt: Runtime, sign_in: bool, secret: str, taken: list[int]) -> TestClient:
    """Signed in through the sign-in form: its POST one transaction (a token checked and, in
    sign-in mode, the session started) or none (local mode's link)."""
    app = Starlette()
    link = routes.mount(app, rt, sign_in=sign_in, base_url=BASE)
    client = TestClient(app, base_url=BASE, follow_redirects=False)
    form = client.get(link.removeprefix(BASE) if link else "/sign-in")
    csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert form.status_code == 200 and csrf is not None
    fields = {"token": secret} if sign_in else {"code": (link or "").rsplit("code=", 1)[1]}
    taken.clear()
    done = client.post("/sign-in", data={**fields, "csrf": csrf.group(1), "next": "/spaces"})
    assert done.status_code == 303, done.text
    assert len(taken) == (1 if sign_in else 0)
    return client


def _csrf(client: TestClient) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get("/spaces").text)
    assert found is not None
    return found.group(1)


def test_every_page_and_every_form_is_one_transaction(ui: UI) -> None:
    """One pooled connection and on it one transaction per page and per form; in sign-in mode the
    guard's look-up of the session cookie comes first (one statement on a connection of its own)."""
    fact, other, alike, last = ui.seeded.facts
    note, _, third, _ = ui.seeded.notes
    pages: list[tuple[str, str]] = [
        ("/spaces", "/spaces"),
        ("/spaces", f"/spaces?which={ui.project / 'work'}"),
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
        ("/log/{id}", f"/log/{ui.seeded.record}"),
        ("/tidy", "/tidy"),
    ]
    forms: list[tuple[str, str, dict[str, str | list[str]]]] = [
        ("/facts/add", "/facts/add?space=work", {"statement": "The CI runs on every push"}),
        ("/facts/{id}/revise", f"/facts/{fact}/revise", {"statement": "acme-api deploys with make release"}),
        ("/facts/{id}/forget", f"/facts/{last}/forget", {"reason": "no longer true"}),
        ("/notes/{id}/edit", f"/notes/{note}/edit", {"body": "make ship, then watch", "kind": "devenv"}),
        ("/notes/{id}/link", f"/notes/{note}/link", {"other": third, "relation": "relates_to"}),
        ("/notes/{id}/forget", f"/notes/{ui.seeded.notes[3]}/forget", {"reason": "a copy"}),
        ("/tasks/{id}", f"/tasks/{ui.seeded.task}", {"action": "accept"}),
        ("/tidy/act", "/tidy/act?space=work", {"act": "keep", "item": [other, alike]}),
    ]
    assert {route for route, _ in pages} == set(routes.PAGES)
    assert {route for route, _, _ in forms} == set(routes.FORMS)
    Form = dict[str, str | list[str]]
    requests: list[tuple[str, str, Form]] = [("GET", url, {}) for _, url in pages]
    requests += [("POST", url, form) for _, url, form in forms]
    seen: dict[str, tuple[int, list[str]]] = {}
    for method, url, form in requests:
        ui.taken.clear()
        _Watched.alone.clear()
        answer = ui.client.request(method, url, data={**form, "csrf": ui.csrf} if form else None)
        said = f"{url}: {answer.status_code} {answer.text[:500]}"
        assert answer.status_code == (303 if form else 200), said
        seen[f"{method} {url}"] = len(ui.taken), [q for q in _Watched.alone if "FROM tokens" not in q]
        assert len(_Watched.alone) == len(seen[f"{method} {url}"][1]) + ui.sign_in  # the session's
    # one connection for each (and the session's in sign-in mode), and on it one transaction
    assert seen == dict.fromkeys(seen, (1 + ui.sign_in, []))


def test_a_form_never_writes_an_item_of_another_persons_space(ui: UI, conn: psycopg.Connection) -> None:
    """An item the person cannot read is not found, whatever the form: nothing written."""
    stranger = Origin("bob/work" if ui.sign_in else "someone-else", "claude-code", None)
    theirs = facts.remember(conn, stranger, "their fact")
    their_note = notes.remember(conn, stranger, "their note", kind="note")
    conn.commit()
    mine = ui.seeded.notes[0]
    for url, form in [
        (f"/facts/{theirs.id}/revise", {"statement": "changed"}),
        (f"/facts/{theirs.id}/forget", {"reason": "x"}),
        (f"/notes/{their_note.id}/edit", {"body": "changed", "kind": "note"}),
        (f"/notes/{their_note.id}/link", {"other": mine, "relation": "relates_to"}),
        (f"/notes/{mine}/link", {"other": their_note.id, "relation": "relates_to"}),
        (f"/notes/{their_note.id}/forget", {"reason": "x"}),
    ]:
        answer = ui.client.post(url, data={**form, "csrf": ui.csrf})
        assert answer.status_code in (403, 404), f"{url}: {answer.status_code}"
    for url in (f"/facts/{theirs.id}", f"/notes/{their_note.id}"):
        answer = ui.client.get(url)
        assert answer.status_code == 404 and "their" not in answer.text
    there = (stranger.space,)  # one version each: not revised
    assert conn.execute("SELECT count(*) FROM facts WHERE space = %s", there).fetchone() == (1,)
    assert conn.execute("SELECT count(*) FROM notes WHERE space = %s", there).fetchone() == (1,)
    assert conn.execute("SELECT count(*) FROM forget_log").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM edges").fetchone() == (1,)  # the seed's only
