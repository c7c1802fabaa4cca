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
PORT=${MT_FUZZ_PORT:-55433}
if [ -n "${MT_FUZZ_DIR:-}" ]; then
    DIR=$(realpath -m "$MT_FUZZ_DIR")
    DIR_IS_TEMP=0
else
    DIR=$(mktemp -d /tmp/mt_fuzz.XXXXXX)
    DIR_IS_TEMP=1
fi
DB=fuzzdb
RC=1

cleanup() {
    if [ -f "$DIR/data/postmaster.pid" ]; then
        bash scripts/pg_cluster.sh stop "$DIR" || true
    fi
    if [ "$RC" = 0 ] && [ "$DIR_IS_TEMP" = 1 ]; then
        rm -rf "$DIR"
    else
        echo "fuzz cluster kept in $DIR (server log: $DIR/server.log, failures: $DIR/out)"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# a reused directory: a clean cluster each time
bash scripts/pg_cluster.sh stop "$DIR"
rm -rf "$DIR/data" "$DIR/out" "$DIR/server.log"
if ! bash scripts/pg_cluster.sh start "$DIR" "$PORT" "$DB"; then
    cat "$DIR/initdb.log" "$DIR/server.log" 2>/dev/null | tail -30
    exit 1
fi
chmod 755 "$DIR"
if ! "$PGBIN/psql" -X -q -h "$DIR" -p "$PORT" -U postgres -d postgres -c "CREATE DATABASE $DB"; then
    exit 1
fi

/usr/bin/python3 test/fuzz/mt_fuzz.py --host "$DIR" --port "$PORT" --dbname "$DB" \
    --log "$DIR/server.log" --out "$DIR/out"
RC=$?
exit "$RC"
