-- CONTINUOUS tables over LATERAL subqueries that flattening cannot merge
-- (the last order of each customer by ORDER BY ... LIMIT 1, an aggregate
-- per row): a change of what the subquery reads names the keys of the
-- rows its correlation equality ties it to (looked up where the outer
-- column is no key), as for a subquery in an expression.  Each table
-- holds exactly its query's rows after new last orders, the last one
-- deleted (the next one takes its place), orders moved between customers
-- and customers changed; every cycle by keys (refresh_history.strategy).
-- Control: a subquery correlated by no equality recomputes.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_lateral
\set with_cycles
\ir ../lib/tap_helpers.sql
SET search_path = tap_lateral, public;

CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, region text NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, ts timestamp NOT NULL,
                     amount numeric(10, 2) NOT NULL);
CREATE INDEX ON orders (customer_id, ts);
INSERT INTO customers SELECT i, 'c' || i, 'region ' || (i % 4) FROM generate_series(1, 300) i;
-- (a recompute of everything costs far more than one of a few keys, so
-- that the measured costs choose keys however loaded the machine is)
INSERT INTO orders SELECT i, 1 + i % 290, timestamp '2026-01-01' + i * interval '1 hour', i % 97
  FROM generate_series(1, 60000) i;

SELECT plan(11);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_lateral.last_orders FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c.id, c.name, o.id AS order_id, o.amount
      FROM tap_lateral.customers c
      LEFT JOIN LATERAL (SELECT o.id, o.amount FROM tap_lateral.orders o
                          WHERE o.customer_id = c.id ORDER BY o.ts DESC, o.id DESC LIMIT 1) o ON true;
  CREATE MATERIALIZED TABLE tap_lateral.per_region FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c.region, x.n, x.total
      FROM tap_lateral.customers c,
           LATERAL (SELECT count(*) AS n, sum(o.amount) AS total FROM tap_lateral.orders o
                     WHERE o.customer_id = c.id) x;
  CREATE MATERIALIZED TABLE tap_lateral.dearer FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c.id, x.n
      FROM tap_lateral.customers c,
           LATERAL (SELECT count(*) AS n FROM tap_lateral.orders o
                     WHERE o.amount > c.id AND o.customer_id < 5) x
     WHERE c.id < 20
$m$)$$, 'the tables are created');
SELECT is((SELECT array_agg(t.maintenance ORDER BY t.table_name::text)
             FROM materialized_table.materialized_tables t WHERE t.table_name IN (SELECT table_name FROM mine)),
          array_fill('INCREMENTAL'::text, ARRAY[3]), 'each is incremental');
SELECT is((SELECT maintenance_detail FROM materialized_table.materialized_tables WHERE table_name = 'last_orders'::regclass),
          'rows are recomputed for the changed values of id; a change of orders, read in a subquery correlated on id, recomputes the rows of its values',
          'last_orders: a change of orders names the customer''s key');
SELECT matches((SELECT maintenance_detail FROM materialized_table.materialized_tables WHERE table_name = 'dearer'::regclass),
               'a change of orders recomputes the whole table',
               'dearer (control): correlated by no equality, orders recomputes');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN (SELECT table_name FROM tap_lateral.mine)$$, 30),
            NULL, 'the worker takes them up');
SELECT isnt(converged(20), NULL, 'every table equals its query');
INSERT INTO mark SELECT clock_timestamp();

-- new last orders; a last order deleted; orders moved; amounts changed
INSERT INTO orders VALUES (70001, 3, '2040-01-01', 5), (70002, 4, '2040-01-02', 6), (70003, 299, '2040-01-01', 1);
DELETE FROM orders WHERE id = (SELECT id FROM orders WHERE customer_id = 10 ORDER BY ts DESC, id DESC LIMIT 1);
UPDATE orders SET customer_id = 11 WHERE id IN (100, 200);
UPDATE orders SET amount = amount + 1 WHERE customer_id IN (20, 21);
SELECT isnt(converged(20), NULL, 'after changes of orders every table equals its query');
UPDATE customers SET name = 'renamed', region = 'region 9' WHERE id IN (3, 30);
SELECT isnt(converged(20), NULL, 'after changes of customers every table equals its query');
SELECT is(cycles_of('last_orders', 'FULL') + cycles_of('per_region', 'FULL'), 0::bigint,
          'the keyed tables applied every change by keys');
SELECT cmp_ok(cycles('KEYS'), '>=', 4::bigint, 'they ran cycles by keys');
SELECT cmp_ok(cycles_of('dearer', 'FULL'), '>', 0::bigint,
              'the control was recomputed (a recompute would have been seen)');

SELECT * FROM finish();
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM mine \g /dev/null
DROP SCHEMA tap_lateral CASCADE;
