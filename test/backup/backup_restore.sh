#!/usr/bin/env bash
# backup_restore.sh: materialized tables through pg_dump and pg_restore in
# every mode come back as materialized tables -- content, catalog row and
# options, partitions, comments, keys, grants, lineage -- with a pipeline
# that runs: FULL tables scheduled against the new table, CONTINUOUS tables
# maintained after the restore (a recompute first, which the history
# shows).  No object of the extension keeps an OID of the source database
# in its name, its job or its catalog row; DROP leaves nothing behind, and
# DROP ... CASCADE of a source breaks nothing.
#
# Its own clusters: B (port +1, pg_cron in database br_src) holds the source
# database and the targets restored into other databases of the same
# cluster (without pg_cron); C (port +2, pg_cron in br_new) is a new
# cluster, where every OID differs.
#
# Modes: custom, directory with -j 2, tar, plain SQL through psql -v
# ON_ERROR_STOP=1 (into C), --single-transaction, --schema-only then
# --data-only, --clean --if-exists (over an earlier restore).
#
# Environment (set by test/run.sh): MT_TEST_DIR, MT_TEST_PORT, PGBIN.
set -euo pipefail

: "${MT_TEST_DIR:?}" "${MT_TEST_PORT:?}"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$MT_TEST_DIR/restore_b
C=$MT_TEST_DIR/restore_c
PORT_B=$((MT_TEST_PORT + 1))
PORT_C=$((MT_TEST_PORT + 2))
DUMPS=$MT_TEST_DIR/restore_dumps
export PGUSER=postgres
unset PGDATABASE

cluster() { bash "$top/scripts/pg_cluster.sh" "$@"; }
fail() { echo "FAIL: $*" >&2; exit 1; }
# sqlb/sqlc DB ...: psql on cluster B or C
sqlb() { local db=$1; shift; "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$B" -p "$PORT_B" -d "$db" "$@"; }
sqlc() { local db=$1; shift; "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$C" -p "$PORT_C" -d "$db" "$@"; }

cleanup() {
    cluster stop "$B" || true
    cluster stop "$C" || true
}
trap cleanup EXIT

rm -rf "$B" "$C" "$DUMPS"
mkdir -p "$DUMPS"
[ "$(id -u)" = 0 ] && chown postgres: "$DUMPS"
cluster start "$B" "$PORT_B" br_src
cluster start "$C" "$PORT_C" br_new
chmod 755 "$B" "$C"

# --- the source database ---------------------------------------------------------
for q in sqlb sqlc; do
    $q postgres -c "CREATE ROLE br_owner LOGIN" -c "CREATE ROLE br_reader"
done
sqlb postgres -c "CREATE DATABASE br_src"
sqlb br_src >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION pg_cron;
CREATE EXTENSION materialized_table;
CREATE SCHEMA shop AUTHORIZATION br_owner;
SET ROLE br_owner;
CREATE TABLE shop.sales (id int PRIMARY KEY, sold_on date NOT NULL, product_id int NOT NULL,
                         quantity int NOT NULL, amount numeric(10,2) NOT NULL);
ALTER TABLE shop.sales REPLICA IDENTITY FULL;
INSERT INTO shop.sales
  SELECT i, date '2024-06-01' + i % 5, i % 7, 1 + i % 3, (i % 50) * 1.5 FROM generate_series(1, 2000) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE shop.daily_sales (PRIMARY KEY (ds, product_id) NOT ENFORCED)
    COMMENT 'units sold per day and product'
    PARTITIONED BY (ds)
    WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd')
    FRESHNESS = INTERVAL '1' HOUR
    AS SELECT to_char(sold_on, 'YYYY-MM-DD') AS ds, product_id, sum(quantity) AS total_quantity
         FROM shop.sales GROUP BY 1, 2;
  CREATE MATERIALIZED TABLE shop.product_totals FRESHNESS = INTERVAL '1' SECOND AS
    SELECT product_id, count(*) AS n, sum(amount) AS revenue, avg(amount) AS average
      FROM shop.sales GROUP BY product_id;
  CREATE MATERIALIZED TABLE shop.big_products FRESHNESS = INTERVAL '1' SECOND AS
    SELECT product_id, revenue FROM shop.product_totals WHERE revenue > 1000;
  CREATE MATERIALIZED TABLE shop.extremes FRESHNESS = INTERVAL '1' SECOND AS
    SELECT sold_on, min(amount) AS lo, max(amount) AS hi FROM shop.sales GROUP BY sold_on
$$);
GRANT USAGE ON SCHEMA shop TO br_reader;
GRANT SELECT ON shop.daily_sales, shop.product_totals TO br_reader;
RESET ROLE;
SQL

# helpers of the checks, in every database they run in
helpers=$(cat "$top/test/lib/mismatches.sql")
helpers=${helpers//:\"schema\"/shop}

# wait DB SQL SECONDS (cluster function): until SQL returns t
wait_t() {
    local q=$1 db=$2 what=$3 seconds=$4 deadline
    deadline=$((SECONDS + seconds))
    while [ $SECONDS -lt $deadline ]; do
        [ "$($q "$db" -c "$what" 2>/dev/null || true)" = t ] && return 0
        sleep 0.3
    done
    return 1
}

# the source's tables have been taken up and are caught up
sqlb br_src -c "$helpers" >/dev/null
converged="SELECT bool_and(shop.mismatches(table_name) = 0) FROM materialized_table.materialized_tables"
synced="SELECT coalesce(bool_and(synced), false) FROM materialized_table_internal.continuous_state"
wait_t sqlb br_src "$synced" 30 || fail "the source's tables were not taken up"
wait_t sqlb br_src "$converged" 30 || fail "the source's tables did not converge"

# what every restored copy must hold: each table's rows, its catalog row
contents="SELECT string_agg(t || ':' || md5, ' ' ORDER BY t) FROM (
            SELECT 'daily_sales' AS t, md5(string_agg(d::text, ',' ORDER BY d::text)) FROM shop.daily_sales d
            UNION ALL SELECT 'product_totals', md5(string_agg(d::text, ',' ORDER BY d::text)) FROM shop.product_totals d
            UNION ALL SELECT 'big_products', md5(string_agg(d::text, ',' ORDER BY d::text)) FROM shop.big_products d
            UNION ALL SELECT 'extremes', md5(string_agg(d::text, ',' ORDER BY d::text)) FROM shop.extremes d) s"
catalog="SELECT string_agg(format('%s %s %s %s %s %s %s', table_name, refresh_mode, freshness, refresh_status,
                                  partition_keys, options, definition_query), E'\n' ORDER BY table_name::text)
           FROM materialized_table.materialized_tables"
# suspended, so that the content stays as dumped until the checks read it
sqlb br_src -c "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE shop.extremes SUSPEND')" >/dev/null
want_contents=$(sqlb br_src -c "$contents")
want_catalog=$(sqlb br_src -c "$catalog")
src_oids=$(sqlb br_src -c "SELECT string_agg(relid::oid::text, '|') FROM materialized_table_internal.mt_table")

as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
dumpb() { as_postgres "$PGBIN/pg_dump" -h "$B" -p "$PORT_B" -d br_src "$@"; }
dumpb -Fc -f "$DUMPS/br.dump"
dumpb -Fd -j 2 -f "$DUMPS/br.dir"
dumpb -Ft -f "$DUMPS/br.tar"
dumpb -Fp -f "$DUMPS/br.sql"
dumpb -Fc --schema-only -f "$DUMPS/br_schema.dump"
dumpb -Fc --data-only -f "$DUMPS/br_data.dump"

# --- checks of a restored database ---------------------------------------------------
# check Q DB CRON: Q is sqlb or sqlc; CRON is "pg_cron" where the database has
# it, "worker" where the FULL table is driven by the database's worker
check() {
    local q=$1 db=$2 cron=$3 got
    $q "$db" -c "$helpers" >/dev/null 2>&1 || true
    # the restore is in the history (the worker takes up the tables of a
    # data-only restore once it ended: all that follows reads them as taken up)
    wait_t "$q" "$db" "SELECT count(DISTINCT table_name) = 4 FROM materialized_table.refresh_history
                       WHERE trigger = 'RESTORE'" 30 ||
        fail "$db: $($q "$db" -c "SELECT count(DISTINCT table_name) FROM materialized_table.refresh_history
                                  WHERE trigger = 'RESTORE'") tables with their restore in the history"
    got=$($q "$db" -c "$catalog")
    [ "$got" = "$want_catalog" ] || fail "$db: catalog rows differ:
$got
--- want:
$want_catalog"
    got=$($q "$db" -c "$contents")
    [ "$got" = "$want_contents" ] || fail "$db: contents differ: $got / $want_contents"
    # partitions, comment, key, grants, lineage
    [ "$($q "$db" -c "SELECT count(*) FROM pg_inherits WHERE inhparent = 'shop.daily_sales'::regclass")" = 5 ] ||
        fail "$db: partitions of daily_sales"
    [ "$($q "$db" -c "SELECT obj_description('shop.daily_sales'::regclass, 'pg_class')")" = "units sold per day and product" ] ||
        fail "$db: comment"
    [ "$($q "$db" -c "SELECT count(*) FROM pg_constraint WHERE conrelid = 'shop.daily_sales'::regclass AND contype = 'p'")" = 1 ] ||
        fail "$db: primary key"
    [ "$($q "$db" -c "SELECT has_table_privilege('br_reader', 'shop.daily_sales', 'SELECT')")" = t ] ||
        fail "$db: grants"
    [ "$($q "$db" -c "SELECT count(*) FROM materialized_table.lineage WHERE downstream = 'shop.big_products'::regclass AND upstream = 'shop.product_totals'::regclass")" = 1 ] ||
        fail "$db: lineage"
    # the hidden objects are named after the new tables; nothing names an old OID
    got=$($q "$db" -c "SELECT count(*) FROM pg_class c WHERE c.relnamespace = 'materialized_table_internal'::regnamespace
                         AND c.relname ~ ('_(' || '$src_oids' || ')$')
                         AND NOT c.relname ~ ('_(' || (SELECT string_agg(relid::oid::text, '|') FROM materialized_table_internal.mt_table) || ')$')")
    [ "$got" = 0 ] || fail "$db: $got hidden objects named after tables of the source database"
    got=$($q "$db" -c "SELECT count(*) FROM materialized_table_internal.mt_table t
                        WHERE t.query_view::text <> 'materialized_table_internal.query_' || t.id")
    [ "$got" = 0 ] || fail "$db: query views not named after their tables"
    # the FULL table's pipeline
    got=$($q "$db" -c "SELECT scheduler FROM materialized_table.materialized_tables WHERE table_name = 'shop.daily_sales'::regclass")
    [ "$got" = "$cron" ] || fail "$db: daily_sales is driven by '$got', not $cron"
    if [ "$cron" = pg_cron ]; then
        got=$($q "$db" -c "SELECT count(*) FROM cron.job j JOIN materialized_table_internal.mt_table t ON t.cron_jobid = j.jobid
                            WHERE t.relid = 'shop.daily_sales'::regclass AND j.database = current_database()
                              AND j.command LIKE '%shop.daily_sales%' AND j.command !~ '[0-9]{4,}'")
        [ "$got" = 1 ] || fail "$db: daily_sales has no pg_cron job naming it"
        got=$($q "$db" -c "SELECT count(*) FROM cron.job WHERE command LIKE '%scheduled_refresh%'
                              AND jobid NOT IN (SELECT cron_jobid FROM materialized_table_internal.mt_table WHERE cron_jobid IS NOT NULL)")
        [ "$got" = 0 ] || fail "$db: $got pg_cron jobs of no table"
    fi
    # the scheduled refresh runs against the new table
    $q "$db" -c "SELECT materialized_table.scheduled_refresh('shop.daily_sales', '2024-06-03 01:00:00+00')" >/dev/null ||
        fail "$db: scheduled refresh"
    got=$($q "$db" -c "SELECT status FROM materialized_table.refresh_history WHERE table_name = 'shop.daily_sales'::regclass
                        AND trigger = 'SCHEDULED' ORDER BY run_id DESC LIMIT 1")
    [ "$got" = SUCCEEDED ] || fail "$db: scheduled refresh: $got"
    # the CONTINUOUS tables follow a change
    $q "$db" -c "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE shop.extremes RESUME')" >/dev/null
    $q "$db" -c "INSERT INTO shop.sales VALUES (100001, '2024-06-01', 3, 5, 999.99), (100002, '2024-06-09', 9, 1, 2000)"
    $q "$db" -c "UPDATE shop.sales SET amount = amount + 1 WHERE id % 10 = 0"
    $q "$db" -c "DELETE FROM shop.sales WHERE id % 17 = 0"
    wait_t "$q" "$db" "SELECT bool_and(shop.mismatches(table_name) = 0) FROM materialized_table.materialized_tables
                       WHERE refresh_mode = 'CONTINUOUS'" 30 ||
        fail "$db: the CONTINUOUS tables do not follow their source"
    wait_t "$q" "$db" "SELECT bool_and(freshness_met) FROM materialized_table.materialized_tables
                       WHERE refresh_mode = 'CONTINUOUS'" 10 ||
        fail "$db: the CONTINUOUS tables are not within their freshness"
    [ "$($q "$db" -c "SELECT count(*) FROM materialized_table.refresh_history WHERE status = 'FAILED'")" = 0 ] ||
        fail "$db: failed refreshes"
    # DROP ... CASCADE of the source leaves nothing behind, nothing broken
    $q "$db" -c "SET client_min_messages = warning" -c "DROP TABLE shop.sales CASCADE"
    got=$($q "$db" -c "SELECT (SELECT count(*) FROM materialized_table_internal.mt_table)
                            + (SELECT count(*) FROM materialized_table_internal.continuous_state)
                            + (SELECT count(*) FROM pg_class WHERE relnamespace = 'materialized_table_internal'::regnamespace
                                 AND relname ~ '^(query|state|derived|restore)_')")
    [ "$got" = 0 ] || fail "$db: $got catalog rows or hidden objects left after DROP ... CASCADE"
    if [ "$cron" = pg_cron ]; then
        [ "$($q "$db" -c "SELECT count(*) FROM cron.job WHERE command LIKE '%scheduled_refresh%'")" = 0 ] ||
            fail "$db: pg_cron jobs left after DROP ... CASCADE"
    fi
    echo "ok: $db"
}

# restore_b ARGS...: pg_restore into cluster B.  The dump holds pg_cron, which
# can live only in cron.database_name: its own objects fail elsewhere, and
# nothing else may
restore_b() {
    local log=$MT_TEST_DIR/restore_b.log
    if as_postgres "$PGBIN/pg_restore" -h "$B" -p "$PORT_B" "$@" 2>"$log"; then
        return 0
    fi
    # (--clean of a partitioned table with a key: PostgreSQL 15's pg_dump drops
    # each partition's inherited key, which fails for any such table; the
    # table's DROP that follows takes them)
    if grep -E '^pg_restore: error' "$log" |
        grep -v -E 'pg_cron|cron\.|schema "cron"|relation "cron|can only create extension in database' |
        grep -v -E 'cannot drop inherited constraint' >&2; then
        fail "pg_restore $*: errors (above) other than pg_cron's"
    fi
}

# custom format, into another database of the cluster (no pg_cron there)
sqlb postgres -c "CREATE DATABASE br_custom"
restore_b -d br_custom "$DUMPS/br.dump"
check sqlb br_custom worker

# directory format, two jobs
sqlb postgres -c "CREATE DATABASE br_dir"
restore_b -j 2 -d br_dir "$DUMPS/br.dir"
check sqlb br_dir worker

# tar format
sqlb postgres -c "CREATE DATABASE br_tar"
restore_b -d br_tar "$DUMPS/br.tar"
check sqlb br_tar worker

# one transaction (without pg_cron's entries, which would fail it here)
sqlb postgres -c "CREATE DATABASE br_single"
as_postgres "$PGBIN/pg_restore" -l "$DUMPS/br.dump" | grep -v -E ' pg_cron | cron ' >"$DUMPS/br_nocron.list"
restore_b --single-transaction --exit-on-error -L "$DUMPS/br_nocron.list" -d br_single "$DUMPS/br.dump"
check sqlb br_single worker

# the schema, then the data
sqlb postgres -c "CREATE DATABASE br_twice"
restore_b -d br_twice "$DUMPS/br_schema.dump"
[ "$(sqlb br_twice -c "SELECT count(*) FROM materialized_table.materialized_tables")" = 4 ] ||
    fail "br_twice: the schema alone does not bring the materialized tables back"
if sqlb br_twice -c "INSERT INTO shop.product_totals VALUES (1, 1, 1, 1)" 2>/dev/null; then
    fail "br_twice: a materialized table restored without its data is writable"
fi
restore_b -d br_twice "$DUMPS/br_data.dump"
check sqlb br_twice worker

# --clean --if-exists over an earlier restore
sqlb postgres -c "CREATE DATABASE br_clean"
restore_b -d br_clean "$DUMPS/br.dump"
restore_b --clean --if-exists -d br_clean "$DUMPS/br.dump"
check sqlb br_clean worker

# plain SQL through psql, stopping at the first error, into a new cluster
# (pg_cron in that database: the FULL table gets its job there)
sqlc postgres -c "CREATE DATABASE br_new"
as_postgres "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$C" -p "$PORT_C" -d br_new -f "$DUMPS/br.sql" >/dev/null
check sqlc br_new pg_cron

echo "all restore modes passed"
