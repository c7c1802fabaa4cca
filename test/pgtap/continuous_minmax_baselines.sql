-- A group re-read for its min or max is read with a snapshot that may see
-- transactions decoded only in a later cycle; kept as the group's baseline
-- (continuous_baseline), it makes their rows add nothing to that group
-- (see Baselines in src/continuous/cycle.c).  With two group columns the
-- groups re-read are matched row by row: re-reading (0, 0) and (1, 1) must
-- leave out of (0, 1) and (1, 0) nothing their snapshot saw -- those were
-- not re-read.
--
-- The race is staged: the source's WHERE calls nap(), which sleeps 2 s the
-- first time the worker calls it after the test arms it -- while the
-- worker applies the transaction that removes the two groups' minima,
-- before it re-reads them.  The test commits changes of all four groups
-- meanwhile (a min removed, which counts only where it is the group's,
-- and rows added), so that the re-read sees them and the next cycle
-- decodes them.  The same through a join, and with one group column (a
-- table that never mixed its groups, beside them).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_mb
\ir ../lib/tap_helpers.sql
SET search_path = tap_mb, public;

CREATE TABLE tester (pid int);
INSERT INTO tester VALUES (pg_backend_pid());
-- armed by setval(naps, 1, false): the worker's next call sleeps
CREATE SEQUENCE naps;
SELECT setval('naps', 1000000) \g /dev/null
CREATE FUNCTION nap(int) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS
  $$BEGIN
      IF pg_backend_pid() <> (SELECT pid FROM tap_mb.tester) AND nextval('tap_mb.naps') = 1 THEN
          PERFORM pg_sleep(2);
      END IF;
      RETURN true;
    END$$;

-- groups (a, b) of 0 and 1, ten rows each, values 10 to 19 (20 to 29, ...)
CREATE TABLE t (id int PRIMARY KEY, a int NOT NULL, b int NOT NULL, v int NOT NULL);
INSERT INTO t SELECT k, (k / 10) % 2, k / 20, 10 * (1 + k / 10) + k % 10 FROM generate_series(0, 39) k;
CREATE TABLE dim (id int PRIMARY KEY, region text NOT NULL);
INSERT INTO dim VALUES (0, 'north'), (1, 'south');
ANALYZE t, dim;

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_mb.pairs FRESHNESS = INTERVAL '1' SECOND AS
    SELECT a, b, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi
      FROM tap_mb.t WHERE tap_mb.nap(id) GROUP BY a, b$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_mb.joined FRESHNESS = INTERVAL '1' SECOND AS
    SELECT d.region, t.b, count(*) AS n, sum(t.v) AS s, min(t.v) AS lo
      FROM tap_mb.t JOIN tap_mb.dim d ON d.id = t.a WHERE tap_mb.nap(t.id) GROUP BY d.region, t.b$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_mb.single FRESHNESS = INTERVAL '1' SECOND AS
    SELECT a, count(*) AS n, sum(v) AS s, min(v) AS lo FROM tap_mb.t GROUP BY a$$) \g /dev/null

-- the worker is asleep in nap()
CREATE FUNCTION napping() RETURNS boolean LANGUAGE sql AS $$
    SELECT EXISTS (SELECT FROM pg_stat_activity
                    WHERE pid = tap_mb.worker_pid() AND wait_event = 'PgSleep') $$;
CREATE TABLE staged (slept boolean);
CREATE PROCEDURE stage(removal text, meanwhile text) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM setval('tap_mb.naps', 1, false);
    COMMIT;
    EXECUTE removal;
    COMMIT;
    INSERT INTO tap_mb.staged SELECT tap_mb.wait_for('SELECT tap_mb.napping()', 20) IS NOT NULL;
    EXECUTE meanwhile;
    COMMIT;
    -- the rest of the cycle, before the next one decodes the changes
    PERFORM tap_mb.wait_for('SELECT NOT tap_mb.napping()', 20);
END $$;

SELECT plan(9);

SELECT isnt(wait_for($$SELECT bool_and(s.synced AND s.strategy = 'DELTAS')
                          FROM materialized_table_internal.continuous_state s
                          JOIN pg_class c ON c.oid = s.relid
                         WHERE c.relnamespace = 'tap_mb'::regnamespace
                        HAVING count(*) = 3$$, 30), NULL,
            'the worker takes the tables up, kept by deltas');
SELECT is(converged(20) IS NOT NULL, true, 'every table equals its query');

-- the minima of (0, 0) and (1, 1) removed; while the worker applies that,
-- a row of each group added, one of (0, 1) between its extrema removed
-- (which re-reads nothing)
CALL stage($$DELETE FROM tap_mb.t WHERE id IN (0, 30)$$,
           $$INSERT INTO tap_mb.t VALUES (100, 0, 0, 15), (101, 0, 1, 55), (102, 1, 0, 25), (103, 1, 1, 45);
             DELETE FROM tap_mb.t WHERE id = 25$$);
SELECT is((SELECT slept FROM staged), true,
          'the worker applied the removal of the minima, asleep, while the others changed');
SELECT isnt(converged(20), NULL, 'the changes a re-read saw: converged');
SELECT is((SELECT string_agg(format('(%s,%s): %s %s %s', a, b, n, s, lo), ', ' ORDER BY a, b) FROM pairs),
          '(0,0): 10 150 11, (0,1): 10 365 30, (1,0): 11 270 20, (1,1): 10 450 41',
          'pairs: each group counts what its snapshot saw once, and the later changes of the others');
SELECT is(mismatches('tap_mb.pairs'), 0::bigint, 'pairs equals its query');
SELECT is(mismatches('tap_mb.joined'), 0::bigint, 'joined equals its query');
SELECT is(mismatches('tap_mb.single'), 0::bigint, 'single (one group column) equals its query');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_mb.' || t) FROM unnest(ARRAY['pairs', 'joined', 'single']) t \g /dev/null
RESET search_path;
DROP SCHEMA tap_mb CASCADE;
