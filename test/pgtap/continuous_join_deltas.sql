-- CONTINUOUS tables kept by deltas through a join: a changed order adjusts
-- its group through its customer as it is; a changed customer recomputes
-- the groups of its old and new values; both in one transaction, rows
-- moving to and from a NULL group, an order before its customer, a deleted
-- customer, work kept while suspended, and a concurrent load on both
-- sources all converge to the query; the baselines of recomputed groups
-- are forgotten once decoding has passed them.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_jd
\set with_src
\ir ../lib/tap_helpers.sql
SET search_path = tap_jd, public;

CREATE TABLE customers (id int PRIMARY KEY, region text);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, ds date NOT NULL,
                     amount numeric(10,2));
INSERT INTO customers SELECT i, 'region ' || (i % 5) FROM generate_series(1, 200) i;
INSERT INTO orders SELECT i, 1 + (i * 13) % 200, date '2024-01-01' + i % 10,
                          CASE WHEN i % 17 > 0 THEN (i % 50) / 4.0 END
  FROM generate_series(1, 5000) i;

-- one transaction's changes of both sources, for the helpers' writer
-- (which also changes src, read by no table here)
CREATE FUNCTION change_both() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    k int := 1 + (random() * 6000)::int;
BEGIN
    INSERT INTO tap_jd.orders VALUES (k, 1 + k % 230, date '2024-01-01' + k % 12, k % 40)
        ON CONFLICT (id) DO UPDATE SET amount = excluded.amount + 1;
    UPDATE tap_jd.orders SET customer_id = 1 + (customer_id + 7) % 230
     WHERE id = 1 + (random() * 6000)::int;
    DELETE FROM tap_jd.orders WHERE id = 1 + (random() * 6000)::int;
    IF random() < 0.2 THEN
        k := 1 + (random() * 230)::int;
        INSERT INTO tap_jd.customers VALUES (k, 'region ' || k % 7)
            ON CONFLICT (id) DO UPDATE SET region = 'region ' || (random() * 7)::int;
    END IF;
END $$;

SELECT plan(15);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_jd.by_day_region FRESHNESS = INTERVAL '1' SECOND AS
    SELECT o.ds, c.region, count(*) AS n, sum(o.amount) AS total, avg(o.amount) AS average,
           count(o.amount) AS amounts
      FROM tap_jd.orders o JOIN tap_jd.customers c ON c.id = o.customer_id GROUP BY o.ds, c.region;
  CREATE MATERIALIZED TABLE tap_jd.by_region FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c.region, count(*) AS n, sum(o.amount) AS total
      FROM tap_jd.orders o, tap_jd.customers c WHERE c.id = o.customer_id AND o.amount > 2
     GROUP BY c.region;
  CREATE MATERIALIZED TABLE tap_jd.region_pairs FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c1.region AS from_region, c2.region AS to_region, count(*) AS n, sum(o.amount) AS total
      FROM tap_jd.orders o JOIN tap_jd.customers c1 ON c1.id = o.customer_id
      JOIN tap_jd.customers c2 ON c2.id = 1 + o.customer_id % 200
     GROUP BY c1.region, c2.region;
  CREATE MATERIALIZED TABLE tap_jd.sub_profit FRESHNESS = INTERVAL '1' SECOND AS
    SELECT x.region, x.d, count(*) AS n, sum(x.net) AS net
      FROM (SELECT c.region, extract(day FROM o.ds) AS d, o.amount - 1 AS net
              FROM tap_jd.orders o, tap_jd.customers c WHERE c.id = o.customer_id) AS x
     GROUP BY x.region, x.d;
  CREATE MATERIALIZED TABLE tap_jd.sub_rows FRESHNESS = INTERVAL '1' SECOND AS
    SELECT x.id, x.region FROM tap_jd.customers c2
      JOIN (SELECT o.id, o.customer_id, c.region FROM tap_jd.orders o JOIN tap_jd.customers c ON c.id = o.customer_id
             WHERE o.amount > 5) x ON x.customer_id = c2.id
$m$)$$, 'aggregates over a join are created');
SELECT is((SELECT array_agg(strategy ORDER BY relid::regclass::text)
             FROM materialized_table_internal.continuous_state
            WHERE relid IN ('by_day_region'::regclass, 'by_region'::regclass, 'region_pairs'::regclass,
                            'sub_profit'::regclass, 'sub_rows'::regclass)),
          ARRAY['DELTAS', 'DELTAS', 'DELTAS', 'DELTAS', 'KEYS'],
          'kept by deltas through the join, also with customers read twice (orders adjust) and through a subquery in FROM; the rows of a joined subquery by keys');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN ('tap_jd.by_day_region'::regclass, 'tap_jd.by_region'::regclass,
                                        'tap_jd.region_pairs'::regclass, 'tap_jd.sub_profit'::regclass,
                                        'tap_jd.sub_rows'::regclass)$$, 30),
            NULL, 'the worker takes them up');

UPDATE orders SET amount = amount + 3 WHERE id IN (7, 8, 9);
SELECT isnt(converged(20), NULL, 'changed orders adjust their groups');

BEGIN;
UPDATE customers SET region = 'region 9' WHERE id = 8;
INSERT INTO orders VALUES (5001, 8, '2024-01-03', 5), (5002, 9, '2024-01-04', 6);
COMMIT;
SELECT isnt(converged(20), NULL, 'a customer moving to a new region with new orders in the same transaction');

UPDATE customers SET region = NULL WHERE id IN (9, 10);
SELECT isnt(converged(20), NULL, 'customers moving to a NULL region (a NULL group)');
UPDATE customers SET region = 'region 2' WHERE id = 9;
DELETE FROM orders WHERE customer_id = 10 AND id % 2 = 0;
SELECT isnt(converged(20), NULL, 'and back, and orders leaving the NULL group');

INSERT INTO orders VALUES (5003, 500, '2024-01-05', 7);
SELECT pg_sleep(1.5) \g /dev/null
INSERT INTO customers VALUES (500, 'region 1');
DELETE FROM customers WHERE id = 11;
SELECT isnt(converged(20), NULL, 'an order before its customer, a customer deleted');

SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_jd.by_day_region SUSPEND') \g /dev/null
UPDATE customers SET region = 'region 3' WHERE id BETWEEN 20 AND 25;
UPDATE orders SET amount = amount * 2 WHERE id % 100 = 0;
SELECT pg_sleep(2) \g /dev/null
SELECT ok(mismatches('by_day_region') > 0, 'a suspended table holds still');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_jd.by_day_region RESUME') \g /dev/null
SELECT isnt(converged(20), NULL, 'resumed, it applies the work kept meanwhile');

CREATE TABLE mark AS SELECT clock_timestamp() AS at;
SELECT writer_connect('tap_jd_w') \g /dev/null
SELECT dblink_send_query('tap_jd_w', $$CALL tap_jd.writer(8, 'SELECT tap_jd.change_both()')$$) \g /dev/null
SELECT pg_sleep(4) \g /dev/null
SELECT ok(EXISTS (SELECT FROM materialized_table.refresh_history
                   WHERE table_name = 'by_day_region'::regclass AND trigger = 'CONTINUOUS'
                     AND started_at > (SELECT at FROM mark)),
          'cycles run during the load');
SELECT * FROM dblink_get_result('tap_jd_w') AS r(x text) \g /dev/null
SELECT dblink_disconnect('tap_jd_w') \g /dev/null
SELECT isnt(converged(30), NULL, 'after a load changing orders and customers at once, both converge');

SELECT isnt(wait_for($$SELECT NOT EXISTS (SELECT FROM materialized_table_internal.continuous_baseline
                                           WHERE relid IN ('tap_jd.by_day_region'::regclass,
                                                           'tap_jd.by_region'::regclass))$$, 20),
            NULL, 'the baselines of recomputed groups are forgotten');
SELECT is((SELECT count(*) FROM materialized_table.refresh_history
            WHERE status = 'FAILED' AND table_name IN ('by_day_region'::regclass, 'by_region'::regclass)),
          0::bigint, 'no cycle failed');

-- (a cycle may also have chosen to recompute, as the cost model allows)
SELECT ok((SELECT array_agg(DISTINCT h.strategy)
             FROM materialized_table.refresh_history h
            WHERE h.table_name IN ('sub_profit'::regclass, 'sub_rows'::regclass)
              AND h.trigger = 'CONTINUOUS' AND h.rows > 0) @> ARRAY['DELTAS', 'KEYS'],
          'the history says how each cycle computed its rows');

SELECT * FROM finish();
SELECT materialized_table.execute($$
  DROP MATERIALIZED TABLE tap_jd.by_day_region; DROP MATERIALIZED TABLE tap_jd.by_region$$) \g /dev/null
RESET search_path;
DROP SCHEMA tap_jd CASCADE;
