"""`/metrics`: Prometheus' text format, behind the same rule as /mcp and /api (a lore token in sign-in
mode, the local secret in local mode), scraped before and after calls: the counters moved by what
happened and nothing else."""

from __future__ import annotations

from pathlib import Path

import httpx2
import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.lorehttp import Server, bearer, mcp_session, push, start_server, token, two_space_config
from support.mcpclient import call, ok

pytestmark = pytest.mark.anyio


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample (0 when it is not there yet)."""
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return 0.0


def scrape(server: Server, secret: str) -> str:
    answer = httpx2.get(f"{server.url}/metrics", headers=bearer(secret), timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return answer.text


async def test_a_tool_call_moves_its_counters_and_nothing_names_a_user(
    lore_env: dict[str, str], tmp_path: Path, conn: psycopg.Connection, project: Path
) -> None:
    env = {**lore_env, "LORE_EMBEDDER": "broken", "LORE_USER_RATE": "1", "LORE_USER_BURST": "30"}
    alice, metrics_token = token(conn, "alice"), token(conn, "prometheus")
    push(conn, "alice", two_space_config(project))
    with start_server(env, tmp_path / "serve.log", "--sign-in") as server:
        before = scrape(server, metrics_token)
        for refused in ({}, bearer("lore_" + "x" * 40), {"Authorization": "Basic abc"}):
            answer = httpx2.get(f"{server.url}/metrics", headers=refused, timeout=10)
            assert answer.status_code == 401 and answer.json()["error"] == "invalid_token"
            assert answer.headers["www-authenticate"] == "Bearer"
        async with mcp_session(server.url, bearer(alice, project / "work"), client="metered") as s:
            await ok(s, "remember_fact", statement="metrics count this")
            await ok(s, "remember_note", kind="pattern", body="waits for a vector: the embedder is broken")
            bad = await call(s, "revise_fact", id="f_999", statement="nothing there")
            assert bad.is_error
        # What the hosted session-start hook would get: no workspace named, an error.
        missing = httpx2.get(f"{server.url}/api/session-start", headers=bearer(alice), timeout=10)
        assert missing.status_code >= 400
        after = scrape(server, metrics_token)
        for name, labels, moved in [
            ("lore_hook_errors_total", {"status": str(missing.status_code)}, 1),
            ("lore_tool_calls_total", {"tool": "remember_fact", "outcome": "ok"}, 1),
            ("lore_tool_calls_total", {"tool": "revise_fact", "outcome": "error"}, 1),
            ("lore_tool_duration_seconds_count", {"tool": "remember_fact"}, 1),
            ("lore_http_requests_total", {"route": "/metrics", "method": "GET", "status": "401"}, 3),
        ]:
            assert sample(after, name, **labels) - sample(before, name, **labels) == moved, (name, labels)
        assert sample(after, "lore_http_requests_total", route="/mcp", method="POST", status="200") > sample(
            before, "lore_http_requests_total", route="/mcp", method="POST", status="200"
        )
        assert sample(after, "lore_embedding_queue_depth") == 1
        assert sample(after, "lore_embedding_queue_oldest_seconds") >= 0
        assert sample(after, "lore_pool_max") == 4 and sample(after, "lore_pool_open") >= 1
        assert sample(after, "lore_pool_in_use") >= 0 and sample(after, "lore_pool_waiting") == 0
        for secret_or_name in (alice, metrics_token, "alice", "metrics count this", str(project)):
            assert secret_or_name not in after
        # A refusal by a limit is counted: alice's bucket holds 30 requests, then one a second.
        limited = 0
        with httpx2.Client(base_url=server.url, headers=bearer(alice, project / "work"), timeout=10) as api:
            for _ in range(40):
                limited += api.get("/api/me").status_code == 429
        assert limited > 0
        counted = sample(scrape(server, metrics_token), "lore_refused_total", limit="rate_limited:429")
        assert counted - sample(after, "lore_refused_total", limit="rate_limited:429") == limited


def test_local_mode_scrapes_with_the_local_secret(lore_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('default_space = "p"\n[[space]]\nid = "p"\n')
    with start_server(lore_env, tmp_path / "serve.log") as server:
        assert httpx2.get(f"{server.url}/metrics", timeout=10).status_code == 401
        answer = httpx2.get(f"{server.url}/metrics", headers=server.local(), timeout=10)
        assert answer.status_code == 200 and "lore_pool_max" in answer.text
        rid = httpx2.get(f"{server.url}/healthz", headers={"X-Request-Id": "lb-1234abcd"}, timeout=10)
        assert rid.headers["x-request-id"] == "lb-1234abcd"  # a load balancer's id is carried back
        made = httpx2.get(f"{server.url}/healthz", headers={"X-Request-Id": "bad id!"}, timeout=10)
        assert len(made.headers["x-request-id"]) == 16 and made.headers["x-request-id"] != "bad id"
