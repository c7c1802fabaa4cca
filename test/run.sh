#!/usr/bin/env bash
# test/run.sh: the whole test suite of materialized_table.
#
#   bash test/run.sh
#
# Builds and installs the extension, starts a private cluster configured for
# it (scripts/pg_cluster.sh), creates database contrib_regression with
# pg_cron and materialized_table, then runs in order:
#
#   0. layers       test/layers.py: the call graph of src/ (after the build)
#   1. pg_regress   sql/*.sql with expected/*.out         (make installcheck)
#   2. isolation    test/isolation/specs/*.spec            (pg_isolation_regress)
#   3. pgTAP        test/pgtap/*.sql                       (pg_prove)
#   4. clients      test/clients/*.sh                      (psql, psycopg2 and
#                                                           node-postgres; a missing
#                                                           driver is skipped)
#   5. load         test/load/*.sh                         (scripted, under pgbench)
#   6. crash        test/crash/*.sh                        (may kill the server)
#   7. backup       test/backup/*.sh                       (clusters of their own)
#   8. fuzz         test/fuzz/run.sh, CI mode              (a cluster of its own,
#                                                           on MT_TEST_PORT + 8)
#   9. diff         test/diff/run.sh, CI mode              (a cluster of its own,
#                                                           on MT_TEST_PORT + 9)
#  10. tpch smoke   test/bench/tpch.sh, MT_TPCH_SMOKE=1    (a cluster of its own,
#                                                           on MT_TEST_PORT + 10)
#  11. citus        test/citus/run.sh                      (a coordinator and two
#                                                           workers on MT_TEST_PORT
#                                                           + 11 to + 13; Citus built
#                                                           from its tarball if need
#                                                           be, else skipped)
#
# The differential test (9) checks random queries as CONTINUOUS tables
# against the queries themselves after random changes of their sources; in
# CI mode (fixed seed) it takes about 2 - 3 minutes on 2 cores.  A longer
# run by hand: MT_DIFF_QUERIES=1500 MT_DIFF_SEED=n bash test/diff/run.sh.
# The TPC-H smoke (10) does the same for the 22 TPC-H queries at SF 0.01, one
# change each (under a minute); its timings are not checked.
#
# Every phase runs even if an earlier one failed; the summary at the end
# says which failed, and the exit status is non-zero if any did.  The
# cluster is stopped on exit, whatever happens.
#
# Works as root (the cluster then runs as the postgres OS user; initdb and
# postgres refuse root) and as a normal user (the cluster runs as that user).
#
# Environment:
#   PG_CONFIG     pg_config of the PostgreSQL to build for
#                 (default /usr/lib/postgresql/15/bin/pg_config)
#   PGBIN         its server binaries (default: pg_config --bindir)
#   MT_TEST_PORT  port of the test cluster (default 55432)
#   MT_TEST_DIR   directory of the test cluster (default: a fresh temporary
#                 directory, removed after a successful run)
#   MT_TEST_SKIP_BUILD=1  do not build and install first
set -uo pipefail

# the socket directory must be an absolute path
[ -n "${MT_TEST_DIR:-}" ] && MT_TEST_DIR=$(realpath -m "$MT_TEST_DIR")
cd "$(dirname "$0")/.."
ROOT=$(pwd)

export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PGBIN=${PGBIN:-$("$PG_CONFIG" --bindir)}
PORT=${MT_TEST_PORT:-55432}
if [ -n "${MT_TEST_DIR:-}" ]; then
    DIR=$MT_TEST_DIR
    DIR_IS_TEMP=0
    mkdir -p "$DIR"
else
    DIR=$(mktemp -d /tmp/mt_test.XXXXXX)
    DIR_IS_TEMP=1
fi
DB=contrib_regression

# every client below talks to the test cluster over its Unix socket
export PGHOST=$DIR PGPORT=$PORT PGUSER=postgres PGDATABASE=$DB
unset PGSERVICE PGPASSWORD PGOPTIONS

PSQL=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1)

declare -a SUMMARY=()
FAILED=0

say() { printf '\n=== %s\n' "$*"; }

# record NAME STATUS: one line of the summary
record() {
    SUMMARY+=("$(printf '%-12s %s' "$1" "$2")")
    case "$2" in FAIL*) FAILED=1 ;; esac
}

cleanup() {
    local rc=$?
    if [ -f "$DIR/data/postmaster.pid" ]; then
        bash scripts/pg_cluster.sh stop "$DIR" || true
    fi
    if [ "$FAILED" = 0 ] && [ "$rc" = 0 ] && [ "$DIR_IS_TEMP" = 1 ]; then
        rm -rf "$DIR"
    else
        echo "test cluster kept in $DIR (server log: $DIR/server.log)"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- build and install -------------------------------------------------------
if [ "${MT_TEST_SKIP_BUILD:-0}" != 1 ]; then
    say "build and install ($PG_CONFIG)"
    if ! make -s PG_CONFIG="$PG_CONFIG" >"$DIR/build.log" 2>&1 ||
       ! make -s PG_CONFIG="$PG_CONFIG" install >>"$DIR/build.log" 2>&1; then
        cat "$DIR/build.log"
        echo "build failed"
        FAILED=1
        exit 1
    fi
    # the build must stay warning-free
    grep -E 'warning:' "$DIR/build.log" && echo "(build warnings above)"
fi

# --- layers ------------------------------------------------------------------
say "layers: no circle between files, no call up a layer, no file too long"
if /usr/bin/python3 test/layers.py; then
    record layers PASS
else
    record layers FAIL
fi

# --- cluster -------------------------------------------------------------------
say "cluster in $DIR, port $PORT"
# a reused directory may hold a server started by an older build
bash scripts/pg_cluster.sh stop "$DIR"
if ! bash scripts/pg_cluster.sh start "$DIR" "$PORT" "$DB"; then
    cat "$DIR/initdb.log" "$DIR/server.log" 2>/dev/null | tail -50
    FAILED=1
    exit 1
fi
# the server runs as postgres when we are root: let it (and us) use the socket
chmod 755 "$DIR"

if ! "${PSQL[@]}" -d postgres -c "SET client_min_messages = warning" \
        -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
        -c "CREATE DATABASE $DB" ||
   ! "${PSQL[@]}" -d "$DB" -c "CREATE EXTENSION pg_cron" \
        -c "CREATE EXTENSION materialized_table"; then
    tail -30 "$DIR/server.log"
    FAILED=1
    exit 1
fi

# --- 1. pg_regress ---------------------------------------------------------------
if ls sql/*.sql >/dev/null 2>&1; then
    say "pg_regress: sql/*.sql"
    rm -f regression.diffs regression.out
    if make -s PG_CONFIG="$PG_CONFIG" installcheck; then
        record pg_regress PASS
    else
        [ -f regression.diffs ] && cat regression.diffs
        record pg_regress "FAIL (diffs: $ROOT/regression.diffs)"
    fi
else
    record pg_regress "none"
fi

# --- 2. isolation --------------------------------------------------------------
specs=$(cd test/isolation/specs 2>/dev/null && ls *.spec 2>/dev/null | sed 's/\.spec$//')
if [ -n "$specs" ]; then
    say "isolation: test/isolation/specs/*.spec"
    ISO=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/isolation/pg_isolation_regress
    OUT=test/isolation/output_iso
    rm -rf "$OUT"
    mkdir -p "$OUT"
    # shellcheck disable=SC2086
    if "$ISO" --inputdir=test/isolation --outputdir="$OUT" --bindir="$PGBIN" \
            --use-existing --dbname="$DB" $specs; then
        record isolation PASS
    else
        [ -f "$OUT/regression.diffs" ] && cat "$OUT/regression.diffs"
        record isolation "FAIL (diffs: $ROOT/$OUT/regression.diffs)"
    fi
else
    record isolation "none"
fi

# --- 3. pgTAP --------------------------------------------------------------------
# Each file runs in its own psql session, not wrapped in a transaction: many
# tests must see what background workers do, so each file cleans up itself.
if ls test/pgtap/*.sql >/dev/null 2>&1; then
    say "pgTAP: test/pgtap/*.sql"
    "${PSQL[@]}" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS pgtap"
    if pg_prove --psql-bin "$PGBIN/psql" --nocolor --failures --comments --merge \
            test/pgtap/*.sql; then
        record pgTAP PASS
    else
        record pgTAP FAIL
    fi
else
    record pgTAP "none"
fi

# --- 4. to 7. scripted tests -----------------------------------------------------
# run_scripts PHASE DIRECTORY: each script gets the cluster through the
# environment (PGHOST, PGPORT, PGUSER, PGDATABASE, MT_TEST_DIR, MT_TEST_PORT,
# PGBIN) and cleans up after itself; a crash test may kill and restart it
# with scripts/pg_cluster.sh and must leave it running.
run_scripts() {
    local phase=$1 dir=$2 n=0 failed="" t name log
    for t in "$dir"/*.sh; do
        [ -e "$t" ] || continue
        [ "$n" = 0 ] && say "$phase tests: $dir/*.sh"
        n=$((n + 1))
        name=$(basename "$t" .sh)
        log="$DIR/${phase}_$name.log"
        if MT_TEST_DIR=$DIR MT_TEST_PORT=$PORT bash "$t" >"$log" 2>&1; then
            echo "ok     $name"
            grep '^skip: ' "$log" | sed 's/^/       /'
        else
            echo "FAILED $name"
            sed 's/^/    /' "$log"
            failed="$failed $name"
        fi
        # a test that left the server down would fail every later one
        if ! "$PGBIN/pg_isready" -q -t 5; then
            bash scripts/pg_cluster.sh restart "$DIR"
        fi
    done
    if [ "$n" = 0 ]; then
        record "$phase" "none"
    elif [ -n "$failed" ]; then
        record "$phase" "FAIL:$failed"
    else
        record "$phase" "PASS ($n scripts)"
    fi
}
# 4. both spellings from each client; 5. write loads under pgbench; 6. kills
# of the server; 7. backups restored (on clusters of their own)
run_scripts clients test/clients
run_scripts load test/load
run_scripts crash test/crash
run_scripts backup test/backup

# --- 8. fuzzer -------------------------------------------------------------------
# CI mode (fixed seed, a few thousand statements; see test/fuzz/mt_fuzz.py)
# on a fresh cluster of its own one port up, since it may crash the server.
say "fuzz: test/fuzz/run.sh (its own cluster on port $((PORT + 8)))"
FUZZ_LOG=$DIR/fuzz.log
if MT_FUZZ_PORT=$((PORT + 8)) MT_FUZZ_DIR=$DIR/fuzz bash test/fuzz/run.sh >"$FUZZ_LOG" 2>&1; then
    grep -E '^mt_fuzz: [0-9]+ statements in' "$FUZZ_LOG" | tail -1
    record fuzz PASS
else
    # the distinct failures, each with its seed, session and statement index
    sed -n '/^=== [0-9]* distinct failure/,$p' "$FUZZ_LOG"
    record fuzz "FAIL (log: $FUZZ_LOG, reproducers: $DIR/fuzz/out)"
fi

# --- 9. differential test ---------------------------------------------------------
# CI mode (fixed seed; see test/diff/mt_diff.py): random queries as
# CONTINUOUS tables, each checked against its query after random change
# batches; failures shrunk to reproducers.  A cluster of its own, one port
# further up.
say "diff: test/diff/run.sh (its own cluster on port $((PORT + 9)))"
DIFF_LOG=$DIR/diff.log
if MT_DIFF_PORT=$((PORT + 9)) MT_DIFF_DIR=$DIR/diff bash test/diff/run.sh >"$DIFF_LOG" 2>&1; then
    grep -E '^mt_diff: [0-9]+ queries' "$DIFF_LOG" | tail -1
    record diff PASS
else
    # each failed table: its query, maintenance, differing rows, shrunk batch
    # (or the end of the log, if the test itself did not get that far)
    if grep -q '^=== [0-9]* failed tables' "$DIFF_LOG"; then
        sed -n '/^=== [0-9]* failed tables/,$p' "$DIFF_LOG"
    else
        tail -30 "$DIFF_LOG"
    fi
    record diff "FAIL (log: $DIFF_LOG, reproducers: $DIR/diff/out)"
fi
# Seeds whose first queries once failed, where no shrunk script replays the
# failure (it needs the group's other tables): seed 3's first 50 lost the
# rows of a TRUNCATE committed while a batch was decoded (the caches
# decoding rebuilt stood for the catalogs before it: continuous/decoding.c).
for run in 3:50; do
    seed=${run%%:*} queries=${run#*:}
    if MT_DIFF_PORT=$((PORT + 9)) MT_DIFF_DIR=$DIR/diff_$seed MT_DIFF_SEED=$seed MT_DIFF_QUERIES=$queries \
            bash test/diff/run.sh >"$DIR/diff_$seed.log" 2>&1; then
        grep -E '^mt_diff: [0-9]+ queries' "$DIR/diff_$seed.log" | tail -1
        record "diff_seed$seed" PASS
    else
        sed -n '/^=== [0-9]* failed tables/,$p' "$DIR/diff_$seed.log"
        record "diff_seed$seed" "FAIL (log: $DIR/diff_$seed.log, reproducers: $DIR/diff_$seed/out)"
    fi
done

# --- 10. TPC-H smoke --------------------------------------------------------------
# The 22 TPC-H queries at SF 0.01 as CONTINUOUS tables, each checked against
# its query after a 1% change (test/bench/tpch.sh, MT_TPCH_SMOKE=1): its
# verdict is that check alone, never its timings.  A cluster of its own.
say "tpch smoke: test/bench/tpch.sh (its own cluster on port $((PORT + 10)))"
TPCH_LOG=$DIR/tpch.log
if env -u PGHOST -u PGPORT -u PGDATABASE MT_TPCH_SMOKE=1 MT_BENCH_PORT=$((PORT + 10)) \
    MT_BENCH_DIR="$DIR/tpch" MT_TPCH_OUT="$DIR/tpch/out" bash test/bench/tpch.sh >"$TPCH_LOG" 2>&1; then
    grep -E '^=== the run took' "$TPCH_LOG"
    record tpch PASS
else
    grep -E 'MISMATCH|FAILED|CREATE failed' "$TPCH_LOG" | head -20
    record tpch "FAIL (log: $TPCH_LOG, differing rows: $DIR/tpch/out/mismatch_*.txt)"
fi

# --- 11. Citus ------------------------------------------------------------------
# Materialized tables on a coordinator and two workers (test/citus/run.sh).
# Skipped, with a line saying so, where Citus is neither installed nor
# buildable from its source tarball.
say "citus: test/citus/run.sh (a coordinator and two workers on ports $((PORT + 11)) - $((PORT + 13)))"
CITUS_LOG=$DIR/citus.log
if env -u PGHOST -u PGPORT -u PGDATABASE MT_CITUS_PORT=$((PORT + 11)) MT_CITUS_DIR="$DIR/citus" \
    bash test/citus/run.sh >"$CITUS_LOG" 2>&1; then
    if grep -q '^skip: ' "$CITUS_LOG"; then
        grep '^skip: ' "$CITUS_LOG"
        record citus "SKIPPED (no Citus)"
    else
        grep -E 'tests passed|^ok |^FAILED |^citus: ' "$CITUS_LOG"
        record citus PASS
    fi
else
    tail -60 "$CITUS_LOG"
    record citus "FAIL (log: $CITUS_LOG)"
fi

# --- summary ---------------------------------------------------------------------
say "summary"
printf '  %s\n' "${SUMMARY[@]}"
if [ "$FAILED" != 0 ]; then
    echo "FAILED"
    exit 1
fi
echo "all tests passed"
