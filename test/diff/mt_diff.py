#!/usr/bin/python3
"""mt_diff.py: the randomized differential test of CONTINUOUS materialized tables.

    /usr/bin/python3 test/diff/mt_diff.py --host DIR --port PORT --dbname DB [--log DIR/server.log]
    /usr/bin/python3 test/diff/mt_diff.py --list                 # print the queries of the seed
    /usr/bin/python3 test/diff/mt_diff.py --only q0012,q0040 ...  # run those alone

(test/diff/run.sh starts a cluster of its own and runs this against it.)

Random queries (diff_query.py: joins of 2 - 4 tables, outer, self and
non-equi joins, EXISTS / IN / NOT IN / scalar subqueries, aggregates with
DISTINCT / FILTER / HAVING, GROUP BY expressions, global aggregates,
expressions over aggregates, the shapes the DELTAS engine keeps (count,
sum, avg of columns and expressions, numeric sums of no declared scale,
over one source or a fact joined with dimensions, one read twice),
GROUPING SETS / ROLLUP / CUBE, LATERAL, DISTINCT [ON], set operations,
window functions, ORDER BY ... LIMIT, subqueries and CTEs in FROM, a view,
tables reading tables) over the sources of diff_schema.py (NULLs,
duplicates, skew; keys or none; an inheritance parent and a partitioned
table) each become a 1-second CONTINUOUS materialized table.  Tables are
created in groups (MT_DIFF_GROUP, on fresh sources in schema mtd); each
group then gets MT_DIFF_BATCHES change batches (INSERT / UPDATE / DELETE /
TRUNCATE and bulk changes in several transactions, some rolled back or
prepared), and after each one every table is checked against its query
once the worker has caught up with the batch:

  caught up: the worker's horizon (continuous_horizon(): every change
      committed before it is applied or kept) is past the batch's commit,
      and no table keeps work for later (continuous_state: synced, no
      needs_full, no pending_since) -- once per level of the lineage: a
      table reading a table sees that table's writes a cycle later, so the
      wait is repeated from a commit made after the level below caught up
      (that commit also flushes the worker's asynchronous commits);
  equal: EXCEPT ALL both ways as the query's types (floats rounded to 10
      decimals), then the same on the rows' text (a numeric scale a
      recompute would not give, 2.50 for 2.5, shows there); ORDER BY ...
      LIMIT and DISTINCT ON are checked as one valid answer among ties
      (see diff_query.py).

A table that fails (rows differ, a maintenance cycle failed, it never
caught up) is reported with its query, maintenance, the batch that broke it
and the differing rows, and is not checked again; its reproducer (a psql
script: sources, the data before the batch, the table, the batch, the
check) is written to --out.  Failures are then shrunk (--minimize,
default on; MT_DIFF_MINIMIZE_SECONDS in all): the batch's transactions and
statements, then the rows of the sources, replayed on a schema of their
own (mtd_min).  --skip TAGS[+TAGS] (or a file of such lines) leaves
queries carrying those tags out, to look at the others by hand; nothing
is skipped by default, and no failure is ever excused: every one fails
the run.

The summary gives, per query shape, how many tables were created, refused
(and why), maintained INCREMENTAL or FULL_RECOMPUTE, and failed; the
maintenance_detail of each strategy; the failures.  results.json in --out
holds every table's query, tags, maintenance and outcome.

Environment (defaults are CI's mode): MT_DIFF_SEED (20), MT_DIFF_QUERIES
(400), MT_DIFF_GROUP (50), MT_DIFF_BATCHES (5), MT_DIFF_MINIMIZE_SECONDS
(240).  The same seed gives the same queries, data and batches.  Exit
status 1 on any failure.
"""

import argparse
import collections
import json
import os
import random
import re
import sys
import time

import psycopg2
import psycopg2.extensions

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import diff_query as Q      # noqa: E402
import diff_schema as S     # noqa: E402

SCHEMA = "mtd"
MIN_SCHEMA = "mtd_min"
META = "mtd_meta"
CI_SEED = 20
CATCH_UP_TIMEOUT = 60.0
CREATE_OPTIONS = "FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS"
DECODING = collections.Counter()      # transactions spilled / streamed, over the groups


def env_int(name, default):
    v = os.environ.get(name)
    return int(v) if v not in (None, "") else default


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------------------
# The database
# ---------------------------------------------------------------------------

class Db:
    def __init__(self, args):
        self.args = args
        self.conn = None
        self.connect()

    def connect(self, wait=60.0):
        stop = time.time() + wait
        while True:
            try:
                self.conn = psycopg2.connect(host=self.args.host, port=self.args.port,
                                             dbname=self.args.dbname, user=self.args.user)
                break
            except psycopg2.OperationalError:
                if time.time() > stop:
                    raise
                time.sleep(0.5)
        self.conn.autocommit = True
        with self.conn.cursor() as cur:
            cur.execute("SET statement_timeout = '120s'; SET lock_timeout = '30s'; "
                        "SET client_min_messages = warning; SET timezone = 'UTC'")

    def cur(self):
        return self.conn.cursor()

    def one(self, sql, params=None):
        with self.cur() as cur:
            cur.execute(sql, params)
            return cur.fetchone()

    def all(self, sql, params=None):
        with self.cur() as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    def run(self, sql, params=None):
        with self.cur() as cur:
            cur.execute(sql, params)


class Crash(Exception):
    pass


def lost(e):
    return isinstance(e, (psycopg2.OperationalError, psycopg2.InterfaceError)) and \
        not isinstance(e, psycopg2.extensions.QueryCanceledError)


# ---------------------------------------------------------------------------
# Sources, tables, batches
# ---------------------------------------------------------------------------

def create_sources(db, schema, rows=None, seed_rng=None):
    """Fresh sources in schema: with the initial data of seed_rng, or these rows."""
    db.run(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    db.run(S.DDL.replace("{s}", schema))
    if rows is None:
        stmts = S.initial_data(seed_rng)
    else:
        stmts = [S.insert(t, r) for t, r in rows if r]
    for st in stmts:
        db.run(st.replace("{s}", schema))


def create_sql(q, schema):
    return (f"SELECT materialized_table.execute($mt$CREATE MATERIALIZED TABLE {schema}.{q.name} "
            f"{CREATE_OPTIONS} AS {q.text(schema)}$mt$)")


def run_txn(db, txn, schema, gid):
    """Run one transaction of a batch; an error rolls it back (as it would anyway)."""
    with db.cur() as cur:
        try:
            cur.execute("BEGIN")
            for i, st in enumerate(txn.statements):
                undone = i in txn.undone
                if undone:
                    cur.execute("SAVEPOINT sp")
                cur.execute(st.replace("{s}", schema))
                if undone:
                    cur.execute("ROLLBACK TO SAVEPOINT sp")
            if txn.end in ("COMMIT", "ROLLBACK"):
                cur.execute(txn.end)
            else:
                cur.execute(f"PREPARE TRANSACTION '{gid}'")
                cur.execute(f"{'COMMIT' if txn.end == 'PREPARE COMMIT' else 'ROLLBACK'} PREPARED '{gid}'")
            return None
        except psycopg2.Error as e:
            if lost(e):
                raise
            cur.execute("ROLLBACK")
            return (e.pgerror or str(e)).strip().splitlines()[0]


def tick(db):
    """A commit that flushes the WAL (the worker's asynchronous commits too); its time after."""
    db.run(f"INSERT INTO {META}.tick VALUES (1)")
    return db.one("SELECT clock_timestamp()")[0]


def failed_runs(db, oids, since):
    return {r[0]: r[1] for r in db.all(
        "SELECT table_name::oid, error FROM materialized_table.refresh_history "
        "WHERE status = 'FAILED' AND started_at >= %s AND table_name::oid = ANY(%s::oid[]) ORDER BY run_id",
        (since, list(oids)))}


def wait_caught_up(db, oids, levels, since, first_tick=None):
    """Wait until the tables (oid -> name) have applied everything committed so far.

    Returns (failed: {oid: error}, stuck: {oid: state}): tables whose cycle
    failed since `since`, and tables still behind after CATCH_UP_TIMEOUT."""
    failed = {}
    waiting = set(oids)
    for level in range(levels):
        t = first_tick if level == 0 and first_tick else tick(db)
        stop = time.time() + CATCH_UP_TIMEOUT
        while True:
            horizon_ok, behind = db.one(
                "SELECT coalesce(materialized_table_internal.continuous_horizon() > %s, false), "
                "       coalesce(array_agg(relid) FILTER (WHERE NOT (synced AND NOT needs_full "
                "                                                   AND pending_since IS NULL)), '{}') "
                "  FROM materialized_table_internal.continuous_state WHERE relid = ANY(%s::oid[])",
                (t, list(waiting)))
            f = failed_runs(db, waiting, since)
            for oid, err in f.items():
                failed[oid] = err
                waiting.discard(oid)
            behind = set(behind) & waiting
            if horizon_ok and not behind:
                break
            if time.time() > stop:
                state = {r[0]: r[1] for r in db.all(
                    "SELECT relid, format('synced %%s, needs_full %%s, pending_since %%s, last_apply %%s, horizon %%s',"
                    " synced, needs_full, pending_since, last_apply, materialized_table_internal.continuous_horizon())"
                    " FROM materialized_table_internal.continuous_state WHERE relid = ANY(%s::oid[])",
                    (list(behind or waiting),))}
                return failed, state
            time.sleep(0.05)
    return failed, {}


def wait_synced(db, oids, timeout=CATCH_UP_TIMEOUT):
    stop = time.time() + timeout
    while time.time() < stop:
        n = db.one("SELECT count(*) FROM materialized_table_internal.continuous_state "
                   "WHERE relid = ANY(%s::oid[]) AND NOT synced", (list(oids),))[0]
        if n == 0:
            return True
        time.sleep(0.05)
    return False


# ---------------------------------------------------------------------------
# The check
# ---------------------------------------------------------------------------

def column_kinds(db, schema, name):
    """The table's columns and whether each is a float."""
    return db.all("SELECT attname, atttypid IN ('float4'::regtype, 'float8'::regtype) FROM pg_attribute "
                  "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                  (f"{schema}.{name}",))


def norm_list(cols, text):
    out = []
    for c, flt in cols:
        e = f'round("{c}"::numeric, 10)' if flt else f'"{c}"'
        out.append(f"{e}::text" if text else e)
    return ", ".join(out)


def bag_diff(cur, left, right, limit=20):
    """Rows of left not in right (as a bag): (count, first rows as text)."""
    cur.execute(f"SELECT d::text FROM ({left} EXCEPT ALL {right}) d")
    rows = [r[0] for r in cur.fetchall()]
    return len(rows), sorted(rows)[:limit]


def check(db, q, schema):
    """None if the table equals its query, else (kind, detail lines)."""
    t = f"{schema}.{q.name}"
    qs = q.text(schema)
    with db.cur() as cur:
        cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        try:
            cols = column_kinds(db, schema, q.name)
            if q.check == "exact":
                for kind, text in (("rows", False), ("display", True)):
                    sel = norm_list(cols, text)
                    extra = bag_diff(cur, f"SELECT {sel} FROM {t}", f"SELECT {sel} FROM ({qs}) q")
                    missing = bag_diff(cur, f"SELECT {sel} FROM ({qs}) q", f"SELECT {sel} FROM {t}")
                    if extra[0] or missing[0]:
                        lines = [f"{extra[0]} rows in the table, not in the query" +
                                 (" (as text)" if text else "")]
                        lines += ["  + " + r for r in extra[1]]
                        lines.append(f"{missing[0]} rows of the query missing from the table")
                        lines += ["  - " + r for r in missing[1]]
                        return kind, lines
                return None
            # one valid answer among ties
            sel = norm_list(cols, False)
            keys = ", ".join(f'"{k}"' for k in q.keys)
            cur.execute(f"SELECT (SELECT count(*) FROM {t}), (SELECT count(*) FROM ({qs}) q)")
            nt, nq = cur.fetchone()
            extra = bag_diff(cur, f"SELECT {keys} FROM {t}", f"SELECT {keys} FROM ({qs}) q")
            missing = bag_diff(cur, f"SELECT {keys} FROM ({qs}) q", f"SELECT {keys} FROM {t}")
            outside = bag_diff(cur, f"SELECT {sel} FROM {t}", f"SELECT {sel} FROM ({q.universe.replace('{s}', schema)}) u")
            if nt != nq or extra[0] or missing[0] or outside[0]:
                lines = [f"{nt} rows in the table, {nq} in the query's result"]
                if extra[0] or missing[0]:
                    lines.append(f"sort keys ({', '.join(q.keys)}) in the table, not in the query's result:")
                    lines += ["  + " + r for r in extra[1]]
                    lines.append("sort keys of the query's result missing from the table:")
                    lines += ["  - " + r for r in missing[1]]
                if outside[0]:
                    lines.append(f"{outside[0]} rows of the table are no rows of the query without its "
                                 "LIMIT / OFFSET / DISTINCT ON:")
                    lines += ["  + " + r for r in outside[1]]
                return "ties", lines
            return None
        except psycopg2.Error as e:
            if lost(e):
                raise
            return "check_error", [(e.pgerror or str(e)).strip()]
        finally:
            if not db.conn.closed:
                cur.execute("ROLLBACK")


# ---------------------------------------------------------------------------
# Skipped
# ---------------------------------------------------------------------------

def read_patterns(values):
    """--skip values: TAGS[+TAGS] or files of such lines (# comments)."""
    out = []
    for v in values or []:
        if os.path.isfile(v):
            for line in open(v):
                line = line.split("#", 1)[0].strip()
                if line:
                    out.append(line)
        else:
            out += [x for x in v.split(",") if x]
    return [set(p.split("+")) for p in out]


def matches(q, patterns):
    have = set(q.tags) | {q.name}
    for p in patterns:
        if p <= have:
            return "+".join(sorted(p))
    return None


# ---------------------------------------------------------------------------
# A group
# ---------------------------------------------------------------------------

class Table:
    """A query's table and what became of it."""

    def __init__(self, q):
        self.q = q
        self.status = "pending"      # created, refused, invalid, skipped
        self.error = None
        self.oid = None
        self.level = 1
        self.maintenance = self.detail = self.strategy = None
        self.final_detail = None
        self.failure = None          # dict

    def record(self):
        return {"name": self.q.name, "shape": self.q.shape, "tags": self.q.tags, "query": self.q.sql,
                "check": self.q.check, "keys": self.q.keys, "upstream": self.q.upstream,
                "status": self.status, "error": self.error, "maintenance": self.maintenance,
                "maintenance_detail": self.detail, "strategy": self.strategy,
                "final_maintenance_detail": self.final_detail,
                "failure": self.failure}


def batch_text(txns, schema):
    return "\n".join(t.sql(schema) for t in txns)


def create_tables(db, tables, schema):
    """Create each table (upstream first); fill status, oid, level."""
    by_name = {t.q.name: t for t in tables}
    for t in tables:
        if t.status == "skipped":
            continue
        ups = [by_name.get(u) for u in t.q.upstream]
        if any(u is None or u.status != "created" for u in ups):
            t.status, t.error = "skipped", "its upstream table was not created"
            continue
        t.level = 1 + max([u.level for u in ups], default=0)
        try:
            db.run(f"SELECT count(*) FROM ({t.q.text(schema)}) q")
        except psycopg2.Error as e:
            if lost(e):
                raise
            t.status, t.error = "invalid", (e.pgerror or str(e)).strip().splitlines()[0]
            continue
        try:
            db.run(create_sql(t.q, schema))
            t.status = "created"
            t.oid = db.one("SELECT %s::regclass::oid", (f"{schema}.{t.q.name}",))[0]
        except psycopg2.Error as e:
            if lost(e):
                raise
            t.status, t.error = "refused", (e.pgerror or str(e)).strip().splitlines()[0]


def maintenance_of(db, tables):
    rows = db.all("SELECT t.table_name::oid, t.maintenance, t.maintenance_detail, s.strategy "
                  "FROM materialized_table.materialized_tables t "
                  "LEFT JOIN materialized_table_internal.continuous_state s ON s.relid = t.table_name::oid "
                  "WHERE t.table_name::oid = ANY(%s::oid[])", ([t.oid for t in tables if t.oid],))
    return {r[0]: r[1:] for r in rows}


def fail(t, kind, batch_no, lines, txns, schema, pre_data, outdir):
    t.failure = {"kind": kind, "batch": batch_no, "detail": lines,
                 "batch_sql": batch_text(txns, schema) if txns else None}
    t.failure_context = (pre_data, txns)
    if outdir:
        write_repro(outdir, t, pre_data, txns, f"{outdir}/{t.q.name}.sql", f"batch {batch_no}")


def run_group(db, args, g, queries, skip, out):
    """Create the group's tables, change their sources, check after each batch."""
    data_rng = random.Random(f"{args.seed}/{g}/data")
    batch_rng = random.Random(f"{args.seed}/{g}/batches")
    tables = [Table(q) for q in queries]
    for t in tables:
        if matches(t.q, skip):
            t.status, t.error = "skipped", "--skip " + matches(t.q, skip)
    if args.only:
        for t in tables:
            if t.q.name not in args.only and not any(t.q.name in o.q.upstream for o in tables
                                                    if o.q.name in args.only):
                t.status, t.error = "skipped", "not in --only"
    if all(t.status == "skipped" for t in tables):
        return tables
    started = time.time()
    create_sources(db, SCHEMA, seed_rng=data_rng)
    create_tables(db, tables, SCHEMA)
    live = [t for t in tables if t.status == "created"]
    m = maintenance_of(db, live)
    for t in live:
        t.maintenance, t.detail, t.strategy = m.get(t.oid, (None, None, None))
    by_oid = {t.oid: t for t in live}
    levels = max([t.level for t in live], default=1)
    if not wait_synced(db, by_oid):
        for oid, st in db.all("SELECT relid, synced FROM materialized_table_internal.continuous_state "
                              "WHERE relid = ANY(%s::oid[]) AND NOT synced", (list(by_oid),)):
            fail(by_oid[oid], "stuck", 0, ["not taken up by the worker"], [], SCHEMA, None, out)
    ids = S.Ids()
    gid = 0
    for b in range(args.batches + 1):
        checking = [t for t in live if t.failure is None]
        if not checking:
            break
        pre = S.dump_data(db.cur(), SCHEMA)
        since = db.one("SELECT clock_timestamp()")[0]
        txns = S.batch(batch_rng, ids) if b else []
        for txn in txns:
            gid += 1
            txn.result = run_txn(db, txn, SCHEMA, f"mtd_{g}_{gid}")
        oids = {t.oid for t in checking}
        failed, stuck = wait_caught_up(db, oids, levels, since)
        for oid, err in failed.items():
            fail(by_oid[oid], "cycle_failed", b, [err], txns, SCHEMA, pre, out)
        for oid, st in stuck.items():
            fail(by_oid[oid], "stuck", b, [f"not caught up after {CATCH_UP_TIMEOUT:.0f} s: {st}"],
                 txns, SCHEMA, pre, out)
        for t in checking:
            if t.failure is None:
                r = check(db, t.q, SCHEMA)
                if r:
                    fail(t, r[0], b, r[1], txns, SCHEMA, pre, out)
    m = maintenance_of(db, live)
    for t in live:
        d = m.get(t.oid, (None, None, None))[1]
        if d != t.detail:
            t.final_detail = d
    # the slot goes with the group's last table, and its statistics with it
    for k, v in zip(("spill_txns", "stream_txns"), db.one(
            "SELECT coalesce(sum(spill_txns), 0), coalesce(sum(stream_txns), 0) FROM pg_stat_replication_slots")):
        DECODING[k] += v
    nf = sum(1 for t in live if t.failure)
    log(f"group {g}: {len(live)} tables created of {len(tables)}, {args.batches} batches, "
        f"{nf} failed ({time.time() - started:.0f} s)")
    db.run(f"DROP SCHEMA {SCHEMA} CASCADE")
    return tables


# ---------------------------------------------------------------------------
# Reproducers and shrinking
# ---------------------------------------------------------------------------

def chain(t, by_name):
    """The queries to create for t: its upstream tables first."""
    out = []
    for u in t.q.upstream:
        out += chain(by_name[u], by_name)
    return out + [t.q]


def write_repro(path_dir, t, pre_data, txns, path, what):
    os.makedirs(path_dir, exist_ok=True)
    s = "mtd_repro"
    by_name = getattr(t, "by_name", {t.q.name: t})
    lines = [f"-- {t.q.name} ({t.q.shape}): {t.failure['kind'] if t.failure else ''} after {what}",
             f"-- maintenance: {t.maintenance}: {t.detail}",
             f"-- tags: {' '.join(t.q.tags)}",
             "\\set ON_ERROR_STOP 1", "SET client_min_messages = warning;",
             f"DROP SCHEMA IF EXISTS {s} CASCADE;", S.DDL.replace("{s}", s).strip()]
    for table, rows in pre_data or []:
        lines.append(S.insert(table, rows).replace("{s}", s) + ";")
    for q in chain(t, by_name):
        lines.append(create_sql(q, s) + ";")
    lines.append("-- the worker takes the tables up, then the change batch:")
    lines.append("SELECT pg_sleep(2);")
    for txn in txns or []:
        lines.append(txn.sql(s))
    lines.append("-- after the worker's next cycles, table and query differ:")
    lines.append("SELECT pg_sleep(3);")
    tq = f"{s}.{t.q.name}"
    qq = t.q.text(s)
    if t.q.check == "exact" and t.failure and t.failure["kind"] == "display":
        # equal values, shown differently: the rows' text
        lines.append(f"SELECT 'table' AS side, r FROM (SELECT t::text AS r FROM {tq} t EXCEPT ALL "
                     f"SELECT q::text FROM ({qq}) q) a\n"
                     f"UNION ALL SELECT 'query', r FROM (SELECT q::text FROM ({qq}) q EXCEPT ALL "
                     f"SELECT t::text FROM {tq} t) b(r);")
    elif t.q.check == "exact":
        lines.append(f"SELECT 'table' AS side, * FROM (TABLE {tq} EXCEPT ALL SELECT * FROM ({qq}) q) a\n"
                     f"UNION ALL SELECT 'query', * FROM (SELECT * FROM ({qq}) q EXCEPT ALL TABLE {tq}) b;")
    else:
        lines.append(f"TABLE {tq};")
        lines.append(f"{qq};")
    lines.append("SELECT maintenance, maintenance_detail FROM materialized_table.materialized_tables "
                 f"WHERE table_name = '{tq}'::regclass;")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


class Shrinker:
    """Replays one failure on schema mtd_min and shrinks its batch and data."""

    def __init__(self, db, t, by_name, deadline):
        self.db = db
        self.t = t
        self.by_name = by_name
        self.deadline = deadline
        self.tests = 0
        self.category = self.cat(t.failure["kind"])

    @staticmethod
    def cat(kind):
        return {"rows": "wrong", "display": "wrong", "ties": "wrong"}.get(kind, kind)

    def out_of_time(self):
        return time.time() > self.deadline

    def test(self, rows, txns):
        """The failure's category if (rows, txns) still fail the table, else None."""
        self.tests += 1
        db = self.db
        try:
            create_sources(db, MIN_SCHEMA, rows=rows)
        except psycopg2.Error as e:
            if lost(e):
                raise
            return None          # rows that do not go together (a key twice in pt)
        qs = chain(self.t, self.by_name)
        oids = {}
        for q in qs:
            try:
                db.run(create_sql(q, MIN_SCHEMA))
            except psycopg2.Error as e:
                if lost(e):
                    raise
                return None
            oids[db.one("SELECT %s::regclass::oid", (f"{MIN_SCHEMA}.{q.name}",))[0]] = q
        me = [o for o, q in oids.items() if q is self.t.q][0]
        if not wait_synced(db, oids):
            return "stuck"
        since = db.one("SELECT clock_timestamp()")[0]
        for i, txn in enumerate(txns):
            run_txn(db, txn, MIN_SCHEMA, f"mtd_min_{i}")
        failed, stuck = wait_caught_up(db, set(oids), len(qs), since)
        if me in failed:
            return "cycle_failed"
        if me in stuck:
            return "stuck"
        r = check(db, self.t.q, MIN_SCHEMA)
        return self.cat(r[0]) if r else None

    def fails(self, rows, txns):
        if self.out_of_time():
            return False
        return self.test(rows, txns) == self.category

    def ddmin(self, items, still_fails):
        n = 2
        while len(items) >= 2 and not self.out_of_time():
            chunk = -(-len(items) // n)
            reduced = False
            for i in range(0, len(items), chunk):
                cand = items[:i] + items[i + chunk:]
                if still_fails(cand):
                    items = cand
                    n = max(n - 1, 2)
                    reduced = True
                    break
            if not reduced:
                if n >= len(items):
                    break
                n = min(len(items), n * 2)
        if len(items) == 1 and still_fails([]):
            items = []
        return items

    def run(self):
        rows0, txns0 = self.t.failure_context
        rows = [(tb, list(rs)) for tb, rs in (rows0 or [])]
        txns = list(txns0)
        if not self.fails(rows, txns):
            return None, None, "did not fail again when replayed alone" + (
                " (out of time)" if self.out_of_time() else "")
        # the transactions, then the statements of each
        txns = self.ddmin(txns, lambda c: self.fails(rows, c))
        for k in range(len(txns)):
            tx = txns[k]
            idx = list(range(len(tx.statements)))
            if len(idx) > 1:
                def with_(c, k=k, tx=tx):
                    return self.fails(rows, txns[:k] + [tx.subset(c)] + txns[k + 1:])
                keep = self.ddmin(idx, with_)
                txns[k] = tx.subset(keep)
        # the rows of the sources
        flat = [(tb, r) for tb, rs in rows for r in rs]

        def regroup(c):
            out = collections.OrderedDict()
            for tb, r in c:
                out.setdefault(tb, []).append(r)
            return list(out.items())
        flat = self.ddmin(flat, lambda c: self.fails(regroup(c), txns))
        return regroup(flat), txns, None


def shrink_all(db, failures, by_name, seconds, outdir):
    deadline = time.time() + seconds
    for t in failures:
        if time.time() > deadline:
            t.failure["minimized"] = "not tried (out of time)"
            continue
        if t.failure.get("batch") is None or t.failure_context[0] is None:
            continue
        started = time.time()
        t.by_name = by_name
        sh = Shrinker(db, t, by_name, min(deadline, time.time() + max(30.0, seconds / max(1, len(failures)))))
        try:
            rows, txns, why = sh.run()
        except psycopg2.Error as e:
            if not lost(e):
                raise
            db.connect()
            rows, txns, why = None, None, "the server was lost while replaying"
        note = f"{sh.tests} replays, {time.time() - started:.0f} s"
        if why:
            t.failure["minimized"] = f"{why} ({note})"
            log(f"  {t.q.name}: {why} ({note})")
            continue
        nrows = sum(len(r) for _, r in rows)
        t.failure["minimized"] = (f"{len(txns)} transactions, {sum(len(x.statements) for x in txns)} statements, "
                                  f"{nrows} source rows ({note})"
                                  + ("; stopped by the time limit" if sh.out_of_time() else ""))
        t.failure["minimized_batch"] = batch_text(txns, "mtd_repro")
        log(f"  {t.q.name}: shrunk to {t.failure['minimized']}")
        if outdir:
            write_repro(outdir, t, rows, txns, f"{outdir}/{t.q.name}.min.sql", "the minimized batch")
    try:
        db.run(f"DROP SCHEMA IF EXISTS {MIN_SCHEMA} CASCADE")
    except psycopg2.Error:
        pass


# ---------------------------------------------------------------------------
# The summary
# ---------------------------------------------------------------------------

def norm_detail(d):
    """maintenance_detail without the table's own names, so that alike ones count together."""
    if d is None:
        return None
    d = re.sub(r"\b(x\d+\.)?c\d+\b", "C", d)
    d = re.sub(r"\b(q\d{4}|t1|t2|t3|p|p_c1|p_c2|pt|pt_jan|pt_feb|pt_def)\b", "T", d)
    d = re.sub(r"C(, C)+", "Cs", d)
    return d


def summary(tables, crashes, log_events):
    out = []
    by_shape = collections.OrderedDict((s, collections.Counter()) for s in Q.SHAPES)
    for t in tables:
        c = by_shape.setdefault(t.q.shape, collections.Counter())
        c["queries"] += 1
        c[t.status] += 1
        if t.status == "created":
            c[t.maintenance or "?"] += 1
            c["s:" + (t.strategy or "?")] += 1
            if t.failure:
                c["failed"] += 1
    out.append("")
    out.append("=== queries by shape")
    hdr = (f"{'shape':<16}{'queries':>8}{'created':>8}{'refused':>8}{'skipped':>8}"
           f"{'INCR':>6}{'FULL':>6}{'KEYS':>6}{'DELTAS':>7}{'FULLs':>6}{'failed':>7}")
    out.append(hdr)
    tot = collections.Counter()
    for s, c in by_shape.items():
        tot.update(c)
        out.append(f"{s:<16}{c['queries']:>8}{c['created']:>8}{c['refused'] + c['invalid']:>8}{c['skipped']:>8}"
                   f"{c['INCREMENTAL']:>6}{c['FULL_RECOMPUTE']:>6}{c['s:KEYS']:>6}{c['s:DELTAS']:>7}"
                   f"{c['s:FULL']:>6}{c['failed']:>7}")
    c = tot
    out.append(f"{'all':<16}{c['queries']:>8}{c['created']:>8}{c['refused'] + c['invalid']:>8}{c['skipped']:>8}"
               f"{c['INCREMENTAL']:>6}{c['FULL_RECOMPUTE']:>6}{c['s:KEYS']:>6}{c['s:DELTAS']:>7}"
               f"{c['s:FULL']:>6}{c['failed']:>7}")
    out.append("(INCR/FULL: materialized_tables.maintenance INCREMENTAL/FULL_RECOMPUTE; "
               "KEYS/DELTAS/FULLs: continuous_state.strategy)")

    out.append("")
    out.append("=== maintenance by strategy (maintenance_detail, names abstracted)")
    det = collections.Counter()
    shapes_of = collections.defaultdict(collections.Counter)
    for t in tables:
        if t.status == "created":
            k = (t.strategy, norm_detail(t.detail))
            det[k] += 1
            shapes_of[k][t.q.shape] += 1
    for (st, d), n in sorted(det.items(), key=lambda x: (x[0][0] or "", -x[1])):
        sh = ", ".join(f"{s} {m}" for s, m in shapes_of[(st, d)].most_common())
        out.append(f"{n:>5}  {st}: {d}")
        out.append(f"         shapes: {sh}")
    changed = [t for t in tables if t.final_detail]
    if changed:
        out.append("")
        out.append("=== maintenance_detail changed while the tables ran")
        for t in changed:
            out.append(f"  {t.q.name} ({t.q.shape}): {t.detail}  ->  {t.final_detail}")

    refused = collections.Counter()
    for t in tables:
        if t.status in ("refused", "invalid"):
            refused[(t.status, t.q.shape, re.sub(r'"[^"]*"', '"..."', t.error or ""))] += 1
    if refused:
        out.append("")
        out.append("=== refused at CREATE (or invalid queries: a generator bug)")
        for (st, sh, e), n in refused.most_common():
            out.append(f"{n:>5}  {st} {sh}: {e}")

    fails = [t for t in tables if t.failure]
    out.append("")
    out.append(f"=== {len(fails)} failed tables")
    kinds = collections.Counter(t.failure["kind"] for t in fails)
    for k, n in sorted(kinds.items()):
        out.append(f"  {n:>4}  {k}")
    for t in fails:
        f = t.failure
        out.append("")
        out.append(f"--- {t.q.name} ({t.q.shape}) {f['kind']} at batch {f['batch']}")
        out.append(f"query:       {t.q.text(SCHEMA)}")
        out.append(f"maintenance: {t.maintenance} ({t.strategy}): {t.detail}")
        out.append(f"tags:        {' '.join(t.q.tags)}")
        for line in f["detail"][:45]:
            out.append("  " + line)
        if f.get("minimized"):
            out.append(f"minimized:   {f['minimized']}")
        if f.get("minimized_batch"):
            out.append("minimized batch (schema mtd_repro; the reproducer is in --out):")
            out += ["  " + x for x in f["minimized_batch"].splitlines()]
        elif f.get("batch_sql"):
            out.append("batch:")
            out += ["  " + x for x in f["batch_sql"].splitlines()]
    for c in crashes:
        out.append(f"--- server lost: {c}")
    for e in log_events:
        out.append(f"--- server log: {e}")
    return "\n".join(out)


def scan_log(path, offset):
    if not path or not os.path.exists(path):
        return []
    out = []
    with open(path, errors="replace") as f:
        f.seek(offset)
        for line in f:
            if re.search(r"terminated by signal|PANIC:|was terminated by exception|TRAP:", line):
                out.append(line.strip())
    return out


# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--host", default=os.environ.get("PGHOST", "/tmp"))
    ap.add_argument("--port", type=int, default=int(os.environ.get("PGPORT", "5432")))
    ap.add_argument("--dbname", default=os.environ.get("PGDATABASE", "postgres"))
    ap.add_argument("--user", default=os.environ.get("PGUSER", "postgres"))
    ap.add_argument("--seed", type=int, default=env_int("MT_DIFF_SEED", CI_SEED))
    ap.add_argument("--queries", type=int, default=env_int("MT_DIFF_QUERIES", 400))
    ap.add_argument("--group", type=int, default=env_int("MT_DIFF_GROUP", 50))
    ap.add_argument("--batches", type=int, default=env_int("MT_DIFF_BATCHES", 5))
    ap.add_argument("--minimize-seconds", type=float, default=env_int("MT_DIFF_MINIMIZE_SECONDS", 240))
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--skip", action="append", default=[],
                    help="TAGS[+TAGS],... or a file of such lines: leave such queries out")
    ap.add_argument("--only", default="", help="q0012,q0040: only these queries (and their upstream)")
    ap.add_argument("--list", action="store_true", help="print the queries and exit")
    ap.add_argument("--out", default=None, help="directory for results.json and reproducers")
    ap.add_argument("--log", default=None, help="the server log, scanned for crashes")
    args = ap.parse_args()
    args.only = set(x for x in args.only.split(",") if x)
    skip = read_patterns(args.skip + [x for x in os.environ.get("MT_DIFF_SKIP", "").split(",") if x])

    groups = []
    for g in range(-(-args.queries // args.group)):
        n = min(args.group, args.queries - g * args.group)
        groups.append(Q.generate(random.Random(f"{args.seed}/{g}/queries"), g * args.group, n))
    if args.list:
        for qs in groups:
            for q in qs:
                print(f"{q.name} {q.shape} [{' '.join(q.tags)}]\n    {q.sql}")
        return 0

    log(f"mt_diff: seed {args.seed}, {args.queries} queries in {len(groups)} groups of {args.group}, "
        f"{args.batches} batches each")
    started = time.time()
    log_offset = os.path.getsize(args.log) if args.log and os.path.exists(args.log) else 0
    db = Db(args)
    db.run(f"CREATE SCHEMA IF NOT EXISTS {META}")
    db.run(f"CREATE TABLE IF NOT EXISTS {META}.tick (n int)")
    for sch in (SCHEMA, MIN_SCHEMA):
        db.run(f"DROP SCHEMA IF EXISTS {sch} CASCADE")
    tables, crashes = [], []
    for g, qs in enumerate(groups):
        try:
            tables += run_group(db, args, g, qs, skip, args.out)
        except psycopg2.Error as e:
            if not lost(e):
                raise
            crashes.append(f"group {g}: {str(e).strip()}")
            log(f"group {g}: the server was lost: {str(e).strip()}")
            db.connect(120)
            tables += [Table(q) for q in qs]
    by_name = {t.q.name: t for t in tables}
    new = [t for t in tables if t.failure]
    if new and not args.no_minimize and args.minimize_seconds > 0:
        log(f"shrinking {len(new)} failures (at most {args.minimize_seconds:.0f} s)")
        shrink_all(db, new, by_name, args.minimize_seconds, args.out)
    events = scan_log(args.log, log_offset)
    text = summary(tables, crashes, events)
    log(text)
    log(f"decoding: {DECODING['spill_txns']} transactions spilled to disk, {DECODING['stream_txns']} streamed "
        "(pg_stat_replication_slots, summed over the groups)")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump({"seed": args.seed, "queries": args.queries, "group": args.group,
                       "batches": args.batches, "tables": [t.record() for t in tables]}, f, indent=1)
        with open(os.path.join(args.out, "summary.txt"), "w") as f:
            f.write(text + "\n")
    nt = sum(1 for t in tables if t.status == "created")
    log(f"\nmt_diff: {len(tables)} queries, {nt} tables checked after {args.batches} batches, "
        f"{len(new)} failed, "
        f"{len(crashes) + len(events)} crashes, in {time.time() - started:.0f} s (seed {args.seed})")
    return 1 if new or crashes or events else 0


if __name__ == "__main__":
    sys.exit(main())
