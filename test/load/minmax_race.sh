#!/usr/bin/env bash
# minmax_race.sh: DELTAS tables with min() and max() next to count, sum and
# avg -- grouped by one column and by two, through an inner join, global,
# and grouped with a freshness that keeps its adjustments in change_deltas
# for a few cycles -- under three writers.  A transaction that removes a
# group's extremum (test/lib/minmax_extreme.pgbench) makes the worker
# re-read that group (the whole table, for the global one) in that cycle,
# with a snapshot that may already see transactions decoded only in a
# later cycle: such a change must add nothing to the groups re-read when it
# is decoded, and all it should to the others (group baselines, see
# Baselines in src/continuous/cycle.c).  Each round ends with writers that
# remove no extremum (test/lib/minmax_plain.pgbench): the next cycle
# re-reads nothing, so a change of theirs counted twice, or left out, would
# stay.  Once the writers stopped and the worker has read and applied
# everything committed (its horizon past the stop, no table with work
# kept), each table must equal its query, EXCEPT ALL both ways, at once.
#
# The comparison's own control: the grouped table with one count off by
# one, compared the same way, differs in two rows.  Samples taken during
# the load show that groups were re-read (group baselines recorded for the
# grouped and joined tables, matched row by row for the table of two group
# columns), that the global table was recomputed and adjusted, and that
# the slower table kept adjustments for later.
#
set -euo pipefail

: "${MT_TEST_DIR:?}" "${MT_TEST_PORT:?}"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
seconds=${MT_LOAD_SECONDS:-30}
top=$(cd "$(dirname "$0")/../.." && pwd)
export PGHOST=$MT_TEST_DIR PGPORT=$MT_TEST_PORT PGUSER=postgres PGDATABASE=contrib_regression

sql() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
fail() {
    echo "FAIL: $*" >&2
    grep -E 'materialized_table|ERROR' "$MT_TEST_DIR/server.log" | tail -20 >&2 || true
    exit 1
}

tables="mmr.grp mmr.pairs mmr.joined mmr.glob mmr.slow"
in_list="'mmr.grp', 'mmr.pairs', 'mmr.joined', 'mmr.glob', 'mmr.slow'"

sql >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS mmr CASCADE;
CREATE SCHEMA mmr;
CREATE TABLE mmr.t (id serial PRIMARY KEY, g int NOT NULL, v int NOT NULL, w numeric(8,2) NOT NULL);
CREATE INDEX ON mmr.t (g, v);
CREATE TABLE mmr.dim (id int PRIMARY KEY, region text NOT NULL);
INSERT INTO mmr.dim SELECT k, 'r' || (k % 3) FROM generate_series(0, 5) k;
INSERT INTO mmr.t (g, v, w) SELECT k % 6, (k * 7919) % 1001, (k % 400) / 4.0 FROM generate_series(1, 1200) k;
ANALYZE mmr.t, mmr.dim;
SELECT materialized_table.execute($$
CREATE MATERIALIZED TABLE mmr.grp FRESHNESS = INTERVAL '1' SECOND AS
  SELECT g, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi, avg(w) AS aw
    FROM mmr.t GROUP BY g;
CREATE MATERIALIZED TABLE mmr.pairs FRESHNESS = INTERVAL '1' SECOND AS
  SELECT g % 3 AS a, g / 3 AS b, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi
    FROM mmr.t GROUP BY g % 3, g / 3;
CREATE MATERIALIZED TABLE mmr.joined FRESHNESS = INTERVAL '1' SECOND AS
  SELECT d.region, count(*) AS n, sum(t.v) AS s, min(t.v) AS lo, max(t.v) AS hi, sum(t.w) AS sw
    FROM mmr.t t JOIN mmr.dim d ON d.id = t.g GROUP BY d.region;
CREATE MATERIALIZED TABLE mmr.glob FRESHNESS = INTERVAL '1' SECOND AS
  SELECT count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi, avg(w) AS aw FROM mmr.t;
CREATE MATERIALIZED TABLE mmr.slow FRESHNESS = INTERVAL '4' SECOND AS
  SELECT g, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi, sum(w) AS sw
    FROM mmr.t GROUP BY g
$$);
-- what the worker does while the writers run, sampled
CREATE FUNCTION mmr.sample(seconds float) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    stop timestamptz := clock_timestamp() + seconds * interval '1 second';
    grp_b int := 0; pairs_b int := 0; joined_b int := 0; slow_kept int := 0;
BEGIN
    WHILE clock_timestamp() < stop LOOP
        grp_b := greatest(grp_b, (SELECT count(*) FROM materialized_table_internal.continuous_baseline
                                   WHERE relid = 'mmr.grp'::regclass));
        joined_b := greatest(joined_b, (SELECT count(*) FROM materialized_table_internal.continuous_baseline
                                         WHERE relid = 'mmr.joined'::regclass));
        pairs_b := greatest(pairs_b, (SELECT count(*) FROM materialized_table_internal.continuous_baseline
                                       WHERE relid = 'mmr.pairs'::regclass AND family < 0));
        slow_kept := greatest(slow_kept, (SELECT count(*) FROM materialized_table_internal.change_deltas
                                           WHERE relid = 'mmr.slow'::regclass));
        PERFORM pg_sleep(0.05);
    END LOOP;
    RETURN format('%s %s %s %s', grp_b, pairs_b, joined_b, slow_kept);
END $f$;
SQL
sql -v schema=mmr -f "$top/test/lib/mismatches.sql" >/dev/null

# every table taken up by the worker, kept by deltas (and below, equal to
# its query)
for _ in $(seq 1 60); do
    up=$(sql -c "SELECT count(*) FILTER (WHERE s.synced AND s.strategy = 'DELTAS')
                   FROM materialized_table_internal.continuous_state s
                  WHERE s.relid::regclass::text IN ($in_list)")
    [ "$up" = 5 ] && break
    sleep 0.5
done
[ "$up" = 5 ] || fail "the worker took up $up of the 5 tables (DELTAS)"
sql -c "SELECT table_name, maintenance_detail FROM materialized_table.materialized_tables
         WHERE table_name::text LIKE 'mmr.%' ORDER BY 1" | sed 's/^/  /'

# caught up: the worker's horizon past the writers' end, no table with work
# kept or waiting for a full recompute
caught_up() {
    local stopped caught=""
    stopped=$(sql -c "SELECT clock_timestamp()")
    for _ in $(seq 1 120); do
        caught=$(sql -c "SELECT materialized_table_internal.continuous_horizon() > '$stopped'
                                AND bool_and(s.synced AND NOT s.needs_full AND s.pending_since IS NULL)
                           FROM materialized_table_internal.continuous_state s
                          WHERE s.relid::regclass::text IN ($in_list)")
        [ "$caught" = t ] && return 0
        sleep 0.25
    done
    fail "the worker did not catch up within 30 s"
}

# each table equals its query
compare() {
    local bad="" n t v
    for t in $tables; do
        n=$(sql -c "SELECT mmr.mismatches('$t')")
        if [ "$n" != 0 ]; then
            bad="$bad $t:$n"
            v=$(sql -c "SELECT query_view::regclass FROM materialized_table_internal.mt_table WHERE relid = '$t'::regclass")
            sql -c "SELECT '$t only', * FROM (TABLE $t EXCEPT ALL TABLE $v) a" \
                -c "SELECT 'its query only', * FROM (TABLE $v EXCEPT ALL TABLE $t) b" | sed 's/^/    /'
        fi
    done
    [ -z "$bad" ] || fail "$1: tables differ from their queries once caught up:$bad"
}

caught_up
compare "taken up"

# Rounds: 4 s of writers of which one transaction in ten removes extrema
# (most cycles re-read most groups, and recompute the global table), then
# at once 2 s of writers that remove none -- the re-reads of the last cycle
# before them see some of theirs, decoded in the next cycle, which re-reads
# nothing that would cover one counted twice or left out --, then caught
# up and compared.
rounds=$(( seconds / 7 > 0 ? seconds / 7 : 1 ))
echo "$rounds rounds of 3 writers: 4 s removing extrema of 6 groups, 2 s not"
started=$(sql -c "SELECT clock_timestamp()")
maxima="0 0 0 0"
for r in $(seq 1 "$rounds"); do
    sql -c "SELECT mmr.sample(4)" >"$MT_TEST_DIR/minmax_sample.out" &
    sample_pid=$!
    "$PGBIN/pgbench" -n -c 3 -T 4 -f "$top/test/lib/minmax_extreme.pgbench@1" \
        -f "$top/test/lib/minmax_plain.pgbench@9" >"$MT_TEST_DIR/pgbench_minmax.log" 2>&1 ||
        { cat "$MT_TEST_DIR/pgbench_minmax.log" >&2; fail "pgbench failed"; }
    "$PGBIN/pgbench" -n -c 3 -T 2 -f "$top/test/lib/minmax_plain.pgbench" \
        >>"$MT_TEST_DIR/pgbench_minmax.log" 2>&1 ||
        { cat "$MT_TEST_DIR/pgbench_minmax.log" >&2; fail "pgbench failed"; }
    wait "$sample_pid"
    caught_up
    compare "round $r"
    txs=$(grep -o 'actually processed: [0-9]*' "$MT_TEST_DIR/pgbench_minmax.log" | grep -o '[0-9]*' | paste -sd/)
    read -r a b c d <<<"$maxima"
    read -r a2 b2 c2 d2 <"$MT_TEST_DIR/minmax_sample.out"
    maxima="$((a > a2 ? a : a2)) $((b > b2 ? b : b2)) $((c > c2 ? c : c2)) $((d > d2 ? d : d2))"
    echo "  round $r: $txs transactions (mixed/plain); every table equals its query"
done
read -r grp_b pairs_b joined_b slow_kept <<<"$maxima"
echo "  sampled: group baselines grp $grp_b, pairs $pairs_b (row by row), joined $joined_b; slow's kept adjustments $slow_kept"

# the comparison's control: one count off by one is two rows
v=$(sql -c "SELECT query_view::regclass FROM materialized_table_internal.mt_table WHERE relid = 'mmr.grp'::regclass")
control=$(sql -c "CREATE TEMP TABLE off AS TABLE mmr.grp;
                  UPDATE off SET n = n + 1 WHERE g = (SELECT min(g) FROM off);
                  SELECT count(*) FROM ((TABLE off EXCEPT ALL TABLE $v) UNION ALL (TABLE $v EXCEPT ALL TABLE off)) d")
[ "$control" = 2 ] || fail "the comparison's control found $control differing rows, not 2"

# the race was run: groups re-read under the load, the global table
# recomputed, the slower table's adjustments kept for later
[ "$grp_b" -gt 0 ] && [ "$pairs_b" -gt 0 ] && [ "$joined_b" -gt 0 ] ||
    fail "groups of grp, pairs and joined were not all seen re-read"
[ "$slow_kept" -gt 0 ] || fail "slow never kept its adjustments for later"
glob=$(sql -c "SELECT string_agg(DISTINCT strategy, ',' ORDER BY strategy) FROM materialized_table.refresh_history
                WHERE table_name = 'mmr.glob'::regclass AND trigger = 'CONTINUOUS' AND status = 'SUCCEEDED'
                  AND started_at > '$started'")
[ "$glob" = "DELTAS,FULL" ] || fail "glob's cycles were $glob, not by deltas and recomputes"
failed=$(sql -c "SELECT count(*) FROM materialized_table.refresh_history
                  WHERE table_name::text LIKE 'mmr.%' AND status = 'FAILED'")
[ "$failed" = 0 ] || fail "$failed cycles failed"
echo "every table equals its query; the control differs in 2 rows"

sql -c "SELECT materialized_table.execute('DROP MATERIALIZED TABLE ' || t) FROM unnest(string_to_array('$tables', ' ')) t" >/dev/null
sql -c "DROP SCHEMA mmr CASCADE" >/dev/null 2>&1
echo "ok"
