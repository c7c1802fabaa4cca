#!/usr/bin/env bash
# test/bench/refresh_vs_rmv.sh: ALTER MATERIALIZED TABLE ... REFRESH against
# REFRESH MATERIALIZED VIEW [CONCURRENTLY] for the same aggregate query.
#
#   bash test/bench/refresh_vs_rmv.sh
#
# Not part of test/run.sh.  Builds 2,000,000 source rows in 100,000 groups,
#   sales(ds date, product_id int, quantity int, amount numeric)
#   SELECT ds, product_id, sum(quantity), count(*), sum(amount) ... GROUP BY ds, product_id
# then creates, for that query:
#   sales_rmv    a materialized view                       REFRESH MATERIALIZED VIEW
#   sales_rmvc   a materialized view with a unique index   ... CONCURRENTLY
#   sales_mt     a FULL materialized table (suspended)     ALTER MATERIALIZED TABLE ... REFRESH
# Each round changes ~1% of the source rows at random (about 18% of the
# groups; MT_BENCH_CHANGE), then refreshes all three, in alternating order, timing each.
# It prints the medians and the ratios MT/RMV (target <= 1.1) and
# MT/RMV CONCURRENTLY.  The same session settings (work_mem, parallelism)
# apply to every refresh.
#
# Then, once per kind of refresh, a reader (a procedure that reads the
# whole table in a loop, one transaction per read, lock_timeout 60s)
# runs during the refresh: it reports how many reads it did, the longest
# one, and the smallest and largest row counts it saw (a partial table
# would show as fewer rows).
#
# Environment:
#   PGHOST/PGPORT  use this running server (must preload the extension; a
#                  database named by MT_BENCH_DB is created in it) instead
#                  of starting a private one
#   PG_CONFIG, PGBIN       as in test/run.sh; the extension must be installed
#   MT_BENCH_PORT  port of the private cluster (default 55433)
#   MT_BENCH_DIR   its directory (default: a fresh temporary directory)
#   MT_BENCH_ROWS  source rows (default 2000000)   MT_BENCH_ROUNDS  rounds (default 5)
#   MT_BENCH_WORK_MEM  work_mem for every refresh (default 256MB)
#   MT_BENCH_CHANGE    fraction of source rows changed before each round (default 0.01)
#   MT_BENCH_DB    database (default mt_bench)
set -euo pipefail
ROWS=${MT_BENCH_ROWS:-2000000}
ROUNDS=${MT_BENCH_ROUNDS:-5}
WORK_MEM=${MT_BENCH_WORK_MEM:-256MB}
CHANGE=${MT_BENCH_CHANGE:-0.01}
DB=${MT_BENCH_DB:-mt_bench}
BENCH_NAME=mt_bench BENCH_PORT=55433
# shellcheck source=test/bench/lib.sh
source "$(dirname "$0")/lib.sh"

echo "=== setup: $ROWS source rows, work_mem $WORK_MEM, $CHANGE of the rows changed per round"
# every session of the benchmark, the refreshes' included, gets these
"${PSQL[@]}" -d postgres -c "ALTER DATABASE $DB SET work_mem = '$WORK_MEM'"
"${PSQL[@]}" >/dev/null <<SQL
CREATE EXTENSION IF NOT EXISTS pg_cron;
CREATE EXTENSION materialized_table;
CREATE TABLE sales (ds date, product_id int, quantity int, amount numeric);
-- row i: day i % 100, product (i / 100) % (ROWS / 2000): 100 x ROWS/2000 groups of 20 rows
INSERT INTO sales
SELECT date '2024-01-01' + i % 100,
       (i / 100) % greatest($ROWS / 2000, 1),
       1 + i % 10,
       round((i % 1000) / 10.0, 2)
  FROM generate_series(0, $ROWS - 1) i;
VACUUM ANALYZE sales;

CREATE MATERIALIZED VIEW sales_rmv AS
SELECT ds, product_id, sum(quantity) AS quantity, count(*) AS orders, sum(amount) AS amount
  FROM sales GROUP BY ds, product_id;
CREATE MATERIALIZED VIEW sales_rmvc AS
SELECT ds, product_id, sum(quantity) AS quantity, count(*) AS orders, sum(amount) AS amount
  FROM sales GROUP BY ds, product_id;
CREATE UNIQUE INDEX sales_rmvc_key ON sales_rmvc (ds, product_id);
SELECT materialized_table.execute(\$\$
  CREATE MATERIALIZED TABLE sales_mt
    FRESHNESS = INTERVAL '1' HOUR
    REFRESH_MODE = FULL
    AS SELECT ds, product_id, sum(quantity) AS quantity, count(*) AS orders, sum(amount) AS amount
         FROM sales GROUP BY ds, product_id;
  ALTER MATERIALIZED TABLE sales_mt SUSPEND
\$\$);
VACUUM ANALYZE sales_rmv, sales_rmvc, sales_mt;

-- the reader: reads the whole table in a loop, one transaction per read,
-- until bench_ctl.running is false; reports what it saw
CREATE TABLE bench_ctl (running boolean NOT NULL);
INSERT INTO bench_ctl VALUES (false);
CREATE PROCEDURE bench_reader(tbl regclass, INOUT reads int DEFAULT 0,
                              INOUT max_ms float8 DEFAULT 0,
                              INOUT min_rows bigint DEFAULT NULL,
                              INOUT max_rows bigint DEFAULT NULL)
LANGUAGE plpgsql AS \$\$
DECLARE
  t0 timestamptz;
  n bigint;
BEGIN
  PERFORM set_config('lock_timeout', '60s', false);
  -- wait for the controller to start
  WHILE NOT (SELECT running FROM bench_ctl) LOOP
    COMMIT;
    PERFORM pg_sleep(0.01);
  END LOOP;
  LOOP
    COMMIT;
    EXIT WHEN NOT (SELECT running FROM bench_ctl);
    COMMIT;
    t0 := clock_timestamp();
    EXECUTE format('SELECT count(*) FROM %s', tbl) INTO n;
    max_ms := greatest(max_ms, extract(epoch FROM clock_timestamp() - t0) * 1000);
    min_rows := least(min_rows, n);
    max_rows := greatest(max_rows, n);
    reads := reads + 1;
    COMMIT;
    PERFORM pg_sleep(0.02);
  END LOOP;
END \$\$;
SQL
echo "groups: $(q "SELECT count(*) FROM sales_mt"), source rows: $(q "SELECT count(*) FROM sales")"
echo "refresh plan of the materialized view's query:"
q "EXPLAIN (COSTS OFF) SELECT ds, product_id, sum(quantity), count(*), sum(amount) FROM sales GROUP BY ds, product_id" | sed 's/^/    /'

# timed KIND: run one refresh of that kind in a fresh session, print its ms
timed() {
    local sql
    case "$1" in
    rmv)  sql="REFRESH MATERIALIZED VIEW sales_rmv" ;;
    rmvc) sql="REFRESH MATERIALIZED VIEW CONCURRENTLY sales_rmvc" ;;
    mt)   sql="SELECT materialized_table.execute('ALTER MATERIALIZED TABLE sales_mt REFRESH')" ;;
    # every aggregate is used, or the planner drops it
    query) sql="SELECT count(*), sum(q), sum(n), sum(a) FROM (SELECT ds, product_id,
                  sum(quantity) AS q, count(*) AS n, sum(amount) AS a
                  FROM sales GROUP BY ds, product_id) s" ;;
    esac
    "${PSQL[@]}" -c '\timing on' -c "$sql" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
}

change_source() {
    "${PSQL[@]}" -c "UPDATE sales SET quantity = quantity + 1 WHERE random() < $CHANGE" \
        -c "VACUUM ANALYZE sales"
}


declare -a T_RMV=() T_RMVC=() T_MT=() T_VAC=() T_Q=()
echo
echo "=== $ROUNDS rounds (ms); query = the aggregate alone, for reference"
echo "    MT rows = rows the MT refresh wrote (inserted + deleted), of $(q "SELECT count(*) FROM sales_mt")"
printf '%-6s %10s %10s %10s %10s %10s %10s\n' round query RMV RMV_CONC MT "MT rows" "MT vacuum"
for r in $(seq "$ROUNDS"); do
    change_source
    if [ $((r % 2)) = 1 ]; then order="query rmv mt rmvc"; else order="query mt rmv rmvc"; fi
    for kind in $order; do
        q "CHECKPOINT" >/dev/null
        t=$(timed "$kind")
        case $kind in
        rmv) T_RMV+=("$t"); t_rmv=$t ;;
        rmvc) T_RMVC+=("$t"); t_rmvc=$t ;;
        mt) T_MT+=("$t"); t_mt=$t ;;
        query) T_Q+=("$t"); t_q=$t ;;
        esac
    done
    mt_rows=$(q "SELECT rows FROM materialized_table.refresh_history
                  WHERE table_name = 'sales_mt'::regclass ORDER BY run_id DESC LIMIT 1")
    # the MT's refresh leaves dead rows behind, the view's does not: show
    # what cleaning them costs (autovacuum's work, outside the refresh)
    t_vac=$("${PSQL[@]}" -c '\timing on' -c "VACUUM sales_mt" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
    T_VAC+=("$t_vac")
    printf '%-6s %10.1f %10.1f %10.1f %10.1f %10s %10.1f\n' "$r" "$t_q" "$t_rmv" "$t_rmvc" "$t_mt" "$mt_rows" "$t_vac"
done

m_rmv=$(printf '%s\n' "${T_RMV[@]}" | median)
m_rmvc=$(printf '%s\n' "${T_RMVC[@]}" | median)
m_mt=$(printf '%s\n' "${T_MT[@]}" | median)
m_vac=$(printf '%s\n' "${T_VAC[@]}" | median)
m_q=$(printf '%s\n' "${T_Q[@]}" | median)
echo
echo "=== medians"
printf '  the aggregate query alone               %10.1f ms\n' "$m_q"
printf '  REFRESH MATERIALIZED VIEW               %10.1f ms\n' "$m_rmv"
printf '  REFRESH MATERIALIZED VIEW CONCURRENTLY  %10.1f ms\n' "$m_rmvc"
printf '  ALTER MATERIALIZED TABLE ... REFRESH    %10.1f ms   (+ VACUUM of its dead rows %.1f ms)\n' "$m_mt" "$m_vac"
ratio=$(awk -v a="$m_mt" -v b="$m_rmv" 'BEGIN {printf "%.2f", a / b}')
ratio_c=$(awk -v a="$m_mt" -v b="$m_rmvc" 'BEGIN {printf "%.2f", a / b}')
verdict=$(awk -v r="$ratio" 'BEGIN {print (r <= 1.1) ? "within the 1.1 target" : "ABOVE the 1.1 target"}')
echo "  MT / RMV               = $ratio   ($verdict)"
echo "  MT / RMV CONCURRENTLY  = $ratio_c"

# --- readers during a refresh ------------------------------------------------
# reader_during KIND TABLE: start the reader on TABLE, refresh, stop the reader
reader_during() {
    local out pid t
    out=$(mktemp)
    q "UPDATE bench_ctl SET running = false" >/dev/null
    "${PSQL[@]}" -At -F ' ' -c "CALL bench_reader('$2')" >"$out" &
    pid=$!
    q "UPDATE bench_ctl SET running = true" >/dev/null
    sleep 0.5
    t=$(timed "$1")
    sleep 0.2
    q "UPDATE bench_ctl SET running = false" >/dev/null
    wait "$pid"
    read -r reads max_ms min_rows max_rows <"$out"
    rm -f "$out"
    printf '  %-34s refresh %8.1f ms | reads %4d, longest %8.1f ms, rows seen %s..%s\n' \
        "$3" "$t" "$reads" "$max_ms" "$min_rows" "$max_rows"
}

echo
echo "=== a reader during each kind of refresh (SELECT count(*) in a loop, lock_timeout 60s)"
change_source
reader_during rmv sales_rmv "REFRESH MATERIALIZED VIEW"
reader_during rmvc sales_rmvc "REFRESH MAT. VIEW CONCURRENTLY"
reader_during mt sales_mt "ALTER MATERIALIZED TABLE REFRESH"

# --- a scheduled run ---------------------------------------------------------
# what the table's pg_cron job runs, timed the same way, against the view's
# refresh after the same source change
echo
echo "=== a scheduled run (materialized_table.scheduled_refresh, as the pg_cron job calls it)"
q "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE sales_mt RESUME')" >/dev/null
change_source
q "CHECKPOINT" >/dev/null
t_sched=$("${PSQL[@]}" -c '\timing on' \
    -c "SELECT materialized_table.scheduled_refresh('sales_mt'::regclass, now())" |
    sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
q "CHECKPOINT" >/dev/null
t_rmv=$(timed rmv)
printf '  scheduled run %8.1f ms, REFRESH MATERIALIZED VIEW %8.1f ms: ratio %s\n' "$t_sched" "$t_rmv" \
    "$(awk -v a="$t_sched" -v b="$t_rmv" 'BEGIN {printf "%.2f", a / b}')"
q "SELECT trigger, status, rows FROM materialized_table.refresh_history
    WHERE table_name = 'sales_mt'::regclass ORDER BY run_id DESC LIMIT 1" | sed 's/^/  history: /'
