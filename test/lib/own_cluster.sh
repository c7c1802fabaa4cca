# test/lib/own_cluster.sh (sourced): a fresh cluster of a test's own, for
# tests that may crash the server or load it heavily, never the cluster of
# the other tests.
#
#   own_cluster KIND PORT DIR DB
# starts a clean cluster (scripts/pg_cluster.sh) in DIR (a new temporary
# directory when DIR is empty) on PORT, and creates database DB in it.
# Sets DIR and RC (1 until the caller sets it); on exit the cluster is
# stopped, and its directory removed if it was temporary and RC is 0, else
# kept and named ("KIND cluster kept in ...").  Returns 1 if the cluster
# could not be made.  Needs PGBIN, and the current directory at the top of
# the tree.
own_cluster() {
    OWN_KIND=$1 PORT=$2 DB=$4
    if [ -n "$3" ]; then
        DIR=$(realpath -m "$3")
        OWN_DIR_IS_TEMP=0
    else
        DIR=$(mktemp -d "/tmp/mt_$OWN_KIND.XXXXXX")
        OWN_DIR_IS_TEMP=1
    fi
    RC=1
    trap own_cluster_cleanup EXIT
    trap 'exit 130' INT TERM
    # a reused directory: a clean cluster each time
    bash scripts/pg_cluster.sh stop "$DIR"
    rm -rf "$DIR/data" "$DIR/out" "$DIR/server.log"
    if ! bash scripts/pg_cluster.sh start "$DIR" "$PORT" "$DB"; then
        cat "$DIR/initdb.log" "$DIR/server.log" 2>/dev/null | tail -30
        return 1
    fi
    chmod 755 "$DIR"
    "$PGBIN/psql" -X -q -h "$DIR" -p "$PORT" -U postgres -d postgres -c "CREATE DATABASE $DB"
}

own_cluster_cleanup() {
    if [ -f "$DIR/data/postmaster.pid" ]; then
        bash scripts/pg_cluster.sh stop "$DIR" || true
    fi
    if [ "$RC" = 0 ] && [ "$OWN_DIR_IS_TEMP" = 1 ]; then
        rm -rf "$DIR"
    else
        echo "$OWN_KIND cluster kept in $DIR (server log: $DIR/server.log, results: $DIR/out)"
    fi
}
