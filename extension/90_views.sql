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
CREATE VIEW materialized_table.materialized_tables AS
SELECT m.*
  FROM materialized_table_internal.tables m
 WHERE pg_catalog.has_table_privilege(m.table_name::pg_catalog.oid, 'SELECT')
    OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE');

GRANT SELECT ON materialized_table.materialized_tables TO PUBLIC;
