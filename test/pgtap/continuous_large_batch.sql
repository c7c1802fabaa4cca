-- One transaction changing more rows than a cycle keeps one by one
-- (250,000): a single-source aggregate whose WHERE clause and arguments
-- cannot fail folds them into per-group adjustments as they are decoded and
-- stays incremental; one whose WHERE clause may fail (a division) keeps the
-- rows and recomputes; a partitioned source whose partitions lay their
-- columns out differently, with rows moving between partitions, folds
-- through the conversion to the parent's layout.  All converge to their
-- queries, with no failed cycle.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_lb
\ir ../lib/tap_helpers.sql
SET search_path = tap_lb, public;

CREATE TABLE big (id int PRIMARY KEY, grp int NOT NULL, v numeric(12,2), qty int NOT NULL);
INSERT INTO big SELECT i, i % 500, CASE WHEN i % 11 > 0 THEN (i % 1000) / 8.0 END, 1 + i % 7
  FROM generate_series(1, 300000) i;
CREATE TABLE parts (id int NOT NULL, grp int NOT NULL, v int) PARTITION BY RANGE (id);
CREATE TABLE parts_low PARTITION OF parts FOR VALUES FROM (MINVALUE) TO (5000);
-- columns in another order than the parent's, and a dropped one
CREATE TABLE parts_high (junk int, v int, grp int NOT NULL, id int NOT NULL);
ALTER TABLE parts_high DROP COLUMN junk;
ALTER TABLE parts ATTACH PARTITION parts_high FOR VALUES FROM (5000) TO (MAXVALUE);
INSERT INTO parts SELECT i, i % 30, i % 100 FROM generate_series(1, 10000) i;
ANALYZE big, parts;

SELECT plan(10);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_lb.folded FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total, avg(v) AS average, count(v) AS vs
      FROM tap_lb.big WHERE qty > 1 AND v IS NOT NULL GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_lb.unfolded FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_lb.big WHERE v / qty > 10 GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_lb.by_part FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_lb.parts GROUP BY grp
$m$)$$, 'three single-source aggregates are created');
SELECT is((SELECT array_agg(strategy ORDER BY relid::regclass::text)
             FROM materialized_table_internal.continuous_state
            WHERE relid IN ('folded'::regclass, 'unfolded'::regclass, 'by_part'::regclass)),
          ARRAY['DELTAS', 'DELTAS', 'DELTAS'], 'all are kept by deltas');
SELECT is((SELECT array_agg(maintenance_detail LIKE '%by each changed row as it is decoded%' ORDER BY table_name::text)
             FROM materialized_table.materialized_tables
            WHERE table_name IN ('folded'::regclass, 'unfolded'::regclass, 'by_part'::regclass)),
          ARRAY[true, true, false], 'by_part and folded fold rows as they are decoded, unfolded does not');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN ('tap_lb.folded'::regclass, 'tap_lb.unfolded'::regclass,
                                        'tap_lb.by_part'::regclass)$$, 60),
            NULL, 'the worker takes them up');

-- one transaction: every row of big updated (moving a third between
-- groups), some deleted, some inserted; rows of parts moved across
-- partitions, updated and deleted
BEGIN;
UPDATE big SET v = v + 1, grp = CASE WHEN id % 3 = 0 THEN (grp + 1) % 500 ELSE grp END;
DELETE FROM big WHERE id % 97 = 0;
INSERT INTO big SELECT i, i % 600, i % 50, 1 + i % 3 FROM generate_series(300001, 310000) i;
UPDATE parts SET id = id + 5000 WHERE id % 4 = 0 AND id < 5000;
UPDATE parts SET v = v * 2, grp = grp + 1 WHERE id % 5 = 0;
DELETE FROM parts WHERE id % 13 = 0;
COMMIT;

SELECT isnt(converged(180), NULL, 'after a transaction changing 320,000 rows, all converge');
SELECT is(mismatches('folded'), 0::bigint, 'folded equals its query');
SELECT is(mismatches('unfolded'), 0::bigint, 'unfolded equals its query');
SELECT is(mismatches('by_part'), 0::bigint, 'by_part equals its query');
SELECT ok((SELECT count(*) > 0 FROM folded), 'folded is not empty');
SELECT is((SELECT count(*) FROM materialized_table.refresh_history
            WHERE status = 'FAILED'
              AND table_name IN ('folded'::regclass, 'unfolded'::regclass, 'by_part'::regclass)),
          0::bigint, 'no cycle failed');

SELECT * FROM finish();
SELECT materialized_table.execute($$
  DROP MATERIALIZED TABLE tap_lb.folded; DROP MATERIALIZED TABLE tap_lb.unfolded;
  DROP MATERIALIZED TABLE tap_lb.by_part$$) \g /dev/null
RESET search_path;
DROP SCHEMA tap_lb CASCADE;
