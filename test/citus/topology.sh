#!/usr/bin/env bash
# topology.sh: FULL materialized tables on a Citus cluster whose nodes move
# and fail (run by test/citus/run.sh, which passes the cluster in
# MT_CITUS_DIR and MT_CITUS_PORT: coordinator, workers w1 and w2).
#
#   1. Shards moved under a write load: a co-located table's shard group
#      (source and table) goes from one worker to the other while writers
#      insert orders; the next refresh finds its shards where they are now
#      and equals its query.
#      A reader during a refresh is not blocked (lock_timeout) and sees the
#      old rows until it commits.
#   2. A worker killed (SIGKILL) in the middle of a refresh: two-phase
#      commit leaves the table as it was before the refresh or as it is
#      after it, never a mix; once the worker is back the refresh runs
#      again and equals its query.
#   3. A worker down: the refreshes of the tables with shards there fail,
#      each recorded in refresh_history with its error and its freshness
#      shown as not met (never silently), while a table of the
#      coordinator's own sources goes on; back up, the table catches up.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
refresh() { sql -c "SET materialized_table.scheduled_refreshes = off" \
    -c "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE topo.$1 REFRESH')" >/dev/null; }
mismatches() { sql -c "SELECT topo.mismatches('topo.$1')"; }

sql -v schema=topo >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS topo CASCADE;
CREATE SCHEMA topo;
\i test/lib/mismatches.sql
CREATE TABLE topo.orders (id bigserial, customer_id int NOT NULL, amount numeric NOT NULL,
                          PRIMARY KEY (customer_id, id));
SELECT create_distributed_table('topo.orders', 'customer_id', shard_count => 8);
INSERT INTO topo.orders (customer_id, amount) SELECT i % 1000, i % 100 FROM generate_series(1, 200000) i;
CREATE TABLE topo.local_events (id int PRIMARY KEY, kind text NOT NULL);
INSERT INTO topo.local_events SELECT i, 'k' || (i % 7) FROM generate_series(1, 1000) i;
SET materialized_table.scheduled_refreshes = off;
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE topo.totals
  DISTRIBUTED BY HASH (customer_id) FRESHNESS = INTERVAL '1' HOUR
  AS SELECT customer_id, count(*) AS n, sum(amount) AS total FROM topo.orders GROUP BY customer_id$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE topo.kinds
  FRESHNESS = INTERVAL '1' HOUR
  AS SELECT kind, count(*) AS n FROM topo.local_events GROUP BY kind$$);
SQL
[ "$(mismatches totals)" = 0 ] || fail "totals differs from its query after CREATE"

# --- 1. a shard group moved under a write load ---------------------------------
stop=$DIR/writers.stop
rm -f "$stop"
for w in 1 2; do
    (
        while [ ! -e "$stop" ]; do
            sql -c "INSERT INTO topo.orders (customer_id, amount)
                    SELECT (random() * 999)::int, 1 FROM generate_series(1, 50)" >/dev/null
        done
    ) &
done
sleep 1
read -r shard from_port to_port <<<"$(sql -F ' ' -c "
  SELECT s.shardid, p.nodeport, CASE WHEN p.nodeport = $((P + 1)) THEN $((P + 2)) ELSE $((P + 1)) END
    FROM pg_dist_shard s JOIN pg_dist_placement pl USING (shardid)
    JOIN pg_dist_node p USING (groupid)
   WHERE s.logicalrelid = 'topo.totals'::regclass ORDER BY s.shardid LIMIT 1")"
sql -c "SELECT citus_move_shard_placement($shard, '127.0.0.1', $from_port, '127.0.0.1', $to_port,
          shard_transfer_mode => 'force_logical')" >/dev/null
touch "$stop"
wait
now_port=$(sql -c "SELECT p.nodeport FROM pg_dist_placement pl JOIN pg_dist_node p USING (groupid)
                    WHERE pl.shardid = $shard")
[ "$now_port" = "$to_port" ] || fail "shard $shard is on $now_port, not $to_port"
[ "$(mismatches totals)" != 0 ] || fail "the writers changed nothing the table shows (no control)"
refresh totals
[ "$(mismatches totals)" = 0 ] || fail "totals differs from its query after the shard move"
echo "ok: shard $shard of totals moved from port $from_port to $to_port under writes; the refresh follows it"

# --- readers during a refresh ---------------------------------------------------
# a refresh held open (its writes done, not committed): a reader is not
# blocked, and sees the rows as they were until the refresh commits
sql -c "INSERT INTO topo.orders (customer_id, amount) VALUES (5, 1000)"
before=$(sql -c "SELECT total FROM topo.totals WHERE customer_id = 5")
(sql -c "SET materialized_table.scheduled_refreshes = off" \
     -c "BEGIN" -c "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE topo.totals REFRESH')" \
     -c "SELECT pg_sleep(3)" -c "COMMIT" >/dev/null) &
refresher=$!
sleep 1.5
during=$(sql -c "SET lock_timeout = '500ms'" -c "SELECT total FROM topo.totals WHERE customer_id = 5")
wait "$refresher"
after=$(sql -c "SELECT total FROM topo.totals WHERE customer_id = 5")
[ "$during" = "$before" ] || fail "a reader during the refresh saw $during, not the old $before"
[ "$after" != "$before" ] || fail "the refresh did not change the row it should have (no control)"
[ "$(mismatches totals)" = 0 ] || fail "totals differs from its query after the held refresh"
# the control: the same reader under a lock that does block readers fails
(sql -c "BEGIN" -c "LOCK TABLE topo.totals IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(3)" \
     -c "COMMIT" >/dev/null) &
locker=$!
sleep 1.5
if sql -c "SET lock_timeout = '500ms'" -c "SELECT total FROM topo.totals WHERE customer_id = 5" \
        >/dev/null 2>&1; then
    fail "a reader under an ACCESS EXCLUSIVE lock was not blocked (the check cannot fail)"
fi
wait "$locker"
echo "ok: a reader during a refresh was not blocked and saw the old row ($before), then the new one ($after); under an exclusive lock it was"

# --- 2. a worker killed in the middle of a refresh ------------------------------
sql -c "CREATE TABLE topo.before AS SELECT * FROM topo.totals"
sql -c "UPDATE topo.orders SET amount = amount + 1 WHERE customer_id % 2 = 0"
sql -c "CREATE TABLE topo.after AS SELECT customer_id, count(*) AS n, sum(amount) AS total
        FROM topo.orders GROUP BY customer_id"
# the refresh, slowed on the coordinator after its writes so that the kill
# falls before its commit
(sql -c "SET materialized_table.scheduled_refreshes = off" \
     -c "BEGIN" -c "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE topo.totals REFRESH')" \
     -c "SELECT pg_sleep(3)" -c "COMMIT" >"$DIR/refresh_killed.out" 2>&1 || true) &
refresher=$!
sleep 1.5
bash "$top/scripts/citus_cluster.sh" kill "$DIR" w1
wait "$refresher" || true
bash "$top/scripts/citus_cluster.sh" restart "$DIR" w1
node_up w1 $((P + 1))
# prepared transactions are resolved by Citus's maintenance daemon
sql -c "SELECT recover_prepared_transactions()" >/dev/null
state=$(sql -c "SELECT CASE
    WHEN NOT EXISTS (TABLE topo.totals EXCEPT ALL TABLE topo.before)
     AND NOT EXISTS (TABLE topo.before EXCEPT ALL TABLE topo.totals) THEN 'before'
    WHEN NOT EXISTS (TABLE topo.totals EXCEPT ALL TABLE topo.after)
     AND NOT EXISTS (TABLE topo.after EXCEPT ALL TABLE topo.totals) THEN 'after'
    ELSE 'mixed' END")
[ "$state" != mixed ] || fail "after a worker was killed during its refresh, totals is neither as before nor as after"
refresh totals
[ "$(mismatches totals)" = 0 ] || fail "totals differs from its query after the killed refresh"
echo "ok: worker killed during a refresh: the table was as $state it, then refreshed again"

# --- 3. a worker down -----------------------------------------------------------
sql -c "INSERT INTO topo.orders (customer_id, amount) SELECT i, 7 FROM generate_series(1, 100) i"
sql -c "INSERT INTO topo.local_events VALUES (1001, 'new')"
bash "$top/scripts/citus_cluster.sh" kill "$DIR" w2
# the scheduled runs, as pg_cron's job calls them
for t in totals kinds; do
    sql -c "SELECT materialized_table.scheduled_refresh('topo.$t'::regclass)" >/dev/null 2>&1 || true
done
last() { sql -c "SELECT status FROM materialized_table.refresh_history
                  WHERE table_name = 'topo.$1'::regclass ORDER BY run_id DESC LIMIT 1"; }
[ "$(last totals)" = FAILED ] || fail "the refresh of totals with a worker down is recorded as $(last totals)"
err=$(sql -c "SELECT error FROM materialized_table.refresh_history
               WHERE table_name = 'topo.totals'::regclass ORDER BY run_id DESC LIMIT 1")
[ -n "$err" ] || fail "the failed refresh has no error"
[ "$(last kinds)" = SUCCEEDED ] || fail "a table of the coordinator's own sources did not go on"
[ "$(sql -c "SELECT n FROM topo.kinds WHERE kind = 'new'")" = 1 ] || fail "kinds did not catch up"
# its freshness: met until the freshness has passed since the last good
# refresh (moved back an hour and a half here instead of waiting), then not
met_now() { sql -c "SELECT freshness_met FROM materialized_table.materialized_tables
                     WHERE table_name = 'topo.totals'::regclass"; }
[ "$(met_now)" = t ] || fail "totals, refreshed a moment ago, shows its freshness as not met"
sql -c "UPDATE materialized_table_internal.mt_table SET last_refresh_time = last_refresh_time - interval '90 minutes'
        WHERE relid = 'topo.totals'::regclass"
sql -c "SELECT materialized_table.scheduled_refresh('topo.totals'::regclass)" >/dev/null 2>&1 || true
[ "$(last totals)" = FAILED ] || fail "the second refresh of totals with a worker down is recorded as $(last totals)"
met=$(met_now)
[ "$met" = f ] || fail "totals, an hour and a half after its last good refresh, shows freshness_met = $met"
echo "ok: worker down: the refresh of totals failed (\"$err\"), kinds went on; freshness_met = $met"
bash "$top/scripts/citus_cluster.sh" restart "$DIR" w2
node_up w2 $((P + 2))
sql -c "SELECT materialized_table.scheduled_refresh('topo.totals'::regclass)" >/dev/null
[ "$(last totals)" = SUCCEEDED ] || fail "totals did not catch up once the worker was back"
[ "$(mismatches totals)" = 0 ] || fail "totals differs from its query once the worker was back"
echo "ok: the worker back, the next scheduled refresh caught up"

sql -c "SET client_min_messages = warning" -c "DROP SCHEMA topo CASCADE"
