-- Row filters: what a query's WHERE and inner joins' ON say of one
-- source alone (TPC-H Q19's ship modes and quantities, OR'd across its
-- three arms; a part's brand) is checked on each changed row as it is
-- decoded, and a row that fails it is left out.  The table stays equal
-- to its query through rows that move into and out of the conditions,
-- on both sources of the join, in a partition whose columns are in
-- another order; and a change of rows that all fail them gives the table
-- no cycle at all, where the same change of rows that pass does (the
-- control that shows the rows are left out: without the filters, each
-- gives a DELTAS cycle).  The same for keys over an outer join, where only
-- the preserved side is filtered (a row of the nullable side that fails
-- the WHERE clause can still take a NULL-extended row away).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_rf
\set with_steps
\ir ../lib/tap_helpers.sql
SET search_path = tap_rf, public;

CREATE TABLE part (id int PRIMARY KEY, brand text NOT NULL, size int NOT NULL);
CREATE TABLE line (id int NOT NULL, part_id int NOT NULL, qty numeric(12,2) NOT NULL,
                   mode text NOT NULL, price numeric(10,2) NOT NULL) PARTITION BY RANGE (id);
CREATE TABLE line_low PARTITION OF line FOR VALUES FROM (0) TO (5000);
-- (its own column order: rows are converted to line's before the filter)
CREATE TABLE line_high (price numeric(10,2) NOT NULL, mode text NOT NULL, id int NOT NULL,
                        qty numeric(12,2) NOT NULL, part_id int NOT NULL);
ALTER TABLE line ATTACH PARTITION line_high FOR VALUES FROM (5000) TO (100000);
ALTER TABLE line_low REPLICA IDENTITY FULL;
ALTER TABLE line_high REPLICA IDENTITY FULL;
ALTER TABLE part REPLICA IDENTITY FULL;
INSERT INTO part SELECT i, 'Brand#' || (i % 5), 1 + i % 20 FROM generate_series(1, 200) i;
INSERT INTO line SELECT i, 1 + i % 200, i % 40, (ARRAY['AIR', 'SHIP', 'MAIL', 'RAIL'])[1 + i % 4],
                        (i % 50) / 4.0
  FROM generate_series(1, 8000) i;
ANALYZE part, line;

SELECT plan(31);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_rf.revenue FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.brand, count(*) AS lines, sum(l.price * (100 - l.qty)) AS revenue
      FROM tap_rf.line l JOIN tap_rf.part p ON p.id = l.part_id
     WHERE (p.brand = 'Brand#1' AND l.qty >= 1 AND l.qty <= 1 + 10 AND l.mode IN ('AIR', 'MAIL'))
        OR (p.brand = 'Brand#2' AND l.qty >= 20 AND l.qty <= 20 + 10 AND l.mode IN ('AIR', 'MAIL')
            AND p.size BETWEEN 1 AND 10)
     GROUP BY p.brand$$) \g /dev/null
SELECT isnt(wait_for($$SELECT synced FROM materialized_table_internal.continuous_state
                        WHERE relid = 'tap_rf.revenue'::regclass$$, 20), NULL, 'the worker takes the table up');
SELECT matches(maintenance_detail, 'by each changed row of line and of part, .*; changed rows of line, part that fail the query''s conditions on their own columns are left out as they are decoded',
               'both sources of the join adjust the groups, and what they say of each is checked as it is decoded')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_rf.revenue'::regclass;
SELECT is((SELECT count(*) FROM revenue), 2::bigint, 'two groups to begin with');

-- (the worker is done with its first cycles)
SELECT pg_sleep(2) \g /dev/null

-- lines that fail the conditions on line alone, in both partitions: no cycle
CALL step($$UPDATE tap_rf.line SET price = price + 1 WHERE mode IN ('SHIP', 'RAIL')$$,
          $$DELETE FROM tap_rf.line WHERE mode = 'RAIL' AND id % 10 = 3$$,
          $$INSERT INTO tap_rf.line SELECT i, 1 + i % 200, i % 40, 'SHIP', 1 FROM generate_series(8001, 8200) i$$);
SELECT pg_sleep(3) \g /dev/null
SELECT is(cycles_since('revenue'), '', 'changed lines that fail the conditions give it no cycle');
SELECT is(mismatches('revenue'), 0::bigint, 'and it equals its query');

-- the control: the same kind of change of lines that pass them
CALL step($$UPDATE tap_rf.line SET price = price + 1 WHERE mode = 'AIR' AND qty BETWEEN 1 AND 11$$);
SELECT isnt(converged(20), NULL, 'lines that pass the conditions: converged');
SELECT is(mismatches('revenue'), 0::bigint, 'and it equals its query');
SELECT isnt(wait_for($$SELECT tap_rf.cycles_since('tap_rf.revenue') = 'DELTAS'$$, 10), NULL,
            'they give it a cycle, by deltas');

-- lines moved into the conditions and out of them, in both partitions
CALL step($$UPDATE tap_rf.line SET mode = 'AIR' WHERE mode = 'SHIP' AND id % 7 = 0$$,
          $$UPDATE tap_rf.line SET mode = 'RAIL' WHERE mode = 'MAIL' AND id % 5 = 0$$,
          $$UPDATE tap_rf.line SET qty = qty + 15 WHERE id % 11 = 0$$);
SELECT isnt(converged(20), NULL, 'lines moved into and out of the conditions: converged');
SELECT is(mismatches('revenue'), 0::bigint, 'and it equals its query');
SELECT isnt(wait_for($$SELECT tap_rf.cycles_since('tap_rf.revenue') = 'DELTAS'$$, 10), NULL, 'by deltas');

-- parts: out of the brands (no cycle), then into them and out of them
CALL step($$UPDATE tap_rf.part SET size = size + 1 WHERE brand IN ('Brand#0', 'Brand#3')$$);
SELECT pg_sleep(3) \g /dev/null
SELECT is(cycles_since('revenue'), '', 'changed parts of other brands give it no cycle');
CALL step($$UPDATE tap_rf.part SET brand = 'Brand#2' WHERE id % 10 = 3$$,
          $$UPDATE tap_rf.part SET brand = 'Brand#4' WHERE id % 10 = 1$$,
          $$UPDATE tap_rf.part SET size = 15 WHERE id % 10 = 2$$);
SELECT isnt(converged(20), NULL, 'parts moved into and out of the brands and sizes: converged');
SELECT is(mismatches('revenue'), 0::bigint, 'and it equals its query');
SELECT isnt(wait_for($$SELECT tap_rf.cycles_since('tap_rf.revenue') = 'DELTAS'$$, 10), NULL, 'by deltas');

-- both in one transaction, with new lines and deleted ones
CALL step($$UPDATE tap_rf.part SET brand = 'Brand#1' WHERE id % 10 = 4$$,
          $$INSERT INTO tap_rf.line SELECT i, 1 + i % 200, i % 40, 'MAIL', 2 FROM generate_series(8201, 8600) i$$,
          $$DELETE FROM tap_rf.line WHERE id % 13 = 0$$,
          $$UPDATE tap_rf.line SET mode = 'AIR', qty = 5 WHERE id % 17 = 0$$);
SELECT isnt(converged(20), NULL, 'both sources in one transaction: converged');
SELECT is(mismatches('revenue'), 0::bigint, 'and it equals its query');

SELECT ok((SELECT count(*) FROM materialized_table.refresh_history h
            WHERE h.table_name = 'tap_rf.revenue'::regclass AND h.status <> 'SUCCEEDED') = 0,
          'no cycle failed');
-- keys: over an outer join, the preserved side's conditions filter its
-- rows; the nullable side's do not (a line that fails "l.id IS NULL" still
-- takes its part out of lonely)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_rf.small_parts FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.id, p.brand, count(l.id) AS lines, string_agg(l.mode, ',' ORDER BY l.id) AS modes
      FROM tap_rf.part p LEFT JOIN tap_rf.line l ON l.part_id = p.id AND l.mode = 'AIR'
     WHERE p.size < 5 GROUP BY p.id, p.brand;
  CREATE MATERIALIZED TABLE tap_rf.lonely FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.id FROM tap_rf.part p LEFT JOIN tap_rf.line l ON l.part_id = p.id
     WHERE l.id IS NULL AND p.size > 0$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN ('tap_rf.small_parts'::regclass, 'tap_rf.lonely'::regclass)$$, 20),
            NULL, 'the worker takes up the outer joins');
SELECT matches(maintenance_detail, 'rows are recomputed .*; changed rows of part that fail the query''s conditions',
               'by keys, the preserved side filtered')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_rf.small_parts'::regclass;
SELECT matches(maintenance_detail, 'changed rows of part that fail',
               'of lonely too: the part, not the line')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_rf.lonely'::regclass;
SELECT pg_sleep(2) \g /dev/null
CALL step($$UPDATE tap_rf.part SET brand = brand || 'x' WHERE size >= 5$$);
SELECT pg_sleep(3) \g /dev/null
SELECT is(cycles_since('small_parts'), '', 'changed parts of other sizes give it no cycle');
SELECT is(mismatches('small_parts'), 0::bigint, 'and it equals its query');
CALL step($$UPDATE tap_rf.part SET size = 3 WHERE id % 10 = 5$$,
          $$INSERT INTO tap_rf.part VALUES (1001, 'Brand#9', 2), (1002, 'Brand#9', 7)$$,
          $$INSERT INTO tap_rf.line VALUES (9001, 1001, 1, 'AIR', 1), (9002, 1001, 1, 'SHIP', 1)$$);
SELECT isnt(converged(20), NULL, 'parts into the sizes, a new part with lines: converged');
SELECT is(mismatches('small_parts'), 0::bigint, 'and small_parts equals its query');
SELECT is(mismatches('lonely'), 0::bigint, 'and lonely too');
CALL step($$INSERT INTO tap_rf.line VALUES (9003, 1002, 1, 'RAIL', 1)$$);
SELECT isnt(converged(20), NULL, 'a line for a lonely part: converged');
SELECT ok(NOT EXISTS (SELECT 1 FROM lonely WHERE id = 1002), 'the part is no longer lonely');

-- a condition with a subquery is never checked while decoding (a subquery
-- cannot be prepared for a row), even one that reads no column
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_rf.sized FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.id, p.size FROM tap_rf.part p WHERE p.size > (SELECT 3) AND p.brand <> 'none'$$) \g /dev/null
SELECT isnt(wait_for($$SELECT synced FROM materialized_table_internal.continuous_state
                        WHERE relid = 'tap_rf.sized'::regclass$$, 20), NULL, 'the worker takes it up');
CALL step($$UPDATE tap_rf.part SET size = size + 2 WHERE id % 3 = 0$$);
SELECT isnt(converged(20), NULL, 'changed parts: converged');
SELECT is(mismatches('sized'), 0::bigint, 'and it equals its query');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_rf.revenue') \g /dev/null
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_rf.small_parts') \g /dev/null
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_rf.lonely') \g /dev/null
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_rf.sized') \g /dev/null
RESET search_path;
DROP SCHEMA tap_rf CASCADE;
