#!/usr/bin/env bash
# standby_failover.sh: physical replication and failover.
#
# A streaming standby made with pg_basebackup shows the materialized tables
# as the primary maintains them, runs no worker and logs no error; once
# promoted (the primary stopped), it maintains them itself within a bound:
# the logical slot does not exist there, so each CONTINUOUS table is
# recomputed once (the history says why) and then follows its changes, and
# the FULL table's schedule runs.  A copy made with pg_basebackup and
# started as a server of its own does the same.
#
# Its own clusters (ports +5, +6, +7).  Environment (set by test/run.sh):
# MT_TEST_DIR, MT_TEST_PORT, PGBIN.
set -euo pipefail

: "${MT_TEST_DIR:?}" "${MT_TEST_PORT:?}"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
top=$(cd "$(dirname "$0")/../.." && pwd)
P=$MT_TEST_DIR/failover_primary
S=$MT_TEST_DIR/failover_standby
K=$MT_TEST_DIR/failover_copy
PORT_P=$((MT_TEST_PORT + 5))
PORT_S=$((MT_TEST_PORT + 6))
PORT_K=$((MT_TEST_PORT + 7))
export PGUSER=postgres
unset PGDATABASE

cluster() { bash "$top/scripts/pg_cluster.sh" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# q DIR PORT SQL...: psql on that server's database fo
q() { local dir=$1 port=$2; shift 2; "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -d fo "$@"; }
wait_t() {
    local dir=$1 port=$2 what=$3 secs=$4 deadline
    deadline=$((SECONDS + secs))
    while [ $SECONDS -lt $deadline ]; do
        [ "$(q "$dir" "$port" -c "$what" 2>/dev/null || true)" = t ] && return 0
        sleep 0.3
    done
    return 1
}
# basebackup DIR PORT [-R]: a copy of the primary, listening on its own port
basebackup() {
    local dir=$1 port=$2
    shift 2
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    as_postgres "$PGBIN/pg_basebackup" -h "$P" -p "$PORT_P" -D "$dir/data" -X stream "$@"
    cat >>"$dir/data/postgresql.conf" <<CONF
port = $port
unix_socket_directories = '$dir'
CONF
    as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
    chmod 755 "$dir"
}

cleanup() {
    for d in "$P" "$S" "$K"; do
        [ -f "$d/data/postmaster.pid" ] && cluster stop "$d"
    done
    return 0
}
trap cleanup EXIT
rm -rf "$P" "$S" "$K"
cluster start "$P" "$PORT_P" fo
chmod 755 "$P"
echo "max_wal_senders = 4" >>"$P/data/postgresql.conf"
cluster stop "$P"
cluster restart "$P"

"$PGBIN/psql" -X -q -h "$P" -p "$PORT_P" -d postgres -c "CREATE DATABASE fo"
q "$P" "$PORT_P" >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION pg_cron;
CREATE EXTENSION materialized_table;
CREATE TABLE src (id int PRIMARY KEY, g int NOT NULL, v int NOT NULL);
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src SELECT i, i % 5, i FROM generate_series(1, 1000) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE live FRESHNESS = INTERVAL '1' SECOND AS
    SELECT g, count(*) AS n, sum(v) AS total FROM src GROUP BY g;
  CREATE MATERIALIZED TABLE live_state FRESHNESS = INTERVAL '1' SECOND AS
    SELECT g, avg(v) AS average FROM src GROUP BY g;
  CREATE MATERIALIZED TABLE every2s FRESHNESS = INTERVAL '2' SECOND REFRESH_MODE = FULL AS
    SELECT count(*) AS n FROM src
$$);
SQL
q "$P" "$PORT_P" -c "$(sed 's/:"schema"/public/' "$top/test/lib/mismatches.sql")" >/dev/null
all_match="(SELECT bool_and(public.mismatches(table_name) = 0) FROM materialized_table.materialized_tables)"
wait_t "$P" "$PORT_P" "SELECT coalesce(bool_and(synced), false) FROM materialized_table_internal.continuous_state" 30 ||
    fail "primary: the tables were not taken up"

# --- a streaming standby ---------------------------------------------------------
basebackup "$S" "$PORT_S" -R
q "$P" "$PORT_P" -c "INSERT INTO src VALUES (2001, 1, 5000)"
wait_t "$P" "$PORT_P" "SELECT $all_match" 20 || fail "primary: tables behind"
want=$(q "$P" "$PORT_P" -c "SELECT total FROM live WHERE g = 1")
wait_t "$S" "$PORT_S" "SELECT total = $want FROM live WHERE g = 1" 20 ||
    fail "standby: does not show the primary's maintenance"
[ "$(q "$S" "$PORT_S" -c "SELECT pg_is_in_recovery()")" = t ] || fail "not a standby"
sleep 5
[ "$(q "$S" "$PORT_S" -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'materialized_table%'")" = 0 ] ||
    fail "standby: the extension's processes run"
if grep -E 'ERROR|FATAL' "$S/server.log" | grep -v -E 'the database system is (starting up|not yet accepting)'; then
    fail "standby: errors in its log (above)"
fi
echo "ok: standby"

# --- promoted, with the primary gone ----------------------------------------------
cluster stop "$P"
as_postgres "$PGBIN/pg_ctl" -D "$S/data" -w promote >/dev/null
wait_t "$S" "$PORT_S" "SELECT NOT pg_is_in_recovery()" 30 || fail "standby not promoted"
q "$S" "$PORT_S" -c "INSERT INTO src VALUES (2002, 2, 7000)" -c "DELETE FROM src WHERE id = 5"
wait_t "$S" "$PORT_S" "SELECT $all_match AND (SELECT total FROM live WHERE g = 2) > 7000" 60 ||
    fail "promoted: the CONTINUOUS tables are not maintained"
wait_t "$S" "$PORT_S" "SELECT bool_and(freshness_met) FROM materialized_table.materialized_tables WHERE refresh_mode = 'CONTINUOUS'" 20 ||
    fail "promoted: not within their freshness"
[ "$(q "$S" "$PORT_S" -c "SELECT count(DISTINCT table_name) FROM materialized_table.refresh_history
                          WHERE error LIKE '%replication slot does not exist on this server%'")" = 2 ] ||
    fail "promoted: the history does not say why the tables were recomputed"
since=$(q "$S" "$PORT_S" -c "SELECT now()")
wait_t "$S" "$PORT_S" "SELECT EXISTS (SELECT FROM materialized_table.refresh_history WHERE table_name = 'every2s'::regclass
                         AND trigger = 'SCHEDULED' AND status = 'SUCCEEDED' AND started_at > '$since')" 20 ||
    fail "promoted: the FULL table's schedule does not run"
echo "ok: promoted standby"

# --- a copy started as a server of its own -------------------------------------------
cluster restart "$P"
basebackup "$K" "$PORT_K"
cluster stop "$P"
q "$K" "$PORT_K" -c "INSERT INTO src VALUES (2003, 3, 9000)"
wait_t "$K" "$PORT_K" "SELECT $all_match AND (SELECT total FROM live WHERE g = 3) > 9000" 60 ||
    fail "copy: the CONTINUOUS tables are not maintained"
echo "ok: copy started from pg_basebackup"
