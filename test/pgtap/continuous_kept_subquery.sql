-- CONTINUOUS tables whose FROM is one subquery that cannot be merged into
-- the query (it aggregates): TPC-H Q13's distribution of order counts over
-- a LEFT JOIN, a window over grouped sums of a join, the first rows of a
-- grouped subquery, and a WITH query read twice (TPC-H Q15's shape).  The subquery's rows are kept by keys in a hidden
-- state and the table computed from them: each table holds exactly its
-- query's rows after changes of every source, each cycle by keys (each
-- cycle's strategy in refresh_history; a TRUNCATE, which recomputes, shows
-- that a recompute would be seen).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_kept_sub
\set with_cycles
\ir ../lib/tap_helpers.sql
SET search_path = tap_kept_sub, public;

CREATE TABLE customers (id int PRIMARY KEY, region text NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, amount numeric(10,2) NOT NULL,
                     comment text NOT NULL);
CREATE INDEX ON orders (customer_id);
INSERT INTO customers SELECT i, 'region ' || (i % 5) FROM generate_series(1, 400) i;
INSERT INTO orders SELECT i, 1 + (i * 7) % 300, (i % 89) + 0.25,
                          CASE WHEN i % 17 = 0 THEN 'special requests' ELSE 'ok' END
  FROM generate_series(1, 4000) i;

CREATE FUNCTION state_rows(t regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM materialized_table_internal.%I',
                 'state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = t))
     INTO n;
  RETURN n;
END
$$;

SELECT plan(15);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_kept_sub.order_counts FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c_count, count(*) AS custdist
      FROM (SELECT c.id, count(o.id) FROM tap_kept_sub.customers c
              LEFT JOIN tap_kept_sub.orders o ON o.customer_id = c.id AND o.comment NOT LIKE '%special%'
             GROUP BY c.id) AS c_orders (c_custkey, c_count)
     GROUP BY c_count;
  CREATE MATERIALIZED TABLE tap_kept_sub.region_ranks FRESHNESS = INTERVAL '1' SECOND AS
    SELECT region, total, rank() OVER (ORDER BY total DESC) AS place
      FROM (SELECT c.region, sum(o.amount) AS total FROM tap_kept_sub.orders o
              JOIN tap_kept_sub.customers c ON c.id = o.customer_id GROUP BY c.region) r;
  CREATE MATERIALIZED TABLE tap_kept_sub.busiest FRESHNESS = INTERVAL '1' SECOND AS
    SELECT customer_id, n FROM (SELECT customer_id, count(*) AS n FROM tap_kept_sub.orders GROUP BY customer_id) x
     ORDER BY n DESC, customer_id LIMIT 5;
  CREATE MATERIALIZED TABLE tap_kept_sub.near_busiest FRESHNESS = INTERVAL '1' SECOND AS
    WITH per_customer AS (SELECT customer_id, count(*) AS n FROM tap_kept_sub.orders GROUP BY customer_id)
    SELECT p.customer_id, p.n FROM per_customer p WHERE p.n >= (SELECT max(n) - 2 FROM per_customer)
$m$)$$, 'the tables are created');
SELECT is((SELECT array_agg(t.maintenance || '/' || s.strategy ORDER BY t.table_name::text)
             FROM materialized_table.materialized_tables t
             JOIN materialized_table_internal.continuous_state s ON s.relid = t.table_name
            WHERE t.table_name IN (SELECT table_name FROM mine)),
          array_fill('INCREMENTAL/KEYS'::text, ARRAY[4]), 'each is kept by keys');
SELECT is((SELECT maintenance_detail FROM materialized_table.materialized_tables WHERE table_name = 'order_counts'::regclass),
          'the rows of its subquery in FROM are kept in a hidden table, recomputed for the changed values of c_custkey, and the table is computed from them',
          'maintenance_detail says how, in the names the query gives the subquery''s columns');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN (SELECT table_name FROM tap_kept_sub.mine)$$, 30),
            NULL, 'the worker takes them up');
SELECT isnt(converged(20), NULL, 'every table equals its query');
SELECT is(state_rows('order_counts'), (SELECT count(*) FROM customers),
          'the state keeps a row of the subquery for each customer');
INSERT INTO mark SELECT clock_timestamp();

-- orders move, go and come; a customer changes region; new customers
UPDATE orders SET customer_id = 350 WHERE id % 50 = 0;
SELECT isnt(converged(20), NULL, 'orders moved to a customer without orders');
DELETE FROM orders WHERE customer_id = (SELECT customer_id FROM busiest ORDER BY n DESC, customer_id LIMIT 1);
SELECT isnt(converged(20), NULL, 'the busiest customer''s orders deleted: the next one comes in');
UPDATE orders SET comment = 'special requests' WHERE id % 23 = 0;
UPDATE customers SET region = 'region 7' WHERE id % 9 = 0;
INSERT INTO customers SELECT i, 'region 8' FROM generate_series(401, 420) i;
INSERT INTO orders SELECT 5000 + i, 400 + i, 1000, 'ok' FROM generate_series(1, 20) i;
SELECT isnt(converged(20), NULL, 'after changes of both sources every table equals its query');

SELECT is(cycles('FULL'), 0::bigint, 'no table was recomputed whole');
SELECT cmp_ok(cycles('KEYS'), '>=', 6::bigint, 'the tables applied their changes by keys');

-- positive control: a TRUNCATE recomputes, and says so
TRUNCATE orders;
INSERT INTO orders VALUES (1, 1, 5, 'ok'), (2, 2, 7, 'ok');
SELECT isnt(converged(20), NULL, 'after a TRUNCATE and new rows the tables follow');
SELECT cmp_ok(cycles('FULL'), '>', 0::bigint, 'a recompute would have been seen');

-- the table is computed from the state as its owner: one who may no
-- longer read a source the query reads beside the WITH query gets the
-- cycle refused, not the rows
CREATE ROLE regress_kept_owner;
GRANT USAGE, CREATE ON SCHEMA tap_kept_sub TO regress_kept_owner;
GRANT SELECT ON orders, customers TO regress_kept_owner;
SET ROLE regress_kept_owner;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_kept_sub.owned FRESHNESS = INTERVAL '1' SECOND AS
    WITH x AS (SELECT customer_id, count(*) AS n FROM tap_kept_sub.orders GROUP BY customer_id)
    SELECT c.region, x.n FROM x JOIN tap_kept_sub.customers c ON c.id = x.customer_id
     WHERE x.n = (SELECT max(n) FROM x)$$) \g /dev/null
RESET ROLE;
SELECT isnt(wait_for($$SELECT synced FROM materialized_table_internal.continuous_state
                        WHERE relid = 'tap_kept_sub.owned'::regclass$$, 30),
            NULL, 'a table of another owner is taken up');
REVOKE SELECT ON customers FROM regress_kept_owner;
INSERT INTO orders VALUES (3, 2, 9, 'ok');
SELECT isnt(wait_for($$SELECT count(*) > 0 FROM materialized_table.refresh_history
                        WHERE table_name = 'tap_kept_sub.owned'::regclass AND status = 'FAILED'
                          AND error LIKE '%permission denied for table customers%'$$, 30),
            NULL, 'without the right to read a source, its cycle is refused');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_kept_sub.owned') \g /dev/null

SELECT * FROM finish();
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM mine \g /dev/null
DROP SCHEMA tap_kept_sub CASCADE;
DROP ROLE regress_kept_owner;
