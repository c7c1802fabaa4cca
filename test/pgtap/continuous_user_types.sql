-- CONTINUOUS tables over a column of a type whose only = lives outside
-- pg_catalog (its own operator class): every strategy's cycle compares its
-- values with that operator, found whatever the search_path, and follows
-- inserts, updates and deletes without a failed cycle.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_ut
\ir ../lib/tap_helpers.sql
DROP TYPE IF EXISTS public.tap_ut_int CASCADE;
CREATE TYPE public.tap_ut_int;
CREATE FUNCTION public.tap_ut_int_in(cstring) RETURNS public.tap_ut_int
  AS 'int4in' LANGUAGE internal IMMUTABLE STRICT;
CREATE FUNCTION public.tap_ut_int_out(public.tap_ut_int) RETURNS cstring
  AS 'int4out' LANGUAGE internal IMMUTABLE STRICT;
CREATE TYPE public.tap_ut_int (INPUT = public.tap_ut_int_in, OUTPUT = public.tap_ut_int_out, LIKE = int4);
CREATE FUNCTION public.tap_ut_int_eq(public.tap_ut_int, public.tap_ut_int) RETURNS bool
  AS 'int4eq' LANGUAGE internal IMMUTABLE STRICT;
CREATE FUNCTION public.tap_ut_int_lt(public.tap_ut_int, public.tap_ut_int) RETURNS bool
  AS 'int4lt' LANGUAGE internal IMMUTABLE STRICT;
CREATE FUNCTION public.tap_ut_int_cmp(public.tap_ut_int, public.tap_ut_int) RETURNS int
  AS 'btint4cmp' LANGUAGE internal IMMUTABLE STRICT;
CREATE FUNCTION public.tap_ut_int_hash(public.tap_ut_int) RETURNS int
  AS 'hashint4' LANGUAGE internal IMMUTABLE STRICT;
CREATE OPERATOR public.= (LEFTARG = public.tap_ut_int, RIGHTARG = public.tap_ut_int,
  FUNCTION = public.tap_ut_int_eq, COMMUTATOR = OPERATOR(public.=), HASHES, MERGES);
CREATE OPERATOR public.< (LEFTARG = public.tap_ut_int, RIGHTARG = public.tap_ut_int,
  FUNCTION = public.tap_ut_int_lt);
CREATE OPERATOR CLASS public.tap_ut_int_ops DEFAULT FOR TYPE public.tap_ut_int USING btree AS
  OPERATOR 1 public.<, OPERATOR 3 public.=,
  FUNCTION 1 public.tap_ut_int_cmp(public.tap_ut_int, public.tap_ut_int);
CREATE OPERATOR CLASS public.tap_ut_int_hash_ops DEFAULT FOR TYPE public.tap_ut_int USING hash AS
  OPERATOR 1 public.=, FUNCTION 1 public.tap_ut_int_hash(public.tap_ut_int);

SET search_path = tap_ut, public;
CREATE TABLE src (id int PRIMARY KEY, k public.tap_ut_int NOT NULL, k2 public.tap_ut_int NOT NULL,
                  v int NOT NULL);
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src SELECT i, (i % 5)::text::public.tap_ut_int, (i % 2)::text::public.tap_ut_int, i
  FROM generate_series(1, 200) i;

SELECT plan(6);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_ut.keyed FRESHNESS = INTERVAL '1' SECOND AS
    SELECT k, min(v) AS lo, max(v) AS hi FROM tap_ut.src GROUP BY k;
  CREATE MATERIALIZED TABLE tap_ut.state FRESHNESS = INTERVAL '1' SECOND AS
    SELECT k, count(*) AS n, avg(v) AS average FROM tap_ut.src GROUP BY k;
  CREATE MATERIALIZED TABLE tap_ut.own FRESHNESS = INTERVAL '1' SECOND AS
    SELECT k, k2, count(*) AS n, sum(v) AS total FROM tap_ut.src GROUP BY k, k2;
  CREATE MATERIALIZED TABLE tap_ut.pairs FRESHNESS = INTERVAL '1' SECOND AS
    SELECT k, k2, count(*) AS n, avg(v) AS average FROM tap_ut.src GROUP BY k, k2$m$)$$,
  'tables grouped by a column of that type are created');
SELECT is((SELECT count(*) FROM materialized_table.materialized_tables
             JOIN pg_class c ON c.oid = table_name
            WHERE c.relnamespace = 'tap_ut'::regnamespace AND maintenance = 'INCREMENTAL'),
          4::bigint, 'all of them incremental');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes them up');

-- under a search_path that does not hold the type's operators
SET search_path = pg_catalog;
INSERT INTO tap_ut.src SELECT i, (i % 7)::text::public.tap_ut_int, (i % 3)::text::public.tap_ut_int, i
  FROM generate_series(201, 300) i;
UPDATE tap_ut.src SET v = v + 1, k = '3'::text::public.tap_ut_int WHERE id % 10 = 0;
DELETE FROM tap_ut.src WHERE id % 9 = 0;
SET search_path = tap_ut, public;
SELECT isnt(converged(20), NULL, 'the tables follow inserts, updates and deletes');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');
SELECT is((SELECT count(*) FROM materialized_table.refresh_history h
             JOIN pg_class c ON c.oid = h.table_name
            WHERE c.relnamespace = 'tap_ut'::regnamespace AND h.trigger = 'CONTINUOUS'
              AND h.status = 'SUCCEEDED' AND h.rows > 0) > 0, true, 'cycles applied changes');

SELECT * FROM finish();
RESET search_path;
DROP SCHEMA tap_ut CASCADE;
DROP TYPE public.tap_ut_int CASCADE;
