-- CONTINUOUS tables: the strategy each query shape gets (materialized_tables
-- .maintenance and maintenance_detail), what a CONTINUOUS table needs of its
-- sources, the pipeline's rows and hidden objects following CREATE, ALTER and
-- DROP, and the errors.  Behaviour over time (the worker applying changes)
-- is tested by test/pgtap/continuous_*.sql; this file only shows what the
-- statements do in their own transaction, which does not depend on timing.
CREATE SCHEMA cont;
SET search_path = cont, public;
CREATE TABLE s (id int PRIMARY KEY, g int NOT NULL, v numeric(10,2), w numeric, f float8,
                b bool, t text);
CREATE TABLE c (id int PRIMARY KEY, region text NOT NULL);
CREATE TABLE o (id int PRIMARY KEY, customer_id int NOT NULL, ds date NOT NULL, amount int NOT NULL);
INSERT INTO s SELECT i, i % 4, i * 1.5, i, i / 2.0, i % 3 > 0, 't' || i FROM generate_series(1, 20) i;
INSERT INTO c SELECT i, 'region ' || (i % 3) FROM generate_series(1, 6) i;
INSERT INTO o SELECT i, 1 + i % 6, date '2024-06-01' + i % 3, i FROM generate_series(1, 30) i;

-- maintenance of every table of this file
CREATE VIEW strategies AS
SELECT t.table_name, t.maintenance, c.strategy, t.maintenance_detail
  FROM materialized_table.materialized_tables t
  LEFT JOIN materialized_table_internal.continuous_state c ON c.relid = t.table_name::oid
 WHERE t.table_name IN (SELECT oid FROM pg_class WHERE relnamespace = 'cont'::regnamespace)
 ORDER BY t.table_name::text;
-- mismatches(t): rows of a table that its query does not give, and the
-- other way round (pg_regress runs from the top of the source tree)
\set schema cont
\i test/lib/mismatches.sql

-- sources get REPLICA IDENTITY FULL, with a NOTICE, the first time a
-- CONTINUOUS table needs their old rows
SELECT relname, relreplident FROM pg_class WHERE relnamespace = 'cont'::regnamespace AND relkind = 'r' ORDER BY 1;

-- single-table filter and projection with a key: the changed keys' rows
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_filter FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id, g, v FROM cont.s WHERE v > 10$$);
SELECT relname, relreplident FROM pg_class WHERE relnamespace = 'cont'::regnamespace AND relkind = 'r' ORDER BY 1;
-- a key without a primary key: the values themselves
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_values FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, t FROM cont.s WHERE b$$);
-- an expression over one source's columns is a key too: a changed row
-- names its value (computed by the cycle from the columns it reads)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_expr FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id * 2 AS twice, upper(t) AS big FROM cont.s;
  CREATE MATERIALIZED TABLE k_group_expr FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g % 2 AS parity, lower(t) AS lt, string_agg(t, ',' ORDER BY id) AS ts, count(DISTINCT b) AS kinds
         FROM cont.s GROUP BY g % 2, lower(t)$$);
-- an expression over two sources', or no column at all: nothing names the
-- rows a change touches
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE f_expr FRESHNESS = INTERVAL '1' SECOND
    AS SELECT s.id * c.id AS product FROM cont.s JOIN cont.c ON c.id = s.g$$);

-- GROUP BY: count, sum and avg of exact types are kept per group (deltas)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_sums FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, count(*) AS n, count(f) AS nf, sum(v) AS total, avg(v) AS average, sum(id) AS ids, avg(id) AS avg_id
         FROM cont.s WHERE id > 2 GROUP BY g$$);
-- ... adjusted as each changed row is decoded, or, when the WHERE clause or
-- an argument may raise an error (a division), when the table is applied
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_sums_applied FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, count(*) AS n, sum(v) AS total FROM cont.s WHERE v / id > 1 GROUP BY g$$);
-- ... kept in the table's own rows, without hidden state, when every
-- aggregate is a count or a sum of a NOT NULL column and count(*) tells when
-- a group is gone
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_own_rows FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, b, count(*) AS n, count(v) AS nv, sum(id) AS ids FROM cont.s GROUP BY g, b$$);
-- ... but not without count(*), nor with a table that holds more than the
-- query's columns, or other types, nor grouped by values that are equal
-- without printing alike (a numeric of free scale: 1.0 = 1.00)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_no_count FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, sum(id) AS ids FROM cont.s GROUP BY g;
  CREATE MATERIALIZED TABLE d_free_scale FRESHNESS = INTERVAL '1' SECOND
    AS SELECT w, count(*) AS n FROM cont.s GROUP BY w;
  CREATE MATERIALIZED TABLE d_declared (g INT, n DECIMAL(20, 0), ids BIGINT) FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, count(*) AS n, sum(id) AS ids FROM cont.s GROUP BY g$$);
-- ... the other aggregates (bool_and, string_agg: here beside min and max)
-- recompute the changed groups
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_minmax FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, min(v) AS lo, max(v) AS hi, bool_and(b) AS all_b, bool_or(b) AS any_b,
              string_agg(t, ',' ORDER BY id) AS ts
         FROM cont.s GROUP BY g$$);
-- ... as do sums whose result depends on more than a running total: a
-- numeric without a declared scale, a float
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_numeric_sum FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, sum(w) AS total FROM cont.s GROUP BY g;
  CREATE MATERIALIZED TABLE k_float_sum FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, sum(f) AS total FROM cont.s GROUP BY g$$);
-- ... and aggregates with DISTINCT, and HAVING over another aggregate
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_agg_options FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, count(DISTINCT b) AS kinds, count(*) FILTER (WHERE b) AS bs FROM cont.s GROUP BY g;
  CREATE MATERIALIZED TABLE k_having FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, count(*) AS n FROM cont.s GROUP BY g HAVING bool_or(v > 4)$$);
-- deltas for the rest: HAVING over counts and sums, FILTER, ORDER BY
-- inside an aggregate, expressions over aggregates, grouping by an
-- expression (kept in the table's own rows), numeric expressions whose
-- display scale the query tells, and global aggregates (one row, with or
-- without rows), also over a join
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_having FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, count(*) AS n FROM cont.s GROUP BY g HAVING count(*) > 4 AND sum(v) > 0;
  CREATE MATERIALIZED TABLE d_filter FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, count(*) FILTER (WHERE b) AS bs, sum(v ORDER BY id) FILTER (WHERE v > 3) AS big FROM cont.s GROUP BY g;
  CREATE MATERIALIZED TABLE d_expressions FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, sum(v) * 1.0 / count(*) AS mean, count(*) - count(f) AS no_f FROM cont.s GROUP BY g;
  CREATE MATERIALIZED TABLE d_group_expr FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g + 1 AS g1, count(*) AS n FROM cont.s GROUP BY g + 1;
  CREATE MATERIALIZED TABLE d_scales FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, sum(v * 1.5) AS x, avg(CASE WHEN b THEN v * 0.25 ELSE v END) AS y FROM cont.s GROUP BY g;
  CREATE MATERIALIZED TABLE d_global FRESHNESS = INTERVAL '1' SECOND
    AS SELECT count(*) AS n, sum(v) AS total FROM cont.s;
  CREATE MATERIALIZED TABLE d_global_empty FRESHNESS = INTERVAL '1' SECOND
    AS SELECT count(*) AS n, sum(v) AS total, avg(v) AS mean FROM cont.s WHERE v < 0$$);
-- GROUPING SETS, ROLLUP and CUBE, of one table or a join: each changed row
-- adjusts its group in every set (the set of no columns is one row, rows or
-- not)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_rollup FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, b, count(*) AS n, sum(v) AS total, avg(id) AS mean, grouping(g, b) AS level
         FROM cont.s WHERE id > 2 GROUP BY ROLLUP (g, b);
  CREATE MATERIALIZED TABLE d_cube FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, b, count(*) FILTER (WHERE v > 5) AS big, grouping(b) AS no_b
         FROM cont.s GROUP BY CUBE (g, b) HAVING count(*) > 1;
  CREATE MATERIALIZED TABLE d_grouping_sets FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, b, count(*) AS n FROM cont.s GROUP BY GROUPING SETS ((g), (b));
  CREATE MATERIALIZED TABLE d_rollup_empty FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, count(*) AS n, sum(v) AS total FROM cont.s WHERE v < 0 GROUP BY ROLLUP (g);
  CREATE MATERIALIZED TABLE d_rollup_join FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.region, o.ds, count(*) AS n, sum(o.amount) AS amount
         FROM cont.o JOIN cont.c ON c.id = o.customer_id GROUP BY ROLLUP (c.region, o.ds)$$);
-- min and max beside them, grouped or global: kept by comparison, a group
-- (a global aggregate: the table) re-read when its extremum is removed
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_minmax FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, min(v) AS lo, max(t) AS hi, count(*) AS n, max(v) - min(v) AS spread FROM cont.s GROUP BY g;
  CREATE MATERIALIZED TABLE d_minmax_global FRESHNESS = INTERVAL '1' SECOND
    AS SELECT min(v) AS lo, max(id) AS hi, min(t) FILTER (WHERE b) AS first_b, sum(v) AS total FROM cont.s$$);

-- the first groups by an ORDER BY (LIMIT, OFFSET, WITH TIES): deltas keep
-- every group's state, the first rows are rewritten when a group changed
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_topk FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, sum(v) AS total FROM cont.s GROUP BY g ORDER BY total DESC, g LIMIT 3;
  CREATE MATERIALIZED TABLE d_topk_hidden FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g FROM cont.s GROUP BY g ORDER BY count(*) DESC, sum(v), g OFFSET 1 LIMIT 2;
  CREATE MATERIALIZED TABLE d_topk_ties FRESHNESS = INTERVAL '1' SECOND
    AS SELECT b, count(*) AS n FROM cont.s GROUP BY b ORDER BY n DESC FETCH FIRST 1 ROW WITH TIES;
  CREATE MATERIALIZED TABLE d_topk_join FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.customer_id, c.region, sum(o.amount) AS revenue FROM cont.o JOIN cont.c ON c.id = o.customer_id
        GROUP BY o.customer_id, c.region ORDER BY revenue DESC, o.customer_id LIMIT 5$$);

-- DISTINCT
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_distinct FRESHNESS = INTERVAL '1' SECOND
    AS SELECT DISTINCT g, b FROM cont.s$$);

-- GROUP BY over an equi-join, count, sum and avg: deltas through the join.
-- The largest source not joined by its primary key (orders) adjusts the
-- groups, its changed rows joined with the current customers; a changed
-- customer recomputes the groups of its old and new region
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_join FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.ds, c.region, count(*) AS n, sum(o.amount) AS total
         FROM cont.o JOIN cont.c ON c.id = o.customer_id GROUP BY o.ds, c.region$$);
-- the join column itself as a group column: a changed customer names its id
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_join_key FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.id, c.region, count(*) AS n FROM cont.o, cont.c WHERE c.id = o.customer_id GROUP BY c.id, c.region$$);
-- a global aggregate over the join
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_join_global FRESHNESS = INTERVAL '1' SECOND
    AS SELECT count(*) AS n, sum(o.amount) AS total FROM cont.o JOIN cont.c ON c.id = o.customer_id$$);
-- orders need not name a group column; customers that name none
-- recompute the table
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_join_partial FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.ds, sum(o.amount) AS total FROM cont.o JOIN cont.c ON c.id = o.customer_id
        WHERE c.region <> 'region 0' GROUP BY o.ds$$);
-- other aggregates over a join: a changed order names its ds, a changed
-- customer its region -- the groups with those values are recomputed
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_join FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.ds, c.region, count(*) AS n, bool_or(o.amount > 100) AS big
         FROM cont.o JOIN cont.c ON c.id = o.customer_id GROUP BY o.ds, c.region$$);
-- a source read twice: no deltas (a change would be on both sides)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_self_join FRESHNESS = INTERVAL '1' SECOND
    AS SELECT a.ds, count(*) AS pairs FROM cont.o a JOIN cont.o b ON b.ds = a.ds GROUP BY a.ds$$);
-- a dimension read twice (as TPC-H's nation): deltas of the orders, and a
-- changed customer recomputes the groups either use of it names
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_join_twice FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.ds, c1.region, count(*) AS n, sum(o.amount) AS total
         FROM cont.o JOIN cont.c c1 ON c1.id = o.customer_id JOIN cont.c c2 ON c2.id = o.customer_id + 1
        WHERE c2.region <> 'region 0' GROUP BY o.ds, c1.region$$);
-- subqueries in FROM that filter, join and compute are read as the query
-- written inline (TPC-H Q7, Q8, Q9): deltas and keys through them
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE d_from_subquery FRESHNESS = INTERVAL '1' SECOND
    AS SELECT x.region, count(*) AS n, sum(x.twice) AS total
         FROM (SELECT c.region, o.amount * 2 AS twice FROM cont.o JOIN cont.c ON c.id = o.customer_id
                WHERE o.amount > 1) AS x GROUP BY x.region;
  CREATE MATERIALIZED TABLE d_nested_subquery FRESHNESS = INTERVAL '1' SECOND
    AS SELECT y.ds, c.region, count(*) AS n FROM (SELECT z.ds, z.customer_id FROM (SELECT * FROM cont.o) z
                                                  WHERE z.amount > 3) y, cont.c
        WHERE c.id = y.customer_id GROUP BY y.ds, c.region;
  CREATE MATERIALIZED TABLE k_from_subquery FRESHNESS = INTERVAL '1' SECOND
    AS SELECT x.id, x.r FROM (SELECT o.id, c.region AS r FROM cont.o, cont.c WHERE c.id = o.customer_id) x
        WHERE x.r <> 'region 2';
  CREATE MATERIALIZED TABLE d_subquery_row FRESHNESS = INTERVAL '1' SECOND
    AS SELECT x.g, count(*) AS n FROM (SELECT g, v FROM cont.s) x WHERE x IS NOT NULL GROUP BY x.g$$);
-- a side of an inner JOIN ... ON too (its WHERE joins the ON clause); not
-- one of an outer join, or one that aggregates: a query whose FROM is such
-- a subquery alone keeps its rows by keys in a hidden table
-- (k_aggregate_subquery); joined with more, it is recomputed (f_joined_aggregate)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_joined_subquery FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.id, x.order_id FROM cont.c JOIN (SELECT id AS order_id, customer_id FROM cont.o WHERE amount > 2) x
         ON x.customer_id = c.id;
  CREATE MATERIALIZED TABLE d_joined_subquery FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.region, count(*) AS n, sum(x.amount) AS total
         FROM cont.c JOIN (SELECT customer_id, amount FROM cont.o WHERE amount > 2) x ON x.customer_id = c.id
        GROUP BY c.region;
  CREATE MATERIALIZED TABLE f_outer_joined_subquery FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.id, x.order_id FROM cont.c LEFT JOIN (SELECT id AS order_id, customer_id FROM cont.o WHERE amount > 2) x
         ON x.customer_id = c.id$$);
-- a select-project-join
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_spj FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.id, o.ds, c.region FROM cont.o JOIN cont.c ON c.id = o.customer_id WHERE o.amount > 5$$);

-- outer joins: a change of the nullable side names the preserved side's rows
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_left_join FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.id, c.region, count(o.id) AS orders FROM cont.c LEFT JOIN cont.o ON o.customer_id = c.id
       GROUP BY c.id, c.region;
  CREATE MATERIALIZED TABLE k_right_join FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.id, o.id AS order_id FROM cont.o RIGHT JOIN cont.c ON o.customer_id = c.id$$);
-- a full join of two tables: each side's changes name its own key columns
-- and, through the ON equality, the other side's (here looked up: the
-- orders of a changed customer); without a column of each side in the
-- result, no key is left
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_full_join FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.id, o.id AS order_id FROM cont.o FULL JOIN cont.c ON o.customer_id = c.id;
  CREATE MATERIALIZED TABLE f_full_join FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.id AS order_id FROM cont.o FULL JOIN cont.c ON o.customer_id = c.id$$);

-- window functions: a result column in the PARTITION BY of every window
-- is a key, the partitions a change names are recomputed whole; windows
-- over the whole result (no such column) are computed from the rows they
-- are over, kept by keys in a hidden table (the groups, by region; the
-- rows, by id)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_window FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id, g, rank() OVER (PARTITION BY g ORDER BY v DESC) AS r FROM cont.s;
  CREATE MATERIALIZED TABLE k_windows_join FRESHNESS = INTERVAL '1' SECOND
    AS SELECT o.id, c.region, sum(o.amount) OVER (PARTITION BY c.region, o.ds ORDER BY o.id) AS running,
              count(*) OVER (PARTITION BY c.region) AS in_region
         FROM cont.o JOIN cont.c ON c.id = o.customer_id;
  CREATE MATERIALIZED TABLE k_window_groups FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, b, count(*) AS n, rank() OVER (PARTITION BY g ORDER BY count(*) DESC, b) AS r
         FROM cont.s GROUP BY g, b;
  CREATE MATERIALIZED TABLE k_window_ranks FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.region, sum(o.amount) AS total, rank() OVER (ORDER BY sum(o.amount) DESC, c.region) AS r,
              sum(sum(o.amount)) OVER (ORDER BY c.region) AS running
         FROM cont.o JOIN cont.c ON c.id = o.customer_id GROUP BY c.region;
  CREATE MATERIALIZED TABLE f_window FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id, g, rank() OVER (ORDER BY v DESC, id) AS r FROM cont.s$$);

-- WITH queries are read as subqueries in FROM (as the planner inlines
-- them); MATERIALIZED or RECURSIVE ones are recomputed
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_with_union FRESHNESS = INTERVAL '1' SECOND
    AS WITH big AS (SELECT id, g, v FROM cont.s WHERE v > 20), twice AS (SELECT g, v * 2 AS w FROM cont.s)
       SELECT b.g, count(*) AS n, sum(b.v) AS total FROM big b GROUP BY b.g
       UNION ALL SELECT t.g, count(*), sum(t.w) FROM twice t GROUP BY t.g;
  CREATE MATERIALIZED TABLE k_with FRESHNESS = INTERVAL '1' SECOND
    AS WITH big AS (SELECT id FROM cont.s WHERE v > 20) SELECT id FROM big;
  CREATE MATERIALIZED TABLE d_with_join FRESHNESS = INTERVAL '1' SECOND
    AS WITH orders AS (SELECT o.customer_id, o.amount FROM cont.o WHERE o.amount > 1)
       SELECT c.region, count(*) AS n, sum(x.amount) AS total FROM orders x, cont.c WHERE c.id = x.customer_id
        GROUP BY c.region$$);

-- subqueries in expressions (IN, EXISTS, NOT IN, scalar): a change of the
-- query's own sources names keys; what the subqueries read may change any
-- row, and recomputes the table, unless the subquery is correlated on a
-- key (k_exists's o, k_scalar_sublink's c: their changes name keys) or on
-- a column of a source that names keys (k_sublink's c: its changes name
-- the keys of the s rows whose g they match, looked up)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_sublink FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id FROM cont.s WHERE g IN (SELECT id FROM cont.c WHERE region = 'region 1');
  CREATE MATERIALIZED TABLE k_exists FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.id, c.region FROM cont.c WHERE EXISTS (SELECT FROM cont.o WHERE o.customer_id = c.id AND o.amount > 8)
                                        AND c.id NOT IN (SELECT g FROM cont.s WHERE g IS NOT NULL);
  CREATE MATERIALIZED TABLE k_scalar_sublink FRESHNESS = INTERVAL '1' SECOND
    AS SELECT s.g, count(*) AS n, (SELECT count(*) FROM cont.c WHERE c.id = s.g) AS customers
         FROM cont.s GROUP BY s.g$$);
-- a key tested by IN (a grouped subquery, TPC-H Q18): the rows of changed
-- values are recomputed with the values carried into the subquery
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_in_having FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.id, c.region FROM cont.c
        WHERE c.id IN (SELECT o.customer_id FROM cont.o GROUP BY o.customer_id HAVING sum(o.amount) > 20)$$);
-- grouped, the subquery correlated on a column that is no key of the
-- result (TPC-H Q4): o's changes would name the regions of the customers
-- they match, nearly all; the rows it aggregates are kept instead, by the
-- customers o's changes name.  Control: grouped by that column, the rows
-- of its values are recomputed
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_exists_groups FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.region, count(*) AS n FROM cont.c
        WHERE EXISTS (SELECT FROM cont.o WHERE o.customer_id = c.id AND o.amount > 8) GROUP BY c.region;
  CREATE MATERIALIZED TABLE k_exists_by_key FRESHNESS = INTERVAL '1' SECOND
    AS SELECT c.id, count(*) AS n FROM cont.c
        WHERE EXISTS (SELECT FROM cont.o WHERE o.customer_id = c.id AND o.amount > 8) GROUP BY c.id$$);

-- set-returning functions, LATERAL or in the result, and VALUES: their
-- rows follow from the rows they are joined with
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_srf FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id, generate_series(1, 2) AS copy FROM cont.s WHERE id < 3;
  CREATE MATERIALIZED TABLE k_lateral_unnest FRESHNESS = INTERVAL '1' SECOND
    AS SELECT s.id, x FROM cont.s, LATERAL unnest(ARRAY[s.g, s.v]) AS x;
  CREATE MATERIALIZED TABLE k_unnest_groups FRESHNESS = INTERVAL '1' SECOND
    AS SELECT s.g, count(*) AS n, sum(x) AS total FROM cont.s, unnest(ARRAY[s.v, s.v + 1]) AS x GROUP BY s.g;
  CREATE MATERIALIZED TABLE k_values_join FRESHNESS = INTERVAL '1' SECOND
    AS SELECT s.id, l.label FROM cont.s JOIN (VALUES (1, 'one'), (2, 'two')) AS l(g, label) ON l.g = s.g$$);

-- DISTINCT ON (a): the row kept for some values of a is one of their rows
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_distinct_on FRESHNESS = INTERVAL '1' SECOND
    AS SELECT DISTINCT ON (g) g, id FROM cont.s ORDER BY g, id;
  CREATE MATERIALIZED TABLE k_distinct_on_join FRESHNESS = INTERVAL '1' SECOND
    AS SELECT DISTINCT ON (c.region, o.ds) c.region, o.ds, o.id, o.amount FROM cont.o JOIN cont.c ON c.id = o.customer_id
        ORDER BY c.region, o.ds, o.amount DESC, o.id$$);

-- set operations: each branch names the result columns by position, and
-- the rows with the values a change names are recomputed (they come from
-- branch rows with those values alone)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_union FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id FROM cont.s UNION SELECT id FROM cont.c;
  CREATE MATERIALIZED TABLE k_union_all FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g AS k, count(*) AS n FROM cont.s GROUP BY g
       UNION ALL SELECT o.customer_id, count(*) FROM cont.o JOIN cont.c ON c.id = o.customer_id GROUP BY o.customer_id;
  CREATE MATERIALIZED TABLE k_intersect FRESHNESS = INTERVAL '1' SECOND
    AS SELECT customer_id AS id FROM cont.o WHERE amount > 5 INTERSECT SELECT id FROM cont.c WHERE region <> 'region 0';
  CREATE MATERIALIZED TABLE k_except_all FRESHNESS = INTERVAL '1' SECOND
    AS (SELECT g, b FROM cont.s EXCEPT ALL SELECT g, b FROM cont.s WHERE v > 10) UNION SELECT id, true FROM cont.c$$);
-- the first rows by an ORDER BY of a query kept by keys: all its rows are
-- kept hidden, the table is their first rows
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_limit FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id FROM cont.s ORDER BY v DESC LIMIT 3;
  CREATE MATERIALIZED TABLE k_limit_groups FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, string_agg(b::text, ',' ORDER BY id) AS bs FROM cont.s GROUP BY g
       ORDER BY max(v) DESC, g OFFSET 1 FETCH FIRST 2 ROWS WITH TIES$$);
-- a WITH query read twice (or MATERIALIZED), kept by keys: its rows are kept hidden, and the
-- query reads them; a change of another source recomputes both
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_with_twice FRESHNESS = INTERVAL '1' SECOND
    AS WITH per_g AS (SELECT g, count(*) AS n FROM cont.s GROUP BY g)
       SELECT p.g, p.n, c.region FROM per_g p JOIN cont.c ON c.id = p.g
        WHERE p.n = (SELECT max(n) FROM per_g);
  CREATE MATERIALIZED TABLE k_with_materialized FRESHNESS = INTERVAL '1' SECOND
    AS WITH big AS MATERIALIZED (SELECT id FROM cont.s WHERE v > 20) SELECT id FROM big$$);
-- a global aggregate deltas cannot keep: the rows it aggregates are kept
-- hidden, by keys, and it is computed from them
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_global FRESHNESS = INTERVAL '1' SECOND
    AS SELECT count(*) AS n, bool_or(v > 3) AS any_big FROM cont.s$$);
-- a branch names the columns it reads (region as src); one whose columns
-- are constants names none: its source's change recomputes the table
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_union_columns FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id, 's' AS src FROM cont.s UNION ALL SELECT 0, region FROM cont.c;
  CREATE MATERIALIZED TABLE k_union_constant FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id, 's' AS src FROM cont.s UNION ALL SELECT 0, 'c' FROM cont.c$$);

-- every other query is recomputed when a source changed
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_aggregate_subquery FRESHNESS = INTERVAL '1' SECOND
    AS SELECT x.n, count(*) AS groups FROM (SELECT g, count(*) AS n FROM cont.s GROUP BY g) x GROUP BY x.n;
  CREATE MATERIALIZED TABLE f_joined_aggregate FRESHNESS = INTERVAL '1' SECOND
    AS SELECT x.g, x.n, c.region FROM (SELECT g, count(*) AS n FROM cont.s GROUP BY g) x JOIN cont.c ON c.id = x.g;
  CREATE MATERIALIZED TABLE f_with_recursive FRESHNESS = INTERVAL '1' SECOND
    AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT s.id, n.i FROM cont.s, n;
  CREATE MATERIALIZED TABLE f_limit FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id FROM cont.s ORDER BY v DESC LIMIT (SELECT count(*) FROM cont.c);
  CREATE MATERIALIZED TABLE f_grouping_sets FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, b, count(*) AS n, max(v) AS hi FROM cont.s GROUP BY GROUPING SETS ((g), (b), (g))$$);

-- results that change without any change a slot decodes are recomputed
-- every freshness period: time, unlogged tables, views over them
CREATE UNLOGGED TABLE scratch (id int);
INSERT INTO scratch VALUES (1), (2);
CREATE VIEW s_view AS SELECT id, g FROM cont.s WHERE id < 5;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE p_now FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id FROM cont.s WHERE now() > '2000-01-01'$$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE p_unlogged FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id FROM cont.scratch;
  CREATE MATERIALIZED TABLE f_view FRESHNESS = INTERVAL '1' SECOND
    AS SELECT id, g FROM cont.s_view$$);

-- chains: a CONTINUOUS table reading another materialized table, of
-- either mode
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE k_chain FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, n, total FROM cont.d_sums WHERE n > 3;
  CREATE MATERIALIZED TABLE full_hourly FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
    AS SELECT g, count(*) AS n FROM cont.s GROUP BY g;
  CREATE MATERIALIZED TABLE k_chain_full FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = CONTINUOUS
    AS SELECT g, n FROM cont.full_hourly$$);

SELECT table_name, maintenance, strategy, maintenance_detail FROM strategies;
-- a FULL table is recomputed on its schedule
SELECT maintenance, maintenance_detail FROM materialized_table.materialized_tables
 WHERE table_name = 'full_hourly'::regclass;

-- every table holds its query's result as soon as CREATE commits
SELECT table_name, mismatches(table_name) FROM strategies;
-- the state kept by deltas is hidden: the table has its query's columns only
SELECT attname FROM pg_attribute WHERE attrelid = 'd_sums'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum;
SELECT to_regclass('materialized_table_internal.state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'd_sums'::regclass)) IS NOT NULL AS has_state,
       to_regclass('materialized_table_internal.derived_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'd_sums'::regclass)) IS NOT NULL AS has_derived;
SELECT to_regclass('materialized_table_internal.state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'k_minmax'::regclass)) IS NOT NULL AS has_state;
SELECT to_regclass('materialized_table_internal.state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'd_own_rows'::regclass)) IS NOT NULL AS has_state,
       to_regclass('materialized_table_internal.derived_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'd_own_rows'::regclass)) IS NOT NULL AS has_derived;
-- every source of a table that follows old rows has REPLICA IDENTITY FULL;
-- a materialized table in a chain keeps its own (it feeds its readers
-- itself, not by decoding)
SELECT relname, relreplident FROM pg_class WHERE relnamespace = 'cont'::regnamespace AND relkind = 'r' ORDER BY 1;

-- ALTER ... AS switches how the table is maintained and its content in its
-- transaction
BEGIN;
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE k_minmax AS
    SELECT g, min(v) AS lo, max(v) AS hi, bool_and(b) AS all_b, bool_or(b) AS any_b,
           string_agg(t, ',' ORDER BY id) AS ts, count(*) OVER () AS groups
      FROM cont.s GROUP BY g$$);
SELECT maintenance, strategy, maintenance_detail FROM strategies WHERE table_name = 'k_minmax'::regclass;
SELECT mismatches('k_minmax'), (SELECT count(*) FROM k_minmax WHERE groups = 4) AS new_rows;
SELECT trigger, status FROM materialized_table.refresh_history
 WHERE table_name = 'k_minmax'::regclass AND trigger <> 'CONTINUOUS' ORDER BY run_id;
ROLLBACK;
-- a rolled back ALTER leaves the strategy, the columns and the rows
SELECT maintenance, strategy FROM strategies WHERE table_name = 'k_minmax'::regclass;
SELECT count(*) AS columns FROM pg_attribute WHERE attrelid = 'k_minmax'::regclass AND attnum > 0 AND NOT attisdropped;
SELECT mismatches('k_minmax');
-- CREATE OR ALTER of a running table: the same (from keys to deltas)
SELECT materialized_table.execute($$
  CREATE OR ALTER MATERIALIZED TABLE k_numeric_sum FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, sum(v) AS total, count(*) AS n FROM cont.s GROUP BY g$$);
SELECT table_name, maintenance, strategy FROM strategies WHERE table_name = 'k_numeric_sum'::regclass;
SELECT mismatches('k_numeric_sum');
-- from deltas to keys: the hidden state goes ...
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE d_sums AS
    SELECT g, count(*) AS n, count(f) AS nf, sum(v) AS total, avg(v) AS average, sum(id) AS ids, avg(id) AS avg_id,
           count(DISTINCT id) AS top
      FROM cont.s WHERE id > 2 GROUP BY g$$);
SELECT table_name, maintenance, strategy FROM strategies WHERE table_name = 'd_sums'::regclass;
SELECT to_regclass('materialized_table_internal.state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'd_sums'::regclass)) IS NULL AS state_gone,
       to_regclass('materialized_table_internal.derived_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'd_sums'::regclass)) IS NULL AS derived_gone;
SELECT mismatches('d_sums'), mismatches('k_chain');
-- ... and comes back with a query deltas can maintain
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE d_sums AS
    SELECT g, count(*) AS n, count(f) AS nf, sum(v) AS total, avg(v) AS average, sum(id) AS ids, avg(id) AS avg_id,
           count(*) AS top
      FROM cont.s WHERE id > 2 GROUP BY g$$);
SELECT table_name, maintenance, strategy FROM strategies WHERE table_name = 'd_sums'::regclass;
SELECT to_regclass('materialized_table_internal.state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'd_sums'::regclass)) IS NOT NULL AS has_state;
SELECT mismatches('d_sums');

-- SUSPEND and RESUME keep the pipeline, and the strategy
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE k_filter SUSPEND');
SELECT refresh_status, maintenance FROM materialized_table.materialized_tables WHERE table_name = 'k_filter'::regclass;
SELECT count(*) FROM materialized_table_internal.continuous_state WHERE relid = 'k_filter'::regclass;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE k_filter RESUME');
SELECT refresh_status, maintenance FROM materialized_table.materialized_tables WHERE table_name = 'k_filter'::regclass;

-- a freshness past the threshold moves a table with a primary key to FULL
-- mode and back; its pipeline goes and comes
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE switcher (PRIMARY KEY (g) NOT ENFORCED) FRESHNESS = INTERVAL '1' SECOND
    AS SELECT g, count(*) AS n FROM cont.s GROUP BY g$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE switcher SET FRESHNESS = INTERVAL '1' HOUR$$);
SELECT refresh_mode, scheduler, maintenance, maintenance_detail FROM materialized_table.materialized_tables
 WHERE table_name = 'switcher'::regclass;
SELECT count(*) FROM materialized_table_internal.continuous_state WHERE relid = 'switcher'::regclass;
SELECT to_regclass('materialized_table_internal.state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'switcher'::regclass)) IS NULL AS state_gone;
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE switcher SET FRESHNESS = INTERVAL '10' SECOND$$);
SELECT refresh_mode, scheduler, maintenance FROM materialized_table.materialized_tables
 WHERE table_name = 'switcher'::regclass;
SELECT strategy FROM materialized_table_internal.continuous_state WHERE relid = 'switcher'::regclass;
-- without a primary key, a table cannot switch
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE k_distinct SET FRESHNESS = INTERVAL '1' HOUR$$);
-- nor can CREATE OR ALTER change the mode
SELECT materialized_table.execute($$
  CREATE OR ALTER MATERIALIZED TABLE k_distinct REFRESH_MODE = FULL AS SELECT DISTINCT g, b FROM cont.s$$);

-- a source the user does not own must already have REPLICA IDENTITY FULL
CREATE ROLE regress_mt_cont_user;
CREATE TABLE plain (id int PRIMARY KEY, v int);
INSERT INTO plain VALUES (1, 1);
GRANT USAGE, CREATE ON SCHEMA cont TO regress_mt_cont_user;
GRANT SELECT ON plain TO regress_mt_cont_user;
SET ROLE regress_mt_cont_user;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE cont.theirs FRESHNESS = INTERVAL '1' SECOND AS SELECT id, v FROM cont.plain$$);
-- a table whose changes recompute everything reads no old row: fine
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE cont.theirs FRESHNESS = INTERVAL '1' SECOND AS SELECT bool_or(v > 0) AS top FROM cont.plain$$);
SELECT maintenance, maintenance_detail FROM materialized_table.materialized_tables WHERE table_name = 'theirs'::regclass;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE cont.theirs');
RESET ROLE;
SELECT relreplident FROM pg_class WHERE oid = 'plain'::regclass;
ALTER TABLE plain REPLICA IDENTITY FULL;
SET ROLE regress_mt_cont_user;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE cont.theirs FRESHNESS = INTERVAL '1' SECOND AS SELECT id, v FROM cont.plain$$);
SELECT materialized_table.execute('DROP MATERIALIZED TABLE cont.theirs');
RESET ROLE;
REVOKE ALL ON SCHEMA cont FROM regress_mt_cont_user;
REVOKE ALL ON plain FROM regress_mt_cont_user;
DROP ROLE regress_mt_cont_user;

-- a temporary source cannot be followed (nor materialized at all)
CREATE TEMP TABLE temp_src (id int);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE t_temp FRESHNESS = INTERVAL '1' SECOND AS SELECT id FROM temp_src$$);
DROP TABLE temp_src;

-- the extension's output plugin only works inside the worker
SELECT 'init' FROM pg_create_logical_replication_slot('regress_mt_cont_slot', 'materialized_table');
\set VERBOSITY terse
SELECT count(*) FROM pg_logical_slot_peek_changes('regress_mt_cont_slot', NULL, NULL);
SELECT count(*) FROM pg_logical_slot_peek_binary_changes('regress_mt_cont_slot', NULL, NULL);
\set VERBOSITY default
SELECT pg_drop_replication_slot('regress_mt_cont_slot');

-- DROP removes the pipeline's rows and hidden objects
CREATE TEMP TABLE dropped AS
SELECT 'd_sums'::regclass::oid AS deltas_oid, 'k_filter'::regclass::oid AS keys_oid,
       (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'd_sums'::regclass) AS deltas_id;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE k_chain; DROP MATERIALIZED TABLE d_sums; DROP MATERIALIZED TABLE k_filter');
SELECT (SELECT count(*) FROM materialized_table_internal.continuous_state WHERE relid IN (deltas_oid, keys_oid)) AS state,
       (SELECT count(*) FROM materialized_table_internal.change_keys WHERE relid IN (deltas_oid, keys_oid)) AS keys,
       (SELECT count(*) FROM materialized_table_internal.change_deltas WHERE relid IN (deltas_oid, keys_oid)) AS deltas,
       to_regclass('materialized_table_internal.state_' || deltas_id) AS state_table,
       to_regclass('materialized_table_internal.derived_' || deltas_id) AS derived_view
  FROM dropped;
-- and a DROP that rolls back keeps them
BEGIN;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE k_numeric_sum');
ROLLBACK;
SELECT table_name, maintenance, strategy FROM strategies WHERE table_name = 'k_numeric_sum'::regclass;
SELECT to_regclass('materialized_table_internal.state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'k_numeric_sum'::regclass)) IS NOT NULL AS has_state;

-- clean up
RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA cont CASCADE;
RESET client_min_messages;
SELECT count(*) FROM materialized_table_internal.continuous_state
 WHERE NOT EXISTS (SELECT FROM pg_class WHERE oid = relid);
