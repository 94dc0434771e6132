"""The hooks' psql session reads one JSON document, however psql cuts it into lines and however the
pipe cuts those into reads. PostgreSQL's json_agg of rows puts a newline between elements, so the
snapshot of a large space is many lines; a read that stopped at the first chunk ending in a newline
handed a prefix to the JSON parser. Seen in bench/hook_latency.py at 1,000 facts (the pipe full at
64 KiB, the cut just after a newline): "Expecting value: line 366 column 1 (char 131072)", and that
session got no memory."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from lore.db import psql

# ~2,000 rows, one per line in json_agg's output, as the session-start snapshot's facts are.
MANY_LINES = r"""
\set ON_ERROR_STOP on
SELECT json_build_object('items', (SELECT json_agg(r) FROM
    (SELECT n, repeat('x', n % 40) AS text FROM generate_series(1, :count) n) r));
"""


def line_by_line(real: Callable[[int, int], bytes]) -> Callable[[int, int], bytes]:
    """os.read as a pipe may serve it: each read ends at a line's end (psql writing a line at a
    time to a reader that keeps up, or a full pipe whose 64 KiB happen to end after a newline).
    Byte by byte, so nothing is held back from the reader's select()."""

    def read(fd: int, size: int) -> bytes:
        line = b""
        while not line.endswith(b"\n") and len(line) < size:
            byte = real(fd, 1)
            if not byte:
                break
            line += byte
        return line

    return read


def test_a_document_of_many_lines_arrives_whole_whatever_the_reads(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "read", line_by_line(os.read))
    with psql.Session(db_url, {"count": "2000"}, timeout=30) as session:
        document = session.read(MANY_LINES, timeout=30)
        session.finish("SELECT 1;", timeout=30)
    assert [item["n"] for item in document["items"]] == list(range(1, 2001))


def test_a_large_document_and_two_reads_in_one_session(db_url: str) -> None:
    with psql.Session(db_url, {"count": "20000"}, timeout=30) as session:
        assert len(session.read(MANY_LINES, timeout=30)["items"]) == 20000
        assert session.read("SELECT json_build_object('a', 1);", timeout=30) == {"a": 1}
        assert session.read("SELECT 'null'::json;", timeout=30) is None
