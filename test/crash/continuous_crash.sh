#!/usr/bin/env bash
# continuous_crash.sh: CONTINUOUS tables of every query shape converge to
# exactly their queries -- nothing lost, nothing duplicated -- after the
# postmaster is killed with SIGKILL at random moments under a write load of
# inserts, updates and deletes on three source tables.
#
# Environment (set by test/run.sh): MT_TEST_DIR, MT_TEST_PORT, PGBIN.
# MT_CRASHES (default 3) kills; MT_LOAD_SECONDS (default 30) of load.
set -euo pipefail

: "${MT_TEST_DIR:?}" "${MT_TEST_PORT:?}"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
crashes=${MT_CRASHES:-3}
seconds=${MT_LOAD_SECONDS:-30}
top=$(cd "$(dirname "$0")/../.." && pwd)
export PGHOST=$MT_TEST_DIR PGPORT=$MT_TEST_PORT PGUSER=postgres PGDATABASE=contrib_regression

sql() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
cluster() { bash "$top/scripts/pg_cluster.sh" "$@"; }

wait_ready() {
    for _ in $(seq 1 120); do
        "$PGBIN/pg_isready" -q && sql -c 'SELECT 1' >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    echo "server did not come back" >&2
    return 1
}

# until no table waits to be taken up or has work kept, and all match
converge() {
    local deadline=$((SECONDS + ${1:-120})) bad
    while [ $SECONDS -lt $deadline ]; do
        bad=$(sql -c "SELECT coalesce(sum(load.mismatches(table_name)), 0)
                        FROM materialized_table.materialized_tables
                       WHERE table_name::text LIKE 'load.%'" 2>/dev/null || echo error)
        [ "$bad" = 0 ] && return 0
        sleep 1
    done
    echo "tables did not converge:" >&2
    sql -c "SELECT table_name, load.mismatches(table_name), maintenance
              FROM materialized_table.materialized_tables WHERE table_name::text LIKE 'load.%'" >&2
    sql -c "SELECT relid::regclass, synced, needs_full, pending_since FROM materialized_table_internal.continuous_state" >&2
    grep -E 'materialized_table|ERROR|FATAL' "$MT_TEST_DIR/server.log" | tail -20 >&2
    return 1
}

start_load() {
    "$PGBIN/pgbench" -n -c 2 -T "$1" -f "$top/test/lib/continuous_load.pgbench" \
        >"$MT_TEST_DIR/pgbench.log" 2>&1 &
    load_pid=$!
}

sql -f "$top/test/lib/continuous_fixture.sql" >/dev/null
converge 60

echo "load for ${seconds}s with $crashes crashes"
start_load "$seconds"
for i in $(seq 1 "$crashes"); do
    sleep $((2 + RANDOM % 5))
    echo "  kill -9 of the postmaster ($i)"
    cluster kill "$MT_TEST_DIR"
    wait "$load_pid" 2>/dev/null || true
    cluster restart "$MT_TEST_DIR"
    wait_ready
    start_load $((seconds / crashes))
done
wait "$load_pid" 2>/dev/null || true

converge 120

# nothing in the catalog or the tables was damaged by the crashes
sql -c "CREATE EXTENSION IF NOT EXISTS amcheck" >/dev/null
dups=$(sql -c "SELECT count(*) - count(DISTINCT relid) FROM materialized_table_internal.mt_table")
[ "$dups" = 0 ] || { echo "duplicated catalog rows: $dups" >&2; exit 1; }
sql -c "SELECT bt_index_check(i.indexrelid, true)
          FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname IN ('load', 'materialized_table_internal') AND c.relkind = 'r'" >/dev/null
tps=$(grep -o 'tps = [0-9.]*' "$MT_TEST_DIR/pgbench.log" | head -1 || true)
echo "all tables equal their queries after $crashes crashes ($tps in the last load)"
sql -c "DROP SCHEMA load CASCADE" >/dev/null
