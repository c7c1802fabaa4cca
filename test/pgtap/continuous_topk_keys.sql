-- CONTINUOUS tables of the first rows by an ORDER BY over queries kept by
-- keys (TPC-H Q2, Q18 and Q21 have such a LIMIT): a filter and projection,
-- groups of aggregates deltas do not keep, sorted by an aggregate the result
-- does not show, an IN subquery with HAVING, DISTINCT ON, OFFSET and WITH
-- TIES.  All the query's rows are kept in a hidden state; the top row
-- deleted is refilled from it, rows climb in and fall out -- and each table
-- holds exactly its query's rows, each cycle by keys, never by a recompute
-- of the whole query (each cycle's strategy in refresh_history; a
-- TRUNCATE, which recomputes, shows that a recompute would be seen).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_topk_keys
\set with_cycles
\ir ../lib/tap_helpers.sql
SET search_path = tap_topk_keys, public;

CREATE TABLE customers (id int PRIMARY KEY, region text NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, amount numeric(10,2) NOT NULL,
                     note text);
CREATE TABLE lines (order_id int NOT NULL, line int NOT NULL, qty int NOT NULL,
                    PRIMARY KEY (order_id, line));
INSERT INTO customers SELECT i, 'region ' || (i % 5) FROM generate_series(1, 300) i;
INSERT INTO orders SELECT i, 1 + (i * 7) % 300, (i % 89) + 0.25, 'note ' || (i % 13)
  FROM generate_series(1, 3000) i;
INSERT INTO lines SELECT o, l, 1 + (o * l) % 9 FROM generate_series(1, 3000) o, generate_series(1, 3) l;

-- the rows of a table's hidden state
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

SELECT plan(16);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_topk_keys.biggest FRESHNESS = INTERVAL '1' SECOND AS
    SELECT id, customer_id, amount FROM tap_topk_keys.orders
     WHERE note <> 'note 0' ORDER BY amount DESC, id LIMIT 5;
  CREATE MATERIALIZED TABLE tap_topk_keys.notes_by_variety FRESHNESS = INTERVAL '1' SECOND AS
    SELECT customer_id, string_agg(DISTINCT note, ',' ORDER BY note) AS notes
      FROM tap_topk_keys.orders GROUP BY customer_id
     ORDER BY count(DISTINCT amount) DESC, customer_id LIMIT 4 OFFSET 2;
  CREATE MATERIALIZED TABLE tap_topk_keys.large_orders FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c.region, o.id, o.amount FROM tap_topk_keys.orders o
      JOIN tap_topk_keys.customers c ON c.id = o.customer_id
     WHERE o.id IN (SELECT order_id FROM tap_topk_keys.lines GROUP BY order_id HAVING sum(qty) > 20)
     ORDER BY o.amount DESC, o.id LIMIT 6;
  CREATE MATERIALIZED TABLE tap_topk_keys.first_per_customer FRESHNESS = INTERVAL '1' SECOND AS
    SELECT DISTINCT ON (customer_id) customer_id, id, amount FROM tap_topk_keys.orders
     ORDER BY customer_id, amount DESC, id LIMIT 7;
  CREATE MATERIALIZED TABLE tap_topk_keys.top_ties FRESHNESS = INTERVAL '1' SECOND AS
    SELECT id, amount FROM tap_topk_keys.orders ORDER BY amount DESC FETCH FIRST 3 ROWS WITH TIES
$m$)$$, 'TopK tables over keys are created');
SELECT is((SELECT array_agg(t.maintenance || '/' || s.strategy ORDER BY t.table_name::text)
             FROM materialized_table.materialized_tables t
             JOIN materialized_table_internal.continuous_state s ON s.relid = t.table_name
            WHERE t.table_name IN (SELECT table_name FROM mine)),
          array_fill('INCREMENTAL/KEYS'::text, ARRAY[5]), 'each is kept by keys');
SELECT ok((SELECT bool_and(maintenance_detail LIKE '%all the query''s rows are kept in a hidden table, and the table is their first rows by its ORDER BY%')
             FROM materialized_table.materialized_tables WHERE table_name IN (SELECT table_name FROM mine)),
          'maintenance_detail says how');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN (SELECT table_name FROM tap_topk_keys.mine)$$, 30),
            NULL, 'the worker takes them up');
SELECT isnt(converged(20), NULL, 'every table equals its query');
SELECT is(state_rows('biggest'), (SELECT count(*) FROM orders WHERE note <> 'note 0'),
          'the state keeps every row of the query without its LIMIT');
INSERT INTO mark SELECT clock_timestamp();

-- a row far down climbs to the top
UPDATE orders SET amount = 999 WHERE id = 1234;
INSERT INTO lines VALUES (1234, 4, 30);
SELECT isnt(converged(20), NULL, 'a row climbing into the top comes in');
SELECT is((SELECT id FROM biggest ORDER BY amount DESC LIMIT 1), 1234, 'and leads');

-- the top row goes: the next ones refill the top
DELETE FROM lines WHERE order_id = 1234;
DELETE FROM orders WHERE id = 1234;
SELECT isnt(converged(20), NULL, 'the top row deleted, the next ones refill the top');
SELECT ok((SELECT count(*) = 5 FROM biggest) AND (SELECT count(*) = 6 FROM large_orders),
          'the tops are full');

-- mixed changes of every source, rows falling out, ties, a customer moving
UPDATE orders SET amount = amount + 40 WHERE id % 97 = 0;
UPDATE orders SET customer_id = 1 + (customer_id + 11) % 300 WHERE id % 53 = 0;
UPDATE orders SET note = 'note 0' WHERE id IN (SELECT id FROM biggest LIMIT 2);
UPDATE customers SET region = 'region 9' WHERE id IN (SELECT customer_id FROM orders WHERE id IN (SELECT id FROM large_orders));
DELETE FROM orders WHERE id % 31 = 0;
UPDATE lines SET qty = qty + 5 WHERE order_id % 41 = 0;
INSERT INTO orders SELECT 5000 + i, i, 88.25, 'note 3' FROM generate_series(1, 20) i;
INSERT INTO orders SELECT 6000 + i, i, 2000, 'note 5' FROM generate_series(1, 4) i;
SELECT isnt(converged(20), NULL, 'after mixed changes of all sources every table equals its query');
SELECT cmp_ok((SELECT count(*) FROM top_ties), '=', 4::bigint, 'WITH TIES keeps its ties (four rows tie for the top three)');

SELECT is(cycles('FULL'), 0::bigint, 'no table was recomputed whole');
SELECT cmp_ok(cycles('KEYS'), '>=', 12::bigint, 'the tables applied their changes by keys, in several cycles');

-- positive control: a TRUNCATE recomputes, and says so
TRUNCATE lines;
INSERT INTO lines VALUES (7, 1, 25), (8, 1, 21);
SELECT isnt(converged(20), NULL, 'after a TRUNCATE and new rows the tables follow');
SELECT cmp_ok(cycles('FULL'), '>', 0::bigint, 'a recompute would have been seen');

SELECT * FROM finish();
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM mine \g /dev/null
DROP SCHEMA tap_topk_keys CASCADE;
