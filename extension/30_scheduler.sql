-- FULL refresh mode: what a table's pg_cron job (or the worker's timer) runs.
-- Without a trigger time, the latest schedule boundary at or before now.
CREATE FUNCTION materialized_table.scheduled_refresh("table" regclass,
                                                     trigger_time timestamptz DEFAULT NULL)
RETURNS void
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mt_scheduled_refresh_sql';

COMMENT ON FUNCTION materialized_table.scheduled_refresh(regclass, timestamptz) IS
'one scheduled run of a FULL materialized table: refreshes the partition named by the schedule time (trigger time minus freshness), or the whole table';
