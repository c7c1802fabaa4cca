-- CONTINUOUS tables of a global aggregate that deltas cannot keep (TPC-H
-- Q17's sum over a join filtered by a correlated avg, string_agg and
-- count(DISTINCT) of a whole filtered table): the rows it aggregates are
-- kept by keys in a hidden state and the aggregate computed from them.
-- Each table holds exactly its query's rows after changes of every source,
-- its cycles by keys (each cycle's strategy in refresh_history; a
-- TRUNCATE, which recomputes, shows that a recompute would be seen).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_kept_input
\set with_cycles
\ir ../lib/tap_helpers.sql
SET search_path = tap_kept_input, public;

CREATE TABLE part (p_partkey int PRIMARY KEY, p_brand text NOT NULL, p_container text NOT NULL);
CREATE TABLE lineitem (l_orderkey int, l_linenumber int, l_partkey int NOT NULL,
                       l_quantity numeric(15,2) NOT NULL, l_extendedprice numeric(15,2) NOT NULL,
                       PRIMARY KEY (l_orderkey, l_linenumber));
CREATE INDEX ON lineitem (l_partkey);
INSERT INTO part SELECT i, 'Brand#' || (i % 5), CASE WHEN i % 3 = 0 THEN 'MED BOX' ELSE 'LG CASE' END
  FROM generate_series(1, 300) i;
INSERT INTO lineitem SELECT i / 4, i % 4, 1 + (i * 7) % 300, 1 + (i / 11) % 50, 100 + i % 97
  FROM generate_series(4, 12000) i;


SELECT plan(12);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_kept_input.avg_yearly FRESHNESS = INTERVAL '1' SECOND AS
    SELECT sum(l_extendedprice) / 7.0 AS avg_yearly FROM tap_kept_input.lineitem, tap_kept_input.part
     WHERE p_partkey = l_partkey AND p_brand = 'Brand#3' AND p_container = 'MED BOX'
       AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM tap_kept_input.lineitem WHERE l_partkey = p_partkey);
  CREATE MATERIALIZED TABLE tap_kept_input.brand_list FRESHNESS = INTERVAL '1' SECOND AS
    SELECT string_agg(p_brand, ',' ORDER BY p_partkey) AS brands, count(DISTINCT p_container) AS containers
      FROM tap_kept_input.part WHERE p_partkey < 40;
  CREATE MATERIALIZED TABLE tap_kept_input.distinct_quantities FRESHNESS = INTERVAL '1' SECOND AS
    SELECT count(DISTINCT l.l_quantity) AS n, bool_and(l.l_extendedprice > 100) AS all_above
      FROM tap_kept_input.lineitem l JOIN tap_kept_input.part p ON p.p_partkey = l.l_partkey
     WHERE p.p_container = 'MED BOX' AND p.p_partkey % 10 = 3
$m$)$$, 'the tables are created');
SELECT is((SELECT array_agg(t.maintenance || '/' || s.strategy ORDER BY t.table_name::text)
             FROM materialized_table.materialized_tables t
             JOIN materialized_table_internal.continuous_state s ON s.relid = t.table_name
            WHERE t.table_name IN (SELECT table_name FROM mine)),
          array_fill('INCREMENTAL/KEYS'::text, ARRAY[3]), 'each is kept by keys');
SELECT is((SELECT maintenance_detail FROM materialized_table.materialized_tables WHERE table_name = 'brand_list'::regclass),
          'the rows it aggregates are kept in a hidden table, recomputed for the changed values of p_partkey, and the table is computed from them',
          'maintenance_detail says how');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN (SELECT table_name FROM tap_kept_input.mine)$$, 30),
            NULL, 'the worker takes them up');
SELECT isnt(converged(20), NULL, 'every table equals its query');
SELECT ok((SELECT avg_yearly IS NOT NULL FROM avg_yearly), 'the sum has rows to add');
INSERT INTO mark SELECT clock_timestamp();

-- lines under and over the correlated average; a part changes brand
UPDATE lineitem SET l_quantity = 1 WHERE l_partkey = 18 AND l_linenumber = 1;
INSERT INTO lineitem VALUES (9000, 1, 33, 1, 5000), (9000, 2, 48, 49, 700);
SELECT isnt(converged(20), NULL, 'after changes of lineitem every table equals its query');
UPDATE part SET p_brand = 'Brand#3' WHERE p_partkey IN (6, 9, 12);
UPDATE part SET p_container = 'LG CASE' WHERE p_partkey = 3;
DELETE FROM lineitem WHERE l_partkey = 13 AND l_linenumber = 2;
SELECT isnt(converged(20), NULL, 'after changes of both sources every table equals its query');

SELECT is(cycles('FULL'), 0::bigint, 'no table was recomputed whole');
SELECT cmp_ok(cycles('KEYS'), '>=', 4::bigint, 'the tables applied their changes by keys');

-- positive control: a TRUNCATE recomputes, and says so
TRUNCATE lineitem;
INSERT INTO lineitem VALUES (1, 1, 3, 1, 100), (1, 2, 3, 40, 200);
SELECT isnt(converged(20), NULL, 'after a TRUNCATE and new rows the tables follow');
SELECT cmp_ok(cycles('FULL'), '>', 0::bigint, 'a recompute would have been seen');

SELECT * FROM finish();
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM mine \g /dev/null
DROP SCHEMA tap_kept_input CASCADE;
