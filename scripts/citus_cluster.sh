#!/usr/bin/env bash
# citus_cluster.sh: Citus for materialized_table's tests and benchmarks.
#
#   citus_cluster.sh install             build and install Citus unless it is
#                                        installed; exit 3 when it is not and
#                                        there is no source to build it from
#   citus_cluster.sh start DIR PORT [DB] a coordinator on PORT (DIR/coord) and
#                                        two workers on PORT + 1 and PORT + 2
#                                        (DIR/w1, DIR/w2), database DB (default
#                                        contrib_regression) with citus, pg_cron
#                                        and materialized_table on each, the
#                                        workers registered with the coordinator
#   citus_cluster.sh add DIR PORT [DB]   a third worker on PORT + 3 (DIR/w3), set
#                                        up as the others and added to the
#                                        cluster of the coordinator on PORT
#   citus_cluster.sh stop DIR            stop the servers
#   citus_cluster.sh kill DIR NODE       SIGKILL one (coord, w1, w2 or w3)
#   citus_cluster.sh restart DIR NODE    start it again
#
# Citus is not packaged by Debian.  Its source is looked for in
# MT_CITUS_TARBALL, then in ../shared/vendor/ and ../../shared/vendor/ of the
# repository, then /work/shared/vendor/ (citus-*.tar.gz).  It is built in
# MT_CITUS_BUILD (default /var/tmp/materialized_table-citus for Debian's
# PostgreSQL, -<hash of PG_CONFIG's path> after it for another), outside the
# repository, and that build is reused by later runs.  PG_CONFIG says which
# PostgreSQL (default /usr/lib/postgresql/15/bin/pg_config).
#
# The servers listen on 127.0.0.1 (Citus's nodes reach each other by host
# and port) and on a Unix socket in their directory, trust local users, and
# are configured by scripts/pg_cluster.sh with citus loaded first.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PGBIN=${PGBIN:-$("$PG_CONFIG" --bindir)}
# a build is configured for one PostgreSQL: another's gets its own directory
if [ -n "${MT_CITUS_BUILD:-}" ]; then
    BUILD=$MT_CITUS_BUILD
elif [ "$(realpath "$PG_CONFIG")" = /usr/lib/postgresql/15/bin/pg_config ]; then
    BUILD=/var/tmp/materialized_table-citus
else
    BUILD=/var/tmp/materialized_table-citus-$(realpath "$PG_CONFIG" | md5sum | cut -c1-8)
fi

find_tarball() {
    local t
    for t in "${MT_CITUS_TARBALL:-}" "$ROOT"/../shared/vendor/citus-*.tar.gz \
             "$ROOT"/../../shared/vendor/citus-*.tar.gz /work/shared/vendor/citus-*.tar.gz; do
        [ -n "$t" ] && [ -f "$t" ] && { realpath "$t"; return 0; }
    done
    return 1
}

installed() {
    [ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ] &&
        [ -f "$("$PG_CONFIG" --sharedir)/extension/citus.control" ]
}

install_citus() {
    local tarball src
    installed && { echo "citus: installed in $("$PG_CONFIG" --pkglibdir)"; return 0; }
    if ! tarball=$(find_tarball); then
        echo "citus: not installed, and no citus-*.tar.gz to build it from"
        return 3
    fi
    # the libraries Citus links with
    if [ "$(id -u)" = 0 ] && ! dpkg -s liblz4-dev libzstd-dev libkrb5-dev >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            liblz4-dev libzstd-dev libkrb5-dev
    fi
    mkdir -p "$BUILD"
    src="$BUILD/$(basename "$tarball" .tar.gz)"
    if [ ! -f "$src/.built" ]; then
        echo "citus: building $(basename "$tarball") in $src"
        rm -rf "$src"
        tar xzf "$tarball" -C "$BUILD"
        (cd "$src" && ./configure --without-libcurl PG_CONFIG="$PG_CONFIG" >"$BUILD/configure.log" 2>&1 &&
            make with_llvm=no -j2 >"$BUILD/make.log" 2>&1) ||
            { echo "citus: the build failed; see $BUILD/*.log"; return 1; }
        touch "$src/.built"
    fi
    (cd "$src" && make with_llvm=no install >"$BUILD/install.log" 2>&1) ||
        { echo "citus: make install failed; see $BUILD/install.log"; return 1; }
    echo "citus: installed from $(basename "$tarball")"
}

node_dir() {
    case "$2" in
    coord | w1 | w2 | w3) echo "$1/$2" ;;
    *) echo "unknown node: $2 (coord, w1, w2 or w3)" >&2; exit 2 ;;
    esac
}

sql() {
    local dir=$1 port=$2 db=$3
    shift 3
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d "$db" "$@"
}

cmd=${1:?usage: citus_cluster.sh install|start|stop|kill|restart ...}
case "$cmd" in
install)
    install_citus
    ;;
start | add)
    dir=$(realpath -m "${2:?cluster directory}")
    port=${3:?port}
    db=${4:-contrib_regression}
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    nodes="coord w1 w2"
    i=0
    if [ "$cmd" = add ]; then
        nodes=w3
        i=3
    fi
    for node in $nodes; do
        p=$((port + i))
        i=$((i + 1))
        fresh=0
        [ -f "$dir/$node/data/PG_VERSION" ] || fresh=1
        MT_CLUSTER_CONF="shared_preload_libraries = 'citus,pg_cron,materialized_table'
listen_addresses = '127.0.0.1'
max_prepared_transactions = 100
max_connections = 200
citus.shard_count = 8
${MT_CLUSTER_CONF:-}" bash scripts/pg_cluster.sh start "$dir/$node" "$p" "$db"
        if [ "$fresh" = 1 ]; then
            sql "$dir/$node" "$p" postgres -c "CREATE DATABASE $db"
            sql "$dir/$node" "$p" "$db" -c "SET client_min_messages = warning" \
                -c "CREATE EXTENSION citus" -c "CREATE EXTENSION pg_cron" \
                -c "CREATE EXTENSION materialized_table"
        fi
    done
    if [ "$cmd" = add ]; then
        sql "$dir/coord" "$port" "$db" -c "SET client_min_messages = warning" \
            -c "SELECT citus_add_node('127.0.0.1', $((port + 3)))" >/dev/null
    elif [ "$(sql "$dir/coord" "$port" "$db" -Atc "SELECT count(*) FROM pg_dist_node")" = 0 ]; then
        sql "$dir/coord" "$port" "$db" -c "SET client_min_messages = warning" \
            -c "SELECT citus_set_coordinator_host('127.0.0.1', $port)" \
            -c "SELECT citus_add_node('127.0.0.1', $((port + 1)))" \
            -c "SELECT citus_add_node('127.0.0.1', $((port + 2)))" >/dev/null
    fi
    ;;
stop)
    dir=$(realpath -m "${2:?cluster directory}")
    for node in coord w1 w2 w3; do
        if [ -d "$dir/$node" ]; then
            bash scripts/pg_cluster.sh stop "$dir/$node"
        fi
    done
    ;;
kill | restart)
    bash scripts/pg_cluster.sh "$cmd" "$(node_dir "$(realpath -m "${2:?cluster directory}")" "${3:?node}")"
    ;;
*)
    echo "unknown command: $cmd" >&2
    exit 2
    ;;
esac
