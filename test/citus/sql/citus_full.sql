-- Materialized tables on a Citus cluster (a coordinator and two workers,
-- started by test/citus/run.sh): DISTRIBUTED BY makes a Citus distributed
-- table, co-located with a source distributed on the same column; FULL
-- refreshes write the shards through Citus; what is not supported yet is
-- refused with an error, never silently wrong.
SET client_min_messages = warning;
SET materialized_table.scheduled_refreshes = off;
CREATE SCHEMA cit;
SET search_path = cit, public;
\set schema cit
\i test/lib/mismatches.sql

-- the sources: orders distributed by customer (8 shards), a reference
-- table of customers, and a table of the coordinator's own
CREATE TABLE orders (id bigint, customer_id int, amount numeric(10,2), ds date,
                     PRIMARY KEY (customer_id, id));
SELECT create_distributed_table('orders', 'customer_id', shard_count => 8);
CREATE TABLE customers (id int PRIMARY KEY, region text NOT NULL);
SELECT create_reference_table('customers');
CREATE TABLE regions (region text PRIMARY KEY, manager text);
INSERT INTO orders SELECT i, i % 500, (i % 97) + 0.25, date '2024-01-01' + i % 30
  FROM generate_series(1, 20000) i;
INSERT INTO customers SELECT i, 'r' || (i % 5) FROM generate_series(0, 499) i;
INSERT INTO regions SELECT 'r' || i, 'm' || i FROM generate_series(0, 4) i;

-- what Citus makes of each table of this file
CREATE VIEW distribution AS
SELECT p.logicalrelid::regclass::text AS table_name,
       pg_catalog.column_to_column_name(p.logicalrelid, p.partkey) AS column_name,
       (SELECT count(*) FROM pg_dist_shard s WHERE s.logicalrelid = p.logicalrelid) AS shards,
       p.colocationid = (SELECT colocationid FROM pg_dist_partition
                          WHERE logicalrelid = 'cit.orders'::regclass) AS with_orders
  FROM pg_dist_partition p
 WHERE p.logicalrelid::regclass::text NOT IN ('orders', 'customers')
   AND p.logicalrelid IN (SELECT oid FROM pg_class WHERE relnamespace = 'cit'::regnamespace)
 ORDER BY 1;

-- 1. DISTRIBUTED BY HASH (customer_id) INTO 8 BUCKETS: 8 shards, co-located
-- with orders; filled at once, in the shards (the coordinator's table of
-- that name is an empty shell)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE cust_totals
    DISTRIBUTED BY HASH (customer_id) INTO 8 BUCKETS
    FRESHNESS = INTERVAL '1' HOUR
    AS SELECT customer_id, count(*) AS orders, sum(amount) AS total
         FROM cit.orders GROUP BY customer_id $$);
SELECT * FROM distribution;
SELECT count(*), sum(orders), mismatches('cust_totals') FROM cust_totals;
SELECT pg_relation_size('cust_totals') AS shell_bytes;

-- without INTO n BUCKETS it takes the shard count of the source it is
-- co-located with; with another count it is not co-located
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE cust_days DISTRIBUTED BY HASH (customer_id) FRESHNESS = INTERVAL '1' HOUR
    AS SELECT customer_id, ds, count(*) AS orders FROM cit.orders GROUP BY customer_id, ds $$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE cust_max DISTRIBUTED BY HASH (customer_id) INTO 4 BUCKETS
    FRESHNESS = INTERVAL '1' HOUR
    AS SELECT customer_id, max(amount) AS biggest FROM cit.orders GROUP BY customer_id $$);
-- DISTRIBUTED INTO n BUCKETS: by the primary key
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE cust_last (PRIMARY KEY (customer_id) NOT ENFORCED)
    DISTRIBUTED INTO 8 BUCKETS FRESHNESS = INTERVAL '1' HOUR
    AS SELECT customer_id, max(ds) AS last_day FROM cit.orders GROUP BY customer_id $$);
-- a join with the reference table, distributed by a column of orders
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE cust_regions DISTRIBUTED BY HASH (customer_id) FRESHNESS = INTERVAL '1' HOUR
    AS SELECT o.customer_id, c.region, sum(o.amount) AS total
         FROM cit.orders o JOIN cit.customers c ON c.id = o.customer_id
        GROUP BY o.customer_id, c.region $$);
-- distributed by a column that is no source's distribution column
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE day_totals DISTRIBUTED BY HASH (ds) INTO 2 BUCKETS
    FRESHNESS = INTERVAL '1' HOUR
    AS SELECT ds, count(*) AS orders FROM cit.orders GROUP BY ds $$);
-- PostgreSQL's spelling
CREATE MATERIALIZED VIEW cust_count
  WITH (materialized_table.freshness = '1 hour', materialized_table.distribution = 'HASH (customer_id)')
  AS SELECT customer_id, count(*) AS orders FROM cit.orders GROUP BY customer_id;
SELECT * FROM distribution;
SELECT table_name, mismatches(table_name::regclass) FROM distribution;

-- 2. without DISTRIBUTED BY, a table over distributed sources is a table of
-- the coordinator, as without Citus
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE region_totals (PRIMARY KEY (region) NOT ENFORCED)
    FRESHNESS = INTERVAL '1' HOUR
    AS SELECT c.region, r.manager, count(*) AS orders, sum(o.amount) AS total
         FROM cit.orders o JOIN cit.customers c ON c.id = o.customer_id
         JOIN cit.regions r ON r.region = c.region
        GROUP BY c.region, r.manager $$);
SELECT count(*) AS in_citus FROM pg_dist_partition WHERE logicalrelid = 'region_totals'::regclass;
SELECT * FROM region_totals ORDER BY region;

-- 3. refreshes after changes of the sources: every table equals its query
INSERT INTO orders SELECT i, i % 700, 5, date '2024-02-01' FROM generate_series(20001, 21000) i;
UPDATE orders SET amount = amount + 1 WHERE customer_id < 50;
DELETE FROM orders WHERE customer_id BETWEEN 100 AND 120;
UPDATE customers SET region = 'r9' WHERE id < 10;
SELECT table_name, mismatches(table_name::regclass) > 0 AS stale FROM distribution;
SELECT materialized_table.execute(format('ALTER MATERIALIZED TABLE cit.%I REFRESH', table_name))
  FROM distribution;
REFRESH MATERIALIZED VIEW cust_count;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cit.region_totals REFRESH');
SELECT table_name, mismatches(table_name::regclass) FROM distribution
UNION ALL SELECT 'region_totals', mismatches('region_totals');
SELECT pg_relation_size('cust_totals') AS shell_bytes;
-- the scheduler is the coordinator's: a pg_cron job per table, whose run
-- refreshes the table (scheduled_refreshes is off for the file, so that
-- jobs due meanwhile do nothing; the run is called here instead)
SELECT jobname, schedule FROM cron.job WHERE jobname LIKE '%cit.cust_totals' ORDER BY 1;
INSERT INTO orders VALUES (30000, 1, 1000, '2024-03-01');
SET materialized_table.scheduled_refreshes = on;
SELECT materialized_table.scheduled_refresh('cit.cust_totals'::regclass) IS NOT NULL AS ran;
SET materialized_table.scheduled_refreshes = off;
SELECT mismatches('cust_totals');
SELECT orders FROM cust_totals WHERE customer_id = 1;
SELECT trigger, status FROM materialized_table.refresh_history
 WHERE table_name = 'cust_totals'::regclass ORDER BY run_id DESC LIMIT 1;
-- how Citus runs a refresh's INSERT ... SELECT: that of a co-located table
-- on the workers, shard by shard ("pushed down"), the others through the
-- coordinator
CREATE FUNCTION insert_method(t regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v text := (SELECT query_view::regclass::text FROM materialized_table_internal.mt_table WHERE relid = t);
    line text;
    method text := 'pushed down';
BEGIN
    FOR line IN EXECUTE format('EXPLAIN (COSTS OFF) INSERT INTO %s SELECT * FROM %s', t, v) LOOP
        IF line ~ 'INSERT/SELECT method' THEN
            method := trim(split_part(line, ':', 2));
        END IF;
    END LOOP;
    RETURN method;
END
$$;
SELECT table_name, insert_method(table_name::regclass) FROM distribution;
SELECT table_name::text, trigger, status, rows, strategy FROM materialized_table.refresh_history
 WHERE table_name = 'cust_totals'::regclass ORDER BY run_id;

-- 4. the catalog, SUSPEND / RESUME, ALTER ... AS, lineage, DROP
SELECT table_name, refresh_mode, maintenance FROM materialized_table.materialized_tables
 WHERE table_name::text IN ('cust_totals', 'region_totals') ORDER BY 1;
SELECT materialized_table.show_create('cust_totals');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cit.cust_totals SUSPEND');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cit.cust_totals RESUME');
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE cit.cust_totals AS
    SELECT customer_id, count(*) AS orders, sum(amount) AS total, min(amount) AS smallest
      FROM cit.orders GROUP BY customer_id $$);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cit.cust_totals REFRESH');
SELECT count(*), count(smallest), mismatches('cust_totals') FROM cust_totals;
SELECT * FROM distribution WHERE table_name = 'cust_totals';
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE big_customers FRESHNESS = INTERVAL '2' HOUR
    AS SELECT customer_id, total FROM cit.cust_totals WHERE total > 3000 $$);
SELECT mismatches('big_customers');
SELECT upstream::text, upstream_kind, downstream::text FROM materialized_table.lineage
 WHERE downstream = 'big_customers'::regclass ORDER BY 1;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE cit.cust_totals');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE cit.big_customers');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE cit.cust_totals');
SELECT count(*) AS in_citus FROM pg_dist_partition WHERE logicalrelid::text = 'cust_totals';
-- its shards are gone from the workers too
SELECT nodeport > 0 AS worker, result FROM run_command_on_workers(
  $$SELECT count(*) FROM pg_class WHERE relname LIKE 'cust\_totals\_%'$$) ORDER BY nodeport;

-- 5. what is refused
-- RANGE, several columns, PARTITIONED BY with DISTRIBUTED BY
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE r1 DISTRIBUTED BY RANGE (customer_id) INTO 2 BUCKETS
    FRESHNESS = INTERVAL '1' HOUR AS SELECT customer_id, count(*) AS n FROM cit.orders GROUP BY 1 $$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE r2 DISTRIBUTED BY HASH (customer_id, ds) INTO 2 BUCKETS
    FRESHNESS = INTERVAL '1' HOUR AS SELECT customer_id, ds, count(*) AS n FROM cit.orders GROUP BY 1, 2 $$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE r3 PARTITIONED BY (ds) DISTRIBUTED BY HASH (customer_id) INTO 2 BUCKETS
    FRESHNESS = INTERVAL '1' HOUR AS SELECT customer_id, ds::text AS ds, count(*) AS n FROM cit.orders GROUP BY 1, 2 $$);
-- CONTINUOUS mode: a distributed table over a table of the coordinator
-- (see citus_continuous.sql, citus_partials.sql and citus_forwarded.sql
-- for those that work)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE r6 DISTRIBUTED BY HASH (region) FRESHNESS = INTERVAL '1' SECOND
    AS SELECT region, count(*) AS n FROM cit.regions GROUP BY 1 $$);
-- a FULL table over a distributed source and one of the coordinator's
-- alone (no node decodes its changes) cannot become CONTINUOUS either
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cit.region_totals SET FRESHNESS = INTERVAL ''1'' SECOND');
SELECT table_name, refresh_mode FROM materialized_table.materialized_tables
 WHERE table_name::text = 'region_totals';
-- nothing was left behind by the refused statements
SELECT count(*) FROM pg_class WHERE relnamespace = 'cit'::regnamespace AND relname ~ '^r[0-9]';
-- a CONTINUOUS table of the coordinator's own sources works as without Citus
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE managers FRESHNESS = INTERVAL '1' SECOND
    AS SELECT region, manager FROM cit.regions $$);
SELECT table_name, refresh_mode, maintenance FROM materialized_table.materialized_tables
 WHERE table_name::text = 'managers';
-- a table that a CONTINUOUS table follows cannot be distributed (its
-- changes would go to shards the worker does not follow); once nothing
-- CONTINUOUS reads it, it can
SELECT create_distributed_table('regions', 'region');
SELECT create_reference_table('regions');
SELECT count(*) AS in_citus FROM pg_dist_partition WHERE logicalrelid = 'regions'::regclass;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE cit.managers');
SELECT create_reference_table('regions');
SELECT count(*) AS in_citus FROM pg_dist_partition WHERE logicalrelid = 'regions'::regclass;
-- a FULL table reading it goes on (Citus copies its query view, a view of
-- regions, to the workers, where no materialized table owns it)
UPDATE regions SET manager = 'new' WHERE region = 'r1';
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cit.region_totals REFRESH');
SELECT mismatches('region_totals');
SELECT manager FROM region_totals WHERE region = 'r1';
-- while on the coordinator, where region_totals owns it, that view stays guarded
-- (its name, by the table's id, masked)
DO $$
BEGIN
    EXECUTE format('ALTER VIEW %s RENAME TO renamed',
                   (SELECT query_view::regclass FROM materialized_table_internal.mt_table
                     WHERE relid = 'cit.region_totals'::regclass));
EXCEPTION WHEN insufficient_privilege THEN
    RAISE WARNING '%', regexp_replace(SQLERRM, 'query_[0-9]+', 'query_N');
END
$$;

DROP SCHEMA cit CASCADE;
SELECT count(*) AS left_in_citus FROM pg_dist_partition WHERE logicalrelid::text LIKE 'cit.%';
RESET materialized_table.scheduled_refreshes;
