"""What `lore serve` counts, served at `/metrics` in Prometheus' text format by the ecosystem's own
library (prometheus_client): tool calls by tool and outcome and their latency, HTTP requests by
route and status and their latency, refusals by a limit, the database pool (open, in use, callers
waiting), the LISTEN connection's events and the callers waiting for a reply, the embedding queue
(depth and the oldest note's wait) and the errors the hosted session-start hook sees.

Off until `enable()` (only `lore serve` enables it: a `lore` command or a hook never imports
prometheus_client). With `PROMETHEUS_MULTIPROC_DIR` set before the process starts (several worker
processes behind one port), every process writes its values there and `/metrics` adds them up
(prometheus_client's multiprocess mode); counters and histograms sum, gauges of this process's
own state (`livesum`) count live processes only, and the database-wide gauges (the embedding
queue) are the latest reading of any process. No label holds a user, a space or anything a
caller wrote: only tool names, routes, statuses and outcomes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

ENABLED = False
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Seconds: tool calls run from a millisecond (recall) to a minute (send_message's wait).
TOOL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_lock = threading.Lock()
_m: Any = None


class _Metrics:
    def __init__(self) -> None:
        from prometheus_client import Counter, Gauge, Histogram

        def live(name: str, doc: str) -> Any:
            """A gauge of this process's own state: summed over the live processes."""
            return Gauge(name, doc, multiprocess_mode="livesum")

        def latest(name: str, doc: str) -> Any:
            """A gauge of the database's state: the latest reading of any process."""
            return Gauge(name, doc, multiprocess_mode="mostrecent")

        self.tool_calls = Counter(
            "lore_tool_calls",
            "MCP tool calls, by tool and outcome (ok, error, unavailable, failed)",
            ["tool", "outcome"],
        )
        self.tool_seconds = Histogram(
            "lore_tool_duration_seconds", "MCP tool call latency", ["tool"], buckets=TOOL_BUCKETS
        )
        self.requests = Counter(
            "lore_http_requests", "HTTP requests, by route, method and status", ["route", "method", "status"]
        )
        self.request_seconds = Histogram(
            "lore_http_request_duration_seconds",
            "HTTP request latency, by route",
            ["route"],
            buckets=HTTP_BUCKETS,
        )
        self.refused = Counter(
            "lore_refused", "Requests refused by a limit (429/413/503), by limit", ["limit"]
        )
        self.hook_errors = Counter(
            "lore_hook_errors",
            "Errors the hosted session-start hook got (/api/session-start), by status",
            ["status"],
        )
        self.pool_max = live("lore_pool_max", "Database pool: most connections")
        self.pool_open = live("lore_pool_open", "Database pool: connections open")
        self.pool_in_use = live("lore_pool_in_use", "Database pool: connections in use")
        self.pool_waiting = live("lore_pool_waiting", "Database pool: callers waiting for a connection")
        self.reply_waiters = live("lore_reply_waiters", "send_message calls waiting for a reply")
        self.listen_events = Counter(
            "lore_listen_events",
            "The reply listener: notified, polled (found by the poll), lost, reconnected",
            ["event"],
        )
        self.queue_depth = latest("lore_embedding_queue_depth", "Notes waiting for a vector")
        self.queue_age = latest(
            "lore_embedding_queue_oldest_seconds", "How long the oldest note waiting for a vector has waited"
        )


def enable() -> None:
    """Start counting (idempotent: one set of metrics per process, however many apps it serves)."""
    global ENABLED, _m
    with _lock:
        if _m is None:
            _m = _Metrics()
        ENABLED = True


def tool_call(tool: str, outcome: str, seconds: float) -> None:
    if _m is not None:
        _m.tool_calls.labels(tool, outcome).inc()
        _m.tool_seconds.labels(tool).observe(seconds)


def http_request(route: str, method: str, status: int, seconds: float) -> None:
    if _m is not None:
        _m.requests.labels(route, method, str(status)).inc()
        _m.request_seconds.labels(route).observe(seconds)
        if route == "/api/session-start" and status >= 400:
            _m.hook_errors.labels(str(status)).inc()


def refused(limit: str) -> None:
    if _m is not None:
        _m.refused.labels(limit).inc()


def pool_size(open_now: int, most: int) -> None:
    """This process's pool: connections open now, and the most it may open."""
    if _m is not None:
        _m.pool_open.set(open_now)
        _m.pool_max.set(most)


def pool_use(in_use: int = 0, waiting: int = 0) -> None:
    """A caller took (+1) or gave back (-1) a connection, or began (+1) or ended (-1) waiting for one."""
    if _m is not None:
        if in_use:
            _m.pool_in_use.inc(in_use)
        if waiting:
            _m.pool_waiting.inc(waiting)


def listen_event(event: str) -> None:
    """What lore.store.replies tells: a caller began ("waiting") or ended ("waited") waiting for a
    reply; the listener was notified, found a reply by its poll ("polled"), lost or got back its
    connection."""
    if _m is None:
        return
    if event == "waiting":
        _m.reply_waiters.inc()
    elif event == "waited":
        _m.reply_waiters.dec()
    elif event in ("notified", "polled", "lost", "reconnected"):
        _m.listen_events.labels(event).inc()


def render(transact: Callable[[Callable[[Any], tuple[int, float]]], tuple[int, float]]) -> tuple[bytes, str]:
    """The text a scrape gets: the embedding queue read now (through `transact`, the runtime's: this
    module is below the runtime, which reports to it), then every metric (of every process of this
    port, in multiprocess mode)."""
    from prometheus_client import REGISTRY, CollectorRegistry, generate_latest

    from lore.store import vectors

    if _m is not None:
        try:
            depth, age = transact(vectors.queue)
        except Exception:  # the database is away: the queue is not known now (its last value stays)
            pass
        else:
            _m.queue_depth.set(depth)
            _m.queue_age.set(age)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE
    return generate_latest(REGISTRY), CONTENT_TYPE


def process_exited(pid: int) -> None:
    """In multiprocess mode, a worker that ended: its live gauges no longer count."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
