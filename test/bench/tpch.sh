#!/usr/bin/env bash
# test/bench/tpch.sh: the 22 TPC-H queries as CONTINUOUS materialized
# tables, each cycle that applies a 1% change of lineitem against REFRESH
# MATERIALIZED VIEW of the same query.
#
#   bash test/bench/tpch.sh                      SF 0.01, then SF 0.1 (~5 min)
#   MT_TPCH_SF=1 bash test/bench/tpch.sh         SF 1 (~35 min on 2 cores)
#   MT_TPCH_SMOKE=1 bash test/bench/tpch.sh      SF 0.01, one round (< 1 min)
#
# Prints figures and ratios against baselines measured in the same run,
# and never fails on timing.  It fails (exit 1, after the whole run) when
# a materialized table differs from its query: the smoke run is phase 10 of
# test/run.sh for that check alone.  Figures: docs/benchmarks.md.
#
# Data: test/bench/tpch/dbgen.sql generates TPC-H data at each scale
# factor, in SQL (its header says how close to dbgen it is), with the
# spec's primary and foreign keys and an index on each foreign key that no
# primary key starts with.  Queries: test/bench/tpch/queries/qNN.sql, the
# spec's text with its validation parameters (Q11's FRACTION is 0.0001 /
# SF, as the spec says; Q15 is the spec's variant with WITH), their final
# ORDER BY and LIMIT as the spec has them.
#
# For each query, one after another (only one materialized table exists at
# a time, so that no other table's work falls in its cycles):
#   1. CREATE MATERIALIZED VIEW qNN_rmv AS <query>, and
#      SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE qNN
#        FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS AS <query>$$);
#      wait until the worker has taken it up; note its maintenance and
#      maintenance_detail.
#   2. MT_TPCH_ROUNDS rounds (default 3), each: VACUUM ANALYZE of the
#      sources and the table (and a CHECKPOINT with MT_TPCH_CHECKPOINT=1,
#      see below); then a change in one transaction
#      (test/bench/tpch/dbgen.sql, tpch_change):
#        lineitem  1% of lineitem's rows: 0.8% updated (quantity, extended
#                  price, discount), 0.1% deleted with their orders (the
#                  spec's RF2) and 0.1% inserted with new orders (RF1)
#        partsupp  1% of partsupp's rows updated (supply cost, available
#                  quantity): for Q2, Q11 and Q16, which read neither
#                  lineitem nor orders
#      the cycle of the worker that applies it, watched from one session
#      (test/bench/tpch/round.sql); REFRESH MATERIALIZED VIEW qNN_rmv, in
#      a fresh session; then the table compared with its query, EXCEPT ALL
#      both ways: any difference is printed as a MISMATCH with its rows.
#   3. DROP both; wait until the worker has dropped the slot.
# Columns: maintenance and strategy = materialized_tables.maintenance and
# continuous_state.strategy (KEYS, DELTAS or FULL) once the worker took the
# table up; rows = rows the change inserted, updated or deleted; cycles =
# how the cycle that applied the change computed the table's rows, as
# refresh_history.strategy says (FULL, KEYS, DELTAS; a/b when the rounds
# differed); cycle ms =
# the whole cycle of the worker that applied the change, from the start of
# its decoding to its return to idle after its commits, as
# pg_stat_activity shows them (round.sql); decode ms = the part of it
# before the worker turned to the table (decoding, with the work of tables
# that fold changes as they are decoded); pre ms = the worker process's
# CPU time while the change ran, before its commit: a cycle then decodes
# the WAL flushed so far, which the cycle after the commit need not do
# again (0 when nothing was flushed meanwhile); incr ms = cycle ms + pre
# ms, the incremental side: what the worker spent to bring the table up to
# date with the change; RMV ms = the full side: REFRESH MATERIALIZED VIEW
# of the same query, right after the cycle, in a fresh session; ratio =
# RMV ms / incr ms, of the medians over the rounds (above 1: the worker is
# faster; the median ratio is over the tables); visible ms = from the
# change's commit to the end of the cycle, the wait for the worker's next
# cycle included; check = the table equal to its query after every round;
# path = what the analysis says a cycle does with this change, source by
# source (from maintenance_detail): deltas (the changed rows adjust the
# table), groups (the groups or rows the changed rows name are
# recomputed), whole (the whole table is recomputed).  rounds.tsv also has
# the worker's CPU time from the change's start to the cycle's end (not
# that of the processes it starts: parallel workers, the history row's
# writer) and the history's apply (the refresh_history durations of the
# cycle's runs).  VACUUM before each change leaves every row version the
# cycle and the view's refresh read hinted but the change's own.
#
# Checkpoints: the first change of a page after a checkpoint writes the
# whole page to the WAL, and the worker reads that WAL; at SF 0.1 a 1%
# change right after a CHECKPOINT writes 79 MB of WAL instead of 22 MB,
# and the worker's decoding of it takes about three times as long (Q6's
# cycle: 44 ms instead of 19).  The view's refresh is not affected.  So
# that rounds are alike, and not each the worst case, the data is
# checkpointed once after it is generated and changed three times (of
# each kind, not measured), and no checkpoint is made between rounds
# (the private cluster's checkpoint_timeout is 30 min and max_wal_size
# 8 GB, so a timed checkpoint may fall in a long run); MT_TPCH_CHECKPOINT=1
# makes one before each change instead.
#
# With MT_TPCH_BARE, queries are also run without their final ORDER BY /
# LIMIT ("bare" rows of the table, Q03b ...): by default those with a
# LIMIT, where that is another query (Q2, Q3, Q10, Q18, Q21); all: every
# query with a final ORDER BY; none.
#
# Environment:
#   PGHOST/PGPORT  use this running server (must preload the extension with
#                  wal_level = logical; a database named by MT_BENCH_DB is
#                  created in it) instead of starting a private one
#   PG_CONFIG, PGBIN  as in test/run.sh; the extension must be installed
#   MT_BENCH_PORT  port of the private cluster (default 55435)
#   MT_BENCH_DIR   its directory (default: a fresh temporary directory)
#   MT_BENCH_DB    database (default mt_tpch)
#   MT_TPCH_SF       scale factors, in this order (default "0.01 0.1")
#   MT_TPCH_QUERIES  query numbers (default 1 ... 22)
#   MT_TPCH_ROUNDS   changes measured per query (default 3)
#   MT_TPCH_CHANGE   fraction of lineitem (or partsupp) changed (default 0.01)
#   MT_TPCH_UPDATES_ONLY=1  the change of lineitem is updates alone: no
#                    order (or its lines) deleted or inserted, orders
#                    untouched (tpch_change 'lineitem_updates'), for the
#                    queries that read lineitem
#   MT_TPCH_CHECKPOINT=1  a CHECKPOINT before each change: the worst case
#                    for the worker, which decodes a full-page image of
#                    every page the change is the first to write since
#                    (see "Checkpoints" above)
#   MT_TPCH_BARE     limit (default), all or none (see above)
#   MT_TPCH_OUT      directory for the per-round figures and mismatches
#                    (default test/bench/out/tpch-<date>); table_SF.md is
#                    each scale factor's table in Markdown, for docs/
#   MT_TPCH_SMOKE=1  the smoke run: SF 0.01, one round (under a minute);
#                    its point is the check, its figures mean little
set -euo pipefail
if [ "${MT_TPCH_SMOKE:-0}" = 1 ]; then
    SFS=${MT_TPCH_SF:-0.01}
    ROUNDS=${MT_TPCH_ROUNDS:-1}
else
    SFS=${MT_TPCH_SF:-0.01 0.1}
    ROUNDS=${MT_TPCH_ROUNDS:-3}
fi
QUERIES=${MT_TPCH_QUERIES:-$(seq -s ' ' 1 22)}
CHANGE=${MT_TPCH_CHANGE:-0.01}
UPDATES_ONLY=${MT_TPCH_UPDATES_ONLY:-0}
CHECKPOINT=${MT_TPCH_CHECKPOINT:-0}
BARE=${MT_TPCH_BARE:-limit}
DB=${MT_BENCH_DB:-mt_tpch}
BENCH_NAME=mt_tpch BENCH_PORT=55435
case "$BARE" in limit | all | none) ;; *) echo "MT_TPCH_BARE: limit, all or none" >&2; exit 2 ;; esac
# shellcheck source=test/bench/lib.sh
source "$(dirname "$0")/lib.sh"
T=test/bench/tpch
OUT=${MT_TPCH_OUT:-test/bench/out/tpch-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
MISMATCHES=0
RUN_START=$(date +%s)

"${PSQL[@]}" >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_cron;
CREATE EXTENSION materialized_table;
SQL

ms() { sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'; }
# query_text N VARIANT SF: query N, its parameters substituted; bare
# without its final ORDER BY [LIMIT] (the last line of each file)
query_text() {
    local f
    f=$T/queries/q$(printf %02d "$1").sql
    if [ "$2" = bare ]; then
        sed '${/^ *order by /Id}' "$f"
    else
        cat "$f"
    fi | sed "s/@FRACTION@/$(awk -v sf="$3" 'BEGIN {printf "%g", 0.0001 / sf}')/"
}
has_limit() { tail -1 "$T/queries/q$(printf %02d "$1").sql" | grep -qi ' limit '; }
has_final_order() { tail -1 "$T/queries/q$(printf %02d "$1").sql" | grep -qi '^ *order by '; }
# the change a query sees: of lineitem (and orders), or of partsupp for
# the queries that read neither; with MT_TPCH_UPDATES_ONLY, of lineitem
# alone for those that read it (Q13 and Q22, which read orders and not
# lineitem, keep the change of orders)
change_kind() {
    if [ "$UPDATES_ONLY" = 1 ] && grep -qE '\blineitem\b' "$T/queries/q$(printf %02d "$1").sql"; then
        echo lineitem_updates
    elif grep -qE '\b(lineitem|orders)\b' "$T/queries/q$(printf %02d "$1").sql"; then
        echo lineitem
    else
        echo partsupp
    fi
}
wait_synced() {
    for _ in $(seq 1 1200); do
        [ "$(q "SELECT synced FROM materialized_table_internal.continuous_state WHERE relid = '$1'::regclass")" = t ] && return 0
        sleep 0.1
    done
    echo "  $1 was not taken up by the worker within 120 s" >&2
    return 1
}
wait_no_slot() {
    for _ in $(seq 1 600); do
        [ "$(q "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()")" = 0 ] && return 0
        sleep 0.1
    done
}
# check NAME QUERY LABEL: the table against its query, EXCEPT ALL both
# ways; prints the number of differing rows, and saves them in $OUT
check() {
    local name=$1 query=$2 label=$3 only_t only_q
    read -r only_t only_q < <("${PSQL[@]}" -At -F ' ' -c "SELECT
        (SELECT count(*) FROM (SELECT * FROM $name EXCEPT ALL ($query)) d),
        (SELECT count(*) FROM (($query) EXCEPT ALL SELECT * FROM $name) d)")
    if [ "$only_t" != 0 ] || [ "$only_q" != 0 ]; then
        {
            echo "-- $label: $only_t rows only in the table, $only_q only in the query"
            echo "-- only in the table:"
            "${PSQL[@]}" -c "SELECT * FROM $name EXCEPT ALL ($query)"
            echo "-- only in the query:"
            "${PSQL[@]}" -c "($query) EXCEPT ALL SELECT * FROM $name"
        } >"$OUT/mismatch_${label// /_}.txt" 2>&1
        echo "  !!! MISMATCH $label: $only_t rows only in the table, $only_q only in the query (see $OUT/mismatch_${label// /_}.txt)" >&2
    fi
    echo $((only_t + only_q))
}

# sources N: the sources of query N that the change of its kind writes
changed_sources() {
    local f=$T/queries/q$(printf %02d "$1").sql
    case "$(change_kind "$1")" in
    partsupp) echo partsupp ;;
    lineitem_updates) grep -qE '\blineitem\b' "$f" && echo lineitem ;;
    *)
        grep -qE '\blineitem\b' "$f" && printf 'lineitem '
        grep -qE '\borders\b' "$f" && printf 'orders '
        echo
        ;;
    esac
}
# path STRATEGY DETAIL SOURCES...: what a cycle does with a change of these
# sources, by the analysis (maintenance_detail): "lineitem deltas, orders
# whole" (see the header)
path() {
    local strategy=$1 detail=$2 src out=() p
    shift 2
    for src in "$@"; do
        if [ "$strategy" = FULL ] || [[ "$detail" == *"a change of $src recomputes the whole table"* ]]; then
            p=whole
        elif [ "$strategy" = KEYS ]; then
            p=groups
        elif [[ "$detail" == *"each changed row of $src,"* ]] || [[ "$detail" != *"each changed row of "* ]]; then
            p=deltas
        else
            p=groups
        fi
        out+=("$src $p")
    done
    local IFS=,
    echo "${out[*]}" | sed 's/,/, /g'
}

# run_query N VARIANT SF: measure one query; prints its row of the table
# and appends the per-round figures to $OUT/rounds.tsv
run_query() {
    local n=$1 variant=$2 sf=$3 name query kind maint strategy detail cpath r
    local -a cyc=() dec=() cpu=() pre=() inc=() rmv=() vis=() strat=()
    name=q$(printf %02d "$n")
    [ "$variant" = bare ] && name=${name}b
    query=$(query_text "$n" "$variant" "$sf")
    kind=$(change_kind "$n")
    q "CREATE MATERIALIZED VIEW ${name}_rmv AS $query" >/dev/null
    if ! "${PSQL[@]}" -c "SET client_min_messages = warning" -c "SELECT materialized_table.execute(\$mt\$
            CREATE MATERIALIZED TABLE $name FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS
            AS $query\$mt\$)" >/dev/null 2>"$OUT/create_$name.err"; then
        echo "  !!! $name: CREATE failed: $(cat "$OUT/create_$name.err")" >&2
        q "DROP MATERIALIZED VIEW ${name}_rmv" >/dev/null
        printf '%-5s %-15s %s\n' "$name" "(not created)" "see $OUT/create_$name.err" >>"$OUT/table_$sf.txt"
        printf '| %s | not created | | | | no |\n' "$name" >>"$OUT/table_$sf.md"
        MISMATCHES=$((MISMATCHES + 1))
        return
    fi
    wait_synced "$name"
    IFS='|' read -r maint strategy detail < <(q "SELECT m.maintenance, c.strategy, m.maintenance_detail
          FROM materialized_table.materialized_tables m
          JOIN materialized_table_internal.continuous_state c ON c.relid = m.table_name
         WHERE m.table_name = '$name'::regclass")
    # shellcheck disable=SC2046
    cpath=$(path "$strategy" "$detail" $(changed_sources "$n"))
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$sf" "$name" "$maint" "$strategy" "$cpath" "$detail" >>"$OUT/maintenance.tsv"
    local diffs=0 rows_changed=0 failed=
    for r in $(seq "$ROUNDS"); do
        if [ "$kind" != partsupp ]; then
            q "VACUUM ANALYZE lineitem, orders" >/dev/null
        else
            q "VACUUM ANALYZE partsupp" >/dev/null
        fi
        q "VACUUM ANALYZE $name" >/dev/null
        [ "$CHECKPOINT" = 1 ] && q "CHECKPOINT" >/dev/null
        local changed cycle_ms exact decode_ms history_ms history_runs visible_ms pre_ms cpu_ms run_strategy err rmv_ms d
        IFS='|' read -r changed cycle_ms exact decode_ms history_ms history_runs visible_ms pre_ms cpu_ms run_strategy err < <(
            "${PSQL[@]}" -At -c "CALL tpch_round('$kind', $CHANGE, '$name')") || true
        rmv_ms=$("${PSQL[@]}" -c '\timing on' -c "REFRESH MATERIALIZED VIEW ${name}_rmv" | ms)
        d=$(check "$name" "$query" "SF $sf $name round $r")
        diffs=$((diffs + d))
        [ "$d" = 0 ] || MISMATCHES=$((MISMATCHES + 1))
        if [ -z "$cycle_ms" ]; then
            err=${err:-no cycle measured}
            cycle_ms=nan cpu_ms=nan pre_ms=0
        fi
        [ -n "$err" ] && failed="$err"
        rows_changed=$changed
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sf" "$name" "$r" "$kind" "$changed" \
            "$cycle_ms" "$exact" "$decode_ms" "$pre_ms" "$cpu_ms" "$history_ms" "$history_runs" "$run_strategy" \
            "$visible_ms" "$rmv_ms" >>"$OUT/rounds.tsv"
        strat+=("${run_strategy:-none}")
        cyc+=("$cycle_ms") cpu+=("$cpu_ms") pre+=("$pre_ms") rmv+=("$rmv_ms") vis+=("$visible_ms")
        inc+=("$(awk -v c="$cycle_ms" -v p="$pre_ms" 'BEGIN {print c + p}')")
        [ -n "$decode_ms" ] && dec+=("$decode_ms")
    done
    "${PSQL[@]}" -c "SELECT materialized_table.execute('DROP MATERIALIZED TABLE $name')" \
        -c "DROP MATERIALIZED VIEW ${name}_rmv" >/dev/null
    wait_no_slot
    local m_cyc m_dec=- m_cpu m_pre m_inc m_rmv m_vis m_ratio cycles
    # the cycles' strategies: one word when every round's was the same
    cycles=$(printf '%s\n' "${strat[@]}" | sort -u | paste -sd /)
    m_cyc=$(printf '%s\n' "${cyc[@]}" | median)
    [ "${#dec[@]}" = 0 ] || m_dec=$(printf '%s\n' "${dec[@]}" | median | awk '{printf "%.1f", $1}')
    m_cpu=$(printf '%s\n' "${cpu[@]}" | median)
    m_pre=$(printf '%s\n' "${pre[@]}" | median)
    m_inc=$(printf '%s\n' "${inc[@]}" | median)
    m_rmv=$(printf '%s\n' "${rmv[@]}" | median)
    m_vis=$(printf '%s\n' "${vis[@]}" | median)
    m_ratio=$(ratio "$m_rmv" "$m_inc")
    local verdict=ok correct=yes
    [ "$diffs" != 0 ] && verdict="MISMATCH ($diffs rows)" correct="no ($diffs rows differ)"
    [ -n "$failed" ] && verdict="FAILED: $failed" correct="no (failed: $failed)"
    printf '%-5s %-14s %-6s %6s %-6s %9.1f %9s %6.1f %9.1f %9.1f %7s %10.0f  %-6s  %s\n' "$name" "$maint" \
        "$strategy" "$rows_changed" "$cycles" "$m_cyc" "$m_dec" "$m_pre" "$m_inc" "$m_rmv" "$m_ratio" "$m_vis" \
        "$verdict" "$cpath" | tee -a "$OUT/table_$sf.txt"
    printf '| %s | %s / %s | %s | %.0f | %.0f | %.2f | %s |\n' "$name" "$maint" "$strategy" "$cycles" "$m_inc" \
        "$m_rmv" "$m_ratio" "$correct" >>"$OUT/table_$sf.md"
    printf '%s\n' "$m_ratio" >>"$OUT/ratios_$sf.txt"
}

echo "=== $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); scale factors $SFS; $ROUNDS rounds per query; change of lineitem: $([ "$UPDATES_ONLY" = 1 ] && echo "updates only" || echo "updates, RF1 and RF2"); figures in $OUT"
printf 'sf\tname\tround\tchange\trows\tcycle_ms\tcycle_start_exact\tdecode_ms\tprecommit_cpu_ms\tworker_cpu_ms\thistory_ms\thistory_runs\trun_strategy\tvisible_ms\trmv_ms\n' >"$OUT/rounds.tsv"
: >"$OUT/maintenance.tsv"
for sf in $SFS; do
    echo
    t0=$(date +%s)
    "${PSQL[@]}" -q -v sf="$sf" -f $T/dbgen.sql >/dev/null
    "${PSQL[@]}" -q -f $T/round.sql >/dev/null
    q "ALTER TABLE lineitem SET (autovacuum_enabled = off);
       ALTER TABLE orders SET (autovacuum_enabled = off);
       ALTER TABLE partsupp SET (autovacuum_enabled = off)" >/dev/null
    # the sources' replica identity as the worker sets it, a checkpoint,
    # and three changes of each kind, not measured (see "Checkpoints")
    q "ALTER TABLE lineitem REPLICA IDENTITY FULL; ALTER TABLE orders REPLICA IDENTITY FULL;
       ALTER TABLE partsupp REPLICA IDENTITY FULL; CHECKPOINT" >/dev/null
    for _ in 1 2 3; do
        q "SELECT tpch_change('lineitem', $CHANGE), tpch_change('partsupp', $CHANGE)" >/dev/null
    done
    q "VACUUM ANALYZE" >/dev/null
    echo "=== SF $sf: data generated in $(($(date +%s) - t0)) s: $(q "SELECT string_agg(c, ', ') FROM (
        SELECT relname || ' ' || n_live_tup AS c FROM pg_stat_user_tables
         WHERE relname IN ('lineitem', 'orders', 'partsupp', 'part', 'customer', 'supplier')
         ORDER BY n_live_tup DESC) s")"
    echo "    orders matching Q13's '%special%requests%': $(q "SELECT round(100.0 * count(*) FILTER (
        WHERE o_comment LIKE '%special%requests%') / count(*), 2) FROM orders")%;" \
        "suppliers with Customer...Complaints (Q16): $(q "SELECT count(*) FROM supplier WHERE s_comment LIKE '%Customer%Complaints%'")"
    printf '%-5s %-14s %-6s %6s %-6s %9s %9s %6s %9s %9s %7s %10s  %-6s  %s\n' query maintenance strategy \
        rows cycles "cycle ms" "decode ms" "pre ms" "incr ms" "RMV ms" ratio "visible ms" check path |
        tee "$OUT/table_$sf.txt"
    {
        echo "| query | maintenance / strategy | cycles | incremental ms | full ms (RMV) | ratio | correct |"
        echo "|---|---|---|---:|---:|---:|---|"
    } >"$OUT/table_$sf.md"
    : >"$OUT/ratios_$sf.txt"
    for n in $QUERIES; do
        run_query "$n" spec "$sf"
    done
    for n in $QUERIES; do
        if { [ "$BARE" = limit ] && has_limit "$n"; } || { [ "$BARE" = all ] && has_final_order "$n"; }; then
            run_query "$n" bare "$sf"
        fi
    done
    echo "  median ratio (RMV ms / incr ms) over the $(wc -l <"$OUT/ratios_$sf.txt") tables: $(median <"$OUT/ratios_$sf.txt");" \
        "$(awk '$1 < 1' "$OUT/ratios_$sf.txt" | wc -l) below 1.0 (the cycle slower than the view's refresh)" |
        tee -a "$OUT/table_$sf.txt"
    echo "  (medians over $ROUNDS rounds; SF $sf took $(($(date +%s) - t0)) s)"
done

echo
echo "=== maintenance_detail of each table"
awk -F '\t' '{printf "  SF %-5s %-5s %-15s %-6s %s\n", $1, $2, $3, $4, $6}' "$OUT/maintenance.tsv"
echo
echo "=== the run took $(($(date +%s) - RUN_START)) s; per-round figures in $OUT/rounds.tsv"
if [ "$MISMATCHES" != 0 ]; then
    echo "!!! $MISMATCHES rounds found a materialized table that differs from its query: $OUT/mismatch_*.txt" >&2
    exit 1
fi
