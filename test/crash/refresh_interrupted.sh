#!/usr/bin/env bash
# refresh_interrupted: the server crashes (kill -9) in the middle of
# ALTER MATERIALIZED TABLE ... REFRESH.  After the restart the table holds
# its old content, intact, and refresh_history shows the run as FAILED.
#
# Run by test/run.sh with the cluster in the environment (PGHOST, PGPORT,
# PGUSER, PGDATABASE, MT_TEST_DIR, PGBIN); leaves the cluster running.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${MT_TEST_DIR:?run me from test/run.sh}"

PSQL=("$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1)
q() { "${PSQL[@]}" -c "$1"; }

# poll until the query returns t (at most 30 s)
wait_for() {
    for _ in $(seq 300); do
        [ "$(q "$1")" = t ] && return 0
        sleep 0.1
    done
    echo "timed out waiting for: $1" >&2
    return 1
}

# crash_gate() waits while advisory lock 4243 is held by someone else
"${PSQL[@]}" <<'SQL'
CREATE TABLE crash_src (k int, v int);
INSERT INTO crash_src SELECT i % 10, i FROM generate_series(1, 1000) i;
CREATE FUNCTION crash_gate() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_lock_shared(4243);
  PERFORM pg_advisory_unlock_shared(4243);
  RETURN true;
END $$;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE crash_mt FRESHNESS = INTERVAL '1' HOUR
    AS SELECT k, sum(v) AS total, count(*) AS n FROM crash_src GROUP BY k HAVING crash_gate();
  ALTER MATERIALIZED TABLE crash_mt SUSPEND
$$);
SQL
before=$(q "SELECT count(*), sum(total), sum(n) FROM crash_mt")
q "UPDATE crash_src SET v = v + 1"

# close the gate, start a refresh, crash while it waits at the gate
"${PSQL[@]}" -c "SELECT pg_advisory_lock(4243), pg_sleep(300)" >/dev/null 2>&1 &
holder=$!
wait_for "SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = 4243 AND granted)"
"${PSQL[@]}" -c "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE crash_mt REFRESH')" >/dev/null 2>&1 &
refresher=$!
wait_for "SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND objid = 4243 AND NOT granted)"
wait_for "SELECT EXISTS (SELECT FROM materialized_table.refresh_history WHERE table_name = 'crash_mt'::regclass AND status = 'RUNNING')"

echo "killing the server during the refresh"
bash scripts/pg_cluster.sh kill "$MT_TEST_DIR"
wait "$holder" "$refresher" || true
bash scripts/pg_cluster.sh restart "$MT_TEST_DIR"

fail=0
after=$(q "SELECT count(*), sum(total), sum(n) FROM crash_mt")
echo "content before: $before, after the crash: $after"
[ "$before" = "$after" ] || { echo "FAIL: the content changed"; fail=1; }

history=$(q "SELECT string_agg(trigger || ':' || status, ' ' ORDER BY run_id)
               FROM materialized_table.refresh_history WHERE table_name = 'crash_mt'::regclass")
echo "history: $history"
[ "$history" = "CREATE:SUCCEEDED MANUAL:FAILED" ] || { echo "FAIL: unexpected history"; fail=1; }

# the table still refreshes
q "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE crash_mt REFRESH')" >/dev/null
refreshed=$(q "SELECT sum(total) = (SELECT sum(v) FROM crash_src) FROM crash_mt")
[ "$refreshed" = t ] || { echo "FAIL: no refresh after the restart"; fail=1; }

"${PSQL[@]}" <<'SQL'
SELECT materialized_table.execute('DROP MATERIALIZED TABLE crash_mt');
DROP TABLE crash_src;
DROP FUNCTION crash_gate();
SQL
exit $fail
