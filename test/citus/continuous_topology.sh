#!/usr/bin/env bash
# continuous_topology.sh: CONTINUOUS materialized tables on a Citus cluster
# whose nodes move and fail, under a write load (run by test/citus/run.sh,
# which passes the cluster in MT_CITUS_DIR and MT_CITUS_PORT: coordinator,
# workers w1 and w2).  Each shard of such a table is kept by the worker
# node that holds it, from that node's replication slot; a table of the
# coordinator that aggregates the shards (regions) is kept from partial
# aggregates the nodes keep per shard, which follow the shards too; one of
# the coordinator that is not an aggregate (big) from the key values the
# nodes send, whose tables for it follow the shards as well.
#
#   1. A shard group (a source's shard and the table's) moved from one
#      worker to the other while writers change the source: the node it
#      lands on takes the table's shard up, and once the writers stop the
#      table equals its query -- nothing lost, nothing counted twice.
#   2. A worker killed (SIGKILL) under the write load (and a table kept
#      from partial aggregates dropped meanwhile: the worker, back, drops
#      its partial tables at the next pass for another): while it is down the
#      table's freshness is shown as not met, while a CONTINUOUS table of
#      the coordinator's own sources stays fresh; back up, the worker
#      catches up from its slot, and the table equals its query.
#   3. The coordinator killed under a write load sent to a worker (Citus
#      routes it from there): the workers keep their shards fresh without
#      it; back up, it dates the table again.
#   4. A node added (w3) and the shards rebalanced onto it under writes:
#      it takes up the shards it receives; then drained and removed: the
#      others take them back.  Each time the table equals its query.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
on() { local node=$1 port=$2; shift 2; sql -h "$DIR/$node" -p "$port" "$@"; }
# every table equal to its query, and dated since the call by all its shards
caught_up() {
    local since deadline
    since=$(sql -c "SELECT clock_timestamp()")
    deadline=$((SECONDS + 60))
    while [ $SECONDS -lt $deadline ]; do
        if [ "$(sql -c "SELECT bool_and(last_refresh_time >= '$since' AND ct.matches(table_name))
                          FROM materialized_table.materialized_tables
                         WHERE table_name::text IN ('ct.totals', 'ct.by_region', 'ct.regions', 'ct.big')" 2>/dev/null)" = t ]; then
            return 0
        fi
        sleep 0.3
    done
    # (what did not catch up, for the failure's message)
    sql -c "SELECT table_name || ': dated ' || coalesce(last_refresh_time::text, 'never') || ', equal to its query: '
                   || ct.matches(table_name) FROM materialized_table.materialized_tables
             WHERE table_name::text IN ('ct.totals', 'ct.by_region', 'ct.regions', 'ct.big')" >&2 || true
    return 1
}
shards_on() {
    on "$1" "$2" -c "SELECT count(*) FROM materialized_table.materialized_tables WHERE table_name::text LIKE 'ct.totals%'"
}
# a condition (a shell command) true within 30 s: each node takes up the
# shards its own copy of Citus's metadata says it holds, which may lag
eventually() {
    local deadline=$((SECONDS + 30))
    until eval "$1"; do
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.3
    done
}
# the partial aggregates of regions a node keeps, one table per shard
partials_on() {
    on "$1" "$2" -c "SELECT count(*) FROM materialized_table.materialized_tables WHERE table_name::text ~ '^ct\\.mt_partial_[0-9]+_[0-9]+$'"
}

sql >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS ct CASCADE;
CREATE SCHEMA ct;
-- matches(t): the table equals its query (EXCEPT ALL both ways)
CREATE FUNCTION ct.matches(t regclass) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    v text := (SELECT query_view::regclass::text FROM materialized_table_internal.mt_table WHERE relid = t);
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((TABLE %s EXCEPT ALL TABLE %s) UNION ALL (TABLE %s EXCEPT ALL TABLE %s)) d',
                   t, v, v, t) INTO n;
    RETURN n = 0;
END
$$;
CREATE TABLE ct.orders (id bigserial, customer_id int NOT NULL, amount int NOT NULL,
                        PRIMARY KEY (customer_id, id));
SELECT create_distributed_table('ct.orders', 'customer_id', shard_count => 8);
CREATE TABLE ct.customers (id int PRIMARY KEY, region text NOT NULL);
SELECT create_reference_table('ct.customers');
INSERT INTO ct.customers SELECT i, 'r' || (i % 5) FROM generate_series(0, 999) i;
INSERT INTO ct.orders (customer_id, amount) SELECT i % 1000, i % 100 FROM generate_series(1, 100000) i;
CREATE TABLE ct.local_events (id int PRIMARY KEY, kind text NOT NULL);
INSERT INTO ct.local_events SELECT i, 'k' || (i % 7) FROM generate_series(1, 1000) i;
SET materialized_table.scheduled_refreshes = off;
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE ct.totals
  DISTRIBUTED BY HASH (customer_id) FRESHNESS = INTERVAL '1' SECOND
  AS SELECT customer_id, count(*) AS n, sum(amount) AS total FROM ct.orders GROUP BY customer_id$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE ct.by_region
  DISTRIBUTED BY HASH (customer_id) FRESHNESS = INTERVAL '1' SECOND
  AS SELECT o.customer_id, c.region, count(*) AS n, max(o.amount) AS biggest
       FROM ct.orders o JOIN ct.customers c ON c.id = o.customer_id GROUP BY o.customer_id, c.region$$);
-- a table of the coordinator, kept from the partial aggregates of each shard
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE ct.regions
  FRESHNESS = INTERVAL '1' SECOND
  AS SELECT c.region, count(*) AS n, sum(o.amount) AS total, max(o.amount) AS biggest
       FROM ct.orders o JOIN ct.customers c ON c.id = o.customer_id GROUP BY c.region$$);
-- one of the coordinator that is not an aggregate: its rows of the keys
-- the nodes send are recomputed
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE ct.big
  FRESHNESS = INTERVAL '1' SECOND
  AS SELECT o.id, o.customer_id, o.amount, c.region
       FROM ct.orders o JOIN ct.customers c ON c.id = o.customer_id WHERE o.amount > 90$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE ct.kinds
  FRESHNESS = INTERVAL '1' SECOND
  AS SELECT kind, count(*) AS n FROM ct.local_events GROUP BY kind$$);
SQL
caught_up || fail "the tables did not catch up after CREATE"

# writers: inserts, updates and deletes of random customers, through the
# node given (errors while a node is down are expected and ignored; a
# statement that a node's death left waiting on its socket is cancelled)
stop=$DIR/ct_writers.stop
writers() {
    local node=$1 port=$2 w
    rm -f "$stop"
    for w in 1 2; do
        (
            while [ ! -e "$stop" ]; do
                c=$((RANDOM % 1000))
                PGOPTIONS="-c statement_timeout=20s" on "$node" "$port" -c "
                    INSERT INTO ct.orders (customer_id, amount)
                    SELECT $c, g % 100 FROM generate_series(1, 20) g;
                    UPDATE ct.orders SET amount = amount + 1 WHERE customer_id = $(((c + 7) % 1000));
                    DELETE FROM ct.orders WHERE customer_id = $(((c + 13) % 1000)) AND id % 3 = 0;" \
                    >/dev/null 2>&1 || sleep 0.1
            done
        ) &
    done
}
# the control: the writers changed the source (else the checks prove nothing)
orders() { on "$1" "$2" -c "SELECT count(*) || ' ' || sum(amount) FROM ct.orders"; }
stop_writers() { touch "$stop"; wait; }

# --- 1. a shard group moved under writes --------------------------------------
read -r shard from_port to_port <<<"$(sql -F ' ' -c "
  SELECT s.shardid, p.nodeport, CASE WHEN p.nodeport = $((P + 1)) THEN $((P + 2)) ELSE $((P + 1)) END
    FROM pg_dist_shard s JOIN pg_dist_placement pl USING (shardid) JOIN pg_dist_node p USING (groupid)
   WHERE s.logicalrelid = 'ct.totals'::regclass ORDER BY s.shardid LIMIT 1")"
to_node=w$((to_port - P))
before_on_target=$(shards_on "$to_node" "$to_port")
partials_before_on_target=$(partials_on "$to_node" "$to_port")
before=$(orders coord "$P")
writers coord "$P"
sleep 1
sql -c "SELECT citus_move_shard_placement($shard, '127.0.0.1', $from_port, '127.0.0.1', $to_port,
          shard_transfer_mode => 'force_logical')" >/dev/null
sleep 2
stop_writers
[ "$(orders coord "$P")" != "$before" ] || fail "the writers changed nothing during the shard move"
caught_up || fail "the tables did not catch up after the shard move"
after_on_target=$(shards_on "$to_node" "$to_port")
[ "$after_on_target" -gt "$before_on_target" ] ||
    fail "the node the shard moved to keeps $after_on_target shards of totals, as before the move"
# (the old placement may wait for Citus's deferred cleanup: the partial
# aggregates are counted, each shard's once)
[ "$(partials_on "$to_node" "$to_port")" -eq $((partials_before_on_target + 1)) ] &&
    [ "$(( $(partials_on w1 $((P + 1))) + $(partials_on w2 $((P + 2))) ))" -eq 8 ] ||
    fail "the partial aggregates of regions did not follow the shard move"
echo "ok: shard $shard moved from port $from_port to $to_port under writes: that node took it up ($before_on_target -> $after_on_target shards of totals, and their partial aggregates of regions) and the tables equal their queries"

# --- 2. a worker killed under writes ------------------------------------------
# (and a table kept from partial aggregates dropped while it is down)
sql >/dev/null <<'SQL'
SET client_min_messages = warning;
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE ct.doomed FRESHNESS = INTERVAL '1' SECOND
  AS SELECT c.region, count(*) AS n FROM ct.orders o JOIN ct.customers c ON c.id = o.customer_id GROUP BY c.region$$);
SQL
doomed_id=$(sql -c "SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'ct.doomed'::regclass")
doomed_on() {
    on "$1" "$2" -c "SELECT count(*) FROM pg_catalog.pg_class
                      WHERE relkind = 'r' AND relname LIKE 'mt\\_partial\\_${doomed_id}\\_%'"
}
wait_doomed() {
    local node=$1 port=$2 want=$3 deadline=$((SECONDS + 30))
    while [ $SECONDS -lt $deadline ]; do
        if [ "$want" = some ]; then [ "$(doomed_on "$node" "$port")" -gt 0 ] && return 0
        else [ "$(doomed_on "$node" "$port")" = 0 ] && return 0; fi
        sleep 0.3
    done
    return 1
}
wait_doomed w1 $((P + 1)) some || fail "worker 1 made no partial tables for ct.doomed"
before=$(orders coord "$P")
writers coord "$P"
sleep 1
bash "$top/scripts/citus_cluster.sh" kill "$DIR" w1
sleep 3
sql -c "SELECT materialized_table.execute('DROP MATERIALIZED TABLE ct.doomed')" >/dev/null
[ "$(doomed_on w2 $((P + 2)))" = 0 ] || fail "worker 2 kept the partial tables of the dropped ct.doomed"
met=$(sql -c "SELECT string_agg(freshness_met::text, ' ' ORDER BY table_name::text)
                FROM materialized_table.materialized_tables
               WHERE table_name::text IN ('ct.big', 'ct.totals', 'ct.kinds', 'ct.regions')")
sql -c "INSERT INTO ct.local_events VALUES (1001, 'new')"
bash "$top/scripts/citus_cluster.sh" restart "$DIR" w1
node_up w1 $((P + 1))
sleep 2
stop_writers
[ "$(orders coord "$P")" != "$before" ] || fail "the writers changed nothing while worker 1 was killed"
[ "$met" = "false true false false" ] ||
    fail "with worker 1 down, freshness_met of big, kinds, regions, totals was \"$met\", not \"false true false false\""
caught_up || fail "the tables did not catch up after worker 1 came back"
[ "$(sql -c "SELECT ct.matches('ct.kinds')")" = t ] || fail "kinds differs from its query"
wait_doomed w1 $((P + 1)) none ||
    fail "worker 1, back, kept the $(doomed_on w1 $((P + 1))) partial tables of ct.doomed, dropped while it was down"
echo "ok: worker 1 killed under writes: big, totals and regions shown as not fresh, kinds fresh; back up, the tables equal their queries, and it dropped the partial tables of a table dropped meanwhile"

# --- 3. the coordinator killed, writes through a worker ------------------------
before=$(orders w2 $((P + 2)))
bash "$top/scripts/citus_cluster.sh" kill "$DIR" coord
writers w2 $((P + 2))
sleep 3
stop_writers
[ "$(orders w2 $((P + 2)))" != "$before" ] || fail "the writers changed nothing through worker 2"
# the shards are kept without the coordinator: what worker 2 reads of the
# table (Citus routes it from there) equals what it reads of the query
deadline=$((SECONDS + 60))
until [ "$(on w2 $((P + 2)) -c "SELECT (SELECT sum(n) FROM ct.totals) = (SELECT count(*) FROM ct.orders)")" = t ]; do
    [ $SECONDS -lt $deadline ] || fail "with the coordinator down, the shards did not follow the writes"
    sleep 0.3
done
rows=$(on w2 $((P + 2)) -c "SELECT count(*) FROM ct.orders")
bash "$top/scripts/citus_cluster.sh" restart "$DIR" coord
node_up coord "$P"
caught_up || fail "the tables did not catch up after the coordinator came back"
echo "ok: coordinator killed, writes through worker 2: the shards followed them ($rows orders); back up, the coordinator dates the tables again"

# --- 4. a node added, then drained and removed, under writes ------------------
bash "$top/scripts/citus_cluster.sh" add "$DIR" "$P"
before=$(orders coord "$P")
writers coord "$P"
sleep 1
sql -c "SET client_min_messages = warning" \
    -c "SELECT rebalance_table_shards('ct.orders', shard_transfer_mode => 'force_logical')" >/dev/null
sleep 1
stop_writers
[ "$(orders coord "$P")" != "$before" ] || fail "the writers changed nothing during the rebalance"
caught_up || fail "the tables did not catch up after the rebalance onto a new node"
on_new=$(shards_on w3 $((P + 3)))
[ "$on_new" -gt 0 ] || fail "the new node keeps no shard of totals after the rebalance"
eventually '[ "$(partials_on w3 $((P + 3)))" = "$on_new" ]' ||
    fail "the new node keeps $(partials_on w3 $((P + 3))) partial aggregates of regions for its $on_new shards"
writers coord "$P"
sleep 1
sql -c "SET client_min_messages = warning" \
    -c "SELECT citus_drain_node('127.0.0.1', $((P + 3)), shard_transfer_mode => 'force_logical')" >/dev/null
stop_writers
sql -c "SELECT citus_remove_node('127.0.0.1', $((P + 3)))" >/dev/null
bash "$top/scripts/pg_cluster.sh" stop "$DIR/w3"
caught_up || fail "the tables did not catch up after the new node was drained and removed"
[ "$(( $(shards_on w1 $((P + 1))) + $(shards_on w2 $((P + 2))) ))" -ge 8 ] ||
    fail "the two workers do not keep the 8 shards of totals again"
eventually '[ "$(( $(partials_on w1 $((P + 1))) + $(partials_on w2 $((P + 2))) ))" -eq 8 ]' ||
    fail "the two workers do not keep the 8 partial aggregates of regions again"
echo "ok: a node added and rebalanced onto under writes kept $on_new shards of totals; drained and removed, the others took them back; the tables equal their queries"

sql -c "SET client_min_messages = warning" -c "DROP SCHEMA ct CASCADE"
