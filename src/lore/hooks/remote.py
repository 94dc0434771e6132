"""The hosted hooks: with `LORE_URL` (+ `LORE_TOKEN`) every hook event goes to the server's
`/api/hooks/*` routes, which call the same use cases as the local hooks (lore.service.events).

Standard library only (the hook's import budget): `urllib.request`, imported when used. The same
deadline as the local path bounds each request; the token goes in the Authorization header only,
and no error message carries it. Redirects are refused (a failure the hook log records): urllib would
follow one to any origin with the Authorization header.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

from lore.core.errors import RemoteError


@dataclass(frozen=True)
class Remote:
    text: str
    space: str
    shown: int
    omitted: int


def opener() -> Any:
    """A urllib opener that follows no redirect: urllib would send the Authorization header to the
    new address. A 3xx is raised as an HTTPError (the hook and `lore config push` say so)."""
    import urllib.request

    class Refuse(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(Refuse)


def fetch(
    base_url: str, token: str, workspace: str, client: str, *, timeout: float, session_id: str | None = None
) -> Remote:
    """The session-start text the server renders (`GET /api/session-start`: `lore session-start`'s and
    scripts' route; the hook posts to /api/hooks/session-start)."""
    query = {"workspace": workspace, "client": client} | ({"session_id": session_id} if session_id else {})
    data = call(base_url, token, f"/api/session-start?{urlencode(query)}", None, timeout=timeout)
    if not isinstance(data.get("text"), str):
        raise RemoteError("the server's answer has no session-start text")
    return Remote(
        data["text"], str(data.get("space", "")), int(data.get("shown", 0)), int(data.get("omitted", 0))
    )


def call(
    base_url: str, token: str, path: str, body: dict[str, Any] | None, *, timeout: float
) -> dict[str, Any]:
    """One request to the server (`body`: a JSON POST; None: a GET); its JSON object. A refusal,
    an error or no answer in `timeout` is a RemoteError saying which (never the token)."""
    import urllib.error
    import urllib.request

    url = f"{base_url.rstrip('/')}{path}"
    headers = {"Accept": "application/json", "User-Agent": "lore-hook"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data_out = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data_out = json.dumps(body, ensure_ascii=False).encode()
    request = urllib.request.Request(
        url, data=data_out, headers=headers, method="POST" if body is not None else "GET"
    )
    try:
        with opener().open(request, timeout=timeout) as response:
            data = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            detail = _error_detail(exc.read())
        if exc.code in _REDIRECTS:
            where = origin(urljoin(url, exc.headers.get("Location") or ""))
            raise RemoteError(
                f"the server answered with a redirect ({exc.code}) to {where}; lore does not follow "
                "redirects (the token would go along): set LORE_URL to the server's final address"
            ) from None
        if exc.code == 401:
            raise RemoteError("the server refused LORE_TOKEN (401): check it, or create a new one") from None
        raise RemoteError(f"the server answered {exc.code}{detail}") from None
    except TimeoutError:
        raise RemoteError(f"the server did not answer within {timeout:.2f}s") from None
    except urllib.error.URLError as exc:
        raise RemoteError(f"cannot reach the server: {exc.reason}") from None
    except (OSError, ValueError) as exc:  # a connection reset mid-answer, an answer that is not JSON
        raise RemoteError(f"the server's answer was cut or is not JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise RemoteError("the server's answer is not a JSON object")
    return data


_REDIRECTS = {301, 302, 303, 307, 308}


def origin(url: str) -> str:
    """scheme://host[:port] of `url`: never its user, password, path or query."""
    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "an address lore cannot read"
    return (
        f"{parts.scheme}://{parts.hostname}{port}"
        if parts.scheme and parts.hostname
        else "an unknown address"
    )


def _error_detail(raw: bytes) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return ""
    message = data.get("error") if isinstance(data, dict) else None
    return f": {message}" if isinstance(message, str) else ""
