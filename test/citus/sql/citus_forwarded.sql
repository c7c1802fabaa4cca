-- CONTINUOUS materialized tables of the coordinator over Citus tables
-- that partial aggregates cannot keep (a coordinator and two workers,
-- started by test/citus/run.sh): not aggregates, joins that are not
-- co-located, aggregates that do not combine.  For each shard of each
-- source, the node that holds it keeps a materialized table that holds no
-- rows: each of its applies logs the key values its changes name; the
-- coordinator's worker takes them from every node twice a second and
-- recomputes the table's rows of those keys.
SET client_min_messages = warning;
SET materialized_table.scheduled_refreshes = off;
CREATE SCHEMA cf;
SET search_path = cf, public;
\set schema cf
\i test/lib/mismatches.sql
\i test/lib/citus_helpers.sql

CREATE TABLE orders (id bigint, customer_id int NOT NULL, amount numeric(10,2) NOT NULL,
                     day date NOT NULL, qty int, note text, PRIMARY KEY (customer_id, id));
SELECT create_distributed_table('orders', 'customer_id', shard_count => 8);
CREATE TABLE customers (id int PRIMARY KEY, region text NOT NULL);
SELECT create_reference_table('customers');
INSERT INTO orders SELECT i, i % 500, (i % 97) + 0.25, date '2026-01-01' + i % 20,
                          CASE WHEN i % 7 = 0 THEN NULL ELSE i % 13 END, 'n' || (i % 40)
  FROM generate_series(1, 20000) i;
INSERT INTO customers SELECT i, 'r' || (i % 5) FROM generate_series(0, 499) i;

-- 1. a join with a reference table that is not an aggregate; a count of
-- DISTINCT by a text column; a column grouped by a primary key; a window
-- (recomputed whole when a node says its shards changed)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE big_orders FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.id, o.customer_id, o.amount, c.region
         FROM cf.orders o JOIN cf.customers c ON c.id = o.customer_id WHERE o.amount > 90 $$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE note_days FRESHNESS = INTERVAL '1' SECOND
    AS SELECT note, count(DISTINCT day) AS days FROM cf.orders GROUP BY note $$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE named FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.id, c.region, count(*) AS n FROM cf.orders o JOIN cf.customers c ON c.id = o.customer_id
        GROUP BY c.id $$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE ranked FRESHNESS = INTERVAL '1' SECOND
    AS SELECT day, rank() OVER (ORDER BY count(*), day) AS r FROM cf.orders GROUP BY day $$);
SELECT table_name, maintenance, maintenance_detail FROM materialized_table.materialized_tables
 WHERE table_name::text NOT LIKE 'mt\_partial\_%' ORDER BY 1;
SELECT caught_up('big_orders') AS big_orders, caught_up('note_days') AS note_days,
       caught_up('named') AS named, caught_up('ranked') AS ranked;
-- each worker keeps a table per shard of each source it holds, with no rows
SELECT * FROM on_workers($$SELECT count(*) || ' tables, ' || sum(pg_relation_size(table_name)) || ' bytes'
                             FROM materialized_table.materialized_tables
                            WHERE table_name::text LIKE 'cf.mt\_partial\_%'$$);

-- 2. changes on both workers' shards, of the reference table; key values
-- with a new line, a quote, NULL
CREATE TEMP TABLE mark AS SELECT clock_timestamp() AS at;
INSERT INTO orders SELECT i, i % 500, 95.50, date '2026-02-01', 1, 'late' FROM generate_series(30001, 30100) i;
UPDATE orders SET amount = 10 WHERE id % 50 = 3;
DELETE FROM orders WHERE id % 77 = 5;
UPDATE orders SET day = date '2026-03-01', note = E'two\nlines' WHERE customer_id IN (1, 2, 3, 4);
INSERT INTO orders VALUES (40001, 5, 91, '2026-03-02', NULL, 'it''s "quoted"'), (40002, 6, 92, '2026-03-03', 2, NULL);
UPDATE customers SET region = 'r9' WHERE id < 20;
SELECT caught_up('big_orders') AS big_orders, caught_up('note_days') AS note_days,
       caught_up('named') AS named, caught_up('ranked') AS ranked;
SELECT note, days FROM note_days WHERE note IS NULL OR note !~ '^n[0-9]' ORDER BY note NULLS FIRST;
SELECT count(*) FILTER (WHERE region = 'r9') > 0 AS r9_appeared FROM big_orders;
-- a pass recomputes the keys that changed (KEYS); a window, everything (FULL)
SELECT table_name, string_agg(DISTINCT strategy, ', ') AS strategies, bool_and(status = 'SUCCEEDED') AS succeeded
  FROM materialized_table.refresh_history
 WHERE table_name::text NOT LIKE 'mt\_partial\_%' AND trigger = 'CONTINUOUS'
   AND started_at > (SELECT at FROM mark)
 GROUP BY 1 ORDER BY 1;
-- a small change recomputes a few rows, not the table
CREATE TEMP TABLE mark_small AS SELECT clock_timestamp() AS at;
UPDATE orders SET amount = 99 WHERE id = 1000;
SELECT caught_up('big_orders') AS small_change;
SELECT strategy, rows FROM materialized_table.refresh_history
 WHERE table_name = 'big_orders'::regclass AND trigger = 'CONTINUOUS' AND rows > 0
   AND started_at > (SELECT at FROM mark_small);
TRUNCATE orders;
INSERT INTO orders VALUES (1, 7, 95.00, '2026-04-01', 3, 'a'), (2, 8, 96.00, '2026-04-01', NULL, 'b');
SELECT caught_up('big_orders') AS after_truncate, caught_up('note_days') AS note_days_after_truncate;
SELECT * FROM big_orders ORDER BY id;

-- 3. SUSPEND: the table stays as it was while the nodes keep the keys;
-- RESUME catches up
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cf.big_orders SUSPEND');
INSERT INTO orders VALUES (3, 9, 97.00, '2026-04-02', 2, 'c');
SELECT pg_sleep(1.5);
SELECT count(*) AS rows_while_suspended FROM big_orders;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE cf.big_orders RESUME');
SELECT caught_up('big_orders') AS after_resume;
SELECT count(*) AS rows_after_resume FROM big_orders;

-- 4. ALTER ... AS (a column appended): the nodes' tables follow
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE cf.note_days AS
    SELECT note, count(DISTINCT day) AS days, count(DISTINCT qty) AS qtys FROM cf.orders GROUP BY note $$);
INSERT INTO orders VALUES (4, 10, 5.00, '2026-04-03', 4, 'a');
SELECT caught_up('note_days') AS after_alter;
SELECT * FROM note_days ORDER BY note;

-- 5. refused: a source whose changes no node decodes
CREATE TABLE local_notes (note text PRIMARY KEY, label text);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE labelled FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.id, l.label FROM cf.orders o JOIN cf.local_notes l ON l.note = o.note $$);

-- ... and a result that changes with the clock (the nodes say what changed)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE recent FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id, day FROM cf.orders WHERE day > now() - interval '1 year' $$);

-- 6. DROP: the nodes drop their tables
SELECT * FROM on_workers($$SELECT count(*) FROM materialized_table.materialized_tables
                             WHERE table_name::text LIKE 'cf.mt\_partial\_%'$$);
SELECT materialized_table.execute('DROP MATERIALIZED TABLE cf.big_orders');
-- (left: those of note_days, named and ranked)
SELECT * FROM on_workers($$SELECT count(*) FROM materialized_table.materialized_tables
                             WHERE table_name::text LIKE 'cf.mt\_partial\_%'$$);
DROP SCHEMA cf CASCADE;
SELECT nodeport > 0 AS node, result FROM run_command_on_workers(
  $$SELECT count(*) FROM materialized_table.materialized_tables WHERE table_name::text LIKE 'cf.%'$$);
RESET materialized_table.scheduled_refreshes;
