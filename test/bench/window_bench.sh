#!/usr/bin/env bash
# test/bench/window_bench.sh: CONTINUOUS tables with window functions over
# the whole result (kept by keys over the rows they are computed over)
# against REFRESH MATERIALIZED VIEW of the same queries.
#
#   bash test/bench/window_bench.sh
#
# Not part of test/run.sh.  Builds orders(id, customer_id, ds, amount) of
# MT_BENCH_ROWS rows over 730 days, indexed on ds, then, as CONTINUOUS tables and as
# materialized views:
#   day_ranks    SELECT ds, sum(amount), rank() OVER (ORDER BY sum(amount) DESC, ds),
#                       sum(sum(amount)) OVER (ORDER BY ds) ... GROUP BY ds
#                (the state: 730 groups; a change early in the running
#                total rewrites every later day)
#   order_ranks  SELECT id, amount, rank() OVER (ORDER BY amount DESC)
#                  FROM orders WHERE customer_id <= 1000
#                (the state: a tenth of the orders, every one of the table's rows)
# Each round updates MT_BENCH_CHANGE_ROWS random orders (of those both
# tables read) in one transaction,
# waits until both tables have applied it, and takes the durations of the
# worker's runs of each table since the change (refresh_history); then
# REFRESH MATERIALIZED VIEW of each, timed.  Prints the medians and the
# ratios RMV / cycle, and checks each table against its view (a mismatch
# fails the run).
#
# Environment:
#   PGHOST/PGPORT  use this running server (must preload the extension with
#                  wal_level = logical; a database named by MT_BENCH_DB is
#                  created in it) instead of starting a private one
#   PG_CONFIG, PGBIN       as in test/run.sh; the extension must be installed
#   MT_BENCH_PORT  port of the private cluster (default 55437)
#   MT_BENCH_DIR   its directory (default: a fresh temporary directory)
#   MT_BENCH_ROWS  orders (default 1000000)   MT_BENCH_ROUNDS  rounds (default 5)
#   MT_BENCH_CHANGE_ROWS  orders updated per round (default 20)
#   MT_BENCH_DB    database (default mt_window)
set -euo pipefail
ROWS=${MT_BENCH_ROWS:-1000000}
ROUNDS=${MT_BENCH_ROUNDS:-5}
CHANGE=${MT_BENCH_CHANGE_ROWS:-20}
DB=${MT_BENCH_DB:-mt_window}
BENCH_NAME=mt_window BENCH_PORT=55437
# shellcheck source=test/bench/lib.sh
source "$(dirname "$0")/lib.sh"

echo "=== setup: $ROWS orders, $CHANGE updated per round, $ROUNDS rounds"
"${PSQL[@]}" >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_cron;
CREATE EXTENSION materialized_table;
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, ds date NOT NULL, amount numeric NOT NULL);
INSERT INTO orders SELECT i, 1 + (i::bigint * 7919) % 10000, date '2024-01-01' + i % 730, (i * 37) % 1000
  FROM generate_series(1, $ROWS) i;
-- a changed day's orders are read again through it
CREATE INDEX ON orders (ds);
VACUUM ANALYZE orders;
-- each query as a view (what the table must equal) and a materialized view
CREATE VIEW day_ranks_query AS
  SELECT ds, sum(amount) AS revenue, rank() OVER (ORDER BY sum(amount) DESC, ds) AS place,
         sum(sum(amount)) OVER (ORDER BY ds) AS running
    FROM orders GROUP BY ds;
CREATE VIEW order_ranks_query AS
  SELECT id, amount, rank() OVER (ORDER BY amount DESC) AS place FROM orders WHERE customer_id <= 1000;
CREATE MATERIALIZED VIEW day_ranks_rmv AS SELECT * FROM day_ranks_query;
CREATE MATERIALIZED VIEW order_ranks_rmv AS SELECT * FROM order_ranks_query;
SELECT materialized_table.execute(\$\$
  CREATE MATERIALIZED TABLE day_ranks FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS AS
    SELECT ds, sum(amount) AS revenue, rank() OVER (ORDER BY sum(amount) DESC, ds) AS place,
           sum(sum(amount)) OVER (ORDER BY ds) AS running
      FROM orders GROUP BY ds;
  CREATE MATERIALIZED TABLE order_ranks FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS AS
    SELECT id, amount, rank() OVER (ORDER BY amount DESC) AS place FROM orders WHERE customer_id <= 1000
\$\$);
CREATE FUNCTION rmv_ms(v regclass) RETURNS float LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE format('REFRESH MATERIALIZED VIEW %s', v);
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END
\$\$;
CREATE FUNCTION differs(t regclass, v regclass) RETURNS bigint LANGUAGE plpgsql AS \$\$
DECLARE n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((TABLE %1\$s EXCEPT ALL TABLE %2\$s) UNION ALL (TABLE %2\$s EXCEPT ALL TABLE %1\$s)) x', t, v)
      INTO n;
    RETURN n;
END
\$\$;
SQL
q "SELECT table_name || ': ' || maintenance || ', ' || maintenance_detail FROM materialized_table.materialized_tables ORDER BY 1"

# until the condition holds (60 s at most)
wait_until() {
    for _ in $(seq 1 600); do
        [ "$(q "SELECT $1")" = t ] && return 0
        sleep 0.1
    done
    echo "timed out waiting for: $1" >&2
    exit 1
}
wait_until "bool_and(synced) FROM materialized_table_internal.continuous_state"

bad=0
rounds=$(mktemp)
for r in $(seq 1 "$ROUNDS"); do
    before=$(q "SELECT coalesce(max(run_id), 0) FROM materialized_table.refresh_history")
    q "UPDATE orders SET amount = amount + 1 WHERE id IN (SELECT id FROM orders WHERE customer_id <= 1000 ORDER BY random() LIMIT $CHANGE)" >/dev/null
    # each table has run since (polled cheaply: checking it against its
    # query meanwhile would take the worker's CPU)
    for t in day_ranks order_ranks; do
        wait_until "EXISTS (SELECT FROM materialized_table.refresh_history WHERE table_name = '$t'::regclass AND run_id > $before)"
    done
    sleep 0.5
    for t in day_ranks order_ranks; do
        cycle=$(q "SELECT round(sum(extract(epoch FROM duration)) * 1000, 1) FROM materialized_table.refresh_history
                    WHERE table_name = '$t'::regclass AND run_id > $before")
        how=$(q "SELECT string_agg(DISTINCT strategy, '/') FROM materialized_table.refresh_history
                  WHERE table_name = '$t'::regclass AND run_id > $before")
        rmv=$(q "SELECT round(rmv_ms('${t}_rmv')::numeric, 1)")
        diff=$(q "SELECT differs('$t', '${t}_query')")
        [ "$diff" = 0 ] || { echo "MISMATCH: $t differs from its query in $diff rows" >&2; bad=1; }
        echo "$t $r ${cycle:-0} $rmv ${how:-none}" >> "$rounds"
        printf '  round %d  %-12s cycle %8s ms (%s)  RMV %8s ms\n' "$r" "$t" "${cycle:-0}" "${how:-none}" "$rmv"
    done
done

echo "=== medians over $ROUNDS rounds"
for t in day_ranks order_ranks; do
    c=$(awk -v t=$t '$1 == t {print $3}' "$rounds" | median)
    m=$(awk -v t=$t '$1 == t {print $4}' "$rounds" | median)
    printf '  %-12s cycle %8s ms  RMV %8s ms  ratio RMV / cycle %s\n' "$t" "$c" "$m" "$(ratio "$m" "$c")"
done
rm -f "$rounds"
exit $bad
