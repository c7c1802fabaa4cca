#!/usr/bin/env bash
# slow_table_crash.sh: a table's work of a batch is applied exactly once
# when the batch's tables commit apart and the server crashes in between.
#
# A batch changes the sources of a quick table (maintained by deltas: work
# applied twice would count twice) and of a slow one, whose recompute waits
# at a gate held closed.  The quick table's work is committed (and made
# durable) while the slow one waits, before the batch's end is recorded;
# then the postmaster is killed with SIGKILL.  After the restart the batch
# is decoded again: the quick table must not get its work a second time,
# the slow one must get it, and both must equal their queries.
#
# Environment (set by test/run.sh): MT_TEST_DIR, MT_TEST_PORT, PGBIN.
set -euo pipefail

: "${MT_TEST_DIR:?}" "${MT_TEST_PORT:?}"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
top=$(cd "$(dirname "$0")/../.." && pwd)
export PGHOST=$MT_TEST_DIR PGPORT=$MT_TEST_PORT PGUSER=postgres PGDATABASE=contrib_regression

sql() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
cluster() { bash "$top/scripts/pg_cluster.sh" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

wait_ready() {
    for _ in $(seq 1 120); do
        "$PGBIN/pg_isready" -q && sql -c 'SELECT 1' >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    fail "the server did not come back"
}

# wait_for SECONDS SQL: until SQL returns t
wait_for() {
    local deadline=$((SECONDS + $1))
    while [ $SECONDS -lt $deadline ]; do
        [ "$(sql -c "$2" 2>/dev/null || true)" = t ] && return 0
        sleep 0.2
    done
    return 1
}

gate_pid=
cleanup() {
    [ -n "$gate_pid" ] && kill "$gate_pid" 2>/dev/null || true
    if "$PGBIN/pg_isready" -q; then
        sql -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS crash_slow CASCADE" \
            >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT

sql -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS crash_slow CASCADE" -c "CREATE SCHEMA crash_slow"
sql -v schema=crash_slow -f "$top/test/lib/mismatches.sql"
sql <<'SQL'
SET client_min_messages = warning;
CREATE TABLE crash_slow.src (id int PRIMARY KEY, grp int NOT NULL, v int NOT NULL);
INSERT INTO crash_slow.src SELECT i, i % 20, i % 100 FROM generate_series(1, 2000) i;
CREATE TABLE crash_slow.other (id int PRIMARY KEY, grp int NOT NULL, v int NOT NULL);
INSERT INTO crash_slow.other SELECT i, i % 5, i FROM generate_series(1, 100) i;
-- waits while another session holds advisory lock 4343 (see
-- test/pgtap/continuous_slow_table.sql)
CREATE FUNCTION crash_slow.gate() RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    PERFORM pg_sleep(0.06);
    WHILE NOT pg_try_advisory_lock_shared(4343) LOOP
        PERFORM pg_sleep(0.05);
    END LOOP;
    PERFORM pg_advisory_unlock_shared(4343);
    RETURN true;
END
$$;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE crash_slow.quick FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM crash_slow.src GROUP BY grp;
  CREATE MATERIALIZED TABLE crash_slow.slow FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, string_agg(v::text, ',' ORDER BY id) AS vs
      FROM crash_slow.other WHERE crash_slow.gate() GROUP BY ROLLUP (grp)$$);
SQL
both="SELECT count(*) = 2 AND sum(crash_slow.mismatches(t.table_name)) = 0
        FROM materialized_table.materialized_tables t JOIN pg_class c ON c.oid = t.table_name
       WHERE c.relnamespace = 'crash_slow'::regnamespace"
wait_for 60 "$both" || fail "the tables were not taken up"

# the gate closes; one transaction changes both sources
"$PGBIN/psql" -X -q -c "SELECT pg_advisory_lock(4343), pg_sleep(600)" >/dev/null 2>&1 &
gate_pid=$!
wait_for 10 "SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = 4343 AND granted)" ||
    fail "the gate did not close"
sql -c "BEGIN" -c "UPDATE crash_slow.src SET v = v + 1 WHERE id <= 500" \
    -c "UPDATE crash_slow.other SET v = 200 - v WHERE id < 10" -c "COMMIT"
wait_for 30 "SELECT crash_slow.mismatches('crash_slow.quick') = 0" ||
    fail "the quick table did not get its work while the slow one waits"
wait_for 10 "SELECT query LIKE '%maintaining slow%' FROM pg_stat_activity
              WHERE backend_type = 'materialized_table worker' AND datname = current_database()" ||
    fail "the slow table is not being recomputed"
# a synchronous commit flushes the WAL of the quick table's work
sql -c "SELECT pg_current_xact_id()" >/dev/null

echo "  kill -9 of the postmaster while the slow table waits"
cluster kill "$MT_TEST_DIR"
wait "$gate_pid" 2>/dev/null || true
gate_pid=
cluster restart "$MT_TEST_DIR"
wait_ready

if ! wait_for 60 "$both"; then
    sql -c "SELECT t.table_name, crash_slow.mismatches(t.table_name)
              FROM materialized_table.materialized_tables t JOIN pg_class c ON c.oid = t.table_name
             WHERE c.relnamespace = 'crash_slow'::regnamespace" >&2 || true
    fail "after the restart the tables do not equal their queries (work applied twice or lost)"
fi
echo "ok: the quick table's work committed before the crash was not applied again; the slow one's was applied"
