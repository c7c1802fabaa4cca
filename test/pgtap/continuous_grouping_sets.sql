-- CONTINUOUS tables of GROUPING SETS, ROLLUP and CUBE, of one table or a
-- join, kept by deltas: each changed row adjusts its group in every set.  Each table
-- holds exactly its query's rows after inserts, updates that move rows
-- between groups, deletes that empty groups, NULLs in the grouped columns
-- (a data NULL beside the NULL of a set that leaves the column out), all
-- rows gone (the set of no columns keeps its one row) and a suspension
-- (the adjustments kept, then applied on RESUME); its cycles by deltas
-- (each cycle's strategy in refresh_history; a TRUNCATE, which recomputes,
-- shows that a recompute would be seen).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_grouping_sets
\set with_cycles
\ir ../lib/tap_helpers.sql
SET search_path = tap_grouping_sets, public;

CREATE TABLE sales (id int PRIMARY KEY, region text, product int, ts timestamp NOT NULL,
                    amount numeric(12, 2), qty int NOT NULL);
INSERT INTO sales
  SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE 'r' || (i % 4) END, i % 6,
         timestamp '2026-01-01 00:00' + i * interval '7 minutes',
         CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 50) * 1.25 END, 1 + i % 5
    FROM generate_series(1, 3000) i;
CREATE TABLE products (id int PRIMARY KEY, category text NOT NULL);
INSERT INTO products SELECT i, 'cat' || (i % 3) FROM generate_series(0, 5) i;


SELECT plan(16);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_grouping_sets.by_rollup FRESHNESS = INTERVAL '1' SECOND AS
    SELECT region, product, count(*) AS n, sum(amount) AS total, avg(qty) AS mean_qty,
           grouping(region, product) AS level
      FROM tap_grouping_sets.sales GROUP BY ROLLUP (region, product);
  CREATE MATERIALIZED TABLE tap_grouping_sets.by_cube FRESHNESS = INTERVAL '1' SECOND AS
    SELECT region, date_trunc('day', ts) AS day, count(*) FILTER (WHERE amount > 20) AS big,
           sum(qty) AS qty, grouping(date_trunc('day', ts)) AS all_days
      FROM tap_grouping_sets.sales WHERE product <> 5 GROUP BY CUBE (region, date_trunc('day', ts))
    HAVING count(*) > 2;
  CREATE MATERIALIZED TABLE tap_grouping_sets.by_sets FRESHNESS = INTERVAL '1' SECOND AS
    SELECT region, product, qty, count(*) AS n, count(amount) AS priced
      FROM tap_grouping_sets.sales GROUP BY GROUPING SETS ((region, product), (qty), ());
  CREATE MATERIALIZED TABLE tap_grouping_sets.by_region_rollup FRESHNESS = INTERVAL '1' SECOND AS
    SELECT region, product, sum(amount * qty) AS value
      FROM tap_grouping_sets.sales GROUP BY region, ROLLUP (product);
  CREATE MATERIALIZED TABLE tap_grouping_sets.by_category FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.category, s.region, count(*) AS n, sum(s.amount) AS total
      FROM tap_grouping_sets.sales s JOIN tap_grouping_sets.products p ON p.id = s.product
     GROUP BY ROLLUP (p.category, s.region)
$m$)$$, 'the tables are created');
SELECT is((SELECT array_agg(t.maintenance || '/' || s.strategy ORDER BY t.table_name::text)
             FROM materialized_table.materialized_tables t
             JOIN materialized_table_internal.continuous_state s ON s.relid = t.table_name
            WHERE t.table_name IN (SELECT table_name FROM mine)),
          array_fill('INCREMENTAL/DELTAS'::text, ARRAY[5]), 'each is kept by deltas');
SELECT is((SELECT maintenance_detail FROM materialized_table.materialized_tables WHERE table_name = 'by_rollup'::regclass),
          'count, sum and avg per group of each of its 3 grouping sets are kept and adjusted by each changed row as it is decoded',
          'maintenance_detail says how');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN (SELECT table_name FROM tap_grouping_sets.mine)$$, 30),
            NULL, 'the worker takes them up');
SELECT isnt(converged(20), NULL, 'every table equals its query');
INSERT INTO mark SELECT clock_timestamp();

-- rows move between groups; a group of a data NULL region appears
UPDATE sales SET region = 'r9' WHERE id % 10 = 1;
UPDATE sales SET amount = amount + 1, qty = 7 WHERE id % 15 = 2;
UPDATE sales SET region = NULL, product = 2 WHERE id IN (4, 8);
INSERT INTO sales VALUES (5001, NULL, NULL, '2026-03-01', 3.50, 2), (5002, 'r0', NULL, '2026-03-01', NULL, 3);
SELECT isnt(converged(20), NULL, 'after updates and inserts every table equals its query');
-- a product changes category: through the join, by deltas too
UPDATE products SET category = 'cat9' WHERE id = 2;
SELECT isnt(converged(20), NULL, 'after a change of the joined table every table equals its query');
-- groups emptied: a region, a product within one
DELETE FROM sales WHERE region = 'r1';
DELETE FROM sales WHERE region = 'r2' AND product = 4;
SELECT isnt(converged(20), NULL, 'after deletes that empty groups every table equals its query');
SELECT is((SELECT count(*) FROM by_rollup WHERE region = 'r1'), 0::bigint, 'an emptied group is gone');

-- every row gone: the set of no columns keeps its one row
DELETE FROM sales;
SELECT isnt(converged(20), NULL, 'after every row is deleted every table equals its query');
SELECT is((SELECT n FROM by_rollup), 0::bigint, 'the row of the empty grouping set stays, with a count of 0');

-- suspended: the adjustments are kept, and applied on RESUME
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_grouping_sets.by_rollup SUSPEND') \g /dev/null
INSERT INTO sales SELECT i, 'r' || (i % 3), i % 2, timestamp '2026-02-01 00:00' + i * interval '1 hour', i, 1
  FROM generate_series(1, 40) i;
SELECT pg_sleep(1.5) \g /dev/null
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_grouping_sets.by_rollup RESUME') \g /dev/null
SELECT isnt(converged(20), NULL, 'after a suspension every table equals its query');

SELECT is(cycles('FULL'), 0::bigint, 'no table was recomputed whole');
SELECT cmp_ok(cycles('DELTAS'), '>=', 12::bigint, 'the tables applied their changes by deltas');

-- positive control: a TRUNCATE recomputes, and says so
TRUNCATE sales;
INSERT INTO sales VALUES (1, 'r0', 1, '2026-01-01', 2, 1);
SELECT isnt(converged(20), NULL, 'after a TRUNCATE and new rows the tables follow');
SELECT cmp_ok(cycles('FULL'), '>', 0::bigint, 'a recompute would have been seen');

SELECT * FROM finish();
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM mine \g /dev/null
DROP SCHEMA tap_grouping_sets CASCADE;
