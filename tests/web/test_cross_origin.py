"""The attack of issue 12 in a real Chromium: a page of another origin POSTs to a local `lore serve`
(no sign-in) with `mode: 'no-cors'` and a `text/plain` body, which needs no CORS preflight. Nothing
may be stored (it would be injected into every session start).

The attacking page is served from another port of this machine: Chromium's Local Network Access
checks stop a page of a public site from reaching loopback at all (other browsers do not, and a user
can allow it), but not a page of a local origin: another dev server, an HTML file, a local app."""

from __future__ import annotations

import html
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import psycopg
from playwright.sync_api import Browser
from support.lorehttp import start_server

PAGE = b"<!doctype html><title>cute cats</title><p>nothing to see"


class _Evil(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def evil_site() -> Iterator[str]:
    """The attacker's page, at http://127.0.0.1:<another port>/: a different origin."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Evil)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def stored(conn: psycopg.Connection) -> list[str]:
    conn.rollback()  # a fresh snapshot: the server writes from its own connection
    return [row[0] for row in conn.execute("SELECT statement FROM facts ORDER BY version_id")]


def test_a_page_of_another_origin_cannot_write_memory(
    lore_env: dict[str, str], tmp_path: Path, conn: psycopg.Connection, browser: Browser
) -> None:
    work = tmp_path / "w"
    work.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "solo"\npaths = ["{work}"]\n')
    server = start_server(lore_env, tmp_path / "serve.log")
    context = browser.new_context()
    try:
        with evil_site() as evil:
            target = f"{server.url}/api/facts?workspace={work}"
            script = f"""
                async () => {{
                  const sent = [];
                  for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {{
                    await fetch({json.dumps(target)}, {{method: "POST", mode: "no-cors",
                      headers: {{"Content-Type": type}},
                      body: JSON.stringify({{statement: "INJECTED by " + location.origin}})}});
                    sent.push(type);
                  }}
                  return sent;
                }}"""
            page = context.new_page()
            page.goto(f"{evil}/")
            assert page.evaluate(script) == ["text/plain", "application/x-www-form-urlencoded"]
            # A sandboxed frame of that page (its Origin is `null`) tries the same.
            inner = (
                f"<script>fetch({json.dumps(target)}, {{method: 'POST', mode: 'no-cors', "
                "body: JSON.stringify({statement: 'INJECTED from a null origin'})})</script>"
            )
            page.set_content(f'<iframe sandbox="allow-scripts" srcdoc="{html.escape(inner)}"></iframe>')
            deadline = time.monotonic() + 15
            while "Origin 'null'" not in server.logs() and not stored(conn) and time.monotonic() < deadline:
                time.sleep(0.1)  # the frame's request, answered either way
        assert stored(conn) == []
        log = server.logs()
        assert f"refused POST /api/facts from Origin '{evil}'" in log, log
        assert "refused POST /api/facts from Origin 'null'" in log, log
    finally:
        context.close()
        server.stop()
