"""What a seed and a size generate: every feature of the grammar, counted.

    /usr/bin/python3 test/fuzz/mt_fuzz.py --coverage [--seed S --statements N --sessions K]

Needs no server (the statements depend on the seed only).  It exits 1 when
a feature is never generated, which is how the CI seed was chosen: it
covers all of them.
"""

import re

# (feature, pattern over a statement's SQL); "kind:" patterns match the
# step's kind, "unit:" ones the unit's description
FEATURES = [
    ("CREATE", r"execute\(.*CREATE MATERIALIZED TABLE"),
    ("CREATE OR ALTER", r"CREATE OR ALTER MATERIALIZED TABLE"),
    ("column list, names only", r"TABLE \S+ \((\w+, )+\w+\) "),
    ("column list with types", r"TABLE \S+ \(\w+ (INT|STRING|BIGINT|DECIMAL|TEXT|DATE|DOUBLE)"),
    ("computed column", r"\w+_calc AS \w+ \* 10"),
    ("metadata column", r"METADATA FROM 'refresh_time'"),
    ("watermark", r"WATERMARK FOR \w+ AS"),
    ("PRIMARY KEY (...) NOT ENFORCED", r"PRIMARY KEY \([\w, ]+\) NOT ENFORCED"),
    ("inline PRIMARY KEY NOT ENFORCED", r"\w+ \w+ PRIMARY KEY NOT ENFORCED"),
    ("CONSTRAINT name PRIMARY KEY", r"CONSTRAINT pk_\d+ PRIMARY KEY"),
    ("column COMMENT", r"\w+ \w+(\(\d+(, \d+)?\))? COMMENT ''"),
    ("table COMMENT", r"\) COMMENT ''|\S COMMENT ''fuzzed"),
    ("DISTRIBUTED BY HASH", r"DISTRIBUTED BY HASH"),
    ("DISTRIBUTED BY RANGE", r"DISTRIBUTED BY RANGE"),
    ("DISTRIBUTED INTO n BUCKETS", r"DISTRIBUTED INTO \d+ BUCKETS"),
    ("PARTITIONED BY", r"PARTITIONED BY \("),
    ("date-formatter option", r"partition\.fields\.\w+\.date-formatter"),
    ("WITH options", r"WITH \(''"),
    ("FRESHNESS SECOND", r"FRESHNESS = INTERVAL ''\d+'' SECOND\b"),
    ("FRESHNESS SECONDS", r"INTERVAL ''\d+'' SECONDS"),
    ("FRESHNESS MINUTE", r"INTERVAL ''\d+'' MINUTE\b"),
    ("FRESHNESS MINUTES", r"INTERVAL ''\d+'' MINUTES"),
    ("FRESHNESS HOUR", r"INTERVAL ''\d+'' HOUR\b"),
    ("FRESHNESS HOURS", r"INTERVAL ''\d+'' HOURS"),
    ("FRESHNESS DAY", r"INTERVAL ''\d+'' DAY\b"),
    ("FRESHNESS DAYS", r"INTERVAL ''\d+'' DAYS"),
    ("FRESHNESS refused (zero, MONTH, compound, ...)", r"INTERVAL ''(0|-1|1\.5)''|MONTH|DAY TO HOUR|WEEK"),
    ("REFRESH_MODE = FULL", r"REFRESH_MODE = (FULL|full)"),
    ("REFRESH_MODE = CONTINUOUS", r"REFRESH_MODE = CONTINUOUS"),
    ("query: GROUP BY", r"GROUP BY"),
    ("query: JOIN", r" JOIN fz\."),
    ("query: LEFT JOIN", r"LEFT JOIN"),
    ("query: DISTINCT", r"SELECT DISTINCT"),
    ("query: UNION ALL", r"UNION ALL"),
    ("query: window function", r"OVER \(PARTITION BY"),
    ("query: CTE", r"WITH big AS"),
    ("query: EXISTS", r"WHERE EXISTS"),
    ("query: LATERAL", r"LATERAL"),
    ("query: ROLLUP", r"ROLLUP"),
    ("query: FILTER", r"FILTER \(WHERE"),
    ("query: over a view", r"FROM fz\.v_orders"),
    ("query: over a materialized view", r"FROM fz\.mv_sales"),
    ("query: over a partitioned table", r"FROM fz\.metrics"),
    ("query: over a materialized table", r"FROM (fm|fy)\.(t\d|s\d_\w)"),
    ("query: division by zero", r"qty / \(qty - qty\)"),
    ("ALTER SUSPEND", r"ALTER MATERIALIZED TABLE \S+ SUSPEND"),
    ("ALTER RESUME", r"ALTER MATERIALIZED TABLE \S+ RESUME'"),
    ("ALTER RESUME WITH", r"RESUME WITH \("),
    ("ALTER REFRESH", r"ALTER MATERIALIZED TABLE \S+ REFRESH'"),
    ("ALTER REFRESH PARTITION", r"REFRESH PARTITION \("),
    ("ALTER SET FRESHNESS", r"SET FRESHNESS = "),
    ("ALTER AS (evolved query)", r"ALTER MATERIALIZED TABLE \S+ AS SELECT .*(appended|, (sum|avg|count|min|max|string_agg|array_agg|bool_and)\()"),
    ("ALTER ADD", r"ALTER MATERIALIZED TABLE \S+ ADD "),
    ("ALTER MODIFY", r"ALTER MATERIALIZED TABLE \S+ MODIFY "),
    ("ALTER DROP", r"ALTER MATERIALIZED TABLE \S+ DROP "),
    ("ALTER SET options", r"ALTER MATERIALIZED TABLE \S+ SET \("),
    ("ALTER RESET options", r"ALTER MATERIALIZED TABLE \S+ RESET \("),
    ("DROP MATERIALIZED TABLE", r"DROP MATERIALIZED TABLE (?!IF)"),
    ("DROP MATERIALIZED TABLE IF EXISTS", r"DROP MATERIALIZED TABLE IF EXISTS"),
    ("several statements in one call", "kind:flink_multi"),
    ("mutated", "kind:/mutated"),
    ("token $n (PARAM)", r"kind:/mutated .*[^(\w]\$[0-9]"),
    ("token U&\"...\"", r'U&"'),
    ("token U&'...'", r"U&''"),
    ("token b'1'", r"[bB]''[01]"),
    ("token x'1F'", r"[xX]''"),
    ("token 1.5e3", r"\d\.?\d*e[-+]?\d"),
    ("token ::", r"::"),
    ("token ..", r"[^.]\.\.[^.]"),
    ("token :=", r":="),
    ("token =>", r"=>"),
    ("token <= >= <> !=", r"<=|>=|<>|!="),
    ("token backtick", r"`"),
    ("token dollar quote", r"\$a\$|\$\$"),
    ("token comment", r"/\* |-- "),
    ("very long identifier", r"[A-Za-zé]{200}"),
    ("odd Unicode", r"[\u200d\u202e\ufeff\u2028\U0001F642]"),
    ("wrapper: DO block", r"DO \$w\$"),
    ("wrapper: two calls", r"execute\(.*\) FROM generate_series\(1, 2\)"),
    ("wrapper: prepared statement", r"PREPARE fz_p"),
    ("as the superuser", "unit:-- as the superuser"),
    ("as fuzz_alice", "unit:-- as fuzz_alice"),
    ("as fuzz_bob", "unit:-- as fuzz_bob"),
    ("as fuzz_carol (no LOGIN)", "unit:-- as fuzz_carol"),
    ("transaction committed", "unit:; commit"),
    ("transaction rolled back", "unit:; rollback"),
    ("prepared transaction committed", "unit:; prepare_commit"),
    ("prepared transaction rolled back", "unit:; prepare_rollback"),
    ("REPEATABLE READ / SERIALIZABLE", "unit:, (REPEATABLE READ|SERIALIZABLE)"),
    ("savepoints", "unit:a savepoint around"),
]

NATIVE_KINDS = [
    "insert_source", "update_source", "delete_source", "truncate_source", "copy_source", "copy_out",
    "insert_mt", "update_mt", "delete_mt", "truncate_mt", "copy_mt", "read_mt", "lock_mt",
    "api_show_create", "api_views", "api_refresh", "api_scheduled", "api_execute_odd",
    "rename_mt", "owner_mt", "set_schema_mt", "alter_columns_mt", "persistence_mt", "rls_mt", "storage_mt",
    "drop_table_mt", "index_mt", "index_concurrently_mt", "trigger_mt", "grant_mt", "vacuum_mt", "matview_mt",
    "inherit_mt", "hidden_objects", "alter_source_columns", "partition_source", "rls_source", "trigger_source",
    "grant_source", "drop_source", "matview_source", "vacuum_source", "drop_schema", "create_schema",
    "grant_schema", "rename_schema", "drop_owned", "reassign_owned", "role_login", "role_rename", "settings",
    "drop_extension", "create_extension", "repair",
]


def coverage(units_by_session, quota):
    """Counts of every feature over the first quota[s] statements of each session."""
    counts = {name: 0 for name, _ in FEATURES}
    counts.update({"native: " + k: 0 for k in NATIVE_KINDS})
    compiled = []
    for name, pat in FEATURES:
        where, _, rx = pat.partition(":") if pat.startswith(("kind:", "unit:")) else ("sql", "", pat)
        compiled.append((name, where, re.compile(rx, re.S)))
    for s, units in enumerate(units_by_session):
        done = 0
        for unit in units:
            if done >= quota[s]:
                break
            done += len(unit.steps)
            desc = unit.describe()
            for name, where, rx in compiled:
                if where == "unit" and rx.search(desc):
                    counts[name] += 1
            for step in unit.steps:
                sql = step.sql[:3000]        # long tokens would make some patterns slow
                key = "native: " + step.kind
                if key in counts:
                    counts[key] += 1
                for name, where, rx in compiled:
                    if where == "sql" and rx.search(sql) or where == "kind" and rx.search(step.kind + " " + sql):
                        counts[name] += 1
    return counts
