-- CONTINUOUS materialized tables of the coordinator that aggregate Citus
-- tables (a coordinator and two workers, started by test/citus/run.sh):
-- not co-located with their sources, they are kept from partial aggregates
-- of each shard.  Each worker keeps a materialized table per shard of the
-- sources it holds (count, sum, min, max per group; avg as a sum and a
-- count), maintained by that node's worker from that node's slot; the
-- coordinator's worker combines them, over all nodes, twice a second.
-- What cannot be combined from the shards is kept from the key values
-- the nodes send instead (citus_forwarded.sql).
SET client_min_messages = warning;
SET materialized_table.scheduled_refreshes = off;
CREATE SCHEMA cp;
SET search_path = cp, public;
\set schema cp
\i test/lib/mismatches.sql
\i test/lib/citus_helpers.sql

CREATE TABLE orders (id bigint, customer_id int NOT NULL, amount numeric(10,2) NOT NULL,
                     day date NOT NULL, qty int, PRIMARY KEY (customer_id, id));
SELECT create_distributed_table('orders', 'customer_id', shard_count => 8);
CREATE TABLE customers (id int PRIMARY KEY, region text NOT NULL);
SELECT create_reference_table('customers');
INSERT INTO orders SELECT i, i % 500, (i % 97) + 0.25, date '2026-01-01' + i % 20,
                          CASE WHEN i % 7 = 0 THEN NULL ELSE i % 13 END
  FROM generate_series(1, 20000) i;
INSERT INTO customers SELECT i, 'r' || (i % 5) FROM generate_series(0, 499) i;

-- 1. grouped by columns of a reference table and of the source (not its
-- distribution column), every aggregate that combines, an expression
-- over one, HAVING; a global aggregate
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE by_region_day FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.region, o.day, count(*) AS n, sum(o.amount) AS total, avg(o.qty) AS mean_qty,
              min(o.amount) AS lowest, max(o.day) AS last_day, count(o.qty) * 2 AS twice_counted
         FROM cp.orders o JOIN cp.customers c ON c.id = o.customer_id
        GROUP BY c.region, o.day HAVING count(*) > 1 $$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE overall FRESHNESS = INTERVAL '1' SECOND
    AS SELECT count(*) AS n, sum(amount) AS total, avg(amount) AS mean, max(qty) AS top,
              count(*) FILTER (WHERE qty IS NULL) AS no_qty
         FROM cp.orders $$);
SELECT table_name, maintenance, maintenance_detail FROM materialized_table.materialized_tables
 WHERE table_name::text IN ('by_region_day', 'overall') ORDER BY 1;
SELECT caught_up('by_region_day') AS region_day_caught_up, caught_up('overall') AS overall_caught_up;
-- each worker keeps a partial table per shard of orders it holds, for each table
SELECT * FROM on_workers($$SELECT count(*) || ' partial tables, ' ||
                                  string_agg(DISTINCT maintenance, ', ')
                             FROM materialized_table.materialized_tables
                            WHERE table_name::text LIKE 'cp.mt\_partial\_%'$$);
SELECT count(*) AS shards FROM pg_dist_shard WHERE logicalrelid = 'orders'::regclass;
SELECT region, day, n, total, mean_qty FROM by_region_day ORDER BY region, day LIMIT 3;
SELECT * FROM overall;

-- 2. changes on both workers' shards, of the reference table, TRUNCATE
CREATE TEMP TABLE mark AS SELECT clock_timestamp() AS at;
INSERT INTO orders SELECT i, i % 500, 1000.50, date '2026-02-01', 1 FROM generate_series(30001, 30100) i;
UPDATE orders SET amount = amount + 1, qty = 99 WHERE id % 50 = 3;
DELETE FROM orders WHERE id % 77 = 5;
UPDATE orders SET day = date '2026-03-01' WHERE customer_id IN (1, 2, 3, 4);
SELECT caught_up('by_region_day') AS after_changes, caught_up('overall') AS overall_after_changes;
UPDATE customers SET region = 'r9' WHERE id < 20;
SELECT caught_up('by_region_day') AS after_reference_update;
SELECT count(*) FILTER (WHERE region = 'r9') > 0 AS r9_appeared FROM by_region_day;
-- each pass of the coordinator that combined changed partials is a run of
-- the table's history (its strategy: below)
SELECT DISTINCT trigger, status FROM materialized_table.refresh_history
 WHERE table_name = 'by_region_day'::regclass AND started_at > (SELECT at FROM mark);
-- how the workers keep the partial aggregates (each node's own engine;
-- the shards' numbers left out)
SELECT * FROM on_workers($$SELECT string_agg(DISTINCT regexp_replace(maintenance_detail, '_[0-9]+', '', 'g'), ' / ')
                             FROM materialized_table.materialized_tables
                            WHERE table_name::text LIKE 'cp.mt\_partial\_%'$$);
-- and they followed the changes: cycles since the mark, none failed
SELECT * FROM on_workers(format($$SELECT count(*) > 0 AND bool_and(h.status = 'SUCCEEDED')
                                     FROM materialized_table.refresh_history h
                                    WHERE h.table_name::text LIKE 'cp.mt\_partial\_%%'
                                      AND h.trigger = 'CONTINUOUS' AND h.started_at > %L$$,
                                 (SELECT at FROM mark)));
-- a pass combines again only the groups that changed on a node (DELTAS):
-- a group gone from some shards, from all of them, a NULL group gone and
-- back, a group new
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE by_qty FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.qty % 4 AS bucket, o.day, count(*) AS n, sum(o.amount) AS total, max(o.id) AS last_id
         FROM cp.orders o GROUP BY o.qty % 4, o.day $$);
SELECT caught_up('by_qty') AS by_qty_caught_up;
CREATE TEMP TABLE mark_groups AS SELECT clock_timestamp() AS at;
DELETE FROM orders WHERE qty IS NULL AND day = '2026-01-05';
UPDATE orders SET qty = 5 WHERE qty % 4 = 3 AND day = '2026-01-07' AND customer_id % 2 = 0;
DELETE FROM orders WHERE qty % 4 = 2 AND day = '2026-01-06';
SELECT caught_up('by_qty') AS groups_gone;
INSERT INTO orders VALUES (40001, 3, 1.00, '2026-01-05', NULL), (40002, 4, 2.00, '2026-05-01', 6);
SELECT caught_up('by_qty') AS groups_back;
SELECT bucket, day, n, last_id FROM by_qty
 WHERE day IN ('2026-01-05', '2026-01-06', '2026-01-07', '2026-05-01') ORDER BY day, bucket NULLS FIRST;
SELECT DISTINCT strategy FROM materialized_table.refresh_history
 WHERE table_name = 'by_qty'::regclass AND started_at > (SELECT at FROM mark_groups);
-- a global aggregate has no group to name: its passes combine its one row again (FULL)
SELECT DISTINCT strategy AS overall_strategy FROM materialized_table.refresh_history
 WHERE table_name = 'overall'::regclass AND started_at > (SELECT at FROM mark_groups);
SELECT materialized_table.execute('DROP MATERIALIZED TABLE cp.by_qty');
TRUNCATE orders;
INSERT INTO orders VALUES (1, 7, 5.00, '2026-04-01', 3), (2, 7, 6.00, '2026-04-01', NULL),
                          (3, 8, 7.00, '2026-04-01', 1);
SELECT caught_up('by_region_day') AS after_truncate, caught_up('overall') AS overall_after_truncate;
SELECT * FROM by_region_day;
SELECT * FROM overall;

-- 3. SUSPEND: the table stays as it was while the nodes' partials wait;
-- RESUME catches up
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cp.overall SUSPEND');
INSERT INTO orders VALUES (4, 9, 100.00, '2026-04-02', 2);
SELECT pg_sleep(1.5);
SELECT n AS n_while_suspended FROM overall;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cp.overall RESUME');
SELECT caught_up('overall') AS after_resume;
SELECT n AS n_after_resume FROM overall;

-- 4. ALTER ... AS (a column appended): the nodes' partial tables follow;
-- REFRESH recomputes the table from its query
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE cp.overall AS
    SELECT count(*) AS n, sum(amount) AS total, avg(amount) AS mean, max(qty) AS top,
           count(*) FILTER (WHERE qty IS NULL) AS no_qty, min(day) AS first_day
      FROM cp.orders $$);
INSERT INTO orders VALUES (5, 10, 1.00, '2025-12-31', 2);
SELECT caught_up('overall') AS after_alter;
SELECT first_day FROM overall;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cp.overall REFRESH');
SELECT mismatches('overall') AS after_refresh;

-- 5. not kept from partial aggregates, but from the key values the nodes
-- send (citus_forwarded.sql), or recomputed when they say a shard changed
-- an aggregate that does not combine from partial results
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE distinct_days FRESHNESS = INTERVAL '1' SECOND
    AS SELECT customer_id % 3 AS k, count(DISTINCT day) AS n FROM cp.orders GROUP BY 1 $$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE notes FRESHNESS = INTERVAL '1' SECOND
    AS SELECT string_agg(id::text, ',') AS ids FROM cp.orders $$);
-- a float sum (its value would depend on the order of its terms)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE floats FRESHNESS = INTERVAL '1' SECOND
    AS SELECT sum(amount::float8) AS total FROM cp.orders $$);
-- sources that are not co-located (Citus runs such joins by repartitioning
-- them, once allowed to)
SET citus.enable_repartition_joins = on;
CREATE TABLE visits (id bigint, page int NOT NULL, PRIMARY KEY (page, id));
SELECT create_distributed_table('visits', 'page', shard_count => 4);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE joined FRESHNESS = INTERVAL '1' SECOND
    AS SELECT count(*) AS n FROM cp.orders o JOIN cp.visits v ON v.page = o.customer_id $$);
-- co-located, but not joined by the distribution columns
CREATE TABLE payments (id bigint, customer_id int NOT NULL, amount numeric NOT NULL,
                       PRIMARY KEY (customer_id, id));
SELECT create_distributed_table('payments', 'customer_id', colocate_with => 'orders');
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE by_amount FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.day, count(*) AS n FROM cp.orders o JOIN cp.payments p ON p.id = o.id GROUP BY o.day $$);
RESET citus.enable_repartition_joins;
-- an outer join that keeps a reference table's rows whole: each shard
-- would keep its unmatched rows
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE customers_orders FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.region, count(*) AS n FROM cp.customers c LEFT JOIN cp.orders o ON o.customer_id = c.id
        GROUP BY c.region $$);
-- a subquery, a window, no aggregate
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE big FRESHNESS = INTERVAL '1' SECOND
    AS SELECT day, count(*) AS n FROM cp.orders WHERE amount > (SELECT 1) GROUP BY day $$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE ranked FRESHNESS = INTERVAL '1' SECOND
    AS SELECT day, rank() OVER (ORDER BY count(*)) AS r FROM cp.orders GROUP BY day $$);
-- a column neither grouped nor aggregated (by the primary key of customers)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE named FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.id, c.region, count(*) AS n FROM cp.orders o JOIN cp.customers c ON c.id = o.customer_id
        GROUP BY c.id $$);
SELECT table_name, maintenance, split_part(maintenance_detail, ':', 1) AS kept
  FROM materialized_table.materialized_tables
 WHERE table_name::text IN ('distinct_days', 'notes', 'floats', 'joined', 'by_amount', 'customers_orders',
                            'big', 'ranked', 'named')
 ORDER BY 1;
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM materialized_table.materialized_tables
 WHERE table_name::text IN ('distinct_days', 'notes', 'floats', 'joined', 'by_amount', 'customers_orders',
                            'big', 'ranked', 'named');

-- 6. in the public schema, whose shards' names Citus leaves unqualified
-- (the nodes read them whatever their search_path): a table kept shard by
-- shard and one of the coordinator
CREATE TABLE public.cp_events (id bigint, account int NOT NULL, PRIMARY KEY (account, id));
SELECT create_distributed_table('public.cp_events', 'account', shard_count => 4);
INSERT INTO public.cp_events SELECT i, i % 30 FROM generate_series(1, 600) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE public.cp_per_account DISTRIBUTED BY HASH (account) FRESHNESS = INTERVAL '1' SECOND
    AS SELECT account, count(*) AS n FROM public.cp_events GROUP BY account;
  CREATE MATERIALIZED TABLE public.cp_events_total FRESHNESS = INTERVAL '1' SECOND
    AS SELECT count(*) AS n FROM public.cp_events $$);
INSERT INTO public.cp_events SELECT i, i % 30 FROM generate_series(601, 700) i;
SELECT caught_up('public.cp_per_account') AS per_account, caught_up('public.cp_events_total') AS total;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE public.cp_per_account; DROP MATERIALIZED TABLE public.cp_events_total');
DROP TABLE public.cp_events;

-- 7. DROP: the nodes drop their partial tables
SELECT materialized_table.execute('DROP MATERIALIZED TABLE cp.overall');
SELECT * FROM on_workers($$SELECT count(*) FROM materialized_table.materialized_tables
                             WHERE table_name::text LIKE 'cp.mt\_partial\_%'$$);
SELECT count(*) AS hidden_left FROM pg_class
 WHERE relnamespace = 'materialized_table_internal'::regnamespace
   AND relkind IN ('r', 'v') AND (relname LIKE 'partials\_%' OR relname LIKE 'combined\_%');
-- and with the schema, the last table and its nodes' partial tables
DROP SCHEMA cp CASCADE;
SELECT nodeport > 0 AS node, result FROM run_command_on_workers(
  $$SELECT count(*) FROM materialized_table.materialized_tables WHERE table_name::text LIKE 'cp.%'$$);
SELECT count(*) AS hidden_left_after_schema FROM pg_class
 WHERE relnamespace = 'materialized_table_internal'::regnamespace
   AND relkind IN ('r', 'v') AND (relname LIKE 'partials\_%' OR relname LIKE 'combined\_%');
RESET materialized_table.scheduled_refreshes;
