-- CONTINUOUS tables over a table with inheritance children, and over a
-- sub-partitioned table read at a middle level: the changes of every child,
-- grandchild and leaf partition are followed, whatever its own layout, as
-- are children added, dropped, or added and removed with INHERIT / NO
-- INHERIT while the tables run; a query with ONLY ignores them.  A child that decoding cannot see
-- (unlogged) makes the table recompute every freshness period.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
SET client_min_messages = warning;
CREATE SCHEMA tap_inh;
SET search_path = tap_inh, public;
CREATE TABLE parent (i int, v int);
CREATE TABLE child_a () INHERITS (parent);
-- a child with columns of its own, before and after the inherited ones
CREATE TABLE child_b (extra text, v2 int) INHERITS (parent);
CREATE TABLE grandchild () INHERITS (child_a);
CREATE TABLE loner (i int, v int);
INSERT INTO parent VALUES (1, 10);
INSERT INTO child_a VALUES (2, 20), (3, 30);
INSERT INTO child_b VALUES (8, 80, 'x', 0);
INSERT INTO loner VALUES (9, 90);

-- a partitioned table with a partitioned partition, read at that level
CREATE TABLE sales (region text, day int, amount int) PARTITION BY LIST (region);
CREATE TABLE sales_eu PARTITION OF sales FOR VALUES IN ('eu') PARTITION BY RANGE (day);
CREATE TABLE sales_eu_1 PARTITION OF sales_eu FOR VALUES FROM (0) TO (100);
CREATE TABLE sales_eu_2 PARTITION OF sales_eu FOR VALUES FROM (100) TO (200);
CREATE TABLE sales_us PARTITION OF sales FOR VALUES IN ('us');
INSERT INTO sales VALUES ('eu', 1, 5), ('eu', 150, 7), ('us', 1, 100);

CREATE FUNCTION wait_for(query text, timeout float) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    start timestamptz := clock_timestamp();
    done boolean;
BEGIN
    LOOP
        EXECUTE query INTO done;
        IF done THEN
            RETURN true;
        END IF;
        IF clock_timestamp() - start > timeout * interval '1 second' THEN
            RETURN false;
        END IF;
        PERFORM pg_sleep(0.1);
    END LOOP;
END
$$;

-- rows of the table that are not its query's, and the reverse
CREATE FUNCTION differs(mt text, query text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('SELECT (SELECT count(*) FROM (TABLE %s EXCEPT ALL %s) a)
                         + (SELECT count(*) FROM (%s EXCEPT ALL TABLE %s) b)', mt, query, query, mt)
       INTO n;
    RETURN n;
END
$$;

CREATE FUNCTION all_equal() RETURNS boolean LANGUAGE sql AS $$
  SELECT differs('tap_inh.rows_mt', 'SELECT i, v FROM tap_inh.parent') = 0
     AND differs('tap_inh.sums_mt', 'SELECT i, sum(v) AS s, count(*) AS n FROM tap_inh.parent GROUP BY i') = 0
     AND differs('tap_inh.only_mt', 'SELECT i, v FROM ONLY tap_inh.parent') = 0
     AND differs('tap_inh.eu_mt', 'SELECT day, sum(amount) AS total FROM tap_inh.sales_eu GROUP BY day') = 0
$$;

SELECT plan(14);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE rows_mt FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS
    AS SELECT i, v FROM parent;
  CREATE MATERIALIZED TABLE sums_mt FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS
    AS SELECT i, sum(v) AS s, count(*) AS n FROM parent GROUP BY i;
  CREATE MATERIALIZED TABLE only_mt FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS
    AS SELECT i, v FROM ONLY parent;
  CREATE MATERIALIZED TABLE eu_mt FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS
    AS SELECT day, sum(amount) AS total FROM sales_eu GROUP BY day
$$) \g /dev/null

SELECT is((SELECT array_agg(maintenance ORDER BY table_name::text)
             FROM materialized_table.materialized_tables
            WHERE table_name::text IN ('rows_mt', 'sums_mt', 'only_mt', 'eu_mt')),
          ARRAY['INCREMENTAL', 'INCREMENTAL', 'INCREMENTAL', 'INCREMENTAL'],
          'the four tables are maintained incrementally');
SELECT is((SELECT array_agg(relname::text ORDER BY relname) FROM pg_class
            WHERE relnamespace = 'tap_inh'::regnamespace AND relkind = 'r'
              AND relreplident = 'f'),
          ARRAY['child_a', 'child_b', 'grandchild', 'parent', 'sales_eu_1', 'sales_eu_2'],
          'the children and the partitions read get REPLICA IDENTITY FULL, not the others');
SELECT ok(wait_for('SELECT tap_inh.all_equal()', 15), 'every table starts equal to its query');

-- changes in every child, in a grandchild, and in the parent itself
DELETE FROM child_a WHERE i = 2;
UPDATE child_a SET v = 31 WHERE i = 3;
INSERT INTO child_b VALUES (4, 40, 'y', 1);
UPDATE child_b SET v = 81, extra = 'z' WHERE i = 8;
INSERT INTO grandchild VALUES (5, 50), (3, 3);
INSERT INTO parent VALUES (6, 60);
SELECT ok(wait_for($$SELECT tap_inh.all_equal()
                       AND (SELECT v FROM tap_inh.rows_mt WHERE i = 8) = 81
                       AND (SELECT s FROM tap_inh.sums_mt WHERE i = 3) = 34$$, 15),
          'changes of children and grandchildren are followed');
SELECT is((SELECT array_agg(i ORDER BY i) FROM only_mt), ARRAY[1, 6],
          'ONLY parent keeps the parent''s own rows');

UPDATE grandchild SET v = 55 WHERE i = 5;
DELETE FROM child_b WHERE i = 4;
SELECT ok(wait_for($$SELECT tap_inh.all_equal()
                       AND (SELECT v FROM tap_inh.rows_mt WHERE i = 5) = 55
                       AND NOT EXISTS (SELECT FROM tap_inh.rows_mt WHERE i = 4)$$, 15),
          'an update in a grandchild and a delete in a child are followed');

-- a sub-partitioned partition read directly: its leaves' changes count
INSERT INTO sales VALUES ('eu', 2, 1), ('us', 2, 1000);
UPDATE sales SET amount = 70 WHERE region = 'eu' AND day = 150;
DELETE FROM sales WHERE region = 'eu' AND day = 1;
SELECT ok(wait_for($$SELECT tap_inh.all_equal()
                       AND (SELECT total FROM tap_inh.eu_mt WHERE day = 150) = 70
                       AND NOT EXISTS (SELECT FROM tap_inh.eu_mt WHERE day = 1)$$, 15),
          'changes in the leaves of a sub-partitioned partition read directly are followed');

-- a child created while the tables run
CREATE TABLE late () INHERITS (parent);
ALTER TABLE late REPLICA IDENTITY FULL;
INSERT INTO late VALUES (7, 70);
UPDATE late SET v = 71;
SELECT ok(wait_for($$SELECT tap_inh.all_equal()
                       AND (SELECT v FROM tap_inh.rows_mt WHERE i = 7) = 71$$, 15),
          'a child created while the tables run is followed');

-- a table whose changes were already decoded becomes a child, then not
INSERT INTO loner VALUES (10, 100);
SELECT ok(wait_for('SELECT tap_inh.all_equal()', 15), 'a change of an unrelated table changes nothing');
ALTER TABLE loner INHERIT parent;
ALTER TABLE loner REPLICA IDENTITY FULL;
UPDATE loner SET v = 91 WHERE i = 9;
SELECT ok(wait_for($$SELECT tap_inh.all_equal()
                       AND (SELECT v FROM tap_inh.rows_mt WHERE i = 9) = 91
                       AND (SELECT s FROM tap_inh.sums_mt WHERE i = 10) = 100$$, 15),
          'a table that becomes a child (INHERIT) is followed from then on');
ALTER TABLE loner NO INHERIT parent;
UPDATE loner SET v = 92 WHERE i = 9;
INSERT INTO child_a VALUES (11, 110);
SELECT ok(wait_for($$SELECT tap_inh.all_equal()
                       AND NOT EXISTS (SELECT FROM tap_inh.rows_mt WHERE i IN (9, 10))
                       AND EXISTS (SELECT FROM tap_inh.rows_mt WHERE i = 11)$$, 15),
          'a table no longer a child (NO INHERIT) leaves the tables, and its changes do not count');

-- a child dropped: its rows leave without changes to decode
DROP TABLE late;
SELECT ok(wait_for($$SELECT tap_inh.all_equal()
                       AND NOT EXISTS (SELECT FROM tap_inh.rows_mt WHERE i = 7)$$, 15),
          'a dropped child''s rows leave the tables');

-- a child decoding cannot see: recomputed every freshness period
CREATE UNLOGGED TABLE invisible () INHERITS (parent);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE polled_mt FRESHNESS = INTERVAL '1' SECOND REFRESH_MODE = CONTINUOUS
    AS SELECT i, v FROM parent
$$) \g /dev/null
SELECT matches((SELECT maintenance_detail FROM materialized_table.materialized_tables
                 WHERE table_name = 'polled_mt'::regclass),
               'child table that is foreign, temporary or unlogged.*recomputed every freshness period',
               'a child decoding cannot see makes the table recompute every freshness period, and says why');
INSERT INTO invisible VALUES (12, 120);
SELECT ok(wait_for($$SELECT tap_inh.differs('tap_inh.polled_mt', 'SELECT i, v FROM tap_inh.parent') = 0$$, 15),
          'the unlogged child''s rows arrive with the next period');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE rows_mt; DROP MATERIALIZED TABLE sums_mt;
  DROP MATERIALIZED TABLE only_mt; DROP MATERIALIZED TABLE eu_mt; DROP MATERIALIZED TABLE polled_mt') \g /dev/null
DROP SCHEMA tap_inh CASCADE;
