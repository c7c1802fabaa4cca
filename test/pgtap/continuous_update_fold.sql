-- Joins kept by deltas, under updates that change only columns the query
-- reads as sums: the worker joins one row (new minus old) for such an
-- update instead of both versions.  Updates that change a column read any
-- other way (a join key, a filter, an avg), that set a sum's column to or
-- from NULL, whose difference overflows its type, or that change nothing
-- the query reads, each by itself and mixed in one transaction; all
-- converge, with no failed cycle.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_uf
\ir ../lib/tap_helpers.sql
SET search_path = tap_uf, public;

CREATE TABLE cust (id int PRIMARY KEY, region text NOT NULL);
INSERT INTO cust SELECT i, 'region ' || (i % 5) FROM generate_series(1, 100) i;
CREATE TABLE ord (id int PRIMARY KEY, cust_id int NOT NULL, ds date NOT NULL,
                  amount numeric(10,2) NOT NULL, qty int, big bigint NOT NULL, small smallint NOT NULL,
                  note text);
INSERT INTO ord SELECT i, 1 + i % 100, date '2024-01-01' + i % 10, (i % 100) + 0.25,
                       CASE WHEN i % 6 > 0 THEN i % 9 END, i, i % 100, NULL
  FROM generate_series(1, 5000) i;
ANALYZE cust, ord;

SELECT plan(6);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_uf.own FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c.region, o.ds, count(*) AS n, sum(o.amount) AS total, sum(o.big) AS big,
           sum(o.small) AS small
      FROM tap_uf.ord o JOIN tap_uf.cust c ON c.id = o.cust_id GROUP BY c.region, o.ds;
  CREATE MATERIALIZED TABLE tap_uf.hidden FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c.region, count(*) AS n, sum(o.qty) AS qty, avg(o.amount) AS avg_amount,
           sum(o.amount) AS total
      FROM tap_uf.ord o JOIN tap_uf.cust c ON c.id = o.cust_id GROUP BY c.region;
  CREATE MATERIALIZED TABLE tap_uf.filtered FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c.region, count(*) AS n, sum(o.amount) AS total
      FROM tap_uf.ord o JOIN tap_uf.cust c ON c.id = o.cust_id WHERE o.amount > 50
     GROUP BY c.region
$m$)$$, 'three join tables kept by deltas are created');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN ('tap_uf.own'::regclass, 'tap_uf.hidden'::regclass,
                                        'tap_uf.filtered'::regclass)$$, 60),
            NULL, 'the worker takes them up');

UPDATE ord SET amount = amount + 1.25 WHERE id % 3 = 0;
UPDATE ord SET qty = qty + 1 WHERE qty IS NOT NULL AND id % 4 = 0;
UPDATE ord SET small = small - 3, big = big * 2 WHERE id % 5 = 0;
UPDATE ord SET qty = NULL WHERE id % 10 = 1;
UPDATE ord SET qty = 7 WHERE qty IS NULL AND id % 20 = 1;
UPDATE ord SET note = 'x' WHERE id % 5 = 0;
UPDATE ord SET amount = amount - 1, cust_id = 1 + (cust_id * 7) % 100 WHERE id % 7 = 0;
UPDATE ord SET ds = ds + 1, amount = amount + 2 WHERE id % 11 = 0;
-- differences that overflow bigint and smallint
UPDATE ord SET big = 9223372036854775000 WHERE id = 1;
UPDATE ord SET big = -9223372036854775000 WHERE id = 1;
UPDATE ord SET small = 32000 WHERE id = 2;
UPDATE ord SET small = -32000 WHERE id = 2;
BEGIN;
UPDATE ord SET amount = amount + 1 WHERE id BETWEEN 100 AND 200;
UPDATE ord SET amount = amount + 1 WHERE id BETWEEN 150 AND 250;
INSERT INTO ord VALUES (6001, 5, date '2024-02-01', 10, 1, 1, 1, NULL);
UPDATE ord SET amount = amount * 3 WHERE id = 6001;
DELETE FROM ord WHERE id BETWEEN 240 AND 245;
UPDATE cust SET region = 'region 9' WHERE id = 7;
COMMIT;

SELECT isnt(converged(60), NULL, 'after the updates, all converge');
SELECT is(mismatches('own') + mismatches('hidden') + mismatches('filtered'), 0::bigint,
          'each equals its query');
SELECT is((SELECT big FROM own JOIN cust ON cust.region = own.region
            WHERE cust.id = 2 AND own.ds = date '2024-01-02'),
          (SELECT sum(big) FROM ord JOIN cust c ON c.id = ord.cust_id
            WHERE c.region = (SELECT region FROM cust WHERE id = 2) AND ds = date '2024-01-02'),
          'a sum whose rows'' difference overflowed its column type is right');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');

SELECT * FROM finish();
SELECT materialized_table.execute($$
  DROP MATERIALIZED TABLE tap_uf.own; DROP MATERIALIZED TABLE tap_uf.hidden;
  DROP MATERIALIZED TABLE tap_uf.filtered$$) \g /dev/null
RESET search_path;
DROP SCHEMA tap_uf CASCADE;
