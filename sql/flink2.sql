-- Flink 2.x statements through execute() and execute_query(): SHOW
-- MATERIALIZED TABLES, SHOW CREATE, DESCRIBE, RENAME TO, START_MODE, the
-- conversion of a table by CREATE OR ALTER, and a NULL statement.
CREATE SCHEMA flink2_s;
CREATE SCHEMA flink2_other;
SET search_path = flink2_s, public;
CREATE TABLE src (id int PRIMARY KEY, ds text, v int, ts timestamptz);
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src VALUES (1, 'a', 10, '2024-01-01 00:00+00'), (2, 'b', 20, '2024-01-02 00:00+00');

-- a NULL statement is an error, not a NULL result
SELECT materialized_table.execute(NULL);
SELECT * FROM materialized_table.execute_query(NULL);

-- START_MODE = FROM_BEGINNING is what every table does; the others are refused
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE f_totals (
      id, total,
      doubled AS total * 2 COMMENT 'twice the total',
      refreshed_at TIMESTAMP_LTZ(3) METADATA FROM 'refresh_time' VIRTUAL,
      PRIMARY KEY (id) NOT ENFORCED
  )
  COMMENT 'totals per id'
  WITH ('fillfactor' = '80')
  FRESHNESS = INTERVAL '1' HOUR
  START_MODE = FROM_BEGINNING
  AS SELECT id, sum(v) AS total FROM src GROUP BY id
$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE f_x START_MODE = FROM_NOW AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE f_x START_MODE = FROM_NOW(INTERVAL '7' DAY) AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE f_x START_MODE = FROM_TIMESTAMP(TIMESTAMP '2024-01-01 00:00:00') AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE f_x START_MODE = RESUME_OR_FROM_BEGINNING AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE f_x START_MODE = RESUME_OR_FROM_NOW AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE f_x START_MODE = RESUME_OR_FROM_TIMESTAMP(TIMESTAMP '2024-01-01 00:00:00') AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE f_x START_MODE = FROM_TIMESTAMP AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE f_x START_MODE = FROM_YESTERDAY AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE f_x START_MODE = 'FROM_BEGINNING' AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE f_x START_MODE FROM_BEGINNING AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE f_x START_MODE = FROM_BEGINNING START_MODE = FROM_BEGINNING AS SELECT id FROM src$$);
-- in CREATE OR ALTER of an existing table, and before ALTER ... AS
SELECT materialized_table.execute($$
  CREATE OR ALTER MATERIALIZED TABLE f_totals (
      id, total,
      doubled AS total * 2 COMMENT 'twice the total',
      refreshed_at TIMESTAMP_LTZ(3) METADATA FROM 'refresh_time' VIRTUAL,
      PRIMARY KEY (id) NOT ENFORCED
  )
  COMMENT 'totals per id'
  WITH ('fillfactor' = '80')
  FRESHNESS = INTERVAL '1' HOUR
  START_MODE = FROM_BEGINNING
  AS SELECT id, sum(v) AS total FROM src GROUP BY id
$$);
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE f_totals START_MODE = FROM_BEGINNING
    AS SELECT id, sum(v) AS total, count(*) AS n FROM src GROUP BY id
$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE f_totals START_MODE = FROM_NOW AS SELECT id FROM src$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE f_totals START_MODE = FROM_BEGINNING SUSPEND$$);
SELECT id, total, doubled, n FROM f_totals ORDER BY id;

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE f_events (ts, id, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)
    FRESHNESS = INTERVAL '30' SECOND
    AS SELECT ts, id FROM src;
  CREATE MATERIALIZED TABLE flink2_other.f_elsewhere FRESHNESS = INTERVAL '1' DAY AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE "extended" FRESHNESS = INTERVAL '1' DAY AS SELECT ds FROM src
$$);
CREATE TABLE plain_table (id int);

-- SHOW MATERIALIZED TABLES: the current schema, or the one named; LIKE
SELECT * FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES');
SELECT name FROM materialized_table.execute_query('show materialized tables from flink2_other');
SELECT name FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES IN contrib_regression.flink2_s');
SELECT name FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES IN `flink2_s` LIKE ''f\_%''');
SELECT name FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES NOT LIKE ''f%''');
SELECT name FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES LIKE ''nothing%''');
SELECT * FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES FROM no_such_schema');
SELECT * FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES FROM other_db.flink2_s');
SELECT * FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES FROM a.b.c');
SELECT * FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES LIKE f%');
SELECT * FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES ILIKE ''f%''');
SELECT * FROM materialized_table.execute_query('SHOW TABLES');
-- no current schema to show
BEGIN;
SET LOCAL search_path = '';
SELECT * FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES');
ROLLBACK;
SELECT materialized_table.execute('SHOW MATERIALIZED TABLES');

-- SHOW CREATE MATERIALIZED TABLE: the statement, as show_create() gives it
SELECT materialized_table.execute('SHOW CREATE MATERIALIZED TABLE f_totals') =
       materialized_table.show_create('f_totals') AS same;
SELECT materialized_table.execute('SHOW CREATE MATERIALIZED TABLE f_events');
SELECT name, type, extras = materialized_table.show_create('f_events') AS same
  FROM materialized_table.execute_query('SHOW CREATE MATERIALIZED TABLE flink2_s.f_events');
SELECT materialized_table.execute('SHOW CREATE MATERIALIZED TABLE no_such_table');
SELECT materialized_table.execute('SHOW CREATE MATERIALIZED TABLE plain_table');
SELECT materialized_table.execute('SHOW CREATE TABLE f_totals');

-- DESCRIBE: a row per column; EXTENDED adds the table's properties
SELECT * FROM materialized_table.execute_query('DESCRIBE f_totals');
SELECT * FROM materialized_table.execute_query('DESC f_events');
SELECT * FROM materialized_table.execute_query('DESCRIBE EXTENDED f_events')
 WHERE name NOT IN ('current_lag', 'freshness_met', 'last_refresh_time', 'next_refresh_time');
SELECT name, extras FROM materialized_table.execute_query('DESC EXTENDED flink2_s.f_totals')
 WHERE type IS NULL AND name NOT IN ('current_lag', 'freshness_met', 'last_refresh_time', 'next_refresh_time');
-- a table called "extended"
SELECT name, type FROM materialized_table.execute_query('DESCRIBE extended');
SELECT name, type FROM materialized_table.execute_query('DESCRIBE extended extended') WHERE type IS NOT NULL;
SELECT * FROM materialized_table.execute_query('DESCRIBE no_such_table');
SELECT * FROM materialized_table.execute_query('DESCRIBE plain_table');
SELECT * FROM materialized_table.execute_query('DESCRIBE');
SELECT * FROM materialized_table.execute_query('DESCRIBE f_totals f_events');
SELECT materialized_table.execute('DESCRIBE f_totals');
-- execute_query() runs one statement that returns rows
SELECT * FROM materialized_table.execute_query('DESCRIBE f_totals; DESCRIBE f_events');
SELECT * FROM materialized_table.execute_query('ALTER MATERIALIZED TABLE f_totals SUSPEND');
SELECT * FROM materialized_table.execute_query('');
-- the maintenance of a table shows only to those who may read it
CREATE ROLE regress_flink2_stranger;
GRANT USAGE ON SCHEMA flink2_s TO regress_flink2_stranger;
SET ROLE regress_flink2_stranger;
SELECT name, extras FROM materialized_table.execute_query('DESCRIBE EXTENDED f_totals')
 WHERE type IS NULL AND name NOT IN ('current_lag', 'freshness_met', 'last_refresh_time', 'next_refresh_time');
RESET ROLE;

-- RENAME TO: the pipeline, the lineage, the job and the history follow
SELECT jobname FROM cron.job WHERE jobname LIKE '%flink2_s.f_totals%' OR jobname LIKE '%flink2_s.f_sums%';
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE f_totals RENAME TO f_sums');
SELECT jobname FROM cron.job WHERE jobname LIKE '%flink2_s.f_totals%' OR jobname LIKE '%flink2_s.f_sums%';
SELECT table_name, refresh_mode, scheduler FROM materialized_table.materialized_tables
 WHERE table_name::text LIKE 'f_%' ORDER BY 1;
SELECT DISTINCT table_name FROM materialized_table.refresh_history WHERE table_name::text LIKE 'f_sums%';
SELECT upstream, downstream FROM materialized_table.lineage WHERE downstream::text LIKE 'f_%' ORDER BY 2;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE f_sums REFRESH');
SELECT id, total, n FROM f_sums ORDER BY id;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE flink2_s.f_sums RENAME TO flink2_s.f_totals');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE f_totals RENAME TO contrib_regression.flink2_s.f_sums');
-- refused: another schema, a name taken, a missing table, another kind of relation, not the owner
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE f_sums RENAME TO flink2_other.f_sums');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE f_sums RENAME TO f_events');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE f_sums RENAME TO plain_table');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE no_such_table RENAME TO anything');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE plain_table RENAME TO anything');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE f_sums RENAME f_x');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE f_sums RENAME TO');
SET ROLE regress_flink2_stranger;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE f_sums RENAME TO f_mine');
RESET ROLE;
-- a rename rolled back leaves the old name, and its job
BEGIN;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE f_sums RENAME TO f_gone');
ROLLBACK;
SELECT jobname FROM cron.job WHERE jobname LIKE '%flink2_s.f_%' ORDER BY 1;

-- CREATE OR ALTER over a table converts it in place, when the setting is on
CREATE TABLE kept (id int PRIMARY KEY, total bigint);
INSERT INTO kept VALUES (1, 999), (42, 1);
CREATE INDEX kept_total ON kept (total);
COMMENT ON TABLE kept IS 'an ordinary table';
GRANT SELECT ON kept TO regress_flink2_stranger;
CREATE VIEW kept_view AS SELECT id FROM kept;
SHOW materialized_table.conversion_from_table;
SELECT materialized_table.execute($$
  CREATE OR ALTER MATERIALIZED TABLE kept FRESHNESS = INTERVAL '1' HOUR
    AS SELECT id, sum(v)::bigint AS total FROM src GROUP BY id
$$);
-- the setting is the administrator's
SET ROLE regress_flink2_stranger;
SET materialized_table.conversion_from_table = on;
RESET ROLE;
SET materialized_table.conversion_from_table = on;
SELECT materialized_table.execute($$
  CREATE OR ALTER MATERIALIZED TABLE kept FRESHNESS = INTERVAL '1' HOUR
    AS SELECT id, sum(v)::bigint AS total, max(ds) AS last_ds FROM src GROUP BY id
$$);
-- its rows are the query's; its privileges, index, comment and view stay
SELECT * FROM kept ORDER BY id;
SELECT table_name, refresh_mode, freshness, refresh_status FROM materialized_table.materialized_tables
 WHERE table_name = 'kept'::regclass;
SELECT relacl FROM pg_class WHERE oid = 'kept'::regclass;
SELECT indexrelid::regclass FROM pg_index WHERE indrelid = 'kept'::regclass ORDER BY 1;
SELECT obj_description('kept'::regclass, 'pg_class');
SELECT * FROM kept_view ORDER BY id;
SELECT trigger, status FROM materialized_table.refresh_history WHERE table_name = 'kept'::regclass;
-- a materialized table now: written only by refreshes, and it follows its query
INSERT INTO kept VALUES (3, 3);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE kept REFRESH');
-- the table's key is the materialized table's: CREATE OR ALTER names it from now on
SELECT materialized_table.execute($$
  CREATE OR ALTER MATERIALIZED TABLE kept FRESHNESS = INTERVAL '1' HOUR
    AS SELECT id, sum(v)::bigint AS total, max(ds) AS last_ds FROM src GROUP BY id
$$);
SELECT materialized_table.execute($$
  CREATE OR ALTER MATERIALIZED TABLE kept (PRIMARY KEY (id) NOT ENFORCED) FRESHNESS = INTERVAL '1' HOUR
    AS SELECT id, sum(v)::bigint AS total, max(ds) AS last_ds FROM src GROUP BY id
$$);
SELECT materialized_table.show_create('kept');
-- what cannot be converted, or not so
CREATE TABLE c_cols (id int, total bigint);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_cols AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_cols AS SELECT id, v AS total FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_cols AS SELECT v::bigint AS total, id FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_cols AS SELECT id, v::bigint AS total, 1 AS id FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_cols AS SELECT id, v::bigint AS total FROM c_cols$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_cols PARTITIONED BY (id) AS SELECT id, v::bigint AS total FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_cols DISTRIBUTED BY (id) INTO 2 BUCKETS AS SELECT id, v::bigint AS total FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_cols (id, total, x AS id + 1) AS SELECT id, v::bigint AS total FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_cols (total, id) AS SELECT id, v::bigint AS total FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_cols (id BIGINT, total) AS SELECT id, v::bigint AS total FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_cols (PRIMARY KEY (nope) NOT ENFORCED) AS SELECT id, v::bigint AS total FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE kept (PRIMARY KEY (total) NOT ENFORCED) AS SELECT id, v::bigint AS total FROM src$$);
CREATE TABLE c_pk (id int PRIMARY KEY, total bigint);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_pk (PRIMARY KEY (total) NOT ENFORCED) AS SELECT id, v::bigint AS total FROM src$$);
CREATE TABLE c_trig (id int);
CREATE FUNCTION flink2_trig() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER c_trig_t BEFORE INSERT ON c_trig FOR EACH ROW EXECUTE FUNCTION flink2_trig();
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_trig AS SELECT id FROM src$$);
CREATE TABLE c_fk (id int REFERENCES src (id));
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_fk AS SELECT id FROM src$$);
CREATE TABLE c_ref (id int PRIMARY KEY);
CREATE TABLE c_referrer (id int REFERENCES c_ref (id));
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_ref AS SELECT id FROM src$$);
CREATE TABLE c_ident (id int GENERATED ALWAYS AS IDENTITY);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_ident AS SELECT id FROM src$$);
CREATE UNLOGGED TABLE c_unlogged (id int);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_unlogged AS SELECT id FROM src$$);
CREATE TABLE c_parted (id int) PARTITION BY LIST (id);
CREATE TABLE c_part1 PARTITION OF c_parted FOR VALUES IN (1);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_parted AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_part1 AS SELECT id FROM src$$);
CREATE TABLE c_child () INHERITS (c_cols);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_cols AS SELECT id, v::bigint AS total FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE kept_view AS SELECT id FROM src$$);
-- the table's owner converts it, and must be able to read the query's sources
CREATE TABLE c_theirs (id int);
ALTER TABLE c_theirs OWNER TO regress_flink2_stranger;
SET ROLE regress_flink2_stranger;
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_pk AS SELECT id FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_theirs AS SELECT id FROM src$$);
RESET ROLE;
-- a superuser converts it for its owner, who then refreshes it
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_theirs AS SELECT id FROM src$$);
GRANT SELECT ON src TO regress_flink2_stranger;
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_theirs AS SELECT id FROM src$$);
SELECT pg_get_userbyid(relowner) FROM pg_class WHERE oid = 'c_theirs'::regclass;
SET ROLE regress_flink2_stranger;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE c_theirs REFRESH');
SELECT * FROM c_theirs ORDER BY id;
RESET ROLE;
-- a conversion rolled back leaves the table as it was
CREATE TABLE c_back (id int);
INSERT INTO c_back VALUES (7);
BEGIN;
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE c_back AS SELECT id FROM src$$);
SELECT * FROM c_back ORDER BY id;
ROLLBACK;
SELECT * FROM c_back;
SELECT count(*) FROM materialized_table.materialized_tables WHERE table_name = 'c_back'::regclass;
INSERT INTO c_back VALUES (8);
RESET materialized_table.conversion_from_table;

-- the execute() forms are unchanged
SELECT materialized_table.execute('DROP MATERIALIZED TABLE f_sums');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE IF EXISTS f_sums');

SET client_min_messages = warning;
DROP SCHEMA flink2_s CASCADE;
DROP SCHEMA flink2_other CASCADE;
RESET client_min_messages;
DROP ROLE regress_flink2_stranger;
