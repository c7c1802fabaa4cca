-- materialized_table--1.0--1.1.sql: ALTER EXTENSION materialized_table UPDATE TO '1.1'

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION materialized_table UPDATE TO '1.1'" to load this file. \quit

SET LOCAL search_path = pg_catalog, pg_temp;

-- The catalog: a table's id names its hidden objects (version 1.0 named
-- them after its OID, which becomes its id), and a restored table says
-- what it waits for.  The catalog is no longer dumped (each table's
-- restore marker carries its row); the ids' sequence is.
ALTER TABLE materialized_table_internal.mt_table
    ADD COLUMN restore_pending text,
    ADD COLUMN id bigint;
UPDATE materialized_table_internal.mt_table SET id = relid::pg_catalog.oid;
ALTER TABLE materialized_table_internal.mt_table
    ALTER COLUMN id SET NOT NULL,
    ADD CONSTRAINT mt_table_id_key UNIQUE (id);
ALTER EXTENSION materialized_table DROP TABLE materialized_table_internal.mt_table;
ALTER EXTENSION materialized_table ADD TABLE materialized_table_internal.mt_table;
CREATE SEQUENCE materialized_table_internal.table_id_seq;
SELECT pg_catalog.setval('materialized_table_internal.table_id_seq',
                         GREATEST(1, (SELECT pg_catalog.max(id) FROM materialized_table_internal.mt_table)),
                         EXISTS (SELECT FROM materialized_table_internal.mt_table));
SELECT pg_catalog.pg_extension_config_dump('materialized_table_internal.table_id_seq', '');

-- A table's query as materialized_tables shows it (its hidden view,
-- deparsed); no row when the table was dropped while the reader waited.
CREATE FUNCTION materialized_table_internal.query_definition(query_view regclass)
RETURNS SETOF text
LANGUAGE C STRICT STABLE ROWS 1
AS 'MODULE_PATHNAME', 'mt_query_definition';

-- the end of the last batch whose work for the table the worker committed
ALTER TABLE materialized_table_internal.continuous_state ADD COLUMN applied_lsn pg_lsn;

-- Who sees what: a table's state, query and history show to the roles
-- that may read it; the lineage reads every table's.
-- Every run, for the extension's own use (lineage); users read
-- refresh_history below.
CREATE VIEW materialized_table_internal.history AS
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
REVOKE ALL ON materialized_table_internal.history FROM PUBLIC;

-- What users query.  Errors may quote data values: a table's runs are
-- shown to the roles that may read it (its owner, a role with SELECT on
-- it), and to pg_read_all_stats, as pg_stat_statements shows query texts.
CREATE OR REPLACE VIEW materialized_table.refresh_history AS
SELECT h.*
  FROM materialized_table_internal.history h
 WHERE pg_catalog.has_table_privilege(h.table_name::pg_catalog.oid, 'SELECT')
    OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE');

GRANT SELECT ON materialized_table.refresh_history TO PUBLIC;

-- Every table's state, for the extension's own use (lineage); users read
-- materialized_tables below.
CREATE VIEW materialized_table_internal.tables AS
SELECT t.relid AS table_name,
       t.refresh_mode,
       materialized_table_internal.freshness_interval(t.freshness_value, t.freshness_unit) AS freshness,
       t.refresh_status,
       d.definition_query,
       t.partition_keys,
       t.options,
       t.last_refresh_time,
       t.scheduler,
       CASE WHEN t.refresh_mode = 'FULL' AND t.refresh_status = 'ACTIVATED' AND t.restore_pending IS NULL THEN
            pg_catalog.date_bin(materialized_table_internal.freshness_interval(t.freshness_value, t.freshness_unit),
                                pg_catalog.now(), 'epoch'::pg_catalog.timestamptz)
            + materialized_table_internal.freshness_interval(t.freshness_value, t.freshness_unit)
       END AS next_refresh_time,
       CASE WHEN t.refresh_mode = 'CONTINUOUS' AND c.strategy IN ('KEYS', 'DELTAS')
            THEN 'INCREMENTAL' ELSE 'FULL_RECOMPUTE'
       END AS maintenance,
       -- a table restored from a dump and not taken up yet says why
       CASE WHEN t.restore_pending IS NOT NULL THEN t.restore_pending
            WHEN t.refresh_mode = 'CONTINUOUS' THEN c.reason
            ELSE 'recomputed on a schedule'
       END AS maintenance_detail,
       CASE WHEN t.restore_pending IS NULL THEN l.current_lag END AS current_lag,
       t.restore_pending IS NULL AND
       l.current_lag <= materialized_table_internal.freshness_interval(t.freshness_value, t.freshness_unit)
           AS freshness_met
  FROM materialized_table_internal.mt_table t
  -- no row for a table dropped while the reader waited for its query
  CROSS JOIN LATERAL materialized_table_internal.query_definition(t.query_view) d(definition_query)
  LEFT JOIN materialized_table_internal.continuous_state c ON c.relid = t.relid::pg_catalog.oid
  CROSS JOIN LATERAL materialized_table_internal.current_lag(t, c) l;
REVOKE ALL ON materialized_table_internal.tables FROM PUBLIC;

-- What users query.  Column names here are public interface.  A table's
-- query and state are shown to the roles that may read it (its owner, a
-- role with SELECT on it), and to pg_read_all_stats.
CREATE OR REPLACE VIEW materialized_table.materialized_tables AS
SELECT m.*
  FROM materialized_table_internal.tables m
 WHERE pg_catalog.has_table_privilege(m.table_name::pg_catalog.oid, 'SELECT')
    OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE');

GRANT SELECT ON materialized_table.materialized_tables TO PUBLIC;

CREATE OR REPLACE VIEW materialized_table.lineage AS
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
              FROM materialized_table_internal.history h
             WHERE h.table_name = m.table_name AND h.status IN ('SUCCEEDED', 'FAILED')
             ORDER BY h.started_at DESC, h.run_id DESC
             LIMIT 1) AS last_refresh_status,
           m.current_lag,
           m.freshness_met,
           l.level
      FROM materialized_table_internal.tables m
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

-- The tables themselves: their hidden objects belong to the extension's
-- owner (their owners keep what their refreshes need), query views check
-- the reader's privileges, each table gets its restore marker, and pg_cron
-- jobs name their table instead of its OID.
CREATE FUNCTION materialized_table_internal.update_tables_1_1()
RETURNS void
LANGUAGE C
AS 'MODULE_PATHNAME', 'mt_update_tables_1_1';
SELECT materialized_table_internal.update_tables_1_1();
DROP FUNCTION materialized_table_internal.update_tables_1_1();
