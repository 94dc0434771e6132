"""The hosted hooks: with `LORE_URL` (+ `LORE_TOKEN`) every hook event goes to the server's
`/api/hooks/*` routes, which call the same use cases as the local hooks (lore.service.events).

Standard library only (the hook's import budget): `urllib.request`, imported when used. The same
deadline as the local path bounds each request; the token goes in the Authorization header only,
and no error message carries it. Redirects are refused (a failure the hook log records): urllib would
follow one to any origin with the Authorization header.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urljoin

from lore.core import login
from lore.core.errors import RemoteError


def opener() -> Any:
    """A urllib opener that follows no redirect: urllib would send the Authorization header to the
    new address. A 3xx is raised as an HTTPError (the hook and `lore config push` say so)."""
    import urllib.request

    class Refuse(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(Refuse)


def call(
    base_url: str,
    token: str,
    path: str,
    body: dict[str, Any] | None,
    *,
    timeout: float,
    named: str = "LORE_TOKEN",
) -> dict[str, Any]:
    """One request to the server (`body`: a JSON POST; None: a GET); its JSON
    object. A refusal, an error or no answer in `timeout` is a RemoteError saying which (never the
    token: `named` is what the message calls it)."""
    import urllib.error

    url = f"{base_url.rstrip('/')}{path}"
    try:
        with opener().open(_request(url, token, body), timeout=timeout) as response:
            data = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            raw = exc.read()
        raise refusal(url, exc.code, exc.headers.get("Location"), raw, named) from None
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


def _request(url: str, token: str, body: dict[str, Any] | None) -> Any:
    import urllib.request

    headers = {"Accept": "application/json", "User-Agent": "lore-hook"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data_out = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data_out = json.dumps(body, ensure_ascii=False).encode()
    verb = "POST" if body is not None else "GET"
    return urllib.request.Request(url, data=data_out, headers=headers, method=verb)


def refusal(url: str, code: int, location: str | None, raw: bytes, named: str) -> RemoteError:
    """What an HTTP error answer means, in one line: never the token (`named` is what it is called),
    and for an error of lore's, its message and hint."""
    if code in _REDIRECTS:
        where = login.origin(urljoin(url, location or ""))
        return RemoteError(
            f"the server answered with a redirect ({code}) to {where}; lore does not follow "
            "redirects (the token would go along): set LORE_URL to the server's final address"
        )
    if code == 401:
        fix = "check it, or create a new one" if named == "LORE_TOKEN" else "run `lore login URL` again"
        return RemoteError(f"the server refused {named} (401): {fix}")
    return RemoteError(f"the server answered {code}{_error_detail(raw)}")


def _error_detail(raw: bytes) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return ""
    message = data.get("error") if isinstance(data, dict) else None
    return f": {message}" if isinstance(message, str) else ""
