"""The sources of the differential test, their data and their changes.

Five sources and a view over two of them, in one schema (written "{s}" in
the SQL below, replaced by the schema's name), small enough that a query
over all of them is quick, with NULLs, duplicates and skew (a third of the
small integers are 0), a few NaNs among the numerics of t1 and t2:

    t1 (id PK, a, b, n numeric(10,2), m numeric, s, d date, ts timestamp)
    t2 (k, a, x numeric, s, tz timestamptz)        no key, duplicate rows
    t3 (id PK, t1_id, v, n numeric(8,3), s, d date)
    p  (id, g, v numeric(6,1), s)                  inheritance parent, no key,
         children p_c1 (same columns, id PK) and p_c2 (plus extra text)
    pt (id, k, d date, amt numeric(12,2) NOT NULL, PK (id, d))
         partitioned by range of d: pt_jan, pt_feb, pt_def (default)
    v  (id, t1_id, v, n, a, s)                     a view: t3 joined with t1

Columns of the "small" domain (t1.a, t1.b, t2.k, t2.a, t3.v, p.g, pt.k,
v.v, v.a) hold 0 - 9 and join with each other; the "id" domain (t1.id,
t3.t1_id, t3.id, p.id, pt.id, v.id, v.t1_id) joins with itself, and with a
small column where a dimension (t1, t3) is joined by its key.  TABLES
describes the columns for the query generator (diff_query.py).

batch(rng, ids) returns one change batch: a few transactions of INSERT,
UPDATE (of keys too: new ids, a row moved to another partition or group;
some that change nothing), DELETE, TRUNCATE (then a refill) and now and
then a bulk change (most of a table updated, or 50 - 200 rows inserted) or
a change of the trees (p_c2 leaves p or comes back, pt_feb is detached or
attached again), a sixth rolled back and some with a savepoint rolled back.  Everything is
drawn from rng alone, never from the database, so that a seed always gives
the same statements.
"""

# kinds: int, num (numeric without scale), numf (numeric with a scale),
# text, date, ts, tstz; domains: small, id, or None
TABLES = {
    "t1": {"pk": ["id"], "cols": [("id", "int", "id"), ("a", "int", "small"), ("b", "int", "small"),
                                  ("n", "numf", None), ("m", "num", None), ("s", "text", None),
                                  ("d", "date", None), ("ts", "ts", None)]},
    "t2": {"pk": [], "cols": [("k", "int", "small"), ("a", "int", "small"), ("x", "num", None),
                              ("s", "text", None), ("tz", "tstz", None)]},
    "t3": {"pk": ["id"], "cols": [("id", "int", "id"), ("t1_id", "int", "id"), ("v", "int", "small"),
                                  ("n", "numf", None), ("s", "text", None), ("d", "date", None)]},
    "p": {"pk": [], "cols": [("id", "int", "id"), ("g", "int", "small"), ("v", "numf", None),
                             ("s", "text", None)]},
    "pt": {"pk": ["id", "d"], "cols": [("id", "int", "id"), ("k", "int", "small"), ("d", "date", None),
                                       ("amt", "numf", None)]},
    "v": {"pk": [], "cols": [("id", "int", "id"), ("t1_id", "int", "id"), ("v", "int", "small"),
                             ("n", "numf", None), ("a", "int", "small"), ("s", "text", None)]},
}

# the tags of a query reading each source
SOURCE_TAGS = {"t1": "src:t1", "t2": "src:t2", "t3": "src:t3", "p": "src:inh", "pt": "src:part",
               "v": "src:view"}

DDL = """
CREATE SCHEMA {s};
CREATE TABLE {s}.t1 (id int PRIMARY KEY, a int, b int, n numeric(10,2), m numeric, s text,
                     d date, ts timestamp);
CREATE TABLE {s}.t2 (k int, a int, x numeric, s text, tz timestamptz);
CREATE TABLE {s}.t3 (id int PRIMARY KEY, t1_id int, v int, n numeric(8,3), s text, d date);
CREATE TABLE {s}.p (id int, g int, v numeric(6,1), s text);
CREATE TABLE {s}.p_c1 (PRIMARY KEY (id)) INHERITS ({s}.p);
CREATE TABLE {s}.p_c2 (extra text) INHERITS ({s}.p);
CREATE TABLE {s}.pt (id int, k int, d date, amt numeric(12,2) NOT NULL, PRIMARY KEY (id, d))
    PARTITION BY RANGE (d);
CREATE TABLE {s}.pt_jan PARTITION OF {s}.pt FOR VALUES FROM ('2024-01-01') TO ('2024-02-01');
CREATE TABLE {s}.pt_feb PARTITION OF {s}.pt FOR VALUES FROM ('2024-02-01') TO ('2024-03-01');
CREATE TABLE {s}.pt_def PARTITION OF {s}.pt DEFAULT;
CREATE VIEW {s}.v AS SELECT t3.id, t3.t1_id, t3.v, t3.n, t1.a, t1.s FROM {s}.t3 JOIN {s}.t1 ON t1.id = t3.t1_id
    WHERE t3.v IS DISTINCT FROM 9;
"""

# physical tables, each with its columns (for dumps of the data)
PHYSICAL = {
    "t1": "id, a, b, n, m, s, d, ts", "t2": "k, a, x, s, tz", "t3": "id, t1_id, v, n, s, d",
    "p": "id, g, v, s", "p_c1": "id, g, v, s", "p_c2": "id, g, v, s, extra",
    "pt": "id, k, d, amt",
}
# where dump_data reads each one (ONLY: the parent's own rows; pt through its partitions)
PHYSICAL_READ = {"p": "ONLY {s}.p", "p_c1": "{s}.p_c1", "p_c2": "{s}.p_c2", "pt": "{s}.pt",
                 "t1": "{s}.t1", "t2": "{s}.t2", "t3": "{s}.t3"}

TEXTS = ["a", "a", "A", "b", "B", "ab", "Ab", "c", "", "x y"]
# The values of the numeric columns of no declared scale (t1.m, t2.x): each
# value is written one way, and so are their negations (UPDATE ... SET m =
# -m), so that a group of them, DISTINCT, min and max have one display (a
# query grouping 2.5 with 2.50 could show either).
NUMS = ["1.5", "2.25", "0.125", "3", "10.0", "-1.75", "2.50", "7"]
# values that come with changes only: groups the initial data does not have
NUMS_LATER = ["4.50", "0.10", "20.0", "-3.250"]
NUMS_SQL = "(ARRAY[" + ", ".join(NUMS) + ", NULL])"


def q(v):
    """A SQL literal of a Python value (None, int, str)."""
    if v is None:
        return "NULL"
    if isinstance(v, int):
        return str(v)
    return "'" + v.replace("'", "''") + "'"


def small(rng, null=0.1):
    """A skewed small integer: NULL 10%, 0 a third, 1 a sixth, else 2 - 9."""
    r = rng.random()
    if r < null:
        return None
    if r < 0.40:
        return 0
    if r < 0.55:
        return 1
    return rng.randint(2, 9)


def text(rng, null=0.12):
    return None if rng.random() < null else rng.choice(TEXTS)


def num(rng, null=0.1, initial=False):
    r = rng.random()
    if r < null:
        return None
    if r < null + 0.03:
        return "NaN"                 # a sum of it is NaN (the engine recomputes)
    if not initial and r > 0.75:
        return rng.choice(NUMS_LATER)
    return rng.choice(NUMS)


def numf(rng, scale, hi, null=0.1, nan=0.0):
    r = rng.random()
    if r < null:
        return None
    if r < null + nan:
        return "NaN"
    v = rng.randint(-hi, hi * 4) / (10 ** scale)
    return f"{v:.{scale}f}"


def day(rng, null=0.1):
    """A date of Jan - Mar 2024 (pt's three partitions), some repeated."""
    if rng.random() < null:
        return None
    return f"2024-{rng.choice([1, 1, 2, 3]):02d}-{rng.choice([1, 5, 5, 15, 28]):02d}"


def stamp(rng, tz=False, null=0.1):
    if rng.random() < null:
        return None
    return (f"2024-{rng.choice([1, 2]):02d}-{rng.choice([1, 2, 15]):02d} "
            f"{rng.choice([0, 0, 6, 13, 23]):02d}:{rng.choice([0, 30]):02d}:00" + ("+00" if tz else ""))


class Ids:
    """The next fresh id of each id domain: new rows and changed keys."""

    def __init__(self):
        self.next = {"t1": 41, "t3": 41, "p": 41, "pt": 41}

    def take(self, table):
        v = self.next[table]
        self.next[table] += 1
        return v


def row(rng, table, ident, initial=False):
    """The values of a new row of a physical table (initial: of the initial data)."""
    if table == "t1":
        return [ident, small(rng), small(rng, 0.3), numf(rng, 2, 100, nan=0.02), num(rng, initial=initial),
                text(rng), day(rng),
                stamp(rng)]
    if table == "t2":
        return [small(rng), small(rng), num(rng, initial=initial), text(rng), stamp(rng, tz=True)]
    if table == "t3":
        t1_id = None if rng.random() < 0.1 else rng.randint(1, 48)
        return [ident, t1_id, small(rng), numf(rng, 3, 20), text(rng), day(rng)]
    if table in ("p", "p_c1", "p_c2"):
        vals = [ident, small(rng), numf(rng, 1, 50), text(rng)]
        if table == "p_c2":
            vals.append(rng.choice([None, "e1", "e2"]))
        return vals
    if table == "pt":
        return [ident, small(rng), day(rng, null=0), numf(rng, 2, 500, null=0)]
    raise ValueError(table)


def insert(table, rows, conflict=False):
    if table == "tree":
        # the shape of the inheritance and partition trees (see dump_data)
        return "; ".join(r[0] for r in rows)
    return (f"INSERT INTO {{s}}.{table} ({PHYSICAL[table]}) VALUES "
            + ", ".join("(" + ", ".join(q(v) for v in r) + ")" for r in rows)
            + (" ON CONFLICT DO NOTHING" if conflict else ""))


def initial_data(rng):
    """The statements that fill the sources: ids 1 - 40 of each."""
    out = []
    out.append(insert("t1", [row(rng, "t1", i, True) for i in range(1, 41)]))
    rows = [row(rng, "t2", None, True) for _ in range(32)]
    rows += [list(rng.choice(rows)) for _ in range(8)]    # exact duplicates
    out.append(insert("t2", rows))
    out.append(insert("t3", [row(rng, "t3", i) for i in range(1, 41)]))
    out.append(insert("p", [row(rng, "p", i) for i in range(1, 11)]))
    out.append(insert("p_c1", [row(rng, "p_c1", i) for i in range(11, 26)]))
    out.append(insert("p_c2", [row(rng, "p_c2", i) for i in range(26, 41)]))
    out.append(insert("pt", [row(rng, "pt", i) for i in range(1, 41)]))
    return out


# ---------------------------------------------------------------------------
# Changes
# ---------------------------------------------------------------------------

def where_of(rng, table, ids):
    """A predicate on a physical table's rows: one row, a group, NULLs."""
    hi = ids.next.get({"p_c1": "p", "p_c2": "p"}.get(table, table), 41)
    col_small = {"t1": "a", "t2": "k", "t3": "v", "p": "g", "p_c1": "g", "p_c2": "g", "pt": "k"}[table]
    r = rng.random()
    if table != "t2" and r < 0.45:
        return f"id = {rng.randint(1, hi)}"
    if r < 0.6:
        return f"{col_small} IS NULL"
    if r < 0.85:
        return f"{col_small} = {small(rng, 0)}"
    if table == "t2":
        return f"k = {small(rng, 0)} AND a = {small(rng, 0)}"
    return f"id BETWEEN {(lo := rng.randint(1, hi))} AND {lo + rng.randint(0, 3)}"


def set_of(rng, table, ids):
    """SET clauses of an UPDATE: values, NULLs, group and key changes."""
    choices = {
        "t1": [("a", lambda: q(small(rng))), ("a", lambda: "a + 1"), ("b", lambda: q(small(rng, 0.3))),
               ("n", lambda: q(numf(rng, 2, 100, nan=0.02))), ("n", lambda: "n + 1"), ("m", lambda: q(num(rng))),
               ("s", lambda: q(text(rng))), ("s", lambda: "s"), ("d", lambda: q(day(rng))),
               ("ts", lambda: q(stamp(rng))),
               ("id", lambda: str(ids.take("t1")))],
        "t2": [("k", lambda: q(small(rng))), ("a", lambda: q(small(rng))), ("x", lambda: q(num(rng))),
               ("x", lambda: "x"),
               ("s", lambda: q(text(rng))), ("tz", lambda: q(stamp(rng, tz=True)))],
        "t3": [("t1_id", lambda: q(rng.randint(1, 48))), ("t1_id", lambda: "NULL"),
               ("v", lambda: q(small(rng))), ("n", lambda: q(numf(rng, 3, 20))), ("s", lambda: q(text(rng))),
               ("d", lambda: q(day(rng))), ("id", lambda: str(ids.take("t3")))],
        "p": [("g", lambda: q(small(rng))), ("v", lambda: "v + 1"), ("v", lambda: q(numf(rng, 1, 50))),
              ("s", lambda: q(text(rng)))],
        "pt": [("k", lambda: q(small(rng))), ("amt", lambda: q(numf(rng, 2, 500, null=0))), ("amt", lambda: "amt"),
               ("d", lambda: q(day(rng, null=0))), ("d", lambda: "d + 31"), ("id", lambda: str(ids.take("pt")))],
    }
    base = {"p_c1": "p", "p_c2": "p"}.get(table, table)
    opts = choices[base]
    if table == "p_c1":
        opts = opts + [("id", lambda: str(ids.take("p")))]
    picked = []
    for _ in range(1 if rng.random() < 0.7 else 2):
        col, val = rng.choice(opts)
        if col not in [c for c, _ in picked]:
            picked.append((col, val()))
    # a key changes on one row only (no collisions)
    if any(c == "id" for c, _ in picked):
        return ", ".join(f"{c} = {v}" for c, v in picked), "one"
    return ", ".join(f"{c} = {v}" for c, v in picked), None


def bulk(rng, table, ids):
    """A statement changing many rows at once: most of a table, 50 - 200 new rows, or
    600 - 1500 new rows deleted again in the same statement but for a few."""
    base = {"p_c1": "p", "p_c2": "p"}.get(table, table)
    target = "{s}." + table
    x = rng.random()
    if x < 0.4:
        sets = {"t1": ["n = n + 1", "a = b", "s = upper(s)", "m = -m"],
                "t2": ["x = -x", "k = a", "a = (a + 1) % 10"],
                "t3": ["v = (v + 1) % 10", "n = n * -1", "t1_id = t1_id + 1"],
                "p": ["g = (g + 3) % 10", "v = v + 0.5"], "pt": ["amt = amt + 1", "k = k % 3"]}[base]
        cond = rng.choice(["", " WHERE id % 2 = 0" if base != "t2" else " WHERE k % 2 = 0"])
        return f"UPDATE {target} SET {rng.choice(sets)}{cond}"
    churn = x > 0.7
    if churn and table == "t2":
        table, base, target = "t3", "t3", "{s}.t3"      # (rows of t2 have no id to delete them by)
    n = rng.choice([600, 1000, 1500]) if churn else rng.choice([50, 100, 200])
    if base in ids.next:
        lo = ids.next[base]
        ids.next[base] += n
    else:
        lo = 1
    # values drawn from g alone: the same seed, the same rows
    vals = {
        "t1": f"g, g % 10, nullif(g % 7, 0), (g % 50) * 1.25, {NUMS_SQL}[g % 9 + 1]::numeric, "
              "(ARRAY['a', 'b', 'ab', NULL])[g % 4 + 1], "
              "date '2024-01-01' + g % 90, timestamp '2024-01-01' + (g % 40) * interval '7 hours'",
        "t2": f"g % 10, g % 7, {NUMS_SQL}[g % 9 + 1]::numeric, (ARRAY['a', 'B', NULL])[g % 3 + 1], "
              "timestamptz '2024-01-01 00:00+00' + (g % 30) * interval '9 hours'",
        "t3": "g, CASE WHEN g % 5 = 0 THEN NULL ELSE g % 48 END, g % 10, (g % 40) * 0.125, "
              "(ARRAY['A', 'ab', NULL])[g % 3 + 1], date '2024-01-01' + g % 80",
        "p": "g, g % 10, (g % 30) * 0.5, (ARRAY['a', 'b', NULL])[g % 3 + 1]",
        "p_c1": "g, g % 10, (g % 30) * 0.5, (ARRAY['a', 'b', NULL])[g % 3 + 1]",
        "p_c2": "g, g % 10, (g % 30) * 0.5, (ARRAY['a', 'b', NULL])[g % 3 + 1], 'e' || g % 3",
        "pt": "g, g % 10, date '2024-01-01' + g % 85, (g % 100) * 2.5",
    }[table]
    sql = (f"INSERT INTO {target} ({PHYSICAL[table]}) SELECT {vals} FROM generate_series({lo}, {lo + n - 1}) g"
           + (" ON CONFLICT DO NOTHING" if table in ("t1", "t3", "p_c1", "pt") else ""))
    if churn:
        # a transaction larger than logical_decoding_work_mem (test/diff/run.sh
        # sets 64kB: decoding spills it to disk) that leaves a few rows
        keep = rng.choice([0, 3])
        sql += f"; DELETE FROM {target} WHERE id BETWEEN {lo} AND {lo + n - 1 - keep}"
    return sql


def tree_change(rng):
    """A child leaves the inheritance tree or comes back; a partition is detached or attached again.

    Written as DO blocks that look at the tree, so that a change rolled back
    does not put the next one out of step.  Rows of February inserted while
    pt_feb is out went to pt_def: attaching it again moves them first (a key
    that both hold makes the transaction fail, and roll back)."""
    if rng.random() < 0.5:
        return ("DO $$ BEGIN IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = '{s}.p_c2'::regclass) "
                "THEN ALTER TABLE {s}.p_c2 NO INHERIT {s}.p; ELSE ALTER TABLE {s}.p_c2 INHERIT {s}.p; "
                "END IF; END $$")
    return ("DO $$ BEGIN IF EXISTS (SELECT FROM pg_inherits WHERE inhrelid = '{s}.pt_feb'::regclass) "
            "THEN ALTER TABLE {s}.pt DETACH PARTITION {s}.pt_feb; "
            "ELSE WITH moved AS (DELETE FROM {s}.pt_def WHERE d >= '2024-02-01' AND d < '2024-03-01' "
            "RETURNING id, k, d, amt) INSERT INTO {s}.pt_feb (id, k, d, amt) SELECT * FROM moved; "
            "ALTER TABLE {s}.pt ATTACH PARTITION {s}.pt_feb FOR VALUES FROM ('2024-02-01') TO ('2024-03-01'); "
            "END IF; END $$")


def statement(rng, ids):
    """One change: (sql, tags)."""
    table = rng.choices(["t1", "t2", "t3", "p", "p_c1", "p_c2", "pt"],
                        weights=[5, 4, 4, 1, 2, 2, 4])[0]
    kind = rng.choices(["insert", "update", "delete", "truncate", "bulk", "tree"],
                       weights=[40, 35, 21, 4, 5, 2])[0]
    tag = f"chg:{kind}:{table}"
    if kind == "bulk":
        return bulk(rng, table, ids), tag
    if kind == "tree":
        return tree_change(rng), "chg:tree"
    if kind == "insert":
        n = rng.choice([1, 1, 2, 3])
        if table == "t2" and rng.random() < 0.3:
            # duplicates of existing rows
            return (f"INSERT INTO {{s}}.t2 SELECT * FROM {{s}}.t2 WHERE k = {small(rng, 0)} "
                    f"AND a = {small(rng, 0)}"), tag
        idt = {"p_c1": "p", "p_c2": "p"}.get(table, table)
        rows = [row(rng, table, ids.take(idt) if idt in ids.next else None) for _ in range(n)]
        return insert(table, rows, conflict=table in ("t1", "t3", "p_c1", "pt")), tag
    if kind == "update":
        sets, one = set_of(rng, table, ids)
        target = {"p": "{s}.p" if rng.random() < 0.6 else "ONLY {s}.p"}.get(table, "{s}." + table)
        if one:
            if table == "t2":
                return f"UPDATE {target} SET {sets} WHERE k = {small(rng, 0)}", tag
            return f"UPDATE {target} SET {sets} WHERE id = {rng.randint(1, ids.next[{'p_c1': 'p'}.get(table, table)] - 1)}", tag + ":key"
        return f"UPDATE {target} SET {sets} WHERE {where_of(rng, table, ids)}", tag
    if kind == "delete":
        if table == "t2" and rng.random() < 0.4:
            # one of several identical rows
            return (f"DELETE FROM {{s}}.t2 WHERE ctid = (SELECT ctid FROM {{s}}.t2 WHERE k = {small(rng, 0)} "
                    f"ORDER BY a, x, s, tz LIMIT 1)"), tag
        target = {"p": "{s}.p" if rng.random() < 0.6 else "ONLY {s}.p"}.get(table, "{s}." + table)
        return f"DELETE FROM {target} WHERE {where_of(rng, table, ids)}", tag
    # TRUNCATE and a refill
    target = {"pt": rng.choice(["{s}.pt", "{s}.pt_jan", "{s}.pt_def"]),
              "p": rng.choice(["{s}.p", "ONLY {s}.p"])}.get(table, "{s}." + table)
    phys = {"{s}.pt_jan": "pt", "{s}.pt_def": "pt", "ONLY {s}.p": "p"}.get(target, table)
    idt = {"p_c1": "p", "p_c2": "p"}.get(phys, phys)
    refill = [row(rng, phys, ids.take(idt) if idt in ids.next else None) for _ in range(rng.randint(1, 4))]
    return f"TRUNCATE {target}; " + insert(phys, refill, conflict=phys != "t2"), tag


class Txn:
    """A transaction of a batch: statements (SQL with {s}), those of them
    undone by ROLLBACK TO SAVEPOINT, and how it ends: COMMIT, ROLLBACK,
    PREPARE COMMIT or PREPARE ROLLBACK (PREPARE TRANSACTION, then COMMIT /
    ROLLBACK PREPARED)."""

    def __init__(self, statements, tags, end, undone=()):
        self.statements = statements
        self.tags = tags
        self.end = end
        self.undone = set(undone)
        self.result = None               # the error that rolled it back, if one

    def subset(self, keep):
        keep = sorted(keep)
        return Txn([self.statements[i] for i in keep], [self.tags[i] for i in keep], self.end,
                   [j for j, i in enumerate(keep) if i in self.undone])

    def sql(self, schema):
        out = ["BEGIN;"]
        for i, st in enumerate(self.statements):
            if i in self.undone:
                out.append("SAVEPOINT sp;")
            out.append(st.replace("{s}", schema) + ";")
            if i in self.undone:
                out.append("ROLLBACK TO SAVEPOINT sp;")
        if self.end in ("COMMIT", "ROLLBACK"):
            out.append(self.end + ";")
        else:
            out.append("PREPARE TRANSACTION 'mtd';")
            out.append(("COMMIT" if self.end == "PREPARE COMMIT" else "ROLLBACK") + " PREPARED 'mtd';")
        if self.result:
            out.append(f"-- (rolled back by an error: {self.result})")
        return "\n".join(out)


def batch(rng, ids):
    """A change batch: 2 - 6 transactions."""
    txns = []
    for _ in range(rng.randint(2, 6)):
        sts, tags = [], []
        for _ in range(rng.choice([1, 1, 2, 3, 4])):
            s, t = statement(rng, ids)
            sts.append(s)
            tags.append(t)
        x = rng.random()
        end = "ROLLBACK" if x < 0.14 else "PREPARE COMMIT" if x < 0.18 else \
            "PREPARE ROLLBACK" if x < 0.20 else "COMMIT"
        undone = [rng.randrange(len(sts))] if end == "COMMIT" and len(sts) > 1 and rng.random() < 0.2 else []
        txns.append(Txn(sts, tags, end, undone))
    return txns


def tree_changes(cur, schema):
    """The statements that give fresh sources the trees' shape now: p_c2 out of p, pt_feb detached."""
    cur.execute("SELECT EXISTS (SELECT FROM pg_inherits WHERE inhrelid = %s::regclass), "
                "EXISTS (SELECT FROM pg_inherits WHERE inhrelid = %s::regclass)",
                (f"{schema}.p_c2", f"{schema}.pt_feb"))
    p_c2_in, feb_in = cur.fetchone()
    out = []
    if not p_c2_in:
        out.append(["ALTER TABLE {s}.p_c2 NO INHERIT {s}.p"])
    if not feb_in:
        out.append(["ALTER TABLE {s}.pt DETACH PARTITION {s}.pt_feb"])
    return out, feb_in


def dump_data(cur, schema):
    """The sources' current rows (with {s}), in a fixed order: [(table, rows)], the
    trees' shape first (table "tree": statements), as create_sources and the
    reproducers replay them."""
    tree, feb_in = tree_changes(cur, schema)
    out = [("tree", tree)] if tree else []
    for table, cols in list(PHYSICAL.items()) + ([] if feb_in else [("pt_feb", PHYSICAL["pt"])]):
        cur.execute(f"SELECT {', '.join(c + '::text' for c in cols.split(', '))} "
                    f"FROM {PHYSICAL_READ.get(table, '{s}.' + table).replace('{s}', schema)} ORDER BY {cols}")
        rows = cur.fetchall()
        if rows:
            out.append((table, [list(r) for r in rows]))
    return out
