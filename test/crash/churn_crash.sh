#!/usr/bin/env bash
# churn_crash.sh: the CONTINUOUS worker never gets stuck.
#
# Several sessions create and drop sources and CONTINUOUS tables over them
# (some dropped with their source in the transaction that last wrote to it,
# some after their source was rewritten by VACUUM FULL, some kept), while
# writers insert, update and delete on a few sources that stay.  The
# postmaster is killed with SIGKILL in the middle of it and started again,
# and the churn goes on for a while.  Then:
#
#   - every CONTINUOUS table that survived equals its query (EXCEPT ALL
#     both ways) within a bound, but one whose query fails on a row
#     written after the restart (division by zero): that one shows its
#     freshness as not met and its error in the history, and is
#     maintained again once the row is gone;
#   - the worker did not exit on an error after the restart (the server
#     log): it skips what is gone instead of restarting from the same
#     WAL position again and again;
#   - the slot's confirmed_flush_lsn moves past a new write.
#
# Environment (set by test/run.sh): MT_TEST_DIR, MT_TEST_PORT, PGBIN.
# MT_CHURN_SESSIONS (default 3) churning sessions; MT_CHURN_SECONDS
# (default 20) of churn before the kill, half as long after it.
set -euo pipefail

: "${MT_TEST_DIR:?}" "${MT_TEST_PORT:?}"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
sessions=${MT_CHURN_SESSIONS:-3}
seconds=${MT_CHURN_SECONDS:-20}
top=$(cd "$(dirname "$0")/../.." && pwd)
export PGHOST=$MT_TEST_DIR PGPORT=$MT_TEST_PORT PGUSER=postgres PGDATABASE=contrib_regression
log=$MT_TEST_DIR/server.log
stop_file=$MT_TEST_DIR/churn.stop

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
        sleep 0.5
    done
    return 1
}

churn_pids=()
load_pid=
stop_all() {
    touch "$stop_file"
    for p in "${churn_pids[@]}" $load_pid; do
        wait "$p" 2>/dev/null || true
    done
    churn_pids=()
    load_pid=
}
cleanup() {
    stop_all
    rm -f "$stop_file"
    if "$PGBIN/pg_isready" -q; then
        sql -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS churn CASCADE" \
            >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT

sql -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS churn CASCADE" -c "CREATE SCHEMA churn"
sql -v schema=churn -f "$top/test/lib/mismatches.sql"
sql <<'SQL'
CREATE TABLE churn.base (id int PRIMARY KEY, grp int NOT NULL, v int NOT NULL);
CREATE TABLE churn.dim (id int PRIMARY KEY, region text NOT NULL);
INSERT INTO churn.base SELECT i, i % 40, i % 100 FROM generate_series(1, 4000) i;
INSERT INTO churn.dim SELECT i, 'r' || (i % 5) FROM generate_series(0, 39) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE churn.base_agg FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM churn.base GROUP BY grp;
  CREATE MATERIALIZED TABLE churn.base_top FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, max(v) AS top FROM churn.base GROUP BY grp;
  CREATE MATERIALIZED TABLE churn.base_rich FRESHNESS = INTERVAL '2' SECOND AS
    SELECT id, grp, v FROM churn.base WHERE v > 90;
  CREATE MATERIALIZED TABLE churn.base_region FRESHNESS = INTERVAL '1' SECOND AS
    SELECT d.region, count(*) AS n, sum(b.v) AS total
    FROM churn.base b JOIN churn.dim d ON d.id = b.grp GROUP BY d.region$$);
-- fails while a row has v = 1000 (division by zero), fine otherwise
CREATE TABLE churn.frag (id int PRIMARY KEY, grp int NOT NULL, v int NOT NULL);
INSERT INTO churn.frag SELECT i, i % 5, i % 100 FROM generate_series(1, 200) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE churn.fragile FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(100 / (1000 - v)) AS s FROM churn.frag GROUP BY grp$$);
SQL
wait_for 60 "SELECT bool_and(synced) FROM materialized_table_internal.continuous_state" ||
    fail "the worker did not take the tables up"

# One session's churn: iteration i of session w in phase p creates source
# s<p>_<w>_<i> and a CONTINUOUS table over it (and over base), writes to
# the source, and then, by i % 4:
#   0  keeps both (the first two times of a phase), or drops both;
#   1  drops the table, writes again, drops the source;
#   2  writes and drops both in one transaction;
#   3  rewrites the source (VACUUM FULL), writes, drops both.
# A plain table comes and goes each time too, written in between: a
# user_catalog_table, which PostgreSQL's decoding of those writes looks up
# in the current pg_class (where it is gone once dropped) -- the worker
# must skip what it cannot decode, not fail on it.  Errors (the crash, a
# lock held by the worker) are part of the game: the next iteration goes on.
churn() {
    local p=$1 w=$2 i=0 s m
    while [ ! -e "$stop_file" ]; do
        i=$((i + 1))
        s="churn.s${p}_${w}_$i"
        m="churn.m${p}_${w}_$i"
        "$PGBIN/psql" -X -q -At >/dev/null 2>&1 <<SQL || true
SET client_min_messages = warning;
CREATE TABLE churn.plain_${p}_${w}_$i (id int) WITH (user_catalog_table = true);
INSERT INTO churn.plain_${p}_${w}_$i SELECT generate_series(1, 50);
CREATE TABLE $s (id int PRIMARY KEY, grp int NOT NULL, v int NOT NULL);
INSERT INTO $s SELECT g, g % 10, g % 100 FROM generate_series(1, 300) g;
SELECT materialized_table.execute(\$\$CREATE MATERIALIZED TABLE $m FRESHNESS = INTERVAL '1' SECOND AS
  SELECT s.grp, count(*) AS n, sum(s.v) AS total, max(b.v) AS top
  FROM $s s JOIN churn.base b ON b.id = s.id GROUP BY s.grp\$\$);
UPDATE $s SET v = v + 1 WHERE id % 7 = 0;
DELETE FROM $s WHERE id % 11 = 0;
INSERT INTO $s SELECT g, g % 10, g % 100 FROM generate_series(301, 400) g;
DROP TABLE churn.plain_${p}_${w}_$i;
SQL
        case $((i % 4)) in
        0)
            [ "$i" -le 8 ] && continue
            "$PGBIN/psql" -X -q -At >/dev/null 2>&1 <<SQL || true
SELECT materialized_table.execute('DROP MATERIALIZED TABLE $m');
DROP TABLE $s;
SQL
            ;;
        1)
            "$PGBIN/psql" -X -q -At >/dev/null 2>&1 <<SQL || true
SELECT materialized_table.execute('DROP MATERIALIZED TABLE $m');
UPDATE $s SET v = v + 1;
DROP TABLE $s;
SQL
            ;;
        2)
            "$PGBIN/psql" -X -q -At >/dev/null 2>&1 <<SQL || true
BEGIN;
UPDATE $s SET v = v + 2 WHERE id % 3 = 0;
INSERT INTO $s SELECT g, g % 10, g % 100 FROM generate_series(401, 450) g;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE $m');
DROP TABLE $s;
COMMIT;
SQL
            ;;
        3)
            "$PGBIN/psql" -X -q -At >/dev/null 2>&1 <<SQL || true
VACUUM FULL $s;
UPDATE $s SET v = v + 3 WHERE id % 5 = 0;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE $m');
DELETE FROM $s WHERE id % 2 = 0;
DROP TABLE $s;
SQL
            ;;
        esac
    done
    echo "  session $w: $i iterations"
}

start_all() {
    rm -f "$stop_file"
    for w in $(seq 1 "$sessions"); do
        churn "$2" "$w" &
        churn_pids+=($!)
    done
    "$PGBIN/pgbench" -n -c 2 -T "$1" -f /dev/stdin >"$MT_TEST_DIR/churn_pgbench.log" 2>&1 <<'PGB' &
\set a random(1, 5000)
\set b random(1, 5000)
BEGIN;
INSERT INTO churn.base VALUES (:a, :a % 40, :a % 100) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v + 1;
UPDATE churn.base SET grp = (grp + 1) % 40, v = v + 1 WHERE id = :b;
DELETE FROM churn.base WHERE id = :b + 1 AND random() < 0.3;
END;
PGB
    load_pid=$!
}

echo "churn of $sessions sessions for ${seconds}s, a kill -9, $((seconds / 2))s more"
start_all "$seconds" 1
sleep "$seconds"
echo "  kill -9 of the postmaster"
cluster kill "$MT_TEST_DIR"
stop_all
since=$(wc -c <"$log")
cluster restart "$MT_TEST_DIR"
wait_ready
# a table that fails from now on, until its bad row is gone
sql -c "INSERT INTO churn.frag VALUES (0, 1, 1000)"
start_all $((seconds / 2)) 2
sleep $((seconds / 2))
stop_all

# every surviving table equals its query
from="materialized_table.materialized_tables t JOIN pg_class c ON c.oid = t.table_name"
where="c.relnamespace = 'churn'::regnamespace AND t.refresh_mode = 'CONTINUOUS'
       AND t.table_name <> 'churn.fragile'::regclass"
tables="$from WHERE $where"
if ! wait_for 120 "SELECT count(*) >= 4 AND coalesce(sum(churn.mismatches(t.table_name)), 0) = 0 FROM $tables"; then
    sql -c "SELECT t.table_name, churn.mismatches(t.table_name), t.freshness_met, s.synced, s.needs_full, s.pending_since
              FROM $from JOIN materialized_table_internal.continuous_state s ON s.relid = t.table_name
             WHERE $where" >&2 || true
    tail -c +"$since" "$log" | grep -E 'materialized_table|ERROR|FATAL' | tail -30 >&2
    fail "the surviving CONTINUOUS tables did not converge"
fi
n=$(sql -c "SELECT count(*) FROM $tables")

# the worker did not fail and start over
exits=$(tail -c +"$since" "$log" | grep -c 'materialized_table worker.*exited with exit code' || true)
if [ "$exits" != 0 ]; then
    tail -c +"$since" "$log" | grep -E 'materialized_table|ERROR|FATAL' | tail -30 >&2
    fail "the worker exited on an error $exits times after the restart"
fi

# the failing table is isolated: not fresh, its error in the history;
# once its bad row is gone it is maintained again
fragile="SELECT NOT freshness_met FROM materialized_table.materialized_tables
          WHERE table_name = 'churn.fragile'::regclass"
[ "$(sql -c "$fragile")" = t ] || fail "the failing table shows its freshness as met"
failed=$(sql -c "SELECT count(*) FROM materialized_table.refresh_history
                  WHERE table_name = 'churn.fragile'::regclass AND status = 'FAILED'
                    AND error LIKE '%division by zero%'")
[ "$failed" -gt 0 ] || fail "the failing table's error is not in its history"
sql -c "DELETE FROM churn.frag WHERE id = 0"
wait_for 90 "SELECT churn.mismatches('churn.fragile') = 0 AND freshness_met
               FROM materialized_table.materialized_tables WHERE table_name = 'churn.fragile'::regclass" ||
    fail "the failing table was not maintained again once it could be"

# the slot keeps moving
lsn=$(sql -c "INSERT INTO churn.base VALUES (-1, 1, 1) RETURNING pg_current_wal_lsn()")
wait_for 30 "SELECT confirmed_flush_lsn > '$lsn' FROM pg_replication_slots
              WHERE slot_name = 'materialized_table_' || (SELECT oid FROM pg_database WHERE datname = current_database())" ||
    fail "the slot's confirmed_flush_lsn did not pass $lsn"
wait_for 30 "SELECT churn.mismatches('churn.base_agg') = 0" ||
    fail "base_agg did not follow a write after the churn"

echo "$n surviving CONTINUOUS tables equal their queries; the worker never exited; the slot moves"
