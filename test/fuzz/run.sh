#!/usr/bin/env bash
# test/fuzz/run.sh: the fuzzer (mt_fuzz.py) on a cluster of its own.
#
#   bash test/fuzz/run.sh                                  # CI mode: seed 40, 3,000 statements
#   MT_FUZZ_STATEMENTS=100000 MT_FUZZ_SEED=7 bash test/fuzz/run.sh   # long mode
#
# Starts a fresh cluster (scripts/pg_cluster.sh) in MT_FUZZ_DIR on
# MT_FUZZ_PORT, creates database fuzzdb with pg_cron, runs the fuzzer
# against it and stops the cluster.  The fuzzer may crash the server, so it
# never runs on the cluster of the other tests.  The extension must be
# installed in PG_CONFIG's PostgreSQL first (test/run.sh does it; by hand:
# make PG_CONFIG=... install).
#
# Environment:
#   PG_CONFIG, PGBIN      as in test/run.sh
#   MT_FUZZ_PORT          port of the cluster (default 55433)
#   MT_FUZZ_DIR           its directory (default: a fresh temporary one,
#                         removed after a run without failures)
#   MT_FUZZ_SEED, MT_FUZZ_STATEMENTS, MT_FUZZ_SESSIONS, MT_FUZZ_TRACE=1,
#   MT_FUZZ_MINIMIZE_SECONDS   see test/fuzz/mt_fuzz.py
# The failures' psql scripts, summary.json (and trace.jsonl) are written
# to MT_FUZZ_DIR/out; the server log is MT_FUZZ_DIR/server.log.
set -uo pipefail
cd "$(dirname "$0")/../.."

export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PGBIN=${PGBIN:-$("$PG_CONFIG" --bindir)}
. test/lib/own_cluster.sh
# DROP EXTENSION ... CASCADE at the end locks every partition of every
# table the run left (hundreds of buckets each): more than the default room
export MT_CLUSTER_CONF="max_locks_per_transaction = 512"
own_cluster fuzz "${MT_FUZZ_PORT:-55433}" "${MT_FUZZ_DIR:-}" fuzzdb || exit 1

/usr/bin/python3 test/fuzz/mt_fuzz.py --host "$DIR" --port "$PORT" --dbname "$DB" \
    --log "$DIR/server.log" --out "$DIR/out"
RC=$?
exit "$RC"
