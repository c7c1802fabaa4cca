-- Found by the differential test: seed 20 q0307 (CI mode, shape
-- deltas_group); earlier generators found it as seed 20 q0229 (deltas_join)
-- and seed 7 q1070 (long mode).
--
-- A DELTAS table grouped by a numeric of no declared scale (a column, or
-- an expression such as m * 2) shows a group that adjustments created with
-- its display scale lost: 2.5 where every source row (and the query) has
-- 2.50, 5 where the query shows 5.00.  A group the initial computation
-- wrote keeps its text; so does one whose key has a declared scale.  Seen
-- on one source (folded while decoding, or when the table is applied) and
-- through a join (changes of the fact adjusted through the dimension).
--
-- Expected: each table equals its query, digit for digit:
--    t     | table | 2.50 | 1        t     | query | 2.50 | 1
--    t2    | table | 5.00 | 1        t2    | query | 5.00 | 1
--    join  | table | 2.50 | 1        join  | query | 2.50 | 1
-- Got (main at a570a95 and at fc97965): the tables hold 2.5, 5 and 2.5.
-- Fixed by ed98bce (groups keep the text they first came with; test
-- pgtap continuous_aggregates).
--
-- psql -X -f test/diff/repro/01_deltas_numeric_group_display.sql
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS r01 CASCADE;
CREATE SCHEMA r01;
CREATE TABLE r01.t (id int PRIMARY KEY, m numeric);
CREATE TABLE r01.d (id int PRIMARY KEY, m numeric);
CREATE TABLE r01.fact (id int PRIMARY KEY, d_id int);
INSERT INTO r01.t VALUES (1, 2.50);
INSERT INTO r01.d VALUES (1, 2.50);
SELECT materialized_table.execute($mt$CREATE MATERIALIZED TABLE r01.g FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS
  AS SELECT m, count(*) AS n FROM r01.t WHERE id > 1 GROUP BY m$mt$);
SELECT materialized_table.execute($mt$CREATE MATERIALIZED TABLE r01.g2 FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS
  AS SELECT m * 2 AS m2, count(*) AS n FROM r01.t WHERE id > 1 GROUP BY m * 2$mt$);
SELECT materialized_table.execute($mt$CREATE MATERIALIZED TABLE r01.gj FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS
  AS SELECT d.m, count(*) AS n FROM r01.fact f JOIN r01.d d ON d.id = f.d_id GROUP BY d.m$mt$);
SELECT pg_sleep(2);
INSERT INTO r01.t VALUES (2, 2.50);
INSERT INTO r01.fact VALUES (1, 1);
SELECT pg_sleep(3);
SELECT 't' AS tbl, 'table' AS side, m::text, n FROM r01.g
UNION ALL SELECT 't', 'query', m::text, count(*) FROM r01.t WHERE id > 1 GROUP BY m
UNION ALL SELECT 't2', 'table', m2::text, n FROM r01.g2
UNION ALL SELECT 't2', 'query', (m * 2)::text, count(*) FROM r01.t WHERE id > 1 GROUP BY m * 2
UNION ALL SELECT 'join', 'table', m::text, n FROM r01.gj
UNION ALL SELECT 'join', 'query', d.m::text, count(*) FROM r01.fact f JOIN r01.d d ON d.id = f.d_id GROUP BY d.m;
SELECT table_name, maintenance, maintenance_detail FROM materialized_table.materialized_tables
 WHERE table_name::text LIKE 'r01.%' ORDER BY 1;
