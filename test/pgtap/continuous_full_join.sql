-- CONTINUOUS tables of a FULL JOIN of two tables: a changed row of either
-- names the keys of its own table's columns (the rows it is in, matched or
-- null-extended) and, through the ON equality, the other table's key
-- column it equals (that table's rows whose null-extended row comes or
-- goes).  Each table holds exactly its query's rows as matches come and
-- go, with NULL join values, and its cycles are by keys
-- (refresh_history.strategy).  Control: a result without a column of one
-- of the tables recomputes.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_full_join
\set with_cycles
\ir ../lib/tap_helpers.sql
SET search_path = tap_full_join, public;

CREATE TABLE a (id int PRIMARY KEY, k int, v text NOT NULL);
CREATE TABLE b (id int PRIMARY KEY, w text NOT NULL);
-- (a recompute of everything costs far more than one of a few keys, so
-- that the measured costs choose keys however loaded the machine is)
INSERT INTO a SELECT i, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 700 END, 'v' || i FROM generate_series(1, 30000) i;
INSERT INTO b SELECT i, 'w' || i FROM generate_series(350, 1000) i;

SELECT plan(10);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_full_join.pairs FRESHNESS = INTERVAL '1' SECOND AS
    SELECT a.id, a.v, b.id AS bid, b.w FROM tap_full_join.a FULL JOIN tap_full_join.b ON b.id = a.k;
  CREATE MATERIALIZED TABLE tap_full_join.per_key FRESHNESS = INTERVAL '1' SECOND AS
    SELECT a.k, b.id AS bid, count(*) AS n, string_agg(a.v, ',' ORDER BY a.id) AS vs
      FROM tap_full_join.a FULL JOIN tap_full_join.b ON b.id = a.k GROUP BY a.k, b.id;
  CREATE MATERIALIZED TABLE tap_full_join.values_only FRESHNESS = INTERVAL '1' SECOND AS
    SELECT a.v FROM tap_full_join.a FULL JOIN tap_full_join.b ON b.id = a.k
$m$)$$, 'the tables are created');
SELECT is((SELECT maintenance_detail FROM materialized_table.materialized_tables WHERE table_name = 'pairs'::regclass),
          'rows are recomputed for the changed values of id, bid; a change of b recomputes the rows of the a rows it joins (by id)',
          'pairs: both tables name keys, b''s changes those of the a rows they join, looked up');
SELECT matches((SELECT maintenance_detail FROM materialized_table.materialized_tables WHERE table_name = 'values_only'::regclass),
               'no change of a source names key values of the result', 'values_only (control): recomputed');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN (SELECT table_name FROM tap_full_join.mine)$$, 30),
            NULL, 'the worker takes them up');
SELECT isnt(converged(20), NULL, 'every table equals its query');
INSERT INTO mark SELECT clock_timestamp();

-- matches come (a new b row) and go (a b row deleted, an a row moved away)
INSERT INTO b VALUES (100, 'new'), (5000, 'alone');
DELETE FROM b WHERE id IN (400, 401);
UPDATE a SET k = 100 WHERE id IN (5, 6);
UPDATE a SET k = NULL WHERE id = 402;
INSERT INTO a VALUES (90001, 5000, 'joins alone'), (90002, NULL, 'none'), (90003, 99999, 'nowhere');
DELETE FROM a WHERE k = 700 - 1;
SELECT isnt(converged(20), NULL, 'after changes of both tables every table equals its query');
UPDATE b SET w = 'renamed' WHERE id IN (450, 5000);
UPDATE a SET v = 'changed' WHERE id % 1000 = 1;
SELECT isnt(converged(20), NULL, 'after more changes every table equals its query');
SELECT is(cycles_of('pairs', 'FULL') + cycles_of('per_key', 'FULL'), 0::bigint,
          'the keyed tables applied every change by keys');
SELECT cmp_ok(cycles('KEYS'), '>=', 4::bigint, 'they ran cycles by keys');
SELECT cmp_ok(cycles_of('values_only', 'FULL'), '>', 0::bigint,
              'the control was recomputed (a recompute would have been seen)');

SELECT * FROM finish();
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM mine \g /dev/null
DROP SCHEMA tap_full_join CASCADE;
