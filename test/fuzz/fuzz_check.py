"""Oracles: the consistency of the extension's catalog, and the server log.

consistency_problems() reads everything in one snapshot and returns a line
per inconsistency.  LogWatcher follows the server log for crashes (a
process terminated by a signal, PANIC) and for internal errors (SQLSTATE
class XX or 58) of processes that are not client sessions.
"""

import re
import threading
import time

INTERNAL = "materialized_table_internal"

# Each query returns one text column, a line per problem.
CONSISTENCY = [
    # every catalog row names an existing table and its query view
    f"""SELECT format('catalog row of table %s: no such table', t.relid::oid)
          FROM {INTERNAL}.mt_table t
         WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = t.relid::oid AND c.relkind IN ('r', 'p'))""",
    f"""SELECT format('catalog row of table %s (%s): its query view %s does not exist',
                      t.relid::oid, t.relid::oid::regclass, t.query_view::oid)
          FROM {INTERNAL}.mt_table t
         WHERE NOT EXISTS (SELECT FROM pg_class c
                            WHERE c.oid = t.query_view::oid AND c.relkind = 'v'
                              AND c.relnamespace = '{INTERNAL}'::regnamespace)""",
    # every hidden object (what is in the internal schema and not the
    # extension's own) belongs to an existing materialized table: the catalog
    # row names it, or its name does (query_<id>, state_<id>, derived_<id>,
    # restore_<id>, after the table's id), or it depends on the table
    # internally
    f"""SELECT format('hidden object %s.%s (relkind %s) belongs to no materialized table',
                      '{INTERNAL}', c.relname, c.relkind)
          FROM pg_class c
         WHERE c.relnamespace = '{INTERNAL}'::regnamespace
           AND c.relkind NOT IN ('i', 'I', 't')
           AND NOT EXISTS (SELECT FROM pg_depend d
                            WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
           AND NOT EXISTS (SELECT FROM {INTERNAL}.mt_table t
                            WHERE t.query_view::oid = c.oid
                               OR (c.relname ~ '^(query|state|derived|restore)_[0-9]+$'
                                   AND t.id = substring(c.relname FROM '[0-9]+$')::bigint)
                               OR EXISTS (SELECT FROM pg_depend d
                                           WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                                             AND d.refclassid = 'pg_class'::regclass
                                             AND d.refobjid = t.relid::oid AND d.deptype = 'i'))""",
    # a state table and its derived view belong to a CONTINUOUS table kept by
    # deltas, or by keys over rows kept in a hidden table (its reason says so)
    f"""SELECT format('hidden object %s.%s belongs to table %s, which is %s (%s)', '{INTERNAL}', c.relname,
                      t.relid::oid, t.refresh_mode, coalesce(s.strategy || ': ' || s.reason, 'no continuous_state row'))
          FROM pg_class c
          JOIN {INTERNAL}.mt_table t ON t.id = substring(c.relname FROM '[0-9]+$')::bigint
          LEFT JOIN {INTERNAL}.continuous_state s ON s.relid = t.relid::oid
         WHERE c.relnamespace = '{INTERNAL}'::regnamespace
           AND c.relname ~ '^(state|derived)_[0-9]+$'
           AND (t.refresh_mode <> 'CONTINUOUS' OR s.strategy IS NULL OR s.strategy = 'FULL'
                OR (s.strategy = 'KEYS' AND s.reason NOT LIKE '%kept in a hidden table%'))""",
    # every continuous_state row belongs to a CONTINUOUS table, and every
    # CONTINUOUS table has one
    f"""SELECT format('continuous_state row of %s: %s', s.relid,
                      CASE WHEN t.relid IS NULL THEN 'no such materialized table'
                           ELSE 'the table is ' || t.refresh_mode END)
          FROM {INTERNAL}.continuous_state s
          LEFT JOIN {INTERNAL}.mt_table t ON t.relid::oid = s.relid
         WHERE t.relid IS NULL OR t.refresh_mode <> 'CONTINUOUS'""",
    f"""SELECT format('CONTINUOUS table %s (%s) has no continuous_state row', t.relid::oid, t.relid::oid::regclass)
          FROM {INTERNAL}.mt_table t
         WHERE t.refresh_mode = 'CONTINUOUS'
           AND NOT EXISTS (SELECT FROM {INTERNAL}.continuous_state s WHERE s.relid = t.relid::oid)""",
    # who drives a table
    f"""SELECT format('table %s (%s): refresh mode %s with scheduler %s and pg_cron job %s',
                      t.relid::oid, t.relid::oid::regclass, t.refresh_mode, coalesce(t.scheduler, 'NULL'),
                      coalesce(t.cron_jobid::text, 'NULL'))
          FROM {INTERNAL}.mt_table t
         WHERE (t.scheduler = 'pg_cron') IS DISTINCT FROM (t.cron_jobid IS NOT NULL AND t.cron_jobid <> 0)
            OR (t.refresh_mode = 'CONTINUOUS' AND coalesce(t.cron_jobid, 0) <> 0)
            OR (t.refresh_mode = 'FULL' AND t.scheduler IS NULL)""",
]

CRON_CONSISTENCY = [
    # every pg_cron job that calls scheduled_refresh is the job of a FULL
    # table's catalog row, and names that table
    f"""SELECT format('pg_cron job %s (%s, %s) belongs to no FULL table that has it: %s', j.jobid, j.jobname,
                      j.command, coalesce((SELECT format('table %s (%s) is %s', t.relid::oid, t.relid::oid::regclass,
                                                         t.refresh_mode)
                                             FROM {INTERNAL}.mt_table t WHERE t.cron_jobid = j.jobid),
                                          'no catalog row has this job'))
          FROM cron.job j
         WHERE j.command LIKE '%materialized_table.scheduled_refresh(%'
           AND NOT EXISTS (SELECT FROM {INTERNAL}.mt_table t
                             JOIN pg_class c ON c.oid = t.relid::oid
                             JOIN pg_namespace n ON n.oid = c.relnamespace
                            WHERE t.cron_jobid = j.jobid AND t.refresh_mode = 'FULL'
                              AND j.command = format('SELECT materialized_table.scheduled_refresh(%L::pg_catalog.regclass)',
                                                     format('%I.%I', n.nspname, c.relname)))""",
    f"""SELECT format('table %s (%s) names pg_cron job %s, which does not exist', t.relid::oid,
                      t.relid::oid::regclass, t.cron_jobid)
          FROM {INTERNAL}.mt_table t
         WHERE coalesce(t.cron_jobid, 0) <> 0 AND NOT EXISTS (SELECT FROM cron.job j WHERE j.jobid = t.cron_jobid)""",
    f"""SELECT format('pg_cron job %s of table %s (%s) is %s while the table is %s', j.jobid, t.relid::oid,
                      t.relid::oid::regclass, CASE WHEN j.active THEN 'active' ELSE 'inactive' END, t.refresh_status)
          FROM {INTERNAL}.mt_table t JOIN cron.job j ON j.jobid = t.cron_jobid
         WHERE j.active IS DISTINCT FROM (t.refresh_status <> 'SUSPENDED')""",
]

# once every session has ended
FINAL_ONLY = [
    f"""SELECT format('table %s (%s) is still INITIALIZING', t.relid::oid, t.relid::oid::regclass)
          FROM {INTERNAL}.mt_table t WHERE t.refresh_status = 'INITIALIZING'""",
]

# left behind by design for a while (see state_delete() in src/continuous/continuous.c),
# reported but not failures
INFO = [
    f"""SELECT format('%s rows of %s for dropped table %s', count(*), tab, relid)
          FROM (SELECT 'change_keys' AS tab, relid FROM {INTERNAL}.change_keys
                UNION ALL SELECT 'change_deltas', relid FROM {INTERNAL}.change_deltas
                UNION ALL SELECT 'continuous_baseline', relid FROM {INTERNAL}.continuous_baseline
                UNION ALL SELECT 'refresh_run', relid FROM {INTERNAL}.refresh_run) x
         WHERE NOT EXISTS (SELECT FROM {INTERNAL}.mt_table t WHERE t.relid::oid = x.relid)
         GROUP BY tab, relid""",
]


def consistency_problems(conn, final=False):
    """Problems of the catalog, read in one snapshot; None when the
    extension is not installed at that moment."""
    cur = conn.cursor()
    cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
    try:
        cur.execute("SELECT to_regnamespace(%s) IS NOT NULL, to_regclass('cron.job') IS NOT NULL",
                    (INTERNAL,))
        installed, cron = cur.fetchone()
        if not installed:
            return None, []
        queries = CONSISTENCY + (CRON_CONSISTENCY if cron else []) + (FINAL_ONLY if final else [])
        problems = []
        for q in queries:
            cur.execute(q)
            problems += [r[0] for r in cur.fetchall()]
        info = []
        for q in INFO:
            cur.execute(q)
            info += [r[0] for r in cur.fetchall()]
        return problems, info
    finally:
        cur.execute("ROLLBACK")


# ---------------------------------------------------------------------------
# The server log
# ---------------------------------------------------------------------------

# log_line_prefix set by the fuzzer: '%m [%p] [%b] [%a] '
LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \w+) \[(\d+)\] \[([^\]]*)\] \[([^\]]*)\] "
                  r"(LOG|ERROR|FATAL|PANIC|WARNING|DETAIL|HINT|CONTEXT|STATEMENT|LOCATION|NOTICE|DEBUG\d?|INFO|QUERY):  (.*)$")
TERMINATED = re.compile(r"^(.*) \(PID (\d+)\) was terminated by (signal \d+|exception)(: .*)?$")
TAG = re.compile(r"/\* mt_fuzz (s\d+|replay|setup|final) #(\d+) \*/")
SQLSTATE = re.compile(r"^([0-9A-Z]{5}): (.*)$")
LOG_PREFIX = "%m [%p] [%b] [%a] "


class LogEvent:
    def __init__(self, kind, when, process, message, statement=None, location=None, context=None):
        self.kind = kind                     # crash, panic, internal
        self.when = when
        self.process = process               # backend type
        self.message = message
        self.statement = statement
        self.location = location
        self.context = context
        self.tag = None
        m = TAG.search(statement or "")
        if m:
            self.tag = (m.group(1), int(m.group(2)))


class LogWatcher(threading.Thread):
    """Follows the server log from its current end."""

    def __init__(self, path, on_event):
        super().__init__(daemon=True)
        self.path = path
        self.on_event = on_event
        self.stop = threading.Event()
        self.entries = []                    # the record being read: prefix entries
        self.pending = None
        self.lock = threading.Lock()
        try:
            with open(path, "rb") as f:
                f.seek(0, 2)
                self.offset = f.tell()
        except OSError:
            self.offset = 0
        self.buf = b""

    def run(self):
        while not self.stop.is_set():
            self.poll()
            self.stop.wait(0.3)
        self.poll()
        self.flush()

    def poll(self):
        with self.lock:
            try:
                with open(self.path, "rb") as f:
                    f.seek(self.offset)
                    data = f.read()
            except OSError:
                return
            if not data:
                self.flush_if_old()
                return
            self.offset += len(data)
            self.buf += data
            lines = self.buf.split(b"\n")
            self.buf = lines.pop()
            for raw in lines:
                self.line(raw.decode("utf-8", "replace"))
            self.flush_if_old()

    # Records: a first line (LOG, ERROR, ...) and the lines that follow it
    # from the same process (DETAIL, LOCATION, STATEMENT, ...), continued by
    # lines without the prefix.
    def line(self, text):
        m = LINE.match(text)
        if not m:
            if self.pending is not None and self.pending["parts"]:
                self.pending["parts"][-1][1] += "\n" + text
            return
        when, pid, btype, app, level, msg = m.groups()
        if level in ("DETAIL", "HINT", "CONTEXT", "STATEMENT", "LOCATION", "QUERY") and \
                self.pending is not None and self.pending["pid"] == pid:
            self.pending["parts"].append([level, msg])
            return
        self.flush()
        self.pending = {"when": when, "pid": pid, "btype": btype, "app": app, "level": level,
                        "parts": [[level, msg]], "seen": time.time()}

    def flush_if_old(self):
        if self.pending is not None and time.time() - self.pending["seen"] > 1.0:
            self.flush()

    def flush(self):
        p, self.pending = self.pending, None
        if p is None:
            return
        parts = dict()
        for level, msg in p["parts"][1:]:
            parts.setdefault(level, msg)
        level, msg = p["parts"][0]
        code = SQLSTATE.match(msg)
        if level == "LOG" and code:
            msg = code.group(2)             # log_error_verbosity = verbose: "00000: ..."
        if level == "LOG":
            m = TERMINATED.match(msg)
            if m:
                detail = parts.get("DETAIL", "")
                stmt = detail[len("Failed process was running: "):] if detail.startswith("Failed process was running: ") else None
                self.on_event(LogEvent("crash", p["when"], m.group(1), msg, statement=stmt))
            return
        if level == "PANIC":
            self.on_event(LogEvent("panic", p["when"], p["btype"], msg, statement=parts.get("STATEMENT"),
                                   location=parts.get("LOCATION"), context=parts.get("CONTEXT")))
            return
        if level in ("ERROR", "FATAL"):
            m = SQLSTATE.match(msg)
            if m and (m.group(1).startswith("XX") or m.group(1).startswith("58")) and \
                    (p["btype"] != "client backend" or level == "FATAL"):
                self.on_event(LogEvent("internal", p["when"], p["btype"], msg, statement=parts.get("STATEMENT"),
                                       location=parts.get("LOCATION"), context=parts.get("CONTEXT")))
