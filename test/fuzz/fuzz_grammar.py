"""Grammar of the fuzzer: the source schema and valid Flink statements.

Everything here is a pure function of a random.Random: the statements a
session generates depend on the seed only, never on what the server
answered, so that (seed, session, index) names a statement for good.
"""

import random

# ---------------------------------------------------------------------------
# The sources: a small schema with NULLs, a view, a materialized view and a
# partitioned table.  FIXTURE is idempotent (IF NOT EXISTS, ON CONFLICT), so
# that sessions can run it again to repair what DROP ... CASCADE took.
# ---------------------------------------------------------------------------

ROLES = ("fuzz_alice", "fuzz_bob", "fuzz_carol")   # carol cannot log in

FIXTURE = r"""
SET client_min_messages = warning;
DO $fx$BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'fuzz_alice') THEN CREATE ROLE fuzz_alice LOGIN; END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'fuzz_bob') THEN CREATE ROLE fuzz_bob LOGIN; END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'fuzz_carol') THEN CREATE ROLE fuzz_carol NOLOGIN; END IF;
  IF EXISTS (SELECT FROM pg_namespace WHERE nspname = 'fy_renamed') THEN
    IF EXISTS (SELECT FROM pg_namespace WHERE nspname = 'fy') THEN DROP SCHEMA fy_renamed CASCADE;
    ELSE ALTER SCHEMA fy_renamed RENAME TO fy; END IF;
  END IF;
END$fx$;
ALTER ROLE fuzz_alice LOGIN;
ALTER ROLE fuzz_bob LOGIN;
DO $fx$BEGIN
  -- pg_cron lives in one database only; elsewhere the worker drives FULL tables
  IF current_database() = current_setting('cron.database_name', true) THEN
    CREATE EXTENSION IF NOT EXISTS pg_cron;
  END IF;
END$fx$;
CREATE EXTENSION IF NOT EXISTS materialized_table;
CREATE SCHEMA IF NOT EXISTS fz;
CREATE SCHEMA IF NOT EXISTS fm;
CREATE SCHEMA IF NOT EXISTS fy;
GRANT USAGE, CREATE ON SCHEMA fz, fm, fy TO PUBLIC;
CREATE TABLE IF NOT EXISTS fz.customers (id int PRIMARY KEY, region text, name text, vip boolean);
CREATE TABLE IF NOT EXISTS fz.products (id int PRIMARY KEY, category text, price numeric(8,2));
CREATE TABLE IF NOT EXISTS fz.orders (id int PRIMARY KEY, customer_id int, product_id int, qty int,
    amount numeric(10,2), order_date date, note text, created_at timestamptz);
CREATE TABLE IF NOT EXISTS fz.events (k text, v int, payload jsonb, ts timestamp);
CREATE TABLE IF NOT EXISTS fz.metrics (ds date NOT NULL, host text, val double precision) PARTITION BY RANGE (ds);
CREATE TABLE IF NOT EXISTS fz.metrics_2024 PARTITION OF fz.metrics FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
DO $fx$BEGIN
  IF to_regclass('fz.metrics_def') IS NULL THEN
    CREATE TABLE fz.metrics_def PARTITION OF fz.metrics DEFAULT;
  ELSIF NOT EXISTS (SELECT FROM pg_inherits WHERE inhrelid = 'fz.metrics_def'::regclass) THEN
    ALTER TABLE fz.metrics ATTACH PARTITION fz.metrics_def DEFAULT;
  END IF;
  IF to_regclass('fz.v_orders') IS NULL THEN
    CREATE VIEW fz.v_orders AS SELECT id, customer_id, qty, amount, order_date FROM fz.orders WHERE qty IS NOT NULL;
  END IF;
  IF to_regclass('fz.mv_sales') IS NULL THEN
    CREATE MATERIALIZED VIEW fz.mv_sales AS
      SELECT product_id, sum(qty) AS total_qty, count(*) AS n FROM fz.orders GROUP BY product_id;
    CREATE UNIQUE INDEX ON fz.mv_sales (product_id) NULLS NOT DISTINCT;
  END IF;
END$fx$;
DO $fx$BEGIN
  -- what native DDL of the sessions may have changed
  IF to_regclass('fz.products2') IS NOT NULL AND to_regclass('fz.products') IS NULL THEN
    ALTER TABLE fz.products2 RENAME TO products;
  END IF;
  IF EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'fz.orders'::regclass AND attname = 'remark') THEN
    ALTER TABLE fz.orders RENAME COLUMN remark TO note;
  END IF;
  DROP TRIGGER IF EXISTS fuzz_t ON fz.orders;
  ALTER TABLE fz.events ADD COLUMN IF NOT EXISTS payload jsonb;
END$fx$;
CREATE OR REPLACE FUNCTION fz.trg_noop() RETURNS trigger LANGUAGE plpgsql AS
  $fx$BEGIN RETURN NULL; END$fx$;
CREATE OR REPLACE FUNCTION fz.trg_fail() RETURNS trigger LANGUAGE plpgsql AS
  $fx$BEGIN RAISE EXCEPTION 'fuzz trigger refuses %', TG_OP; END$fx$;
CREATE OR REPLACE FUNCTION fz.trg_refresh() RETURNS trigger LANGUAGE plpgsql AS
  $fx$BEGIN PERFORM materialized_table.execute('ALTER MATERIALIZED TABLE fm.t0 REFRESH'); RETURN NULL; END$fx$;
-- (locked first: GRANT does not lock what it changes, see fuzz_native.py)
LOCK TABLE fz.orders, fz.customers, fz.products, fz.events, fz.metrics, fz.v_orders IN SHARE UPDATE EXCLUSIVE MODE;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA fz TO PUBLIC;
INSERT INTO fz.customers (id, region, name, vip) SELECT i, (ARRAY['north', 'south', 'east', 'west', NULL])[1 + i % 5],
    'customer ' || i, CASE i % 3 WHEN 0 THEN true WHEN 1 THEN false END
  FROM generate_series(1, 20) i ON CONFLICT DO NOTHING;
INSERT INTO fz.products (id, category, price) SELECT i, (ARRAY['tools', 'toys', NULL])[1 + i % 3], CASE WHEN i % 4 > 0 THEN i * 1.25 END
  FROM generate_series(1, 10) i ON CONFLICT DO NOTHING;
INSERT INTO fz.orders (id, customer_id, product_id, qty, amount, order_date, note, created_at) SELECT i, CASE WHEN i % 11 > 0 THEN 1 + i % 23 END, 1 + i % 10,
    CASE WHEN i % 7 > 0 THEN i % 5 END, CASE WHEN i % 9 > 0 THEN (i * 37 % 1000) / 10.0 END,
    CASE WHEN i % 13 > 0 THEN date '2024-01-01' + i % 20 END, CASE WHEN i % 4 = 0 THEN 'note ' || i END,
    timestamptz '2024-01-01 00:00:00+00' + i * interval '1 hour'
  FROM generate_series(1, 150) i ON CONFLICT DO NOTHING;
INSERT INTO fz.events (k, v, payload, ts) SELECT (ARRAY['a', 'b', 'c', NULL])[1 + i % 4], CASE WHEN i % 5 > 0 THEN i END,
    CASE WHEN i % 2 = 0 THEN jsonb_build_object('a', i, 'b', ARRAY[i, i + 1]) END,
    timestamp '2024-01-01 00:00:00' + i * interval '1 minute'
  FROM generate_series(1, 40) i WHERE NOT EXISTS (SELECT FROM fz.events);
INSERT INTO fz.metrics (ds, host, val) SELECT date '2024-01-01' + i % 40 + CASE WHEN i % 10 = 0 THEN 400 ELSE 0 END,
    (ARRAY['h1', 'h2', NULL])[1 + i % 3], CASE WHEN i % 6 > 0 THEN i / 3.0 END
  FROM generate_series(1, 60) i WHERE NOT EXISTS (SELECT FROM fz.metrics);
REFRESH MATERIALIZED VIEW fz.mv_sales;
"""

# Columns of the sources, with coarse types: int, bigint, numeric, float,
# text, date, ts (timestamp), tstz (timestamptz), bool, jsonb, intarr.
SOURCES = {
    "fz.orders": {"alias": "o", "key": ["id"], "cols": [
        ("id", "int"), ("customer_id", "int"), ("product_id", "int"), ("qty", "int"),
        ("amount", "numeric"), ("order_date", "date"), ("note", "text"), ("created_at", "tstz")]},
    "fz.customers": {"alias": "c", "key": ["id"], "cols": [
        ("id", "int"), ("region", "text"), ("name", "text"), ("vip", "bool")]},
    "fz.products": {"alias": "p", "key": ["id"], "cols": [
        ("id", "int"), ("category", "text"), ("price", "numeric")]},
    "fz.events": {"alias": "e", "key": None, "cols": [
        ("k", "text"), ("v", "int"), ("payload", "jsonb"), ("ts", "ts")]},
    "fz.metrics": {"alias": "m", "key": None, "cols": [
        ("ds", "date"), ("host", "text"), ("val", "float")]},
    "fz.v_orders": {"alias": "vo", "key": ["id"], "cols": [
        ("id", "int"), ("customer_id", "int"), ("qty", "int"), ("amount", "numeric"),
        ("order_date", "date")]},
    "fz.mv_sales": {"alias": "mv", "key": ["product_id"], "cols": [
        ("product_id", "int"), ("total_qty", "bigint"), ("n", "bigint")]},
}

# low-cardinality columns worth grouping or partitioning by
GROUPABLE = {
    "fz.orders": ["customer_id", "product_id", "order_date", "qty"],
    "fz.customers": ["region", "vip"],
    "fz.products": ["category"],
    "fz.events": ["k"],
    "fz.metrics": ["host", "ds"],
    "fz.v_orders": ["customer_id", "order_date"],
    "fz.mv_sales": ["product_id"],
}

NUMERIC = ("int", "bigint", "numeric", "float")

# Flink (and PostgreSQL) type names per coarse type: the first ones fit,
# the last of each list is a doubtful cast.
FLINK_TYPES = {
    "int": ["INT", "INTEGER", "BIGINT", "DECIMAL(12, 0)", "DOUBLE", "STRING", "SMALLINT", "TINYINT"],
    "bigint": ["BIGINT", "DECIMAL(20, 0)", "DOUBLE", "STRING", "numeric", "INT"],
    "numeric": ["DECIMAL(12, 2)", "DECIMAL(38, 10)", "NUMERIC", "DOUBLE", "STRING", "FLOAT", "DECIMAL(3, 1)"],
    "float": ["DOUBLE", "FLOAT", "DECIMAL(20, 6)", "STRING", "double precision"],
    "text": ["STRING", "VARCHAR(40)", "TEXT", "CHAR(12)", "VARCHAR(3)", "CHAR"],
    "date": ["DATE", "TIMESTAMP(3)", "STRING", "TIMESTAMP_LTZ(3)"],
    "ts": ["TIMESTAMP(3)", "TIMESTAMP", "TIMESTAMP_LTZ(6)", "STRING", "DATE"],
    "tstz": ["TIMESTAMP_LTZ(3)", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "timestamptz", "STRING", "TIMESTAMP(0)"],
    "bool": ["BOOLEAN", "BOOL", "STRING", "INT"],
    "jsonb": ["MAP<STRING, STRING>", "ROW<a INT, b ARRAY<INT>>", "jsonb", "STRING", "ROW(a INT)"],
    "intarr": ["ARRAY<INT>", "ARRAY<BIGINT>", "INT ARRAY", "int[]", "ARRAY<ARRAY<INT>>", "MULTISET<INT>"],
}
BAD_TYPES = ["DATE", "BOOLEAN", "BYTES", "VARBINARY(3)", "TIME(3)", "ARRAY<STRING>", "INTERVAL DAY",
             "RAW('x', 'y')", "MAP<INT, ARRAY<MAP<STRING, ROW<x INT>>>>", "NOSUCHTYPE", "INT(3)",
             "DECIMAL(0, 5)", "VARCHAR(0)", "CHAR(100000000)", "ARRAY<INT", "ROW<>", "pg_catalog.int4"]

FORMATTERS = ["yyyy-MM-dd", "yyyy-MM-dd", "yyyyMMdd", "yyyy-MM-dd HH", "HH", "yyyy", "mm:ss"]
BAD_FORMATTERS = ["'day' yyyy-MM-dd", "yyyy-MM-dd''T''HH", "QQQ", "", "%Y", "yyyy-MM-dd'", "G"]

# valid in both modes, then values one of the modes (or both) refuses
FRESHNESS_VALUES = {
    "SECOND": [1, 1, 2, 3, 5, 10, 30],
    "MINUTE": [1, 2, 5, 10, 15, 30],
    "HOUR": [1, 2, 4, 8, 12],
    "DAY": [1],
}
ODD_FRESHNESS = {"SECOND": [60, 7, 90], "MINUTE": [45, 60, 7], "HOUR": [5, 24, 25], "DAY": [2]}


def pick(rng, seq):
    return seq[rng.randrange(len(seq))]


def chance(rng, p):
    return rng.random() < p


def sql_string(s):
    return "'" + s.replace("'", "''") + "'"


class Query:
    """A query with the names and coarse types of its output columns."""

    def __init__(self, sql, cols, key=None, partition_cols=(), ts_cols=(), extended=None):
        self.sql = sql
        self.extended = extended             # the same query with a column appended, or None
        self.cols = cols                     # [(name, type)]
        self.key = key                       # columns that are unique, or None
        self.partition_cols = list(partition_cols)   # good PARTITIONED BY columns
        self.ts_cols = list(ts_cols)


# ---------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------

def predicate(rng, alias, cols):
    """A WHERE condition over the columns (usually true for some rows)."""
    name, typ = pick(rng, cols)
    ref = f"{alias}.{name}" if alias else name
    if typ in ("int", "bigint"):
        return pick(rng, [f"{ref} > {rng.randrange(4)}", f"{ref} IS NOT NULL", f"{ref} % 2 = 0",
                          f"{ref} BETWEEN 2 AND {rng.randrange(3, 30)}", f"coalesce({ref}, 0) <> 3",
                          f"{ref} IN (1, 2, 3, NULL)", f"{ref} IS NULL"])
    if typ in ("numeric", "float"):
        return pick(rng, [f"{ref} > 10", f"{ref} IS NULL", f"{ref} < 50.5", f"round({ref}) = {ref}"])
    if typ == "text":
        return pick(rng, [f"{ref} IS NOT NULL", f"{ref} LIKE 'n%'", f"{ref} IN ('north', 'south', 'a')",
                          f"length({ref}) > 3", f"{ref} <> ''"])
    if typ == "date":
        return pick(rng, [f"{ref} >= DATE '2024-01-05'", f"{ref} IS NOT NULL",
                          f"{ref} < DATE '2024-01-15'"])
    if typ in ("ts", "tstz"):
        return pick(rng, [f"{ref} > TIMESTAMP '2024-01-02 00:00'", f"{ref} IS NOT NULL"])
    if typ == "bool":
        return pick(rng, [ref, f"NOT {ref}", f"{ref} IS NOT TRUE"])
    if typ == "jsonb":
        return pick(rng, [f"{ref} ? 'a'", f"{ref} IS NOT NULL", f"({ref}->>'a')::int > 3"])
    return "true"


def aggregate(rng, alias, cols, used):
    """An aggregate over one of the columns: (sql, name, type)."""
    a = f"{alias}." if alias else ""
    nums = [c for c in cols if c[1] in NUMERIC]
    texts = [c for c in cols if c[1] == "text"]
    kinds = ["count_star", "count", "min", "max"]
    if nums:
        kinds += ["sum", "sum", "avg", "sum_filter", "count_distinct"]
    if texts:
        kinds += ["string_agg"]
    if any(c[1] == "bool" for c in cols):
        kinds += ["bool_and"]
    kinds += ["array_agg"]
    kind = pick(rng, kinds)
    n = len(used)
    if kind == "count_star":
        return "count(*)", pick(rng, ["n", "cnt", f"n{n}"]), "bigint"
    if kind == "count":
        c = pick(rng, cols)
        return f"count({a}{c[0]})", f"cnt_{c[0]}", "bigint"
    if kind in ("min", "max"):
        c = pick(rng, cols)
        if c[1] == "jsonb":
            c = cols[0]
        return f"{kind}({a}{c[0]})", f"{kind}_{c[0]}", c[1] if c[1] != "bool" else "bool"
    if kind == "sum":
        c = pick(rng, nums)
        return f"sum({a}{c[0]})", f"sum_{c[0]}", {"int": "bigint"}.get(c[1], c[1])
    if kind == "avg":
        c = pick(rng, nums)
        return f"avg({a}{c[0]})", f"avg_{c[0]}", "numeric" if c[1] != "float" else "float"
    if kind == "sum_filter":
        c = pick(rng, nums)
        return (f"sum({a}{c[0]}) FILTER (WHERE {predicate(rng, alias, cols)})", f"fsum_{c[0]}",
                {"int": "bigint"}.get(c[1], c[1]))
    if kind == "count_distinct":
        c = pick(rng, nums)
        return f"count(DISTINCT {a}{c[0]})", f"dcnt_{c[0]}", "bigint"
    if kind == "string_agg":
        c = pick(rng, texts)
        return f"string_agg({a}{c[0]}, ',' ORDER BY {a}{c[0]})", f"all_{c[0]}", "text"
    if kind == "bool_and":
        c = [c for c in cols if c[1] == "bool"][0]
        return f"bool_and({a}{c[0]})", f"all_{c[0]}", "bool"
    c = cols[0]
    return f"array_agg({a}{c[0]} ORDER BY {a}{c[0]})", f"arr_{c[0]}", "intarr" if c[1] == "int" else "text"


def dedupe(items):
    seen = set()
    out = []
    for sql, name, typ in items:
        base, k = name, 1
        while name in seen:
            k += 1
            name = f"{base}{k}"
        seen.add(name)
        out.append((sql, name, typ))
    return out


def q_projection(rng, src=None):
    src = src or pick(rng, ["fz.orders", "fz.orders", "fz.customers", "fz.products", "fz.events",
                            "fz.metrics", "fz.v_orders"])
    s = SOURCES[src]
    cols = s["cols"]
    chosen = [c for c in cols if chance(rng, 0.6)] or [cols[0]]
    if s["key"] and s["key"][0] not in [c[0] for c in chosen]:
        chosen.insert(0, (s["key"][0], "int"))
    items = [(c[0], c[0], c[1]) for c in chosen]
    if chance(rng, 0.3):
        num = [c for c in cols if c[1] in NUMERIC]
        if num:
            c = pick(rng, num)
            items.append((f"{c[0]} * 2", f"{c[0]}_x2", c[1] if c[1] != "int" else "int"))
    if chance(rng, 0.2):
        items.append(("upper(" + (pick(rng, [c for c in cols if c[1] == "text"])[0]
                                  if any(c[1] == "text" for c in cols) else "'x'") + ")", "up", "text"))
    if chance(rng, 0.15):
        items.append((pick(rng, ["now()", "current_date", "1", "NULL::int", "'const'", "random()"]),
                      "extra", "text"))
    items = dedupe(items)
    where = f" WHERE {predicate(rng, None, cols)}" if chance(rng, 0.5) else ""
    tail = ""
    if chance(rng, 0.1):
        tail = f" ORDER BY {items[0][1]} LIMIT {rng.randrange(1, 20)}"
    select = ", ".join(sql if sql == name else f"{sql} AS {name}" for sql, name, _ in items)
    more = pick(rng, ["now() AS appended", "1 AS appended", f"{cols[0][0]} AS appended", "NULL::text AS appended"])
    dist = "DISTINCT " if chance(rng, 0.08) else ""
    key = s["key"] if s["key"] and not dist else None
    part = [n for _, n, t in items if t in ("text", "date", "bool", "int")
            and n in GROUPABLE.get(src, [])]
    ts = [n for _, n, t in items if t in ("ts", "tstz")]
    return Query(f"SELECT {dist}{select} FROM {src}{where}{tail}",
                 [(n, t) for _, n, t in items], key, part, ts,
                 extended=f"SELECT {dist}{select}, {more} FROM {src}{where}{tail}")


def q_group(rng, src=None):
    src = src or pick(rng, ["fz.orders", "fz.orders", "fz.orders", "fz.customers", "fz.products",
                            "fz.events", "fz.metrics", "fz.v_orders", "fz.mv_sales"])
    s = SOURCES[src]
    cols = s["cols"]
    alias = s["alias"] if chance(rng, 0.5) else None
    a = f"{alias}." if alias else ""
    gcols = [g for g in GROUPABLE[src] if chance(rng, 0.5)] or [GROUPABLE[src][0]]
    types = dict(cols)
    items = []
    groups = []
    for g in gcols:
        if types[g] == "date" and chance(rng, 0.5):
            items.append((f"to_char({a}{g}, 'YYYY-MM-DD')", "ds", "text"))
        elif types[g] == "int" and chance(rng, 0.2):
            items.append((f"{a}{g} % 3", f"{g}_mod", "int"))
        else:
            items.append((f"{a}{g}", g, types[g]))
        groups.append(items[-1][0])
    naggs = rng.randrange(1, 4)
    for _ in range(naggs):
        items.append(aggregate(rng, alias, cols, items))
    items = dedupe(items)
    where = f" WHERE {predicate(rng, alias, cols)}" if chance(rng, 0.3) else ""
    if chance(rng, 0.6):
        group = ", ".join(str(i + 1) for i in range(len(groups)))
    else:
        group = ", ".join(groups)
    if chance(rng, 0.06):
        group = f"ROLLUP ({group})"
    having = " HAVING count(*) > 1" if chance(rng, 0.15) else ""
    select = ", ".join(sql if sql == name or sql.endswith("." + name) and sql.count(".") == 1
                       else f"{sql} AS {name}" for sql, name, _ in items)
    names = [n for _, n, _ in items]
    key = names[:len(groups)]
    part = [n for _, n, t in items[:len(groups)] if t in ("text", "date", "bool", "int")]
    extra = dedupe(items + [aggregate(rng, alias, cols, items)])[-1]
    tail = f" FROM {src}{' ' + alias if alias else ''}{where} GROUP BY {group}{having}"
    return Query(f"SELECT {select}{tail}", [(n, t) for _, n, t in items], key, part,
                 extended=f"SELECT {select}, {extra[0]} AS {extra[1]}{tail}")


def q_global(rng):
    src = pick(rng, ["fz.orders", "fz.events", "fz.customers"])
    cols = SOURCES[src]["cols"]
    items = dedupe([aggregate(rng, None, cols, []) for _ in range(rng.randrange(1, 4))])
    select = ", ".join(f"{sql} AS {name}" for sql, name, _ in items)
    return Query(f"SELECT {select} FROM {src}", [(n, t) for _, n, t in items], None)


def q_distinct(rng):
    src = pick(rng, ["fz.customers", "fz.orders", "fz.events", "fz.products"])
    cols = [c for c in SOURCES[src]["cols"] if c[0] in GROUPABLE[src]] or SOURCES[src]["cols"][:1]
    chosen = [c for c in cols if chance(rng, 0.6)] or [cols[0]]
    return Query(f"SELECT DISTINCT {', '.join(c[0] for c in chosen)} FROM {src}",
                 chosen, [c[0] for c in chosen], [c[0] for c in chosen if c[1] in ("text", "int", "bool")])


def q_join(rng):
    kind = pick(rng, ["JOIN", "JOIN", "JOIN", "LEFT JOIN", "INNER JOIN", "RIGHT JOIN", "FULL JOIN"])
    shape = rng.randrange(4)
    if shape == 0:
        aggs = [("count(*)", "n", "bigint"), ("sum(o.amount)", "total", "numeric"),
                ("sum(o.qty)", "qty", "bigint"), ("avg(o.amount)", "avg_amount", "numeric"),
                ("max(o.amount)", "top", "numeric"), ("count(o.id)", "orders", "bigint")]
        chosen = [a for a in aggs if chance(rng, 0.5)] or aggs[:1]
        groups = pick(rng, [[("to_char(o.order_date, 'YYYY-MM-DD')", "ds", "text"), ("c.region", "region", "text")],
                            [("o.customer_id", "customer_id", "int"), ("c.region", "region", "text")],
                            [("c.region", "region", "text")],
                            [("o.order_date", "order_date", "date"), ("c.vip", "vip", "bool")]])
        items = groups + chosen
        sql = (f"SELECT {', '.join(f'{s} AS {n}' for s, n, _ in items)} FROM fz.orders o {kind} fz.customers c "
               f"ON c.id = o.customer_id{' WHERE ' + predicate(rng, 'o', SOURCES['fz.orders']['cols']) if chance(rng, 0.3) else ''} "
               f"GROUP BY {', '.join(s for s, _, _ in groups)}")
        return Query(sql, [(n, t) for _, n, t in items], [n for _, n, _ in groups],
                     [n for _, n, t in groups if t in ("text", "bool")])
    if shape == 1:
        sql = (f"SELECT o.id, o.qty, p.category, p.price FROM fz.orders o {kind} fz.products p "
               f"ON p.id = o.product_id")
        return Query(sql, [("id", "int"), ("qty", "int"), ("category", "text"), ("price", "numeric")],
                     ["id"] if "LEFT" in kind or kind.endswith("JOIN") and "FULL" not in kind and "RIGHT" not in kind else None,
                     ["category"])
    if shape == 2:
        sql = ("SELECT p.category, c.region, count(*) AS n, sum(o.amount) AS total FROM fz.orders o "
               f"JOIN fz.products p ON p.id = o.product_id {kind} fz.customers c ON c.id = o.customer_id "
               "GROUP BY p.category, c.region")
        return Query(sql, [("category", "text"), ("region", "text"), ("n", "bigint"), ("total", "numeric")],
                     ["category", "region"], ["category", "region"])
    sql = ("SELECT c.id, c.region, count(o.id) AS orders FROM fz.customers c "
           "LEFT JOIN fz.orders o ON o.customer_id = c.id GROUP BY c.id, c.region")
    return Query(sql, [("id", "int"), ("region", "text"), ("orders", "bigint")], ["id"], ["region"])


def q_other(rng, mt_names):
    shape = rng.randrange(14)
    if shape == 0:
        return Query("SELECT id, customer_id, rank() OVER (PARTITION BY customer_id ORDER BY amount, id) AS r "
                     "FROM fz.orders", [("id", "int"), ("customer_id", "int"), ("r", "bigint")], ["id"])
    if shape == 1:
        return Query("SELECT id, 'order' AS kind FROM fz.orders UNION ALL SELECT id, 'customer' FROM fz.customers",
                     [("id", "int"), ("kind", "text")], None, ["kind"])
    if shape == 2:
        return Query("WITH big AS (SELECT * FROM fz.orders WHERE amount > 20) "
                     "SELECT customer_id, count(*) AS n FROM big GROUP BY customer_id",
                     [("customer_id", "int"), ("n", "bigint")], ["customer_id"])
    if shape == 3:
        return Query("SELECT c.id, c.name FROM fz.customers c WHERE EXISTS "
                     "(SELECT FROM fz.orders o WHERE o.customer_id = c.id AND o.qty > 2)",
                     [("id", "int"), ("name", "text")], ["id"])
    if shape == 4:
        return Query("SELECT g AS n, g * g AS sq FROM generate_series(1, 5) g", [("n", "int"), ("sq", "int")], ["n"])
    if shape == 5:
        return Query("SELECT 1 AS one, 'x'::text AS x, NULL::int AS nothing",
                     [("one", "int"), ("x", "text"), ("nothing", "int")], ["one"])
    if shape == 6:
        return Query("SELECT k, payload->>'a' AS a, jsonb_array_length(payload->'b') AS len FROM fz.events",
                     [("k", "text"), ("a", "text"), ("len", "int")], None, ["k"])
    if shape == 7:
        return Query("SELECT id, qty / (qty - qty) AS boom FROM fz.orders", [("id", "int"), ("boom", "int")], ["id"])
    if shape == 8:
        return Query("SELECT host, ds, sum(val) AS total FROM fz.metrics GROUP BY host, ds",
                     [("host", "text"), ("ds", "date"), ("total", "float")], ["host", "ds"], ["host", "ds"])
    if shape == 9:
        return Query("SELECT relname::text AS relname, relkind::text AS kind FROM pg_catalog.pg_class "
                     "WHERE relnamespace = 'fz'::regnamespace", [("relname", "text"), ("kind", "text")],
                     ["relname"], ["kind"])
    if shape == 10:
        return Query("SELECT o.id, x.v FROM fz.orders o CROSS JOIN LATERAL (SELECT o.qty + 1 AS v) x",
                     [("id", "int"), ("v", "int")], ["id"])
    if shape == 11:
        return Query("SELECT id, CASE WHEN qty > 2 THEN 'big' WHEN qty IS NULL THEN NULL ELSE 'small' END AS size, "
                     "coalesce(note, '-') AS note, amount::text AS amount_text FROM fz.orders",
                     [("id", "int"), ("size", "text"), ("note", "text"), ("amount_text", "text")], ["id"], ["size"])
    # over another materialized table (lineage, freshness multiples, cascades)
    up = pick(rng, mt_names)
    if shape == 12:
        return Query(f"SELECT count(*) AS n FROM {up}", [("n", "bigint")], None)
    return Query(f"SELECT * FROM {up}", [], None)


def query(rng, mt_names):
    r = rng.random()
    if r < 0.22:
        return q_projection(rng)
    if r < 0.55:
        return q_group(rng)
    if r < 0.62:
        return q_global(rng)
    if r < 0.68:
        return q_distinct(rng)
    if r < 0.82:
        return q_join(rng)
    return q_other(rng, mt_names)


# ---------------------------------------------------------------------------
# Flink statements
# ---------------------------------------------------------------------------

def freshness(rng):
    unit = pick(rng, ["SECOND", "SECOND", "MINUTE", "MINUTE", "HOUR", "HOUR", "DAY"])
    value = pick(rng, FRESHNESS_VALUES[unit] if chance(rng, 0.9) else ODD_FRESHNESS[unit])
    if chance(rng, 0.3):
        unit += "S"
    if chance(rng, 0.04):
        return pick(rng, ["INTERVAL '0' SECOND", "INTERVAL '-1' MINUTE", "INTERVAL '1.5' HOUR",
                          "INTERVAL '1' MONTH", "INTERVAL '1' DAY TO HOUR", "'1' SECOND", "INTERVAL '2147483648' SECOND",
                          "INTERVAL ' 3 ' SECOND", "INTERVAL -'1' SECOND", "INTERVAL '1' YEAR",
                          "INTERVAL '1' WEEK", "INTERVAL '1' SECOND(3)"])
    return f"INTERVAL '{value}' {unit}"


def option_pairs(rng, q, partition_keys):
    opts = []
    for col in partition_keys:
        if chance(rng, 0.6):
            opts.append((f"partition.fields.{col}.date-formatter",
                         pick(rng, FORMATTERS) if chance(rng, 0.9) else pick(rng, BAD_FORMATTERS)))
    pool = [("fillfactor", "70"), ("fillfactor", "100"), ("sink.parallelism", "2"),
            ("sink.parallelism", "1"), ("autovacuum_enabled", "false"), ("parallel_workers", "2"),
            ("toast.autovacuum_enabled", "false"), ("connector", "filesystem"), ("format", "json"),
            ("custom.key", "x y z"), ("autovacuum_vacuum_scale_factor", "0.05")]
    bad = [("fillfactor", "5"), ("sink.parallelism", "-1"), ("sink.parallelism", "many"),
           ("partition.fields.nosuch.date-formatter", "yyyy"), ("", "empty key"), ("fillfactor", "x"),
           ("sink.parallelism", "2147483648"), ("toast.nosuch", "1")]
    for _ in range(rng.randrange(0, 3)):
        opts.append(pick(rng, pool) if chance(rng, 0.9) else pick(rng, bad))
    seen = set()
    out = []
    for k, v in opts:
        if k in seen and not chance(rng, 0.1):
            continue
        seen.add(k)
        out.append((k, v))
    return out


def render_options(rng, pairs):
    parts = []
    for k, v in pairs:
        key = sql_string(k) if chance(rng, 0.9) or not k or "-" in k else k
        val = v if (v.isdigit() and chance(rng, 0.2)) else sql_string(v)
        parts.append(f"{key} = {val}")
    return "(" + ", ".join(parts) + ")"


def column_list(rng, q):
    """A column list for the query, or None."""
    cols = list(q.cols)
    if not cols:
        return None, None
    elems = []
    order = cols[:]
    if chance(rng, 0.5):
        rng.shuffle(order)
    typed = chance(rng, 0.6)
    pk_inline = None
    key = q.key if q.key else None
    use_pk = key is not None and chance(rng, 0.5)
    if use_pk and len(key) == 1 and typed and chance(rng, 0.4):
        pk_inline = key[0]
    bad = rng.randrange(len(order)) if chance(rng, 0.12) else -1
    for i, (name, typ) in enumerate(order):
        e = f"`{name}`" if chance(rng, 0.05) else name
        if typed:
            t = pick(rng, FLINK_TYPES.get(typ, ["STRING"])[:-1]) if i != bad else \
                pick(rng, FLINK_TYPES.get(typ, ["STRING"])[-1:] + BAD_TYPES)
            e += " " + t
            if chance(rng, 0.05):
                e += " NOT NULL"
            if pk_inline == name:
                e += " PRIMARY KEY NOT ENFORCED"
        if chance(rng, 0.15):
            e += " COMMENT " + sql_string(pick(rng, ["the key", "it's a column", "ünïcode", ""]))
        elems.append(e)
    # mistakes a user makes
    r = rng.random()
    if r < 0.03 and len(elems) > 1:
        elems.pop(rng.randrange(len(elems)))
    elif r < 0.05:
        elems.append("nosuch_column INT")
    elif r < 0.06:
        elems.append(elems[0])
    nums = [n for n, t in cols if t in NUMERIC]
    if nums and chance(rng, 0.25):
        c = pick(rng, nums)
        elems.append(f"{c}_calc AS {c} * 10" + (" COMMENT 'computed'" if chance(rng, 0.3) else ""))
    texts = [n for n, t in cols if t == "text"]
    if texts and chance(rng, 0.1):
        elems.append(f"{pick(rng, texts)}_len AS length({pick(rng, texts)})")
    if chance(rng, 0.12):
        elems.append(pick(rng, ["refreshed_at TIMESTAMP_LTZ(3) METADATA FROM 'refresh_time' VIRTUAL",
                                "refreshed_at TIMESTAMP_LTZ(3) METADATA FROM 'refresh_time'",
                                "refresh_time TIMESTAMP_LTZ(3) METADATA VIRTUAL",
                                "off BIGINT METADATA FROM 'offset' VIRTUAL"]))
    if chance(rng, 0.06):
        ts = q.ts_cols[0] if q.ts_cols else (cols[0][0])
        elems.append(f"WATERMARK FOR {ts} AS {ts} - INTERVAL '5' SECOND")
    if use_pk and not pk_inline:
        cname = f"CONSTRAINT pk_{rng.randrange(100)} " if chance(rng, 0.3) else ""
        enforced = " NOT ENFORCED" if chance(rng, 0.95) else ""
        elems.append(f"{cname}PRIMARY KEY ({', '.join(key)}){enforced}")
    elif chance(rng, 0.04):
        elems.append(pick(rng, ["UNIQUE (" + cols[0][0] + ")", "PRIMARY KEY (nosuch) NOT ENFORCED",
                                f"PRIMARY KEY ({cols[0][0]}, {cols[0][0]}) NOT ENFORCED"]))
    if len(cols) == len(elems) and not typed and chance(rng, 0.1):
        elems = [n for n, _ in cols]
    return "(" + ", ".join(elems) + ")", use_pk


def create(rng, name, mt_names, or_alter=False, base=None):
    q = base if base is not None and chance(rng, 0.6) else query(rng, mt_names)
    if q is base and or_alter and q.extended and chance(rng, 0.5):
        q = Query(q.extended, q.cols, q.key, q.partition_cols, q.ts_cols)
    parts = ["CREATE OR ALTER MATERIALIZED TABLE" if or_alter else "CREATE MATERIALIZED TABLE", name]
    clauses = []
    partition_keys = []
    if q.cols and chance(rng, 0.45):
        cl, _ = column_list(rng, q)
        if cl:
            parts.append(cl)
    if chance(rng, 0.2):
        clauses.append("COMMENT " + sql_string(pick(rng, ["fuzzed table", "it's fresh", "ü", "x" * 300])))
    if q.cols and chance(rng, 0.12):
        cols = [n for n, _ in q.cols]
        bycols = (q.key or cols)[:2] if chance(rng, 0.8) else ["nosuch"]
        form = rng.randrange(5)
        if form == 0:
            clauses.append(f"DISTRIBUTED BY HASH ({', '.join(bycols)}) INTO {pick(rng, [1, 2, 4, 0, 300])} BUCKETS")
        elif form == 1:
            clauses.append(f"DISTRIBUTED BY RANGE ({bycols[0]}) INTO {pick(rng, [2, 3])} BUCKETS")
        elif form == 2:
            clauses.append(f"DISTRIBUTED BY ({', '.join(bycols)})")
        elif form == 3:
            clauses.append(f"DISTRIBUTED INTO {pick(rng, [2, 4])} BUCKETS")
        else:
            clauses.append(f"DISTRIBUTED BY HASH ({bycols[0]})")
    if q.partition_cols and chance(rng, 0.3):
        partition_keys = [c for c in q.partition_cols if chance(rng, 0.6)][:2] or q.partition_cols[:1]
        clauses.append(f"PARTITIONED BY ({', '.join(partition_keys)})")
    elif q.cols and chance(rng, 0.02):
        clauses.append(f"PARTITIONED BY ({pick(rng, q.cols)[0]}, nosuch)")
    pairs = option_pairs(rng, q, partition_keys)
    if pairs:
        clauses.append("WITH " + render_options(rng, pairs))
    if chance(rng, 0.8):
        clauses.append("FRESHNESS = " + freshness(rng))
    if chance(rng, 0.55):
        clauses.append("REFRESH_MODE = " + pick(rng, ["FULL", "CONTINUOUS", "FULL", "CONTINUOUS", "full",
                                                       "BATCH" if chance(rng, 0.05) else "FULL"]))
    if chance(rng, 0.85):
        # Flink's order; the extension takes any
        pass
    else:
        rng.shuffle(clauses)
    if chance(rng, 0.02):
        clauses.append(pick(rng, ["START_MODE = FROM_BEGINNING", "START_MODE = FROM_NOW(INTERVAL '1' HOUR)"]))
    parts += clauses
    parts.append("AS " + q.sql)
    return " ".join(parts)


def alter(rng, name, mt_names, base=None):
    r = rng.random()
    head = f"ALTER MATERIALIZED TABLE {name}"
    if r < 0.14:
        return f"{head} SUSPEND"
    if r < 0.26:
        if chance(rng, 0.4):
            opts = pick(rng, ["'sink.parallelism' = '4'", "'k' = 'v', 'sink.parallelism' = '1'",
                              "sink.parallelism = 2", "'sink.parallelism' = '0'"])
            return f"{head} RESUME WITH ({opts})"
        return f"{head} RESUME"
    if r < 0.42:
        return f"{head} REFRESH"
    if r < 0.50:
        specs = pick(rng, ["ds = '2024-01-03'", "region = 'north'", "ds = '2024-01-01', region = 'south'",
                           "category = 'toys'", "host = 'h1'", "nosuch = 'x'", "ds = 5", "ds = NULL",
                           "customer_id = '3'", "vip = 'true'", "ds = ''"])
        return f"{head} REFRESH PARTITION ({specs})"
    if r < 0.60:
        return f"{head} SET FRESHNESS = {freshness(rng)}"
    if r < 0.72:
        if base is not None and chance(rng, 0.7):
            return f"{head} AS {base.extended if base.extended and chance(rng, 0.8) else base.sql}"
        return f"{head} AS {query(rng, mt_names).sql}"
    if r < 0.82:
        el = pick(rng, ["extra_calc AS n * 2", "(extra_calc AS n + 1 COMMENT 'c', c2 AS 1)",
                        "refreshed_at TIMESTAMP_LTZ(3) METADATA FROM 'refresh_time' VIRTUAL",
                        "PRIMARY KEY (id) NOT ENFORCED", "CONSTRAINT pk PRIMARY KEY (ds, region) NOT ENFORCED",
                        "WATERMARK FOR created_at AS created_at - INTERVAL '1' SECOND",
                        "DISTRIBUTION BY HASH (id) INTO 4 BUCKETS", "new_col INT", "x AS y FIRST",
                        "z AS 1 AFTER id", "(a AS 1, a AS 2)"])
        return f"{head} ADD {el}"
    if r < 0.85:
        el = pick(rng, ["n COMMENT 'count'", "id COMMENT 'the key'", "(extra_calc AS n * 3)",
                        "PRIMARY KEY (id) NOT ENFORCED", "WATERMARK FOR created_at AS created_at",
                        "DISTRIBUTION INTO 2 BUCKETS"])
        return f"{head} MODIFY {el}"
    if r < 0.92:
        el = pick(rng, ["PRIMARY KEY", "CONSTRAINT pk", "WATERMARK", "DISTRIBUTION", "extra_calc",
                        "(extra_calc, c2)", "refreshed_at", "id", "ds"])
        return f"{head} DROP {el}"
    # valid in Flink's grammar (or its 2.x additions); not all implemented here
    return pick(rng, [f"{head} SET ('fillfactor' = '80')", f"{head} RESET ('fillfactor')",
                      f"{head} SET ('sink.parallelism' = '3', 'k' = 'v')", f"{head} RESET ('k', 'sink.parallelism')",
                      f"{head} RENAME TO t{rng.randrange(8)}",
                      f"{head} START_MODE = FROM_BEGINNING"])


def drop(rng, name):
    if chance(rng, 0.5):
        return f"DROP MATERIALIZED TABLE IF EXISTS {name}"
    return f"DROP MATERIALIZED TABLE {name}"


def misc(rng, name):
    """Statements Flink rejects or the 2.x additions (SHOW, DESCRIBE)."""
    return pick(rng, [
        f"CREATE TEMPORARY MATERIALIZED TABLE {name} AS SELECT 1 AS x",
        f"CREATE OR REPLACE MATERIALIZED TABLE {name} AS SELECT 1 AS x",
        f"DROP TEMPORARY MATERIALIZED TABLE {name}",
        f"CREATE MATERIALIZED TABLE {name} FRESHNESS = '1' SECOND AS SELECT 1 AS x",
        f"CREATE MATERIALIZED TABLE {name} (PRIMARY KEY (x)) AS SELECT 1 AS x",
        f"CREATE MATERIALIZED TABLE {name} (x INT, UNIQUE (x)) AS SELECT 1 AS x",
        f"CREATE MATERIALIZED TABLE {name} AS SELECT * FROM pg_temp.nosuch",
        f"CREATE MATERIALIZED TABLE {name} AS SELECT 1 AS x INTO fz.nothing",
        f"CREATE MATERIALIZED TABLE {name} AS INSERT INTO fz.events VALUES ('x')",
        f"CREATE MATERIALIZED TABLE {name} AS SELECT 1 AS x; SELECT 2",
        f"CREATE MATERIALIZED TABLE {name} AS VALUES (1), (2)",
        f"CREATE MATERIALIZED TABLE {name} AS TABLE fz.customers",
        f"CREATE MATERIALIZED TABLE {name} AS SELECT FROM fz.orders",
        f"CREATE MATERIALIZED TABLE {name} AS SELECT 1 AS a, 2 AS a",
        f"CREATE MATERIALIZED TABLE {name} AS SELECT pg_sleep(0.2)::text AS slept",
        "SHOW MATERIALIZED TABLES", "SHOW MATERIALIZED TABLES IN fm LIKE 't%'",
        f"SHOW CREATE MATERIALIZED TABLE {name}", f"DESCRIBE {name}", f"DESC EXTENDED {name}",
        f"CREATE MATERIALIZED VIEW {name} AS SELECT 1",
        "ALTER MATERIALIZED TABLE", "CREATE", ";", "", " ", "-- only a comment", "/* only a comment */",
    ])


class Names:
    """The table names a session uses: shared ones (races) and its own."""

    SHARED = ["fm.t0", "fm.t1", "fm.t2", "fm.t3", "fm.t4", "fm.t5", "fy.t6", "fy.t7"]
    ODD = ['fm."Odd Name"', 'fm."tëst_ünï"', "fm.`back``tick`", 'fm."select"',
           "fm." + "l" * 70, 'fm."' + "L" * 80 + '"', "fz.orders", "fz.v_orders", "fz.mv_sales",
           "pg_catalog.pg_class", "nosuch.t1", "fm.nosuch", "otherdb.fm.t1", "a.b.c.d", "fm.`t1`"]

    def __init__(self, session, dbname, seed=0):
        self.own = [f"fm.s{session}_a", f"fm.s{session}_b"]
        self.dbname = dbname
        # each name has a query of its own, the same in every session, which
        # CREATE often uses and ALTER ... AS extends by a column (schema
        # evolution that is allowed)
        self.bases = {}
        for n in self.SHARED + [f"fm.s{k}_{x}" for k in range(64) for x in "ab"]:
            r = random.Random(f"{seed}:base:{n}")
            self.bases[n] = pick(r, [q_group, q_group, q_projection])(r)

    def all_mt(self):
        return self.SHARED + self.own

    def pick(self, rng):
        """A name as written, and the base query of the table it names."""
        r = rng.random()
        if r < 0.62:
            n = pick(rng, self.SHARED)
        elif r < 0.93:
            n = pick(rng, self.own)
        else:
            return pick(rng, self.ODD), None
        return self.render(rng, n), self.bases.get(n)

    def render(self, rng, n):
        schema, table = n.split(".")
        r = rng.random()
        if r < 0.55:
            return n
        if r < 0.70 and schema == "fm":
            return table                       # search_path starts with fm
        if r < 0.78:
            return f"{self.dbname}.{n}"
        if r < 0.86:
            return f"`{schema}`.`{table}`"
        if r < 0.94:
            return f'"{schema}"."{table}"'
        return n.upper()


def flink_statement(rng, names):
    """One Flink statement: (kind, text)."""
    name, base = names.pick(rng)
    mts = names.all_mt()
    r = rng.random()
    if r < 0.32:
        return "create", create(rng, name, mts, base=base)
    if r < 0.41:
        return "create_or_alter", create(rng, name, mts, or_alter=True, base=base)
    if r < 0.87:
        return "alter", alter(rng, name, mts, base=base)
    if r < 0.97:
        return "drop", drop(rng, name)
    return "misc", misc(rng, name)


def flink_text(rng, names):
    """The text of one execute() call: one statement or several."""
    kind, text = flink_statement(rng, names)
    if chance(rng, 0.1):
        texts = [text]
        for _ in range(rng.randrange(1, 3)):
            texts.append(flink_statement(rng, names)[1])
        sep = pick(rng, [";\n", "; ", ";;", " ;\n  "])
        text = sep.join(texts) + (";" if chance(rng, 0.3) else "")
        kind = "multi"
    if chance(rng, 0.1):
        text = pick(rng, ["  ", "\n", "-- leading comment\n", "/* c */ "]) + text
    return kind, text
