-- scripts/demo.sql: a short tour of materialized_table (run by scripts/setup.sh,
-- or by hand: psql -h DIR -p PORT -U postgres demo -f scripts/demo.sql).
-- It drops and recreates its own objects, so it can be run again.
\set ON_ERROR_STOP on
\pset null '(null)'
SET client_min_messages = warning;
\o /dev/null
SELECT materialized_table.execute('DROP MATERIALIZED TABLE IF EXISTS daily_sales;
                                   DROP MATERIALIZED TABLE IF EXISTS product_totals') AS cleanup;
DROP MATERIALIZED VIEW IF EXISTS top_products;
DROP TABLE IF EXISTS sales;
\o
RESET client_min_messages;

\echo
\echo '== A source table: sales'
CREATE TABLE sales (
    order_date date NOT NULL,
    product_id int NOT NULL,
    quantity int NOT NULL,
    amount numeric(10, 2) NOT NULL
);
INSERT INTO sales
SELECT date '2024-06-25' + i % 4, 1 + i % 5, 1 + i % 7, (1 + i % 7) * 9.99
  FROM generate_series(1, 1000) i;

\echo
\echo '== FULL mode: a daily aggregate, one partition per day, recomputed every hour by pg_cron.'
\echo '   The date-formatter names the partition each scheduled run recomputes.'
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE daily_sales
    COMMENT 'sales per day and product'
    PARTITIONED BY (ds)
    WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd')
    FRESHNESS = INTERVAL '1' HOUR
    REFRESH_MODE = FULL
    AS SELECT to_char(order_date, 'YYYY-MM-DD') AS ds,
              product_id,
              sum(quantity) AS total_quantity,
              sum(amount) AS total_amount
         FROM sales
        GROUP BY 1, 2
$$);

\echo
\echo '== CONTINUOUS mode (freshness below 30 minutes): totals per product.'
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE product_totals
    FRESHNESS = INTERVAL '30' SECOND
    AS SELECT product_id, count(*) AS orders, sum(amount) AS revenue
         FROM sales
        GROUP BY product_id
$$);

\echo
\echo '== Both are ordinary tables, filled at CREATE:'
SELECT * FROM daily_sales WHERE product_id <= 2 ORDER BY ds, product_id;
SELECT * FROM product_totals ORDER BY product_id;
\d+ daily_sales

\echo
\echo '== The catalog: materialized_table.materialized_tables'
SELECT table_name, refresh_mode, freshness, refresh_status, partition_keys, options, scheduler
  FROM materialized_table.materialized_tables ORDER BY table_name::text;

\echo
\echo '== New sales for 2024-06-28 arrive; refresh just that day:'
INSERT INTO sales SELECT date '2024-06-28', 1 + i % 5, 10, 99.90 FROM generate_series(1, 50) i;
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE daily_sales REFRESH PARTITION (ds = '2024-06-28')$$);
SELECT * FROM daily_sales WHERE ds = '2024-06-28' ORDER BY product_id;

\echo
\echo '== product_totals is CONTINUOUS: the worker applies the new sales within its'
\echo '   freshness (30 seconds), without a refresh. Waiting until it has:'
DO $$
DECLARE
    waited interval;
    started timestamptz := clock_timestamp();
BEGIN
    LOOP
        -- a new snapshot each time round: the worker commits meanwhile
        EXIT WHEN NOT EXISTS (
            (SELECT product_id, count(*) AS orders, sum(amount) AS revenue FROM sales GROUP BY product_id
             EXCEPT SELECT * FROM product_totals)
            UNION ALL
            (SELECT * FROM product_totals
             EXCEPT SELECT product_id, count(*), sum(amount) FROM sales GROUP BY product_id));
        IF clock_timestamp() - started > interval '60 seconds' THEN
            RAISE NOTICE 'product_totals has not caught up after 60 seconds: see materialized_table.refresh_history';
            RETURN;
        END IF;
        PERFORM pg_sleep(0.2);
    END LOOP;
    waited := clock_timestamp() - started;
    RAISE NOTICE 'product_totals caught up after % seconds', round(extract(epoch FROM waited)::numeric, 1);
END
$$;
SELECT * FROM product_totals ORDER BY product_id;

\echo
\echo '== The same statements in PostgreSQL''s own spelling: a MATERIALIZED VIEW'
\echo '   with materialized_table options is a materialized table.'
CREATE MATERIALIZED VIEW top_products
  WITH (materialized_table.freshness = '1 minute', materialized_table.primary_key = 'product_id')
  AS SELECT product_id, sum(quantity) AS quantity FROM sales GROUP BY product_id;
SELECT * FROM materialized_table.execute_query('DESCRIBE EXTENDED top_products')
 WHERE name IN ('product_id', 'quantity', 'refresh_mode', 'freshness', 'maintenance');
ALTER MATERIALIZED VIEW top_products SET (materialized_table.refresh_status = 'suspended');
REFRESH MATERIALIZED VIEW top_products;

\echo
\echo '== Every refresh is recorded: materialized_table.refresh_history'
SELECT table_name, trigger, partition, status, rows
  FROM materialized_table.refresh_history ORDER BY run_id DESC LIMIT 5;

\echo
\echo '== The Flink statement that recreates a table:'
SELECT materialized_table.show_create('daily_sales');
