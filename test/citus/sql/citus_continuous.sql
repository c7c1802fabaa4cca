-- CONTINUOUS materialized tables that Citus distributes (a coordinator and
-- two workers, started by test/citus/run.sh): each shard of the table is a
-- materialized table of the node that holds it, reading the co-located
-- shards of its sources, kept by that node's worker from that node's
-- replication slot.  The coordinator's worker tells every node what the
-- table is and dates the table by its shards.  What cannot be computed
-- shard by shard is refused, with why.
SET client_min_messages = warning;
SET materialized_table.scheduled_refreshes = off;
CREATE SCHEMA cc;
SET search_path = cc, public;
\set schema cc
\i test/lib/mismatches.sql
\i test/lib/citus_helpers.sql

CREATE TABLE orders (id bigint, customer_id int NOT NULL, amount numeric(10,2) NOT NULL,
                     PRIMARY KEY (customer_id, id));
SELECT create_distributed_table('orders', 'customer_id', shard_count => 8);
CREATE TABLE customers (id int PRIMARY KEY, region text NOT NULL);
SELECT create_reference_table('customers');
INSERT INTO orders SELECT i, i % 500, (i % 97) + 0.25 FROM generate_series(1, 20000) i;
INSERT INTO customers SELECT i, 'r' || (i % 5) FROM generate_series(0, 499) i;

-- 1. an aggregate by the distribution column, a join with a reference
-- table, rows kept by a filter: each co-located with orders (8 shards)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE totals DISTRIBUTED BY HASH (customer_id) FRESHNESS = INTERVAL '1' SECOND
    AS SELECT customer_id, count(*) AS n, sum(amount) AS total FROM cc.orders GROUP BY customer_id $$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE by_region DISTRIBUTED BY HASH (customer_id) FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.customer_id, c.region, count(*) AS n, sum(o.amount) AS total
         FROM cc.orders o JOIN cc.customers c ON c.id = o.customer_id
        GROUP BY o.customer_id, c.region $$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE big (PRIMARY KEY (customer_id, id) NOT ENFORCED)
    DISTRIBUTED BY HASH (customer_id) FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id, customer_id, amount FROM cc.orders WHERE amount > 90 $$);
SELECT table_name, refresh_mode, maintenance, maintenance_detail
  FROM materialized_table.materialized_tables WHERE table_name::text IN ('totals', 'by_region', 'big')
 ORDER BY 1;
SELECT p.logicalrelid::regclass AS table_name, count(*) AS shards,
       p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'orders'::regclass) AS with_orders
  FROM pg_dist_partition p JOIN pg_dist_shard USING (logicalrelid)
 WHERE p.logicalrelid::text IN ('totals', 'by_region', 'big') GROUP BY 1, 3 ORDER BY 1;
SELECT caught_up('totals'), caught_up('by_region'), caught_up('big');
-- each worker keeps its 4 shards of each table, incrementally
SELECT * FROM on_workers($$SELECT count(*) FILTER (WHERE maintenance = 'INCREMENTAL') || ' of ' || count(*)
                             FROM materialized_table.materialized_tables WHERE table_name::text LIKE 'cc.%'$$);

-- 2. changes of the sources, on both workers, followed shard by shard
SELECT clock_timestamp() AS before_changes \gset
INSERT INTO orders SELECT i, i % 700, 95 FROM generate_series(20001, 21000) i;
UPDATE orders SET amount = amount + 1 WHERE customer_id < 10;
DELETE FROM orders WHERE customer_id BETWEEN 100 AND 104;
UPDATE customers SET region = 'r9' WHERE id < 10;
SELECT caught_up('totals'), caught_up('by_region'), caught_up('big');
SELECT count(*), sum(n) FROM totals;
SELECT count(*) FROM by_region WHERE region = 'r9';
-- by a cycle of the nodes, never by a recompute of the whole shard
SELECT * FROM on_workers(format($$SELECT string_agg(DISTINCT trigger || ' ' || strategy, ', ')
                                    FROM materialized_table.refresh_history
                                   WHERE table_name::text LIKE 'cc.%%' AND started_at > %L$$, :'before_changes'));
TRUNCATE orders;
SELECT caught_up('totals'), caught_up('big');
SELECT count(*) FROM totals;
INSERT INTO orders SELECT i, i % 300, i % 100 FROM generate_series(1, 3000) i;
SELECT caught_up('totals'), caught_up('by_region'), caught_up('big');

-- 3. SUSPEND: the nodes stop applying (the control: the table falls behind),
-- RESUME: they catch up
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cc.totals SUSPEND');
SELECT pg_sleep(1.5);
SELECT * FROM on_workers($$SELECT string_agg(DISTINCT refresh_status, ',') FROM materialized_table.materialized_tables
                             WHERE table_name::text LIKE 'cc.totals%'$$);
INSERT INTO orders SELECT i, i % 300, 1 FROM generate_series(3001, 3300) i;
SELECT pg_sleep(2);
SELECT mismatches('totals') > 0 AS behind;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cc.totals RESUME');
SELECT caught_up('totals');

-- 4. ALTER ... REFRESH: every node recomputes its shards, now
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cc.big REFRESH');
SELECT trigger, status FROM materialized_table.refresh_history
 WHERE table_name = 'big'::regclass ORDER BY run_id;
SELECT * FROM on_workers($$SELECT count(*) FROM materialized_table.refresh_history
                             WHERE trigger = 'MANUAL' AND table_name::text LIKE 'cc.big%'$$);

-- 5. ALTER ... AS with a new column: the nodes take the new query up
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE cc.totals AS
    SELECT customer_id, count(*) AS n, sum(amount) AS total, max(amount) AS biggest
      FROM cc.orders GROUP BY customer_id $$);
SELECT caught_up('totals');
SELECT count(biggest) = count(*) AS filled FROM totals;
UPDATE orders SET amount = 500 WHERE id = 7;
SELECT caught_up('totals');
SELECT biggest FROM totals WHERE customer_id = 7;

-- 6. what is not computed shard by shard is refused, and why
-- not co-located: another shard count
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE t4 DISTRIBUTED BY HASH (customer_id) INTO 4 BUCKETS FRESHNESS = INTERVAL '1' SECOND
    AS SELECT customer_id, count(*) AS n FROM cc.orders GROUP BY customer_id $$);
-- distributed by a column that is not the sources'
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE by_amount DISTRIBUTED BY HASH (amount) FRESHNESS = INTERVAL '1' SECOND
    AS SELECT amount, count(*) AS n FROM cc.orders GROUP BY amount $$);
-- co-located, but its rows come from more than their own shard (a TopK)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE top10 DISTRIBUTED BY HASH (customer_id) FRESHNESS = INTERVAL '1' SECOND
    AS SELECT customer_id, id, amount FROM cc.orders ORDER BY amount DESC, id LIMIT 10 $$);
-- only a reference table: every shard would compute every row
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE regions DISTRIBUTED BY HASH (id) INTO 8 BUCKETS FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id, region FROM cc.customers $$);
-- a table of the coordinator's own as a source
CREATE TABLE notes (customer_id int, note text);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE noted DISTRIBUTED BY HASH (customer_id) FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.customer_id, count(*) AS n FROM cc.orders o JOIN cc.notes USING (customer_id)
        GROUP BY o.customer_id $$);
SELECT count(*) AS left_behind FROM pg_class WHERE relnamespace = 'cc'::regnamespace
   AND relname IN ('t4', 'by_amount', 'top10', 'regions', 'noted');

-- 7. DROP: the shards go, and with them the nodes' materialized tables
SELECT materialized_table.execute('DROP MATERIALIZED TABLE cc.big');
SELECT * FROM on_workers($$SELECT count(*) FROM materialized_table.materialized_tables
                             WHERE table_name::text LIKE 'cc.big%'$$);

SELECT * FROM on_workers($$SELECT count(*) FROM materialized_table.materialized_tables
                             WHERE table_name::text LIKE 'cc.%'$$);
DROP SCHEMA cc CASCADE;
SELECT nodeport > 0 AS node, result FROM run_command_on_workers(
  $$SELECT count(*) FROM materialized_table.materialized_tables WHERE table_name::text LIKE 'cc.%'$$);
RESET materialized_table.scheduled_refreshes;
