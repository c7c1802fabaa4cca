#!/usr/bin/env bash
# freshness_switch.sh: keyed FULL tables switched to CONTINUOUS by ALTER ...
# SET FRESHNESS while pgbench writes to their source lose and duplicate
# nothing: once the load stops they converge to exactly their queries.  One
# of them is switched back to FULL under the same load and refreshes
# correctly on its schedule's terms.
#
# Environment (set by test/run.sh): MT_TEST_DIR, MT_TEST_PORT, PGBIN.
# MT_LOAD_SECONDS (default 20) of load.
set -euo pipefail

: "${MT_TEST_DIR:?}" "${MT_TEST_PORT:?}"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
seconds=${MT_LOAD_SECONDS:-20}
top=$(cd "$(dirname "$0")/../.." && pwd)
export PGHOST=$MT_TEST_DIR PGPORT=$MT_TEST_PORT PGUSER=postgres PGDATABASE=contrib_regression

sql() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# state TABLE: mode, scheduler, pg_cron job, continuous registration
state() {
    sql -c "SELECT m.refresh_mode || ' ' || coalesce(m.scheduler, '-') || ' job:' || (j.jobid IS NOT NULL)
                   || ' continuous:' || EXISTS (SELECT FROM materialized_table_internal.continuous_state c
                                                 WHERE c.relid = m.table_name::oid)
              FROM materialized_table.materialized_tables m
              JOIN materialized_table_internal.mt_table t ON t.relid = m.table_name
              LEFT JOIN cron.job j ON j.jobid = t.cron_jobid
             WHERE m.table_name = '$1'::regclass"
}

MT_SCHEMA=sw
. "$top/test/lib/converge.sh"

sql >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS sw CASCADE;
CREATE SCHEMA sw;
CREATE TABLE sw.accounts (id int PRIMARY KEY, grp int NOT NULL, balance numeric(12,2) NOT NULL);
ALTER TABLE sw.accounts REPLICA IDENTITY FULL;
INSERT INTO sw.accounts SELECT i, i % 50, (i * 37) % 5000 FROM generate_series(1, 5000) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE sw.by_grp (PRIMARY KEY (grp) NOT ENFORCED) FRESHNESS = INTERVAL '1' HOUR AS
    SELECT grp, count(*) AS n, sum(balance) AS total FROM sw.accounts GROUP BY grp;
  CREATE MATERIALIZED TABLE sw.rich (PRIMARY KEY (id) NOT ENFORCED) FRESHNESS = INTERVAL '1' HOUR AS
    SELECT id, grp, balance FROM sw.accounts WHERE balance > 4000
$$);
SQL
sql -v schema=sw -f "$top/test/lib/mismatches.sql" >/dev/null
echo "before: by_grp $(state sw.by_grp); rich $(state sw.rich)"

echo "load for ${seconds}s; FULL -> CONTINUOUS after 3s"
"$PGBIN/pgbench" -n -c 2 -T "$seconds" -f "$top/test/lib/freshness_switch.pgbench" \
    >"$MT_TEST_DIR/pgbench_switch.log" 2>&1 &
load_pid=$!
trap 'kill $load_pid 2>/dev/null || true' EXIT
sleep 3
sql -c "SELECT materialized_table.execute(\$\$ALTER MATERIALIZED TABLE sw.by_grp SET FRESHNESS = INTERVAL '2' SECOND\$\$)" >/dev/null
sleep 1
sql -c "SELECT materialized_table.execute(\$\$ALTER MATERIALIZED TABLE sw.rich SET FRESHNESS = INTERVAL '5' SECOND\$\$)" >/dev/null
echo "switched: by_grp $(state sw.by_grp); rich $(state sw.rich)"
[ "$(state sw.by_grp)" = "CONTINUOUS worker job:false continuous:true" ]
[ "$(state sw.rich)" = "CONTINUOUS worker job:false continuous:true" ]

# rich goes back to FULL under the load
sleep $((seconds / 2))
sql -c "SELECT materialized_table.execute(\$\$ALTER MATERIALIZED TABLE sw.rich SET FRESHNESS = INTERVAL '1' HOUR\$\$)" >/dev/null
echo "switched back: rich $(state sw.rich)"
[ "$(state sw.rich)" = "FULL pg_cron job:true continuous:false" ]

wait "$load_pid"
trap - EXIT
grep -o 'number of transactions actually processed: [0-9]*' "$MT_TEST_DIR/pgbench_switch.log" || true

# the CONTINUOUS table converges by itself: nothing lost, nothing twice
converge sw.by_grp
echo "by_grp equals its query"
# the FULL table lags until its next run; a refresh makes it exact
sql -c "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE sw.rich REFRESH')" >/dev/null
converge sw.rich
echo "rich equals its query after its refresh"
# the history: by_grp was taken up by the worker, and nothing failed
failed=$(sql -c "SELECT count(*) FROM materialized_table.refresh_history
                  WHERE table_name IN ('sw.by_grp'::regclass, 'sw.rich'::regclass) AND status = 'FAILED'")
[ "$failed" = 0 ] || { echo "$failed failed refreshes" >&2; sql -c "SELECT table_name, trigger, error FROM materialized_table.refresh_history WHERE status = 'FAILED'" >&2; exit 1; }
applied=$(sql -c "SELECT count(*) FROM materialized_table.refresh_history
                   WHERE table_name = 'sw.by_grp'::regclass AND trigger = 'CONTINUOUS' AND status = 'SUCCEEDED'")
[ "$applied" -gt 1 ] || { echo "the worker applied by_grp only $applied times" >&2; exit 1; }
echo "by_grp applied $applied times by the worker, no refresh failed"

sql -c "SELECT materialized_table.execute('DROP MATERIALIZED TABLE sw.by_grp; DROP MATERIALIZED TABLE sw.rich')" >/dev/null
sql -c "DROP SCHEMA sw CASCADE" >/dev/null 2>&1
echo "ok"
