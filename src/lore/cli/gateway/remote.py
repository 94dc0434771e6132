"""The gateway to a server: each method is one request to the `/api` route that calls the same use case
as the local command (lore.cli.gateway.local), with the command's workspace, its git remotes and
`X-Lore-Client: cli`; the answer is lore.service.wire's JSON. The server's refusals come back as the
same errors (message and hint) a local command raises. Standard library HTTP (lore.hooks.remote): no
redirect is followed (the token would go along), and no message ever holds the token."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from lore.cli.gateway import workspace_path
from lore.core import errors
from lore.hooks import remote
from lore.hooks.credentials import Server

Json = dict[str, Any]
TIMEOUT = 30.0
# The error each HTTP status of lore's /api stands for (lore.core.errors.HTTP_STATUS read back: the
# first kind listed for a status).
KINDS: dict[int, type[errors.LoreError]] = {}
for _kind, _code in errors.HTTP_STATUS:
    KINDS.setdefault(_code, _kind)


class Remote:
    def __init__(self, server: Server, env: Mapping[str, str], cwd: str) -> None:
        self.server, self.env, self.cwd = server, env, cwd
        self.where = server.origin

    # --- one request ------------------------------------------------------------------------------

    def _headers(self, workspace: Any) -> dict[str, str]:
        from lore.hooks.hosted import where

        headers = {"X-Lore-Client": "cli", "User-Agent": "lore-cli"}
        if workspace is not False:
            here = where(workspace_path(workspace, self.env, self.cwd))
            headers["X-Lore-Workspace"] = here["workspace"]
            if here["remotes"]:
                headers["X-Lore-Remote"] = ",".join(here["remotes"])
        return headers

    def _open(self, method: str, path: str, workspace: Any, body: Json | None, timeout: float) -> Any:
        import urllib.error
        import urllib.request

        url = f"{self.server.url}{path}"
        headers = {"Accept": "application/json", **self._headers(workspace)}
        if self.server.token:
            headers["Authorization"] = f"Bearer {self.server.token}"
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body, ensure_ascii=False).encode()
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            return remote.opener().open(request, timeout=timeout)
        except urllib.error.HTTPError as exc:
            with exc:
                raw = exc.read(64 * 1024)
            raise _error(url, exc.code, exc.headers.get("Location"), raw, self.server.named) from None
        except (urllib.error.URLError, OSError) as exc:
            why = getattr(exc, "reason", None) or type(exc).__name__
            raise errors.LoreError(
                f"cannot reach the lore server at {self.where}: {why}",
                "check that it runs and that this machine can reach it (`lore doctor` checks it)",
            ) from None

    def _call(
        self,
        method: str,
        path: str,
        workspace: Any = None,
        body: Json | None = None,
        timeout: float = TIMEOUT,
        **query: Any,
    ) -> Json:
        params = {k: v for k, v in query.items() if v is not None and v is not False}
        full = f"{path}?{urlencode(params, doseq=True)}" if params else path
        with self._open(method, full, workspace, body, timeout) as response:
            try:
                answer = json.loads(response.read())
            except ValueError:
                raise errors.LoreError(
                    f"the server at {self.where} answered something that is not JSON"
                ) from None
        return answer if isinstance(answer, dict) else {}

    def which(self, workspace: str | None) -> Json:
        return self._call("GET", "/api/which", workspace)

    # --- facts and notes ---------------------------------------------------------------------------

    def facts(self, workspace: str | None, *, usage: bool = False) -> Json:
        return self._call("GET", "/api/facts", workspace, usage="1" if usage else None)

    def fact_history(self, workspace: str | None, fact_id: str) -> Json:
        return self._call("GET", f"/api/facts/{_segment(fact_id)}", workspace)

    def remember_fact(self, workspace: str | None, statement: str, **fields: Any) -> Json:
        body = {"statement": statement, **fields, "caller": "cli"}  # its advice in a terminal's terms
        return self._call("POST", "/api/facts", workspace, body)

    def revise_fact(self, workspace: str | None, fact_id: str, statement: str | None, **fields: Any) -> Json:
        body = {"statement": statement, **{k: v for k, v in fields.items() if v is not None}}
        return self._call("POST", f"/api/facts/{_segment(fact_id)}/revise", workspace, body)

    def remember_note(self, workspace: str | None, body: str, **fields: Any) -> Json:
        return self._call("POST", "/api/notes", workspace, {"body": body, **fields, "caller": "cli"})

    def search(self, workspace: str | None, query: str, *, kinds: Sequence[str] | None, limit: int) -> Json:
        return self._call(
            "GET", "/api/search", workspace, q=query, kind=list(kinds or []) or None, limit=limit
        )

    def handoff(self, workspace: str | None) -> Json:
        return self._call("GET", "/api/handoff", workspace)

    def session_start(self, workspace: str | None, client: str) -> Json:
        return self._call("GET", "/api/session-start", workspace, client=client)

    # --- tasks and messages ------------------------------------------------------------------------

    def tasks(self, workspace: str | None, *, every: bool) -> Json:
        return self._call("GET", "/api/tasks", workspace, all="1" if every else None)

    def task(self, workspace: str | None, task_id: str) -> Json:
        return self._call("GET", f"/api/tasks/{_segment(task_id)}", workspace)

    def file_task(self, workspace: str | None, title: str, body: str, **fields: Any) -> Json:
        return self._call("POST", "/api/tasks", workspace, {"title": title, "body": body, **fields})

    def update_task(self, workspace: str | None, task_id: str, status: str, note: str | None) -> Json:
        return self._call(
            "POST", f"/api/tasks/{_segment(task_id)}", workspace, {"status": status, "note": note}
        )

    def messages(self, workspace: str | None) -> Json:
        return self._call("GET", "/api/messages", workspace)

    def read_messages(self, workspace: str | None) -> Json:
        return self._call("POST", "/api/messages/read", workspace, {})

    def send_message(
        self, workspace: str | None, to: str, body: str, *, on_sent: Callable[[Json], None], **fields: Any
    ) -> Json:
        wait = float(fields.get("wait_seconds") or 0)
        return self._call(
            "POST", "/api/messages", workspace, {"to": to, "body": body, **fields}, TIMEOUT + wait
        )

    # --- the record, tidying, export ---------------------------------------------------------------

    def log(self, **filters: Any) -> Json:
        where = filters.pop("workspace", None)
        if where:
            filters["workspace"] = workspace_path(where, self.env, self.cwd)
        return self._call("GET", "/api/log", False, **filters)

    def log_record(self, record_id: str) -> Json:
        return self._call("GET", f"/api/log/{_segment(record_id)}", False)

    def tidy(self, workspace: str | None) -> Json:
        return self._call("GET", "/api/tidy", workspace)

    def tidy_act(self, workspace: str | None, act: str, payload: Json) -> Json:
        return self._call("POST", f"/api/tidy/{act}", workspace, payload)

    # --- a signed-in user's config (`lore config push`) ------------------------------------------------

    def push_config(self, toml: str, home: str) -> Json:
        """Upload a config file as the user's spaces (`PUT /api/config`); `home` is this machine's
        HOME, for the `~` in the file."""
        return self._call("PUT", "/api/config", False, {"toml": toml, "home": home})

    def export(self, space: str | None) -> Iterator[str]:
        path = "/api/export" + (f"?{urlencode({'space': space})}" if space else "")
        response = self._open("GET", path, False, None, 600.0)

        def lines() -> Iterator[str]:
            with response:
                for raw in response:
                    yield raw.decode("utf-8").rstrip("\n")

        return lines()


def _segment(value: str) -> str:
    """An id as one path segment (whatever was typed stays one, for the server to refuse)."""
    from urllib.parse import quote

    return quote(str(value), safe="")


def _error(url: str, code: int, location: str | None, raw: bytes, named: str) -> errors.LoreError:
    """The server's refusal as the error a local command raises: its message and hint."""
    if code in (401, 301, 302, 303, 307, 308):
        return errors.Refused(str(remote.refusal(url, code, location, raw, named)))
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        kind = KINDS.get(code, errors.LoreError)
        return kind(data["error"], str(data.get("hint") or ""))
    return errors.LoreError(f"the server answered {code}", "`lore doctor` checks the server")
