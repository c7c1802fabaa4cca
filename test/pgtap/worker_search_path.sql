-- The worker runs its own SQL with search_path = pg_catalog, pg_temp,
-- whatever the database or the role set.  A role that may create in public
-- puts there operators that catch the worker's comparisons: =(oid,
-- regclass), an exact match for "oid = 'x'::regclass" that the default
-- search_path ("$user", public) finds before pg_catalog's =(oid, oid); and,
-- for a database whose owner set search_path = public, pg_catalog,
-- =(oid, oid) and =("char", "char").  Each records, when it runs in a
-- process of the extension, that it did.  The worker maintains tables
-- under both settings, and none of the operators ever runs in it.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself (and resets the database's search_path).
\set schema tap_sp
\set with_src
\ir ../lib/tap_helpers.sql
SET search_path = tap_sp, public;

SELECT plan(7);

CREATE ROLE tap_sp_attacker;
GRANT CREATE ON SCHEMA public TO tap_sp_attacker;
SET ROLE tap_sp_attacker;
CREATE TABLE public.tap_sp_ran (backend_type text, operator text);
GRANT INSERT ON public.tap_sp_ran TO PUBLIC;
CREATE FUNCTION public.tap_sp_record(operator text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
    kind text := (SELECT a.backend_type FROM pg_catalog.pg_stat_activity a
                   WHERE a.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid());
BEGIN
    IF kind LIKE 'materialized_table%' THEN
        INSERT INTO public.tap_sp_ran VALUES (kind, operator);
    END IF;
END
$$;
CREATE FUNCTION public.tap_sp_oid_regclass(oid, regclass) RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM public.tap_sp_record('=(oid, regclass)');
    RETURN $1 OPERATOR(pg_catalog.=) $2::pg_catalog.oid;
END
$$;
CREATE FUNCTION public.tap_sp_oid_oid(oid, oid) RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM public.tap_sp_record('=(oid, oid)');
    RETURN $1 OPERATOR(pg_catalog.=) $2;
END
$$;
CREATE FUNCTION public.tap_sp_char_char("char", "char") RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog AS $$
BEGIN
    PERFORM public.tap_sp_record('=("char", "char")');
    RETURN $1 OPERATOR(pg_catalog.=) $2;
END
$$;
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = regclass, FUNCTION = public.tap_sp_oid_regclass);
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = public.tap_sp_oid_oid);
CREATE OPERATOR public.= (LEFTARG = "char", RIGHTARG = "char", FUNCTION = public.tap_sp_char_char);
RESET ROLE;

-- the default search_path: a new table is read, taken up and maintained
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_sp.agg FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_sp.src GROUP BY grp$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the table up');
UPDATE src SET v = v + 1 WHERE id < 100;
INSERT INTO src VALUES (99999, 5, 5);
SELECT isnt(converged(20), NULL, 'and maintains it');
SELECT is((SELECT string_agg(DISTINCT backend_type || ' ran ' || operator, '; ') FROM public.tap_sp_ran),
          NULL, 'with the default search_path, no operator of public ran in the extension''s processes');
DELETE FROM public.tap_sp_ran;

-- the database's owner sets search_path = public, pg_catalog; a worker
-- started since gets it from the database
SELECT format('ALTER DATABASE %I SET search_path = public, pg_catalog', current_database()) \gexec
CREATE TEMPORARY TABLE old_worker AS SELECT worker_pid() AS pid;
SELECT pg_terminate_backend(pid) FROM old_worker \g /dev/null
SELECT isnt(wait_for($$SELECT worker_pid() IS NOT NULL AND worker_pid() <> (SELECT pid FROM old_worker)$$, 30),
            NULL, 'a new worker starts');
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_sp.top FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, max(v) AS top FROM tap_sp.src GROUP BY grp$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'it takes a new table up');
UPDATE src SET grp = (grp + 1) % 20 WHERE id BETWEEN 200 AND 300;
DELETE FROM src WHERE id BETWEEN 400 AND 420;
SELECT isnt(converged(20), NULL, 'and maintains both');
SELECT is((SELECT string_agg(DISTINCT backend_type || ' ran ' || operator, '; ') FROM public.tap_sp_ran),
          NULL, 'with search_path = public, pg_catalog set for the database, none ran either');

SELECT * FROM finish();
SELECT format('ALTER DATABASE %I RESET search_path', current_database()) \gexec
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_sp.agg; DROP MATERIALIZED TABLE tap_sp.top') \g /dev/null
RESET search_path;
DROP SCHEMA tap_sp CASCADE;
DROP OPERATOR public.= (oid, regclass);
DROP OPERATOR public.= (oid, oid);
DROP OPERATOR public.= ("char", "char");
DROP FUNCTION public.tap_sp_oid_regclass(oid, regclass), public.tap_sp_oid_oid(oid, oid),
              public.tap_sp_char_char("char", "char"), public.tap_sp_record(text);
DROP TABLE public.tap_sp_ran;
REVOKE CREATE ON SCHEMA public FROM tap_sp_attacker;
DROP ROLE tap_sp_attacker;
-- the next files find a worker started with the database's own settings
SELECT pg_terminate_backend(pid) FROM pg_stat_activity
 WHERE backend_type = 'materialized_table worker' AND datname = current_database() \g /dev/null
