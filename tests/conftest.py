"""Shared fixtures: one real embedded PostgreSQL per test session, and a clean schema per test.
Also the suite-wide settings: Hypothesis's profiles and the per-test timeouts (pytest-timeout)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from support import kinds, older_postgres
from support.db import empty_schema, forget_hook_state

from lore import embeddings
from lore.core.config import EmbedderSettings
from lore.db import embedded, migrate
from lore.embeddings import files

ROOT = Path(__file__).resolve().parent.parent
# As root, a cluster whose data dir lies under a closed directory goes under the root base
# (lore.db.embedded.pgdata_dir), and so does the copy of the server's binaries when the venv is
# under one (a checkout in root's 0700 home: embedded.server_bin_dir): in tests, a temporary one,
# never the machine's /var/lib/lore. Open to other users (0755, as /var/lib/lore and the benchmarks'
# base are): the server runs as lore-postgres, which must pass through it (mkdtemp makes it 0700).
# Made once, by the process that starts the run (xdist's workers inherit it), and removed when that
# process ends: 260 runs had left 1.6 GB of them in /tmp.
_MADE_ROOT_BASE = "LORE_ROOT_BASE" not in os.environ
if _MADE_ROOT_BASE:
    os.environ["LORE_ROOT_BASE"] = tempfile.mkdtemp(prefix="lore-root-base-", dir="/tmp")
    os.chmod(os.environ["LORE_ROOT_BASE"], 0o755)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _MADE_ROOT_BASE:
        # A safety net: a cluster a test left running is stopped before the base is removed (only
        # this run's clusters live there).
        embedded.stop_under(Path(os.environ["LORE_ROOT_BASE"]))
        shutil.rmtree(os.environ["LORE_ROOT_BASE"], ignore_errors=True)


# Hypothesis. On a developer's machine ("dev"): random examples, and every failing example is kept in
# .hypothesis/examples at the repository root and tried first on the next run. In CI (CI set, as
# .ci/run does; "ci"): derandomized, so a run is the same examples every time and a failure is
# reproducible from the log (print_blob gives the @reproduce_failure line). Hypothesis requires
# database=None with derandomize; a failure worth keeping for CI becomes an @example in its test.
# Both start from Hypothesis's own "default" profile, not from whichever it loaded at import (its own
# "ci" when any CI variable is set, even empty).
settings.register_profile(
    "dev",
    settings.get_profile("default"),
    derandomize=False,
    database=DirectoryBasedExampleDatabase(str(ROOT / ".hypothesis" / "examples")),
)
settings.register_profile(
    "ci",
    settings.get_profile("default"),
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
_IN_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if _IN_CI else "dev"))

# pytest-timeout: `timeout` in pyproject.toml (300 s) stops any test that hangs (a server that never
# answers, a wait without a bound) and reports where it was. Tests that install or drive agent CLIs
# from npm (a first install takes minutes) and the short soak (its own bound is 300 s) get longer.
LONG_TIMEOUTS = {"tests/e2e/": 1800.0, "tests/agents/": 1800.0, "tests/reliability/test_soak.py": 600.0}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test's markers by where it is (support.kinds: its kind, infra, slow; what `make quick`
    selects by), and the longer timeouts."""
    timeouts = config.pluginmanager.hasplugin("timeout")
    for item in items:
        path = item.path.resolve()
        where = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else ""
        try:
            names = kinds.markers(where)
        except LookupError as exc:
            raise pytest.UsageError(str(exc)) from None
        for name in names:
            item.add_marker(name)
        if not timeouts or item.get_closest_marker("timeout") is not None:
            continue
        for prefix, seconds in LONG_TIMEOUTS.items():
            if where.startswith(prefix):
                item.add_marker(pytest.mark.timeout(seconds))
                break


@pytest.fixture(scope="session", autouse=True)
def one_local_model_per_process() -> Iterator[None]:
    """In-process runtimes (the SDK's in-memory MCP client, the served HTTP app) share one loaded
    local model per test process, as the runtimes of one lore process would share theirs if it had
    several: building the ONNX session costs 0.6 s of CPU, more than most tests. One per place the
    model files come from and thread count, so a test of another model folder gets its own."""
    shared: dict[tuple[tuple[str, ...], str], embeddings.Embedder | None] = {}
    original = embeddings.REGISTRY["local"]

    def local(settings: EmbedderSettings, env: Mapping[str, str]) -> embeddings.Embedder | None:
        key = (tuple(map(str, files.candidates(env))), env.get("LORE_EMBED_THREADS", "1"))
        if key not in shared:
            shared[key] = original(settings, env)
        return shared[key]

    embeddings.REGISTRY["local"] = local
    try:
        yield
    finally:
        embeddings.REGISTRY["local"] = original


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def pg_data_dir() -> Iterator[Path]:
    """A private LORE_DATA_DIR whose embedded server lives for the whole test session."""
    root = Path(tempfile.mkdtemp(prefix="lore-test-", dir="/tmp"))
    env = {"LORE_DATA_DIR": str(root)}
    with older_postgres.binaries(older_postgres.ASKED):
        embedded.start(env)
        try:
            yield root
        finally:
            embedded.stop(env)
            shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def db_url(pg_data_dir: Path) -> str:
    url = embedded.start({"LORE_DATA_DIR": str(pg_data_dir)})
    with psycopg.connect(url) as conn:
        migrate.upgrade(conn)
    return url


@pytest.fixture
def conn(db_url: str) -> Iterator[psycopg.Connection]:
    """A connection to a freshly emptied schema."""
    empty_schema(db_url)
    with psycopg.connect(db_url) as c:
        yield c


@pytest.fixture
def lore_env(pg_data_dir: Path, tmp_path: Path, conn: psycopg.Connection) -> dict[str, str]:
    """Environment for a lore subprocess: the test database, an isolated HOME and config path. What
    the hooks keep in the data dir (the spool, run markers, kept texts, prompt state, the hook log)
    starts empty for each test, as the schema does: the data dir is the worker's, shared with its
    embedded server."""
    home = tmp_path / "home"
    home.mkdir()
    forget_hook_state(pg_data_dir)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LORE_DATA_DIR": str(pg_data_dir),
        "LORE_CONFIG": str(tmp_path / "config.toml"),
        # Hooks under test get 3 s, not 0.9: on these 2 cores, with four workers and agent CLIs
        # starting, a hook process can wait a second for a core and would then fail open. The tests
        # of the deadline itself set 0.9 (tests/integration/test_hook.py, tests/http/test_hosted_hook.py).
        "LORE_HOOK_DEADLINE": "3",
        # The test venv has the e5 extra (a second model beside `local`); the tests of it turn it on.
        "LORE_SECOND_EMBEDDER": "none",
        # As root, where the test clusters live: a lore started without it would look for (and
        # start) the cluster under /var/lib/lore, where nothing removes it after the tests.
        **({"LORE_ROOT_BASE": os.environ["LORE_ROOT_BASE"]} if os.environ.get("LORE_ROOT_BASE") else {}),
    }
