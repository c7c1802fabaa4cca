# test/bench/lib.sh: what the benchmark scripts share; sourced by them after
# they set DB (the database), BENCH_PORT (default port of a private cluster)
# and BENCH_NAME (prefix of its temporary directory).
#
# Without PGHOST/PGPORT a private cluster is started (MT_BENCH_DIR,
# MT_BENCH_PORT), tuned so that data stays in memory and few checkpoints
# fall in a measurement, and stopped on exit.  In either case a fresh
# database DB is created.  Then: PSQL (the psql command, an array), q SQL
# (one query, unaligned), median (of numbers on stdin), ratio A B.

[ -n "${MT_BENCH_DIR:-}" ] && MT_BENCH_DIR=$(realpath -m "$MT_BENCH_DIR")
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PGBIN=${PGBIN:-$("$PG_CONFIG" --bindir)}
PSQL=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1)
q() { "${PSQL[@]}" -At -c "$1"; }
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }

OWN_CLUSTER=0
if [ -z "${PGHOST:-}" ] || [ -z "${PGPORT:-}" ]; then
    OWN_CLUSTER=1
    DIR=${MT_BENCH_DIR:-$(mktemp -d "/tmp/$BENCH_NAME.XXXXXX")}
    export PGHOST=$DIR PGPORT=${MT_BENCH_PORT:-$BENCH_PORT}
    trap 'bash scripts/pg_cluster.sh stop "$DIR"; echo "(cluster stopped; its files are in $DIR)"' EXIT
    bash scripts/pg_cluster.sh stop "$DIR"
    bash scripts/pg_cluster.sh start "$DIR" "$PGPORT" "$DB"
    chmod 755 "$DIR"
    "${PSQL[@]}" -U postgres -d postgres -c "ALTER SYSTEM SET max_wal_size = '8GB'" \
        -c "ALTER SYSTEM SET checkpoint_timeout = '30min'" \
        -c "ALTER SYSTEM SET shared_buffers = '1GB'"
    bash scripts/pg_cluster.sh stop "$DIR"
    bash scripts/pg_cluster.sh restart "$DIR"
fi
export PGUSER=${PGUSER:-postgres} PGDATABASE=$DB
"${PSQL[@]}" -d postgres -c "SET client_min_messages = warning" \
    -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
