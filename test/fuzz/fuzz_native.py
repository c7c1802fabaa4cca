"""Native SQL on materialized tables and their sources.

Each generator returns a Step: the SQL, a kind (for the statistics), and
flags: COPY data to send, whether it cannot run inside a transaction block,
whether it needs the superuser.
"""

from fuzz_grammar import FIXTURE, ROLES, chance, pick, sql_string


class Step:
    def __init__(self, kind, sql, copy=None, autocommit_only=False, superuser=False, pause=0.0):
        self.kind = kind
        self.sql = sql
        self.copy = copy                     # text for COPY ... FROM STDIN
        self.autocommit_only = autocommit_only
        self.superuser = superuser
        self.pause = pause                   # seconds to wait after it


def mt_name(rng, names):
    """A materialized table's name as native SQL writes it."""
    if chance(rng, 0.08):
        return pick(rng, ['fm."Odd Name"', 'fm."tëst_ünï"', "fm.\"back`tick\"", 'fm."select"', "fm." + "l" * 63])
    n = pick(rng, names.all_mt())
    return n if chance(rng, 0.8) else n.split(".")[1] if n.startswith("fm.") else n


def first_column(table):
    """SQL that names the first column of table (for DO blocks)."""
    return (f"(SELECT quote_ident(attname) FROM pg_attribute WHERE attrelid = to_regclass({sql_string(table)}) "
            f"AND attnum > 0 AND NOT attisdropped ORDER BY attnum LIMIT 1)")


def do_block(body):
    return f"DO $do$BEGIN {body} END$do$"


# PostgreSQL's GRANT and REVOKE (and DROP OWNED, which revokes the same way)
# update the table's catalog row without locking it: against any DDL of
# the table running at the same moment -- an ALTER TABLE ... REPLICA
# IDENTITY FULL the extension runs on a source, say -- they fail with
# "tuple concurrently updated" (XX000) in PostgreSQL itself.  So they lock
# what they change first, as a careful DBA would, in a mode that waits for
# DDL and lets DML through.
SOURCES_LOCKABLE = "fz.orders, fz.customers, fz.products, fz.events, fz.metrics, fz.v_orders"


def locked(tables, stmt):
    return f"LOCK TABLE {tables} IN SHARE UPDATE EXCLUSIVE MODE;\n{stmt}"


def locked_schemas(stmt):
    """stmt after locking every table and view of the fuzzer's schemas."""
    return ("DO $lk$BEGIN EXECUTE (SELECT 'LOCK TABLE ' || string_agg(c.oid::regclass::text, ', ') "
            "|| ' IN SHARE UPDATE EXCLUSIVE MODE' FROM pg_class c WHERE c.relkind IN ('r', 'p', 'v') "
            "AND c.relnamespace::regnamespace::text IN ('fz', 'fm', 'fy', 'public', "
            "'materialized_table_internal')); END$lk$;\n" + stmt)


def dml_source(rng):
    r = rng.random()
    i = rng.randrange(1, 400)
    if r < 0.25:
        return Step("insert_source", pick(rng, [
            f"INSERT INTO fz.orders VALUES ({i}, {pick(rng, ['NULL', rng.randrange(1, 25)])}, {rng.randrange(1, 12)}, "
            f"{pick(rng, ['NULL', rng.randrange(0, 9)])}, {pick(rng, ['NULL', rng.randrange(0, 1000) / 10])}, "
            f"{pick(rng, ['NULL', repr('2024-01-%02d' % rng.randrange(1, 28))])}, "
            f"{pick(rng, ['NULL', repr('n' + str(i))])}, now()) ON CONFLICT (id) DO UPDATE SET qty = excluded.qty",
            f"INSERT INTO fz.events VALUES ({pick(rng, ['NULL', repr('a'), repr('b'), repr('z')])}, {i}, "
            f"'{{\"a\": {i}, \"b\": [1]}}', localtimestamp)",
            f"INSERT INTO fz.metrics VALUES (date '2024-01-01' + {rng.randrange(0, 500)}, "
            f"{pick(rng, ['NULL', repr('h1'), repr('h9')])}, {pick(rng, ['NULL', i / 7])})",
            f"INSERT INTO fz.customers VALUES ({rng.randrange(1, 40)}, {pick(rng, ['NULL', repr('north'), repr('mars')])}, "
            f"'c', {pick(rng, ['NULL', 'true', 'false'])}) ON CONFLICT (id) DO UPDATE SET region = excluded.region",
            f"INSERT INTO fz.orders SELECT g, g % 23, g % 10, g % 4, g, date '2024-01-01' + g % 9, NULL, now() "
            f"FROM generate_series({i * 10}, {i * 10 + rng.randrange(1, 200)}) g ON CONFLICT DO NOTHING",
        ]))
    if r < 0.55:
        return Step("update_source", pick(rng, [
            f"UPDATE fz.orders SET qty = {pick(rng, ['NULL', 'coalesce(qty, 0) + 1', rng.randrange(9)])} "
            f"WHERE id % {rng.randrange(2, 30)} = {rng.randrange(2)}",
            f"UPDATE fz.orders SET amount = amount + 1, customer_id = {pick(rng, ['NULL', rng.randrange(1, 25)])} WHERE id = {i}",
            f"UPDATE fz.customers SET region = {pick(rng, ['NULL', repr('east'), repr('west')])} WHERE id = {rng.randrange(1, 25)}",
            f"UPDATE fz.products SET category = {pick(rng, ['NULL', repr('toys'), repr('books')])}, price = price * 2 "
            f"WHERE id = {rng.randrange(1, 12)}",
            "UPDATE fz.events SET v = v + 1 WHERE k = 'a'",
            "UPDATE fz.metrics SET ds = ds + 300 WHERE host = 'h2' AND ds < '2024-02-01'",
            "UPDATE fz.orders SET note = repeat('x', 5000) WHERE id = 4",
        ]))
    if r < 0.78:
        return Step("delete_source", pick(rng, [
            f"DELETE FROM fz.orders WHERE id = {i}",
            f"DELETE FROM fz.orders WHERE id > {rng.randrange(100, 4000)}",
            f"DELETE FROM fz.events WHERE v % {rng.randrange(2, 9)} = 0",
            "DELETE FROM fz.customers WHERE id > 30",
            "DELETE FROM fz.metrics WHERE ds > '2024-12-01'",
        ]))
    if r < 0.85:
        return Step("truncate_source", pick(rng, ["TRUNCATE fz.events", "TRUNCATE fz.metrics",
                                                  "TRUNCATE fz.metrics_def", "TRUNCATE fz.orders CASCADE"]))
    if r < 0.95:
        n = rng.randrange(1, 20)
        rows = "".join(f"{1000 + i * 20 + k}\t{k % 20}\t{k % 10}\t{k % 5}\t{k}.5\t2024-01-0{1 + k % 9}\t\\N\t2024-01-01 00:00:00+00\n"
                       for k in range(n))
        return Step("copy_source", "COPY fz.orders (id, customer_id, product_id, qty, amount, order_date, note, created_at) "
                    "FROM STDIN", copy=rows)
    return Step("copy_out", pick(rng, ["COPY fz.orders TO STDOUT", "COPY (SELECT * FROM fz.events) TO STDOUT"]))


def dml_mt(rng, names):
    t = mt_name(rng, names)
    r = rng.random()
    if r < 0.2:
        return Step("insert_mt", pick(rng, [f"INSERT INTO {t} DEFAULT VALUES", f"INSERT INTO {t} SELECT * FROM {t}",
                                            f"WITH x AS (INSERT INTO {t} SELECT * FROM {t} LIMIT 1 RETURNING 1) SELECT count(*) FROM x"]))
    if r < 0.35:
        return Step("update_mt", pick(rng, [f"UPDATE {t} SET nosuch = 1",
                                            do_block(f"EXECUTE format('UPDATE {t} SET %1$s = %1$s', {first_column(t)});")]))
    if r < 0.5:
        return Step("delete_mt", pick(rng, [f"DELETE FROM {t}", f"DELETE FROM {t} WHERE false",
                                            f"MERGE INTO {t} t USING (SELECT 1) s ON false WHEN NOT MATCHED THEN DO NOTHING"]))
    if r < 0.6:
        return Step("truncate_mt", f"TRUNCATE {t}")
    if r < 0.7:
        return Step("copy_mt", f"COPY {t} FROM STDIN", copy="1\t2\n")
    if r < 0.85:
        return Step("read_mt", pick(rng, [f"SELECT * FROM {t} LIMIT 20", f"SELECT count(*) FROM {t}",
                                          f"SELECT * FROM {t} FOR UPDATE", f"COPY {t} TO STDOUT",
                                          f"TABLE {t} LIMIT 5", f"SELECT * FROM {t} FOR KEY SHARE NOWAIT"]))
    return Step("lock_mt", f"LOCK TABLE {t} IN {pick(rng, ['ACCESS EXCLUSIVE', 'SHARE', 'ROW EXCLUSIVE', 'ACCESS SHARE'])} MODE",
                pause=rng.random() * 0.4)


def api(rng, names):
    """The extension's SQL functions and views."""
    t = sql_string(pick(rng, names.all_mt()))
    r = rng.random()
    if r < 0.15:
        return Step("api_show_create", pick(rng, [f"SELECT materialized_table.show_create({t})",
                                                  "SELECT materialized_table.show_create('fz.orders')",
                                                  "SELECT materialized_table.show_create(0)",
                                                  "SELECT materialized_table.show_create(table_name) FROM materialized_table.materialized_tables"]))
    if r < 0.3:
        return Step("api_views", pick(rng, ["SELECT * FROM materialized_table.materialized_tables",
                                            "SELECT * FROM materialized_table.lineage",
                                            "SELECT materialized_table.lineage_dot()",
                                            "SELECT * FROM materialized_table.refresh_history ORDER BY run_id DESC LIMIT 20",
                                            "SELECT count(*) FROM materialized_table.materialized_tables WHERE NOT freshness_met"]))
    if r < 0.55:
        part = pick(rng, ["NULL", "'{\"ds\": \"2024-01-03\"}'", "'{\"region\": \"north\"}'", "'{}'", "'[]'",
                          "'null'", "'{\"ds\": 1}'", "'{\"nosuch\": \"x\"}'", "'{\"ds\": null}'"])
        return Step("api_refresh", pick(rng, [
            f"SELECT * FROM materialized_table.refresh({t})",
            f"SELECT * FROM materialized_table.refresh({t}, {part})",
            f"SELECT * FROM materialized_table.refresh({t}, {part}, cascade => true)",
            f"SELECT * FROM materialized_table.refresh({t}, cascade => {pick(rng, ['true', 'false', 'NULL'])})",
            "SELECT * FROM materialized_table.refresh('fz.orders')",
            "SELECT * FROM materialized_table.refresh(NULL)"]))
    if r < 0.75:
        return Step("api_scheduled", pick(rng, [
            f"SELECT materialized_table.scheduled_refresh({t})",
            f"SELECT materialized_table.scheduled_refresh({t}, now())",
            f"SELECT materialized_table.scheduled_refresh({t}, '2024-01-02 00:00:00+00')",
            f"SELECT materialized_table.scheduled_refresh({t}, 'infinity')",
            f"SELECT materialized_table.scheduled_refresh({t}, NULL)",
            "SELECT materialized_table.scheduled_refresh('fz.orders')",
            "SELECT materialized_table.scheduled_refresh(table_name) FROM materialized_table.materialized_tables"]))
    return Step("api_execute_odd", pick(rng, [
        "SELECT materialized_table.execute(NULL)", "SELECT materialized_table.execute('')",
        "SELECT materialized_table.execute(';')",
        "SELECT materialized_table.execute(x) FROM (VALUES ('DROP MATERIALIZED TABLE IF EXISTS fm.t1'), "
        "('CREATE MATERIALIZED TABLE fm.t1 AS SELECT 1 AS x')) v(x)",
        "SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fm.t' || g || ' REFRESH') FROM generate_series(0, 5) g",
        "SELECT materialized_table.execute(repeat('DROP MATERIALIZED TABLE IF EXISTS fm.nosuch;', 2000))",
        "SELECT materialized_table.execute('CREATE MATERIALIZED TABLE fm.t' || (random() * 5)::int || ' AS SELECT 1 AS x')",
        "EXPLAIN ANALYZE SELECT materialized_table.execute('DROP MATERIALIZED TABLE IF EXISTS fm.t2')",
        "SELECT materialized_table_internal.freshness_interval(1, 'WEEK')",
        "SELECT materialized_table_internal.continuous_horizon()",
    ]))


def ddl_mt(rng, names):
    t = mt_name(rng, names)
    other = pick(rng, ["t0", "t1", "t2", "t3", "t6", "renamed", "s0_a"])
    role = pick(rng, ROLES)
    r = rng.random()
    if r < 0.08:
        return Step("rename_mt", f"ALTER TABLE {t} RENAME TO {other}")
    if r < 0.15:
        return Step("owner_mt", f"ALTER TABLE {t} OWNER TO {pick(rng, ROLES + ('postgres',))}")
    if r < 0.21:
        return Step("set_schema_mt", f"ALTER TABLE {t} SET SCHEMA {pick(rng, ['fy', 'fm', 'fz', 'public'])}")
    if r < 0.26:
        return Step("alter_columns_mt", pick(rng, [f"ALTER TABLE {t} ADD COLUMN extra int",
                                                   f"ALTER TABLE {t} DROP COLUMN IF EXISTS extra",
                                                   do_block(f"EXECUTE format('ALTER TABLE {t} RENAME COLUMN %s TO renamed', {first_column(t)});"),
                                                   do_block(f"EXECUTE format('ALTER TABLE {t} ALTER COLUMN %s TYPE text', {first_column(t)});"),
                                                   f"ALTER TABLE {t} ADD CONSTRAINT c CHECK (true)",
                                                   f"ALTER TABLE {t} INHERIT fz.orders"]))
    if r < 0.33:
        return Step("persistence_mt", f"ALTER TABLE {t} SET {pick(rng, ['UNLOGGED', 'LOGGED'])}")
    if r < 0.40:
        return Step("rls_mt", pick(rng, [f"ALTER TABLE {t} ENABLE ROW LEVEL SECURITY",
                                         f"ALTER TABLE {t} FORCE ROW LEVEL SECURITY",
                                         f"ALTER TABLE {t} DISABLE ROW LEVEL SECURITY",
                                         f"CREATE POLICY p_{rng.randrange(3)} ON {t} USING (true)",
                                         f"DROP POLICY IF EXISTS p_{rng.randrange(3)} ON {t}"]))
    if r < 0.46:
        return Step("storage_mt", pick(rng, [f"ALTER TABLE {t} SET (fillfactor = {pick(rng, [10, 50, 100])})",
                                             f"ALTER TABLE {t} RESET (fillfactor)",
                                             f"ALTER TABLE {t} REPLICA IDENTITY {pick(rng, ['FULL', 'DEFAULT', 'NOTHING'])}",
                                             f"ALTER TABLE {t} SET ACCESS METHOD heap",
                                             f"ALTER TABLE {t} SET WITHOUT CLUSTER"]))
    if r < 0.58:
        return Step("drop_table_mt", pick(rng, [f"DROP TABLE {t}", f"DROP TABLE IF EXISTS {t} CASCADE",
                                                f"DROP TABLE {t}, fz.events CASCADE",
                                                do_block(f"EXECUTE (SELECT format('DROP TABLE %s', inhrelid::regclass) FROM pg_inherits "
                                                         f"WHERE inhparent = to_regclass({sql_string(t)}) LIMIT 1);"),
                                                do_block(f"EXECUTE (SELECT format('ALTER TABLE {t} DETACH PARTITION %s', inhrelid::regclass) "
                                                         f"FROM pg_inherits WHERE inhparent = to_regclass({sql_string(t)}) LIMIT 1);")]))
    if r < 0.66:
        return Step("index_mt", pick(rng, [
            do_block(f"EXECUTE format('CREATE INDEX IF NOT EXISTS fuzz_idx_{rng.randrange(3)} ON {t} (%s)', {first_column(t)});"),
            do_block(f"EXECUTE format('CREATE UNIQUE INDEX ON {t} (%s)', {first_column(t)});"),
            f"DROP INDEX IF EXISTS fm.fuzz_idx_{rng.randrange(3)}", f"REINDEX TABLE {t}",
            f"CLUSTER {t}"]))
    if r < 0.70:
        return Step("index_concurrently_mt", do_block("NULL;") if chance(rng, 0.01) else
                    f"CREATE INDEX CONCURRENTLY IF NOT EXISTS fuzz_cidx ON {t} ((1))", autocommit_only=True)
    if r < 0.74:
        return Step("trigger_mt", pick(rng, [f"CREATE TRIGGER fuzz_trg AFTER INSERT ON {t} FOR EACH STATEMENT EXECUTE FUNCTION fz.trg_noop()",
                                             f"DROP TRIGGER IF EXISTS fuzz_trg ON {t}"]))
    if r < 0.82:
        return Step("grant_mt", pick(rng, [locked(t, f"GRANT SELECT ON {t} TO {role}"),
                                           locked(t, f"REVOKE ALL ON {t} FROM {role}"),
                                           locked(t, f"GRANT ALL ON {t} TO PUBLIC"),
                                           locked(t, f"REVOKE SELECT ON {t} FROM PUBLIC"),
                                           f"COMMENT ON TABLE {t} IS 'fuzz'"]))
    if r < 0.88:
        return Step("vacuum_mt", pick(rng, [f"VACUUM {t}", f"VACUUM FULL {t}", f"ANALYZE {t}", f"VACUUM (FULL, ANALYZE) {t}"]),
                    autocommit_only=True)
    if r < 0.92:
        return Step("matview_mt", pick(rng, [f"REFRESH MATERIALIZED VIEW {t}", f"ALTER MATERIALIZED VIEW {t} RENAME TO x",
                                             f"CREATE MATERIALIZED VIEW IF NOT EXISTS fy.mv_over AS SELECT * FROM {t}",
                                             "DROP MATERIALIZED VIEW IF EXISTS fy.mv_over CASCADE",
                                             f"CREATE OR REPLACE VIEW fy.v_over AS SELECT * FROM {t}",
                                             "DROP VIEW IF EXISTS fy.v_over CASCADE"]))
    if r < 0.96:
        return Step("inherit_mt", pick(rng, [f"CREATE TABLE fy.child_{rng.randrange(2)} () INHERITS ({t})",
                                             f"CREATE TABLE fy.part_{rng.randrange(2)} PARTITION OF {t} DEFAULT",
                                             f"ALTER TABLE fz.orders ADD CONSTRAINT fk_mt FOREIGN KEY (customer_id) REFERENCES {t}",
                                             "ALTER TABLE fz.orders DROP CONSTRAINT IF EXISTS fk_mt",
                                             "DROP TABLE IF EXISTS fy.child_0, fy.child_1, fy.part_0, fy.part_1"]))
    # the hidden objects of a table, as the superuser
    sel = (f"SELECT query_view::text AS v, id AS o FROM materialized_table_internal.mt_table "
           f"WHERE relid = to_regclass({sql_string(t)})")
    return Step("hidden_objects", pick(rng, [
        do_block(f"EXECUTE (SELECT format('DROP VIEW %s', v) FROM ({sel}) s);"),
        do_block(f"EXECUTE (SELECT format('DROP VIEW %s CASCADE', v) FROM ({sel}) s);"),
        do_block(f"EXECUTE (SELECT format('ALTER VIEW %s RENAME TO fuzz_renamed', v) FROM ({sel}) s);"),
        do_block(f"EXECUTE (SELECT format('DROP TABLE materialized_table_internal.state_%s CASCADE', o) FROM ({sel}) s);"),
        do_block(f"EXECUTE (SELECT format('ALTER TABLE materialized_table_internal.state_%s ADD COLUMN x int', o) FROM ({sel}) s);"),
        do_block(f"EXECUTE (SELECT format('CREATE OR REPLACE VIEW %s AS SELECT 1 AS x', v) FROM ({sel}) s);"),
    ]), superuser=True)


def ddl_source(rng):
    r = rng.random()
    if r < 0.2:
        return Step("alter_source_columns", pick(rng, [
            "ALTER TABLE fz.orders ADD COLUMN IF NOT EXISTS extra int",
            "ALTER TABLE fz.orders DROP COLUMN IF EXISTS extra",
            "ALTER TABLE fz.orders ALTER COLUMN qty TYPE bigint", "ALTER TABLE fz.orders ALTER COLUMN qty TYPE int",
            "ALTER TABLE fz.customers ALTER COLUMN region TYPE varchar(10)",
            "ALTER TABLE fz.customers ALTER COLUMN region TYPE text",
            "ALTER TABLE fz.orders RENAME COLUMN note TO remark", "ALTER TABLE fz.orders RENAME COLUMN remark TO note",
            "ALTER TABLE fz.events DROP COLUMN IF EXISTS payload CASCADE",
            "ALTER TABLE fz.events ADD COLUMN IF NOT EXISTS payload jsonb",
            "ALTER TABLE fz.products RENAME TO products2", "ALTER TABLE fz.products2 RENAME TO products"]))
    if r < 0.35:
        return Step("partition_source", pick(rng, [
            "ALTER TABLE fz.metrics DETACH PARTITION fz.metrics_def",
            "ALTER TABLE fz.metrics ATTACH PARTITION fz.metrics_def DEFAULT",
            "ALTER TABLE fz.metrics DETACH PARTITION fz.metrics_2024 CONCURRENTLY",
            "DROP TABLE IF EXISTS fz.metrics_def"]))
    if r < 0.5:
        return Step("rls_source", pick(rng, [
            "ALTER TABLE fz.orders ENABLE ROW LEVEL SECURITY", "ALTER TABLE fz.orders DISABLE ROW LEVEL SECURITY",
            "ALTER TABLE fz.orders FORCE ROW LEVEL SECURITY", "ALTER TABLE fz.orders NO FORCE ROW LEVEL SECURITY",
            "CREATE POLICY fuzz_p ON fz.orders FOR SELECT TO fuzz_alice USING (qty > 1)",
            "DROP POLICY IF EXISTS fuzz_p ON fz.orders",
            "ALTER TABLE fz.customers SET UNLOGGED", "ALTER TABLE fz.customers SET LOGGED",
            "ALTER TABLE fz.orders REPLICA IDENTITY DEFAULT", "ALTER TABLE fz.orders REPLICA IDENTITY FULL"]))
    if r < 0.62:
        return Step("trigger_source", pick(rng, [
            f"CREATE OR REPLACE TRIGGER fuzz_t AFTER INSERT OR UPDATE ON fz.orders FOR EACH STATEMENT EXECUTE FUNCTION fz.{pick(rng, ['trg_noop', 'trg_noop', 'trg_fail', 'trg_refresh'])}()",
            "DROP TRIGGER IF EXISTS fuzz_t ON fz.orders", "DROP TRIGGER IF EXISTS fuzz_t ON fz.orders"]))
    if r < 0.72:
        return Step("grant_source", pick(rng, [
            locked("fz.orders", f"REVOKE SELECT ON fz.orders FROM {pick(rng, ROLES)}"),
            locked(SOURCES_LOCKABLE, f"GRANT SELECT ON {SOURCES_LOCKABLE} TO PUBLIC"),
            locked("fz.customers", "REVOKE ALL ON fz.customers FROM PUBLIC"),
            locked(SOURCES_LOCKABLE, f"GRANT ALL ON {SOURCES_LOCKABLE} TO PUBLIC")]), superuser=True)
    if r < 0.82:
        return Step("drop_source", pick(rng, ["DROP TABLE fz.products CASCADE", "DROP TABLE fz.events",
                                              "DROP VIEW fz.v_orders CASCADE", "DROP MATERIALIZED VIEW fz.mv_sales CASCADE",
                                              "DROP TABLE fz.customers"]))
    if r < 0.92:
        return Step("matview_source", pick(rng, ["REFRESH MATERIALIZED VIEW fz.mv_sales",
                                                 "REFRESH MATERIALIZED VIEW CONCURRENTLY fz.mv_sales"]))
    return Step("vacuum_source", pick(rng, ["VACUUM fz.orders", "VACUUM FULL fz.customers", "ANALYZE fz.orders",
                                            "CLUSTER fz.orders USING orders_pkey"]), autocommit_only=True)


def schema_and_roles(rng):
    r = rng.random()
    if r < 0.25:
        return [Step("drop_schema", "DROP SCHEMA fy CASCADE"),
                Step("create_schema", "CREATE SCHEMA IF NOT EXISTS fy", pause=rng.random() * 0.2),
                Step("grant_schema", "GRANT USAGE, CREATE ON SCHEMA fy TO PUBLIC")]
    if r < 0.32:
        return [Step("drop_schema", "DROP SCHEMA fm CASCADE"),
                Step("create_schema", "CREATE SCHEMA IF NOT EXISTS fm"),
                Step("grant_schema", "GRANT USAGE, CREATE ON SCHEMA fm TO PUBLIC")]
    if r < 0.45:
        return [Step("rename_schema", "ALTER SCHEMA fy RENAME TO fy_renamed", pause=rng.random() * 0.3),
                Step("rename_schema", "ALTER SCHEMA fy_renamed RENAME TO fy")]
    if r < 0.55:
        return [Step("drop_owned", locked_schemas(f"DROP OWNED BY {pick(rng, ROLES)}"), superuser=True)]
    if r < 0.65:
        a, b = rng.sample(ROLES, 2)
        return [Step("reassign_owned", f"REASSIGN OWNED BY {a} TO {b}", superuser=True)]
    if r < 0.77:
        who = pick(rng, ["fuzz_alice", "fuzz_bob"])
        return [Step("role_login", f"ALTER ROLE {who} NOLOGIN", superuser=True, pause=rng.random() * 0.3),
                Step("role_login", f"ALTER ROLE {who} LOGIN", superuser=True)]
    if r < 0.85:
        return [Step("role_rename", "ALTER ROLE fuzz_carol RENAME TO fuzz_carol2", superuser=True, pause=rng.random() * 0.3),
                Step("role_rename", "ALTER ROLE fuzz_carol2 RENAME TO fuzz_carol", superuser=True)]
    return [Step("settings", pick(rng, ["SET materialized_table.freshness_threshold = '10s'",
                                        "SET materialized_table.freshness_threshold = '2h'",
                                        "RESET materialized_table.freshness_threshold",
                                        "SET materialized_table.default_freshness_continuous = '1s'",
                                        "SET materialized_table.default_freshness_full = '1min'",
                                        "RESET ALL", "SET materialized_table.freshness_threshold = '-1'",
                                        "SET search_path = fy, fz, public", "SET search_path = fm, fz, public"]))]


def extension_cycle(rng):
    return [Step("drop_extension", "DROP EXTENSION materialized_table CASCADE", superuser=True,
                 pause=rng.random() * 0.3),
            Step("create_extension", "CREATE EXTENSION IF NOT EXISTS materialized_table", superuser=True)]


def repair():
    """The fixture again, to bring back what DROP ... CASCADE took."""
    return [Step("repair", FIXTURE.strip(), superuser=True)]


# PostgreSQL itself updates the catalog rows of GRANT, REVOKE, ALTER ROLE
# and the like without a lock on the object: run concurrently with other
# DDL of the same object they fail with "tuple concurrently updated"
# (XX000) with no part of the extension in it.  So a unit holding one of
# those takes an advisory lock exclusively, a unit of other native DDL
# shares it: both still race with everything the extension's statements
# and workers do.
EXCLUSIVE_KINDS = {"grant_mt", "grant_source", "grant_schema", "drop_owned", "reassign_owned",
                   "role_login", "role_rename", "repair"}
UNLOCKED_KINDS = {"insert_source", "update_source", "delete_source", "copy_source", "copy_out",
                  "insert_mt", "update_mt", "delete_mt", "copy_mt", "read_mt", "lock_mt", "settings",
                  "api_show_create", "api_views", "api_refresh", "api_scheduled", "api_execute_odd"}


def lock_level(step):
    if step.kind.startswith("flink") or step.kind in UNLOCKED_KINDS:
        return None
    if step.kind in EXCLUSIVE_KINDS:
        return "exclusive"
    return "shared"
