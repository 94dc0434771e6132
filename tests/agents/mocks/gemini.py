"""A local mock of the Gemini API (`generativelanguage`), enough for Gemini CLI in `-p` mode.

Serves `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse` and
`:countTokens`. Main conversation requests (those declaring tools) consume scripted replies; side
requests (Gemini CLI's JSON-schema calls, e.g. its model router) get a JSON object that satisfies a
requested schema loosely, or "ok".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from .base import JSON, Exchange, MockServer, Recorded, Reply


class MockGemini(MockServer):
    name = "mock-gemini"

    def is_main(self, body: JSON) -> bool:
        return bool(body.get("tools"))

    def handle(self, request: Recorded, out: Exchange) -> bool:
        if request.method != "POST" or ":" not in request.path:
            return False
        method = request.path.rsplit(":", 1)[1]
        body: JSON = request.body if isinstance(request.body, dict) else {}
        if method == "countTokens":
            out.json(200, {"totalTokens": max(1, len(json.dumps(body)) // 4)})
            return True
        if method not in ("generateContent", "streamGenerateContent"):
            return False
        reply = self.reply_for(body)
        if not self.is_main(body) and _wants_json(body):
            reply = Reply(text=json.dumps(_fill_schema(_schema(body))))
        payload = _response(reply)
        if method == "streamGenerateContent":
            out.sse([(None, payload)])
        else:
            out.json(200, payload)
        return True

    # -- what reached the model --------------------------------------------------------------------
    def generate_requests(self) -> list[JSON]:
        return [
            r.body
            for r in self.requests
            if r.method == "POST"
            and r.path.endswith((":generateContent", ":streamGenerateContent"))
            and isinstance(r.body, dict)
        ]

    def main_requests(self) -> list[JSON]:
        return [b for b in self.generate_requests() if self.is_main(b)]


def _response(reply: Reply) -> JSON:
    part: JSON = (
        {"functionCall": {"name": reply.tool, "args": reply.arguments}}
        if reply.tool
        else {"text": reply.text}
    )
    return {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12},
        "modelVersion": "mock",
    }


def _wants_json(body: JSON) -> bool:
    config = body.get("generationConfig") or body.get("config") or {}
    return isinstance(config, dict) and config.get("responseMimeType") == "application/json"


def _schema(body: JSON) -> Any:
    config = body.get("generationConfig") or {}
    return config.get("responseJsonSchema") or config.get("responseSchema") or {}


def _fill_schema(schema: Any) -> Any:
    """A minimal value of a JSON schema (first enum value, empty strings, required properties)."""
    if not isinstance(schema, dict):
        return {}
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: _fill_schema(v) for k, v in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return ""


def texts(body: JSON) -> Iterator[str]:
    """Every text part of a request: system instruction and contents."""
    system = body.get("systemInstruction") or {}
    for part in system.get("parts", []) if isinstance(system, dict) else []:
        if isinstance(part, dict) and "text" in part:
            yield str(part["text"])
    for content in body.get("contents") or []:
        for part in content.get("parts", []) if isinstance(content, dict) else []:
            if isinstance(part, dict) and "text" in part:
                yield str(part["text"])


def user_text(body: JSON) -> str:
    """The text of the request's `user` turns (where Gemini CLI puts `<hook_context>`)."""
    return "\n".join(
        str(part.get("text", ""))
        for content in body.get("contents") or []
        if isinstance(content, dict) and content.get("role") == "user"
        for part in content.get("parts", [])
        if isinstance(part, dict)
    )


def function_names(body: JSON) -> list[str]:
    return [
        str(decl.get("name"))
        for tool in body.get("tools") or []
        if isinstance(tool, dict)
        for decl in tool.get("functionDeclarations") or []
        if isinstance(decl, dict)
    ]
