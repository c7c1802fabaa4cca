-- CONTINUOUS tables follow their sources: a change shows within the
-- freshness; tables of every query shape converge to their queries after
-- inserts, updates and deletes (a group losing its maximum, rows moving
-- between groups, NULLs), TRUNCATE, chains on CONTINUOUS and FULL tables;
-- each cycle is recorded in refresh_history with trigger CONTINUOUS; the
-- worker does not decode its own writes into more work; the slot, origin
-- and worker go when the last CONTINUOUS table does.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_cb
\ir ../lib/tap_helpers.sql
SET search_path = tap_cb, public;
SET timezone = 'UTC';

CREATE TABLE accounts (id int PRIMARY KEY, grp int NOT NULL, balance numeric(12,2) NOT NULL,
                       flag bool, note text);
CREATE TABLE customers (id int PRIMARY KEY, region text NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, ds date NOT NULL, amount int NOT NULL);
INSERT INTO accounts SELECT i, i % 10, (i * 37) % 1000, i % 3 > 0, 'n' || i FROM generate_series(1, 2000) i;
INSERT INTO customers SELECT i, 'region ' || (i % 5) FROM generate_series(1, 100) i;
INSERT INTO orders SELECT i, 1 + (i * 13) % 100, date '2024-01-01' + i % 10, i % 50 FROM generate_series(1, 3000) i;
CREATE VIEW big_accounts AS SELECT id, grp, balance FROM accounts WHERE balance > 500;

CREATE TABLE timing (what text PRIMARY KEY, seconds float);

SELECT plan(31);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_cb.agg FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(balance) AS total, avg(balance) AS average FROM tap_cb.accounts GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_cb.minmax FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, min(balance) AS lo, max(balance) AS hi, bool_and(flag) AS all_flag,
           string_agg(note, ',' ORDER BY id) AS notes
      FROM tap_cb.accounts GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_cb.rich FRESHNESS = INTERVAL '1' SECOND AS
    SELECT id, grp, balance FROM tap_cb.accounts WHERE balance > 900;
  CREATE MATERIALIZED TABLE tap_cb.groups FRESHNESS = INTERVAL '1' SECOND AS
    SELECT DISTINCT grp, flag FROM tap_cb.accounts;
  CREATE MATERIALIZED TABLE tap_cb.joinagg FRESHNESS = INTERVAL '1' SECOND AS
    SELECT o.ds, c.region, count(*) AS n, sum(o.amount) AS total
      FROM tap_cb.orders o JOIN tap_cb.customers c ON c.id = o.customer_id GROUP BY o.ds, c.region;
  CREATE MATERIALIZED TABLE tap_cb.leftjoin FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c.id, c.region, count(o.id) AS orders FROM tap_cb.customers c
      LEFT JOIN tap_cb.orders o ON o.customer_id = c.id GROUP BY c.id, c.region;
  CREATE MATERIALIZED TABLE tap_cb.ranked FRESHNESS = INTERVAL '1' SECOND AS
    SELECT id, grp, rank() OVER (PARTITION BY grp ORDER BY balance, id) AS r FROM tap_cb.accounts;
  CREATE MATERIALIZED TABLE tap_cb.global FRESHNESS = INTERVAL '1' SECOND AS
    SELECT count(*) AS n, sum(amount) AS total FROM tap_cb.orders;
  CREATE MATERIALIZED TABLE tap_cb.sub FRESHNESS = INTERVAL '1' SECOND AS
    SELECT id, amount FROM tap_cb.orders WHERE customer_id IN (SELECT id FROM tap_cb.customers WHERE region = 'region 1');
  CREATE MATERIALIZED TABLE tap_cb.viewed FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n FROM tap_cb.big_accounts GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_cb.chain FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, n, total FROM tap_cb.agg WHERE n > 195;
  CREATE MATERIALIZED TABLE tap_cb.full_src FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = FULL AS
    SELECT region, count(*) AS n FROM tap_cb.customers GROUP BY region;
  CREATE MATERIALIZED TABLE tap_cb.chain_full FRESHNESS = INTERVAL '1' SECOND AS
    SELECT region, n FROM tap_cb.full_src
$m$)$$, 'CONTINUOUS tables of every query shape are created');

SELECT isnt(wait_for('SELECT tap_cb.worker_pid() IS NOT NULL', 10), NULL,
            'a worker runs in this database');
SELECT isnt(wait_for($$SELECT EXISTS (SELECT FROM pg_replication_slots
                                       WHERE slot_name = tap_cb.slot_name() AND plugin = 'materialized_table'
                                         AND slot_type = 'logical' AND database = current_database())$$, 10),
            NULL, 'it decodes through one logical slot with the extension''s plugin');
SELECT is((SELECT count(*) FROM pg_replication_slots WHERE database = current_database()), 1::bigint,
          'one slot for all the tables of the database');
SELECT ok(EXISTS (SELECT FROM pg_replication_origin WHERE roname = slot_name()),
          'and a replication origin of the same name records its progress');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes every table up');

-- a change shows within the freshness (1 s), plus a margin
INSERT INTO accounts VALUES (5000, 77, 999, true, 'new');
INSERT INTO timing SELECT 'insert', wait_for($$SELECT EXISTS (SELECT FROM tap_cb.agg WHERE grp = 77)
                                              AND EXISTS (SELECT FROM tap_cb.rich WHERE id = 5000)$$, 10);
SELECT cmp_ok(seconds, '<', 3::float, 'an insert shows in 1-second tables within 3 s')
  FROM timing WHERE what = 'insert';
SELECT diag('insert visible after ' || coalesce(seconds::text, 'more than 10') || ' s') FROM timing WHERE what = 'insert';
UPDATE accounts SET balance = 1 WHERE id = 5000;
INSERT INTO timing SELECT 'update', wait_for($$SELECT (SELECT total FROM tap_cb.agg WHERE grp = 77) = 1
                                              AND NOT EXISTS (SELECT FROM tap_cb.rich WHERE id = 5000)$$, 10);
SELECT cmp_ok(seconds, '<', 3::float, 'an update shows within 3 s') FROM timing WHERE what = 'update';
DELETE FROM accounts WHERE id = 5000;
INSERT INTO timing SELECT 'delete', wait_for($$SELECT NOT EXISTS (SELECT FROM tap_cb.agg WHERE grp = 77)$$, 10);
SELECT cmp_ok(seconds, '<', 3::float, 'a delete that empties a group removes it within 3 s')
  FROM timing WHERE what = 'delete';

-- every shape converges after changes of every kind
CREATE TEMP TABLE mark AS SELECT clock_timestamp() AS at;
BEGIN;
-- groups lose their maximum and minimum
DELETE FROM accounts WHERE (grp, balance) IN (SELECT grp, max(balance) FROM accounts GROUP BY grp);
DELETE FROM accounts WHERE (grp, balance) IN (SELECT grp, min(balance) FROM accounts GROUP BY grp);
-- rows move between groups, flags and notes become NULL
UPDATE accounts SET grp = (grp + 1) % 10, flag = NULL WHERE id % 17 = 0;
UPDATE accounts SET note = NULL, balance = balance + 0.5 WHERE id % 23 = 0;
INSERT INTO accounts SELECT i, i % 12, (i * 7) % 1000, NULL, NULL FROM generate_series(3001, 3200) i;
-- customers change region, orders change customer
UPDATE customers SET region = 'region 9' WHERE id % 7 = 0;
UPDATE orders SET customer_id = 1 + (customer_id + 3) % 100, ds = ds + 1 WHERE id % 11 = 0;
DELETE FROM orders WHERE id % 13 = 0;
INSERT INTO customers SELECT i, 'region ' || (i % 3) FROM generate_series(101, 110) i;
COMMIT;
-- a FULL table's refresh flows on into the CONTINUOUS table reading it
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_cb.full_src REFRESH') \g /dev/null
INSERT INTO timing SELECT 'mixed', converged(20);
SELECT isnt(seconds, NULL, 'tables of every shape converge to their queries after mixed changes')
  FROM timing WHERE what = 'mixed';
SELECT diag('mixed changes applied everywhere after ' || coalesce(seconds::text, 'more than 20') || ' s')
  FROM timing WHERE what = 'mixed';
SELECT is(mismatches(table_name), 0::bigint, table_name::text || ' equals its query')
  FROM materialized_table.materialized_tables
 WHERE table_name::text IN ('agg', 'minmax', 'rich', 'groups', 'joinagg', 'leftjoin', 'ranked',
                            'global', 'sub', 'viewed', 'chain', 'chain_full')
 ORDER BY table_name::text;

-- the history records each cycle
SELECT ok(count(*) > 0 AND bool_and(status = 'SUCCEEDED' AND duration IS NOT NULL AND rows IS NOT NULL),
          'the cycles since are recorded with trigger CONTINUOUS, a duration and a row count')
  FROM materialized_table.refresh_history
 WHERE trigger = 'CONTINUOUS' AND started_at >= (SELECT at FROM mark)
   AND table_name::text IN ('agg', 'minmax', 'joinagg');
SELECT ok(bool_and(EXISTS (SELECT FROM materialized_table.refresh_history h
                            WHERE h.table_name = t.table_name AND h.trigger = 'CONTINUOUS'
                              AND h.started_at >= (SELECT at FROM mark) AND h.rows > 0)),
          'every table has a cycle that changed rows')
  FROM materialized_table.materialized_tables t WHERE table_name::text NOT IN ('full_src');
SELECT is((SELECT count(*) FROM materialized_table.refresh_history
            WHERE status = 'FAILED'
              AND table_name IN (SELECT table_name FROM materialized_table.materialized_tables)),
          0::bigint, 'no cycle failed');

-- the worker's own writes are not decoded back into work: once idle, it
-- stays idle
SELECT pg_sleep(2) \g /dev/null
CREATE TEMP TABLE runs_before AS
SELECT count(*) AS n FROM materialized_table.refresh_history WHERE trigger = 'CONTINUOUS';
SELECT pg_sleep(3) \g /dev/null
SELECT is((SELECT count(*) FROM materialized_table.refresh_history WHERE trigger = 'CONTINUOUS'),
          (SELECT n FROM runs_before), 'without source changes, no cycle runs (its own writes are skipped)');

-- TRUNCATE of a source, alone and followed by inserts in its transaction
TRUNCATE orders;
SELECT isnt(converged(20), NULL, 'after TRUNCATE of a source, its tables converge');
SELECT is((SELECT n FROM global), 0::bigint, 'the global count is 0');
BEGIN;
TRUNCATE customers, orders;
INSERT INTO customers VALUES (1, 'region 1'), (2, 'region 2');
INSERT INTO orders VALUES (1, 1, '2024-01-01', 10), (2, 2, '2024-01-02', 20), (3, 1, '2024-01-01', 30);
COMMIT;
SELECT isnt(converged(20), NULL, 'after TRUNCATE and inserts in one transaction, its tables converge');
SELECT results_eq('SELECT ds, region, n, total FROM tap_cb.joinagg ORDER BY ds',
                  $$VALUES (date '2024-01-01', 'region 1', 2::bigint, 40::bigint),
                           (date '2024-01-02', 'region 2', 1::bigint, 20::bigint)$$,
                  'the join aggregate holds exactly the new rows');

-- the last CONTINUOUS table gone, the worker leaves no slot or origin
SELECT materialized_table.execute($$
  DROP MATERIALIZED TABLE tap_cb.chain; DROP MATERIALIZED TABLE tap_cb.chain_full;
  DROP MATERIALIZED TABLE tap_cb.full_src; DROP MATERIALIZED TABLE tap_cb.agg;
  DROP MATERIALIZED TABLE tap_cb.minmax; DROP MATERIALIZED TABLE tap_cb.rich;
  DROP MATERIALIZED TABLE tap_cb.groups; DROP MATERIALIZED TABLE tap_cb.joinagg;
  DROP MATERIALIZED TABLE tap_cb.leftjoin; DROP MATERIALIZED TABLE tap_cb.ranked;
  DROP MATERIALIZED TABLE tap_cb.global; DROP MATERIALIZED TABLE tap_cb.sub;
  DROP MATERIALIZED TABLE tap_cb.viewed$$) \g /dev/null
SELECT isnt(wait_for($$SELECT NOT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = tap_cb.slot_name())
                        AND NOT EXISTS (SELECT FROM pg_replication_origin WHERE roname = tap_cb.slot_name())$$, 20),
            NULL, 'without CONTINUOUS tables, the slot and the origin are dropped');

SELECT * FROM finish();
RESET search_path;
DROP SCHEMA tap_cb CASCADE;
