"""A bare JSON-RPC client over `lore mcp`'s stdio, byte for byte: for malformed input, pipelined
writes and kill -9 (the SDK's client hides the process and refuses to send garbage)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from support.jsonrpc import INITIALIZED, initialize_params

LORE = str(Path(sys.executable).parent / "lore")


class RawSession:
    def __init__(self, env: dict[str, str], cwd: Path, *, name: str = "raw-client") -> None:
        self.proc = subprocess.Popen(
            [LORE, "mcp"],
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._buffer = b""
        self._next = 1
        self.name = name

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def request(self, method: str, params: dict[str, Any] | None = None) -> int:
        """Send a request without waiting; returns its id."""
        ident = self._next
        self._next += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return ident

    def read(self, timeout: float = 30) -> dict[str, Any] | None:
        """The next JSON-RPC message from the server, or None at EOF / timeout."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        return message

    def response(self, ident: int, timeout: float = 30) -> dict[str, Any] | None:
        """Read until the response to `ident` (server requests such as roots/list are skipped)."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            message = self.read(left)
            if message is None:
                return None
            if message.get("id") == ident and ("result" in message or "error" in message):
                return message
        return None

    def call(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = 30
    ) -> dict[str, Any] | None:
        return self.response(self.request(method, params), timeout)

    def initialize(self) -> dict[str, Any]:
        answer = self.call("initialize", initialize_params(self.name))
        assert answer is not None and "result" in answer, answer
        self.send(INITIALIZED)
        return answer

    def tool(self, name: str, arguments: dict[str, Any], timeout: float = 30) -> dict[str, Any] | None:
        return self.call("tools/call", {"name": name, "arguments": arguments}, timeout)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
        self.proc.wait(timeout=10)

    def close(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def __enter__(self) -> RawSession:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def tool_text(answer: dict[str, Any] | None) -> str:
    assert answer is not None, "no answer"
    result = answer.get("result") or {}
    return "\n".join(c.get("text", "") for c in result.get("content", []))


def tool_failed(answer: dict[str, Any] | None) -> bool:
    assert answer is not None, "no answer"
    return "error" in answer or bool((answer.get("result") or {}).get("isError"))
