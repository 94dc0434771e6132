"""A local mock of the OpenAI Responses API (`POST /v1/responses`, streamed), enough for Codex CLI.

Codex streams every turn: the reply goes out as the event sequence Codex reads (created,
in_progress, output_item.added, content_part.added, output_text.delta/done, content_part.done,
output_item.done, completed), each with a `sequence_number`. A scripted tool call goes out as a
`function_call` item (with the `namespace` Codex gave the tool, when it had one).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

from .base import JSON, Exchange, MockServer, Recorded, Reply

_ids = itertools.count(1)


class MockResponses(MockServer):
    name = "mock-responses"

    def handle(self, request: Recorded, out: Exchange) -> bool:
        if request.method == "GET" and request.path.endswith("/models"):
            out.json(200, {"object": "list", "data": [], "models": []})
            return True
        if request.method != "POST" or not request.path.endswith("/responses"):
            return False
        body: JSON = request.body if isinstance(request.body, dict) else {}
        out.sse(_events(body, self.reply_for(body)))
        return True

    def response_requests(self) -> list[JSON]:
        return [
            r.body
            for r in self.requests
            if r.method == "POST" and r.path.endswith("/responses") and isinstance(r.body, dict)
        ]


def _events(body: JSON, reply: Reply) -> Iterator[tuple[str, JSON]]:
    seq = itertools.count()
    rid, item_id = f"resp_mock{next(_ids)}", f"item_mock{next(_ids)}"
    model = str(body.get("model") or "mock-model")
    base = {"id": rid, "object": "response", "created_at": 1, "model": model, "output": []}

    def event(kind: str, **fields: Any) -> tuple[str, JSON]:
        return kind, {"type": kind, "sequence_number": next(seq), **fields}

    yield event("response.created", response={**base, "status": "in_progress"})
    yield event("response.in_progress", response={**base, "status": "in_progress"})
    if reply.tool:
        name, namespace = _split(reply.tool, body)
        item: JSON = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "call_id": f"call_mock{next(_ids)}",
            "name": name,
            "arguments": "",
        }
        if namespace:
            item["namespace"] = namespace
        arguments = json.dumps(reply.arguments)
        yield event("response.output_item.added", output_index=0, item=item)
        yield event(
            "response.function_call_arguments.delta", item_id=item_id, output_index=0, delta=arguments
        )
        yield event(
            "response.function_call_arguments.done", item_id=item_id, output_index=0, arguments=arguments
        )
        done = {**item, "status": "completed", "arguments": arguments}
    else:
        part = {"type": "output_text", "text": "", "annotations": []}
        where = {"item_id": item_id, "output_index": 0, "content_index": 0}
        message = {
            "id": item_id,
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        }
        yield event("response.output_item.added", output_index=0, item=message)
        yield event("response.content_part.added", **where, part=part)
        yield event("response.output_text.delta", **where, delta=reply.text)
        yield event("response.output_text.done", **where, text=reply.text)
        yield event("response.content_part.done", **where, part={**part, "text": reply.text})
        done = {**message, "status": "completed", "content": [{**part, "text": reply.text}]}
    yield event("response.output_item.done", output_index=0, item=done)
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 2,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 12,
    }
    yield event(
        "response.completed", response={**base, "status": "completed", "output": [done], "usage": usage}
    )


def _split(tool: str, body: JSON) -> tuple[str, str | None]:
    """A scripted `mcp__lore__remember_fact` becomes name `remember_fact` in namespace `mcp__lore`
    when the request declared that namespace; otherwise the name is sent as scripted."""
    for declared in body.get("tools") or []:
        if isinstance(declared, dict) and declared.get("type") == "namespace":
            prefix = f"{declared.get('name')}__"
            if tool.startswith(prefix):
                return tool[len(prefix) :], str(declared.get("name"))
    return tool, None


def tool_names(body: JSON) -> list[str]:
    """Declared tools; a namespace's tools as `<namespace>__<name>`."""
    names: list[str] = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            names += [
                f"{tool.get('name')}__{t.get('name')}" for t in tool.get("tools") or [] if isinstance(t, dict)
            ]
        elif tool.get("name"):
            names.append(str(tool["name"]))
    return names


def input_texts(body: JSON) -> list[tuple[str, str]]:
    """(role, text) of every message of the request's `input`, in order."""
    found: list[tuple[str, str]] = []
    for item in body.get("input") or []:
        if not isinstance(item, dict) or item.get("type", "message") != "message":
            continue
        content = item.get("content")
        parts = [content] if isinstance(content, str) else content or []
        text = "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in parts)
        found.append((str(item.get("role")), text))
    return found
