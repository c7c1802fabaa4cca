#!/usr/bin/env bash
# missing_pieces.sh: a dump restored where something the extension needs
# is missing gives readable tables, a WARNING or NOTICE saying what to fix,
# a catalog that says so -- and recovers once it is fixed:
#
#   no pg_cron in the database    the FULL table is driven by the worker
#                                 (scheduler = worker, a NOTICE)
#   wal_level = replica           the CONTINUOUS tables wait, pending, with
#                                 why; wal_level = logical and a restart
#                                 take them up
#   library not preloaded         CREATE EXTENSION warns; the tables are
#                                 restored and readable; preloaded again,
#                                 the worker brings them back
#
# Its own cluster D (port +3).  Environment (set by test/run.sh):
# MT_TEST_DIR, MT_TEST_PORT, PGBIN.
set -euo pipefail

: "${MT_TEST_DIR:?}" "${MT_TEST_PORT:?}"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
top=$(cd "$(dirname "$0")/../.." && pwd)
D=$MT_TEST_DIR/restore_d
PORT_D=$((MT_TEST_PORT + 3))
DUMP=$MT_TEST_DIR/restore_d.dump
export PGUSER=postgres
unset PGDATABASE

cluster() { bash "$top/scripts/pg_cluster.sh" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
sqld() { local db=$1; shift; "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$D" -p "$PORT_D" -d "$db" "$@"; }
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# setting NAME VALUE: set in the cluster's configuration, then restart
setting() {
    echo "$1 = '$2'" >>"$D/data/postgresql.conf"
    cluster stop "$D"
    cluster restart "$D"
}
wait_t() {
    local db=$1 what=$2 seconds=$3 deadline
    deadline=$((SECONDS + seconds))
    while [ $SECONDS -lt $deadline ]; do
        [ "$(sqld "$db" -c "$what" 2>/dev/null || true)" = t ] && return 0
        sleep 0.3
    done
    return 1
}
# restore DB: pg_restore into a new database; its messages in restore_d.log
restore() {
    sqld postgres -c "CREATE DATABASE $1"
    # (pg_restore shows the server's warnings with --verbose only)
    as_postgres "$PGBIN/pg_restore" --verbose -h "$D" -p "$PORT_D" -d "$1" "$DUMP" >"$MT_TEST_DIR/restore_d.log" 2>&1 || true
    if grep -E '^pg_restore: error' "$MT_TEST_DIR/restore_d.log" | grep -v -E 'pg_cron|cron\.|schema "cron"|can only create extension' >&2; then
        fail "$1: errors in the restore"
    fi
}

cleanup() { cluster stop "$D" || true; }
trap cleanup EXIT
rm -rf "$D" "$DUMP"
cluster start "$D" "$PORT_D" md_src
chmod 755 "$D"

sqld postgres -c "CREATE DATABASE md_src"
sqld md_src >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION pg_cron;
CREATE EXTENSION materialized_table;
CREATE TABLE src (id int PRIMARY KEY, g int NOT NULL, v int NOT NULL);
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src SELECT i, i % 4, i FROM generate_series(1, 400) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE hourly FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL AS
    SELECT g, count(*) AS n FROM src GROUP BY g;
  CREATE MATERIALIZED TABLE live FRESHNESS = INTERVAL '1' SECOND AS
    SELECT g, sum(v) AS total FROM src GROUP BY g
$$);
SQL
sqld md_src -c "$(sed 's/:"schema"/public/' "$top/test/lib/mismatches.sql")" >/dev/null
wait_t md_src "SELECT coalesce(bool_and(synced), false) FROM materialized_table_internal.continuous_state" 30 ||
    fail "the source's table was not taken up"
as_postgres "$PGBIN/pg_dump" -h "$D" -p "$PORT_D" -d md_src -Fc -f "$DUMP"

readable="SELECT (SELECT count(*) FROM hourly) = 4 AND (SELECT count(*) FROM live) = 4"

# --- no pg_cron in the database: the worker drives the FULL table --------------
restore md_nocron
grep -q 'refreshed on its schedule by the database.s worker' "$MT_TEST_DIR/restore_d.log" ||
    fail "md_nocron: no WARNING that the worker drives the FULL table"
[ "$(sqld md_nocron -c "SELECT scheduler FROM materialized_table.materialized_tables WHERE table_name = 'hourly'::regclass")" = worker ] ||
    fail "md_nocron: the FULL table is not driven by the worker"
echo "ok: no pg_cron"
# (a server with logical slots refuses to start with wal_level = replica)
sqld postgres -c "DROP DATABASE md_nocron WITH (FORCE)" -c "DROP DATABASE md_src WITH (FORCE)"

# --- wal_level = replica: CONTINUOUS tables wait, and are taken up after -------------
setting wal_level replica
restore md_replica
[ "$(sqld md_replica -c "$readable")" = t ] || fail "md_replica: tables not readable"
grep -q 'WARNING:  restored materialized table "live" is not maintained yet' "$MT_TEST_DIR/restore_d.log" ||
    fail "md_replica: no WARNING for the CONTINUOUS table"
grep -q 'HINT:  Set wal_level = logical' "$MT_TEST_DIR/restore_d.log" || fail "md_replica: no hint"
got=$(sqld md_replica -c "SELECT restore_pending FROM materialized_table_internal.mt_table WHERE relid = 'live'::regclass")
case "$got" in *wal_level*) ;; *) fail "md_replica: the catalog does not say why: $got" ;; esac
[ "$(sqld md_replica -c "SELECT freshness_met IS NOT TRUE FROM materialized_table.materialized_tables WHERE table_name = 'live'::regclass")" = t ] ||
    fail "md_replica: the waiting table shows its freshness as met"
setting wal_level logical
sqld md_replica -c "DROP FUNCTION IF EXISTS public.mismatches(regclass)" -c "$(sed 's/:"schema"/public/' "$top/test/lib/mismatches.sql")" >/dev/null
wait_t md_replica "SELECT restore_pending IS NULL FROM materialized_table_internal.mt_table WHERE relid = 'live'::regclass" 30 ||
    fail "md_replica: not taken up after wal_level = logical"
sqld md_replica -c "INSERT INTO src VALUES (1001, 1, 1000)"
wait_t md_replica "SELECT public.mismatches('live') = 0 AND (SELECT total FROM live WHERE g = 1) > 20000" 30 ||
    fail "md_replica: the CONTINUOUS table does not follow its source"
echo "ok: wal_level replica, then logical"

# --- the library not preloaded: readable, and back once preloaded ----------------
setting shared_preload_libraries pg_cron
restore md_nolib
[ "$(sqld md_nolib -c "$readable")" = t ] || fail "md_nolib: tables not readable"
grep -q 'materialized_table is not in shared_preload_libraries' "$MT_TEST_DIR/restore_d.log" ||
    fail "md_nolib: no WARNING that the library is not preloaded"
if sqld md_nolib -c "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE live REFRESH')" 2>/dev/null; then
    fail "md_nolib: a statement ran without the library preloaded"
fi
setting shared_preload_libraries "pg_cron,materialized_table"
sqld md_nolib -c "DROP FUNCTION IF EXISTS public.mismatches(regclass)" -c "$(sed 's/:"schema"/public/' "$top/test/lib/mismatches.sql")" >/dev/null
wait_t md_nolib "SELECT count(*) = 2 AND bool_and(restore_pending IS NULL) FROM materialized_table_internal.mt_table" 30 ||
    fail "md_nolib: the worker did not bring the tables back"
sqld md_nolib -c "INSERT INTO src VALUES (1001, 1, 1000)"
wait_t md_nolib "SELECT public.mismatches('live') = 0 AND (SELECT total FROM live WHERE g = 1) > 20000" 30 ||
    fail "md_nolib: the CONTINUOUS table does not follow its source"
if sqld md_nolib -c "INSERT INTO hourly VALUES (9, 9)" 2>/dev/null; then
    fail "md_nolib: the FULL table is writable"
fi
echo "ok: library not preloaded, then preloaded"
