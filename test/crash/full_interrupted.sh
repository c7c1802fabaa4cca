#!/usr/bin/env bash
# full_interrupted.sh: a FULL refresh cut short by a crash.
#
# A scheduled refresh is made slow (its query sleeps), the postmaster is
# killed with SIGKILL in the middle of it, and the server is started again.
# Then:
#   - refresh_history shows the run as FAILED, with the message for an
#     interrupted refresh (nothing repaired it: the status is derived from
#     the run's transaction, which the crash aborted);
#   - the table has its old content;
#   - the per-database worker is back and drives its sub-minute table
#     again, after the crash and after a clean restart.
#
# Environment (as test/run.sh sets it): MT_TEST_DIR and MT_TEST_PORT (the
# cluster, started by scripts/pg_cluster.sh), PGBIN; the database is
# contrib_regression, with pg_cron and materialized_table.  Exits non-zero
# on failure; leaves the cluster running.
set -euo pipefail

cd "$(dirname "$0")/../.."
: "${MT_TEST_DIR:?MT_TEST_DIR must name the test cluster directory}"
: "${MT_TEST_PORT:?MT_TEST_PORT must give the test cluster port}"
: "${PGBIN:?PGBIN must name the PostgreSQL binaries}"
export PGHOST=$MT_TEST_DIR PGPORT=$MT_TEST_PORT PGUSER=postgres PGDATABASE=contrib_regression
export PGBIN

psql_q() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# wait_for SECONDS SQL: until SQL returns t
wait_for() {
    local deadline=$((SECONDS + $1))
    while [ "$SECONDS" -lt "$deadline" ]; do
        [ "$(psql_q -c "$2" 2>/dev/null || true)" = t ] && return 0
        sleep 0.2
    done
    return 1
}

wait_ready() {
    local deadline=$((SECONDS + 120))
    until "$PGBIN/pg_isready" -q; do
        [ "$SECONDS" -lt "$deadline" ] || fail "the server did not come back"
        sleep 0.2
    done
}

# every run, even a failed one, drops what it made
cleanup() {
    if "$PGBIN/pg_isready" -q; then
        psql_q -c "UPDATE crash_fi.control SET seconds = 0" >/dev/null 2>&1 || true
        psql_q -c "DROP SCHEMA IF EXISTS crash_fi CASCADE" >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT
log_start=$(stat -c %s "$MT_TEST_DIR/server.log" 2>/dev/null || echo 0)

psql_q <<'SQL'
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS crash_fi CASCADE;
CREATE SCHEMA crash_fi;
CREATE TABLE crash_fi.src (id int PRIMARY KEY, v int);
INSERT INTO crash_fi.src VALUES (1, 10), (2, 20);
CREATE TABLE crash_fi.control (seconds float);
INSERT INTO crash_fi.control VALUES (0);
CREATE FUNCTION crash_fi.nap() RETURNS int LANGUAGE sql VOLATILE
AS $$ SELECT 1 FROM pg_sleep((SELECT seconds FROM crash_fi.control)) $$;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE crash_fi.slow FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
    AS SELECT sum(v) AS total, crash_fi.nap() AS napped FROM crash_fi.src;
  ALTER MATERIALIZED TABLE crash_fi.slow SUSPEND;
  CREATE MATERIALIZED TABLE crash_fi.fast FRESHNESS = INTERVAL '2' SECOND REFRESH_MODE = FULL
    AS SELECT sum(v) AS total FROM crash_fi.src$$) \g /dev/null
SQL
[ "$(psql_q -c "SELECT total FROM crash_fi.slow")" = 30 ] || fail "the table was not filled at CREATE"

# a slow scheduled run, killed in its middle
psql_q -c "UPDATE crash_fi.src SET v = v + 1; UPDATE crash_fi.control SET seconds = 300"
"$PGBIN/psql" -X -q -c "SELECT materialized_table.scheduled_refresh('crash_fi.slow', '2024-01-01 01:00:00+00')" \
    >/dev/null 2>&1 &
client=$!
wait_for 20 "SELECT EXISTS (SELECT FROM materialized_table.refresh_history
                             WHERE table_name = 'crash_fi.slow'::regclass AND status = 'RUNNING')" ||
    fail "the slow refresh did not start"
ok "a scheduled refresh is running"

postmaster=$(head -1 "$MT_TEST_DIR/data/postmaster.pid")
children=$(ps --ppid "$postmaster" -o pid= || true)
bash scripts/pg_cluster.sh kill "$MT_TEST_DIR"
# the postmaster's children notice its death and leave; a new postmaster
# refuses to start while they hold the shared memory
deadline=$((SECONDS + 60))
for pid in $children; do
    while kill -0 "$pid" 2>/dev/null; do
        [ "$SECONDS" -lt "$deadline" ] || fail "process $pid outlived the postmaster"
        sleep 0.1
    done
done
wait "$client" 2>/dev/null || true
ok "postmaster killed with SIGKILL"

bash scripts/pg_cluster.sh restart "$MT_TEST_DIR"
wait_ready
ok "server restarted after the crash"

# the interrupted run is FAILED, with the interrupted message; old content
read -r status error <<<"$(psql_q -F ' ' -c "SELECT status, error FROM materialized_table.refresh_history
                                              WHERE table_name = 'crash_fi.slow'::regclass
                                              ORDER BY run_id DESC LIMIT 1")"
[ "$status" = FAILED ] || fail "the interrupted run shows as '$status', not FAILED"
psql_q -c "SELECT error FROM materialized_table.refresh_history
            WHERE table_name = 'crash_fi.slow'::regclass ORDER BY run_id DESC LIMIT 1" |
    grep -q "interrupted by a server restart" || fail "the interrupted run's error does not say so: $error"
ok "the interrupted run shows as FAILED ($error)"
[ "$(psql_q -c "SELECT count(*) FROM materialized_table.refresh_history
                WHERE table_name = 'crash_fi.slow'::regclass AND status = 'RUNNING'")" = 0 ] ||
    fail "a run still shows as RUNNING"
[ "$(psql_q -c "SELECT total FROM crash_fi.slow")" = 30 ] || fail "the table lost its old content"
ok "the table kept its old content"

# the next run succeeds
psql_q -c "UPDATE crash_fi.control SET seconds = 0"
psql_q -c "SELECT materialized_table.scheduled_refresh('crash_fi.slow', '2024-01-01 02:00:00+00')" >/dev/null
[ "$(psql_q -c "SELECT total FROM crash_fi.slow")" = 32 ] || fail "the next run did not refresh the table"
ok "the next run succeeds"

# the worker is back and drives the 2-second table
check_worker() {
    wait_for 15 "SELECT EXISTS (SELECT FROM pg_stat_activity
                                 WHERE backend_type = 'materialized_table worker'
                                   AND datname = current_database())" ||
        fail "no worker after $1"
    psql_q -c "UPDATE crash_fi.src SET v = v + 1"
    local want
    want=$(psql_q -c "SELECT sum(v) FROM crash_fi.src")
    wait_for 15 "SELECT (SELECT total FROM crash_fi.fast) = $want" ||
        fail "the 2-second table was not refreshed after $1"
    ok "the worker drives the 2-second table again after $1"
}
check_worker "the crash"

bash scripts/pg_cluster.sh stop "$MT_TEST_DIR"
bash scripts/pg_cluster.sh restart "$MT_TEST_DIR"
wait_ready
check_worker "a clean restart"

tail -c +$((log_start + 1)) "$MT_TEST_DIR/server.log" |
    grep -E "PANIC|TRAP:|terminated by signal (6|11)" &&
    fail "the server log shows a crash of its own"
echo "PASS"
