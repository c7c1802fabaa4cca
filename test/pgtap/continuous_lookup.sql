-- Keys through a join: a source whose changed rows name no key of the
-- result, but that an inner join's equality ties to a source whose rows
-- do (partsupp joined to part, TPC-H Q16's shape under DISTINCT),
-- recomputes the rows of the keys of the rows it joins, looked up when the
-- table is applied, not the whole table; so does a source read in a
-- subquery correlated on such a column (TPC-H Q4's shape, under DISTINCT),
-- and a source on the nullable side of an outer join, through its ON
-- equality.  Grouped by columns it shows (Q16 and Q4 themselves), such a
-- query keeps the rows it aggregates, by the keys those changes name,
-- instead.  Controls: a source joined only to a source that names no key
-- either, and one an outer join's ON ties by no equality, still
-- recompute.  Each step is checked against the query, and checked to have
-- been applied by keys (refresh_history.strategy).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_lk
\set with_steps
\ir ../lib/tap_helpers.sql
SET search_path = tap_lk, public;

CREATE TABLE brand (id int PRIMARY KEY, label text NOT NULL);
CREATE TABLE part (partkey int PRIMARY KEY, name text NOT NULL, brand int NOT NULL, size int NOT NULL);
CREATE TABLE supply (partkey int NOT NULL, suppkey int NOT NULL, cost numeric(8,2) NOT NULL,
                     PRIMARY KEY (partkey, suppkey));
INSERT INTO brand SELECT i, 'brand ' || (i % 4) FROM generate_series(0, 9) i;
INSERT INTO part SELECT i, 'part ' || i, i % 10, i % 7 FROM generate_series(1, 2000) i;
INSERT INTO supply SELECT 1 + i % 2000, i, (i * 7) % 101 FROM generate_series(1, 8000) i;
ANALYZE brand, part, supply;

SELECT plan(47);

-- Q16's shape: suppliers per brand and size (count(DISTINCT ...) is kept
-- by keys; grouped, by the keys of the supplies it counts)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_lk.suppliers FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.brand, p.size, count(DISTINCT s.suppkey) AS suppliers
      FROM tap_lk.supply s JOIN tap_lk.part p ON p.partkey = s.partkey
     GROUP BY p.brand, p.size$$) \g /dev/null
-- a select-project-join: the parts that have a dear supply
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_lk.dear FRESHNESS = INTERVAL '1' SECOND AS
    SELECT DISTINCT p.name, p.size
      FROM tap_lk.part p JOIN tap_lk.supply s ON s.partkey = p.partkey
     WHERE s.cost > 95$$) \g /dev/null
-- supply on the nullable side of an outer join: looked up through its ON
-- equality.  Controls: the labels of brands with dear supplies, part
-- names no key either (it joins brand by id), so supply has nothing to
-- look up through; an outer join's ON without an equality.  Grouped so,
-- the rows it aggregates are kept instead (by_label)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_lk.labels FRESHNESS = INTERVAL '1' SECOND AS
    SELECT DISTINCT b.label
      FROM tap_lk.supply s JOIN tap_lk.part p ON p.partkey = s.partkey
      JOIN tap_lk.brand b ON b.id = p.brand
     WHERE s.cost > 90$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_lk.by_label FRESHNESS = INTERVAL '1' SECOND AS
    SELECT b.label, count(DISTINCT s.suppkey) AS suppliers
      FROM tap_lk.supply s JOIN tap_lk.part p ON p.partkey = s.partkey
      JOIN tap_lk.brand b ON b.id = p.brand
     GROUP BY b.label$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_lk.with_supply FRESHNESS = INTERVAL '1' SECOND AS
    SELECT DISTINCT p.size, s.suppkey IS NULL AS unsupplied
      FROM tap_lk.part p LEFT JOIN tap_lk.supply s ON s.partkey = p.partkey AND s.cost > 50$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_lk.with_supply_counts FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.size, count(DISTINCT s.suppkey) AS suppliers
      FROM tap_lk.part p LEFT JOIN tap_lk.supply s ON s.partkey = p.partkey AND s.cost > 50
     GROUP BY p.size$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_lk.no_equality FRESHNESS = INTERVAL '1' SECOND AS
    SELECT p.partkey, count(s.suppkey) AS dearer
      FROM tap_lk.part p LEFT JOIN tap_lk.supply s ON s.cost > p.size * 14 AND s.suppkey < 40
     WHERE p.partkey < 10 GROUP BY p.partkey$$) \g /dev/null
-- and a join on a column of a nondeterministic collation ('a' = 'A'):
-- a lookup could compare otherwise than the join (grouped, the rows it
-- counts are kept, and their keys compare as the join does: quantities)
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE label (name text COLLATE ci PRIMARY KEY, grp int NOT NULL);
CREATE TABLE item (id int PRIMARY KEY, name text COLLATE ci NOT NULL, qty int NOT NULL);
INSERT INTO label SELECT 'n' || i, i % 3 FROM generate_series(1, 30) i;
INSERT INTO item SELECT i, 'N' || (1 + i % 30), i FROM generate_series(1, 300) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_lk.by_group FRESHNESS = INTERVAL '1' SECOND AS
    SELECT DISTINCT l.grp
      FROM tap_lk.item i JOIN tap_lk.label l ON l.name = i.name
     WHERE i.qty > 200$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_lk.quantities FRESHNESS = INTERVAL '1' SECOND AS
    SELECT l.grp, count(DISTINCT i.qty) AS quantities
      FROM tap_lk.item i JOIN tap_lk.label l ON l.name = i.name
     GROUP BY l.grp$$) \g /dev/null
-- TPC-H Q4's shape: orders counted by priority if some line of theirs is
-- late; the subquery is correlated on the order's key, which is no key of
-- the result: a changed line names the priority of its order
CREATE TABLE orders (orderkey int PRIMARY KEY, priority text NOT NULL, day date NOT NULL);
CREATE TABLE line (orderkey int NOT NULL, linenumber int NOT NULL, late bool NOT NULL,
                   PRIMARY KEY (orderkey, linenumber));
INSERT INTO orders SELECT i, 'p' || (i % 5), date '2024-01-01' + i % 90 FROM generate_series(1, 3000) i;
INSERT INTO line SELECT 1 + i % 2900, i, i % 13 = 0 FROM generate_series(1, 12000) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_lk.late_orders FRESHNESS = INTERVAL '1' SECOND AS
    SELECT o.priority, count(*) AS orders FROM tap_lk.orders o
     WHERE o.day >= date '2024-01-15'
       AND EXISTS (SELECT FROM tap_lk.line l WHERE l.orderkey = o.orderkey AND l.late)
     GROUP BY o.priority$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_lk.punctual FRESHNESS = INTERVAL '1' SECOND AS
    SELECT DISTINCT o.priority FROM tap_lk.orders o
     WHERE NOT EXISTS (SELECT FROM tap_lk.line l WHERE o.orderkey = l.orderkey AND l.late)$$) \g /dev/null

SELECT isnt(wait_for($$SELECT bool_and(s.synced)
                          FROM materialized_table_internal.continuous_state s
                          JOIN pg_class c ON c.oid = s.relid
                         WHERE c.relnamespace = 'tap_lk'::regnamespace
                        HAVING count(*) = 11$$, 30), NULL,
            'the worker takes the tables up');
SELECT is(relreplident::text, 'f', 'the joined source got REPLICA IDENTITY FULL')
  FROM pg_class WHERE oid = 'tap_lk.supply'::regclass;
SELECT matches(maintenance_detail, '^the rows it aggregates are kept in a hidden table, recomputed for the changed values of partkey',
               'suppliers: grouped by columns of part, the supplies it counts are kept instead')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_lk.suppliers'::regclass;
SELECT matches(maintenance_detail, 'a change of supply recomputes the rows of the part rows it joins \(by partkey\)',
               'dear: supply''s changes name the keys of the parts they join')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_lk.dear'::regclass;
SELECT matches(maintenance_detail, 'a change of supply recomputes the whole table',
               'labels (control): nothing to look up through, supply recomputes')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_lk.labels'::regclass;
SELECT matches(maintenance_detail, '^the rows it aggregates are kept in a hidden table',
               'by_label: grouped, the rows it counts are kept instead')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_lk.by_label'::regclass;
SELECT matches(maintenance_detail, 'a change of supply recomputes the rows of the part rows it joins \(by partkey\)',
               'with_supply: an outer join''s nullable side names the keys of the preserved rows it joins')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_lk.with_supply'::regclass;
SELECT matches(maintenance_detail, '^the rows it aggregates are kept in a hidden table, recomputed for the changed values of partkey_2',
               'with_supply_counts: grouped, the rows it counts are kept, by the part the nullable side joins')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_lk.with_supply_counts'::regclass;
SELECT matches(maintenance_detail, 'a change of supply recomputes the whole table',
               'no_equality (control): an outer join''s ON without an equality recomputes')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_lk.no_equality'::regclass;
SELECT matches(maintenance_detail, 'a change of item recomputes the whole table',
               'by_group (control): a join by a nondeterministic collation recomputes')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_lk.by_group'::regclass;
SELECT matches(maintenance_detail, 'a change of line, read in a subquery correlated with orders, recomputes the rows of the orders rows it names \(by orderkey\)',
               'punctual: a changed line names the priority of its order')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_lk.punctual'::regclass;
SELECT matches(maintenance_detail, '^the rows it aggregates are kept in a hidden table, recomputed for the changed values of orderkey',
               'late_orders: grouped, the rows it counts are kept by their orders instead')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_lk.late_orders'::regclass;

-- supplies dearer and cheaper
CALL step($$UPDATE tap_lk.supply SET cost = cost + 50 WHERE suppkey IN (7, 15, 2007);
            UPDATE tap_lk.supply SET cost = 1 WHERE cost > 99$$);
SELECT isnt(converged(20), NULL, 'costs changed: converged');
SELECT is(mismatches('suppliers'), 0::bigint, 'suppliers equals its query');
SELECT is(mismatches('dear'), 0::bigint, 'dear equals its query');
SELECT is(cycles_since('tap_lk.suppliers'), 'KEYS', 'suppliers: by keys of its supplies, not a recompute');
SELECT is(cycles_since('tap_lk.dear'), 'KEYS', 'dear: by keys, not a recompute');
SELECT is(cycles_since('tap_lk.labels'), 'FULL', 'labels (control): recomputed');
SELECT is(cycles_since('tap_lk.by_label'), 'KEYS', 'by_label: by keys of the rows it counts');
SELECT is(mismatches('labels') + mismatches('by_label'), 0::bigint, 'labels and by_label equal their queries');

-- supplies deleted, new ones (one of a new supplier), one moved to another part
CALL step($$DELETE FROM tap_lk.supply WHERE suppkey IN (3, 4003);
            INSERT INTO tap_lk.supply VALUES (11, 90001, 0.5), (12, 90002, 99), (2000, 90003, 96);
            UPDATE tap_lk.supply SET partkey = 13 WHERE suppkey = 14$$);
SELECT isnt(converged(20), NULL, 'supplies deleted, added and moved: converged');
SELECT is(mismatches('suppliers'), 0::bigint, 'suppliers equals its query');
SELECT is(mismatches('dear'), 0::bigint, 'dear equals its query');
SELECT is(cycles_since('tap_lk.suppliers'), 'KEYS', 'suppliers: by keys');
SELECT is(cycles_since('tap_lk.dear'), 'KEYS', 'dear: by keys');
SELECT is(cycles_since('tap_lk.with_supply'), 'KEYS', 'with_supply: by keys');
SELECT is(cycles_since('tap_lk.with_supply_counts'), 'KEYS', 'with_supply_counts: by keys');
SELECT is(cycles_since('tap_lk.no_equality'), 'FULL', 'no_equality (control): recomputed');

-- a part changes brand and size in the same transaction as its supplies:
-- its own change names its old and new groups, the supplies' the new ones
CALL step($$UPDATE tap_lk.part SET brand = 3, size = 6 WHERE partkey = 21;
            INSERT INTO tap_lk.supply VALUES (21, 90004, 97);
            DELETE FROM tap_lk.supply WHERE partkey = 22$$);
SELECT isnt(converged(20), NULL, 'a part and its supplies changed together: converged');
SELECT is(mismatches('suppliers'), 0::bigint, 'suppliers equals its query');
SELECT is(mismatches('dear'), 0::bigint, 'dear equals its query');
SELECT is(cycles_since('tap_lk.suppliers'), 'KEYS', 'suppliers: by keys');
SELECT is(mismatches('by_label') + mismatches('with_supply') + mismatches('with_supply_counts') + mismatches('no_equality'), 0::bigint,
          'the controls and the outer join equal their queries');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');

-- items renamed in another case (the same label to the join), moved to
-- another label, dearer; a label moves to another group
CALL step($$UPDATE tap_lk.item SET name = lower(name) WHERE id % 7 = 0;
            UPDATE tap_lk.item SET name = 'n' || (1 + id % 29), qty = qty + 1000 WHERE id % 11 = 0;
            UPDATE tap_lk.label SET grp = grp + 10 WHERE name = 'N5'$$);
SELECT isnt(converged(20), NULL, 'items and a label changed: converged');
SELECT is(mismatches('by_group') + mismatches('quantities'), 0::bigint, 'by_group and quantities equal their queries');
SELECT is(cycles_since('tap_lk.quantities'), 'KEYS', 'quantities: by keys of the rows it counts');

-- lines late and on time, deleted, added to orders that had none, moved
CALL step($$UPDATE tap_lk.line SET late = NOT late WHERE linenumber % 97 = 0;
            DELETE FROM tap_lk.line WHERE orderkey BETWEEN 100 AND 110;
            INSERT INTO tap_lk.line VALUES (2950, 1, true), (2951, 1, false);
            UPDATE tap_lk.line SET orderkey = 2990 WHERE linenumber = 26$$);
SELECT isnt(converged(20), NULL, 'lines changed: converged');
SELECT is(mismatches('late_orders'), 0::bigint, 'late_orders equals its query');
SELECT is(mismatches('punctual'), 0::bigint, 'punctual equals its query');
SELECT is(cycles_since('tap_lk.late_orders'), 'KEYS', 'late_orders: by keys of its orders');
SELECT is(cycles_since('tap_lk.punctual'), 'KEYS', 'punctual: by keys, looked up');
-- an order changes priority with its lines
CALL step($$UPDATE tap_lk.orders SET priority = 'p9' WHERE orderkey IN (13, 26);
            DELETE FROM tap_lk.line WHERE orderkey = 26$$);
SELECT isnt(converged(20), NULL, 'an order and its lines changed: converged');
SELECT is(mismatches('late_orders'), 0::bigint, 'late_orders equals its query');
SELECT is(mismatches('punctual'), 0::bigint, 'punctual equals its query');
SELECT is(cycles_since('tap_lk.late_orders'), 'KEYS', 'late_orders: by keys');
SELECT is(failed_cycles(), 0::bigint, 'still no cycle failed');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_lk.' || t) FROM unnest(ARRAY['suppliers', 'dear', 'labels', 'by_label', 'with_supply', 'with_supply_counts', 'no_equality', 'by_group', 'quantities', 'late_orders', 'punctual']) t \g /dev/null
RESET search_path;
DROP SCHEMA tap_lk CASCADE;
