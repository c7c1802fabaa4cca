#!/usr/bin/env bash
# prepared_crash.sh: CONTINUOUS tables and two-phase commit.
#
# A prepared transaction is not applied until COMMIT PREPARED, and never
# after ROLLBACK PREPARED; while one waits, later transactions are applied
# as usual, and a refresh by hand reads around it (its changes are applied
# when it commits).  A prepared transaction outlives a crash: the postmaster is
# killed with SIGKILL while two wait, the server is started again, one is
# committed and one rolled back, and every table (own-rows deltas, hidden
# state deltas, keys) converges to exactly its query: the committed one
# counted once, the rolled back one not at all.
#
# Environment (set by test/run.sh): MT_TEST_DIR, MT_TEST_PORT, PGBIN.  The
# cluster needs max_prepared_transactions > 0 (scripts/pg_cluster.sh).
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

tables="materialized_table.materialized_tables t JOIN pg_class c ON c.oid = t.table_name
        WHERE c.relnamespace = 'crash_pp'::regnamespace"
all_match="SELECT count(*) = 3 AND sum(crash_pp.mismatches(table_name)) = 0 FROM $tables"

# every run, even a failed one, leaves no prepared transaction or schema
cleanup() {
    if "$PGBIN/pg_isready" -q; then
        for gid in $(sql -c "SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'crash_pp_%'" 2>/dev/null); do
            sql -c "ROLLBACK PREPARED '$gid'" >/dev/null 2>&1 || true
        done
        sql -c "DROP SCHEMA IF EXISTS crash_pp CASCADE" >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT

[ "$(sql -c "SHOW max_prepared_transactions")" -gt 0 ] ||
    fail "max_prepared_transactions is 0 (the cluster is not configured by scripts/pg_cluster.sh)"

sql -v schema=crash_pp <<SQL
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS crash_pp CASCADE;
CREATE SCHEMA crash_pp;
\ir $top/test/lib/mismatches.sql
CREATE TABLE crash_pp.src (id int PRIMARY KEY, grp int NOT NULL, v int NOT NULL);
INSERT INTO crash_pp.src SELECT i, i % 20, i % 100 FROM generate_series(1, 2000) i;
SELECT materialized_table.execute(\$\$
  CREATE MATERIALIZED TABLE crash_pp.own FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM crash_pp.src GROUP BY grp;
  CREATE MATERIALIZED TABLE crash_pp.avgs FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, avg(v) AS mean FROM crash_pp.src GROUP BY grp;
  CREATE MATERIALIZED TABLE crash_pp.tops FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, max(v) AS top FROM crash_pp.src GROUP BY grp\$\$) \g /dev/null
SQL
wait_for 60 "SELECT bool_and(synced) FROM materialized_table_internal.continuous_state" ||
    fail "the worker did not take the tables up"

# two prepared transactions, each inserting, updating and deleting
sql <<'SQL'
BEGIN;
INSERT INTO crash_pp.src SELECT i, 901, 1000 FROM generate_series(10001, 10010) i;
UPDATE crash_pp.src SET v = v + 500 WHERE id BETWEEN 1 AND 50;
DELETE FROM crash_pp.src WHERE id BETWEEN 51 AND 60;
PREPARE TRANSACTION 'crash_pp_commit';
BEGIN;
INSERT INTO crash_pp.src SELECT i, 902, 2000 FROM generate_series(10011, 10020) i;
UPDATE crash_pp.src SET v = v + 700 WHERE id BETWEEN 61 AND 110;
DELETE FROM crash_pp.src WHERE id BETWEEN 111 AND 120;
PREPARE TRANSACTION 'crash_pp_rollback';
SQL

# a later transaction is applied while they wait; they are not
sql -c "INSERT INTO crash_pp.src VALUES (10021, 903, 3)"
wait_for 10 "SELECT EXISTS (SELECT FROM crash_pp.own WHERE grp = 903)" ||
    fail "a transaction committed after two prepared ones was not applied"
wait_for 10 "$all_match" || fail "the tables do not equal their queries while transactions are prepared"
echo "ok: prepared transactions are not applied; a later one is"

# recomputed while they wait: their changes come after what the refreshes read
sql -c "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE crash_pp.own REFRESH;
          ALTER MATERIALIZED TABLE crash_pp.avgs REFRESH; ALTER MATERIALIZED TABLE crash_pp.tops REFRESH')" >/dev/null
sql -c "INSERT INTO crash_pp.src VALUES (10022, 904, 4)"
wait_for 10 "SELECT EXISTS (SELECT FROM crash_pp.own WHERE grp = 904)" ||
    fail "a transaction committed after the refreshes was not applied"
wait_for 10 "$all_match" || fail "the tables do not equal their queries after refreshes"

cluster kill "$MT_TEST_DIR"
cluster restart "$MT_TEST_DIR"
wait_ready
[ "$(sql -c "SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'crash_pp_%'")" = 2 ] ||
    fail "the prepared transactions did not survive the crash"

sql -c "COMMIT PREPARED 'crash_pp_commit'" -c "ROLLBACK PREPARED 'crash_pp_rollback'"
wait_for 30 "SELECT EXISTS (SELECT FROM crash_pp.own WHERE grp = 901)" ||
    fail "COMMIT PREPARED after the crash was not applied"
wait_for 30 "$all_match" || {
    sql -c "SELECT table_name, crash_pp.mismatches(table_name) FROM $tables" >&2
    fail "the tables did not converge after COMMIT / ROLLBACK PREPARED"
}
[ "$(sql -c "SELECT count(*) FROM crash_pp.own WHERE grp = 902")" = 0 ] ||
    fail "a rolled back prepared transaction was applied"
failed=$(sql -c "SELECT count(*) FROM materialized_table.refresh_history h JOIN pg_class c ON c.oid = h.table_name
                  WHERE c.relnamespace = 'crash_pp'::regnamespace AND h.status = 'FAILED'")
[ "$failed" = 0 ] || fail "$failed cycles failed"
echo "ok: after a crash, COMMIT PREPARED is applied once and ROLLBACK PREPARED not at all"

sql -c "SELECT materialized_table.execute('DROP MATERIALIZED TABLE crash_pp.own;
          DROP MATERIALIZED TABLE crash_pp.avgs; DROP MATERIALIZED TABLE crash_pp.tops')" >/dev/null
