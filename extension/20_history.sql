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
    -- how the rows were computed (since 1.2; see refresh_history)
    strategy text,
    CONSTRAINT refresh_result_pkey PRIMARY KEY (run_id),
    CONSTRAINT refresh_result_status_check CHECK (status IN ('SUCCEEDED', 'FAILED', 'SKIPPED')),
    CONSTRAINT refresh_result_strategy_check CHECK (strategy IN ('FULL', 'KEYS', 'DELTAS'))
);
-- the trim looks for results older than the retention whose run row is gone
CREATE INDEX refresh_result_finished_at_idx ON materialized_table_internal.refresh_result (finished_at);
REVOKE ALL ON materialized_table_internal.refresh_run FROM PUBLIC;
REVOKE ALL ON materialized_table_internal.refresh_result FROM PUBLIC;

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
       r.pid,
       o.strategy
  FROM materialized_table_internal.refresh_run r
  LEFT JOIN materialized_table_internal.refresh_result o USING (run_id);
REVOKE ALL ON materialized_table_internal.history FROM PUBLIC;

-- What users query.  Errors may quote data values: a table's runs are
-- shown to the roles that may read it (its owner, a role with SELECT on
-- it), and to pg_read_all_stats, as pg_stat_statements shows query texts.
CREATE VIEW materialized_table.refresh_history AS
SELECT h.*
  FROM materialized_table_internal.history h
 WHERE pg_catalog.has_table_privilege(h.table_name::pg_catalog.oid, 'SELECT')
    OR pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE');

GRANT SELECT ON materialized_table.refresh_history TO PUBLIC;
