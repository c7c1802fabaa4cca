-- Partitions of a source attached, detached and dropped: their rows come
-- or go without a change to decode.  The CONTINUOUS tables reading the
-- partitioned table are recomputed (the statement marks them, in its own
-- transaction: a ROLLBACK marks nothing), and the worker follows the
-- changes of a partition as they count then: a detached partition's no
-- longer, an attached one's from then on.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_pt
\ir ../lib/tap_helpers.sql
SET search_path = tap_pt, public;
CREATE TABLE src (id int, grp int NOT NULL, v int NOT NULL, PRIMARY KEY (id, grp)) PARTITION BY LIST (grp);
CREATE TABLE src_a PARTITION OF src FOR VALUES IN (1, 2);
CREATE TABLE src_b PARTITION OF src FOR VALUES IN (3, 4);
CREATE TABLE src_c (id int, grp int NOT NULL, v int NOT NULL, PRIMARY KEY (id, grp));
INSERT INTO src SELECT i, 1 + i % 4, i FROM generate_series(1, 400) i;
INSERT INTO src_c SELECT i, 5, i FROM generate_series(1, 50) i;
SELECT plan(8);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_pt.own FRESHNESS = INTERVAL '1' SECOND AS SELECT grp, count(*) AS n, sum(v) AS total FROM tap_pt.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_pt.tops FRESHNESS = INTERVAL '1' SECOND AS SELECT grp, max(v) AS top FROM tap_pt.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_pt.rows FRESHNESS = INTERVAL '1' SECOND AS SELECT id, grp, v FROM tap_pt.src WHERE v > 300$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the tables up');
ALTER TABLE src DETACH PARTITION src_b;
SELECT isnt(converged(10), NULL, 'a detached partition''s rows leave every table');
INSERT INTO src_b VALUES (1000, 3, 1000);
ALTER TABLE src ATTACH PARTITION src_c FOR VALUES IN (5);
SELECT isnt(converged(10), NULL, 'an attached partition''s rows join them, a detached one''s changes do not count');
INSERT INTO src_c VALUES (77, 5, 7);
UPDATE src_b SET v = v + 1;
SELECT isnt(converged(10), NULL, 'an attached partition''s changes count');
DROP TABLE src_a;
SELECT isnt(converged(10), NULL, 'a dropped partition''s rows leave every table');
BEGIN; ALTER TABLE src DETACH PARTITION src_c; ROLLBACK;
SELECT pg_sleep(1.5) \g /dev/null
SELECT isnt(converged(10), NULL, 'after a DETACH rolled back the tables still equal their queries');
SELECT is(mismatches('own') + mismatches('tops') + mismatches('rows'), 0::bigint,
          'deltas and keys tables equal their queries');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_pt.own; DROP MATERIALIZED TABLE tap_pt.tops; DROP MATERIALIZED TABLE tap_pt.rows') \g /dev/null
DROP SCHEMA tap_pt CASCADE;
