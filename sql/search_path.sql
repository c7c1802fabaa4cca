-- The extension's own SQL means the same under any search_path: it never
-- runs an operator, function or type a user put earlier in the path, and
-- it finds the user's types and operators wherever they live.
CREATE SCHEMA sp_s;
CREATE TABLE sp_s.calls (what text);
CREATE TABLE sp_s.src (id int PRIMARY KEY, k int NOT NULL, v int NOT NULL);
INSERT INTO sp_s.src SELECT i, i % 3, i FROM generate_series(1, 12) i;

-- shadows of PostgreSQL's = for the types the extension's catalog queries
-- compare, which record that they ran
CREATE FUNCTION public.sp_shadow_eq(oid, oid) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN INSERT INTO sp_s.calls VALUES ('oid = oid'); RETURN $1 OPERATOR(pg_catalog.=) $2; END $$;
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = public.sp_shadow_eq);
CREATE FUNCTION public.sp_shadow_eq_regclass(oid, regclass) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN INSERT INTO sp_s.calls VALUES ('oid = regclass'); RETURN $1 OPERATOR(pg_catalog.=) $2::oid; END $$;
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = regclass, FUNCTION = public.sp_shadow_eq_regclass);
CREATE FUNCTION public.sp_shadow_eq_char("char", "char") RETURNS bool LANGUAGE plpgsql AS $$
BEGIN INSERT INTO sp_s.calls VALUES ('char = char'); RETURN $1 OPERATOR(pg_catalog.=) $2; END $$;
CREATE OPERATOR public.= (LEFTARG = "char", RIGHTARG = "char", FUNCTION = public.sp_shadow_eq_char);

-- with public before pg_catalog, every statement on materialized tables,
-- in a session with a temporary schema (a check of CREATE looks at it)
CREATE TEMP TABLE sp_tmp (x int);
SET search_path = public, pg_catalog, sp_s;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE sp_s.t1 (PRIMARY KEY (k) NOT ENFORCED) COMMENT 'one'
    FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
    AS SELECT k, count(*) AS n FROM sp_s.src GROUP BY k
$$);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE sp_s.t1 REFRESH');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE sp_s.t1 SUSPEND');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE sp_s.t1 RESUME');
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE sp_s.t1 AS SELECT k, count(*) AS n, sum(v) AS total FROM sp_s.src GROUP BY k
$$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE sp_s.t2 FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
    AS SELECT n, count(*) AS c FROM sp_s.t1 GROUP BY n
$$);
SELECT materialized_table.show_create('sp_s.t1') IS NOT NULL AS shown;
SELECT count(*) FROM materialized_table.materialized_tables WHERE table_name::text LIKE 'sp_s.%';
SELECT count(*) FROM materialized_table.lineage WHERE downstream::text LIKE 'sp_s.%';
SELECT materialized_table.scheduled_refresh('sp_s.t1', '2024-01-01 01:00:00+00');
ALTER TABLE sp_s.t1 RENAME TO t1_renamed;
ALTER TABLE sp_s.t1_renamed RENAME TO t1;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE sp_s.t2');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE sp_s.t1');
RESET search_path;
-- none of them ran a shadow
SELECT what, count(*) FROM sp_s.calls GROUP BY what ORDER BY what;
-- (the shadows do run where a user's own SQL picks them)
SET search_path = public, pg_catalog;
SELECT count(*) FROM pg_catalog.pg_class WHERE oid = 'sp_s.src'::regclass::oid;
RESET search_path;
SELECT what, count(*) > 0 AS ran FROM sp_s.calls GROUP BY what ORDER BY what;
DROP OPERATOR public.= (oid, oid);
DROP OPERATOR public.= (oid, regclass);
DROP OPERATOR public.= ("char", "char");
DROP FUNCTION public.sp_shadow_eq(oid, oid), public.sp_shadow_eq_regclass(oid, regclass),
              public.sp_shadow_eq_char("char", "char");

-- a column of a type in another schema, named as the user's search_path finds it
CREATE DOMAIN public.sp_posint AS int CHECK (VALUE > 0);
SET search_path = sp_s, public;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE sp_s.ut (a sp_posint, b) REFRESH_MODE = FULL AS SELECT 1 AS a, 2 AS b
$$);
SELECT a, b, pg_typeof(a) FROM sp_s.ut;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE sp_s.ut REFRESH');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE sp_s.ut');
RESET search_path;

-- a type whose only = is its own, outside pg_catalog: refreshes of a
-- partition compare its values with that operator
CREATE TYPE public.sp_int;
CREATE FUNCTION public.sp_int_in(cstring) RETURNS public.sp_int
  AS 'int4in' LANGUAGE internal IMMUTABLE STRICT;
CREATE FUNCTION public.sp_int_out(public.sp_int) RETURNS cstring
  AS 'int4out' LANGUAGE internal IMMUTABLE STRICT;
CREATE TYPE public.sp_int (INPUT = public.sp_int_in, OUTPUT = public.sp_int_out, LIKE = int4);
CREATE FUNCTION public.sp_int_eq(public.sp_int, public.sp_int) RETURNS bool
  AS 'int4eq' LANGUAGE internal IMMUTABLE STRICT;
CREATE FUNCTION public.sp_int_lt(public.sp_int, public.sp_int) RETURNS bool
  AS 'int4lt' LANGUAGE internal IMMUTABLE STRICT;
CREATE FUNCTION public.sp_int_cmp(public.sp_int, public.sp_int) RETURNS int
  AS 'btint4cmp' LANGUAGE internal IMMUTABLE STRICT;
CREATE FUNCTION public.sp_int_hash(public.sp_int) RETURNS int
  AS 'hashint4' LANGUAGE internal IMMUTABLE STRICT;
CREATE OPERATOR public.= (LEFTARG = public.sp_int, RIGHTARG = public.sp_int,
  FUNCTION = public.sp_int_eq, HASHES, MERGES);
CREATE OPERATOR public.< (LEFTARG = public.sp_int, RIGHTARG = public.sp_int,
  FUNCTION = public.sp_int_lt);
CREATE OPERATOR CLASS public.sp_int_ops DEFAULT FOR TYPE public.sp_int USING btree AS
  OPERATOR 1 public.<, OPERATOR 3 public.=, FUNCTION 1 public.sp_int_cmp(public.sp_int, public.sp_int);
CREATE OPERATOR CLASS public.sp_int_hash_ops DEFAULT FOR TYPE public.sp_int USING hash AS
  OPERATOR 1 public.=, FUNCTION 1 public.sp_int_hash(public.sp_int);
CREATE TABLE sp_s.typed (id int PRIMARY KEY, k public.sp_int NOT NULL, v int NOT NULL);
INSERT INTO sp_s.typed SELECT i, (i % 3)::text::public.sp_int, i FROM generate_series(1, 12) i;
SET search_path = sp_s, public;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE sp_s.by_k PARTITIONED BY (k) REFRESH_MODE = FULL
    AS SELECT k, count(*) AS n, sum(v) AS total FROM sp_s.typed GROUP BY k
$$);
RESET search_path;
INSERT INTO sp_s.typed VALUES (13, '1', 100);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE sp_s.by_k REFRESH PARTITION (k = '1')$$);
SELECT k::text, n, total FROM sp_s.by_k ORDER BY 1;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE sp_s.by_k');

DROP SCHEMA sp_s CASCADE;
DROP TYPE public.sp_int CASCADE;
DROP DOMAIN public.sp_posint;
