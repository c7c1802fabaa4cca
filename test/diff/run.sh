#!/usr/bin/env bash
# test/diff/run.sh: the differential test (mt_diff.py) on a cluster of its own.
#
#   bash test/diff/run.sh                                   # CI mode: seed 20, 400 queries
#   MT_DIFF_QUERIES=1500 MT_DIFF_SEED=7 MT_DIFF_BATCHES=8 bash test/diff/run.sh   # long mode
#   bash test/diff/run.sh --only q0012 --batches 3          # arguments go to mt_diff.py
#
# Starts a fresh cluster (scripts/pg_cluster.sh) in MT_DIFF_DIR on
# MT_DIFF_PORT, creates database diffdb, runs the test against it and stops
# the cluster.  The extension must be installed in PG_CONFIG's PostgreSQL
# first (test/run.sh does it; by hand: make PG_CONFIG=... install).  Any
# failure (a table unequal to its query, a failed cycle, a table that never
# catches up, a crash) fails the run: there is no list of excused ones.
#
# Environment:
#   PG_CONFIG, PGBIN      as in test/run.sh
#   MT_DIFF_PORT          port of the cluster (default 55441)
#   MT_DIFF_DIR           its directory (default: a fresh temporary one,
#                         removed after a run without failures)
#   MT_DIFF_SEED, MT_DIFF_QUERIES, MT_DIFF_GROUP, MT_DIFF_BATCHES,
#   MT_DIFF_MINIMIZE_SECONDS, MT_DIFF_SKIP   see test/diff/mt_diff.py
# Reproducers (a psql script per failed table, .min.sql once shrunk),
# summary.txt and results.json are written to MT_DIFF_DIR/out; the server
# log is MT_DIFF_DIR/server.log.
set -uo pipefail
cd "$(dirname "$0")/../.."

export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PGBIN=${PGBIN:-$("$PG_CONFIG" --bindir)}
. test/lib/own_cluster.sh
own_cluster diff "${MT_DIFF_PORT:-55441}" "${MT_DIFF_DIR:-}" diffdb || exit 1
# decoding spills transactions of more than 64kB to disk: the bulk changes do
if ! "$PGBIN/psql" -X -q -o /dev/null -h "$DIR" -p "$PORT" -U postgres -d postgres \
        -c "ALTER SYSTEM SET logical_decoding_work_mem = '64kB'" -c "SELECT pg_reload_conf()" ||
   ! "$PGBIN/psql" -X -q -h "$DIR" -p "$PORT" -U postgres -d "$DB" -c "CREATE EXTENSION materialized_table"; then
    exit 1
fi

/usr/bin/python3 test/diff/mt_diff.py --host "$DIR" --port "$PORT" --dbname "$DB" \
    --log "$DIR/server.log" --out "$DIR/out" "$@"
RC=$?
exit "$RC"
