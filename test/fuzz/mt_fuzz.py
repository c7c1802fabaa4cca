#!/usr/bin/python3
"""mt_fuzz.py: a grammar-aware fuzzer of materialized_table.

    /usr/bin/python3 test/fuzz/mt_fuzz.py --host DIR --port PORT --dbname DB --log DIR/server.log
    /usr/bin/python3 test/fuzz/mt_fuzz.py --seed 7 --show 2:415      # print statement 415 of session 2

(test/fuzz/run.sh starts a cluster of its own and runs this against it.)

N concurrent sessions (MT_FUZZ_SESSIONS, default 4), each with a random
stream of its own derived from the seed (MT_FUZZ_SEED), run
MT_FUZZ_STATEMENTS statements in all.  The defaults are CI's mode: seed 40
(chosen with --coverage: its 3,000 statements generate every feature of the
grammar at least 3 times), 3,000 statements, about 90 s on 2 cores.  Long
mode: MT_FUZZ_STATEMENTS=100000 and a seed of your own.

  - Flink statements through materialized_table.execute() (fuzz_grammar.py):
    CREATE [OR ALTER] MATERIALIZED TABLE with every clause, ALTER (SUSPEND,
    RESUME [WITH], REFRESH [PARTITION], SET FRESHNESS, AS, ADD/MODIFY/DROP,
    SET/RESET options), DROP [IF EXISTS], several in one call; a third of
    them mutated at the token level (fuzz_mutate.py);
  - native SQL on the materialized tables, their sources and hidden
    objects (fuzz_native.py): DML, COPY, ALTER TABLE, DROP TABLE/SCHEMA
    CASCADE, indexes, triggers, GRANT/REVOKE, roles, REFRESH MATERIALIZED
    VIEW, DROP EXTENSION materialized_table CASCADE and CREATE EXTENSION;
  - as the superuser and as unprivileged roles, some in explicit
    transactions (committed, rolled back, prepared) held open for a moment.

Oracles (fuzz_check.py), checked throughout and at the end:
  - no crash: no connection lost to a server process that died, no
    "terminated by signal" or PANIC in the server log;
  - no error of SQLSTATE class XX or 58 reaches a client (nor is logged by
    a background process);
  - the catalog is consistent (every few seconds, and at the end): catalog
    rows, hidden objects, pg_cron jobs and continuous_state rows belong to
    each other; no statement runs into statement_timeout;
  - at the end, a new CONTINUOUS table follows its source (the worker is
    alive), and DROP EXTENSION materialized_table CASCADE leaves nothing.

Every failure is printed once per signature with its session, statement
index and seed, the statement (unit) as sent, and what the other sessions
ran just before; a psql script of it is written to --out.  Failures of a
single statement are replayed alone on a fresh fixture and, when they
reproduce, minimized.  The exit status is 1 if anything failed.
"""

import argparse
import collections
import datetime
import io
import json
import os
import random
import re
import sys
import tempfile
import threading
import time
import traceback

import psycopg2
import psycopg2.extensions

sys.dont_write_bytecode = True               # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fuzz_check as C      # noqa: E402
import fuzz_grammar as G    # noqa: E402
import fuzz_mutate as M     # noqa: E402
import fuzz_native as N     # noqa: E402
from fuzz_grammar import chance, pick  # noqa: E402

STATEMENT_TIMEOUT = "30s"
LOCK_TIMEOUT = "5s"
ADVISORY_KEY = 4244
MUTATION_RATE = 0.35
CI_SEED = 40


def env_int(name, default):
    v = os.environ.get(name)
    return int(v) if v not in (None, "") else default


# ---------------------------------------------------------------------------
# Units: what a session runs, one after the other
# ---------------------------------------------------------------------------

class Unit:
    def __init__(self, role, mode, steps, pause=0.0, isolation=None, savepoints=False):
        self.role = role                     # None: the superuser
        self.mode = mode                     # auto, commit, rollback, prepare_commit, prepare_rollback
        self.steps = steps
        self.pause = pause                   # seconds held open before the end
        self.isolation = isolation
        self.savepoints = savepoints
        self.first = 0                       # index of its first statement in the session
        levels = {N.lock_level(s) for s in steps}
        self.lock = "exclusive" if "exclusive" in levels else "shared" if "shared" in levels else None

    def describe(self):
        lines = [f"-- as {self.role or 'the superuser'}; {self.mode}"
                 + (f", {self.isolation}" if self.isolation else "")
                 + (", a savepoint around each statement" if self.savepoints else "")
                 + (f"; held {self.lock} advisory lock {ADVISORY_KEY}" if self.lock else "")]
        lines.append("RESET ROLE;" if self.role is None else f"SET ROLE {self.role};")
        if self.mode != "auto":
            lines.append("BEGIN" + (f" ISOLATION LEVEL {self.isolation}" if self.isolation else "") + ";")
        for k, s in enumerate(self.steps):
            lines.append(f"-- statement #{self.first + k} ({s.kind})")
            if self.savepoints:
                lines.append("SAVEPOINT fz;")
            lines.append(s.sql + ";")
            if s.copy is not None:
                lines.append(s.copy + "\\.")
            if self.savepoints:
                lines.append("\\if :ERROR\nROLLBACK TO SAVEPOINT fz;\n\\else\nRELEASE SAVEPOINT fz;\n\\endif")
            if s.pause:
                lines.append(f"SELECT pg_sleep({s.pause:.2f});")
        if self.mode != "auto":
            lines.append(f"SELECT pg_sleep({self.pause:.2f});")
            if self.mode.startswith("prepare"):
                gid = "fz_x"
                lines.append(f"PREPARE TRANSACTION '{gid}';")
                lines.append(("COMMIT" if self.mode == "prepare_commit" else "ROLLBACK") + f" PREPARED '{gid}';")
            else:
                lines.append(self.mode.upper() + ";")
        return "\n".join(lines)


def literal(rng, text):
    if "$fz" not in text and chance(rng, 0.3):
        return "$fz$" + text + "$fz$"
    return "'" + text.replace("'", "''") + "'"


def flink_step(rng, names):
    kind, text = G.flink_text(rng, names)
    mutated = chance(rng, MUTATION_RATE)
    if mutated:
        donors = [G.flink_text(rng, names)[1] for _ in range(2)]
        text = M.mutate(rng, text, donors)
    lit = literal(rng, text)
    r = rng.random()
    if r < 0.9:
        sql = f"SELECT materialized_table.execute({lit})"
    elif r < 0.94 and "$w$" not in lit:
        sql = f"DO $w$BEGIN PERFORM materialized_table.execute({lit}); END$w$"
    elif r < 0.97:
        sql = f"SELECT materialized_table.execute({lit}) FROM generate_series(1, 2)"
    else:
        sql = (f"DEALLOCATE ALL;\nPREPARE fz_p AS SELECT materialized_table.execute($1);\n"
               f"EXECUTE fz_p({lit});\nDEALLOCATE fz_p")
    step = N.Step("flink_" + kind + ("/mutated" if mutated else ""), sql)
    step.text = text
    return step


def native_step(rng, names):
    r = rng.random()
    if r < 0.38:
        return N.dml_source(rng)
    if r < 0.48:
        return N.dml_mt(rng, names)
    if r < 0.63:
        return N.api(rng, names)
    if r < 0.86:
        return N.ddl_mt(rng, names)
    return N.ddl_source(rng)


def one_step(rng, names):
    return flink_step(rng, names) if chance(rng, 0.55) else native_step(rng, names)


def make_unit(rng, names):
    role = pick(rng, [None] * 11 + ["fuzz_alice"] * 4 + ["fuzz_bob"] * 3 + ["fuzz_carol"] * 2)
    r = rng.random()
    mode = "auto"
    if r < 0.0015:
        steps = N.extension_cycle(rng)
    elif r < 0.0115:
        steps = N.repair()
    elif r < 0.035:
        steps = N.schema_and_roles(rng)
        if chance(rng, 0.2):
            mode = "commit"
    else:
        m = rng.random()
        mode = ("auto" if m < 0.6 else "commit" if m < 0.84 else "rollback" if m < 0.95
                else "prepare_commit" if m < 0.98 else "prepare_rollback")
        count = 1 if mode == "auto" else rng.randrange(1, 5)
        steps = [one_step(rng, names) for _ in range(count)]
    if mode != "auto":
        steps = [s for s in steps if not s.autocommit_only] or [flink_step(rng, names)]
    if any(s.superuser for s in steps):
        role = None
    isolation = None
    if mode != "auto" and chance(rng, 0.15):
        isolation = pick(rng, ["REPEATABLE READ", "SERIALIZABLE"])
    return Unit(role, mode, steps, pause=rng.random() * 0.5 if mode != "auto" else 0.0,
                isolation=isolation, savepoints=mode != "auto" and chance(rng, 0.75))


def session_units(seed, session, dbname):
    """The units of a session, forever; the same for the same seed."""
    rng = random.Random(f"{seed}:{session}")
    names = G.Names(session, dbname, seed)
    index = 0
    while True:
        u = make_unit(rng, names)
        u.first = index
        index += len(u.steps)
        yield u


def setup_statements(seed, dbname):
    """CREATE statements of a first set of materialized tables."""
    rng = random.Random(f"{seed}:setup")
    names = G.Names(0, dbname, seed)
    out = []
    for name in G.Names.SHARED:
        out.append(G.create(rng, name, names.all_mt(), base=names.bases[name]))
    return out


# ---------------------------------------------------------------------------
# Signatures and reproducers
# ---------------------------------------------------------------------------

def normalize(msg):
    msg = re.sub(r"\d+", "N", msg or "")
    msg = re.sub(r'"[^"]*"', '"…"', msg)
    return msg.strip()


def error_fields(e):
    d = e.diag
    loc = None
    if d.source_function:
        loc = f"{d.source_function}, {d.source_file}:{d.source_line}"
    return {"sqlstate": e.pgcode, "message": d.message_primary or str(e).strip(),
            "detail": d.message_detail, "hint": d.message_hint, "error_context": d.context, "location": loc}


# control statements worth showing in a failure's context
CONTROL_SHOWN = re.compile(r"(BEGIN|COMMIT|ROLLBACK|PREPARE)\b(?! TO SAVEPOINT)")


class ConnLost(Exception):
    pass


class Failure:
    def __init__(self, number, kind, signature, info):
        self.number = number
        self.kind = kind
        self.signature = signature
        self.info = info
        self.count = 1
        self.replay = None


# ---------------------------------------------------------------------------
# The run
# Internal errors of PostgreSQL itself, reproduced without the extension:
# counted and shown, not failures.  Each: (signature regex, why).
CORE_RACES = [
    # (signature, why, what another session must have run meanwhile, or None)
    (r"^XX000 \| could not open relation with OID N \| relation_open \| reassign_owned$",
     "REASSIGN OWNED racing a DROP TABLE of one of the role's tables: PostgreSQL 15's "
     "shdepReassignOwned opens each relation it listed without checking that it still exists "
     "(two sessions and a plain table give the same: BEGIN; DROP TABLE t; -- then REASSIGN "
     "OWNED BY its owner TO r; COMMIT)", None),
    (r"^XX000 \| tuple concurrently updated \| simple_heap_delete \| ",
     "a DROP of a table while another session's CREATE INDEX CONCURRENTLY on it ends: "
     "PostgreSQL 15's DefineIndex releases its session lock on the table before its last "
     "transaction, which marks the index valid, commits, and the DROP then deletes the index's "
     "old pg_index row (a plain table gives the same: one session looping CREATE TABLE p AS ...; "
     "DROP TABLE p, another CREATE INDEX CONCURRENTLY IF NOT EXISTS i ON p ((1)); DROP INDEX i)",
     r"CREATE INDEX CONCURRENTLY"),
]

# ---------------------------------------------------------------------------

class Fuzzer:
    def __init__(self, args):
        self.args = args
        self.seed = args.seed
        self.lock = threading.Lock()
        self.failures = collections.OrderedDict()
        self.history = collections.deque(maxlen=600)
        self.stats = collections.defaultdict(collections.Counter)
        self.crashes = []                    # (epoch, LogEvent)
        self.conn_losses = []                # (epoch, session, index, message)
        self.core_races = collections.Counter()  # signature -> count, see CORE_RACES
        self.sessions = []
        self.stop = threading.Event()
        self.started = time.time()
        self.replay_no = 0
        os.makedirs(args.out, exist_ok=True)
        self.trace = open(os.path.join(args.out, "trace.jsonl"), "w") if args.trace else None
        with open(os.path.join(args.out, "fixture.sql"), "w") as f:
            f.write(G.FIXTURE)

    # --- connections -----------------------------------------------------

    def connect(self, app, retries=0):
        deadline = time.time() + retries
        while True:
            try:
                conn = psycopg2.connect(
                    host=self.args.host, port=self.args.port, dbname=self.args.dbname, user=self.args.user,
                    application_name=app, connect_timeout=10,
                    options=(f"-c statement_timeout={STATEMENT_TIMEOUT} -c lock_timeout={LOCK_TIMEOUT} "
                             "-c idle_in_transaction_session_timeout=120s -c client_min_messages=warning "
                             "-c search_path=fm,fz,public"))
                conn.autocommit = True
                conn.notices = collections.deque(maxlen=20)
                return conn
            except psycopg2.OperationalError:
                if time.time() >= deadline:
                    raise
                time.sleep(0.5)

    # --- failures ----------------------------------------------------------

    def context(self, around=None, span=3.0, limit=60):
        around = around or time.time()
        with self.lock:
            rows = [h for h in self.history if h[1] is None or h[1] >= around - span]
        inflight = []
        for s in self.sessions:
            cur = s.current
            if cur is not None:
                inflight.append(cur)
        lines = []
        for t0, t1, session, idx, kind, sql, outcome in sorted(rows, key=lambda h: h[0])[-limit:]:
            if t0 > around + 0.5 or kind == "control" and not CONTROL_SHOWN.match(sql):
                continue
            lines.append(f"[s{session} #{idx} +{t0 - self.started:.3f}s {outcome or 'running'}] {kind}: "
                         f"{sql[:600]}")
        for t0, session, idx, kind, sql in inflight:
            lines.append(f"[s{session} #{idx} +{t0 - self.started:.3f}s in flight] {kind}: {sql[:600]}")
        return lines

    def failure(self, kind, signature, info, when=None):
        with self.lock:
            f = self.failures.get(signature)
            if f is not None:
                f.count += 1
                # a later occurrence that is a statement alone can be replayed
                if f.info.get("step") is None and info.get("step") is not None:
                    f.info.update(step=info["step"], want=info["want"], role=info.get("role"),
                                  replay_from=f"session {info['session']} statement #{info['index']}")
                return f
            f = Failure(len(self.failures) + 1, kind, signature, info)
            self.failures[signature] = f
        info.setdefault("context", self.context(when))
        self.write_reproducer(f)
        print(self.format_failure(f), flush=True)
        return f

    def format_failure(self, f):
        i = f.info
        out = [f"\n!!! FAILURE {f.number}: {f.kind}", f"    signature: {f.signature}"]
        where = (f"    seed {self.seed}, {self.args.sessions} sessions, session {i.get('session')}, "
                 f"statement #{i.get('index')}")
        if i.get("session") is None:
            out.append(f"    seed {self.seed}, {self.args.sessions} sessions")
        else:
            out.append(where)
            out.append(f"    regenerate: /usr/bin/python3 test/fuzz/mt_fuzz.py --seed {self.seed} "
                       f"--show {i['session']}:{i['index']}")
        for k in ("error", "sqlstate", "message", "detail", "hint", "error_context", "location", "process",
                  "statement_in_log"):
            if i.get(k):
                out.append(f"    {k}: {i[k]}")
        if i.get("unit"):
            out.append("    reproducer (the unit as sent):")
            out += ["      " + line for line in i["unit"].splitlines()]
        if i.get("problems"):
            out.append("    problems:")
            out += ["      " + p for p in i["problems"][:20]]
        out.append(f"    psql script: {self.script_path(f)}")
        return "\n".join(out)

    def script_path(self, f):
        return os.path.join(self.args.out, f"failure_{f.number:02d}.sql")

    def write_reproducer(self, f):
        i = f.info
        lines = [f"-- mt_fuzz failure {f.number}: {f.kind}", f"-- signature: {f.signature}",
                 f"-- seed {self.seed}, sessions {self.args.sessions}"
                 + (f", session {i['session']}, statement #{i['index']}" if i.get("session") is not None else "")]
        for k in ("sqlstate", "message", "detail", "hint", "error_context", "location", "process",
                  "statement_in_log"):
            if i.get(k):
                lines.append(f"-- {k}: " + str(i[k]).replace("\n", "\n--   "))
        lines.append(f"-- First, on a fresh database: psql -1 -f {os.path.join(self.args.out, 'fixture.sql')}")
        lines.append("\\set ON_ERROR_STOP 0")
        lines.append("SET search_path = fm, fz, public;")
        if i.get("unit"):
            lines.append(i["unit"])
        if i.get("problems"):
            lines.append("-- problems:")
            lines += ["--   " + p for p in i["problems"]]
        lines.append("-- what the sessions ran just before (start order):")
        lines += ["--   " + c.replace("\n", " ") for c in i.get("context", [])]
        with open(self.script_path(f), "w") as out:
            out.write("\n".join(lines) + "\n")

    # --- the server log ----------------------------------------------------

    def on_log_event(self, ev):
        stamp, zone = ev.when.rsplit(" ", 1)
        when = datetime.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f").replace(
            tzinfo=datetime.timezone.utc).timestamp() if zone == "UTC" else time.time()
        if ev.kind == "crash":
            with self.lock:
                self.crashes.append((when, ev))
            if ev.tag and ev.tag[0] == "replay":
                return
            info = {"process": ev.process, "message": ev.message, "statement_in_log": ev.statement}
            kind_of = "unknown statement"
            if ev.tag and ev.tag[0].startswith("s"):
                s = int(ev.tag[0][1:])
                found = self.sessions[s].recent.get(ev.tag[1]) if s < len(self.sessions) else None
                if found:
                    step, unit = found
                    kind_of = "execute()" if "materialized_table.execute" in step.sql else step.kind
                    info.update(session=s, index=ev.tag[1], unit=unit.describe(), role=unit.role)
                    if len(unit.steps) == 1:
                        info.update(step=step, want=("crash",))
            elif ev.tag:
                kind_of = ev.tag[0]
            proc = "client backend" if ev.process == "server process" else ev.process
            sig = f"crash | {re.sub(r'[(]PID [0-9]+[)] ', '', normalize(ev.message))} | {proc} | {kind_of}"
            self.failure("server crash", sig, info, when)
        elif ev.kind == "panic":
            self.failure("PANIC", f"panic | {ev.process} | {normalize(ev.message)}",
                         {"process": ev.process, "message": ev.message, "location": ev.location,
                          "statement_in_log": ev.statement}, when)
        elif ev.kind == "internal":
            m = C.SQLSTATE.match(ev.message)
            code, msg = m.groups()
            func = (ev.location or "").split(",")[0]
            self.failure(f"internal error {code} in a background process",
                         f"internal | {code} | {ev.process} | {normalize(msg)} | {func}",
                         {"process": ev.process, "sqlstate": code, "message": msg, "location": ev.location,
                          "error_context": ev.context, "statement_in_log": ev.statement}, when)

    # --- the sessions --------------------------------------------------------

    def run(self):
        a = self.args
        print(f"mt_fuzz: seed {self.seed}, {a.statements} statements, {a.sessions} sessions, "
              f"{a.host}:{a.port}/{a.dbname}, log {a.log or '(none: no log oracle)'}, out {a.out}", flush=True)
        self.setup()
        self.watcher = None
        if a.log:
            self.watcher = C.LogWatcher(a.log, self.on_log_event)
            self.watcher.start()
        quota = [a.statements // a.sessions + (1 if s < a.statements % a.sessions else 0)
                 for s in range(a.sessions)]
        self.sessions = [Session(self, s, quota[s]) for s in range(a.sessions)]
        checker = threading.Thread(target=self.check_loop, daemon=True)
        for s in self.sessions:
            s.start()
        checker.start()
        last = time.time()
        while any(s.is_alive() for s in self.sessions):
            time.sleep(0.5)
            if time.time() - last >= 15:
                last = time.time()
                done = sum(s.done for s in self.sessions)
                print(f"  {time.time() - self.started:6.0f} s: {done} statements, "
                      f"{len(self.failures)} distinct failures", flush=True)
        self.stop.set()
        checker.join()
        self.elapsed = time.time() - self.started
        self.finish()
        return self.report()

    def setup(self):
        conn = self.connect("mt_fuzz setup", retries=30)
        cur = conn.cursor()
        cur.execute(f"ALTER SYSTEM SET log_line_prefix = '{C.LOG_PREFIX}'")
        cur.execute("ALTER SYSTEM SET log_error_verbosity = 'verbose'")
        cur.execute("ALTER SYSTEM SET log_timezone = 'UTC'")
        cur.execute("SELECT pg_reload_conf()")
        time.sleep(1.0)
        self.reset_world(cur)
        conn.close()

    def reset_world(self, cur):
        """The fixture on a clean database, and a first set of tables."""
        cur.execute("SET client_min_messages = warning")
        cur.execute("SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'fz\\_%' AND database = current_database()")
        for (gid,) in cur.fetchall():
            cur.execute(f"ROLLBACK PREPARED '{gid}'")
        cur.execute("DROP EXTENSION IF EXISTS materialized_table CASCADE")
        cur.execute("DROP SCHEMA IF EXISTS fz, fm, fy, fy_renamed CASCADE")
        cur.execute(G.FIXTURE)
        for k, stmt in enumerate(setup_statements(self.seed, self.args.dbname)):
            try:
                cur.execute(f"/* mt_fuzz setup #{k} */ SELECT materialized_table.execute(%s)", (stmt,))
            except psycopg2.Error as e:
                if e.pgcode is None or e.pgcode[:2] in ("XX", "58"):
                    raise

    def check_loop(self):
        conn = None
        while not self.stop.wait(self.args.check_interval):
            try:
                if conn is None or conn.closed:
                    conn = self.connect("mt_fuzz checker")
                problems, _ = C.consistency_problems(conn)
            except psycopg2.Error:
                conn = None
                continue
            for p in problems or []:
                # the cause may be anything since the check before
                self.failure("catalog inconsistency (during the run)", "inconsistent | " + normalize(p),
                             {"problems": [p], "context": self.context(span=self.args.check_interval + 2, limit=300)})

    # --- the end -------------------------------------------------------------

    def finish(self):
        print(f"mt_fuzz: {sum(s.done for s in self.sessions)} statements in {self.elapsed:.0f} s; final checks",
              flush=True)
        try:
            conn = self.connect("mt_fuzz final", retries=120)
        except psycopg2.Error as e:
            self.failure("server unavailable at the end", "server unavailable", {"message": str(e)})
            return
        cur = conn.cursor()
        try:
            cur.execute("SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'fz\\_%'")
            for (gid,) in cur.fetchall():
                cur.execute(f"ROLLBACK PREPARED '{gid}'")
            cur.execute("CREATE EXTENSION IF NOT EXISTS pg_cron")
            cur.execute("CREATE EXTENSION IF NOT EXISTS materialized_table")
            problems, info = C.consistency_problems(conn, final=True)
            for p in problems or []:
                self.failure("catalog inconsistency (at the end)", "inconsistent | " + normalize(p), {"problems": [p]})
            self.info = info
            self.liveness(cur)
            self.drop_extension(cur)
        except psycopg2.Error as e:
            f = error_fields(e)
            self.failure("final checks failed", f"final | {f['sqlstate']} | {normalize(f['message'])}", f)
        conn.close()
        if self.watcher:
            time.sleep(1.5)
            self.watcher.poll()
            self.watcher.flush()
        self.explain_losses()
        self.minimize_all()
        if self.watcher:
            self.watcher.stop.set()
            self.watcher.join()

    def wait_for(self, cur, sql, seconds):
        deadline = time.time() + seconds
        while True:
            cur.execute(sql)
            if cur.fetchone()[0]:
                return True
            if time.time() > deadline:
                return False
            time.sleep(0.3)

    def liveness(self, cur):
        """A new CONTINUOUS table follows its source, a FULL one runs on time."""
        cur.execute("/* mt_fuzz final #0 */ DROP TABLE IF EXISTS fz.probe_src CASCADE")
        cur.execute("CREATE TABLE fz.probe_src (id int PRIMARY KEY, v int NOT NULL)")
        cur.execute("INSERT INTO fz.probe_src VALUES (1, 10)")
        cur.execute("/* mt_fuzz final #1 */ SELECT materialized_table.execute($$"
                    "DROP MATERIALIZED TABLE IF EXISTS fm.probe_cont; DROP MATERIALIZED TABLE IF EXISTS fm.probe_full;"
                    "CREATE MATERIALIZED TABLE fm.probe_cont FRESHNESS = INTERVAL '1' SECOND "
                    "  AS SELECT count(*) AS n, sum(v) AS s FROM fz.probe_src;"
                    "CREATE MATERIALIZED TABLE fm.probe_full FRESHNESS = INTERVAL '2' SECOND REFRESH_MODE = FULL "
                    "  AS SELECT count(*) AS n FROM fz.probe_src$$)")
        cur.execute("INSERT INTO fz.probe_src SELECT i, i FROM generate_series(2, 50) i")
        if not self.wait_for(cur, "SELECT n = 50 FROM fm.probe_cont", 60):
            cur.execute("SELECT n FROM fm.probe_cont")
            self.failure("CONTINUOUS worker does not follow changes", "liveness | CONTINUOUS",
                         {"message": f"a new 1-second CONTINUOUS table still shows {cur.fetchone()[0]} rows "
                                     "of 50 after 60 s", "context": []})
        if not self.wait_for(cur, "SELECT n = 50 FROM fm.probe_full", 60):
            self.failure("FULL tables are not refreshed on time", "liveness | FULL",
                         {"message": "a new 2-second FULL table was not refreshed within 60 s", "context": []})

    def drop_extension(self, cur):
        cur.execute("SELECT relid::oid FROM materialized_table_internal.mt_table")
        relids = [r[0] for r in cur.fetchall()]
        cur.execute("SELECT 'materialized_table_' || oid FROM pg_database WHERE datname = current_database()")
        slot = cur.fetchone()[0]
        cur.execute("/* mt_fuzz final #2 */ DROP EXTENSION materialized_table CASCADE")
        left = [
            ("the schema materialized_table_internal", "SELECT to_regnamespace('materialized_table_internal') IS NOT NULL"),
            ("relations in schema materialized_table",
             "SELECT count(*) > 0 FROM pg_class WHERE relnamespace = to_regnamespace('materialized_table')"),
            ("pg_cron jobs calling scheduled_refresh",
             "SELECT count(*) > 0 FROM cron.job WHERE command LIKE '%scheduled_refresh%'"),
            ("materialized tables", f"SELECT count(*) > 0 FROM pg_class WHERE oid = ANY (ARRAY{relids or [0]}::oid[])"),
            ("the replication slot", f"SELECT count(*) > 0 FROM pg_replication_slots WHERE slot_name = '{slot}'"),
            ("the replication origin", f"SELECT count(*) > 0 FROM pg_replication_origin WHERE roname = '{slot}'"),
            ("the database's worker", "SELECT count(*) > 0 FROM pg_stat_activity WHERE datname = current_database() "
                                      "AND backend_type = 'materialized_table worker'"),
        ]
        deadline = time.time() + 15
        while True:
            remaining = []
            for what, sql in left:
                cur.execute(sql)
                if cur.fetchone()[0]:
                    remaining.append(what)
            if not remaining or time.time() > deadline:
                break
            time.sleep(0.5)
        for what in remaining:
            self.failure("left behind by DROP EXTENSION materialized_table CASCADE", "drop extension | " + what,
                         {"message": f"{what} still there 15 s after DROP EXTENSION materialized_table CASCADE",
                          "context": []})
        cur.execute("/* mt_fuzz final #3 */ CREATE EXTENSION materialized_table")
        cur.execute("SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fm.probe_again "
                    "FRESHNESS = INTERVAL '1' SECOND AS SELECT count(*) AS n FROM fz.probe_src$$)")
        cur.execute("SELECT materialized_table.execute('DROP MATERIALIZED TABLE fm.probe_again')")

    def explain_losses(self):
        """A lost connection that no crash explains is a failure of its own."""
        for t, session, idx, msg in self.conn_losses:
            if any(ct - 3 <= t <= ct + 60 for ct, _ in self.crashes):
                continue
            found = self.sessions[session].recent.get(idx)
            info = {"session": session, "index": idx, "message": msg}
            if found:
                info["unit"] = found[1].describe()
            self.failure("connection lost without a crash", f"connection lost | {normalize(msg)}", info, t)

    # --- replaying failures alone --------------------------------------------

    def replay(self, cur_holder, step, role, text=None):
        """Run one step alone, in a transaction rolled back; the outcome:
        ('crash', None), ('error', fields), ('ok', None)."""
        self.replay_no += 1
        tag = f"/* mt_fuzz replay #{self.replay_no} */ "
        sql = step.sql if text is None else f"SELECT materialized_table.execute({literal(random.Random(0), text)})"
        conn = cur_holder[0]
        cur = conn.cursor()
        try:
            cur.execute("RESET ROLE" if role is None else f"SET ROLE {role}")
            cur.execute("BEGIN")
            try:
                if step.copy is not None:
                    cur.copy_expert(tag + sql, io.StringIO(step.copy))
                else:
                    cur.execute(tag + sql)
                return "ok", None
            except psycopg2.Error as e:
                if e.pgcode is None:
                    raise
                return "error", error_fields(e)
            finally:
                if not conn.closed:
                    cur.execute("ROLLBACK")
        except psycopg2.Error:
            # the server went away: did it crash for this statement?
            cur_holder[0] = self.connect("mt_fuzz replay", retries=120)
            deadline = time.time() + 5
            while time.time() < deadline:
                self.watcher and self.watcher.poll()
                with self.lock:
                    if any(ev.tag == ("replay", self.replay_no) for _, ev in self.crashes):
                        return "crash", None
                time.sleep(0.2)
            return "lost", None

    def minimize_all(self):
        budget = time.time() + self.args.minimize_seconds
        candidates = [f for f in self.failures.values() if f.info.get("step") is not None]
        if not candidates or self.args.minimize_seconds <= 0:
            return
        print(f"mt_fuzz: replaying {len(candidates)} failure(s) alone on a fresh fixture", flush=True)
        try:
            holder = [self.connect("mt_fuzz replay", retries=60)]
            self.reset_world(holder[0].cursor())
        except psycopg2.Error as e:
            print(f"  cannot replay: {e}")
            return
        for f in candidates:
            if time.time() > budget:
                f.replay = "not replayed (out of time)"
                continue
            step, role, want = f.info["step"], f.info.get("role"), f.info["want"]

            def same(outcome):
                kind, fields = outcome
                if want[0] == "crash":
                    return kind == "crash"
                return kind == "error" and fields["sqlstate"] == want[1] and \
                    normalize(fields["message"]) == want[2]
            try:
                if not same(self.replay(holder, step, role)):
                    f.replay = "does not reproduce alone on a fresh fixture (needs the state or the concurrency of the run)"
                    continue
                text = getattr(step, "text", None)
                if text is None:
                    f.replay = "reproduces alone"
                    continue
                small = self.ddmin(M.tokenize(text), lambda toks: same(self.replay(holder, step, role, "".join(toks))),
                                   budget)
                f.replay = ("reproduces alone; minimized Flink text: "
                            + "SELECT materialized_table.execute(" + literal(random.Random(0), "".join(small)) + ")")
            except psycopg2.Error as e:
                f.replay = f"replay failed: {e}"
            print(f"  failure {f.number}: {f.replay}", flush=True)

    @staticmethod
    def ddmin(toks, fails, budget):
        """Delta debugging over the non-blank tokens (blanks stay where they are)."""
        def join(keep):
            return [t for k, t in enumerate(toks) if k in keep or not t.strip()]
        keep = [k for k, t in enumerate(toks) if t.strip()]
        n = 2
        while len(keep) >= 2 and time.time() < budget:
            chunk = max(1, len(keep) // n)
            reduced = False
            for i in range(0, len(keep), chunk):
                rest = keep[:i] + keep[i + chunk:]
                if rest and time.time() < budget and fails(join(set(rest))):
                    keep, n, reduced = rest, max(n - 1, 2), True
                    break
            if not reduced:
                if chunk == 1:
                    break
                n = min(n * 2, len(keep))
        # squeeze the blanks as well: one between tokens, none around
        out = join(set(keep))
        squeezed = re.sub(r"\s+", " ", "".join(t if t.strip() else " " for t in out)).strip()
        return [squeezed] if time.time() < budget and fails([squeezed]) else out

    # --- the report ------------------------------------------------------------

    def report(self):
        total = collections.Counter()
        print("\n=== statements by kind (ok / errors; most frequent SQLSTATEs)")
        for kind in sorted(self.stats):
            c = self.stats[kind]
            ok = c.get("ok", 0)
            n = sum(c.values())
            total.update(c)
            errs = ", ".join(f"{k} {v}" for k, v in c.most_common() if k != "ok")[:110]
            print(f"  {kind:34s} {n:6d}  ok {ok:6d}  {errs}")
        n = sum(total.values())
        print(f"  {'all':34s} {n:6d}  ok {total.get('ok', 0):6d}")
        print(f"\nmt_fuzz: {n} statements in {self.elapsed:.0f} s ({self.args.sessions} sessions, seed {self.seed}); "
              f"{len(self.crashes)} server crash(es) in the log; {len(self.conn_losses)} lost connection(s)")
        for line in getattr(self, "info", [])[:10]:
            print(f"  note (not a failure): {line}")
        for sig, count in self.core_races.items():
            why = next(w for pattern, w, _ in CORE_RACES if re.match(pattern, sig))
            print(f"  PostgreSQL's own, not a failure [{count}x]: {sig}\n      {why}")
        summary = []
        if self.failures:
            print(f"\n=== {len(self.failures)} distinct failure(s)")
            for f in self.failures.values():
                print(f"  {f.number:2d}. [{f.count}x] {f.kind}: {f.signature}")
                i = f.info
                if i.get("session") is not None:
                    print(f"      first: session {i['session']} statement #{i['index']} (seed {self.seed}); "
                          f"script {self.script_path(f)}")
                else:
                    print(f"      script {self.script_path(f)}")
                if f.replay:
                    print(f"      replay{' of ' + i['replay_from'] if i.get('replay_from') else ''}: {f.replay}")
                summary.append({"number": f.number, "kind": f.kind, "signature": f.signature, "count": f.count,
                                "session": i.get("session"), "index": i.get("index"), "replay": f.replay})
        with open(os.path.join(self.args.out, "summary.json"), "w") as out:
            json.dump({"seed": self.seed, "statements": n, "sessions": self.args.sessions,
                       "seconds": round(self.elapsed), "failures": summary, "core_races": dict(self.core_races),
                       "stats": {k: dict(v) for k, v in self.stats.items()}}, out, indent=1)
        if self.failures:
            print("FAILED")
            return 1
        print("mt_fuzz: no crash, no internal error, catalog consistent: PASS")
        return 0


class Session(threading.Thread):
    def __init__(self, fz, n, quota):
        super().__init__(daemon=True)
        self.fz = fz
        self.n = n
        self.quota = quota
        self.done = 0
        self.current = None
        self.recent = {}                     # index -> (step, unit), the last ones
        self.conn = None

    def run(self):
        try:
            self.conn = self.fz.connect(f"mt_fuzz s{self.n}", retries=30)
            for unit in session_units(self.fz.seed, self.n, self.fz.args.dbname):
                if self.done >= self.quota:
                    break
                try:
                    self.run_unit(unit)
                except ConnLost:
                    self.reconnect()
        except Exception as e:               # the run goes on without this session
            traceback.print_exc()
            self.fz.failure("fuzzer session died", f"session died | {type(e).__name__} | {normalize(str(e))}",
                            {"session": self.n, "index": self.done, "message": repr(e)})
        finally:
            if self.conn is not None and not self.conn.closed:
                self.conn.close()

    def reconnect(self):
        """A new connection once the server is back (it may crash again
        meanwhile), without the prepared transactions of the old one."""
        deadline = time.time() + 180
        while True:
            try:
                self.conn.close()
            except Exception:
                pass
            try:
                self.conn = self.fz.connect(f"mt_fuzz s{self.n}", retries=max(1, int(deadline - time.time())))
                cur = self.conn.cursor()
                cur.execute("SELECT gid FROM pg_prepared_xacts WHERE gid LIKE %s", (f"fz_s{self.n}\\_%",))
                for (gid,) in cur.fetchall():
                    cur.execute(f"ROLLBACK PREPARED '{gid}'")
                return
            except psycopg2.Error:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)

    # Every statement goes through sql(); the counted ones are the unit's steps.
    def ran_meanwhile(self, pattern, since):
        """Did another session run a statement matching pattern that was
        in flight at or after since (or ended within a second before)?"""
        with self.fz.lock:
            if any(n != self.n and t1 >= since - 1.0 and re.search(pattern, text)
                   for t0, t1, n, _, _, text, _ in self.fz.history):
                return True
        # (the statement may end a moment after the race it lost)
        return any(s is not self and s.current and re.search(pattern, s.current[4])
                   for s in self.fz.sessions)

    def sql(self, unit, index, text, step=None):
        tag = f"/* mt_fuzz s{self.n} #{index} */ "
        kind = step.kind if step else "control"
        t0 = time.time()
        self.current = (t0, self.n, index, kind, text)
        outcome = None
        fields = None
        cur = self.conn.cursor()
        try:
            if step is not None and step.copy is not None:
                cur.copy_expert(tag + text, io.StringIO(step.copy))
            elif re.match(r"\s*COPY\b.*\bTO\s+STDOUT", text, re.I | re.S):
                cur.copy_expert(tag + text, io.StringIO())
            else:
                cur.execute(tag + text)
            outcome = "ok"
        except psycopg2.Error as e:
            if e.pgcode is None or e.pgcode in ("57P01", "57P02", "57P03") or e.pgcode.startswith("08"):
                self.fz.conn_losses.append((time.time(), self.n, index, str(e).strip()))
                outcome = "lost"
                raise ConnLost() from e
            fields = error_fields(e)
            outcome = e.pgcode
        finally:
            self.current = None
            with self.fz.lock:
                self.fz.history.append((t0, time.time(), self.n, index, kind, text[:2000], outcome))
                if step is not None:
                    self.fz.stats[kind][outcome] += 1
                    if self.fz.trace:
                        self.fz.trace.write(json.dumps({
                            "s": self.n, "i": index, "kind": kind, "role": unit.role, "mode": unit.mode,
                            "t": round(t0 - self.fz.started, 3), "ms": round((time.time() - t0) * 1000),
                            "outcome": outcome, "message": fields and fields["message"],
                            "sql": text[:4000]}) + "\n")
        if fields is not None:
            code = fields["sqlstate"]
            if code[:2] in ("XX", "58"):
                info = dict(fields, session=self.n, index=index, role=unit.role, unit=unit.describe())
                if step is not None and len(unit.steps) == 1:
                    info.update(step=step, want=("error", code, normalize(fields["message"])))
                func = (fields["location"] or "").split(",")[0]
                # what ran: the same message from different statements is
                # often a different bug
                family = ("execute()" if step is not None and "materialized_table.execute" in step.sql
                          else kind.split("/")[0] if step is not None else "control " + text.split()[0])
                sig = f"{code} | {normalize(fields['message'])} | {func} | {family}"
                ctx = (fields["error_context"] or "").splitlines()
                if ctx and ctx[0].startswith("SQL statement "):
                    inner = ctx[0][len("SQL statement "):].strip('"')
                    sig += " | in " + re.sub(r"\d+", "N", inner)[:90]
                if any(re.match(pattern, sig) and (meanwhile is None or self.ran_meanwhile(meanwhile, t0))
                       for pattern, _, meanwhile in CORE_RACES):
                    with self.fz.lock:
                        self.fz.core_races[sig] += 1
                else:
                    self.fz.failure(f"internal error {code}", sig, info)
            elif code == "57014" and "statement timeout" in fields["message"]:
                self.fz.failure("statement ran into statement_timeout (a hang?)",
                                f"hang | {kind.split('/')[0]}",
                                dict(fields, session=self.n, index=index, role=unit.role, unit=unit.describe()))
        return outcome == "ok"

    def run_unit(self, unit):
        for k, step in enumerate(unit.steps):
            self.recent[unit.first + k] = (step, unit)
        if len(self.recent) > 400:
            for key in sorted(self.recent)[:-200]:
                del self.recent[key]
        last = unit.first
        locked = None
        if unit.lock:
            fn = "pg_advisory_lock" if unit.lock == "exclusive" else "pg_advisory_lock_shared"
            if not self.sql(unit, last, f"SELECT {fn}({ADVISORY_KEY})"):
                self.done += len(unit.steps)
                return
            locked = fn.replace("lock", "unlock")
        try:
            if not self.sql(unit, last, "RESET ROLE" if unit.role is None else f"SET ROLE {unit.role}"):
                self.done += len(unit.steps)
                return
            if unit.mode != "auto":
                self.sql(unit, last, "BEGIN" + (f" ISOLATION LEVEL {unit.isolation}" if unit.isolation else ""))
            for k, step in enumerate(unit.steps):
                last = unit.first + k
                if unit.savepoints:
                    self.sql(unit, last, "SAVEPOINT fz")
                ok = self.sql(unit, last, step.sql, step)
                self.done += 1
                if unit.savepoints:
                    self.sql(unit, last, "RELEASE SAVEPOINT fz" if ok else "ROLLBACK TO SAVEPOINT fz")
                if step.pause:
                    time.sleep(step.pause)
            if unit.mode != "auto":
                time.sleep(unit.pause)
                if unit.mode.startswith("prepare"):
                    gid = f"fz_s{self.n}_{unit.first}"
                    self.sql(unit, last, f"PREPARE TRANSACTION '{gid}'")
                    time.sleep(unit.pause / 2)
                    self.sql(unit, last, ("COMMIT" if unit.mode == "prepare_commit" else "ROLLBACK")
                             + f" PREPARED '{gid}'")
                    if self.conn.get_transaction_status() != psycopg2.extensions.TRANSACTION_STATUS_IDLE:
                        self.sql(unit, last, "ROLLBACK")
                else:
                    self.sql(unit, last, "COMMIT" if unit.mode == "commit" else "ROLLBACK")
        finally:
            if not self.conn.closed:
                if self.conn.get_transaction_status() != psycopg2.extensions.TRANSACTION_STATUS_IDLE:
                    self.sql(unit, last, "ROLLBACK")
                if locked:
                    self.sql(unit, last, f"SELECT {locked}({ADVISORY_KEY})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default=os.environ.get("PGHOST", "/tmp"))
    p.add_argument("--port", type=int, default=env_int("PGPORT", 5432))
    p.add_argument("--dbname", default=os.environ.get("PGDATABASE", "fuzzdb"))
    p.add_argument("--user", default="postgres")
    p.add_argument("--log", default=os.environ.get("MT_FUZZ_LOG"), help="the server log (crash oracle)")
    p.add_argument("--out", default=os.environ.get("MT_FUZZ_OUT"),
                   help="directory for the failures' psql scripts and summary.json (default: a new one in /tmp)")
    p.add_argument("--seed", type=int, default=env_int("MT_FUZZ_SEED", CI_SEED))
    p.add_argument("--statements", type=int, default=env_int("MT_FUZZ_STATEMENTS", 3000))
    p.add_argument("--sessions", type=int, default=env_int("MT_FUZZ_SESSIONS", 4))
    p.add_argument("--check-interval", type=float, default=env_int("MT_FUZZ_CHECK_INTERVAL", 10))
    p.add_argument("--minimize-seconds", type=int, default=env_int("MT_FUZZ_MINIMIZE_SECONDS", 60))
    p.add_argument("--trace", action="store_true", default=os.environ.get("MT_FUZZ_TRACE") == "1",
                   help="write every statement and its outcome to OUT/trace.jsonl")
    p.add_argument("--show", metavar="SESSION:INDEX", help="print the unit holding that statement and exit")
    p.add_argument("--coverage", action="store_true",
                   help="count the grammar's features this seed and size generate, and exit (1 if one is missing)")
    args = p.parse_args()
    if args.coverage:
        import fuzz_coverage
        quota = [args.statements // args.sessions + (1 if s < args.statements % args.sessions else 0)
                 for s in range(args.sessions)]
        counts = fuzz_coverage.coverage([session_units(args.seed, s, args.dbname) for s in range(args.sessions)],
                                        quota)
        missing = [k for k, v in counts.items() if v == 0]
        for k, v in counts.items():
            print(f"  {v:6d}  {k}")
        print(f"seed {args.seed}, {args.statements} statements, {args.sessions} sessions: "
              f"{len(counts) - len(missing)} of {len(counts)} features"
              + (f"; missing: {', '.join(missing)}" if missing else ""))
        return 1 if missing else 0
    if args.show:
        session, index = (int(x) for x in args.show.split(":"))
        for unit in session_units(args.seed, session, args.dbname):
            if unit.first + len(unit.steps) > index:
                print(f"-- seed {args.seed}, session {session}, statements #{unit.first}-"
                      f"#{unit.first + len(unit.steps) - 1}")
                print(unit.describe())
                return 0
    if args.out is None:
        args.out = tempfile.mkdtemp(prefix="mt_fuzz_out.")
    return Fuzzer(args).run()


if __name__ == "__main__":
    sys.exit(main())
