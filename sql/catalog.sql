-- The catalog view materialized_table.materialized_tables and the refresh
-- history: columns, types and the values they show.
CREATE SCHEMA catalog_s;
SET search_path = catalog_s, public;
SET timezone = 'UTC';
CREATE TABLE src (id int, ds text);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src VALUES (1, 'a'), (2, 'b');

-- the view's columns and their types (others may follow)
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'materialized_table.materialized_tables'::regclass AND attnum > 0
   AND attname IN ('table_name', 'refresh_mode', 'freshness', 'refresh_status', 'definition_query',
                   'partition_keys', 'options', 'last_refresh_time', 'scheduler', 'next_refresh_time')
 ORDER BY attnum;
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'materialized_table.refresh_history'::regclass AND attnum > 0 ORDER BY attnum;
-- anyone may read them; nobody but the extension writes its catalog
SELECT has_table_privilege('public', 'materialized_table.materialized_tables', 'SELECT'),
       has_table_privilege('public', 'materialized_table.refresh_history', 'SELECT'),
       has_table_privilege('public', 'materialized_table_internal.mt_table', 'SELECT'),
       has_table_privilege('public', 'materialized_table_internal.mt_table', 'INSERT');

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE c1 PARTITIONED BY (ds) WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd', 'fillfactor' = '70')
    FRESHNESS = INTERVAL '1' DAY AS SELECT ds, count(*) AS n FROM src GROUP BY ds;
  CREATE MATERIALIZED TABLE c2 FRESHNESS = INTERVAL '10' SECOND AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE c3 FRESHNESS = INTERVAL '15' SECOND REFRESH_MODE = FULL AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE c4 FRESHNESS = INTERVAL '2' HOUR AS SELECT id FROM src;
  ALTER MATERIALIZED TABLE c4 SUSPEND
$$);
SELECT table_name, refresh_mode, freshness, refresh_status, definition_query, partition_keys, options, scheduler
  FROM materialized_table.materialized_tables WHERE table_name::text LIKE 'c_' ORDER BY table_name::text;
-- table_name is a regclass: it follows renames and joins to pg_class
ALTER TABLE c2 RENAME TO c2_renamed;
SELECT table_name, c.relkind FROM materialized_table.materialized_tables m JOIN pg_class c ON c.oid = m.table_name
 WHERE table_name::text LIKE 'c%' ORDER BY table_name::text;
ALTER TABLE c2_renamed RENAME TO c2;
-- times: the last refresh is the CREATE's; the next one is a schedule boundary of FULL tables
SELECT table_name, last_refresh_time IS NOT NULL AS refreshed,
       last_refresh_time <= now() AS in_the_past,
       next_refresh_time > now() AS in_the_future,
       next_refresh_time - freshness <= now() AS within_one_period,
       extract(epoch FROM next_refresh_time)::numeric % extract(epoch FROM freshness)::numeric = 0 AS on_a_boundary
  FROM materialized_table.materialized_tables WHERE table_name::text LIKE 'c_' ORDER BY table_name::text;
-- a refresh moves last_refresh_time forward
SELECT last_refresh_time AS before FROM materialized_table.materialized_tables WHERE table_name = 'c1'::regclass \gset
SELECT pg_sleep(0.01);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE c1 REFRESH PARTITION (ds = ''a'')');
SELECT last_refresh_time > :'before' AS moved FROM materialized_table.materialized_tables WHERE table_name = 'c1'::regclass;
-- the definition follows the query
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE c4 AS SELECT id, id * 2 AS twice FROM src');
SELECT definition_query FROM materialized_table.materialized_tables WHERE table_name = 'c4'::regclass;
-- the options are jsonb
SELECT options->>'fillfactor' AS fillfactor, options ? 'partition.fields.ds.date-formatter' AS has_formatter
  FROM materialized_table.materialized_tables WHERE table_name = 'c1'::regclass;

-- the refresh history
SELECT table_name, trigger, partition, status, rows, error, strategy, finished_at >= started_at AS ordered, duration >= '0' AS timed
  FROM materialized_table.refresh_history WHERE table_name::text LIKE 'c_' AND trigger IN ('CREATE', 'MANUAL') ORDER BY run_id;
-- a failed refresh is recorded with its error, and the table keeps its content
ALTER TABLE src ADD COLUMN zero int DEFAULT 0;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c5 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id / (zero + 1) AS q FROM src');
UPDATE src SET zero = -1 WHERE id = 2;
\set SHOW_CONTEXT never
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE c5 REFRESH');
\set SHOW_CONTEXT errors
SELECT * FROM c5 ORDER BY q;
SELECT trigger, status, error FROM materialized_table.refresh_history WHERE table_name = 'c5'::regclass ORDER BY run_id;

-- the catalog of a dropped table is gone with it
SELECT materialized_table.execute('DROP MATERIALIZED TABLE c1; DROP MATERIALIZED TABLE c2; DROP MATERIALIZED TABLE c3; DROP MATERIALIZED TABLE c4; DROP MATERIALIZED TABLE c5');
SELECT count(*) FROM materialized_table.materialized_tables;
SELECT count(*) FROM materialized_table.refresh_history WHERE table_name IS NULL OR table_name::text LIKE 'c_';

-- clean up
RESET search_path;
DROP SCHEMA catalog_s CASCADE;
