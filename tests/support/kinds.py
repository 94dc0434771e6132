"""Each test's markers, by where it is (tests/conftest.py applies them at collection; the Makefile
selects by them: `make quick`, `make unit`; pyproject.toml registers them).

- Its **kind**, one per test, from its folder: `unit` (pure modules, no database), `integration`
  (the core against the real PostgreSQL, in the test's process or through the real `lore`), `http`
  (servers on loopback sockets), `web` (the browser), `agents` (installers and agent files), `e2e`
  (a real agent CLI from npm against a local mock model; the files that drive one say so
  themselves with `pytestmark`, in tests/agents too).
- `infra`: the file starts infrastructure of its own: embedded servers it creates, races and
  kills (their lifecycle, port handling, concurrent migrations), PgBouncer and HAProxy, replicas.
- `slow`: the file takes tens of seconds of a core however quick the code under test is: a fresh
  clone and its venvs, a soak, crashes waited out, property tests over whole databases.

`make quick` is unit and integration without infra or slow; `make test` runs everything."""

from __future__ import annotations

KINDS = {
    "unit": "unit",
    "integration": "integration",
    "work": "integration",
    "retrieval": "integration",
    "reliability": "integration",
    "tools": "integration",
    "http": "http",
    "web": "web",
    "agents": "agents",
    "e2e": "e2e",
}
INFRA = frozenset(
    {
        "tests/integration/test_embedded.py",
        "tests/integration/test_embedded_security.py",
        "tests/integration/test_migrate_race.py",
        "tests/integration/test_serve_port.py",
        "tests/integration/test_db_stop.py",
        "tests/http/test_pooler.py",
        "tests/http/test_team.py",
        "tests/http/test_replicas.py",
    }
)
SLOW = frozenset(
    {
        "tests/tools/test_quickstart.py",
        "tests/tools/test_wheel.py",
        "tests/tools/test_concurrency.py",
        "tests/reliability/test_soak.py",
        "tests/reliability/test_crash.py",
        "tests/reliability/test_import_malformed.py",
        "tests/reliability/test_transfer.py",
        "tests/reliability/test_config_fuzz.py",
        "tests/retrieval/test_retrieval_mcp.py",
    }
)
MARKERS = {*KINDS.values(), "infra", "slow"}


def markers(where: str) -> list[str]:
    """The markers of the tests in `where` (a path relative to the repository, `tests/...`)."""
    parts = where.split("/")
    if len(parts) < 3 or parts[0] != "tests" or parts[1] not in KINDS:
        raise LookupError(
            f"{where}: no kind for tests in this folder; add the folder to KINDS in tests/support/kinds.py"
        )
    return [KINDS[parts[1]], *(["infra"] if where in INFRA else []), *(["slow"] if where in SLOW else [])]
