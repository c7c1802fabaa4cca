#!/usr/bin/env bash
# test/citus/run.sh: materialized tables on a Citus cluster.
#
# Installs Citus (scripts/citus_cluster.sh install: built from its source
# tarball unless it is installed; skipped, with a line saying so, when
# neither is there), starts a coordinator and two workers on MT_CITUS_PORT,
# + 1 and + 2 (default 55450) in MT_CITUS_DIR (default a temporary
# directory), and runs the pg_regress files test/citus/sql/*.sql against
# the coordinator, then the scripts test/citus/*.sh (nodes killed, shards
# moved).  The servers are stopped on exit.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PGBIN=${PGBIN:-$("$PG_CONFIG" --bindir)}
PORT=${MT_CITUS_PORT:-55450}
DIR=$(realpath -m "${MT_CITUS_DIR:-$(mktemp -d /tmp/mt_citus.XXXXXX)}")

bash scripts/citus_cluster.sh install
rc=$?
if [ "$rc" = 3 ]; then
    echo "skip: Citus is not installed and its source tarball is not here"
    exit 0
elif [ "$rc" != 0 ]; then
    exit 1
fi

mkdir -p "$DIR"
[ "$(id -u)" = 0 ] && chown postgres: "$DIR"
trap 'bash scripts/citus_cluster.sh stop "$DIR"' EXIT
bash scripts/citus_cluster.sh start "$DIR" "$PORT" contrib_regression || {
    tail -20 "$DIR"/*/server.log
    exit 1
}

tests=$(cd test/citus/sql && ls *.sql | sed 's/\.sql$//')
out=$DIR/regress
mkdir -p "$out"
[ "$(id -u)" = 0 ] && chown postgres: "$out"
failed=0
if ! "$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress" \
        --inputdir=test/citus --outputdir="$out" --bindir="$PGBIN" \
        --use-existing --host="$DIR/coord" --port="$PORT" --user=postgres \
        --dbname=contrib_regression $tests; then
    cat "$out/regression.diffs"
    failed=1
fi

# the README's Citus examples (its sql blocks whose first line is "-- on a
# Citus coordinator"), run as written
awk '/^```sql$/ { on = 1; first = 1; next }
     /^```/ { on = 0 }
     on && first { first = 0; if ($0 != "-- on a Citus coordinator") { on = 0; next } }
     on' README.md >"$DIR/readme_citus.sql"
if [ -s "$DIR/readme_citus.sql" ]; then
    if "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$DIR/coord" -p "$PORT" -U postgres \
            -d contrib_regression -c "SET materialized_table.scheduled_refreshes = off" \
            -f "$DIR/readme_citus.sql" -c "SET client_min_messages = warning" \
            -c "DROP SCHEMA shop CASCADE" >/dev/null; then
        echo "ok     readme ($(grep -c 'create_distributed_table\|CREATE MATERIALIZED' "$DIR/readme_citus.sql") statements of the README's Citus examples)"
    else
        echo "FAILED readme (the README's Citus examples)"
        failed=1
    fi
fi

# the scripts: nodes killed, shards moved (each leaves the cluster running)
for t in test/citus/*.sh; do
    case "$(basename "$t")" in run.sh | lib.sh) continue ;; esac
    echo "=== $t"
    if MT_CITUS_DIR=$DIR MT_CITUS_PORT=$PORT bash "$t"; then
        echo "ok     $(basename "$t" .sh)"
    else
        echo "FAILED $(basename "$t" .sh)"
        failed=1
    fi
done
exit $failed
