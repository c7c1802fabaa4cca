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
       END AS maintenance_detail
  FROM materialized_table_internal.mt_table t
  LEFT JOIN materialized_table_internal.continuous_state c ON c.relid = t.relid::pg_catalog.oid;

GRANT SELECT ON materialized_table.materialized_tables TO PUBLIC;
