# test/citus/lib.sh: what the scripts of test/citus share, sourced by them
# (run.sh passes the cluster in MT_CITUS_DIR and MT_CITUS_PORT: coordinator,
# workers w1 and w2 on the next two ports).
: "${MT_CITUS_DIR:?}" "${MT_CITUS_PORT:?}"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DIR=$MT_CITUS_DIR
P=$MT_CITUS_PORT
export PGHOST=$DIR/coord PGPORT=$P PGUSER=postgres PGDATABASE=contrib_regression

sql() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# wait until a node (coord, w1, w2) on its port accepts connections again
node_up() {
    for _ in $(seq 1 100); do
        "$PGBIN/pg_isready" -q -h "$DIR/$1" -p "$2" && return 0
        sleep 0.2
    done
    fail "node $1 did not come back"
}
