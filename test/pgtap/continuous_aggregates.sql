-- Aggregates kept by deltas, over time: global aggregates (one row, also
-- once every row is gone), grouping by expressions, FILTER, HAVING (groups
-- that cross its threshold come and go), expressions over aggregates,
-- numeric sums shown with the display scale of their values (one known
-- scale, or several counted), numeric groups of equal values written with
-- other scales, and a NaN summed and taken out again (the table is
-- recomputed then).  Each is compared with its query, digit for digit
-- (as text, where EXCEPT ALL would find 1.0 equal to 1.00).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_agg
\ir ../lib/tap_helpers.sql
SET search_path = tap_agg, public;

CREATE TABLE li (id int PRIMARY KEY, flag text NOT NULL, price numeric(12,2) NOT NULL,
                 disc numeric(4,2) NOT NULL, qty int, day timestamp NOT NULL, w numeric);
INSERT INTO li SELECT i, chr(65 + i % 3), (i % 97) * 1.25, (i % 10) / 100.0, i % 7,
                      timestamp '2024-01-01' + i * interval '37 minutes', NULL
  FROM generate_series(1, 3000) i;

-- every column of every row, as text, both ways (the query read through
-- the table's query view)
CREATE FUNCTION text_mismatches(t regclass) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v text := (SELECT query_view::regclass::text FROM materialized_table_internal.mt_table WHERE relid = t);
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((SELECT x::text FROM %s x EXCEPT ALL SELECT y::text FROM %s y)
                                UNION ALL (SELECT y::text FROM %s y EXCEPT ALL SELECT x::text FROM %s x)) d',
                   t, v, v, t) INTO n;
    RETURN n;
END
$$;
CREATE VIEW mine AS
  SELECT t.* FROM materialized_table.materialized_tables t JOIN pg_class c ON c.oid = t.table_name
   WHERE c.relnamespace = 'tap_agg'::regnamespace;
CREATE FUNCTION all_exact() RETURNS boolean LANGUAGE sql AS $$
  SELECT bool_and(tap_agg.text_mismatches(table_name) = 0) FROM tap_agg.mine
$$;

SELECT plan(14);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_agg.q6 FRESHNESS = INTERVAL '1' SECOND AS
    SELECT sum(price * disc) AS revenue, count(*) AS n, avg(qty) AS mean_qty FROM tap_agg.li WHERE qty < 5;
  CREATE MATERIALIZED TABLE tap_agg.q1 FRESHNESS = INTERVAL '1' SECOND AS
    SELECT flag, sum(price * (1 - disc)) AS disc_price, avg(price) AS avg_price, avg(price * disc) AS avg_disc,
           count(*) FILTER (WHERE qty > 3) AS big, sum(qty) FILTER (WHERE w IS NULL) AS plain_qty
      FROM tap_agg.li GROUP BY flag;
  CREATE MATERIALIZED TABLE tap_agg.daily FRESHNESS = INTERVAL '1' SECOND AS
    SELECT date_trunc('day', day) AS d, id % 4 AS bucket, count(*) AS n,
           100.0 * sum(CASE WHEN flag = 'A' THEN price ELSE 0 END) / sum(price) AS share
      FROM tap_agg.li GROUP BY 1, 2 HAVING count(*) > 8;
  CREATE MATERIALIZED TABLE tap_agg.mixed FRESHNESS = INTERVAL '1' SECOND AS
    SELECT flag, sum(CASE WHEN qty > 5 THEN price * disc ELSE round(price, 0) END) AS m FROM tap_agg.li GROUP BY flag;
  CREATE MATERIALIZED TABLE tap_agg.by_w FRESHNESS = INTERVAL '1' SECOND AS
    SELECT round(w, 0) AS w0, count(*) AS n FROM tap_agg.li WHERE w IS NOT NULL GROUP BY 1;
  CREATE MATERIALIZED TABLE tap_agg.empty FRESHNESS = INTERVAL '1' SECOND AS
    SELECT count(*) AS n, sum(price) AS total, avg(qty) AS mean FROM tap_agg.li WHERE flag = 'Z'
$$) \g /dev/null

SELECT is((SELECT count(*) FROM mine WHERE maintenance = 'INCREMENTAL'
              AND maintenance_detail LIKE 'count, sum and avg%'),
          6::bigint, 'each shape is maintained by deltas');
SELECT matches((SELECT maintenance_detail FROM materialized_table.materialized_tables
                 WHERE table_name = 'tap_agg.q6'::regclass),
               'of all rows', 'a global aggregate is kept as one state row');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the tables up');
SELECT is((SELECT n FROM empty), 0::bigint, 'a global aggregate of no rows has its one row');

-- a mixed batch: updates of group and aggregated columns, deletes, inserts
UPDATE li SET price = price + 0.5, disc = 0.07 WHERE id % 13 = 0;
DELETE FROM li WHERE id % 17 = 0;
INSERT INTO li SELECT i, chr(65 + i % 4), (i % 97) * 1.5, (i % 10) / 100.0, i % 7,
                      timestamp '2024-03-01' + i * interval '1 hour', NULL
  FROM generate_series(5000, 5100) i;
UPDATE li SET qty = 9, flag = 'B' WHERE id % 11 = 0;
SELECT isnt(wait_for('SELECT tap_agg.all_exact()', 20), NULL,
            'after a mixed batch every table equals its query, digit for digit');
SELECT is((SELECT count(*) FROM q1 WHERE flag = 'D'), 1::bigint, 'a new group appears');

-- groups cross the HAVING threshold both ways
DELETE FROM li WHERE day >= '2024-03-01' AND id % 2 = 0;
SELECT isnt(wait_for($$SELECT tap_agg.all_exact() AND NOT EXISTS (SELECT FROM tap_agg.daily WHERE d >= '2024-03-01' AND n <= 8)$$, 20),
            NULL, 'groups that fall under HAVING leave the table');
INSERT INTO li SELECT i, 'A', 10, 0.01, 1, timestamp '2024-03-02 05:00', NULL FROM generate_series(6000, 6040) i;
SELECT isnt(wait_for($$SELECT tap_agg.all_exact() AND EXISTS (SELECT FROM tap_agg.daily WHERE d = '2024-03-02' AND n > 8)$$, 20),
            NULL, 'groups that pass HAVING come in');

-- the largest scale's values go: the sum is shown with the next one
UPDATE li SET qty = 1 WHERE qty > 5;
SELECT isnt(wait_for($$SELECT tap_agg.all_exact() AND (SELECT bool_and(scale(m) = 0) FROM tap_agg.mixed)$$, 20),
            NULL, 'a sum loses the display scale of values that went');
UPDATE li SET qty = 6 WHERE id % 5 = 0;
SELECT isnt(wait_for($$SELECT tap_agg.all_exact() AND (SELECT bool_and(scale(m) = 4) FROM tap_agg.mixed)$$, 20),
            NULL, 'and takes it again with values that came');

-- numeric groups: 1.0 and 1.00 are one group
UPDATE li SET w = CASE WHEN id % 2 = 0 THEN 1.0 ELSE 1.00 END WHERE id % 7 = 0;
SELECT isnt(wait_for($$SELECT tap_agg.converged(0) IS NOT NULL AND (SELECT count(*) FROM tap_agg.by_w) = 1$$, 20),
            NULL, 'equal numerics of other scales make one group');

-- a NaN summed, then taken out: recomputed, not stuck at NaN
UPDATE li SET w = 'NaN' WHERE id = 7;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_agg.nan FRESHNESS = INTERVAL '1' SECOND AS
    SELECT flag, sum(round(w, 2)) AS sw, count(*) AS n FROM tap_agg.li GROUP BY flag
$$) \g /dev/null
UPDATE li SET w = 'NaN' WHERE id = 14;
SELECT isnt(wait_for($$SELECT tap_agg.all_exact() AND (SELECT count(*) FROM tap_agg.nan WHERE sw = 'NaN') > 0$$, 20),
            NULL, 'a NaN shows in its group''s sum');
UPDATE li SET w = 2 WHERE w = 'NaN';
SELECT isnt(wait_for($$SELECT tap_agg.all_exact() AND NOT EXISTS (SELECT FROM tap_agg.nan WHERE sw = 'NaN')$$, 20),
            NULL, 'taken out, the sum is right again');

-- every row gone: the global aggregate keeps its one row
DELETE FROM li;
SELECT isnt(wait_for($$SELECT tap_agg.all_exact() AND (SELECT n FROM tap_agg.q6) = 0 AND (SELECT revenue FROM tap_agg.q6) IS NULL$$, 20),
            NULL, 'with no rows left, a global aggregate shows count 0 and NULL sums');

SELECT * FROM finish();
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM mine \g /dev/null
DROP SCHEMA tap_agg CASCADE;
