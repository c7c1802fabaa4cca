-- ALTER ... AS and CREATE OR ALTER on a running CONTINUOUS table, while
-- another session keeps writing its source: each switch is atomic.  The
-- transaction that switches already holds exactly the new query's result
-- (checked in it, with EXCEPT ALL both ways, under REPEATABLE READ so that
-- the check sees what the switch saw), and once the load stops, the table
-- converges to the new query: no change committed around a switch is lost
-- or applied twice.  The switches go through every pair of strategies
-- (deltas, keys, full recompute), and a table reading the switched one
-- follows.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_ca
\set with_src
\ir ../lib/tap_helpers.sql
SET search_path = tap_ca, public;



CREATE TABLE switches (step int, strategy text, mismatches bigint, load_running bool);
CREATE FUNCTION load_running() RETURNS bool LANGUAGE sql AS $$
  SELECT EXISTS (SELECT FROM pg_stat_activity WHERE query = 'CALL tap_ca.writer(14)' AND state = 'active')
$$;

SELECT plan(14);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_ca.m FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_ca.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_ca.big FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, n FROM tap_ca.m WHERE n > 240$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the tables up');

SELECT writer_connect('tap_ca_w') \g /dev/null
SELECT dblink_send_query('tap_ca_w', 'CALL tap_ca.writer(14)') \g /dev/null
SELECT pg_sleep(1.5) \g /dev/null

-- Each switch: REPEATABLE READ, so that the check sees the snapshot the
-- switch computed with; the table is locked before that snapshot is taken
-- (LOCK takes none) so that the worker cannot change it in between, and
-- the pipeline's state so that the worker cannot update the row the switch
-- replaces (a serialization failure of this test, not of the switch).

-- 1. deltas -> keys (max(DISTINCT) is recomputed per group)
BEGIN ISOLATION LEVEL REPEATABLE READ;
LOCK TABLE m IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE materialized_table_internal.continuous_state IN EXCLUSIVE MODE;
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE tap_ca.m AS
    SELECT grp, count(*) AS n, sum(v) AS total, max(DISTINCT v) AS top FROM tap_ca.src GROUP BY grp$$) \g /dev/null
INSERT INTO switches SELECT 1, strategy, mismatches('m'), load_running()
  FROM materialized_table_internal.continuous_state WHERE relid = 'm'::regclass;
COMMIT;
SELECT pg_sleep(1.5) \g /dev/null

-- 2. keys -> full recompute, by CREATE OR ALTER (a window over grouping
-- sets: recomputed)
BEGIN ISOLATION LEVEL REPEATABLE READ;
LOCK TABLE m IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE materialized_table_internal.continuous_state IN EXCLUSIVE MODE;
SELECT materialized_table.execute($$
  CREATE OR ALTER MATERIALIZED TABLE tap_ca.m FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total, max(v) AS top, rank() OVER (ORDER BY count(*), grp) AS r
      FROM tap_ca.src GROUP BY ROLLUP (grp)$$) \g /dev/null
INSERT INTO switches SELECT 2, strategy, mismatches('m'), load_running()
  FROM materialized_table_internal.continuous_state WHERE relid = 'm'::regclass;
COMMIT;
SELECT pg_sleep(1.5) \g /dev/null

-- 3. full recompute -> deltas
BEGIN ISOLATION LEVEL REPEATABLE READ;
LOCK TABLE m IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE materialized_table_internal.continuous_state IN EXCLUSIVE MODE;
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE tap_ca.m AS
    SELECT grp, count(*) AS n, sum(v) AS total, sum(v) AS top, count(*) AS r FROM tap_ca.src WHERE grp < 18 GROUP BY grp$$) \g /dev/null
INSERT INTO switches SELECT 3, strategy, mismatches('m'), load_running()
  FROM materialized_table_internal.continuous_state WHERE relid = 'm'::regclass;
COMMIT;
SELECT pg_sleep(1.5) \g /dev/null

-- 4. deltas -> deltas (another filter, the state is rebuilt)
BEGIN ISOLATION LEVEL REPEATABLE READ;
LOCK TABLE m IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE materialized_table_internal.continuous_state IN EXCLUSIVE MODE;
SELECT materialized_table.execute($$
  CREATE OR ALTER MATERIALIZED TABLE tap_ca.m FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total, sum(v) AS top, count(*) AS r FROM tap_ca.src WHERE grp > 1 GROUP BY grp$$) \g /dev/null
INSERT INTO switches SELECT 4, strategy, mismatches('m'), load_running()
  FROM materialized_table_internal.continuous_state WHERE relid = 'm'::regclass;
COMMIT;
SELECT pg_sleep(1.5) \g /dev/null

-- 5. deltas -> full recompute (grouping sets again)
BEGIN ISOLATION LEVEL REPEATABLE READ;
LOCK TABLE m IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE materialized_table_internal.continuous_state IN EXCLUSIVE MODE;
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE tap_ca.m AS
    SELECT grp, count(*) AS n, sum(v) AS total, sum(v) AS top, count(*) OVER () AS r FROM tap_ca.src
     WHERE grp > 1 AND v < (SELECT avg(v) + 40 FROM tap_ca.src) GROUP BY ROLLUP (grp)$$) \g /dev/null
INSERT INTO switches SELECT 5, strategy, mismatches('m'), load_running()
  FROM materialized_table_internal.continuous_state WHERE relid = 'm'::regclass;
COMMIT;
SELECT pg_sleep(1.5) \g /dev/null

-- 6. full recompute -> keys
BEGIN ISOLATION LEVEL REPEATABLE READ;
LOCK TABLE m IN SHARE ROW EXCLUSIVE MODE;
LOCK TABLE materialized_table_internal.continuous_state IN EXCLUSIVE MODE;
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE tap_ca.m AS
    SELECT grp, count(*) AS n, sum(v) AS total, min(v) AS top, count(DISTINCT v) AS r FROM tap_ca.src GROUP BY grp$$) \g /dev/null
INSERT INTO switches SELECT 6, strategy, mismatches('m'), load_running()
  FROM materialized_table_internal.continuous_state WHERE relid = 'm'::regclass;
COMMIT;

SELECT is(status, 'CALL', 'the write load ran') FROM dblink_get_result('tap_ca_w') AS r(status text);
SELECT dblink_disconnect('tap_ca_w') \g /dev/null

SELECT ok(bool_and(load_running), 'the load was running at every switch') FROM switches;
SELECT is(mismatches, 0::bigint,
          format('switch %s (to %s): its transaction holds exactly the new query''s result', step, strategy))
  FROM switches ORDER BY step;
SELECT is(string_agg(strategy, ',' ORDER BY step), 'KEYS,FULL,DELTAS,DELTAS,FULL,KEYS',
          'the switches went through every strategy') FROM switches;
SELECT isnt(converged(20), NULL, 'after the load, the switched table and the one reading it equal their queries');
SELECT is(mismatches('m'), 0::bigint, 'the switched table holds its last query''s result: nothing lost or applied twice');
SELECT is(mismatches('big'), 0::bigint, 'the table reading it does too');
SELECT is((SELECT count(*) FROM materialized_table.refresh_history
            WHERE table_name IN ('m'::regclass, 'big'::regclass) AND status = 'FAILED'),
          0::bigint, 'no cycle failed');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_ca.big; DROP MATERIALIZED TABLE tap_ca.m') \g /dev/null
RESET search_path;
DROP SCHEMA tap_ca CASCADE;
