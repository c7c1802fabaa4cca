-- The pipeline follows a rename, and a table created in the native
-- spelling is maintained as one created through execute(): CONTINUOUS
-- tables renamed by ALTER MATERIALIZED TABLE ... RENAME TO and by ALTER
-- MATERIALIZED VIEW ... RENAME TO go on following their sources' changes,
-- with their history; a native table switched to suspended holds still and
-- catches up when activated.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_rn
\set with_src
\ir ../lib/tap_helpers.sql
SET search_path = tap_rn, public;

SELECT plan(10);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_rn.flink_sums FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_rn.src GROUP BY grp$$) \g /dev/null
CREATE MATERIALIZED VIEW tap_rn.native_tops WITH (materialized_table.freshness = '1 second')
  AS SELECT grp, max(v) AS top FROM tap_rn.src GROUP BY grp;
SELECT isnt(wait_for($$SELECT count(*) = 2 AND bool_and(synced) FROM materialized_table_internal.continuous_state
                       WHERE relid IN ('tap_rn.flink_sums'::regclass, 'tap_rn.native_tops'::regclass)$$, 20),
            NULL, 'the worker takes both tables up');

-- renamed, both ways, then the sources change
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_rn.flink_sums RENAME TO sums') \g /dev/null
ALTER MATERIALIZED VIEW tap_rn.native_tops RENAME TO tops;
UPDATE src SET v = v + 1 WHERE id % 3 = 0;
INSERT INTO src SELECT i, i % 20, i % 100 FROM generate_series(5001, 5200) i;
SELECT isnt(converged(20), NULL, 'the renamed tables follow the changes');
SELECT is(mismatches('sums'), 0::bigint, 'sums (renamed through execute()) equals its query');
SELECT is(mismatches('tops'), 0::bigint, 'tops (renamed natively) equals its query');
SELECT ok((SELECT count(*) FROM materialized_table.refresh_history
            WHERE table_name = 'sums'::regclass AND trigger = 'CONTINUOUS' AND status = 'SUCCEEDED') > 0,
          'the history of sums goes on under its new name');

-- suspended natively: it holds still; activated: it catches up
ALTER MATERIALIZED VIEW tops SET (materialized_table.refresh_status = 'suspended');
SELECT pg_sleep(1) \g /dev/null
CREATE TEMP TABLE before AS SELECT * FROM tops;
UPDATE src SET v = v + 1000 WHERE id % 7 = 0;
SELECT pg_sleep(2) \g /dev/null
SELECT is((SELECT count(*) FROM (SELECT * FROM tops EXCEPT SELECT * FROM before) d), 0::bigint,
          'a suspended table holds still');
SELECT ok(mismatches('tops') > 0, 'while its query has moved on');
ALTER MATERIALIZED VIEW tops RESET (materialized_table.refresh_status);
SELECT isnt(wait_for($$SELECT tap_rn.mismatches('tap_rn.tops') = 0$$, 20), NULL,
            'activated, it catches up with nothing lost');
SELECT is(mismatches('sums'), 0::bigint, 'sums followed all along');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');

SELECT * FROM finish();
DROP MATERIALIZED VIEW tap_rn.tops;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_rn.sums') \g /dev/null
RESET search_path;
DROP SCHEMA tap_rn CASCADE;
