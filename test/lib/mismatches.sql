-- mismatches(t), created in the schema named by the psql variable schema:
-- the number of rows in which materialized table t and its query differ
-- (EXCEPT ALL both ways); 0 when the table holds exactly its query's result.
-- The query is read as the table's owner, as its refreshes read it (its
-- hidden view checks privileges and row level security of the reader).
-- Used by sql/continuous.sql, the pgTAP helpers and the load and crash tests.
CREATE FUNCTION :"schema".mismatches(t regclass) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v text := (SELECT query_view::regclass::text FROM materialized_table_internal.mt_table WHERE relid = t);
    owner text := (SELECT relowner::regrole::text FROM pg_class WHERE oid = t);
    caller text := current_user;
    n bigint;
BEGIN
    EXECUTE format('SET LOCAL ROLE %s', owner);
    EXECUTE format('SELECT count(*) FROM ((TABLE %s EXCEPT ALL TABLE %s) UNION ALL (TABLE %s EXCEPT ALL TABLE %s)) d',
                   t, v, v, t) INTO n;
    EXECUTE format('SET LOCAL ROLE %I', caller);
    RETURN n;
END
$$;
