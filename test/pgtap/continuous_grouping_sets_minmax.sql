-- CONTINUOUS tables of ROLLUP and CUBE with min and max beside count and
-- sum, kept by deltas: an inserted row adjusts its group in every set, and
-- so does a removed row beyond its groups' extrema; a removed row that may
-- have been one recomputes the table in that one cycle (refresh_history
-- says FULL), and the next cycles are deltas again.  Each table holds
-- exactly its query's rows after every change.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_grouping_sets_minmax
\set with_cycles
\ir ../lib/tap_helpers.sql
SET search_path = tap_grouping_sets_minmax, public;

CREATE TABLE events (id int PRIMARY KEY, site text, kind int, at date NOT NULL, ms int, size int);
INSERT INTO events
  SELECT i, CASE WHEN i % 19 = 0 THEN NULL ELSE 's' || (i % 4) END, i % 5,
         date '2026-01-01' + i % 30, 10 + i % 500, CASE WHEN i % 23 = 0 THEN NULL ELSE i % 1000 END
    FROM generate_series(1, 4000) i;

SELECT plan(12);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_grouping_sets_minmax.by_rollup FRESHNESS = INTERVAL '1' SECOND AS
    SELECT site, kind, count(*) AS n, sum(ms) AS total, min(ms) AS fastest, max(size) AS largest,
           grouping(site, kind) AS level
      FROM tap_grouping_sets_minmax.events GROUP BY ROLLUP (site, kind);
  CREATE MATERIALIZED TABLE tap_grouping_sets_minmax.by_cube FRESHNESS = INTERVAL '1' SECOND AS
    SELECT site, at, min(size) AS smallest, max(ms) FILTER (WHERE kind <> 0) AS slowest, count(size) AS sized
      FROM tap_grouping_sets_minmax.events GROUP BY CUBE (site, at)
$m$)$$, 'the tables are created');
SELECT is((SELECT array_agg(t.maintenance || '/' || s.strategy ORDER BY t.table_name::text)
             FROM materialized_table.materialized_tables t
             JOIN materialized_table_internal.continuous_state s ON s.relid = t.table_name
            WHERE t.table_name IN (SELECT table_name FROM mine)),
          array_fill('INCREMENTAL/DELTAS'::text, ARRAY[2]), 'each is kept by deltas');
SELECT is((SELECT maintenance_detail FROM materialized_table.materialized_tables WHERE table_name = 'by_rollup'::regclass),
          'count, sum, avg, min and max per group of each of its 3 grouping sets are kept and adjusted by each changed row '
          'when the table is applied; the table is recomputed when a changed row removes the value of a min or max',
          'maintenance_detail says how, and when it recomputes');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN (SELECT table_name FROM tap_grouping_sets_minmax.mine)$$, 30),
            NULL, 'the worker takes them up');
SELECT isnt(converged(20), NULL, 'every table equals its query');
INSERT INTO mark SELECT clock_timestamp();

-- inserts, new extrema among them, a new group of a NULL site; one
-- transaction each, so that each is a cycle of its own
INSERT INTO events VALUES (5001, 's1', 2, '2026-03-01', 1, 5000);
SELECT isnt(converged(20), NULL, 'after an insert of new extrema every table equals its query');
INSERT INTO events SELECT 5001 + i, NULL, 7, '2026-03-02', 600 + i, 100 + i FROM generate_series(1, 20) i;
SELECT isnt(converged(20), NULL, 'after inserts of a new group every table equals its query');
-- a row removed that holds no extremum of its groups (in the middle of
-- its new group): adjusted too
DELETE FROM events WHERE id = 5010;
SELECT isnt(converged(20), NULL, 'after a delete of no extremum every table equals its query');
SELECT is(cycles('FULL'), 0::bigint, 'no cycle recomputed the tables');

-- the extremum removed: that cycle recomputes, the next one adjusts again
DELETE FROM events WHERE id = 5001;
SELECT isnt(converged(20), NULL, 'after the extremum is deleted every table equals its query');
SELECT cmp_ok(cycles('FULL'), '>', 0::bigint, 'its cycle recomputed, and says so');
UPDATE mark SET at = clock_timestamp();
INSERT INTO events VALUES (6001, 's2', 1, '2026-03-03', 2, 7);
SELECT ok(converged(20) IS NOT NULL AND cycles('FULL') = 0 AND cycles('DELTAS') > 0,
          'the next change is adjusted by deltas again');

SELECT * FROM finish();
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM mine \g /dev/null
DROP SCHEMA tap_grouping_sets_minmax CASCADE;
