-- materialized_table--1.0.sql: version 1.0 as it was released, kept to install it and update from it

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION materialized_table" to load this file. \quit

SET LOCAL search_path = pg_catalog, pg_temp;

GRANT USAGE ON SCHEMA materialized_table TO PUBLIC;

-- Internal objects: the catalog, and one hidden view per materialized table
-- holding its defining query.  The views are owned by their table's owner,
-- who needs USAGE here to refresh; the catalog tables stay private.
CREATE SCHEMA materialized_table_internal;
GRANT USAGE ON SCHEMA materialized_table_internal TO PUBLIC;
-- The catalog: one row per materialized table.  Mirrored in include/catalog.h.
CREATE TABLE materialized_table_internal.mt_table (
    relid regclass NOT NULL,
    query_view regclass NOT NULL,
    definition_query text NOT NULL,
    refresh_mode text NOT NULL,
    freshness_value integer NOT NULL,
    freshness_unit text NOT NULL,
    refresh_status text NOT NULL,
    partition_keys text[] NOT NULL DEFAULT '{}',
    options jsonb NOT NULL DEFAULT '{}',
    declared_columns boolean NOT NULL DEFAULT false,
    metadata_columns jsonb NOT NULL DEFAULT '{}',
    watermark_column text,
    watermark_expression text,
    distribution jsonb,
    last_refresh_time timestamptz,
    scheduler text,
    cron_jobid bigint,
    pipeline_options jsonb NOT NULL DEFAULT '{}',
    CONSTRAINT mt_table_pkey PRIMARY KEY (relid),
    CONSTRAINT mt_table_refresh_mode_check CHECK (refresh_mode IN ('FULL', 'CONTINUOUS')),
    CONSTRAINT mt_table_freshness_check CHECK (freshness_value > 0
        AND freshness_unit IN ('SECOND', 'MINUTE', 'HOUR', 'DAY')),
    CONSTRAINT mt_table_refresh_status_check
        CHECK (refresh_status IN ('INITIALIZING', 'ACTIVATED', 'SUSPENDED')),
    CONSTRAINT mt_table_scheduler_check CHECK (scheduler IN ('pg_cron', 'worker'))
);
REVOKE ALL ON materialized_table_internal.mt_table FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('materialized_table_internal.mt_table', '');

CREATE FUNCTION materialized_table_internal.freshness_interval(value integer, unit text)
RETURNS interval
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN value * CASE unit
    WHEN 'SECOND' THEN interval '1 second'
    WHEN 'MINUTE' THEN interval '1 minute'
    WHEN 'HOUR' THEN interval '1 hour'
    WHEN 'DAY' THEN interval '1 day'
END;

-- The front door: runs Flink's MATERIALIZED TABLE statements.
CREATE FUNCTION materialized_table.execute(statement text)
RETURNS text
LANGUAGE C STRICT VOLATILE
AS 'MODULE_PATHNAME', 'mt_execute';

COMMENT ON FUNCTION materialized_table.execute(text) IS
'runs CREATE [OR ALTER], ALTER and DROP MATERIALIZED TABLE statements; returns the last command tag';

-- A Flink statement that recreates the table as it is now.
CREATE FUNCTION materialized_table.show_create(regclass)
RETURNS text
LANGUAGE C STRICT STABLE
AS 'MODULE_PATHNAME', 'mt_show_create';

-- Cleans the catalog when a materialized table is dropped by any means
-- (DROP TABLE, DROP SCHEMA ... CASCADE, DROP OWNED, a cascade from a source).
CREATE FUNCTION materialized_table_internal.on_sql_drop()
RETURNS event_trigger
LANGUAGE C
AS 'MODULE_PATHNAME', 'mt_on_sql_drop';

CREATE EVENT TRIGGER materialized_table_sql_drop ON sql_drop
    EXECUTE FUNCTION materialized_table_internal.on_sql_drop();
ALTER EVENT TRIGGER materialized_table_sql_drop ENABLE ALWAYS;
-- Refresh history (see include/history.h).  A run row is written when a
-- refresh starts, a result row when it ends.
CREATE SEQUENCE materialized_table_internal.refresh_run_seq;

CREATE TABLE materialized_table_internal.refresh_run (
    run_id bigint NOT NULL,
    relid oid NOT NULL,
    trigger text NOT NULL,
    partition text,
    started_at timestamptz NOT NULL,
    xid xid8,
    pid integer NOT NULL,
    cascade_id bigint,
    CONSTRAINT refresh_run_pkey PRIMARY KEY (run_id)
);
CREATE INDEX refresh_run_relid_idx ON materialized_table_internal.refresh_run (relid, started_at);
CREATE INDEX refresh_run_started_at_idx ON materialized_table_internal.refresh_run (started_at);

CREATE TABLE materialized_table_internal.refresh_result (
    run_id bigint NOT NULL,
    finished_at timestamptz NOT NULL,
    status text NOT NULL,
    rows bigint,
    error text,
    CONSTRAINT refresh_result_pkey PRIMARY KEY (run_id),
    CONSTRAINT refresh_result_status_check CHECK (status IN ('SUCCEEDED', 'FAILED', 'SKIPPED'))
);
-- the trim looks for results older than the retention whose run row is gone
CREATE INDEX refresh_result_finished_at_idx ON materialized_table_internal.refresh_result (finished_at);
REVOKE ALL ON materialized_table_internal.refresh_run FROM PUBLIC;
REVOKE ALL ON materialized_table_internal.refresh_result FROM PUBLIC;

CREATE VIEW materialized_table.refresh_history AS
SELECT r.run_id,
       r.relid::pg_catalog.regclass AS table_name,
       r.trigger,
       r.partition,
       r.started_at,
       o.finished_at,
       -- a run whose transaction this query's snapshot does not see as
       -- ended is running, even if it has committed since (its result row
       -- is not visible yet)
       CASE WHEN o.status IS NOT NULL THEN o.status
            WHEN pg_catalog.pg_xact_status(r.xid) <> 'aborted'
                 AND NOT pg_catalog.pg_visible_in_snapshot(r.xid, pg_catalog.pg_current_snapshot()) THEN 'RUNNING'
            ELSE 'FAILED'
       END AS status,
       o.rows,
       CASE WHEN o.status IS NOT NULL THEN o.error
            WHEN pg_catalog.pg_xact_status(r.xid) <> 'aborted'
                 AND NOT pg_catalog.pg_visible_in_snapshot(r.xid, pg_catalog.pg_current_snapshot()) THEN NULL
            ELSE 'the refresh ended without finishing (rolled back, or interrupted by a server restart)'
       END AS error,
       o.finished_at - r.started_at AS duration,
       r.cascade_id,
       r.pid
  FROM materialized_table_internal.refresh_run r
  LEFT JOIN materialized_table_internal.refresh_result o USING (run_id);

GRANT SELECT ON materialized_table.refresh_history TO PUBLIC;
-- FULL refresh mode: what a table's pg_cron job (or the worker's timer) runs.
-- Without a trigger time, the latest schedule boundary at or before now.
CREATE FUNCTION materialized_table.scheduled_refresh("table" regclass,
                                                     trigger_time timestamptz DEFAULT NULL)
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mt_scheduled_refresh_sql';

COMMENT ON FUNCTION materialized_table.scheduled_refresh(regclass, timestamptz) IS
'one scheduled run of a FULL materialized table: refreshes the partition named by the schedule time (trigger time minus freshness), or the whole table';
-- CONTINUOUS refresh mode (see include/continuous_analysis.h and
-- src/continuous_worker.c).  One row per CONTINUOUS table: how it is
-- maintained and where its pipeline stands.
CREATE TABLE materialized_table_internal.continuous_state (
    relid oid NOT NULL,
    strategy text NOT NULL,
    reason text NOT NULL,
    poll boolean NOT NULL DEFAULT false,
    synced boolean NOT NULL DEFAULT false,
    needs_full boolean NOT NULL DEFAULT false,
    pending_since timestamptz,
    last_apply timestamptz,
    baseline_xmin xid,
    baseline_xmax xid,
    baseline_xip xid[],
    baseline_lsn pg_lsn,
    CONSTRAINT continuous_state_pkey PRIMARY KEY (relid),
    CONSTRAINT continuous_state_strategy_check CHECK (strategy IN ('KEYS', 'DELTAS', 'FULL'))
);

-- Work that waits for its table (suspended, or not due yet): the key
-- values of changed rows, one family per source occurrence ...
CREATE TABLE materialized_table_internal.change_keys (
    relid oid NOT NULL,
    family integer NOT NULL,
    keys text[] NOT NULL,
    CONSTRAINT change_keys_pkey PRIMARY KEY (relid, family, keys)
);

-- ... or, for tables maintained by deltas, per-group adjustments.
CREATE TABLE materialized_table_internal.change_deltas (
    relid oid NOT NULL,
    keys text[] NOT NULL,
    deltas text[] NOT NULL
);
CREATE INDEX change_deltas_relid_idx ON materialized_table_internal.change_deltas (relid);

-- Groups of a table maintained by deltas through a join that were
-- recomputed from the sources as of a snapshot (a change of a joined
-- source named them): a change decoded later whose transaction that
-- snapshot saw is already counted in them.  A baseline is a filter (each
-- family: its columns, each with the values it matches) and the snapshot's
-- xmin, xmax and xip; it is forgotten once decoding has passed lsn.
CREATE TABLE materialized_table_internal.continuous_baseline (
    relid oid NOT NULL,
    lsn pg_lsn NOT NULL,
    family integer NOT NULL,
    position integer NOT NULL,
    column_name text NOT NULL,
    vals text[] NOT NULL,
    has_null boolean NOT NULL,
    snapshot_xmin xid NOT NULL,
    snapshot_xmax xid NOT NULL,
    snapshot_xip xid[] NOT NULL
);
CREATE INDEX continuous_baseline_relid_idx ON materialized_table_internal.continuous_baseline (relid);

REVOKE ALL ON materialized_table_internal.continuous_state FROM PUBLIC;
REVOKE ALL ON materialized_table_internal.continuous_baseline FROM PUBLIC;
REVOKE ALL ON materialized_table_internal.change_keys FROM PUBLIC;
REVOKE ALL ON materialized_table_internal.change_deltas FROM PUBLIC;

-- Every change committed before this time has been applied to its table or
-- kept for it (continuous_state.pending_since); NULL when the database's
-- worker has made no pass since the server started.
CREATE FUNCTION materialized_table_internal.continuous_horizon()
RETURNS timestamptz
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mt_continuous_horizon_sql';
-- How old a table's content may be right now.
--
-- FULL: the time since the last successful refresh started (its content is
-- the query's result as of then).
--
-- CONTINUOUS: the age of the oldest change not applied yet, zero when
-- caught up.  Changes the worker has read but keeps for later (the table is
-- suspended, not due yet, or failed) are dated by pending_since.  Changes it
-- has not read yet are dated by its horizon (see continuous_horizon()): they
-- count once the horizon is older than the worker's usual pace -- it passes
-- every three quarters of the shortest freshness, and at least every
-- second, plus the time it applies -- so the freshness, at most 2 seconds.
-- A table not yet taken up by the worker (just created or switched, or its
-- replication slot was made again), or a database whose worker has not
-- passed since the server started, counts from its last refresh.
CREATE FUNCTION materialized_table_internal.current_lag(
    t materialized_table_internal.mt_table,
    c materialized_table_internal.continuous_state)
RETURNS TABLE (current_lag interval)
LANGUAGE sql STABLE
BEGIN ATOMIC
SELECT CASE
         WHEN t.refresh_mode = 'FULL' THEN
           GREATEST(pg_catalog.statement_timestamp() - t.last_refresh_time,
                               interval '0')
         ELSE
           GREATEST(
             interval '0',
             CASE WHEN c.relid IS NULL OR NOT c.synced OR h.horizon IS NULL
                  THEN pg_catalog.statement_timestamp() - t.last_refresh_time END,
             pg_catalog.statement_timestamp() - c.pending_since,
             CASE WHEN pg_catalog.statement_timestamp() - h.horizon >
                       LEAST(interval '2 seconds',
                                        materialized_table_internal.freshness_interval(
                                            t.freshness_value, t.freshness_unit))
                  THEN pg_catalog.statement_timestamp() - h.horizon END)
       END
  FROM (SELECT materialized_table_internal.continuous_horizon() AS horizon) h;
END;

-- What users query.  Column names here are public interface.
CREATE VIEW materialized_table.materialized_tables AS
SELECT t.relid AS table_name,
       t.refresh_mode,
       materialized_table_internal.freshness_interval(t.freshness_value, t.freshness_unit) AS freshness,
       t.refresh_status,
       pg_catalog.btrim(pg_catalog.pg_get_viewdef(t.query_view, true), E' \n;') AS definition_query,
       t.partition_keys,
       t.options,
       t.last_refresh_time,
       t.scheduler,
       CASE WHEN t.refresh_mode = 'FULL' AND t.refresh_status = 'ACTIVATED' THEN
            pg_catalog.date_bin(materialized_table_internal.freshness_interval(t.freshness_value, t.freshness_unit),
                                pg_catalog.now(), 'epoch'::pg_catalog.timestamptz)
            + materialized_table_internal.freshness_interval(t.freshness_value, t.freshness_unit)
       END AS next_refresh_time,
       CASE WHEN t.refresh_mode = 'CONTINUOUS' AND c.strategy IN ('KEYS', 'DELTAS')
            THEN 'INCREMENTAL' ELSE 'FULL_RECOMPUTE'
       END AS maintenance,
       CASE WHEN t.refresh_mode = 'CONTINUOUS' THEN c.reason
            ELSE 'recomputed on a schedule'
       END AS maintenance_detail,
       l.current_lag,
       l.current_lag <= materialized_table_internal.freshness_interval(t.freshness_value, t.freshness_unit)
           AS freshness_met
  FROM materialized_table_internal.mt_table t
  LEFT JOIN materialized_table_internal.continuous_state c ON c.relid = t.relid::pg_catalog.oid
  CROSS JOIN LATERAL materialized_table_internal.current_lag(t, c) l;

GRANT SELECT ON materialized_table.materialized_tables TO PUBLIC;
-- Lineage: which relations each materialized table reads (see src/lineage.c).
--
-- PostgreSQL records what a table's query view reads in pg_depend; plain
-- views are looked through (a view is not a node of the lineage, what it
-- reads is) and a partition counts as its partitioned table.

-- The relations a query view reads: tables, partitioned tables, foreign
-- tables, materialized views and materialized tables; a partition stands
-- for the root of its tree.  Reads only PostgreSQL's catalogs, so that it
-- runs with anyone's rights.
CREATE FUNCTION materialized_table_internal.relations_read(query_view oid)
RETURNS SETOF oid
LANGUAGE sql STABLE STRICT ROWS 3
BEGIN ATOMIC
WITH RECURSIVE reads(rel) AS (
    SELECT d.refobjid
      FROM pg_catalog.pg_rewrite r
      JOIN pg_catalog.pg_depend d
        ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = r.oid
       AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid <> r.ev_class
     WHERE r.ev_class = $1
    UNION
    SELECT d.refobjid
      FROM reads
      JOIN pg_catalog.pg_class c ON c.oid = reads.rel AND c.relkind = 'v'
      JOIN pg_catalog.pg_rewrite r ON r.ev_class = c.oid
      JOIN pg_catalog.pg_depend d
        ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = r.oid
       AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid <> r.ev_class
)
SELECT DISTINCT
       CASE WHEN c.relispartition
            THEN pg_catalog.pg_partition_root(c.oid::pg_catalog.regclass)::pg_catalog.oid
            ELSE c.oid
       END
  FROM reads
  JOIN pg_catalog.pg_class c ON c.oid = reads.rel
 WHERE c.relkind IN ('r', 'p', 'f', 'm');
END;

-- What users query: one row per edge, upstream relation -> downstream
-- materialized table, with both ends' state (the upstream's is NULL when it
-- is not a materialized table).  A table's level is 1 when it reads no
-- other materialized table, else one more than the deepest one it reads.
CREATE VIEW materialized_table.lineage AS
WITH RECURSIVE edges AS MATERIALIZED (
    SELECT r.upstream, t.relid::pg_catalog.oid AS downstream
      FROM materialized_table_internal.mt_table t
     CROSS JOIN LATERAL materialized_table_internal.relations_read(t.query_view::pg_catalog.oid) AS r(upstream)
     WHERE r.upstream <> t.relid::pg_catalog.oid
), table_edges AS (
    SELECT e.upstream, e.downstream
      FROM edges e
     WHERE e.upstream IN (SELECT relid::pg_catalog.oid FROM materialized_table_internal.mt_table)
), levels(relid, level) AS (
    SELECT t.relid::pg_catalog.oid, 1
      FROM materialized_table_internal.mt_table t
     WHERE NOT EXISTS (SELECT FROM table_edges e WHERE e.downstream = t.relid::pg_catalog.oid)
    UNION ALL
    SELECT e.downstream, l.level + 1
      FROM levels l
      JOIN table_edges e ON e.upstream = l.relid
     WHERE l.level < 64
), depths AS (
    SELECT l.relid, pg_catalog.max(l.level) AS level FROM levels l GROUP BY l.relid
), tables AS MATERIALIZED (
    SELECT m.table_name::pg_catalog.oid AS relid,
           m.refresh_mode,
           m.freshness,
           m.refresh_status,
           m.last_refresh_time,
           (SELECT h.status
              FROM materialized_table.refresh_history h
             WHERE h.table_name = m.table_name AND h.status IN ('SUCCEEDED', 'FAILED')
             ORDER BY h.started_at DESC, h.run_id DESC
             LIMIT 1) AS last_refresh_status,
           m.current_lag,
           m.freshness_met,
           l.level
      FROM materialized_table.materialized_tables m
      LEFT JOIN depths l ON l.relid = m.table_name::pg_catalog.oid
)
SELECT e.upstream::pg_catalog.regclass AS upstream,
       CASE WHEN u.relid IS NOT NULL THEN 'MATERIALIZED TABLE'
            WHEN c.relkind = 'f' THEN 'FOREIGN TABLE'
            WHEN c.relkind = 'm' THEN 'MATERIALIZED VIEW'
            ELSE 'TABLE'
       END AS upstream_kind,
       e.downstream::pg_catalog.regclass AS downstream,
       d.level AS downstream_level,
       u.refresh_mode AS upstream_refresh_mode,
       u.freshness AS upstream_freshness,
       u.refresh_status AS upstream_refresh_status,
       u.last_refresh_time AS upstream_last_refresh_time,
       u.last_refresh_status AS upstream_last_refresh_status,
       u.current_lag AS upstream_current_lag,
       u.freshness_met AS upstream_freshness_met,
       d.refresh_mode AS downstream_refresh_mode,
       d.freshness AS downstream_freshness,
       d.refresh_status AS downstream_refresh_status,
       d.last_refresh_time AS downstream_last_refresh_time,
       d.last_refresh_status AS downstream_last_refresh_status,
       d.current_lag AS downstream_current_lag,
       d.freshness_met AS downstream_freshness_met
  FROM edges e
  JOIN pg_catalog.pg_class c ON c.oid = e.upstream
  JOIN tables d ON d.relid = e.downstream
  LEFT JOIN tables u ON u.relid = e.upstream;

GRANT SELECT ON materialized_table.lineage TO PUBLIC;

-- The lineage as a Graphviz graph:
--   psql -Atc 'SELECT materialized_table.lineage_dot()' | dot -Tpng > lineage.png
CREATE FUNCTION materialized_table.lineage_dot()
RETURNS text
LANGUAGE C STABLE
AS 'MODULE_PATHNAME', 'mt_lineage_dot';

COMMENT ON FUNCTION materialized_table.lineage_dot() IS
'the lineage of the materialized tables as Graphviz DOT text: sources and materialized tables (with mode, freshness, status and last refresh), suspended tables dashed and grey, failing ones red';
-- Refreshes on demand, optionally cascading down the lineage (src/cascade.c).
CREATE SEQUENCE materialized_table_internal.refresh_cascade_seq;
REVOKE ALL ON SEQUENCE materialized_table_internal.refresh_cascade_seq FROM PUBLIC;

CREATE FUNCTION materialized_table.refresh("table" regclass,
                                           "partition" jsonb DEFAULT NULL,
                                           "cascade" boolean DEFAULT false)
RETURNS TABLE (table_name regclass, depth integer, status text, "rows" bigint,
               detail text, cascade_id bigint)
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mt_refresh_sql';

COMMENT ON FUNCTION materialized_table.refresh(regclass, jsonb, boolean) IS
'refreshes a materialized table, or the partition named as {"column": "value", ...}; with cascade also every materialized table below it in the lineage (at most 6 levels, upstream first, each table partitioned like the first for a partition refresh); one row per table';
