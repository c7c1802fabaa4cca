-- Subqueries correlated on a key: a change of what a correlated subquery
-- reads (a scalar min(), EXISTS, NOT EXISTS) recomputes the rows of the
-- key values its changed rows name, not the whole table, when every
-- occurrence of that source in the subqueries is correlated on a key of
-- the result by an equality; so does a change of what "key IN (SELECT y
-- ...)" in WHERE reads, plain or grouped by y (TPC-H Q18's HAVING).
-- A correlation on a column of the query's source that is no key of the
-- result names the keys of that source's rows with the changed values,
-- looked up (TPC-H Q4).  Otherwise (an uncorrelated subquery, a
-- correlation on an expression, NOT IN) its changes still recompute the
-- table.  Each step is checked against the query, and checked to have been
-- applied by keys (refresh_history.strategy).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_cs
\set with_steps
\ir ../lib/tap_helpers.sql
SET search_path = tap_cs, public;

CREATE TABLE part (partkey int PRIMARY KEY, name text NOT NULL, brand int NOT NULL);
CREATE TABLE supply (partkey int NOT NULL, suppkey int NOT NULL, cost numeric(8,2) NOT NULL,
                     PRIMARY KEY (partkey, suppkey));
INSERT INTO part SELECT i, 'part ' || i, i % 10 FROM generate_series(1, 2000) i;
INSERT INTO supply SELECT 1 + i % 2000, i, (i * 7) % 101 FROM generate_series(1, 8000) i;
ANALYZE part, supply;

SELECT plan(36);

-- the cheapest supply of each part (TPC-H Q2's correlated min())
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cs.cheapest FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.partkey, p.name,
           (SELECT min(s.cost) FROM tap_cs.supply s WHERE s.partkey = p.partkey) AS cost
      FROM tap_cs.part p$$) \g /dev/null
-- parts with an expensive supply, and parts with no cheap one
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cs.expensive FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.partkey, p.brand FROM tap_cs.part p
     WHERE EXISTS (SELECT FROM tap_cs.supply s WHERE p.partkey = s.partkey AND s.cost > 95)
       AND NOT EXISTS (SELECT FROM tap_cs.supply c WHERE c.partkey = p.partkey AND c.cost < 3)$$) \g /dev/null
-- parts in a set grouped by the key with a HAVING (Q18); and a plain set
-- of parts under a GROUP BY of their brand: the part's key is no key of
-- the result, the parts it counts are kept by it
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cs.big_total FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.partkey, p.name FROM tap_cs.part p
     WHERE p.partkey IN (SELECT s.partkey FROM tap_cs.supply s GROUP BY s.partkey
                          HAVING sum(s.cost) > 250)$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cs.brand_supplied FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.brand, count(*) AS parts FROM tap_cs.part p
     WHERE p.partkey IN (SELECT s.partkey FROM tap_cs.supply s WHERE s.cost < 10)
     GROUP BY p.brand$$) \g /dev/null
-- more controls: a subquery correlated on no key, an uncorrelated one, NOT IN
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cs.never_cheap FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.partkey FROM tap_cs.part p
     WHERE p.partkey NOT IN (SELECT s.partkey FROM tap_cs.supply s WHERE s.cost < 5)$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cs.by_brand FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.partkey,
           (SELECT count(*) FROM tap_cs.supply s WHERE s.suppkey = p.brand) AS n
      FROM tap_cs.part p$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cs.by_brand_expr FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.partkey,
           (SELECT count(*) FROM tap_cs.supply s WHERE s.suppkey = p.brand + 1) AS n
      FROM tap_cs.part p$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cs.above_average FRESHNESS = INTERVAL '1' SECOND AS
    SELECT s.partkey, s.suppkey FROM tap_cs.supply s
     WHERE s.cost > (SELECT avg(a.cost) FROM tap_cs.supply a)$$) \g /dev/null

SELECT isnt(wait_for($$SELECT bool_and(s.synced)
                          FROM materialized_table_internal.continuous_state s
                          JOIN pg_class c ON c.oid = s.relid
                         WHERE c.relnamespace = 'tap_cs'::regnamespace
                        HAVING count(*) = 8$$, 30), NULL,
            'the worker takes the tables up');
SELECT is(relreplident::text, 'f', 'the correlated source got REPLICA IDENTITY FULL')
  FROM pg_class WHERE oid = 'tap_cs.supply'::regclass;
SELECT matches(maintenance_detail, 'a change of supply, read in a subquery correlated on partkey, recomputes the rows of its values',
               'the scalar subquery''s source names keys')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_cs.cheapest'::regclass;
SELECT matches(maintenance_detail, 'a change of supply, read in a subquery correlated on partkey',
               'so do the sources of EXISTS and NOT EXISTS')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_cs.expensive'::regclass;
SELECT matches(maintenance_detail, 'a change of supply, read in a subquery correlated on partkey',
               'so does the source of a grouped IN (SELECT ...)')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_cs.big_total'::regclass;
SELECT matches(maintenance_detail, '^the rows it aggregates are kept in a hidden table, recomputed for the changed values of partkey.*; a change of supply, read in a subquery correlated on partkey',
               'IN on a column that is no key of the result, grouped: the parts it counts are kept, and its source names them')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_cs.brand_supplied'::regclass;
SELECT matches(maintenance_detail, 'a change of supply recomputes the whole table',
               'NOT IN (control): its source recomputes')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_cs.never_cheap'::regclass;
SELECT matches(maintenance_detail, 'a change of supply, read in a subquery correlated with part, recomputes the rows of the part rows it names \(by suppkey\)',
               'a subquery correlated on a column that is no key: so does its source')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_cs.by_brand'::regclass;
SELECT matches(maintenance_detail, 'a change of supply recomputes the whole table',
               'a subquery correlated on an expression (control): its source recomputes')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_cs.by_brand_expr'::regclass;
SELECT matches(maintenance_detail, 'a change of supply recomputes the whole table',
               'an uncorrelated subquery: its source recomputes')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_cs.above_average'::regclass;

-- a new cheapest supply, and a supply that is no longer the cheapest
CALL step($$UPDATE tap_cs.supply SET cost = cost + 50 WHERE suppkey IN (7, 15, 2007)$$);
SELECT isnt(converged(20), NULL, 'supplies dearer: converged');
SELECT is(mismatches('cheapest'), 0::bigint, 'cheapest equals its query');
SELECT is(mismatches('expensive'), 0::bigint, 'expensive equals its query');
SELECT is(cycles_since('tap_cs.cheapest'), 'KEYS', 'cheapest: by keys, not a recompute');
SELECT is(cycles_since('tap_cs.expensive'), 'KEYS', 'expensive: by keys, not a recompute');
SELECT is(cycles_since('tap_cs.by_brand'), 'KEYS', 'by_brand: by keys, looked up');
SELECT is(cycles_since('tap_cs.by_brand_expr'), 'FULL', 'by_brand_expr (control): recomputed');
SELECT is(mismatches('by_brand'), 0::bigint, 'by_brand equals its query');
SELECT is(cycles_since('tap_cs.big_total'), 'KEYS', 'big_total: by keys');

-- supplies deleted, new ones, one moved to another part
CALL step($$DELETE FROM tap_cs.supply WHERE suppkey IN (3, 4003);
            INSERT INTO tap_cs.supply VALUES (11, 90001, 0.5), (12, 90002, 99), (2000, 90003, 96);
            UPDATE tap_cs.supply SET partkey = 13 WHERE suppkey = 14$$);
SELECT isnt(converged(20), NULL, 'supplies deleted, added and moved: converged');
SELECT is(mismatches('cheapest'), 0::bigint, 'cheapest equals its query');
SELECT is(mismatches('expensive'), 0::bigint, 'expensive equals its query');
SELECT is(cycles_since('tap_cs.cheapest'), 'KEYS', 'cheapest: by keys');
SELECT is(cycles_since('tap_cs.expensive'), 'KEYS', 'expensive: by keys');
SELECT is(cycles_since('tap_cs.big_total'), 'KEYS', 'big_total: by keys');
SELECT is(cycles_since('tap_cs.brand_supplied'), 'KEYS', 'brand_supplied: by keys of the parts it counts');
SELECT is(mismatches('brand_supplied'), 0::bigint, 'brand_supplied equals its query');
SELECT is(mismatches('by_brand') + mismatches('by_brand_expr'), 0::bigint, 'by_brand and by_brand_expr equal their queries');

-- a part's last supply goes: its min() is NULL, EXISTS false
CALL step($$DELETE FROM tap_cs.supply WHERE partkey = 17$$);
SELECT isnt(converged(20), NULL, 'a part''s last supply deleted: converged');
SELECT is((SELECT cost FROM cheapest WHERE partkey = 17), NULL, 'its cheapest cost is NULL');
SELECT is(mismatches('expensive'), 0::bigint, 'expensive equals its query');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');

-- x IN (SELECT y ... WHERE outer.c = inner.c), x a key, c not one (found
-- by the differential test, seed 22 q0771: the new row of tt named
-- nothing, and the row of pp it let in stayed out)
CREATE TABLE pp (id int, g int, s text);
CREATE TABLE tt (k int, s text);
ALTER TABLE tt REPLICA IDENTITY FULL;
INSERT INTO pp VALUES (30, 0, 'B'), (31, 1, 'B'), (32, 0, 'c');
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cs.in_correlated FRESHNESS = INTERVAL '1' SECOND AS
    SELECT x1.id AS c1, x1.g AS c2, upper(x1.s) AS c4 FROM tap_cs.pp x1
     WHERE x1.g IN (SELECT x2.k FROM tap_cs.tt x2 WHERE x1.s = x2.s)$$) \g /dev/null
SELECT is(maintenance_detail, 'rows are recomputed for the changed values of c1, c2; a change of tt, read in a subquery correlated on c2, recomputes the rows of its values; the rows of changed values of c2 are recomputed with those values carried into the IN subquery that tests it',
          'in_correlated: its subquery''s changes name the key its IN compares')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_cs.in_correlated'::regclass;
SELECT isnt(wait_for($$SELECT synced FROM materialized_table_internal.continuous_state
                        WHERE relid = 'tap_cs.in_correlated'::regclass$$, 30), NULL, 'in_correlated is taken up');
INSERT INTO tt VALUES (7, 'b'), (0, 'B');
SELECT isnt(converged(20), NULL, 'a row of tt lets a row of pp in: converged');
SELECT is((SELECT array_agg(c1 ORDER BY c1) FROM in_correlated), ARRAY[30], 'in_correlated has the row');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_cs.' || t) FROM unnest(ARRAY['cheapest', 'expensive', 'big_total', 'brand_supplied', 'never_cheap', 'by_brand', 'by_brand_expr', 'above_average', 'in_correlated']) t \g /dev/null
RESET search_path;
DROP SCHEMA tap_cs CASCADE;
