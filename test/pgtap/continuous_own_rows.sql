-- Tables whose own rows are their state (counts, and sums of NOT NULL
-- columns, next to count(*)): no hidden state table; changed groups are
-- adjusted in place, including groups with a NULL group column, groups that
-- appear and vanish, groups a change of a joined source names, and the rows
-- handed to a CONTINUOUS table downstream; with the table's index on its
-- group columns, in either order, or without one.  A unique index on other columns
-- than the groups' makes each cycle recompute instead.  When a NOT NULL
-- constraint a sum rested on is dropped and NULLs come, the table takes the
-- hidden counts after all and stays right.  All converge, with no failed
-- cycle, and the rows the worker writes reach the statistics autovacuum
-- reads.  A refresh by hand while changes wait does not make the worker
-- count them twice.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_own
\ir ../lib/tap_helpers.sql
SET search_path = tap_own, public;

CREATE TABLE ev (id int PRIMARY KEY, k int NOT NULL, tag text, amount numeric(10,2) NOT NULL,
                 qty int NOT NULL, note text);
INSERT INTO ev SELECT i, i % 50, CASE WHEN i % 7 > 0 THEN 'tag ' || (i % 3) END, (i % 1000) / 4.0,
                      i % 9, CASE WHEN i % 2 = 0 THEN 'n' END
  FROM generate_series(1, 20000) i;
CREATE TABLE cust (id int PRIMARY KEY, region text NOT NULL);
INSERT INTO cust SELECT i, 'region ' || (i % 6) FROM generate_series(1, 300) i;
CREATE TABLE ord (id int PRIMARY KEY, cust_id int NOT NULL, ds date NOT NULL, amount int NOT NULL);
INSERT INTO ord SELECT i, 1 + i % 300, date '2024-01-01' + i % 20, i % 100 FROM generate_series(1, 20000) i;
ANALYZE ev, cust, ord;

SELECT plan(36);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_own.by_tag FRESHNESS = INTERVAL '1' SECOND AS
    SELECT k, tag, count(*) AS n, count(note) AS notes, sum(amount) AS total, sum(qty) AS qty
      FROM tap_own.ev GROUP BY k, tag;
  CREATE MATERIALIZED TABLE tap_own.by_region FRESHNESS = INTERVAL '1' SECOND AS
    SELECT o.ds, c.region, count(*) AS n, sum(o.amount) AS total
      FROM tap_own.ord o JOIN tap_own.cust c ON c.id = o.cust_id GROUP BY o.ds, c.region;
  CREATE MATERIALIZED TABLE tap_own.by_k FRESHNESS = INTERVAL '1' SECOND AS
    SELECT k, count(*) AS n, sum(amount) AS total FROM tap_own.ev GROUP BY k;
  CREATE MATERIALIZED TABLE tap_own.downstream FRESHNESS = INTERVAL '1' SECOND AS
    SELECT tag, count(*) AS groups, sum(n) AS n FROM tap_own.by_tag GROUP BY tag
$m$)$$, 'three tables that are their own state and one downstream of them are created');
SELECT is((SELECT array_agg(maintenance_detail LIKE 'count and sum per group are adjusted in the table''s own rows%'
                            ORDER BY table_name::text)
             FROM materialized_table.materialized_tables
            WHERE table_name IN ('by_tag'::regclass, 'by_region'::regclass, 'by_k'::regclass)),
          ARRAY[true, true, true], 'maintenance_detail says so');
SELECT is((SELECT count(*) FROM pg_class
            WHERE relname IN ('state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'by_tag'::regclass), 'state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'by_region'::regclass),
                              'state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'by_k'::regclass))),
          0::bigint, 'they have no hidden state');
SELECT is((SELECT array_agg(reloptions::text ORDER BY relname::text) FROM pg_class
            WHERE oid IN ('by_tag'::regclass, 'by_region'::regclass, 'by_k'::regclass)),
          ARRAY['{fillfactor=90}', '{fillfactor=90}', '{fillfactor=90}'],
          'their pages keep room for the updates of their rows');
-- by_k: a unique index beyond its group column
CREATE UNIQUE INDEX by_k_k_n ON by_k (k, n);
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN ('tap_own.by_tag'::regclass, 'tap_own.by_region'::regclass,
                                        'tap_own.by_k'::regclass, 'tap_own.downstream'::regclass)$$, 60),
            NULL, 'the worker takes them up');

-- changes in several transactions: groups gained, moved, emptied, NULL tags
-- set and cleared, sums changed without any group changing, orders moved
-- and customers moved between regions
INSERT INTO ev SELECT i, 50 + i % 5, CASE WHEN i % 4 > 0 THEN 'new ' || (i % 2) END, i / 8.0, i % 4, NULL
  FROM generate_series(20001, 20400) i;
UPDATE ev SET amount = amount + 1.25, qty = qty + 1 WHERE id % 10 = 0;
UPDATE ev SET tag = NULL WHERE id % 13 = 0;
UPDATE ev SET tag = 'tag 9', k = k + 1 WHERE id % 17 = 0;
DELETE FROM ev WHERE k = 3;
DELETE FROM ev WHERE tag IS NULL AND k = 7;
UPDATE ev SET note = 'x' WHERE id % 19 = 0;
BEGIN;
UPDATE cust SET region = 'region 9' WHERE id % 7 = 0;
UPDATE ord SET amount = amount + 1, cust_id = 1 + (cust_id * 7) % 300 WHERE id % 11 = 0;
COMMIT;
INSERT INTO ord SELECT i, 1 + i % 300, date '2024-02-01' + i % 5, i % 10 FROM generate_series(20001, 21000) i;
DELETE FROM ord WHERE ds = date '2024-01-05';

SELECT isnt(converged(120), NULL, 'after the changes, all converge');
SELECT is(mismatches('by_tag') + mismatches('by_region') + mismatches('by_k') + mismatches('downstream'),
          0::bigint, 'each equals its query');
SELECT ok((SELECT count(*) FROM by_tag WHERE tag IS NULL) > 0 AND NOT EXISTS (SELECT FROM by_tag WHERE k = 3),
          'groups with a NULL tag are there, and the emptied ones gone');
-- what autovacuum goes by: the worker reports the rows it writes
SELECT isnt(wait_for($$SELECT n_tup_upd > 0 AND n_tup_del > 0 FROM pg_stat_user_tables
                        WHERE relid = 'tap_own.by_tag'::regclass$$, 30),
            NULL, 'the rows the worker updates and deletes are counted in the statistics');

-- a refresh by hand while changes wait (the table suspended): the refresh
-- counts them, and the worker must not add them again on RESUME
SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_own.qty_by_k WITH ('fillfactor' = '75') FRESHNESS = INTERVAL '1' SECOND AS
    SELECT k, count(*) AS n, sum(qty) AS qty FROM tap_own.ev GROUP BY k$m$) \g /dev/null
SELECT is((SELECT reloptions::text FROM pg_class WHERE oid = 'qty_by_k'::regclass), '{fillfactor=75}',
          'a fillfactor of the user''s is kept');
-- new options without one: the room comes back
SELECT materialized_table.execute($m$
  CREATE OR ALTER MATERIALIZED TABLE tap_own.qty_by_k WITH ('autovacuum_enabled' = 'true') FRESHNESS = INTERVAL '1' SECOND AS
    SELECT k, count(*) AS n, sum(qty) AS qty FROM tap_own.ev GROUP BY k$m$) \g /dev/null
SELECT is((SELECT reloptions::text FROM pg_class WHERE oid = 'qty_by_k'::regclass),
          '{autovacuum_enabled=true,fillfactor=90}', 'options without a fillfactor give the room back');
SELECT wait_for($$SELECT synced FROM materialized_table_internal.continuous_state
                   WHERE relid = 'tap_own.qty_by_k'::regclass$$, 30) IS NOT NULL AS synced \gset
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_own.qty_by_k SUSPEND') \g /dev/null
INSERT INTO ev SELECT i, i % 50, 'tag 1', 2.50, 1, NULL FROM generate_series(25001, 25100) i;
UPDATE ev SET qty = qty + 5 WHERE id % 23 = 0;
SELECT wait_for($$SELECT count(*) > 0 FROM materialized_table_internal.change_deltas
                   WHERE relid = 'tap_own.qty_by_k'::regclass$$, 30) IS NOT NULL AS kept \gset
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_own.qty_by_k REFRESH') \g /dev/null
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_own.qty_by_k RESUME') \g /dev/null
SELECT isnt(converged(60), NULL, 'after a refresh by hand while suspended, and RESUME, all converge');
SELECT is(mismatches('qty_by_k'), 0::bigint, 'the changes the refresh counted are not counted again');

-- a changed group's row is found through the table's index on its group
-- columns; without one (the user dropped it), by a scan of the table; with
-- one in another column order, through it again
SELECT format('DROP INDEX %s', indexrelid::regclass) FROM pg_index
 WHERE indrelid = 'tap_own.by_region'::regclass \gexec
UPDATE ord SET amount = amount + 2 WHERE id % 9 = 0;
DELETE FROM ord WHERE ds = date '2024-01-06';
INSERT INTO ord SELECT i, 1 + i % 300, date '2024-03-01' + i % 3, i % 7 FROM generate_series(21001, 21300) i;
SELECT isnt(converged(60), NULL, 'without an index on its group columns, the join table converges');
CREATE INDEX ON by_region (region, ds);
UPDATE ord SET amount = amount + 3 WHERE id % 8 = 0;
DELETE FROM ord WHERE ds = date '2024-03-02';
INSERT INTO ord SELECT i, 1 + i % 300, date '2024-04-01', 1 FROM generate_series(21301, 21400) i;
SELECT isnt(converged(60), NULL, 'with an index on them in another order, it converges');
SELECT is(mismatches('by_region'), 0::bigint, 'and equals its query');
-- with row level security on, by a MERGE (which the policies apply to)
ALTER TABLE by_region ENABLE ROW LEVEL SECURITY;
UPDATE ord SET amount = amount + 4 WHERE id % 7 = 0;
DELETE FROM ord WHERE ds = date '2024-04-01';
INSERT INTO ord SELECT i, 1 + i % 300, date '2024-05-01' + i % 2, 2 FROM generate_series(21401, 21500) i;
SELECT isnt(converged(60), NULL, 'with row level security, it converges');
SELECT is(mismatches('by_region'), 0::bigint, 'and equals its query');
ALTER TABLE by_region DISABLE ROW LEVEL SECURITY;

-- the rows of a few groups are found through the index; those of groups
-- that are many for the table, by one scan of it (the statistics say which)
CREATE TABLE wide (id int PRIMARY KEY, g int NOT NULL, v int NOT NULL);
INSERT INTO wide SELECT i, i % 5000, i FROM generate_series(1, 10000) i;
SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_own.by_g FRESHNESS = INTERVAL '1' SECOND AS
    SELECT g, count(*) AS n, sum(v) AS total FROM tap_own.wide GROUP BY g$m$) \g /dev/null
SELECT wait_for($$SELECT synced FROM materialized_table_internal.continuous_state
                   WHERE relid = 'tap_own.by_g'::regclass$$, 30) IS NOT NULL AS synced \gset
SELECT wait_for($$SELECT n_tup_ins >= 10000 FROM pg_stat_user_tables WHERE relid = 'tap_own.by_g'::regclass$$,
                30) IS NOT NULL AS picked_up \gset
ANALYZE by_g;
-- the statistics of the scans so far (ours, the worker's) are sent at most
-- once a second: wait for them
SELECT pg_stat_force_next_flush() \g /dev/null
SELECT pg_sleep(1.2) \g /dev/null
SELECT seq_scan AS seq0, idx_scan AS idx0 FROM pg_stat_user_tables WHERE relid = 'by_g'::regclass \gset
BEGIN;
UPDATE wide SET v = v + 1 WHERE id IN (7, 8);
DELETE FROM wide WHERE g = 9;
INSERT INTO wide VALUES (10001, 5001, 1);
COMMIT;
SELECT isnt(wait_for(format($$SELECT idx_scan > %s FROM pg_stat_user_tables WHERE relid = 'tap_own.by_g'::regclass$$,
                            :idx0), 30), NULL, 'a few groups are found through the index');
SELECT isnt(converged(60), NULL, 'they converge');
SELECT is((SELECT seq_scan FROM pg_stat_user_tables WHERE relid = 'by_g'::regclass), :seq0::bigint,
          'without a scan of the table');
BEGIN;
UPDATE wide SET v = v + 1 WHERE id <= 2000;
DELETE FROM wide WHERE g = 11;
INSERT INTO wide VALUES (10002, 5002, 1), (10003, 5001, 2);
COMMIT;
SELECT isnt(wait_for(format($$SELECT seq_scan > %s FROM pg_stat_user_tables WHERE relid = 'tap_own.by_g'::regclass$$,
                            :seq0), 30), NULL, 'many groups are found by a scan of the table');
SELECT isnt(converged(60), NULL, 'they converge');
SELECT is(mismatches('by_g'), 0::bigint, 'and the table equals its query');
-- the worker remembers where it wrote each row, and where the scan saw the
-- others: the next cycle finds them there, without the index or a scan
SELECT pg_stat_force_next_flush() \g /dev/null
SELECT pg_sleep(1.2) \g /dev/null
SELECT seq_scan AS seq1, idx_scan AS idx1, n_tup_upd AS upd1
  FROM pg_stat_user_tables WHERE relid = 'by_g'::regclass \gset
BEGIN;
UPDATE wide SET v = v + 1 WHERE id <= 4000;
DELETE FROM wide WHERE g = 13;
COMMIT;
SELECT isnt(wait_for(format($$SELECT n_tup_upd >= %s + 3900 FROM pg_stat_user_tables
                               WHERE relid = 'tap_own.by_g'::regclass$$, :upd1), 30), NULL,
            'the rows of 3,997 groups are adjusted');
SELECT is((SELECT (seq_scan - :seq1, idx_scan - :idx1) FROM pg_stat_user_tables
            WHERE relid = 'by_g'::regclass)::text, '(0,0)',
          'where the worker last saw them, without the index or a scan');
SELECT isnt(converged(60), NULL, 'they converge');
-- rows rewritten behind the worker's back are not where it saw them: it
-- forgets those places and finds the rows again
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_own.by_g SUSPEND') \g /dev/null
UPDATE wide SET v = v + 1 WHERE id <= 3000;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_own.by_g REFRESH') \g /dev/null
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_own.by_g RESUME') \g /dev/null
UPDATE wide SET v = v + 1 WHERE id <= 4000;
SELECT isnt(converged(60), NULL, 'after a refresh by hand, they converge');
VACUUM FULL by_g;
UPDATE wide SET v = v + 1 WHERE id <= 4000;
SELECT isnt(converged(60), NULL, 'after a VACUUM FULL of the table, they converge');
SELECT is(mismatches('by_g'), 0::bigint, 'and the table equals its query');

-- a NOT NULL constraint a sum rested on is dropped, and NULLs come: the
-- group whose non-NULL amounts all go must show a NULL sum
ALTER TABLE ev ALTER COLUMN amount DROP NOT NULL;
INSERT INTO ev VALUES (30000, 1, 'tag 1', NULL, 1, NULL), (30001, 99, 'lonely', NULL, 1, NULL);
SELECT isnt(converged(60), NULL, 'after NULL amounts, all converge');
DELETE FROM ev WHERE k = 1 AND tag = 'tag 1' AND amount IS NOT NULL;
SELECT isnt(converged(60), NULL, 'after their group lost its other rows, all converge');
SELECT is((SELECT total FROM by_tag WHERE k = 1 AND tag = 'tag 1'), NULL::numeric, 'that group''s sum is NULL');
SELECT ok((SELECT count(*) FROM pg_class WHERE relname = 'state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'by_tag'::regclass)) = 1
          AND (SELECT maintenance_detail LIKE 'count, sum and avg per group are kept%'
                 FROM materialized_table.materialized_tables WHERE table_name = 'by_tag'::regclass),
          'by_tag now keeps hidden counts, and says so');
SELECT is(mismatches('by_tag') + mismatches('by_k') + mismatches('downstream'), 0::bigint,
          'each still equals its query');
SELECT is((SELECT count(*) FROM materialized_table.refresh_history
            WHERE status = 'FAILED' AND table_name IN ('by_tag'::regclass, 'by_region'::regclass,
                                                     'by_k'::regclass, 'downstream'::regclass)),
          0::bigint, 'no cycle failed');

SELECT * FROM finish();
SELECT materialized_table.execute($$
  DROP MATERIALIZED TABLE tap_own.downstream; DROP MATERIALIZED TABLE tap_own.by_tag;
  DROP MATERIALIZED TABLE tap_own.qty_by_k; DROP MATERIALIZED TABLE tap_own.by_g;
  DROP MATERIALIZED TABLE tap_own.by_region; DROP MATERIALIZED TABLE tap_own.by_k$$) \g /dev/null
RESET search_path;
DROP SCHEMA tap_own CASCADE;
