"""The hosted session-start hook (`LORE_URL` + `LORE_TOKEN`), `lore config push`, and a server that
redirects: urllib would follow the redirect and send the bearer token to the new origin (and print
what that origin says into the session). Both refuse every redirect: nothing is sent on, nothing of
the other origin printed; the agent reads one line saying why, and the hook log (or config push's
error) says it too. Two local HTTP servers stand for lore's server and the other origin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lore.core import hooklog
from lore.core.errors import RemoteError
from lore.hooks import remote

LORE = str(Path(sys.executable).parent / "lore")
TOKEN = "lore_" + "t" * 43  # a token's shape; the value is made up


class _Server:
    def __init__(self, respond: tuple[int, dict[str, str], bytes]) -> None:
        self.respond = respond
        self.seen: list[dict[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.seen.append({k.lower(): v for k, v in self.headers.items()})
                if self.command in ("PUT", "POST"):
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                code, headers, body = outer.respond
                self.send_response(code)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_PUT = do_POST = do_GET

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def elsewhere() -> Iterator[_Server]:
    """The other origin: answers like lore's server would, with text of its own choosing."""
    body = json.dumps({"text": "INJECTED by the other origin", "space": "x", "shown": 1, "omitted": 0})
    server = _Server((200, {"Content-Type": "application/json"}, body.encode()))
    yield server
    server.close()


def _redirecting(code: int, to: str) -> _Server:
    return _Server((code, {"Location": to}, b""))


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_redirect_is_refused_and_the_token_stays_home(
    code: int, elsewhere: _Server, tmp_path: Path
) -> None:
    # A hook that ran out of its soft deadline before its request reached the server proves nothing
    # about redirects: it is run again (at most 3 times), each time with a fresh server and hook log.
    # CI saw it once near the end of a loaded run ("soft deadline of 3.0s passed", the server never
    # asked); the deadline cannot go higher (guard.DEADLINE_RANGE).
    for attempt in range(3):
        server = _redirecting(code, f"{elsewhere.url}/api/hooks/session-start")
        try:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(tmp_path),
                "LORE_DATA_DIR": str(tmp_path / f"data-{attempt}"),
                "LORE_URL": server.url,
                "LORE_TOKEN": TOKEN,
                # the suite's hook deadline (tests/conftest.py, lore_env), not 0.9 s: under the
                # parallel run a hook process can wait a second for a core
                "LORE_HOOK_DEADLINE": "3",
            }
            ran = subprocess.run(
                [LORE, "hook", "session-start", "--client", "claude-code"],
                input='{"cwd": "/srv/acme", "source": "startup"}',
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
        finally:
            server.close()
        entries = hooklog.entries(env)
        if server.seen or not any(e.detail.startswith("deadline") for e in entries):
            break
    assert ran.returncode == 0 and "INJECTED" not in ran.stdout  # nothing of the other origin
    told = json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
    assert told.startswith("lore: the shared memory is unavailable") and "redirect" in told, told
    assert TOKEN not in ran.stdout
    assert len(server.seen) == 1, [e.detail for e in entries]
    assert server.seen[0].get("authorization") == f"Bearer {TOKEN}"
    assert elsewhere.seen == []  # never asked: the token did not travel
    [entry] = entries
    assert not entry.ok and "redirect" in entry.detail and str(code) in entry.detail
    assert elsewhere.url in entry.detail  # where it pointed (the origin only)
    assert TOKEN not in entry.detail


def test_a_redirect_to_the_same_origin_is_refused_too(tmp_path: Path) -> None:
    """The final address belongs in LORE_URL; the hook never guesses (an https upgrade included)."""
    server = _redirecting(308, "/elsewhere/api/session-start")
    try:
        with pytest.raises(RemoteError, match=r"redirect.*308.*LORE_URL") as refused:
            remote.call(server.url, TOKEN, "/api/session-start?workspace=/srv/acme", None, timeout=10)
    finally:
        server.close()
    assert len(server.seen) == 1 and TOKEN not in str(refused.value)


def test_the_location_is_shown_without_its_path_or_credentials(elsewhere: _Server) -> None:
    host = elsewhere.url.removeprefix("http://")
    server = _redirecting(302, f"http://user:pw@{host}/steal?token={TOKEN}")
    try:
        with pytest.raises(RemoteError) as refused:
            remote.call(server.url, TOKEN, "/api/session-start?workspace=/srv/acme", None, timeout=10)
    finally:
        server.close()
    said = str(refused.value)
    assert elsewhere.url in said and "pw" not in said and "steal" not in said and TOKEN not in said
    assert elsewhere.seen == []


@pytest.mark.parametrize("code", [302, 307, 308])
def test_config_push_refuses_a_redirect_too(code: int, elsewhere: _Server, tmp_path: Path) -> None:
    """`lore config push` PUTs the config with the token: a redirect stops it, and says where to."""
    config = tmp_path / "config.toml"
    config.write_text('[[space]]\nid = "acme"\npaths = ["~/src/acme"]\n')
    server = _redirecting(code, f"http://user:pw@{elsewhere.url.removeprefix('http://')}/api/config?x=1")
    try:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
        env |= {"LORE_URL": server.url, "LORE_TOKEN": TOKEN, "LORE_DATA_DIR": str(tmp_path / "data")}
        ran = subprocess.run(
            [LORE, "config", "push", str(config)], env=env, capture_output=True, text=True, timeout=60
        )
    finally:
        server.close()
    assert ran.returncode != 0 and "Traceback" not in ran.stderr, ran.stderr
    assert f"redirect ({code}) to {elsewhere.url}" in ran.stderr and "LORE_URL" in ran.stderr, ran.stderr
    assert "pw" not in ran.stderr and TOKEN not in ran.stderr + ran.stdout
    assert len(server.seen) == 1, ran.stderr
    assert server.seen[0].get("authorization") == f"Bearer {TOKEN}"
    assert elsewhere.seen == []  # the token and the config stayed home
