-- "key IN (SELECT x ...)" with the changed keys carried into the subquery:
-- a cycle that recomputes the rows of some values of a key that an IN
-- subquery tests also filters the subquery by them (TPC-H Q18: the orders
-- whose lines sum over a threshold, for the changed orders only).  Checked
-- here: the tables stay equal to their queries whatever the change --
-- groups crossing the HAVING threshold both ways, orders and lines added
-- and removed, a subquery grouped by more than the key, one not grouped,
-- one whose output is an aggregate (not carried), kept rows under a LIMIT,
-- and a batch whose changes name two keys at once (not carried: the other
-- key's rows need the whole subquery).  test/bench/tpch.sh measures what
-- it saves (docs/benchmarks.md).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_inp
\set with_cycles
\ir ../lib/tap_helpers.sql
SET search_path = tap_inp, public;

CREATE TABLE customers (id int PRIMARY KEY, region text NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, cust int NOT NULL REFERENCES customers);
CREATE TABLE lines (order_id int NOT NULL, n int NOT NULL, qty int NOT NULL, tag text NOT NULL,
                    PRIMARY KEY (order_id, n));
INSERT INTO customers SELECT i, 'region ' || i % 4 FROM generate_series(1, 50) i;
INSERT INTO orders SELECT i, 1 + i % 50 FROM generate_series(1, 1000) i;
INSERT INTO lines SELECT o, n, (o * 7 + n * 3) % 11, 'tag ' || n % 2
  FROM generate_series(1, 1000) o, generate_series(1, 4) n;
ANALYZE customers, orders, lines;

SELECT plan(11);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_inp.big FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c.id AS cust, c.region, o.id, sum(l.qty) AS qty
      FROM tap_inp.customers c, tap_inp.orders o, tap_inp.lines l
     WHERE o.id IN (SELECT order_id FROM tap_inp.lines GROUP BY order_id HAVING sum(qty) > 24)
       AND c.id = o.cust AND l.order_id = o.id
     GROUP BY c.id, c.region, o.id;
  CREATE MATERIALIZED TABLE tap_inp.big_top FRESHNESS = INTERVAL '1' SECOND AS
    SELECT o.id, o.cust, sum(l.qty) AS qty
      FROM tap_inp.orders o JOIN tap_inp.lines l ON l.order_id = o.id
     WHERE o.id IN (SELECT order_id FROM tap_inp.lines GROUP BY order_id HAVING sum(qty) > 24)
     GROUP BY o.id, o.cust ORDER BY qty DESC, o.id LIMIT 5;
  CREATE MATERIALIZED TABLE tap_inp.tagged FRESHNESS = INTERVAL '1' SECOND AS
    SELECT o.id, o.cust FROM tap_inp.orders o
     WHERE o.id IN (SELECT order_id FROM tap_inp.lines GROUP BY order_id, tag HAVING sum(qty) > 15);
  CREATE MATERIALIZED TABLE tap_inp.heavy FRESHNESS = INTERVAL '1' SECOND AS
    SELECT o.id, o.cust FROM tap_inp.orders o
     WHERE o.id IN (SELECT order_id FROM tap_inp.lines WHERE qty >= 10);
  CREATE MATERIALIZED TABLE tap_inp.last_of_tag FRESHNESS = INTERVAL '1' SECOND AS
    SELECT o.id, o.cust FROM tap_inp.orders o
     WHERE o.id IN (SELECT max(order_id) FROM tap_inp.lines GROUP BY tag, n)
$m$)$$, 'tables whose key an IN subquery tests are created');
SELECT is((SELECT array_agg(m.maintenance || '/' || s.strategy ORDER BY m.table_name::text)
             FROM materialized_table.materialized_tables m
             JOIN materialized_table_internal.continuous_state s ON s.relid = m.table_name
            WHERE m.table_name IN (SELECT table_name FROM mine)),
          ARRAY['INCREMENTAL/KEYS', 'INCREMENTAL/KEYS', 'INCREMENTAL/KEYS', 'INCREMENTAL/KEYS', 'INCREMENTAL/KEYS'],
          'all kept by keys');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN (SELECT table_name FROM tap_inp.mine)$$, 30),
            NULL, 'the worker takes them up');
INSERT INTO mark SELECT clock_timestamp();

-- orders crossing the thresholds both ways
UPDATE lines SET qty = qty + 6 WHERE order_id % 37 = 0;
UPDATE lines SET qty = 0 WHERE order_id % 41 = 0 AND n < 3;
SELECT isnt(converged(20), NULL, 'groups crossing the HAVING threshold both ways');
-- orders and their lines added, lines and orders removed
INSERT INTO orders SELECT 2000 + i, 1 + i % 50 FROM generate_series(1, 20) i;
INSERT INTO lines SELECT 2000 + i, n, 10, 'tag 1' FROM generate_series(1, 20) i, generate_series(1, 3) n;
DELETE FROM lines WHERE order_id % 43 = 0 AND n = 4;
DELETE FROM lines WHERE order_id IN (SELECT id FROM orders WHERE id % 47 = 0);
DELETE FROM orders WHERE id % 47 = 0;
SELECT isnt(converged(20), NULL, 'orders and lines added and removed');
-- one batch naming two keys of big: the customers' and the orders'
BEGIN;
UPDATE customers SET region = 'region 9' WHERE id % 7 = 0;
UPDATE lines SET qty = qty + 9 WHERE order_id % 53 = 0;
COMMIT;
SELECT isnt(converged(20), NULL, 'a batch whose changes name two keys');

SELECT is((SELECT array_agg(table_name::text ORDER BY table_name::text) FROM mine
            WHERE table_name <> 'last_of_tag'::regclass AND cycles_of(table_name, 'KEYS') = 0),
          NULL, 'every table whose IN subquery names keys applied changes by keys');
-- a subquery whose output is an aggregate names no key: recomputed
SELECT ok(cycles_of('last_of_tag', 'FULL') > 0, 'a change of what an IN of an aggregate reads recomputes');
SELECT is((SELECT array_agg(table_name::text ORDER BY table_name::text)
             FROM materialized_table.materialized_tables
            WHERE table_name IN (SELECT table_name FROM mine)
              AND maintenance_detail LIKE '%carried into the IN subquery%'),
          ARRAY['big', 'big_top', 'heavy', 'tagged'],
          'maintenance_detail says where the keys are carried into the IN subquery, and only there');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');
SELECT ok((SELECT count(*) FROM big) > 0 AND (SELECT count(*) FROM tagged) > 0 AND
          (SELECT count(*) FROM heavy) > 0 AND (SELECT count(*) FROM last_of_tag) > 0 AND
          (SELECT count(*) FROM big_top) = 5,
          'the tables are not empty');

SELECT * FROM finish();
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM mine \g /dev/null
RESET search_path;
DROP SCHEMA tap_inp CASCADE;
