-- Deltas from every source of a join (the delta rule): a DELTAS join
-- whose groups come from a dimension two joins away (the orders of TPC-H
-- Q5: their rows name no group) is adjusted by the changed rows of each
-- source, also of two or three in one transaction (new orders with their
-- lines, deleted orders with their lines, an order moved to another
-- customer while its lines change and a customer moves), instead of being
-- recomputed; with other writers committing while the worker applies,
-- it stays right (test/load/join_sides_load.sh checks that such cycles
-- keep the rule), also when a writer that changed a source before a
-- batch's end commits between that end and the batch's apply.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_js
\set with_steps
\ir ../lib/tap_helpers.sql
SET search_path = tap_js, public;

CREATE TABLE nation (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE customer (id int PRIMARY KEY, nation_id int NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, status char(1) NOT NULL);
CREATE TABLE line (id int PRIMARY KEY, order_id int NOT NULL, qty int NOT NULL,
                   price numeric(10,2) NOT NULL);
INSERT INTO nation SELECT i, 'nation ' || i FROM generate_series(1, 5) i;
INSERT INTO customer SELECT i, 1 + i % 5 FROM generate_series(1, 100) i;
INSERT INTO orders SELECT i, 1 + i % 100, CASE WHEN i % 3 = 0 THEN 'F' ELSE 'O' END
  FROM generate_series(1, 2000) i;
INSERT INTO line SELECT i, 1 + i % 2000, 1 + i % 7, (i % 50) / 4.0 FROM generate_series(1, 8000) i;
ANALYZE nation, customer, orders, line;

SELECT plan(23);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_js.revenue FRESHNESS = INTERVAL '1' SECOND AS
    SELECT n.name, count(*) AS lines, sum(l.qty) AS qty, sum(l.price) AS price
      FROM tap_js.line l JOIN tap_js.orders o ON o.id = l.order_id
      JOIN tap_js.customer c ON c.id = o.customer_id JOIN tap_js.nation n ON n.id = c.nation_id
     GROUP BY n.name$$) \g /dev/null
SELECT isnt(wait_for($$SELECT synced FROM materialized_table_internal.continuous_state
                        WHERE relid = 'tap_js.revenue'::regclass$$, 20), NULL, 'the worker takes the table up');
SELECT matches(maintenance_detail, 'by each changed row of line and of orders, customer, nation',
               'every source of the join adjusts the groups')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_js.revenue'::regclass;

CALL step($$UPDATE tap_js.orders SET customer_id = customer_id % 100 + 1 WHERE id % 50 = 0$$);
SELECT isnt(converged(20), NULL, 'orders moved to other customers: converged');
SELECT is(mismatches('revenue'), 0::bigint, 'and equals its query');
SELECT is(cycles_since('revenue'), 'DELTAS', 'by deltas, not a recompute');

-- new orders with their lines, as TPC-H's RF1
CALL step($$INSERT INTO tap_js.orders SELECT i, 1 + i % 100, 'O' FROM generate_series(2001, 2100) i$$,
            $$INSERT INTO tap_js.line SELECT i, 2001 + i % 100, 1 + i % 5, i % 9 FROM generate_series(8001, 8300) i$$);
SELECT isnt(converged(20), NULL, 'new orders with their lines: converged');
SELECT is(mismatches('revenue'), 0::bigint, 'and equals its query');
SELECT is(cycles_since('revenue'), 'DELTAS', 'by deltas, not a recompute');

-- deleted orders with their lines, as RF2
CALL step($$DELETE FROM tap_js.line WHERE order_id % 40 = 7$$,
            $$DELETE FROM tap_js.orders WHERE id % 40 = 7$$);
SELECT isnt(converged(20), NULL, 'deleted orders with their lines: converged');
SELECT is(mismatches('revenue'), 0::bigint, 'and equals its query');
SELECT is(cycles_since('revenue'), 'DELTAS', 'by deltas, not a recompute');

-- an order moved while its lines' quantities change (adjustment rows of
-- line against changed rows of orders), and a customer moving nation
-- with a line added to one of its orders
CALL step($$UPDATE tap_js.line SET qty = qty + 10 WHERE order_id IN (11, 12, 13)$$,
            $$UPDATE tap_js.orders SET customer_id = 7 WHERE id IN (11, 12)$$,
            $$UPDATE tap_js.customer SET nation_id = 1 + nation_id % 5 WHERE id = 33$$,
            $$INSERT INTO tap_js.line VALUES (9001, 33, 2, 5.5)$$);
SELECT isnt(converged(20), NULL, 'changes of three sources in one transaction: converged');
SELECT is(mismatches('revenue'), 0::bigint, 'and equals its query');
SELECT is(cycles_since('revenue'), 'DELTAS', 'by deltas (every set of the three), not a recompute');

-- writers committing to the sources all the time: the worker counts those
-- that committed after a batch's end as running, and stays right
CREATE PROCEDURE writer(seconds float) LANGUAGE plpgsql AS $$
DECLARE
    stop timestamptz := clock_timestamp() + seconds * interval '1 second';
    k int;
BEGIN
    WHILE clock_timestamp() < stop LOOP
        k := 1 + (random() * 2100)::int;
        UPDATE tap_js.orders SET customer_id = 1 + (random() * 99)::int WHERE id = k;
        INSERT INTO tap_js.line VALUES (10000 + (random() * 1000000)::int, k, 1, 1)
            ON CONFLICT (id) DO UPDATE SET qty = tap_js.line.qty + 1;
        COMMIT;
    END LOOP;
END $$;
SELECT writer_connect('tap_js_w') \g /dev/null
SELECT dblink_send_query('tap_js_w', 'CALL tap_js.writer(6)') \g /dev/null
CALL writer(6);
SELECT is(status, 'CALL', 'the second writer ran') FROM dblink_get_result('tap_js_w') AS r(status text);
SELECT dblink_disconnect('tap_js_w') \g /dev/null
SELECT isnt(converged(30), NULL, 'under concurrent writers: converged');
SELECT is(mismatches('revenue'), 0::bigint, 'and equals its query');

-- a writer that changed a source before a batch's end and commits after
-- it, while the worker applies that batch: the batch's terms do not read
-- its change (it is counted when it is decoded, in the next batch).  The
-- worker is held between decoding and applying by_nation by paced, taken
-- up before it, whose adjustments take 3 seconds; meanwhile the slot holds
-- an xmin no newer than the writer's transaction (the rows it replaces are
-- read by those terms)
CREATE TABLE pace (id int PRIMARY KEY, v int NOT NULL);
CREATE FUNCTION slow(v int) RETURNS int IMMUTABLE LANGUAGE sql AS $$ SELECT v FROM pg_sleep(3) $$;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_js.paced FRESHNESS = INTERVAL '1' SECOND AS
    SELECT id % 2 AS g, count(*) AS n, sum(tap_js.slow(v)) AS s FROM tap_js.pace GROUP BY 1;
  CREATE MATERIALIZED TABLE tap_js.by_nation FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c.nation_id, count(*) AS orders, sum(o.id) AS ids
      FROM tap_js.orders o JOIN tap_js.customer c ON c.id = o.customer_id
     GROUP BY c.nation_id$$) \g /dev/null
SELECT isnt(wait_for($$SELECT count(*) = 2 AND bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN ('tap_js.paced'::regclass, 'tap_js.by_nation'::regclass)$$, 20),
            NULL, 'the worker takes paced and by_nation up');
-- (and is done with their first cycles)
SELECT pg_sleep(2) \g /dev/null
SELECT writer_connect('tap_js_late') \g /dev/null
SELECT dblink_exec('tap_js_late', 'BEGIN') \g /dev/null
SELECT dblink_exec('tap_js_late', 'UPDATE tap_js.customer SET nation_id = 1 + nation_id % 5 WHERE id = 44') \g /dev/null
BEGIN;
INSERT INTO orders VALUES (5000, 44, 'O');
INSERT INTO pace VALUES (1, 1);
COMMIT;
-- the worker decodes them, and adjusts paced (3 s) before by_nation
SELECT isnt(wait_for($$SELECT query = 'materialized_table: maintaining paced' FROM pg_stat_activity
                        WHERE pid = tap_js.worker_pid()$$, 20), NULL, 'the worker applies the batch');
SELECT ok(coalesce((SELECT age(s.xmin) >= age(w.xid)
                      FROM pg_replication_slots s,
                           dblink('tap_js_late', 'SELECT pg_current_xact_id()::xid') AS w(xid xid)
                     WHERE s.slot_name = slot_name()), false),
          'meanwhile the slot holds an xmin no newer than a transaction running when it was decoded');
SELECT dblink_exec('tap_js_late', 'COMMIT') \g /dev/null
SELECT dblink_disconnect('tap_js_late') \g /dev/null
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_js.paced') \g /dev/null
SELECT isnt(converged(30), NULL, 'a writer committing between a batch''s end and its apply: converged');
SELECT is(mismatches('by_nation'), 0::bigint, 'and equals its query: the writer''s change counted once');
SELECT isnt(wait_for($$SELECT xmin IS NULL FROM pg_replication_slots WHERE slot_name = tap_js.slot_name()$$, 10),
            NULL, 'once the batch is applied, the slot holds no xmin');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_js.revenue') \g /dev/null
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_js.by_nation') \g /dev/null
RESET search_path;
DROP SCHEMA tap_js CASCADE;
