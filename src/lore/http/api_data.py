"""`/api/export`: a signed-in user's memory as JSON Lines (`lore export` on a client), the same use
case as the local command (lore.service.data.export), limited to the caller's own spaces: never
another user's, not a teammate's either. `lore import` stays an operator's command (on the server's
database), as do `purge` and `reindex`.

    GET /api/export[?space=]   application/x-ndjson: header, rows, trailer
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from lore.http.api_routes import Routes, runtime
from lore.service import data


async def export(request: Request) -> Response:
    space = request.query_params.get("space") or None
    lines = await runtime(request).call(data.export, space)  # checked here, before the first byte is sent
    return StreamingResponse(
        (line + "\n" for line in lines),
        media_type="application/x-ndjson",
        headers={"Cache-Control": "no-store"},
    )


ROUTES: Routes = [("/api/export", export, ["GET"])]
