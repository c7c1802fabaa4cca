#!/usr/bin/env bash
# extension_update.sh: ALTER EXTENSION materialized_table UPDATE from 1.0,
# under a write load, loses no change and no row.
#
# Version 1.0 is installed from its script in the tree (the library is
# this version's: it keeps maintaining tables on the 1.0 catalog until the
# update), with FULL and CONTINUOUS tables of every strategy, while pgbench
# writes to their source; the extension is updated mid-load.  Once the load
# stops, every CONTINUOUS table equals its query, the FULL table refreshes
# on its schedule and names its table in its pg_cron job, and the hidden
# objects are the new version's: the extension's owner's, with a restore
# marker each -- so a dump of the updated database restores.  The updated
# extension has exactly the objects, definitions and settings of a fresh
# install of the current version (the control file's default_version),
# reached from 1.0 through every update script in turn.
#
# Its own cluster E (port +4).  Environment (set by test/run.sh):
# MT_TEST_DIR, MT_TEST_PORT, PGBIN.  MT_LOAD_SECONDS (default 12).
set -euo pipefail

: "${MT_TEST_DIR:?}" "${MT_TEST_PORT:?}"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
top=$(cd "$(dirname "$0")/../.." && pwd)
version=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$top/materialized_table.control")
E=$MT_TEST_DIR/restore_e
PORT_E=$((MT_TEST_PORT + 4))
seconds=${MT_LOAD_SECONDS:-12}
export PGUSER=postgres PGHOST=$E PGPORT=$PORT_E
unset PGDATABASE

cluster() { bash "$top/scripts/pg_cluster.sh" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
sqle() { local db=$1; shift; "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
wait_t() {
    local db=$1 what=$2 secs=$3 deadline
    deadline=$((SECONDS + secs))
    while [ $SECONDS -lt $deadline ]; do
        [ "$(sqle "$db" -c "$what" 2>/dev/null || true)" = t ] && return 0
        sleep 0.3
    done
    return 1
}

load_pid=
cleanup() {
    [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null
    cluster stop "$E" || true
}
trap cleanup EXIT
rm -rf "$E"
cluster start "$E" "$PORT_E" upd
chmod 755 "$E"

sqle postgres -c "CREATE DATABASE upd" -c "CREATE DATABASE upd_fresh"
sqle upd >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION pg_cron;
CREATE EXTENSION materialized_table VERSION '1.0';
CREATE TABLE accounts (id int PRIMARY KEY, grp int NOT NULL, balance int NOT NULL);
ALTER TABLE accounts REPLICA IDENTITY FULL;
INSERT INTO accounts SELECT i, i % 20, i % 1000 FROM generate_series(1, 5000) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE own_rows FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(balance) AS total FROM accounts GROUP BY grp;
  CREATE MATERIALIZED TABLE with_state FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, avg(balance) AS average FROM accounts GROUP BY grp;
  CREATE MATERIALIZED TABLE keyed FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, min(balance) AS lo, max(balance) AS hi FROM accounts GROUP BY grp;
  CREATE MATERIALIZED TABLE hourly FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL AS
    SELECT grp, count(*) AS n FROM accounts GROUP BY grp
$$);
SQL
[ "$(sqle upd -c "SELECT extversion FROM pg_extension WHERE extname = 'materialized_table'")" = 1.0 ] ||
    fail "version 1.0 was not installed"
sqle upd -c "$(sed 's/:"schema"/public/' "$top/test/lib/mismatches.sql")" >/dev/null
continuous_ok="SELECT bool_and(public.mismatches(table_name) = 0) FROM materialized_table.materialized_tables
                WHERE refresh_mode = 'CONTINUOUS'"
wait_t upd "SELECT coalesce(bool_and(synced), false) FROM materialized_table_internal.continuous_state" 30 ||
    fail "1.0: the tables were not taken up"

cat >"$E/load.pgbench" <<'PGB'
\set k random(1, 6000)
INSERT INTO accounts AS a VALUES (:k, :k % 23, :k % 997)
    ON CONFLICT (id) DO UPDATE SET balance = a.balance + 1, grp = (a.grp + 1) % 20;
DELETE FROM accounts WHERE id = :k + 7;
PGB
"$PGBIN/pgbench" -n -c 2 -T "$seconds" -d upd -f "$E/load.pgbench" >"$E/pgbench.log" 2>&1 &
load_pid=$!
sleep $((seconds / 3))
# the library maintains the 1.0 catalog meanwhile
wait_t upd "SELECT count(*) > 0 FROM materialized_table.refresh_history WHERE trigger = 'CONTINUOUS'
              AND status = 'SUCCEEDED' AND rows > 0" 10 || fail "1.0: not maintained under the load"
[ "$(sqle upd -c "SELECT count(*) FROM pg_attribute WHERE attrelid = 'materialized_table_internal.refresh_result'::regclass
                  AND attname = 'strategy'")" = 0 ] || fail "1.0 has no strategy column"
sqle upd -c "ALTER EXTENSION materialized_table UPDATE"
wait "$load_pid" || fail "pgbench: $(tail -3 "$E/pgbench.log")"
load_pid=

# nothing lost or duplicated
wait_t upd "$continuous_ok" 60 || fail "the CONTINUOUS tables do not equal their queries after the update"
[ "$(sqle upd -c "SELECT count(*) FROM materialized_table.refresh_history WHERE status = 'FAILED'")" = 0 ] ||
    fail "failed refreshes: $(sqle upd -c "SELECT string_agg(error, '; ') FROM materialized_table.refresh_history WHERE status = 'FAILED'")"
sqle upd -c "INSERT INTO accounts VALUES (100001, 3, 5)"
wait_t upd "$continuous_ok" 30 || fail "the CONTINUOUS tables do not follow a change after the update"
sqle upd -c "SELECT materialized_table.scheduled_refresh('hourly', now())" >/dev/null
[ "$(sqle upd -c "SELECT public.mismatches('hourly')")" = 0 ] || fail "the FULL table's scheduled refresh"

# the new version's objects and ways; cycles since say how they computed
wait_t upd "SELECT count(*) > 0 FROM materialized_table.refresh_history WHERE trigger = 'CONTINUOUS'
              AND strategy IS NOT NULL" 10 || fail "no strategy in the history after the update"
[ "$(sqle upd -c "SELECT extversion FROM pg_extension WHERE extname = 'materialized_table'")" = "$version" ] ||
    fail "not updated"
[ "$(sqle upd -c "SELECT count(*) FROM cron.job j JOIN materialized_table_internal.mt_table t ON t.cron_jobid = j.jobid
                  WHERE t.relid = 'hourly'::regclass AND j.command LIKE '%''public.hourly''%'")" = 1 ] ||
    fail "the FULL table's job does not name its table"
[ "$(sqle upd -c "SELECT count(*) FROM pg_class c WHERE c.relnamespace = 'materialized_table_internal'::regnamespace
                  AND c.relname ~ '^(query|state|derived|restore)_'
                  AND c.relowner <> (SELECT nspowner FROM pg_namespace WHERE nspname = 'materialized_table_internal')")" = 0 ] ||
    fail "hidden objects not the extension owner's"
[ "$(sqle upd -c "SELECT count(*) FROM pg_class WHERE relname ~ '^restore_' AND relkind = 'm'")" = 4 ] ||
    fail "restore markers missing"
[ "$(sqle upd -c "SELECT count(*) FROM pg_depend d JOIN pg_class c ON c.oid = d.objid
                  WHERE d.deptype = 'e' AND c.relname ~ '^restore_'")" = 0 ] ||
    fail "restore markers became members of the extension (pg_dump would leave them out)"

# the same objects as a fresh install
describe="SELECT string_agg(x, E'\n' ORDER BY x) FROM (
    SELECT pg_describe_object(d.classid, d.objid, d.objsubid)
           || coalesce(' ' || pg_get_viewdef(d.objid), '')
           || coalesce(' ' || (SELECT pg_get_functiondef(p.oid) FROM pg_proc p WHERE p.oid = d.objid AND p.prokind = 'f'), '')
           || coalesce(' ' || (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                                                  || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                                                  || coalesce(' default ' || pg_get_expr(ad.adbin, ad.adrelid), ''),
                                                  ', ' ORDER BY a.attnum)
                                 FROM pg_attribute a LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
                                WHERE a.attrelid = d.objid AND d.classid = 'pg_class'::regclass AND a.attnum > 0
                                  AND NOT a.attisdropped), '')
           || coalesce(' ' || (SELECT string_agg(pg_get_constraintdef(k.oid), ', ' ORDER BY pg_get_constraintdef(k.oid))
                                 FROM pg_constraint k WHERE k.conrelid = d.objid AND d.classid = 'pg_class'::regclass), '')
           || coalesce(' ' || (SELECT string_agg(pg_get_indexdef(i.indexrelid), ', ' ORDER BY pg_get_indexdef(i.indexrelid))
                                 FROM pg_index i WHERE i.indrelid = d.objid AND d.classid = 'pg_class'::regclass), '')
           || coalesce(' acl ' || (SELECT relacl::text FROM pg_class WHERE oid = d.objid AND d.classid = 'pg_class'::regclass), '') AS x
      FROM pg_depend d
     WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
       AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'materialized_table')
    UNION ALL
    SELECT 'dumped: ' || (SELECT string_agg(c::regclass::text || ' ' || coalesce(w, ''), ', ' ORDER BY c::regclass::text)
                            FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(c, w)
                           WHERE e.extname = 'materialized_table')) s"
sqle upd_fresh -c "CREATE EXTENSION materialized_table" >/dev/null 2>&1 || sqle upd_fresh -c "CREATE EXTENSION materialized_table"
updated=$(sqle upd -c "$describe")
fresh=$(sqle upd_fresh -c "$describe")
if [ "$updated" != "$fresh" ]; then
    diff <(echo "$fresh") <(echo "$updated") >&2 || true
    fail "the updated extension differs from a fresh install (above: < fresh, > updated)"
fi

# a dump of the updated database restores into a working copy
sqle postgres -c "CREATE DATABASE upd_copy"
as_postgres "$PGBIN/pg_dump" -Fc -d upd -f "$E/upd.dump"
as_postgres "$PGBIN/pg_restore" -d upd_copy "$E/upd.dump" 2>"$E/restore.log" || true
if grep -E '^pg_restore: error' "$E/restore.log" | grep -v -E 'pg_cron|cron\.|schema "cron"|can only create extension' >&2; then
    fail "restore of the updated database"
fi
sqle upd_copy -c "DROP FUNCTION IF EXISTS public.mismatches(regclass)" -c "$(sed 's/:"schema"/public/' "$top/test/lib/mismatches.sql")" >/dev/null
sqle upd_copy -c "INSERT INTO accounts VALUES (100002, 4, 7)"
wait_t upd_copy "$continuous_ok" 30 || fail "the restored copy's CONTINUOUS tables do not follow a change"
echo "ok: updated from 1.0 to $version under load; the same objects as a fresh $version; a dump of it restores"
