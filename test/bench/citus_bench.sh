#!/usr/bin/env bash
# test/bench/citus_bench.sh: FULL refreshes of materialized tables on a
# Citus cluster (a coordinator and two workers, on this one machine)
# against the same on one plain node, and against REFRESH MATERIALIZED
# VIEW of the same query on the coordinator.
#
#   bash test/bench/citus_bench.sh
#
# Not part of test/run.sh; prints figures and ratios against baselines
# measured in the same run, and never fails on timing.  Sources, as in
# continuous_bench.sh:
#   orders(id bigint, customer_id int, ds date, amount numeric(12,2))
#       MT_BENCH_ROWS rows (default 2,000,000); on Citus distributed by
#       customer_id
#   customers(id int, region text)   100,000 rows in 200 regions; on Citus
#       distributed by id, co-located with orders
# and two FULL tables:
#   totals   SELECT customer_id, count(*), sum(amount) FROM orders GROUP BY customer_id
#            on Citus DISTRIBUTED BY HASH (customer_id): co-located, its
#            refresh runs on the workers shard by shard
#   joined   SELECT o.ds, c.region, count(*), sum(o.amount) FROM orders o
#            JOIN customers c ON c.id = o.customer_id GROUP BY o.ds, c.region
#            on Citus a table of the coordinator: the join runs on the
#            workers, the groups are merged on the coordinator
# Each round updates 1% of the orders on both sides, then times on each
# side the table's refresh (ALTER MATERIALIZED TABLE ... REFRESH) and
# REFRESH MATERIALIZED VIEW of a view with the same query; medians of
# MT_BENCH_ROUNDS rounds (default 5).
#
# Then CONTINUOUS mode on Citus (MT_BENCH_CONTINUOUS=0 skips it): two
# tables kept on the workers shard by shard,
#   live_totals   the query of totals, DISTRIBUTED BY HASH (customer_id)
#   live_joined   SELECT o.customer_id, c.region, count(*), sum(o.amount)
#                 ... GROUP BY o.customer_id, c.region, DISTRIBUTED BY HASH
#                 (customer_id): the join grouped by the distribution column
# and one of the coordinator, kept from the partial aggregates of each shard,
#   live_region_day  the query of joined (the join of continuous_bench.sh,
#                 by ds, region: its groups span the shards)
# with pgbench writers (2 clients, MT_BENCH_SECONDS each, default 20)
# through the coordinator, without the tables (dropped, the sources' replica
# identity back to its default, the slots gone) and with them, in
# MT_BENCH_LOAD_ROUNDS rounds (default 3) of alternating order: the ratio
# of the medians of the writers' throughput, for two mixes of writes:
#   orders      as in continuous_bench.sh, each transaction inserts one
#               order and updates one random order (two shards, mostly on
#               two nodes: Citus commits it in two phases)
#   customers   each transaction updates all the orders of one random
#               customer (20 rows, one shard): ten times the rows changed
#               per transaction, so ten times the maintenance per write
# Then
# one 1% update: the time the workers' cycles took to apply it (per node,
# the sum of its cycles' durations for the table's shards; the nodes work
# in parallel, so the slowest node's; for live_region_day, plus the
# coordinator's passes that combined the partials) against REFRESH
# MATERIALIZED VIEW of the same query on the coordinator.
#
# Environment:
#   PG_CONFIG, PGBIN   as in test/run.sh; the extension must be installed,
#                      Citus too (scripts/citus_cluster.sh install)
#   MT_BENCH_PORT      the coordinator's port (default 55470); the workers
#                      on + 1 and + 2, the plain node on + 3
#   MT_BENCH_DIR       the clusters' directory (default: a fresh temporary one)
#   MT_BENCH_ROWS, MT_BENCH_ROUNDS, MT_BENCH_SECONDS, MT_BENCH_LOAD_ROUNDS,
#   MT_BENCH_CONTINUOUS
set -euo pipefail
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PGBIN=${PGBIN:-$("$PG_CONFIG" --bindir)}
PORT=${MT_BENCH_PORT:-55470}
ROWS=${MT_BENCH_ROWS:-2000000}
ROUNDS=${MT_BENCH_ROUNDS:-5}
SECONDS_LOAD=${MT_BENCH_SECONDS:-20}
DIR=$(realpath -m "${MT_BENCH_DIR:-$(mktemp -d /tmp/mt_citus_bench.XXXXXX)}")
DB=citus_bench
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

bash scripts/citus_cluster.sh install
mkdir -p "$DIR"
[ "$(id -u)" = 0 ] && chown postgres: "$DIR"
trap 'bash scripts/citus_cluster.sh stop "$DIR"; bash scripts/pg_cluster.sh stop "$DIR/single"' EXIT
TUNING="shared_buffers = '1GB'
max_wal_size = '8GB'
checkpoint_timeout = '30min'"
MT_CLUSTER_CONF=$TUNING bash scripts/citus_cluster.sh start "$DIR" "$PORT" "$DB"
MT_CLUSTER_CONF=$TUNING bash scripts/pg_cluster.sh start "$DIR/single" $((PORT + 3)) "$DB"
"$PGBIN/psql" -X -q -h "$DIR/single" -p $((PORT + 3)) -U postgres -d postgres -c "CREATE DATABASE $DB"
"$PGBIN/psql" -X -q -h "$DIR/single" -p $((PORT + 3)) -U postgres -d "$DB" \
    -c "CREATE EXTENSION pg_cron" -c "CREATE EXTENSION materialized_table"

citus() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$DIR/coord" -p "$PORT" -U postgres -d "$DB" "$@"; }
single() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$DIR/single" -p $((PORT + 3)) -U postgres -d "$DB" "$@"; }
# milliseconds of one statement
timed() {
    local side=$1 sql=$2
    $side -At -c "SET materialized_table.scheduled_refreshes = off" -c '\timing on' -c "$sql" |
        sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}

JOIN_QUERY="SELECT o.ds, c.region, count(*) AS orders, sum(o.amount) AS total
  FROM public.orders o JOIN public.customers c ON c.id = o.customer_id GROUP BY o.ds, c.region"
TOTALS_QUERY="SELECT customer_id, count(*) AS orders, sum(amount) AS total FROM public.orders GROUP BY customer_id"
schema() {
    local distribute=$1
    cat <<SQL
SET client_min_messages = warning;
SET materialized_table.scheduled_refreshes = off;
CREATE TABLE customers (id int PRIMARY KEY, region text NOT NULL);
CREATE TABLE orders (id bigint, customer_id int NOT NULL, ds date NOT NULL,
                     amount numeric(12,2) NOT NULL, PRIMARY KEY (customer_id, id));
$( [ "$distribute" = 1 ] && echo "SELECT create_distributed_table('customers', 'id', shard_count => 8);
SELECT create_distributed_table('orders', 'customer_id', colocate_with => 'customers');")
INSERT INTO customers SELECT i, 'region ' || (i % 200) FROM generate_series(1, 100000) i;
INSERT INTO orders SELECT i, 1 + i % 100000, date '2024-01-01' + i % 365, (i % 10000) / 100.0
  FROM generate_series(1, $ROWS) i;
VACUUM ANALYZE customers;
VACUUM ANALYZE orders;
SELECT materialized_table.execute(\$\$CREATE MATERIALIZED TABLE totals
  $( [ "$distribute" = 1 ] && echo "DISTRIBUTED BY HASH (customer_id)")
  FRESHNESS = INTERVAL '1' HOUR AS $TOTALS_QUERY\$\$);
SELECT materialized_table.execute(\$\$CREATE MATERIALIZED TABLE joined
  FRESHNESS = INTERVAL '1' HOUR AS $JOIN_QUERY\$\$);
CREATE MATERIALIZED VIEW totals_rmv AS $TOTALS_QUERY;
CREATE MATERIALIZED VIEW joined_rmv AS $JOIN_QUERY;
SQL
}
echo "=== loading $ROWS orders on Citus (2 workers) and on one node"
schema 1 | citus >/dev/null
schema 0 | single >/dev/null
citus -At -c "SELECT 'citus: totals ' || (SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'totals'::regclass) || ' shards, co-located with orders: ' ||
  ((SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'totals'::regclass) =
   (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'orders'::regclass))"

declare -A T
for r in $(seq 1 "$ROUNDS"); do
    # 1% of the orders, the same on both sides
    change="UPDATE orders SET amount = amount + 1 WHERE id % 100 = $r"
    citus -c "$change" -c "VACUUM orders"
    single -c "$change" -c "VACUUM orders"
    for side in citus single; do
        T[$side.totals]+="$(timed $side "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE totals REFRESH')") "
        T[$side.totals_rmv]+="$(timed $side 'REFRESH MATERIALIZED VIEW totals_rmv') "
        T[$side.joined]+="$(timed $side "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE joined REFRESH')") "
        T[$side.joined_rmv]+="$(timed $side 'REFRESH MATERIALIZED VIEW joined_rmv') "
    done
    echo "round $r: done"
done
for side in citus single; do
    for t in totals joined; do
        # a refresh of a materialized table must equal its query
        n=$($side -At -c "SELECT count(*) FROM ((TABLE $t EXCEPT ALL SELECT * FROM ${t}_rmv) UNION ALL (SELECT * FROM ${t}_rmv EXCEPT ALL TABLE $t)) d")
        [ "$n" = 0 ] || { echo "MISMATCH: $side $t differs from its query in $n rows"; exit 1; }
    done
done

m() { tr ' ' '\n' <<<"${T[$1]}" | grep . | median; }
echo
echo "=== FULL refresh after a 1% update, medians of $ROUNDS rounds (ms)"
printf '%-8s %-34s %10s %10s %8s\n' table refresh "citus" "one node" "ratio"
for t in totals joined; do
    printf '%-8s %-34s %10.1f %10.1f %8s\n' "$t" "ALTER MATERIALIZED TABLE ... REFRESH" \
        "$(m citus.$t)" "$(m single.$t)" "$(ratio "$(m single.$t)" "$(m citus.$t)")"
    printf '%-8s %-34s %10.1f %10.1f %8s\n' "" "REFRESH MATERIALIZED VIEW" \
        "$(m citus.${t}_rmv)" "$(m single.${t}_rmv)" "$(ratio "$(m single.${t}_rmv)" "$(m citus.${t}_rmv)")"
done
echo
echo "ratio: one node / Citus (above 1: Citus faster)."
echo "materialized table / RMV on the coordinator: totals $(ratio "$(m citus.totals)" "$(m citus.totals_rmv)"), joined $(ratio "$(m citus.joined)" "$(m citus.joined_rmv)")"
echo "every table equal to its query: yes"

[ "${MT_BENCH_CONTINUOUS:-1}" = 1 ] || exit 0

# --- CONTINUOUS mode on Citus ---------------------------------------------------
LIVE_JOIN_QUERY="SELECT o.customer_id, c.region, count(*) AS orders, sum(o.amount) AS total
  FROM public.orders o JOIN public.customers c ON c.id = o.customer_id GROUP BY o.customer_id, c.region"
# (the order a writer updates is found by its customer: one shard)
citus -c "CREATE SEQUENCE order_ids START $((ROWS + 1))"
cat >"$DIR/orders.pgbench" <<'PGB'
\set id random(1, :rows)
\set c random(1, 100000)
BEGIN;
INSERT INTO orders (id, customer_id, ds, amount)
  VALUES (nextval('order_ids'), :c, date '2024-01-01' + :c % 365, :c % 10000 / 100.0);
UPDATE orders SET amount = amount + 1 WHERE customer_id = 1 + :id % 100000 AND id = :id;
END;
PGB
cat >"$DIR/customers.pgbench" <<'PGB'
\set c random(1, 100000)
UPDATE orders SET amount = amount + 0.01 WHERE customer_id = :c;
PGB
chmod 644 "$DIR/orders.pgbench" "$DIR/customers.pgbench"
# tps of the writers of mix $1
tps() {
    "$PGBIN/pgbench" -n -h "$DIR/coord" -p "$PORT" -U postgres -c 2 -j 2 -T "$SECONDS_LOAD" \
        -D rows="$ROWS" -f "$DIR/$1.pgbench" "$DB" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}
# rows of table $1 that differ from its query (EXCEPT ALL both ways)
live_diff() {
    local q=$TOTALS_QUERY
    [ "$1" = live_joined ] && q=$LIVE_JOIN_QUERY
    [ "$1" = live_region_day ] && q=$JOIN_QUERY
    citus -At -c "SELECT count(*) FROM ((TABLE $1 EXCEPT ALL $q) UNION ALL ($q EXCEPT ALL TABLE $1)) d"
}
# both tables dated since $1 by all their shards, and equal to their queries
live_caught_up() {
    local deadline=$((SECONDS + 300))
    while [ $SECONDS -lt $deadline ]; do
        if [ "$(citus -At -c "SELECT bool_and(last_refresh_time >= '$1') FROM materialized_table.materialized_tables
                               WHERE table_name::text IN ('live_totals', 'live_joined', 'live_region_day')")" = t ] &&
           [ "$(live_diff live_totals)" = 0 ] && [ "$(live_diff live_joined)" = 0 ] &&
           [ "$(live_diff live_region_day)" = 0 ]; then
            return 0
        fi
        sleep 0.2
    done
    echo "MISMATCH: the CONTINUOUS tables did not catch up (live_totals $(live_diff live_totals) rows differ, live_joined $(live_diff live_joined), live_region_day $(live_diff live_region_day))"
    exit 1
}
live_create() {
    citus -c "SET materialized_table.scheduled_refreshes = off" -c "SET client_min_messages = warning" >/dev/null \
        -c "SELECT materialized_table.execute(\$\$CREATE MATERIALIZED TABLE live_totals DISTRIBUTED BY HASH (customer_id)
              FRESHNESS = INTERVAL '1' SECOND AS $TOTALS_QUERY\$\$)" \
        -c "SELECT materialized_table.execute(\$\$CREATE MATERIALIZED TABLE live_joined DISTRIBUTED BY HASH (customer_id)
              FRESHNESS = INTERVAL '1' SECOND AS $LIVE_JOIN_QUERY\$\$)" \
        -c "SELECT materialized_table.execute(\$\$CREATE MATERIALIZED TABLE live_region_day
              FRESHNESS = INTERVAL '1' SECOND AS $JOIN_QUERY\$\$)"
    live_caught_up "$(citus -At -c "SELECT clock_timestamp()")"
}
# no table: the sources back to their default replica identity, and the
# nodes' slots gone with the last CONTINUOUS table
live_drop() {
    citus -c "SELECT materialized_table.execute('DROP MATERIALIZED TABLE live_totals')" \
        -c "SELECT materialized_table.execute('DROP MATERIALIZED TABLE live_joined')" \
        -c "SELECT materialized_table.execute('DROP MATERIALIZED TABLE live_region_day')" \
        -c "ALTER TABLE orders REPLICA IDENTITY DEFAULT" -c "ALTER TABLE customers REPLICA IDENTITY DEFAULT" >/dev/null
    local deadline=$((SECONDS + 60))
    while [ "$(citus -At -c "SELECT sum(result::int) FROM run_command_on_all_nodes(\$\$SELECT count(*) FROM pg_replication_slots\$\$)")" != 0 ]; do
        [ $SECONDS -lt $deadline ] || { echo "the nodes kept their slots after the tables were dropped"; exit 1; }
        sleep 0.5
    done
}
# Rounds of both mixes without the tables and with them, in alternating
# order (without first in odd rounds), as in continuous_bench.sh: a
# cluster's writers slow down as its tables age, which would count against
# whichever side always came second.  The last round ends with the tables.
LOAD_ROUNDS=${MT_BENCH_LOAD_ROUNDS:-3}
declare -A W
echo
echo "=== CONTINUOUS on Citus: writers without the tables and with them ($LOAD_ROUNDS rounds of $SECONDS_LOAD s per mix, 2 clients)"
for r in $(seq 1 "$LOAD_ROUNDS"); do
    order="without with"
    [ $((r % 2)) = 0 ] && order="with without"
    [ $((r % 2)) = 0 ] && [ "$r" = "$LOAD_ROUNDS" ] && order="without with"
    for side in $order; do
        if [ "$side" = with ]; then
            [ -n "$(citus -At -c "SELECT to_regclass('live_totals')")" ] || live_create
        else
            [ -z "$(citus -At -c "SELECT to_regclass('live_totals')")" ] || live_drop
        fi
        W[$side.orders]+="$(tps orders) "
        W[$side.customers]+="$(tps customers) "
        [ "$side" = with ] && live_caught_up "$(citus -At -c "SELECT clock_timestamp()")"
    done
    echo "round $r ($order): done"
done
citus -At -c "SELECT table_name || ': ' || maintenance FROM materialized_table.materialized_tables
               WHERE table_name::text LIKE 'live%' ORDER BY 1"
wm() { tr ' ' '\n' <<<"${W[$1]}" | grep . | median; }
tps_without=$(wm without.orders)
tps_with=$(wm with.orders)
heavy_without=$(wm without.customers)
heavy_with=$(wm with.customers)
citus -c "CREATE MATERIALIZED VIEW live_joined_rmv AS $LIVE_JOIN_QUERY"

echo "=== one 1% update, applied by the workers' cycles"
since=$(citus -At -c "SELECT clock_timestamp()")
citus -c "UPDATE orders SET amount = amount + 1 WHERE id % 100 = 77"
live_caught_up "$(citus -At -c "SELECT clock_timestamp()")"
# per node, the sum of its cycles for the table's shards since the update
cycle_ms() {
    citus -At -c "SELECT max(result::numeric) FROM run_command_on_workers(\$\$
      SELECT coalesce(sum(extract(epoch FROM finished_at - started_at) * 1000), 0)::numeric(12,1)
        FROM materialized_table.refresh_history
       WHERE trigger = 'CONTINUOUS' AND table_name::text LIKE '$1\\_%' AND started_at >= '$since'\$\$)"
}
c_totals=$(cycle_ms live_totals)
c_joined=$(cycle_ms live_joined)
# the partial tables of live_region_day on the workers, then the
# coordinator's passes that combined them
id_region_day=$(citus -At -c "SELECT id FROM materialized_table_internal.mt_table
                               WHERE relid = 'live_region_day'::regclass")
c_partials=$(cycle_ms "mt_partial_${id_region_day}")
c_combine=$(citus -At -c "SELECT coalesce(sum(extract(epoch FROM finished_at - started_at) * 1000), 0)::numeric(12,1)
                            FROM materialized_table.refresh_history
                           WHERE table_name = 'live_region_day'::regclass AND trigger = 'CONTINUOUS'
                             AND started_at >= '$since'")
c_region_day=$(awk -v a="$c_partials" -v b="$c_combine" 'BEGIN {printf "%.1f", a + b}')
# how those passes combined: the changed groups (DELTAS) or all (FULL)
p_combine=$(citus -At -c "SELECT coalesce(string_agg(strategy || ' ' || n, ', ' ORDER BY strategy), 'none')
                            FROM (SELECT strategy, count(*) AS n FROM materialized_table.refresh_history
                                   WHERE table_name = 'live_region_day'::regclass AND trigger = 'CONTINUOUS'
                                     AND started_at >= '$since' GROUP BY strategy) s")
r_totals=$(timed citus 'REFRESH MATERIALIZED VIEW totals_rmv')
r_joined=$(timed citus 'REFRESH MATERIALIZED VIEW live_joined_rmv')
r_region_day=$(timed citus 'REFRESH MATERIALIZED VIEW joined_rmv')
echo
printf '%-16s %18s %22s %8s\n' table "workers' cycles ms" "RMV on coordinator ms" speedup
printf '%-16s %18s %22.1f %8s\n' live_totals "$c_totals" "$r_totals" "$(ratio "$r_totals" "$c_totals")"
printf '%-16s %18s %22.1f %8s\n' live_joined "$c_joined" "$r_joined" "$(ratio "$r_joined" "$c_joined")"
printf '%-16s %18s %22.1f %8s\n' live_region_day "$c_region_day" "$r_region_day" "$(ratio "$r_region_day" "$c_region_day")"
echo "live_region_day: the workers' cycles $c_partials ms, the coordinator's combining passes $c_combine ms ($p_combine)"
echo "writers, medians of $LOAD_ROUNDS rounds (tps without the tables: ${W[without.orders]}/ with: ${W[with.orders]}):"
echo "  one order inserted, one updated: $tps_without without the tables, $tps_with with them: $(ratio "$tps_with" "$tps_without")"
echo "  (tps without: ${W[without.customers]}/ with: ${W[with.customers]})"
echo "  a customer's orders updated: $heavy_without without the tables, $heavy_with with them: $(ratio "$heavy_with" "$heavy_without")"
echo "every CONTINUOUS table equal to its query: yes"
