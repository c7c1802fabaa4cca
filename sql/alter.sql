-- ALTER MATERIALIZED TABLE: REFRESH, SUSPEND/RESUME, AS, CREATE OR ALTER,
-- ADD/MODIFY/DROP and SET FRESHNESS.
CREATE SCHEMA alter_s;
SET search_path = alter_s, public;
SET timezone = 'UTC';
CREATE TABLE sales (ds text, hr text, product int, qty int, price numeric(8,2), sold_at timestamp);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE sales REPLICA IDENTITY FULL;
INSERT INTO sales VALUES
  ('2024-06-27', '00', 1, 2, 1.50, '2024-06-27 00:10'), ('2024-06-27', '01', 2, 1, 3.00, '2024-06-27 01:20'),
  ('2024-06-28', '00', 1, 5, 1.50, '2024-06-28 00:30'), ('2024-06-28', '01', 3, 4, 2.25, '2024-06-28 01:40');
CREATE FUNCTION cols(regclass) RETURNS TABLE (name name, type text, not_null boolean, generated text)
LANGUAGE sql AS $$
  SELECT attname, format_type(atttypid, atttypmod), attnotnull, pg_get_expr(adbin, adrelid)
    FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
   WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped ORDER BY attnum
$$;
CREATE VIEW status AS
  SELECT table_name, refresh_mode, freshness, refresh_status FROM materialized_table.materialized_tables
   WHERE table_name::text LIKE 'a%' ORDER BY table_name::text;

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE a1 PARTITIONED BY (ds)
    WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd')
    FRESHNESS = INTERVAL '1' DAY
    AS SELECT ds, product, sum(qty) AS total FROM sales GROUP BY ds, product
$$);
SELECT * FROM a1 ORDER BY ds, product;
-- no scheduled refresh may interfere with what follows; REFRESH works while suspended
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 SUSPEND');

-- REFRESH: the whole table
INSERT INTO sales VALUES ('2024-06-27', '02', 1, 10, 1.50, '2024-06-27 02:00'), ('2024-06-29', '00', 9, 1, 1.00, '2024-06-29 00:00');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 REFRESH');
SELECT tableoid::regclass, * FROM a1 ORDER BY ds, product;
-- REFRESH PARTITION: only the partition named
UPDATE sales SET qty = qty + 100;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 REFRESH PARTITION (ds = ''2024-06-28'')');
SELECT * FROM a1 ORDER BY ds, product;
-- a partition that does not exist yet is created; one without rows is emptied
INSERT INTO sales VALUES ('2024-06-30', '00', 1, 1, 1.00, '2024-06-30 00:00');
DELETE FROM sales WHERE ds = '2024-06-29';
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 REFRESH PARTITION (ds = ''2024-06-30''); ALTER MATERIALIZED TABLE a1 REFRESH PARTITION (ds = ''2024-06-29'')');
SELECT * FROM a1 WHERE ds >= '2024-06-29' ORDER BY ds, product;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 REFRESH PARTITION (ds = ''1999-01-01'')');
SELECT count(*) FROM a1 WHERE ds = '1999-01-01';
-- partition errors: unknown keys listed with the known ones, values are strings
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 REFRESH PARTITION (day = ''2024-06-28'')');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 REFRESH PARTITION (ds = ''2024-06-28'', hr = ''01'', x = ''1'')');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 REFRESH PARTITION (ds = 20240628)');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 REFRESH PARTITION (ds = ''a'', ds = ''b'')');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 REFRESH PARTITION ()');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 REFRESH PARTITION ds = ''a''');
-- several keys
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE a2 PARTITIONED BY (ds, hr) FRESHNESS = INTERVAL '1' HOUR
    AS SELECT ds, hr, sum(qty) AS total FROM sales GROUP BY ds, hr;
  ALTER MATERIALIZED TABLE a2 SUSPEND
$$);
UPDATE sales SET qty = qty + 1000 WHERE ds = '2024-06-27';
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a2 REFRESH PARTITION (hr = ''00'', ds = ''2024-06-27'')');
SELECT * FROM a2 WHERE ds = '2024-06-27' ORDER BY hr;
-- a prefix of the keys refreshes every partition under it
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a2 REFRESH PARTITION (ds = ''2024-06-27'')');
SELECT * FROM a2 WHERE ds = '2024-06-27' ORDER BY hr;
-- a key that is not the first
UPDATE sales SET qty = 0 WHERE hr = '01';
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a2 REFRESH PARTITION (hr = ''01'')');
SELECT * FROM a2 WHERE hr = '01' ORDER BY ds;
-- a table that is not partitioned
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE a3 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT product, sum(qty) AS total FROM sales GROUP BY product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 REFRESH PARTITION (product = ''1'')');
-- the refresh history records each refresh
SELECT trigger, partition, status FROM materialized_table.refresh_history WHERE table_name = 'a1'::regclass ORDER BY run_id;
-- not a materialized table, or none at all
CREATE TABLE plain (a int);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE plain REFRESH');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE nosuch REFRESH');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE alter_s.nosuch REFRESH');

-- SUSPEND and RESUME
SELECT * FROM status;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 SUSPEND');
SELECT active FROM cron.job WHERE jobid = (SELECT cron_jobid FROM materialized_table_internal.mt_table WHERE relid = 'a3'::regclass);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 SUSPEND');
-- REFRESH works while suspended
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 REFRESH');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 RESUME WITH (''sink.parallelism'' = ''2'')');
SELECT active FROM cron.job WHERE jobid = (SELECT cron_jobid FROM materialized_table_internal.mt_table WHERE relid = 'a3'::regclass);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 RESUME');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 SUSPEND');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 RESUME WITH (''parallelism'' = ''2'')');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 RESUME WITH (''sink.parallelism'' = ''-2'')');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 RESUME WITH (sink.parallelism = 3)');
SELECT pipeline_options, options FROM materialized_table_internal.mt_table WHERE relid = 'a3'::regclass;
-- RESUME options last for this run only
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 SUSPEND; ALTER MATERIALIZED TABLE a3 RESUME');
SELECT pipeline_options FROM materialized_table_internal.mt_table WHERE relid = 'a3'::regclass;
-- a CONTINUOUS table
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE a4 (PRIMARY KEY (product) NOT ENFORCED) AS SELECT product, count(*) AS n FROM sales GROUP BY product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a4 SUSPEND');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a4 REFRESH');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a4 RESUME');
SELECT * FROM status;

-- AS: a new query may append nullable columns
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS SELECT product, sum(qty) AS total, max(price) AS top_price FROM sales GROUP BY product');
SELECT * FROM cols('a3');
-- existing rows keep their values until the next refresh, which uses the new query
SELECT * FROM a3 ORDER BY product;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 REFRESH');
SELECT * FROM a3 ORDER BY product;
SELECT definition_query FROM materialized_table.materialized_tables WHERE table_name = 'a3'::regclass;
-- the same query again changes nothing
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS SELECT product, sum(qty) AS total, max(price) AS top_price FROM sales GROUP BY product');
-- dropping, reordering, renaming or retyping a column names the first mismatch
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS SELECT product, sum(qty) AS total FROM sales GROUP BY product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS SELECT sum(qty) AS total, product, max(price) AS top_price FROM sales GROUP BY product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS SELECT product, sum(qty) AS quantity, max(price) AS top_price FROM sales GROUP BY product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS SELECT product, sum(qty)::int AS total, max(price) AS top_price FROM sales GROUP BY product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS SELECT product, sum(qty) AS total, max(price)::numeric(10,2) AS top_price FROM sales GROUP BY product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS SELECT product, sum(qty) AS total, max(price) AS top_price, 1 AS product FROM sales GROUP BY product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS SELECT nosuch FROM sales');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS DELETE FROM sales');
-- a query that reads the table itself, directly or through others
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS SELECT product, total, top_price FROM a3');
CREATE VIEW a3_view AS SELECT * FROM a3;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE a3_down FRESHNESS = INTERVAL ''1'' HOUR AS SELECT product FROM a3_view');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS SELECT product, sum(qty) AS total, max(price) AS top_price FROM sales WHERE product IN (SELECT product FROM a3_down) GROUP BY product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 AS SELECT ds, product, total FROM a1_2024_06_27');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE a3_down');
DROP VIEW a3_view;
SELECT * FROM cols('a3');
-- a table whose column list reordered the query's columns
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE a5 (total, product) FRESHNESS = INTERVAL ''1'' HOUR AS SELECT product, sum(qty) AS total FROM sales GROUP BY product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 AS SELECT product, sum(qty) AS total, count(*) AS n FROM sales GROUP BY product');
SELECT * FROM cols('a5');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 REFRESH');
SELECT * FROM a5 ORDER BY product;
-- a column that the table declared with another type keeps it
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE a6 (product BIGINT, total STRING) FRESHNESS = INTERVAL ''1'' HOUR AS SELECT product, sum(qty)::text AS total FROM sales GROUP BY product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a6 AS SELECT product, sum(qty)::text AS total, 1 AS one FROM sales GROUP BY product');
SELECT * FROM cols('a6');
-- a partitioned table keeps its partitions
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 AS SELECT ds, product, sum(qty) AS total, count(*) AS n FROM sales GROUP BY ds, product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 REFRESH PARTITION (ds = ''2024-06-28'')');
SELECT * FROM a1 ORDER BY ds, product;

-- CREATE OR ALTER: creates a missing table
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE a7 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT product FROM sales GROUP BY product');
SELECT * FROM a7 ORDER BY product;
-- an identical statement changes nothing
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a7 SUSPEND');
SELECT last_refresh_time AS before FROM materialized_table.materialized_tables WHERE table_name = 'a7'::regclass \gset
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE a7 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT product FROM sales GROUP BY product');
SELECT last_refresh_time = :'before' AS unchanged FROM materialized_table.materialized_tables WHERE table_name = 'a7'::regclass;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a7 RESUME');
-- a new query: like ALTER ... AS
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE a7 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT product, count(*) AS n FROM sales GROUP BY product');
SELECT * FROM cols('a7');
-- a new freshness, comment and options
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE a7 COMMENT 'new comment' WITH ('fillfactor' = '80') FRESHNESS = INTERVAL '2' HOUR AS SELECT product, count(*) AS n FROM sales GROUP BY product$$);
SELECT * FROM status WHERE table_name = 'a7'::regclass;
SELECT obj_description('a7'::regclass, 'pg_class'), (SELECT reloptions FROM pg_class WHERE oid = 'a7'::regclass);
-- refused: another refresh mode, other partition columns, another distribution
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE a7 FRESHNESS = INTERVAL ''2'' HOUR REFRESH_MODE = CONTINUOUS AS SELECT product, count(*) AS n FROM sales GROUP BY product');
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE a7 PARTITIONED BY (product) FRESHNESS = INTERVAL ''2'' HOUR AS SELECT product, count(*) AS n FROM sales GROUP BY product');
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE a1 PARTITIONED BY (product) AS SELECT ds, product, sum(qty) AS total, count(*) AS n FROM sales GROUP BY ds, product');
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE a7 DISTRIBUTED BY (product) INTO 2 BUCKETS AS SELECT product, count(*) AS n FROM sales GROUP BY product');
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE a7 AS SELECT count(*) AS n, product FROM sales GROUP BY product');
-- a column list or primary key that differs from the table's
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE a7 (PRIMARY KEY (product) NOT ENFORCED) FRESHNESS = INTERVAL ''2'' HOUR AS SELECT product, count(*) AS n FROM sales GROUP BY product');
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE a7 (n, product) FRESHNESS = INTERVAL ''2'' HOUR AS SELECT product, count(*) AS n FROM sales GROUP BY product');
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE a7 (product BIGINT, n) FRESHNESS = INTERVAL ''2'' HOUR AS SELECT product, count(*) AS n FROM sales GROUP BY product');
-- every element of a table, repeated: nothing changes; then each element changed
CREATE TABLE ev (id int, ts timestamp, v numeric);
INSERT INTO ev VALUES (1, '2024-01-01 00:00', 1.5);
\set full_def 'CREATE OR ALTER MATERIALIZED TABLE a10 (id INT COMMENT ''the id'', ts, v, double_v AS v * 2, written TIMESTAMP_LTZ(3) METADATA FROM ''refresh_time'', CONSTRAINT a10_pk PRIMARY KEY (id) NOT ENFORCED, WATERMARK FOR ts AS ts - INTERVAL ''1'' SECOND) COMMENT ''events'' DISTRIBUTED BY HASH (id) INTO 2 BUCKETS WITH (''fillfactor'' = ''90'') FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id, ts, v FROM ev'
SELECT materialized_table.execute(:'full_def');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a10 SUSPEND');
SELECT last_refresh_time AS before FROM materialized_table.materialized_tables WHERE table_name = 'a10'::regclass \gset
SELECT materialized_table.execute(:'full_def');
SELECT last_refresh_time = :'before' AS unchanged FROM materialized_table.materialized_tables WHERE table_name = 'a10'::regclass;
SELECT materialized_table.execute(replace(:'full_def', 'PRIMARY KEY (id)', 'PRIMARY KEY (id, ts)'));
SELECT materialized_table.execute(replace(:'full_def', 'v * 2', 'v * 3'));
SELECT materialized_table.execute(replace(:'full_def', 'double_v AS v * 2, ', ''));
SELECT materialized_table.execute(replace(:'full_def', 'written TIMESTAMP_LTZ(3)', 'written TIMESTAMP_LTZ(6)'));
SELECT materialized_table.execute(replace(:'full_def', 'INTERVAL ''1'' SECOND', 'INTERVAL ''2'' SECOND'));
SELECT materialized_table.execute(replace(:'full_def', 'INTO 2 BUCKETS', 'INTO 3 BUCKETS'));
SELECT materialized_table.execute(replace(:'full_def', 'id INT COMMENT', 'id BIGINT COMMENT'));
SELECT materialized_table.execute(replace(:'full_def', '(id INT COMMENT ''the id'', ts, v,', '(ts, id INT, v,'));
-- a new query and a new column comment apply; the new column goes at the end
SELECT materialized_table.execute(replace(replace(:'full_def', 'SELECT id, ts, v FROM ev', 'SELECT id, ts, v, v + 1 AS w FROM ev'), ', v, double_v', ', v COMMENT ''value'', w, double_v'));
SELECT * FROM cols('a10');
SELECT col_description('a10'::regclass, 3);

-- ADD / MODIFY / DROP a computed column
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD doubled AS total * 2');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD (tripled AS total * 3 COMMENT ''three times'', label AS ''p'' || product)');
SELECT * FROM cols('a5');
SELECT * FROM a5 ORDER BY product;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 MODIFY doubled AS total * 20');
SELECT * FROM cols('a5');
SELECT product, doubled FROM a5 ORDER BY product;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 DROP doubled');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 DROP (tripled, label)');
SELECT * FROM cols('a5');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD bad AS nosuch + 1');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD bad AS now()');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD total AS 1');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 MODIFY nosuch AS 1');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 DROP nosuch');
-- physical columns come from the query
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD extra INT');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD (extra INT, other STRING)');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 DROP total');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 DROP (n, total)');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 MODIFY total BIGINT');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 MODIFY total AS 1');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 MODIFY total BIGINT COMMENT ''the total''');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 MODIFY total COMMENT ''the total''');
SELECT col_description('a5'::regclass, (SELECT attnum FROM pg_attribute WHERE attrelid = 'a5'::regclass AND attname = 'total'));
-- partition columns cannot be dropped
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 DROP ds');
-- column positions are refused
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD c AS 1 FIRST');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD c AS 1 AFTER product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 MODIFY total COMMENT ''x'' FIRST');

-- metadata columns
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD written TIMESTAMP_LTZ(3) METADATA FROM ''refresh_time''');
SELECT count(*) AS rows, count(written) AS stamped FROM a5;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 MODIFY written TIMESTAMP_LTZ(6) METADATA FROM ''refresh_time''');
SELECT * FROM cols('a5');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD k INT METADATA FROM ''offset''');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 DROP written');
SELECT * FROM cols('a5');
-- a table with dropped columns refreshes (they have no type left)
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 REFRESH');
SELECT count(*) AS rows FROM a5;

-- the primary key: ADD makes its columns NOT NULL
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD PRIMARY KEY (product) NOT ENFORCED');
SELECT * FROM cols('a5');
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'a5'::regclass;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD PRIMARY KEY (total) NOT ENFORCED');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 MODIFY CONSTRAINT a5_key PRIMARY KEY (product, total) NOT ENFORCED');
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'a5'::regclass;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 DROP CONSTRAINT nosuch');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 DROP CONSTRAINT a5_key');
SELECT conname FROM pg_constraint WHERE conrelid = 'a5'::regclass;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 DROP PRIMARY KEY');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 MODIFY PRIMARY KEY (product) NOT ENFORCED');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD PRIMARY KEY (product)');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD PRIMARY KEY (nosuch) NOT ENFORCED');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD UNIQUE (product)');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a5 ADD PRIMARY KEY (product) NOT ENFORCED; ALTER MATERIALIZED TABLE a5 DROP PRIMARY KEY');
SELECT conname FROM pg_constraint WHERE conrelid = 'a5'::regclass;
-- a key the rows do not satisfy
\set SHOW_CONTEXT never
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 ADD PRIMARY KEY (total) NOT ENFORCED');
\set SHOW_CONTEXT errors
-- a partitioned table's key must contain its partition columns
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 ADD PRIMARY KEY (product) NOT ENFORCED');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a1 ADD PRIMARY KEY (ds, product) NOT ENFORCED');
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'a1'::regclass;

-- the watermark
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE a8 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT product, sold_at FROM sales');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 ADD WATERMARK FOR sold_at AS sold_at - INTERVAL ''5'' SECOND');
SELECT watermark_column, watermark_expression FROM materialized_table_internal.mt_table WHERE relid = 'a8'::regclass;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 ADD WATERMARK FOR sold_at AS sold_at');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 MODIFY WATERMARK FOR sold_at AS sold_at - INTERVAL ''1'' MINUTE');
SELECT watermark_column, watermark_expression FROM materialized_table_internal.mt_table WHERE relid = 'a8'::regclass;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 MODIFY WATERMARK FOR product AS sold_at');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 MODIFY WATERMARK FOR sold_at AS product');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 DROP WATERMARK');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 DROP WATERMARK');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 MODIFY WATERMARK FOR sold_at AS sold_at');
SELECT watermark_column, watermark_expression FROM materialized_table_internal.mt_table WHERE relid = 'a8'::regclass;
-- a column named watermark is still a column
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 ADD watermark AS product + 1');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 DROP watermark');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 DROP (watermark)');
SELECT * FROM cols('a8');

-- the distribution: fixed when the table is created
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 ADD DISTRIBUTION BY HASH (product) INTO 4 BUCKETS');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a8 DROP DISTRIBUTION');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE a9 DISTRIBUTED BY (product) INTO 2 BUCKETS FRESHNESS = INTERVAL ''1'' HOUR AS SELECT product FROM sales');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a9 DROP DISTRIBUTION');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a9 ADD DISTRIBUTION INTO 3 BUCKETS');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a9 MODIFY DISTRIBUTION INTO 3 BUCKETS');
-- a column named distribution is still a column
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a9 ADD "distribution" AS product * 2');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a9 DROP "distribution"');

-- SET FRESHNESS
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 SET FRESHNESS = INTERVAL ''2'' HOUR');
SELECT schedule FROM cron.job WHERE jobid = (SELECT cron_jobid FROM materialized_table_internal.mt_table WHERE relid = 'a3'::regclass);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 SET FRESHNESS = INTERVAL ''5'' HOUR');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 SET FRESHNESS = INTERVAL ''2'' DAY');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 SET FRESHNESS = INTERVAL ''0'' HOUR');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 SET FRESHNESS INTERVAL ''1'' HOUR');
-- crossing the threshold switches the mode, which needs a primary key
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 SET FRESHNESS = INTERVAL ''10'' MINUTE');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a4 SET FRESHNESS = INTERVAL ''1'' HOUR');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a4 SET FRESHNESS = INTERVAL ''10'' MINUTE');
SELECT * FROM status;

-- only the owner may alter
CREATE ROLE regress_mt_alter_other;
GRANT USAGE ON SCHEMA alter_s TO regress_mt_alter_other;
SET ROLE regress_mt_alter_other;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 REFRESH');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 SUSPEND');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE a3 AS SELECT 1 AS product');
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE a3 AS SELECT 1 AS product');
RESET ROLE;

-- clean up
RESET search_path;
DROP SCHEMA alter_s CASCADE;
DROP ROLE regress_mt_alter_other;
SELECT count(*) FROM materialized_table.materialized_tables;
