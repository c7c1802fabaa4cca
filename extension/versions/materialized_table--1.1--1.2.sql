-- materialized_table--1.1--1.2.sql: ALTER EXTENSION materialized_table UPDATE TO '1.2'

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION materialized_table UPDATE TO '1.2'" to load this file. \quit

SET LOCAL search_path = pg_catalog, pg_temp;

-- Each refresh says how it computed the rows: FULL (the query), KEYS (the
-- rows of changed key values), DELTAS (adjusted aggregates).  Runs of
-- earlier versions have none.
ALTER TABLE materialized_table_internal.refresh_result
    ADD COLUMN strategy text,
    ADD CONSTRAINT refresh_result_strategy_check CHECK (strategy IN ('FULL', 'KEYS', 'DELTAS'));

CREATE OR REPLACE VIEW materialized_table_internal.history AS
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
       r.pid,
       o.strategy
  FROM materialized_table_internal.refresh_run r
  LEFT JOIN materialized_table_internal.refresh_result o USING (run_id);

-- refresh_history is h.*: defined again, it shows the new column
CREATE OR REPLACE VIEW materialized_table.refresh_history AS
SELECT h.*
  FROM materialized_table_internal.history h
 WHERE pg_catalog.has_table_privilege(h.table_name::pg_catalog.oid, 'SELECT')
    OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE');
