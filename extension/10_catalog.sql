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
    -- restored from a dump and not taken up yet: why (see src/restore.c)
    restore_pending text,
    -- names the table's hidden objects (query_<id>, ...): kept by dumps
    id bigint NOT NULL,
    CONSTRAINT mt_table_pkey PRIMARY KEY (relid),
    CONSTRAINT mt_table_id_key UNIQUE (id),
    CONSTRAINT mt_table_refresh_mode_check CHECK (refresh_mode IN ('FULL', 'CONTINUOUS')),
    CONSTRAINT mt_table_freshness_check CHECK (freshness_value > 0
        AND freshness_unit IN ('SECOND', 'MINUTE', 'HOUR', 'DAY')),
    CONSTRAINT mt_table_refresh_status_check
        CHECK (refresh_status IN ('INITIALIZING', 'ACTIVATED', 'SUSPENDED')),
    CONSTRAINT mt_table_scheduler_check CHECK (scheduler IN ('pg_cron', 'worker'))
);
REVOKE ALL ON materialized_table_internal.mt_table FROM PUBLIC;
-- Not dumped: each table's restore marker carries its row (src/marker.c).
-- The ids' sequence is dumped: tables created after a restore get new ones.
CREATE SEQUENCE materialized_table_internal.table_id_seq;
SELECT pg_catalog.pg_extension_config_dump('materialized_table_internal.table_id_seq', '');

CREATE FUNCTION materialized_table_internal.freshness_interval(value integer, unit text)
RETURNS interval
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN value * CASE unit
    WHEN 'SECOND' THEN interval '1 second'
    WHEN 'MINUTE' THEN interval '1 minute'
    WHEN 'HOUR' THEN interval '1 hour'
    WHEN 'DAY' THEN interval '1 day'
END;

-- The front door: runs Flink's MATERIALIZED TABLE statements.  Not STRICT:
-- a NULL statement is an error, not a NULL result.
CREATE FUNCTION materialized_table.execute(statement text)
RETURNS text
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mt_execute';

COMMENT ON FUNCTION materialized_table.execute(text) IS
'runs CREATE [OR ALTER], ALTER and DROP MATERIALIZED TABLE statements; returns the last command tag (SHOW CREATE: the statement)';

-- The statements that return rows: SHOW MATERIALIZED TABLES, SHOW CREATE
-- MATERIALIZED TABLE, DESCRIBE.  One row type for all (see src/describe.c).
CREATE FUNCTION materialized_table.execute_query(statement text)
RETURNS TABLE (name text, type text, "null" boolean, key text, extras text,
               watermark text, comment text)
LANGUAGE C VOLATILE ROWS 10
AS 'MODULE_PATHNAME', 'mt_execute_query';

COMMENT ON FUNCTION materialized_table.execute_query(text) IS
'runs one SHOW MATERIALIZED TABLES, SHOW CREATE MATERIALIZED TABLE or DESCRIBE statement; returns its rows';

-- A Flink statement that recreates the table as it is now.
CREATE FUNCTION materialized_table.show_create(regclass)
RETURNS text
LANGUAGE C STRICT STABLE
AS 'MODULE_PATHNAME', 'mt_show_create';

-- A table's query as materialized_tables shows it (its hidden view,
-- deparsed); no row when the table was dropped while the reader waited.
CREATE FUNCTION materialized_table_internal.query_definition(query_view regclass)
RETURNS SETOF text
LANGUAGE C STRICT STABLE ROWS 1
AS 'MODULE_PATHNAME', 'mt_query_definition';

-- Cleans the catalog when a materialized table is dropped by any means
-- (DROP TABLE, DROP SCHEMA ... CASCADE, DROP OWNED, a cascade from a source).
CREATE FUNCTION materialized_table_internal.on_sql_drop()
RETURNS event_trigger
LANGUAGE C
AS 'MODULE_PATHNAME', 'mt_on_sql_drop';

CREATE EVENT TRIGGER materialized_table_sql_drop ON sql_drop
    EXECUTE FUNCTION materialized_table_internal.on_sql_drop();
ALTER EVENT TRIGGER materialized_table_sql_drop ENABLE ALWAYS;
