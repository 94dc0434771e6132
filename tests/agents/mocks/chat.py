"""A local mock of an OpenAI-compatible Chat Completions API (`POST /v1/chat/completions`), enough
for OpenCode through `@ai-sdk/openai-compatible`: streamed chunks, then `data: [DONE]`."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

from .base import JSON, Exchange, MockServer, Recorded, Reply

_ids = itertools.count(1)


class MockChat(MockServer):
    name = "mock-chat"

    def is_main(self, body: JSON) -> bool:
        return bool(body.get("tools"))

    def handle(self, request: Recorded, out: Exchange) -> bool:
        if request.method == "GET" and request.path.endswith("/models"):
            out.json(200, {"object": "list", "data": [{"id": "mock-model", "object": "model"}]})
            return True
        if request.method != "POST" or not request.path.endswith("/chat/completions"):
            return False
        body: JSON = request.body if isinstance(request.body, dict) else {}
        reply = self.reply_for(body)
        if body.get("stream"):
            out.sse([(None, chunk) for chunk in _chunks(body, reply)] + [(None, "[DONE]")])
        else:
            out.json(200, _completion(body, reply))
        return True

    def chat_requests(self) -> list[JSON]:
        return [
            r.body
            for r in self.requests
            if r.method == "POST" and r.path.endswith("/chat/completions") and isinstance(r.body, dict)
        ]

    def main_requests(self) -> list[JSON]:
        return [b for b in self.chat_requests() if self.is_main(b)]


def _chunks(body: JSON, reply: Reply) -> Iterator[JSON]:
    cid, model = f"chatcmpl-mock{next(_ids)}", str(body.get("model") or "mock-model")

    def chunk(delta: JSON, finish: str | None = None, **extra: Any) -> JSON:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": 1,
            "model": model,
            "choices": [choice],
            **extra,
        }

    yield chunk({"role": "assistant", "content": ""})
    if reply.tool:
        call = {
            "index": 0,
            "id": f"call_mock{next(_ids)}",
            "type": "function",
            "function": {"name": reply.tool, "arguments": json.dumps(reply.arguments)},
        }
        yield chunk({"tool_calls": [call]})
        finish = "tool_calls"
    else:
        yield chunk({"content": reply.text})
        finish = "stop"
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    yield chunk({}, finish, usage=usage)


def _completion(body: JSON, reply: Reply) -> JSON:
    message: JSON = {"role": "assistant", "content": reply.text or None}
    if reply.tool:
        function = {"name": reply.tool, "arguments": json.dumps(reply.arguments)}
        message["tool_calls"] = [{"id": f"call_mock{next(_ids)}", "type": "function", "function": function}]
    finish = "tool_calls" if reply.tool else "stop"
    return {
        "id": f"chatcmpl-mock{next(_ids)}",
        "object": "chat.completion",
        "created": 1,
        "model": str(body.get("model") or "mock-model"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


def system_text(body: JSON) -> str:
    return "\n".join(_text(m.get("content")) for m in _messages(body) if m.get("role") == "system")


def all_text(body: JSON) -> str:
    return "\n".join(_text(m.get("content")) for m in _messages(body))


def tool_names(body: JSON) -> list[str]:
    return [
        str(t["function"].get("name"))
        for t in body.get("tools") or []
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    ]


def _messages(body: JSON) -> list[JSON]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""
