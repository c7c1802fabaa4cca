-- One slow table does not hold back the others: a batch that changes the
-- sources of a quick table and of a slow one (its full recompute waits at
-- a gate the test holds closed) commits the quick table's work while the
-- slow one is still being recomputed, and the slow one catches up once the
-- gate opens.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_slow
\set with_src
\ir ../lib/tap_helpers.sql
SET search_path = tap_slow, public;

SELECT plan(5);

CREATE TABLE other (id int PRIMARY KEY, grp int NOT NULL, v int NOT NULL);
INSERT INTO other SELECT i, i % 5, i FROM generate_series(1, 100) i;
-- waits while this session holds advisory lock 4242 (its own queries pass);
-- immutable, so that the table is recomputed when its source changes, not
-- every freshness period, and slow enough (60 ms) to be measured as slow
CREATE FUNCTION gate() RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    PERFORM pg_sleep(0.06);
    WHILE NOT pg_try_advisory_lock_shared(4242) LOOP
        PERFORM pg_sleep(0.05);
    END LOOP;
    PERFORM pg_advisory_unlock_shared(4242);
    RETURN true;
END
$$;

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_slow.quick FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_slow.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_slow.slow FRESHNESS = INTERVAL '1' SECOND AS
    -- grouping sets with an aggregate deltas cannot keep: each change
    -- recomputes it in full
    SELECT grp, string_agg(v::text, ',' ORDER BY id) AS vs
      FROM tap_slow.other WHERE tap_slow.gate() GROUP BY ROLLUP (grp)$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes both tables up');
-- its first recompute measured the slow table as slow
SELECT isnt(converged(20), NULL, 'both equal their queries');

SELECT pg_advisory_lock(4242) \g /dev/null
BEGIN;
UPDATE src SET v = v + 1 WHERE id < 50;
UPDATE other SET v = 200 - v WHERE id < 10;
COMMIT;
SELECT isnt(wait_for($$SELECT mismatches('quick') = 0$$, 20), NULL,
            'the quick table shows the batch''s change');
SELECT ok(mismatches('slow') > 0 AND
          (SELECT query FROM pg_stat_activity WHERE pid = worker_pid()) LIKE '%maintaining slow%',
          'while the slow table of the same batch is still being recomputed');
SELECT pg_advisory_unlock(4242) \g /dev/null
SELECT isnt(converged(20), NULL, 'the slow table catches up once it can');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_slow.quick; DROP MATERIALIZED TABLE tap_slow.slow') \g /dev/null
RESET search_path;
DROP SCHEMA tap_slow CASCADE;
