-- CONTINUOUS tables of the first groups by an ORDER BY (TopK, as TPC-H Q3
-- and Q10): LIMIT, OFFSET, an ORDER BY of aggregates not in the result,
-- WITH TIES, over one source and over a join.  Groups climb into the top
-- and fall out of it, the top group is deleted and the next ones refill
-- it, a changed customer moves its groups -- and each table holds exactly
-- its query's rows, without a recompute of the whole query (each cycle's
-- strategy in refresh_history; a TRUNCATE, which recomputes, shows that a
-- recompute would be seen).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_topk
\set with_cycles
\ir ../lib/tap_helpers.sql
SET search_path = tap_topk, public;

CREATE TABLE customers (id int PRIMARY KEY, region text NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, amount numeric(10,2) NOT NULL);
INSERT INTO customers SELECT i, 'region ' || (i % 5) FROM generate_series(1, 300) i;
INSERT INTO orders SELECT i, 1 + (i * 7) % 300, (i % 89) + 0.25 FROM generate_series(1, 6000) i;


SELECT plan(12);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_topk.top_customers FRESHNESS = INTERVAL '1' SECOND AS
    SELECT customer_id, sum(amount) AS revenue, count(*) AS n FROM tap_topk.orders
     GROUP BY customer_id ORDER BY revenue DESC, customer_id LIMIT 10;
  CREATE MATERIALIZED TABLE tap_topk.next_customers FRESHNESS = INTERVAL '1' SECOND AS
    SELECT customer_id FROM tap_topk.orders
     GROUP BY customer_id ORDER BY count(*) DESC, sum(amount), customer_id LIMIT 5 OFFSET 3;
  CREATE MATERIALIZED TABLE tap_topk.top_ties FRESHNESS = INTERVAL '1' SECOND AS
    SELECT customer_id % 7 AS bucket, count(*) AS n FROM tap_topk.orders
     GROUP BY customer_id % 7 ORDER BY n DESC FETCH FIRST 2 ROWS WITH TIES;
  CREATE MATERIALIZED TABLE tap_topk.top_pairs FRESHNESS = INTERVAL '1' SECOND AS
    SELECT o.customer_id, c.region, sum(o.amount) AS revenue
      FROM tap_topk.orders o JOIN tap_topk.customers c ON c.id = o.customer_id
     GROUP BY o.customer_id, c.region ORDER BY revenue DESC, o.customer_id LIMIT 8
$m$)$$, 'TopK tables are created');
SELECT is((SELECT array_agg(strategy ORDER BY relid::regclass::text)
             FROM materialized_table_internal.continuous_state
            WHERE relid IN (SELECT table_name FROM mine)),
          ARRAY['DELTAS', 'DELTAS', 'DELTAS', 'DELTAS'], 'each is kept by deltas');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN (SELECT table_name FROM tap_topk.mine)$$, 30),
            NULL, 'the worker takes them up');
INSERT INTO mark SELECT clock_timestamp();

-- a customer far down climbs to the top
INSERT INTO orders SELECT 10000 + i, 299, 500 FROM generate_series(1, 10) i;
SELECT isnt(converged(20), NULL, 'a group climbing into the top comes in');
SELECT is((SELECT customer_id FROM top_customers ORDER BY revenue DESC LIMIT 1), 299,
          'and leads');

-- the top group goes: the next ones refill the top
DELETE FROM orders WHERE customer_id = (SELECT customer_id FROM top_customers ORDER BY revenue DESC LIMIT 1);
SELECT isnt(converged(20), NULL, 'the top group deleted, the next ones refill the top');

-- ties, the OFFSET window, a customer moving region, groups falling out
UPDATE orders SET amount = amount + 40 WHERE id % 97 = 0;
UPDATE orders SET customer_id = 1 + (customer_id + 11) % 300 WHERE id % 53 = 0;
UPDATE customers SET region = 'region 9' WHERE id IN (SELECT customer_id FROM top_pairs LIMIT 2);
DELETE FROM orders WHERE id % 31 = 0;
SELECT isnt(converged(20), NULL, 'after mixed changes of both sources every table equals its query');
SELECT cmp_ok((SELECT count(*) FROM top_ties), '>=', 2::bigint, 'WITH TIES keeps its ties');

SELECT is(cycles('FULL'), 0::bigint, 'no table was recomputed whole');
SELECT cmp_ok(cycles('DELTAS'), '>=', 12::bigint, 'every table applied its changes by deltas, in several cycles');

-- positive control: a TRUNCATE recomputes, and says so
TRUNCATE orders;
INSERT INTO orders VALUES (1, 1, 5), (2, 2, 7);
SELECT isnt(converged(20), NULL, 'after a TRUNCATE and new rows the tables follow');
SELECT cmp_ok(cycles('FULL'), '>', 0::bigint, 'a recompute would have been seen');

SELECT * FROM finish();
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM mine \g /dev/null
DROP SCHEMA tap_topk CASCADE;
