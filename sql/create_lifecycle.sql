-- CREATE MATERIALIZED TABLE: temporary objects, transactions, failures,
-- dependencies on the sources, and hostile names.
CREATE SCHEMA lifecycle_s;
SET search_path = lifecycle_s, public;
CREATE TABLE src (id int, v text);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src VALUES (1, 'a'), (2, 'b');
-- every trace a materialized table can leave
CREATE FUNCTION traces(name text) RETURNS TABLE (tables bigint, views bigint, catalog_rows bigint, history bigint, jobs bigint)
LANGUAGE sql AS $$
  SELECT (SELECT count(*) FROM pg_class WHERE relname = name AND relnamespace = 'lifecycle_s'::regnamespace),
         (SELECT count(*) FROM pg_class c JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
                                           AND d.refclassid = 'pg_class'::regclass AND d.deptype = 'i'
           WHERE c.relnamespace = 'materialized_table_internal'::regnamespace
             AND d.refobjid = (SELECT oid FROM pg_class WHERE relname = name AND relnamespace = 'lifecycle_s'::regnamespace)),
         (SELECT count(*) FROM materialized_table_internal.mt_table WHERE relid::text IN (name, 'lifecycle_s.' || name)),
         (SELECT count(*) FROM materialized_table.refresh_history WHERE table_name::text IN (name, 'lifecycle_s.' || name)),
         (SELECT count(*) FROM cron.job WHERE jobname LIKE '%lifecycle_s.' || name)
$$;
-- all the hidden query views (not the extension's own): none may outlive its table
CREATE VIEW orphans AS
  SELECT (SELECT count(*) FROM pg_class c
           WHERE c.relnamespace = 'materialized_table_internal'::regnamespace AND c.relkind = 'v'
             AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'e')
             AND NOT EXISTS (SELECT FROM materialized_table_internal.mt_table t WHERE t.query_view = c.oid)) AS orphan_views,
         (SELECT count(*) FROM cron.job j WHERE j.command LIKE '%materialized_table.scheduled_refresh%'
             AND NOT EXISTS (SELECT FROM materialized_table_internal.mt_table t WHERE t.cron_jobid = j.jobid)) AS orphan_jobs,
         (SELECT count(*) FROM materialized_table_internal.refresh_run r
           WHERE NOT EXISTS (SELECT FROM pg_class WHERE oid = r.relid)) AS orphan_history;

-- the query may not use temporary tables, views or functions
CREATE TEMP TABLE tmp (id int);
CREATE TEMP VIEW tmpv AS SELECT 1 AS one;
CREATE FUNCTION pg_temp.tmpf(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 + 1';
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l1 AS SELECT id FROM tmp');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l1 AS SELECT one FROM tmpv');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l1 AS SELECT s.id FROM src s JOIN tmp USING (id)');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l1 AS SELECT id FROM src WHERE id IN (SELECT id FROM tmp)');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l1 AS SELECT pg_temp.tmpf(id) AS f FROM src');
SELECT * FROM traces('l1');
SELECT * FROM orphans;

-- filled in the same transaction as the CREATE
BEGIN;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l2 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id, v FROM src');
SELECT * FROM l2 ORDER BY id;
SELECT refresh_status, last_refresh_time IS NOT NULL AS refreshed FROM materialized_table.materialized_tables WHERE table_name = 'l2'::regclass;
SELECT * FROM traces('l2');
-- a refresh in the same transaction is recorded in it too
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE l2 REFRESH');
SELECT trigger, status FROM materialized_table.refresh_history WHERE table_name = 'l2'::regclass ORDER BY run_id;
-- BEGIN; CREATE; ROLLBACK leaves nothing: no table, view, catalog row, history or job
ROLLBACK;
SELECT * FROM traces('l2');
SELECT * FROM orphans;
-- the same with a CONTINUOUS table
BEGIN;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l2 AS SELECT id, v FROM src');
ROLLBACK;
SELECT * FROM traces('l2');
-- and a savepoint
BEGIN;
SAVEPOINT s;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l2 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id, v FROM src');
ROLLBACK TO s;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l2 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id FROM src');
COMMIT;
SELECT * FROM traces('l2');
SELECT * FROM l2 ORDER BY id;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE l2');

-- a CREATE that fails at any step leaves nothing
\set SHOW_CONTEXT never
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l3 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT 1 / (id - 1) AS x FROM src');
\set SHOW_CONTEXT errors
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l3 (WATERMARK FOR id AS id) FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l3 (c AS id) WITH (''fillfactor'' = ''1'') AS SELECT id FROM src');
SELECT * FROM traces('l3');
SELECT * FROM orphans;
-- a name that is taken
CREATE TABLE taken (a int);
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE taken AS SELECT 1 AS a');
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE taken AS SELECT 1 AS a');
CREATE VIEW taken_view AS SELECT 1 AS a;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE taken_view AS SELECT 1 AS a');
CREATE INDEX taken_idx ON taken (a);
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE taken_idx AS SELECT 1 AS a');
DROP TABLE taken CASCADE;
-- a name further down the search_path does not stop a new table in the first schema
CREATE SCHEMA lifecycle_other;
CREATE TABLE lifecycle_other.shadow (a int);
SET search_path = lifecycle_s, lifecycle_other, public;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE shadow AS SELECT 1 AS a');
SELECT 'lifecycle_s.shadow'::regclass;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE shadow');
DROP SCHEMA lifecycle_other CASCADE;
SET search_path = lifecycle_s, public;

-- dependencies: a source cannot be dropped without CASCADE
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l4 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id, v FROM src WHERE id > 0');
DROP TABLE src;
ALTER TABLE src DROP COLUMN v;
ALTER TABLE src ALTER COLUMN v TYPE varchar(10);
-- a renamed source keeps the table refreshable, and show_create follows it
ALTER TABLE src RENAME TO source_renamed;
ALTER TABLE source_renamed RENAME COLUMN v TO val;
INSERT INTO source_renamed VALUES (3, 'c');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE l4 REFRESH');
SELECT * FROM l4 ORDER BY id;
SELECT materialized_table.show_create('l4');
SELECT definition_query FROM materialized_table.materialized_tables WHERE table_name = 'l4'::regclass;
-- a renamed materialized table keeps working too
ALTER TABLE l4 RENAME TO l4_renamed;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE l4_renamed REFRESH');
SELECT * FROM traces('l4_renamed');
SELECT jobname FROM cron.job WHERE jobname LIKE '%lifecycle_s.l4%';
-- a source moved to another schema
CREATE SCHEMA lifecycle_moved;
ALTER TABLE source_renamed SET SCHEMA lifecycle_moved;
ALTER TABLE l4_renamed SET SCHEMA lifecycle_moved;
SELECT jobname FROM cron.job WHERE jobname LIKE '%.l4%';
ALTER TABLE lifecycle_moved.l4_renamed SET SCHEMA lifecycle_s;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE l4_renamed REFRESH');
SELECT materialized_table.show_create('l4_renamed');
-- CASCADE drops the materialized table and every trace of it
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l5 PARTITIONED BY (val) AS SELECT id, val FROM lifecycle_moved.source_renamed');
SELECT count(*) FROM pg_class WHERE relname LIKE 'l5%';
DROP TABLE lifecycle_moved.source_renamed;
DROP TABLE lifecycle_moved.source_renamed CASCADE;
SELECT * FROM traces('l4_renamed');
SELECT * FROM traces('l5');
SELECT count(*) FROM pg_class WHERE relname LIKE 'l5%';
SELECT * FROM orphans;
DROP SCHEMA lifecycle_moved;
-- a function the query uses is a dependency too
CREATE TABLE src (id int, v text);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src VALUES (1, 'a');
CREATE FUNCTION twice(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 * 2';
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE l6 AS SELECT twice(id) AS t FROM src');
DROP FUNCTION twice(int);
DROP FUNCTION twice(int) CASCADE;
SELECT * FROM traces('l6');

-- hostile names are just names
CREATE SCHEMA "s""; DROP TABLE src; --";
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE "s""; DROP TABLE src; --"."x""; DROP TABLE src; --"
    ("c""; DROP TABLE src; --" COMMENT 'it''s; DROP TABLE src; --',
     "k'; DROP TABLE src; --" AS "c""; DROP TABLE src; --" || 'x',
     PRIMARY KEY ("c""; DROP TABLE src; --") NOT ENFORCED)
    COMMENT 'x''; DROP TABLE src; --'
    PARTITIONED BY ("c""; DROP TABLE src; --")
    WITH ('x''; DROP TABLE src; --' = 'y''; DROP TABLE src; --')
    FRESHNESS = INTERVAL '1' HOUR
    AS SELECT v AS "c""; DROP TABLE src; --" FROM src
$$);
SELECT * FROM "s""; DROP TABLE src; --"."x""; DROP TABLE src; --";
SELECT tableoid::regclass FROM "s""; DROP TABLE src; --"."x""; DROP TABLE src; --";
-- a name too long for cron.job.jobname is cut and told apart by the table's OID
SELECT regexp_replace(jobname, '\(\d+\)$', '(oid)') AS jobname,
       jobname LIKE '%(' || (SELECT oid FROM pg_class WHERE relname = 'x"; DROP TABLE src; --') || ')' AS ends_with_oid
  FROM cron.job WHERE jobname LIKE '%DROP TABLE%';
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE "s""; DROP TABLE src; --"."x""; DROP TABLE src; --" REFRESH PARTITION ("c""; DROP TABLE src; --" = 'a''; DROP TABLE src; --')$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE "s""; DROP TABLE src; --"."x""; DROP TABLE src; --" REFRESH$$);
SELECT materialized_table.show_create('"s""; DROP TABLE src; --"."x""; DROP TABLE src; --"');
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE "s""; DROP TABLE src; --"."x""; DROP TABLE src; --" SUSPEND$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE "s""; DROP TABLE src; --"."x""; DROP TABLE src; --" RESUME$$);
SELECT materialized_table.execute($$DROP MATERIALIZED TABLE "s""; DROP TABLE src; --"."x""; DROP TABLE src; --"$$);
SELECT count(*) FROM src;
DROP SCHEMA "s""; DROP TABLE src; --";

-- clean up
RESET search_path;
DROP SCHEMA lifecycle_s CASCADE;
SELECT count(*) FROM materialized_table.materialized_tables;
