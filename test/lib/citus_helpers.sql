-- Helpers of the Citus pg_regress files (test/citus/sql/*.sql), created in
-- the schema named by the psql variable schema, after mismatches.sql:
--
--   caught_up(t)      waits (30 s at most) until t equals its query and the
--                     coordinator's worker has dated it, since the call, by
--                     all of its shards
--   on_workers(what)  what runs on each worker node, by node number
CREATE FUNCTION :"schema".caught_up(t regclass) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    started timestamptz := clock_timestamp();
BEGIN
    LOOP
        IF (SELECT last_refresh_time >= started FROM materialized_table.materialized_tables
             WHERE table_name = t) AND mismatches(t) = 0 THEN
            RETURN true;
        END IF;
        IF clock_timestamp() > started + interval '30 seconds' THEN
            RETURN false;
        END IF;
        PERFORM pg_sleep(0.2);
    END LOOP;
END
$$;
CREATE FUNCTION :"schema".on_workers(what text) RETURNS TABLE (node int, result text) LANGUAGE sql AS $$
  SELECT nodeport - (SELECT min(nodeport) FROM pg_dist_node WHERE groupid > 0) + 1, result
    FROM run_command_on_workers(what) ORDER BY 1
$$;
