#!/usr/bin/python3
"""test/clients/clients.py: the psycopg2 part of clients.sh.

Both spellings from psycopg2: the Flink statements through
materialized_table.execute() (as a bound parameter) and the native
MATERIALIZED VIEW statements; their command tags, rows and error positions.
Connects with the libpq environment (PGHOST, PGPORT, ...).  Exits non-zero
on the first check that fails.
"""
import sys

import psycopg2

SCHEMA = "clients_py"


def check(what, got, want):
    if got != want:
        print(f"FAILED {what}: got {got!r}, want {want!r}")
        sys.exit(1)


def main():
    conn = psycopg2.connect("")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("SET client_min_messages = warning")
    cur.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    cur.execute("RESET client_min_messages")
    cur.execute(f"CREATE SCHEMA {SCHEMA}")
    cur.execute(f"CREATE TABLE {SCHEMA}.src (id int PRIMARY KEY, g text, v int)")
    cur.execute(f"INSERT INTO {SCHEMA}.src VALUES (1, 'a', 10), (2, 'a', 5), (3, 'b', 7)")

    # the Flink spelling, its text a bound parameter
    flink = (f"CREATE MATERIALIZED TABLE {SCHEMA}.flink_totals FRESHNESS = INTERVAL '1' HOUR "
             f"AS SELECT g, sum(v) AS total FROM {SCHEMA}.src GROUP BY g")
    cur.execute("SELECT materialized_table.execute(%s)", (flink,))
    check("execute() tag", cur.fetchone()[0], "CREATE MATERIALIZED TABLE")

    # the native spelling: PostgreSQL's own command tags
    cur.execute(f"CREATE MATERIALIZED VIEW {SCHEMA}.native_totals "
                f"WITH (materialized_table.freshness = '1 hour') "
                f"AS SELECT g, sum(v) AS total FROM {SCHEMA}.src GROUP BY g")
    check("CREATE tag", cur.statusmessage, "CREATE MATERIALIZED VIEW")

    cur.execute(f"INSERT INTO {SCHEMA}.src VALUES (4, 'c', 1)")
    cur.execute("SELECT materialized_table.execute(%s)",
                (f"ALTER MATERIALIZED TABLE {SCHEMA}.flink_totals REFRESH",))
    cur.execute(f"REFRESH MATERIALIZED VIEW {SCHEMA}.native_totals")
    check("REFRESH tag", cur.statusmessage, "REFRESH MATERIALIZED VIEW")
    cur.execute(f"SELECT g, total FROM {SCHEMA}.flink_totals ORDER BY g")
    flink_rows = cur.fetchall()
    cur.execute(f"SELECT g, total FROM {SCHEMA}.native_totals ORDER BY g")
    check("rows", cur.fetchall(), flink_rows)
    check("rows", flink_rows, [("a", 15), ("b", 7), ("c", 1)])

    # the statements that return rows
    cur.execute("SELECT * FROM materialized_table.execute_query(%s)",
                (f"DESCRIBE {SCHEMA}.native_totals",))
    check("DESCRIBE columns", [d.name for d in cur.description],
          ["name", "type", "null", "key", "extras", "watermark", "comment"])
    check("DESCRIBE rows", [(r[0], r[1]) for r in cur.fetchall()], [("g", "text"), ("total", "bigint")])
    cur.execute("SELECT name FROM materialized_table.execute_query(%s)",
                (f"SHOW MATERIALIZED TABLES FROM {SCHEMA}",))
    check("SHOW", cur.fetchall(), [("flink_totals",), ("native_totals",)])

    # ALTER both ways
    cur.execute(f"ALTER MATERIALIZED VIEW {SCHEMA}.native_totals SET (materialized_table.freshness = '2 hours')")
    check("ALTER tag", cur.statusmessage, "ALTER MATERIALIZED VIEW")
    cur.execute("SELECT materialized_table.execute(%s)",
                (f"ALTER MATERIALIZED TABLE {SCHEMA}.flink_totals SET FRESHNESS = INTERVAL '2' HOUR",))
    cur.execute("SELECT count(*) FROM materialized_table.materialized_tables "
                "WHERE table_name::text LIKE %s AND freshness = interval '2 hours'", (SCHEMA + ".%",))
    check("freshness", cur.fetchone()[0], 2)

    # errors: a position into the native statement, under the option
    native_bad = (f"CREATE MATERIALIZED VIEW {SCHEMA}.bad WITH (materialized_table.freshness = '5 hours', "
                  f"materialized_table.refresh_mode = 'full') AS SELECT 1 AS a")
    try:
        cur.execute(native_bad)
        check("native error", "no error", "an error")
    except psycopg2.Error as e:
        check("native SQLSTATE", e.pgcode, "22023")
        check("native position", e.diag.statement_position,
              str(native_bad.index("materialized_table.freshness") + 1))
        check("native internal position", e.diag.internal_position, None)
    # ... and an internal position into execute()'s text
    flink_bad = (f"CREATE MATERIALIZED TABLE {SCHEMA}.bad FRESHNESS = INTERVAL '5' HOUR "
                 f"REFRESH_MODE = FULL AS SELECT 1 AS a")
    try:
        cur.execute("SELECT materialized_table.execute(%s)", (flink_bad,))
        check("execute() error", "no error", "an error")
    except psycopg2.Error as e:
        check("execute() SQLSTATE", e.pgcode, "22023")
        check("execute() internal position", e.diag.internal_position,
              str(flink_bad.index("INTERVAL") + 1))
        check("execute() internal query", e.diag.internal_query, flink_bad)
        check("execute() position", e.diag.statement_position, None)

    # DROP both ways
    cur.execute(f"DROP MATERIALIZED VIEW {SCHEMA}.native_totals")
    check("DROP tag", cur.statusmessage, "DROP MATERIALIZED VIEW")
    cur.execute("SELECT materialized_table.execute(%s)",
                (f"DROP MATERIALIZED TABLE {SCHEMA}.flink_totals",))
    check("execute() DROP tag", cur.fetchone()[0], "DROP MATERIALIZED TABLE")
    cur.execute("SELECT count(*) FROM materialized_table.materialized_tables "
                "WHERE table_name::text LIKE %s", (SCHEMA + ".%",))
    check("dropped", cur.fetchone()[0], 0)
    cur.execute(f"DROP SCHEMA {SCHEMA} CASCADE")
    conn.close()


if __name__ == "__main__":
    main()
