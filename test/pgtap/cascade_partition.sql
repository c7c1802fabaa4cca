-- A partition backfill cascading through two levels of materialized
-- tables: only the partition named is recomputed at every level (a
-- partition that does not exist yet is created at every level), the other
-- partitions keep their content, and the three runs share a cascade id.
--
-- Not wrapped in a transaction, like the other files: it cleans up itself.
SET client_min_messages = warning;
SET timezone = 'UTC';
CREATE SCHEMA tap_cp;
CREATE TABLE tap_cp.sales (ds text NOT NULL, shop text NOT NULL, amount int NOT NULL);
INSERT INTO tap_cp.sales VALUES
  ('2024-06-01', 'a', 10), ('2024-06-01', 'b', 20),
  ('2024-06-02', 'a', 30), ('2024-06-02', 'b', 40);

SELECT plan(14);

SELECT lives_ok($$SELECT materialized_table.execute('
  CREATE MATERIALIZED TABLE tap_cp.by_shop PARTITIONED BY (ds) FRESHNESS = INTERVAL ''1'' DAY
    AS SELECT ds, shop, sum(amount) AS total FROM tap_cp.sales GROUP BY ds, shop;
  CREATE MATERIALIZED TABLE tap_cp.by_day PARTITIONED BY (ds) FRESHNESS = INTERVAL ''1'' DAY
    AS SELECT ds, sum(total) AS total, count(*) AS shops FROM tap_cp.by_shop GROUP BY ds;
  CREATE MATERIALIZED TABLE tap_cp.best_day PARTITIONED BY (ds) FRESHNESS = INTERVAL ''1'' DAY
    AS SELECT ds, total FROM tap_cp.by_day WHERE total >= 30;
  ALTER MATERIALIZED TABLE tap_cp.by_shop SUSPEND;
  ALTER MATERIALIZED TABLE tap_cp.by_day SUSPEND;
  ALTER MATERIALIZED TABLE tap_cp.best_day SUSPEND')$$,
  'three partitioned tables, two levels below the first');
SELECT results_eq($$SELECT downstream::text, downstream_level FROM materialized_table.lineage
                    WHERE upstream_kind = 'MATERIALIZED TABLE' AND downstream::text LIKE 'tap_cp.%'
                    ORDER BY 2$$,
                  $$VALUES ('tap_cp.by_day', 2), ('tap_cp.best_day', 3)$$,
                  'the lineage has them on levels 1, 2 and 3');

-- sources change in two days, and a third day appears
UPDATE tap_cp.sales SET amount = amount + 1;
INSERT INTO tap_cp.sales VALUES ('2024-06-03', 'a', 50);
CREATE TEMP TABLE mark AS SELECT coalesce(max(run_id), 0) AS run_id FROM materialized_table.refresh_history;

SELECT results_eq($$SELECT table_name::text, depth, status
                      FROM materialized_table.refresh('tap_cp.by_shop', '{"ds": "2024-06-01"}', true)$$,
                  $$VALUES ('tap_cp.by_shop', 0, 'SUCCEEDED'), ('tap_cp.by_day', 1, 'SUCCEEDED'),
                           ('tap_cp.best_day', 2, 'SUCCEEDED')$$,
                  'the backfill of 2024-06-01 runs through both levels, upstream first');
SELECT results_eq($$SELECT ds, total FROM tap_cp.by_day ORDER BY ds$$,
                  $$VALUES ('2024-06-01', 32::numeric), ('2024-06-02', 70::numeric)$$,
                  'level 1: the day named is recomputed, the other day keeps its content');
SELECT results_eq($$SELECT ds, total FROM tap_cp.best_day ORDER BY ds$$,
                  $$VALUES ('2024-06-01', 32::numeric), ('2024-06-02', 70::numeric)$$,
                  'level 2: the day named is recomputed from level 1 (32 now passes its filter)');
SELECT results_eq($$SELECT ds, shop, total FROM tap_cp.by_shop WHERE ds = '2024-06-02' ORDER BY shop$$,
                  $$VALUES ('2024-06-02', 'a', 30::bigint), ('2024-06-02', 'b', 40::bigint)$$,
                  'the first table''s other partition is untouched');
SELECT results_eq($$SELECT table_name::text, trigger, partition, status
                      FROM materialized_table.refresh_history
                     WHERE run_id > (SELECT run_id FROM mark) ORDER BY run_id$$,
                  $$VALUES ('tap_cp.by_shop', 'MANUAL', 'ds=''2024-06-01''', 'SUCCEEDED'),
                           ('tap_cp.by_day', 'CASCADE', 'ds=''2024-06-01''', 'SUCCEEDED'),
                           ('tap_cp.best_day', 'CASCADE', 'ds=''2024-06-01''', 'SUCCEEDED')$$,
                  'each run is in the history with the partition');
SELECT is((SELECT count(DISTINCT cascade_id) FROM materialized_table.refresh_history
            WHERE run_id > (SELECT run_id FROM mark) AND cascade_id IS NOT NULL),
          1::bigint, 'and one cascade id');

-- a day no table has yet: its partition is created at every level
TRUNCATE mark;
INSERT INTO mark SELECT max(run_id) FROM materialized_table.refresh_history;
SELECT results_eq($$SELECT status FROM materialized_table.refresh('tap_cp.by_shop', '{"ds": "2024-06-03"}', true)$$,
                  $$VALUES ('SUCCEEDED'), ('SUCCEEDED'), ('SUCCEEDED')$$,
                  'the backfill of a new day runs through both levels');
SELECT results_eq($$SELECT tableoid::regclass::text, total FROM tap_cp.best_day WHERE ds = '2024-06-03'$$,
                  $$VALUES ('tap_cp.best_day_2024_06_03', 50::numeric)$$,
                  'the new day has a partition of its own two levels down');
SELECT is((SELECT count(*) FROM pg_partition_tree('tap_cp.by_day') WHERE isleaf), 3::bigint,
          'and one level down');

-- the same days again: nothing changes, nothing is rewritten
SELECT results_eq($$SELECT rows FROM materialized_table.refresh('tap_cp.by_shop', '{"ds": "2024-06-03"}', true)$$,
                  $$VALUES (0::bigint), (0::bigint), (0::bigint)$$,
                  'a backfill of unchanged data writes no rows');

-- a failure on level 1 fails level 2 too, and the first level's work stays
UPDATE tap_cp.sales SET amount = amount + 1 WHERE ds = '2024-06-02';
ALTER TABLE tap_cp.by_day ADD CONSTRAINT few_shops CHECK (shops < 2) NOT VALID;
SET client_min_messages = error;  -- the cascade warns about both failures
SELECT results_eq($$SELECT status FROM materialized_table.refresh('tap_cp.by_shop', '{"ds": "2024-06-02"}', true)$$,
                  $$VALUES ('SUCCEEDED'), ('FAILED'), ('FAILED')$$,
                  'a failing level 1 fails level 2');
SET client_min_messages = warning;
SELECT results_eq($$SELECT ds, shop, total FROM tap_cp.by_shop WHERE ds = '2024-06-02' ORDER BY shop$$,
                  $$VALUES ('2024-06-02', 'a', 32::bigint), ('2024-06-02', 'b', 42::bigint)$$,
                  'the first table''s partition is refreshed all the same');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_cp.best_day; DROP MATERIALIZED TABLE tap_cp.by_day; DROP MATERIALIZED TABLE tap_cp.by_shop') \g /dev/null
DROP SCHEMA tap_cp CASCADE;
