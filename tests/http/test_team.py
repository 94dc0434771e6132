"""Team mode on real infrastructure: three `lore serve --sign-in --stateless` processes behind
Debian's HAProxy (round robin, no stickiness), on a PostgreSQL of this module's own
(tests/support/infra.py), each with JSON logs and one shared PROMETHEUS_MULTIPROC_DIR (three
workers of one host, scraped once).

- Clients of both protocol eras work through the balancer, whichever replica answers each request:
  the client's name reaches every row, a change of space is told exactly once, `/metrics` through
  the balancer counts every process's calls.
- Twenty sessions write, search and send messages while one replica is SIGKILLed and started again
  and PostgreSQL is restarted: no acknowledged write is lost, none is written twice, every session
  carries on (each failure a retryable one), a reply waited for across both arrives, the
  listeners reconnect. The load is counted, not timed: it runs until 100 facts were acknowledged
  and 300 calls made, however long a busy machine takes (under a cap); bench/http_load.py runs longer.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psycopg
import pytest
from mcp import ClientSession, MCPError
from mcp_types import CONNECTION_CLOSED, CallToolResult
from prometheus_client.parser import text_string_to_metric_families
from support.infra import Balancer, OwnPostgres, own_postgres, start_haproxy
from support.lorehttp import Server, bearer, mcp_session, modern_session, push, start_server, token
from support.mcpclient import ok, text

pytestmark = pytest.mark.anyio
ARGS = ("--sign-in", "--stateless", "--log-format", "json", "--log-level", "info")


@dataclass
class Team:
    pg: OwnPostgres
    env: dict[str, str]
    ports: list[int]
    logs: list[Path]
    replicas: list[Server]
    lb: Balancer
    home: Path
    killed: set[int] = field(default_factory=set)

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(self.pg.url)

    def kill(self, i: int) -> None:
        """SIGKILL replica i (by its PID): no shutdown, what a crashed host looks like."""
        pid = self.replicas[i].pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        self.killed.add(i)

    def restart(self, i: int) -> None:
        """Replica i again, on its old port (HAProxy's config names it)."""
        self.replicas[i].stop()
        self.replicas[i] = start_server(
            self.env, self.logs[i], *ARGS, "--port", str(self.ports[i]), process=True, timeout=60
        )
        self.killed.discard(i)


@pytest.fixture(scope="module")
def team() -> Iterator[Team]:
    home = Path(tempfile.mkdtemp(prefix="lore-team-", dir="/tmp"))
    (home / "metrics").mkdir()
    (home / "home").mkdir()
    with own_postgres() as pg:
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(home / "home"),
            "LORE_DATA_DIR": str(home / "data"),
            "LORE_CONFIG": str(home / "no-config.toml"),
            "LORE_DATABASE_URL": pg.url,
            "LORE_EMBEDDER": "none",  # keyword search: three model copies would not fit two cores
            "LORE_POOL_TIMEOUT": "5",
            "LORE_USER_RATE": "2000",
            "LORE_USER_BURST": "4000",
            "PROMETHEUS_MULTIPROC_DIR": str(home / "metrics"),
        }
        logs = [home / f"replica{i}.log" for i in (1, 2, 3)]
        replicas: list[Server] = []
        lb: Balancer | None = None
        try:
            with ThreadPoolExecutor(3) as pool:
                started = [
                    pool.submit(start_server, env, log, *ARGS, process=True, timeout=60) for log in logs
                ]
                replicas.extend(f.result() for f in started)
            lb = start_haproxy([r.port for r in replicas])
            lb.wait({"r1": "UP", "r2": "UP", "r3": "UP"})
            yield Team(pg, env, [r.port for r in replicas], logs, replicas, lb, home)
        finally:
            if lb is not None:
                lb.stop()
            for replica in replicas:
                replica.stop()
            shutil.rmtree(home, ignore_errors=True)


def requests_by_replica(team: Team, since: list[int]) -> list[int]:
    """POST /mcp lines each replica logged after byte offset `since[i]` of its log."""
    counts = []
    for log, offset in zip(team.logs, since, strict=True):
        lines = log.read_text(errors="replace")[offset:].splitlines()
        counts.append(sum('"route": "/mcp"' in line and '"method": "POST"' in line for line in lines))
    return counts


def offsets(team: Team) -> list[int]:
    return [len(log.read_text(errors="replace")) for log in team.logs]


def sample(text_: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text_):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return 0.0


def two_spaces(base: Path, first: str = "work") -> str:
    return (
        'default_space = "home"\n'
        f'[[space]]\nid = "{first}"\npaths = ["{base}/work"]\naccepts_from = ["home"]\n'
        f'[[space]]\nid = "home"\npaths = ["{base}/home"]\naccepts_from = ["{first}"]\n'
    )


@pytest.mark.timeout(600)  # the counted part may take COUNT_CAP on a busy machine, plus the start-up
async def test_team_mode_through_a_real_load_balancer(team: Team) -> None:
    """One test, two parts, on one set of processes (three replicas cost seconds to start): both
    protocol eras through the balancer, then the faults."""
    await both_protocol_eras_work_through_the_balancer_whichever_replica_answers(team)
    await a_replica_killed_and_postgres_restarted_mid_run_lose_and_repeat_nothing(team)


async def both_protocol_eras_work_through_the_balancer_whichever_replica_answers(team: Team) -> None:
    base = Path("/home/alice/proj")
    with team.connect() as conn:
        alice, scraper = token(conn, "alice"), token(conn, "prometheus")
        push(conn, "alice", two_spaces(base), home="/home/alice")
    headers = bearer(alice, base / "work")
    before_logs = offsets(team)
    scraped = httpx2.get(f"{team.lb.url}/metrics", headers=bearer(scraper), timeout=10).text

    async with mcp_session(team.lb.url, headers, client="handshake-agent") as old:
        for i in range(6):
            made = await ok(old, "remember_fact", statement=f"handshake era fact {i}")
            assert made.structured_content["space"] == "alice/work"
        # The config changes (work is now `job`): the next call says so once, whichever replica
        # answers it and the ones after; no later call says it again.
        httpx2.put(
            f"{team.lb.url}/api/config",
            headers=headers,
            json={"toml": two_spaces(base, "job"), "home": "/home/alice"},
            timeout=10,
        ).raise_for_status()
        await anyio.sleep(2.5)  # every replica re-reads a cached config within 2 s
        said = [text(await ok(old, "recall_facts")) for _ in range(6)]
        told = [t for t in said if "this session's space changed from `alice/work` to `alice/job`" in t]
        assert len(told) == 1, said
        assert said[0] == told[0]
    async with modern_session(team.lb.url, headers, client="modern-agent") as new:
        for i in range(3):
            await ok(new, "remember_fact", statement=f"modern era fact {i}")
        assert "modern era fact 2" in text(await ok(new, "recall_facts"))

    served = requests_by_replica(team, before_logs)
    assert all(n > 0 for n in served), f"round robin reached every replica: {served}"
    with team.connect() as conn:
        rows = conn.execute(
            "SELECT source, client_name, count(*) FROM facts WHERE space LIKE 'alice/%' "
            "GROUP BY 1, 2 ORDER BY 1"
        ).fetchall()
    assert rows == [("handshake-agent", "handshake-agent", 6), ("modern-agent", "modern-agent", 3)]

    after = httpx2.get(f"{team.lb.url}/metrics", headers=bearer(scraper), timeout=10).text
    for tool, calls in (("remember_fact", 9), ("recall_facts", 7)):
        moved = sample(after, "lore_tool_calls_total", tool=tool, outcome="ok") - sample(
            scraped, "lore_tool_calls_total", tool=tool, outcome="ok"
        )
        assert moved == calls, (tool, moved)  # every process's calls, whichever answered the scrape

    for log in team.logs:
        for line in log.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)  # every line is JSON
            except ValueError:
                raise AssertionError(f"not JSON: {line!r}") from None
            assert alice not in line and scraper not in line
            if entry.get("msg") == "request":
                assert re.fullmatch(r"[0-9a-f]{16}", entry["request_id"]) and entry["ms"] >= 0
                assert "?" not in entry["path"]


@dataclass
class Tally:
    """What one session saw: writes acknowledged, writes whose outcome it does not know, failures."""

    acked_facts: list[str] = field(default_factory=list)
    acked_messages: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    ok_after_faults: int = 0  # reads that worked in a round begun after both faults
    calls: int = 0
    in_flight: list[str] = field(default_factory=list)  # a write whose call may still be running
    statuses: Counter[int] = field(default_factory=Counter)  # HTTP answers of 400 and more
    n: int = 0


# The kill run's volume, counted, not timed: the sessions go on until this many facts were
# acknowledged and this many calls made (and every session worked after the faults), however long
# that takes on a busy machine, under the cap. A fixed time saw 91 facts on a loaded machine and
# failed the run; nothing was lost, the machine was only slower.
FACTS_ACKED = 100
CALLS_MADE = 300
COUNT_CAP = 240.0  # seconds the counted part may take before the test fails (quiet: about 15)

RETRYABLE = re.compile(
    r"502|503|504|Retry|Lost the connection|Cannot connect to PostgreSQL|closed|disconnect", re.I
)


async def _call(session: ClientSession, tally: Tally, tool: str, **args: Any) -> CallToolResult | None:
    tally.calls += 1
    try:
        with anyio.fail_after(30):
            result = await session.call_tool(tool, args)
    except Exception as exc:  # the transport: a 502/503 from the balancer, a reset connection
        tally.failures.append(f"{tool}: {_first(exc)}")
        if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
            raise  # the session is over (every later call would say the same): open another
        return None
    if result.is_error:
        tally.failures.append(f"{tool}: {text(result)}")
        return None
    return result


async def a_replica_killed_and_postgres_restarted_mid_run_lose_and_repeat_nothing(team: Team) -> None:
    users = ["u1", "u2", "u3", "u4"]
    base = Path("/home/u/proj")
    with team.connect() as conn:
        secrets = {user: token(conn, user) for user in [*users, "asker"]}
        for user in [*users, "asker"]:
            push(conn, user, two_spaces(base), home="/home/u")
    phase = {"killed": False, "healed": False}
    t0 = time.monotonic()
    stop = anyio.Event()
    tallies = [Tally() for _ in range(20)]

    async def run(i: int) -> None:
        user = users[i % 4]
        here, there = ("work", "home") if i % 2 == 0 else ("home", "work")
        open_ = modern_session if i % 5 == 4 else mcp_session  # both eras
        tally = tallies[i]
        while not stop.is_set():
            try:
                await session_run(i, user, here, there, open_, tally)
            except Exception as exc:  # the SDK client's session ends with its connection: open another
                tally.failures.append(f"session: {_first(exc)} at {time.monotonic() - t0:.2f} ({phase})")
                tally.unknown.extend(tally.in_flight)
                tally.in_flight.clear()

    async def session_run(i: int, user: str, here: str, there: str, open_: Any, tally: Tally) -> None:
        async def seen(response: httpx2.Response) -> None:
            # (GET /mcp: a stateless server pushes nothing; DELETE /mcp: nor does it end sessions)
            if response.status_code >= 400 and not (
                response.status_code == 405 and response.request.method in ("GET", "DELETE")
            ):
                tally.statuses[response.status_code] += 1

        headers = bearer(secrets[user], base / here)
        async with open_(team.lb.url, headers, client=f"s{i}", on_response=seen) as s:
            while not stop.is_set():
                tally.n += 1  # every write names itself once: a new session goes on counting
                healed = phase["healed"]
                marker = f"s{i}-{tally.n}"
                tally.in_flight = [f"fact {marker}"]
                fact = await _call(s, tally, "remember_fact", statement=f"fact {marker}")
                (tally.acked_facts if fact else tally.unknown).append(f"fact {marker}")
                tally.in_flight = []
                await _call(s, tally, "search_notes", query=f"fact {marker}")
                tally.in_flight = [f"message {marker}"]
                sent = await _call(s, tally, "send_message", to=there, body=f"message {marker}")
                (tally.acked_messages if sent else tally.unknown).append(f"message {marker}")
                tally.in_flight = []
                if await _call(s, tally, "read_messages") and healed:
                    tally.ok_after_faults += 1
                await anyio.sleep(0.2)  # a few calls a second a session: the machine serves everything

    # A sender waits on replica 1 (its request landed there) across the kill of replica 2 and the
    # restart of PostgreSQL; another one waits on replica 2, the one killed.
    waited: dict[str, Any] = {}

    async def ask(where: Server, key: str) -> None:
        try:  # a connection cut under a call ends the SDK client's whole session: caught out here
            async with mcp_session(where.url, bearer(secrets["asker"], base / "work"), client=key) as s:
                waited[key] = await s.call_tool(
                    "send_message", {"to": "home", "body": f"question {key}", "wait_seconds": 60}
                )
        except Exception as exc:
            waited[key] = exc

    def enough() -> bool:
        acked = sum(len(t.acked_facts) for t in tallies)
        return acked >= FACTS_ACKED and sum(t.calls for t in tallies) >= CALLS_MADE

    reconnected_before = sample(_scrape(team, secrets["u1"]), "lore_listen_events_total", event="reconnected")
    with anyio.fail_after(120 + COUNT_CAP):  # the faults and the answers, then the counted part
        async with anyio.create_task_group() as group:
            group.start_soon(ask, team.replicas[0], "survivor")
            group.start_soon(ask, team.replicas[1], "victim")
            while True:  # the test's own wait: both questions sent (their senders now wait)
                with team.connect() as conn:
                    asked = conn.execute(
                        "SELECT count(*) FROM messages WHERE body LIKE 'question %'"
                    ).fetchone()
                if asked == (2,):
                    break
                await anyio.sleep(0.05)
            for i in range(20):
                group.start_soon(run, i)
            await anyio.sleep(1.0)
            victim_pid = team.replicas[1].pid
            team.kill(1)
            phase["killed"] = True
            print(f"\nkilled at {time.monotonic() - t0:.1f}")
            await anyio.to_thread.run_sync(team.lb.wait, {"r2": "DOWN"})
            await anyio.sleep(0.5)
            await anyio.to_thread.run_sync(team.restart, 1)
            assert team.replicas[1].pid != victim_pid
            print(f"restarted at {time.monotonic() - t0:.1f}")
            await anyio.sleep(0.5)
            await anyio.to_thread.run_sync(team.pg.restart)
            print(f"postgres restarted at {time.monotonic() - t0:.1f}")
            await anyio.to_thread.run_sync(team.lb.wait, {"r1": "UP", "r2": "UP", "r3": "UP"})
            print(f"all up at {time.monotonic() - t0:.1f}")
            phase["healed"] = True
            await anyio.sleep(0.5)
            # The answers, through the balancer, after both faults.
            async with mcp_session(
                team.lb.url, bearer(secrets["asker"], base / "home"), client="answerer"
            ) as a:
                for _ in range(100):
                    got = (await ok(a, "read_messages")).structured_content["messages"]
                    questions = {m["body"]: m["id"] for m in got if m["body"].startswith("question ")}
                    if len(questions) == 2:
                        break
                    await anyio.sleep(0.1)
                assert set(questions) == {"question survivor", "question victim"}, questions
                for body, qid in questions.items():
                    await ok(a, "send_message", to="work", body=f"answer to {body}", reply_to=qid)
            print(f"answered at {time.monotonic() - t0:.1f}")
            # Every session works again after both faults: each gets a round of its own begun after
            # them (a session whose connection was cut opens another first); and the run has its
            # volume (FACTS_ACKED, CALLS_MADE). The wait is bounded by count, with a cap: a session
            # that never comes back, or a run that never gets there, fails the checks below. A fixed
            # wait raced a busy machine (CI: one of 20 sessions had no round of its own in the 0.5 s
            # after the answers; a loaded machine: 91 facts acknowledged).
            with anyio.move_on_after(COUNT_CAP):
                while not (all(t.ok_after_faults > 0 for t in tallies) and enough()):
                    await anyio.sleep(0.1)
            print(f"every session served after the faults, and the volume, at {time.monotonic() - t0:.1f}")
            stop.set()

    # The reply waited for on the surviving replica arrived, across the kill and the restart.
    survivor = waited["survivor"]
    assert isinstance(survivor, CallToolResult) and not survivor.is_error, survivor
    assert survivor.structured_content["reply"]["body"] == "answer to question survivor"
    # The one on the killed replica failed as a broken connection does; the reply is kept for it.
    assert not isinstance(waited["victim"], CallToolResult) or waited["victim"].is_error
    # The listeners reconnected after PostgreSQL's restart.
    after = _scrape(team, secrets["u1"])
    assert sample(after, "lore_listen_events_total", event="reconnected") > reconnected_before

    acked_facts = [m for t in tallies for m in t.acked_facts]
    acked_messages = [m for t in tallies for m in t.acked_messages]
    unknown = {m for t in tallies for m in t.unknown}
    with team.connect() as conn:
        facts = Counter(
            statement
            for (statement,) in conn.execute("SELECT statement FROM facts WHERE statement LIKE 'fact s%'")
        )
        messages = Counter(
            body for (body,) in conn.execute("SELECT body FROM messages WHERE body LIKE 'message s%'")
        )
        late = conn.execute(
            "SELECT a.to_space FROM messages a JOIN messages q ON a.reply_to = q.id "
            "WHERE a.body = 'answer to question victim' AND q.body = 'question victim'"
        ).fetchall()
    lost = [m for m in acked_facts if facts[m] == 0] + [m for m in acked_messages if messages[m] == 0]
    twice = [m for m, n in (facts + messages).items() if n > 1]
    stray = [m for m in (facts + messages) if m not in set(acked_facts) | set(acked_messages) | unknown]
    assert lost == [] and twice == [] and stray == [], (lost, twice, stray)
    assert late == [("asker/work",)]  # the killed sender's reply is there for its next read_messages

    calls = sum(t.calls for t in tallies)
    failures = [f for t in tallies for f in t.failures]
    assert len(acked_facts) >= FACTS_ACKED and calls >= CALLS_MADE, (len(acked_facts), calls, COUNT_CAP)
    print("\n".join(failures[:20]))
    # The SDK's client says "Server returned an error response" for any HTTP error status: the ones
    # it got were the balancer's 502/503 (a replica gone, every replica unready while PostgreSQL
    # restarted), which say to try again.
    statuses = sum((t.statuses for t in tallies), Counter[int]())
    assert set(statuses) <= {502, 503, 504}, statuses
    http_errors = [f for f in failures if "Server returned an error response" in f]
    assert len(http_errors) <= sum(statuses.values()), (http_errors, statuses)
    not_retryable = [f for f in failures if f not in http_errors and not RETRYABLE.search(f)]
    assert not_retryable == [], not_retryable[:5]
    assert all(t.ok_after_faults > 0 for t in tallies), [
        (i, t.ok_after_faults, t.failures[-3:]) for i, t in enumerate(tallies) if not t.ok_after_faults
    ]
    print(
        f"\nkill run: {calls} calls, {len(failures)} retryable failures ({dict(statuses)}),"
        f" {len(unknown)} writes of unknown outcome"
    )


def _first(exc: BaseException) -> str:
    """The innermost first error of an exception group, as `Type: message`."""
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def _scrape(team: Team, secret: str) -> str:
    answer = httpx2.get(f"{team.lb.url}/metrics", headers=bearer(secret), timeout=10)
    answer.raise_for_status()
    return answer.text
