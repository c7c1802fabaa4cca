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
