# converge.sh, sourced by the load tests (test/load/*.sh): converge
# TABLE... waits, up to 90 s, until each table equals its query (EXCEPT ALL
# both ways, through the mismatches() of test/lib/mismatches.sql, created
# in the schema $MT_SCHEMA), else says what differs and returns 1.  Needs
# the caller's sql() (psql -At) and MT_TEST_DIR.
converge() {
    local deadline=$((SECONDS + 90)) bad="" n t
    while [ $SECONDS -lt $deadline ]; do
        bad=""
        for t in "$@"; do
            n=$(sql -c "SELECT \"$MT_SCHEMA\".mismatches('$t')" 2>/dev/null || echo error)
            [ "$n" = 0 ] || bad="$bad $t:$n"
        done
        [ -z "$bad" ] && return 0
        sleep 1
    done
    echo "tables did not converge:$bad" >&2
    sql -c "SELECT relid::regclass, strategy, synced, needs_full, pending_since FROM materialized_table_internal.continuous_state" >&2
    grep -E 'materialized_table|ERROR' "$MT_TEST_DIR/server.log" | tail -20 >&2
    return 1
}
