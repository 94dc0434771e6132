"""Browser tests of the web UI: Playwright (from PyPI) driving Debian's Chromium, headless, against a
real `lore serve` on loopback over the test database. Playwright's own browser download cannot work
here, so the browser is `/usr/bin/chromium` (`make test` installs it when missing)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, Response, sync_playwright
from support.lorehttp import Server, push, start_server, token

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


@pytest.fixture(scope="module")  # Playwright's sync API holds this thread's event loop while it
def browser() -> Iterator[Browser]:  # lives: closed after each module, so async tests elsewhere run
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's chromium. "
            "Run `make chromium` (as root: apt-get update && apt-get install -y chromium)."
        )
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@dataclass
class Watched:
    """A page plus everything it said on the side: console messages, dialogs, page errors."""

    page: Page
    console: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def screenshot(self, name: str, *, full_page: bool = True) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


@pytest.fixture
def web(browser: Browser) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    page = context.new_page()
    page.set_default_timeout(15_000)
    watched = Watched(page)
    page.on("console", lambda m: watched.console.append(f"{m.type}: {m.text}") if _loud(m) else None)
    page.on("response", lambda r: watched.errors.append(f"{r.status} {r.url}") if _broken(r) else None)

    def dialog(d: Dialog) -> None:
        watched.dialogs.append(f"{d.type}: {d.message}")
        d.dismiss()

    page.on("dialog", dialog)
    page.on("pageerror", lambda exc: watched.errors.append(str(exc)))
    try:
        yield watched
    finally:
        context.close()
    # Every page of every test: no script error, no CSP violation, no dialog, nothing failed to load.
    assert watched.dialogs == [] and watched.errors == [] and watched.console == []


def _loud(message: ConsoleMessage) -> bool:
    """Errors and warnings, except Chromium's note on a page answered 4xx on purpose (checked by
    `_broken` instead: any failed stylesheet or script, any 5xx)."""
    if message.text.startswith("Failed to load resource: the server responded with a status of 4"):
        return False
    return message.type in ("error", "warning")


def _broken(response: Response) -> bool:
    return response.status >= 500 or (response.status >= 400 and response.request.resource_type != "document")


@dataclass
class Team:
    """`lore serve --sign-in` with two users, alice and bob, each with the same two spaces."""

    server: Server
    tokens: dict[str, str]
    project: Path

    @property
    def url(self) -> str:
        return self.server.url


def config(base: Path) -> str:
    return (
        'default_space = "work"\n'
        f'[[space]]\nid = "work"\npaths = ["{base}/work"]\nremotes = ["github.com/acme/*"]\n'
        'reads_from = ["home"]\naccepts_from = ["home"]\n'
        f'[[space]]\nid = "home"\npaths = ["{base}/home"]\n'
    )


@pytest.fixture
def team(lore_env: dict[str, str], tmp_path: Path, conn: psycopg.Connection) -> Iterator[Team]:
    project = tmp_path / "proj"
    for name in ("work", "home"):
        (project / name).mkdir(parents=True)
    tokens = {name: token(conn, name) for name in ("alice", "bob")}
    for name in tokens:
        push(conn, name, config(project))
    env = {**lore_env, "LORE_EMBEDDER": "fake"}
    with start_server(env, tmp_path / "serve.log", "--sign-in") as server:
        yield Team(server, tokens, project)


def sign_in(web: Watched, url: str, secret: str, path: str = "/") -> None:
    page = web.page
    page.goto(url + path)
    page.wait_for_url(re.compile(r"/sign-in\?next="))
    page.get_by_label("Token").fill(secret)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_url(re.compile(r"/(spaces|facts|notes|tasks|messages|log)"))


def link_from_log(server: Server, timeout: float = 10) -> str:
    """The one-time sign-in link that local mode prints in its terminal."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(r"web UI: open (\S+) to sign in", server.logs())
        if found:
            return found.group(1)
        time.sleep(0.1)
    raise AssertionError(f"no sign-in link in the log:\n{server.logs()}")


def wait_embedded(conn: psycopg.Connection, timeout: float = 30) -> None:
    """Until the server's background worker has embedded every current note (fake embedder: fast)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = conn.execute("SELECT count(*) FROM notes WHERE embedding IS NULL AND superseded_at IS NULL")
        if row.fetchone() == (0,):
            return
        time.sleep(0.1)
    raise AssertionError("notes were not embedded in time")
