-- DROP MATERIALIZED TABLE, and every other way a materialized table goes:
-- none leaves a catalog row, hidden view, history or job behind.
CREATE SCHEMA drop_s;
SET search_path = drop_s, public;
CREATE TABLE src (id int, ds text);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src VALUES (1, 'a'), (2, 'b');
CREATE VIEW leftovers AS
  SELECT (SELECT count(*) FROM materialized_table_internal.mt_table
           WHERE NOT EXISTS (SELECT FROM pg_class WHERE oid = relid)) AS catalog_rows,
         (SELECT count(*) FROM pg_class c
           WHERE c.relnamespace = 'materialized_table_internal'::regnamespace AND c.relkind = 'v'
             AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'e')
             AND NOT EXISTS (SELECT FROM materialized_table_internal.mt_table t WHERE t.query_view = c.oid)) AS views,
         (SELECT count(*) FROM materialized_table_internal.refresh_run r
           WHERE NOT EXISTS (SELECT FROM pg_class WHERE oid = r.relid)) AS history,
         (SELECT count(*) FROM cron.job j WHERE j.command LIKE '%materialized_table.scheduled_refresh%'
             AND NOT EXISTS (SELECT FROM materialized_table_internal.mt_table t WHERE t.cron_jobid = j.jobid)) AS jobs;
CREATE FUNCTION mts() RETURNS SETOF text LANGUAGE sql AS
  $$ SELECT table_name::text FROM materialized_table.materialized_tables ORDER BY 1 $$;

-- DROP MATERIALIZED TABLE, in both modes, partitioned too
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d1 FRESHNESS = INTERVAL '1' HOUR AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE d2 AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE d3 PARTITIONED BY (ds) FRESHNESS = INTERVAL '1' DAY AS SELECT ds, id FROM src;
  ALTER MATERIALIZED TABLE d1 REFRESH
$$);
SELECT * FROM mts();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE d1; DROP MATERIALIZED TABLE d2; DROP MATERIALIZED TABLE drop_s.d3');
SELECT * FROM mts();
SELECT count(*) FROM pg_class WHERE relname LIKE 'd3%';
SELECT * FROM leftovers;
-- a suspended table drops too
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE d1 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id FROM src; ALTER MATERIALIZED TABLE d1 SUSPEND');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE d1');
SELECT * FROM leftovers;

-- IF EXISTS on a missing table is a notice; without it an error
SELECT materialized_table.execute('DROP MATERIALIZED TABLE IF EXISTS nosuch');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE IF EXISTS drop_s.nosuch');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE IF EXISTS nosuchschema.nosuch');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE nosuch');
-- on something that is not a materialized table: an error, even with IF EXISTS
SELECT materialized_table.execute('DROP MATERIALIZED TABLE src');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE IF EXISTS src');
CREATE VIEW v AS SELECT 1 AS one;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE IF EXISTS v');
CREATE SEQUENCE seq;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE seq');
-- a partition of a materialized table is not one
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE d4 PARTITIONED BY (ds) FRESHNESS = INTERVAL ''1'' HOUR AS SELECT ds, id FROM src');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE d4_a');
SELECT to_regclass('src'), to_regclass('v'), to_regclass('d4_a');
-- several tables depending on one another: dropping the upstream needs CASCADE
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE d5 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id FROM d4');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE d4');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE d5; DROP MATERIALIZED TABLE d4');
SELECT * FROM leftovers;

-- DROP is transactional
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE d6 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id FROM src');
BEGIN;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE d6');
ROLLBACK;
SELECT * FROM mts();
SELECT count(*) FROM cron.job WHERE jobid = (SELECT cron_jobid FROM materialized_table_internal.mt_table WHERE relid = 'd6'::regclass);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE d6 REFRESH');

-- plain DROP TABLE
DROP TABLE d6;
SELECT * FROM mts();
SELECT * FROM leftovers;
-- DROP TABLE of several, one of them not a materialized table
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE d7 AS SELECT id FROM src; CREATE MATERIALIZED TABLE d8 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id FROM src');
CREATE TABLE other (a int);
DROP TABLE d7, other, d8;
SELECT * FROM mts();
SELECT * FROM leftovers;
-- dropping a partition alone is refused (see guards); dropping the table takes them all
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE d9 PARTITIONED BY (ds) FRESHNESS = INTERVAL ''1'' HOUR AS SELECT ds, id FROM src');
DROP TABLE d9;
SELECT count(*) FROM pg_class WHERE relname LIKE 'd9%';
-- DROP SCHEMA ... CASCADE
CREATE SCHEMA drop_t;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE drop_t.e1 FRESHNESS = INTERVAL '1' HOUR AS SELECT id FROM drop_s.src;
  CREATE MATERIALIZED TABLE drop_t.e2 PARTITIONED BY (ds) AS SELECT ds, id FROM drop_s.src;
  CREATE MATERIALIZED TABLE drop_t.e3 FRESHNESS = INTERVAL '1' HOUR AS SELECT id FROM drop_t.e1
$$);
DROP SCHEMA drop_t;
DROP SCHEMA drop_t CASCADE;
SELECT * FROM mts();
SELECT * FROM leftovers;
-- DROP OWNED
CREATE ROLE regress_mt_drop_owner LOGIN;
GRANT USAGE, CREATE ON SCHEMA drop_s TO regress_mt_drop_owner;
GRANT SELECT ON src TO regress_mt_drop_owner;
SET ROLE regress_mt_drop_owner;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE d10 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id FROM src');
RESET ROLE;
SELECT * FROM mts();
SELECT tableowner FROM pg_tables WHERE tablename = 'd10';
DROP OWNED BY regress_mt_drop_owner;
SELECT * FROM mts();
SELECT * FROM leftovers;
DROP ROLE regress_mt_drop_owner;
-- a drop from a cascade of a source
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE d11 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id FROM src');
DROP TABLE src CASCADE;
SELECT * FROM mts();
SELECT * FROM leftovers;

-- only the owner may drop
CREATE TABLE src (id int);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE src REPLICA IDENTITY FULL;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE d12 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id FROM src');
CREATE ROLE regress_mt_drop_other;
GRANT USAGE ON SCHEMA drop_s TO regress_mt_drop_other;
SET ROLE regress_mt_drop_other;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE d12');
DROP TABLE d12;
RESET ROLE;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE d12');
REVOKE ALL ON SCHEMA drop_s FROM regress_mt_drop_other;
DROP ROLE regress_mt_drop_other;

-- clean up
RESET search_path;
DROP SCHEMA drop_s CASCADE;
SELECT count(*) FROM materialized_table.materialized_tables;
