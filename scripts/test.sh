#!/usr/bin/env bash
# `make test`: the whole suite, then lint, type checks and the older-PostgreSQL run.
#
# The main run (xdist, WORKERS processes) goes first and alone: its tests time real programs (the
# hooks' soft deadline, agent CLIs starting a hook, an embedded server starting), and on this 2-core
# machine ruff, mypy and a second PostgreSQL run beside it pushed them past their limits (CI failed
# on four such tests). Then ruff/mypy and the PostgreSQL 16 run (one process, mostly waiting on its
# server) run together. Each one's output is printed at the end, and any failure fails the whole.
#
# The main run ends with its 25 slowest tests (--durations=25).
#
# Usage: scripts/test.sh BIN WORKERS OLDER_PG_TESTS...
set -uo pipefail
bin=$1 workers=$2
shift 2
logs=$(mktemp -d)
pids=()
stop() {
	for pid in "${pids[@]}"; do kill -- "$pid" 2>/dev/null; done
	wait
	rm -rf "$logs"
}
trap stop EXIT
trap 'exit 130' INT TERM

"$bin/python" -m pytest -n "$workers" --dist worksteal --durations=25
status=$?

(make --no-print-directory lint typecheck >"$logs/lint.out" 2>&1; echo $? >"$logs/lint.rc") &
pids+=($!)
(LORE_TEST_POSTGRES=16 "$bin/python" -m pytest -q -p no:cacheprovider "$@" >"$logs/pg16.out" 2>&1
	echo $? >"$logs/pg16.rc") &
pids+=($!)
wait "${pids[@]}"
pids=()
for part in lint pg16; do
	rc=$(cat "$logs/$part.rc" 2>/dev/null || echo 1)
	case $part in
	lint) title="ruff, ruff format, import contracts, mypy" ;;
	pg16) title="the schema and core tests on PostgreSQL 16.2 with pgvector 0.6.2" ;;
	esac
	if [ "$rc" = 0 ]; then
		echo "== $title: passed ($(tail -n 1 "$logs/$part.out"))"
	else
		echo "== $title: FAILED (exit $rc)"
		cat "$logs/$part.out"
		status=1
	fi
done
exit "$status"
