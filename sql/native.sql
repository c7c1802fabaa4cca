-- The native spelling: CREATE / REFRESH / ALTER / DROP MATERIALIZED VIEW
-- with materialized_table options, routed by the utility hook to the
-- commands execute() runs.  Errors carry a position into the statement
-- itself (psql shows LINE 1 and no QUERY), under the token at fault.
CREATE SCHEMA native_s;
SET search_path = native_s, public;
CREATE TABLE sales (order_date date, ds text, product_id int, quantity int, amount numeric(12,2));
ALTER TABLE sales REPLICA IDENTITY FULL;
INSERT INTO sales VALUES ('2024-06-28', '2024-06-28', 1, 5, 10), ('2024-06-28', '2024-06-28', 2, 7, 20),
                         ('2024-06-29', '2024-06-29', 1, 1, 5);
-- what each table is, as the catalog says
CREATE VIEW tables AS
SELECT table_name, refresh_mode, freshness, refresh_status, partition_keys, options
  FROM materialized_table.materialized_tables
 WHERE table_name::text NOT LIKE '%.%'
 ORDER BY table_name::text;

-- every clause of CREATE has an option
CREATE MATERIALIZED VIEW product_stats
  WITH (materialized_table.columns = 'product_id, orders,
                                      revenue DECIMAL(12, 2) COMMENT ''sum of amounts'',
                                      avg_order AS revenue / NULLIF(orders, 0),
                                      refreshed_at TIMESTAMP_LTZ(3) METADATA FROM ''refresh_time'' VIRTUAL',
        materialized_table.primary_key = 'product_id',
        materialized_table.comment = 'orders and revenue per product',
        materialized_table.distribution = 'HASH (product_id) INTO 4 BUCKETS',
        fillfactor = 90,
        materialized_table.freshness = '5 minutes',
        materialized_table.refresh_mode = 'full',
        materialized_table.start_mode = 'FROM_BEGINNING')
  AS SELECT product_id, count(*) AS orders, sum(amount) AS revenue
       FROM sales GROUP BY product_id;
SELECT product_id, orders, revenue, avg_order FROM product_stats ORDER BY 1;
SELECT materialized_table.show_create('product_stats');
CREATE MATERIALIZED VIEW daily_sales
  WITH (materialized_table.partitioned_by = 'ds',
        materialized_table.date_formatter = 'ds=yyyy-MM-dd',
        materialized_table.freshness = '1 hour',
        sink.parallelism = 2)
  AS SELECT ds, product_id, sum(quantity) AS total_quantity FROM sales GROUP BY 1, 2
  WITH DATA;
SELECT * FROM daily_sales ORDER BY 1, 2;
-- CONTINUOUS, by its freshness; the other distributions
CREATE MATERIALIZED VIEW totals WITH (materialized_table.freshness = '1 minute')
  AS SELECT product_id, count(*) AS n, sum(quantity) AS q FROM sales GROUP BY product_id;
CREATE MATERIALIZED VIEW ranged
  WITH (materialized_table.distribution = 'RANGE (product_id) INTO 2 BUCKETS', materialized_table.freshness = '1 day')
  AS SELECT product_id, sum(quantity) AS q FROM sales GROUP BY product_id;
CREATE MATERIALIZED VIEW keyed
  WITH (materialized_table.columns = '(product_id, q, PRIMARY KEY (product_id) NOT ENFORCED)',
        materialized_table.distribution = 'INTO 2 BUCKETS', materialized_table.freshness = '1 day')
  AS SELECT product_id, sum(quantity) AS q FROM sales GROUP BY product_id;
CREATE MATERIALIZED VIEW "Quoted Name" WITH (materialized_table.freshness = '90 seconds', materialized_table.or_alter)
  AS (SELECT DISTINCT product_id FROM sales);
SELECT * FROM tables;
-- the same catalog as execute() makes: the Flink statement of each round-trips
SELECT materialized_table.show_create('totals');
SELECT materialized_table.show_create('"Quoted Name"');

-- without a materialized_table option it is PostgreSQL's own
CREATE MATERIALIZED VIEW plain_mv WITH (fillfactor = 50) AS SELECT product_id FROM sales;
SELECT relkind FROM pg_class WHERE relname = 'plain_mv';
CREATE MATERIALIZED VIEW plain_mv2 WITH (nonsense.option = 1) AS SELECT 1 AS a;

-- IF NOT EXISTS, as PostgreSQL: a relation of that name is left alone
CREATE MATERIALIZED VIEW IF NOT EXISTS totals WITH (materialized_table.freshness = '1 minute') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW IF NOT EXISTS plain_mv WITH (materialized_table.freshness = '1 minute') AS SELECT 1 AS a;
-- or_alter: CREATE OR ALTER (a new query appends a column; an identical one changes nothing)
CREATE MATERIALIZED VIEW totals WITH (materialized_table.freshness = '1 minute', materialized_table.or_alter = true)
  AS SELECT product_id, count(*) AS n, sum(quantity) AS q, max(amount) AS top FROM sales GROUP BY product_id;
CREATE MATERIALIZED VIEW totals WITH (materialized_table.freshness = '1 minute', materialized_table.or_alter = on)
  AS SELECT product_id, count(*) AS n, sum(quantity) AS q, max(amount) AS top FROM sales GROUP BY product_id;
SELECT * FROM totals ORDER BY 1;
-- transactional, as the execute() form
BEGIN;
CREATE MATERIALIZED VIEW rolled_back WITH (materialized_table.freshness = '1 hour') AS SELECT 1 AS a;
SELECT count(*) FROM tables WHERE table_name::text = 'rolled_back';
ROLLBACK;
SELECT to_regclass('rolled_back');
-- in a function, and through EXECUTE
DO $$ BEGIN
  EXECUTE $q$CREATE MATERIALIZED VIEW from_do WITH (materialized_table.freshness = '1 hour') AS SELECT 2 AS b$q$;
END $$;
SELECT * FROM from_do;

-- errors point at the option, or inside its value
CREATE MATERIALIZED VIEW e1 WITH (materialized_table.freshness = '5 hours', materialized_table.refresh_mode = 'full') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e2 WITH (materialized_table.freshness = 'soon') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e3 WITH (materialized_table.freshness = '1 month') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e4 WITH (materialized_table.freshness = '-5 minutes') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e5 WITH (materialized_table.freshness = '1.5 seconds') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e5_range WITH (materialized_table.freshness = '2147483649 seconds') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e6 WITH (materialized_table.freshness = '2 days') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e7 WITH (materialized_table.refresh_mode = 'sometimes') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e8 WITH (materialized_table.bogus = 1) AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e9 WITH (materialized_table.freshness = '1 hour', materialized_table.freshness = '2 hours') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e10 WITH (materialized_table.columns = 'a, nope') AS SELECT 1 AS a, 2 AS b;
CREATE MATERIALIZED VIEW e11 WITH (materialized_table.columns = 'a, b BOOLEAN') AS SELECT 1 AS a, 2 AS b;
CREATE MATERIALIZED VIEW e12 WITH (materialized_table.columns = 'a, b, c AS a +') AS SELECT 1 AS a, 2 AS b;
CREATE MATERIALIZED VIEW e13 WITH (materialized_table.columns = 'a, b, c AS a + nope') AS SELECT 1 AS a, 2 AS b;
CREATE MATERIALIZED VIEW e14 WITH (materialized_table.columns = 'a, b, PRIMARY KEY (a)') AS SELECT 1 AS a, 2 AS b;
CREATE MATERIALIZED VIEW e15 WITH (materialized_table.columns = 'a, PRIMARY KEY (a) NOT ENFORCED', materialized_table.primary_key = 'a') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e16 WITH (materialized_table.partitioned_by = 'x') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e17 WITH (materialized_table.partitioned_by = 'a b') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e18 WITH (materialized_table.primary_key = '(a, nope)') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e19 WITH (materialized_table.distribution = 'HASH (a) INTO 0 BUCKETS') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e20 WITH (materialized_table.distribution = 'SIDEWAYS (a)') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e21 WITH (materialized_table.distribution = 'INTO 2 BUCKETS') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e22 WITH (materialized_table.date_formatter = 'ds') AS SELECT 'x'::text AS ds;
CREATE MATERIALIZED VIEW e23 WITH (materialized_table.date_formatter = 'ds=yyyy') AS SELECT 'x'::text AS ds;
CREATE MATERIALIZED VIEW e24 WITH (materialized_table.partitioned_by = 'ds', materialized_table.date_formatter = 'ds=yyyy''') AS SELECT 'x'::text AS ds;
CREATE MATERIALIZED VIEW e25 WITH (materialized_table.start_mode = 'FROM_NOW') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e26 WITH (materialized_table.start_mode = 'LATER') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e27 WITH (materialized_table.or_alter = 'maybe') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e28 WITH (fillfactor = 5, materialized_table.freshness = '1 hour') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e29 WITH (fillfactor = 50, fillfactor = 60, materialized_table.freshness = '1 hour') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e30 (x) WITH (materialized_table.freshness = '1 hour') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e31 USING heap WITH (materialized_table.freshness = '1 hour') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e32 WITH (materialized_table.freshness = '1 hour') TABLESPACE pg_default AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW e33 WITH (materialized_table.freshness = '1 hour') AS SELECT 1 AS a WITH NO DATA;
CREATE MATERIALIZED VIEW e34 WITH (materialized_table.freshness = '1 hour') AS SELECT nosuch FROM sales;
CREATE MATERIALIZED VIEW e35 WITH (materialized_table.freshness = '1 hour') AS SELECT 1 AS a, 2 AS a;
CREATE MATERIALIZED VIEW totals WITH (materialized_table.freshness = '1 minute') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW plain_mv WITH (materialized_table.freshness = '1 minute') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW plain_mv WITH (materialized_table.freshness = '1 minute', materialized_table.or_alter) AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW IF NOT EXISTS e36 WITH (materialized_table.or_alter) AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW totals WITH (materialized_table.or_alter, materialized_table.refresh_mode = 'full')
  AS SELECT product_id, count(*) AS n, sum(quantity) AS q, max(amount) AS top FROM sales GROUP BY product_id;
CREATE MATERIALIZED VIEW no_schema.e37 WITH (materialized_table.freshness = '1 hour') AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW other_db.native_s.e38 WITH (materialized_table.freshness = '1 hour') AS SELECT 1 AS a;
-- PostgreSQL's own checks of a materialized view's query come first
CREATE TEMP TABLE temp_src (a int);
CREATE MATERIALIZED VIEW e39 WITH (materialized_table.freshness = '1 hour') AS SELECT a FROM temp_src;
-- the positions are the client's, in a string of several statements too
SELECT 1 AS first \; CREATE MATERIALIZED VIEW e40 WITH (materialized_table.freshness = '5 hours', materialized_table.refresh_mode = 'full') AS SELECT 1 AS a;
-- in a read-only transaction, as PostgreSQL's own
BEGIN READ ONLY;
CREATE MATERIALIZED VIEW e41 WITH (materialized_table.freshness = '1 hour') AS SELECT 1 AS a;
ROLLBACK;

-- REFRESH MATERIALIZED VIEW [CONCURRENTLY]: the table's refresh, readers never blocked
INSERT INTO sales VALUES ('2024-06-30', '2024-06-30', 3, 4, 40);
REFRESH MATERIALIZED VIEW daily_sales;
REFRESH MATERIALIZED VIEW CONCURRENTLY native_s.product_stats;
SELECT * FROM daily_sales WHERE ds = '2024-06-30';
SELECT product_id, orders FROM product_stats ORDER BY 1;
SELECT table_name, trigger, status FROM materialized_table.refresh_history
 WHERE table_name::text IN ('daily_sales', 'product_stats') AND trigger = 'MANUAL' ORDER BY run_id;
REFRESH MATERIALIZED VIEW plain_mv;
REFRESH MATERIALIZED VIEW daily_sales WITH NO DATA;
REFRESH MATERIALIZED VIEW no_such;

-- ALTER MATERIALIZED VIEW ... SET / RESET: freshness, suspend and resume, key, options
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.freshness = '10 minutes');
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.refresh_status = 'suspended');
SELECT * FROM tables WHERE table_name::text = 'product_stats';
SELECT active FROM cron.job WHERE jobname LIKE '%native_s.product_stats';
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.refresh_status = 'SUSPENDED');
ALTER MATERIALIZED VIEW product_stats RESET (materialized_table.refresh_status, materialized_table.freshness);
SELECT * FROM tables WHERE table_name::text = 'product_stats';
SELECT active FROM cron.job WHERE jobname LIKE '%native_s.product_stats';
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.refresh_status = 'activated');
ALTER MATERIALIZED VIEW daily_sales SET (fillfactor = 70, materialized_table.date_formatter = 'ds=yyyyMMdd');
ALTER MATERIALIZED VIEW daily_sales RESET (sink.parallelism);
SELECT * FROM tables WHERE table_name::text = 'daily_sales';
SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'daily_sales%' ORDER BY 1;
ALTER MATERIALIZED VIEW daily_sales RESET (materialized_table.date_formatter, fillfactor);
SELECT * FROM tables WHERE table_name::text = 'daily_sales';
ALTER MATERIALIZED VIEW totals RESET (materialized_table.primary_key);
ALTER MATERIALIZED VIEW totals SET (materialized_table.primary_key = 'product_id');
SELECT conname FROM pg_constraint WHERE conrelid = 'totals'::regclass;
ALTER MATERIALIZED VIEW totals SET (materialized_table.primary_key = '(product_id, n)');
SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'totals'::regclass;
ALTER MATERIALIZED VIEW totals RESET (materialized_table.primary_key);
SELECT count(*) FROM pg_constraint WHERE conrelid = 'totals'::regclass;
ALTER MATERIALIZED VIEW totals SET (materialized_table.start_mode = 'FROM_BEGINNING');
-- a freshness that crosses the threshold switches a keyed table's mode
ALTER MATERIALIZED VIEW keyed SET (materialized_table.freshness = '30 seconds');
SELECT * FROM tables WHERE table_name::text = 'keyed';
-- refused, each pointing at its option
ALTER MATERIALIZED VIEW daily_sales SET (materialized_table.freshness = '45 minutes');
ALTER MATERIALIZED VIEW daily_sales SET (materialized_table.freshness = '10 minutes');
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.freshness = '2 days');
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.refresh_status = 'paused');
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.refresh_mode = 'continuous');
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.partitioned_by = 'orders');
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.distribution = 'INTO 3 BUCKETS');
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.columns = 'x AS 1');
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.comment = 'new');
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.or_alter = true);
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.bogus = 1);
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.primary_key = 'nope');
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.start_mode = 'FROM_NOW');
ALTER MATERIALIZED VIEW product_stats SET (fillfactor = 5);
ALTER MATERIALIZED VIEW product_stats ALTER COLUMN orders SET STATISTICS 10;
ALTER MATERIALIZED VIEW product_stats OWNER TO CURRENT_USER;
ALTER MATERIALIZED VIEW plain_mv SET (materialized_table.freshness = '1 hour');
ALTER MATERIALIZED VIEW IF EXISTS no_such SET (materialized_table.freshness = '1 hour');
-- a failing option leaves the others of the statement undone
ALTER MATERIALIZED VIEW daily_sales SET (materialized_table.refresh_status = 'suspended', materialized_table.freshness = '45 minutes');
SELECT * FROM tables WHERE table_name::text = 'daily_sales';

-- ALTER MATERIALIZED VIEW ... RENAME TO
ALTER MATERIALIZED VIEW totals RENAME TO totals_renamed;
SELECT * FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES LIKE ''totals%''');
ALTER MATERIALIZED VIEW totals_renamed RENAME TO daily_sales;
ALTER MATERIALIZED VIEW totals_renamed RENAME TO totals;
ALTER MATERIALIZED VIEW totals RENAME COLUMN n TO m;
ALTER MATERIALIZED VIEW plain_mv RENAME TO plain_mv_renamed;

-- only the owner alters, refreshes or drops
CREATE ROLE regress_native_other;
GRANT USAGE ON SCHEMA native_s TO regress_native_other;
GRANT SELECT ON product_stats TO regress_native_other;
SET ROLE regress_native_other;
REFRESH MATERIALIZED VIEW product_stats;
ALTER MATERIALIZED VIEW product_stats SET (materialized_table.refresh_status = 'suspended');
DROP MATERIALIZED VIEW product_stats;
SELECT count(*) FROM product_stats;
RESET ROLE;

-- DROP MATERIALIZED VIEW [IF EXISTS] ... [CASCADE]
CREATE MATERIALIZED VIEW downstream WITH (materialized_table.freshness = '1 hour')
  AS SELECT product_id, q FROM totals;
CREATE VIEW reads_totals AS SELECT * FROM totals;
DROP MATERIALIZED VIEW totals;
DROP MATERIALIZED VIEW totals CASCADE;
SELECT to_regclass('downstream'), to_regclass('reads_totals');
SELECT count(*) FROM materialized_table_internal.mt_table WHERE relid::text IN ('downstream', 'totals');
-- with views of PostgreSQL's own in one statement
DROP MATERIALIZED VIEW ranged, plain_mv_renamed, keyed;
SELECT to_regclass('ranged'), to_regclass('plain_mv_renamed'), to_regclass('keyed');
DROP MATERIALIZED VIEW IF EXISTS ranged, no_such, "Quoted Name";
DROP MATERIALIZED VIEW from_do, no_such;
SELECT to_regclass('from_do');
BEGIN;
DROP MATERIALIZED VIEW from_do;
ROLLBACK;
SELECT count(*) FROM from_do;
DROP MATERIALIZED VIEW from_do, daily_sales, product_stats;
SELECT * FROM tables;
SELECT count(*) FROM cron.job WHERE jobname LIKE '%native_s.%';

-- the execute() spelling is unchanged beside it
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE flink_form FRESHNESS = INTERVAL '1' HOUR AS SELECT 1 AS a$$);
REFRESH MATERIALIZED VIEW flink_form;
DROP MATERIALIZED VIEW flink_form;

SET client_min_messages = warning;
DROP SCHEMA native_s CASCADE;
RESET client_min_messages;
DROP ROLE regress_native_other;
