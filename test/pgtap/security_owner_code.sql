-- Code of a table's owner -- functions in its query, the domains of its
-- columns -- runs as that owner, in a security-restricted operation, never
-- as the worker's superuser, as a superuser who refreshes the table, or as
-- the owner of a table it reads; and the hidden objects of a table belong
-- to the extension, so that its owner cannot add triggers, rules or
-- columns to them, move them or write them.
--
-- Each owner's function records who ran it (seen) and, run by a superuser,
-- makes its owner one (the attack the test guards against).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself (roles included).
\set schema tap_sec
\ir ../lib/tap_helpers.sql
SET search_path = tap_sec, public;
-- (what a failed earlier run may have left)
DROP SCHEMA IF EXISTS tap_sec_eve, tap_sec_alice, tap_sec_mallory CASCADE;
SELECT format('DROP OWNED BY %I; DROP ROLE %I', rolname, rolname)
  FROM pg_roles WHERE rolname IN ('tap_sec_eve', 'tap_sec_alice', 'tap_sec_mallory') \gexec
CREATE ROLE tap_sec_eve;
CREATE ROLE tap_sec_alice;
CREATE ROLE tap_sec_mallory;
GRANT USAGE ON SCHEMA tap_sec TO PUBLIC;
CREATE SCHEMA tap_sec_eve AUTHORIZATION tap_sec_eve;
CREATE SCHEMA tap_sec_alice AUTHORIZATION tap_sec_alice;
CREATE SCHEMA tap_sec_mallory AUTHORIZATION tap_sec_mallory;

-- who ran an owner's code; anyone may add to it
CREATE TABLE seen (who name, what text);
GRANT INSERT ON seen TO PUBLIC;
CREATE FUNCTION note(what text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO tap_sec.seen VALUES (current_user, what)
$$;

-- seconds until each of the tables equals its query, or NULL
CREATE FUNCTION settled(tables regclass[], timeout float) RETURNS float
LANGUAGE sql AS $$
  SELECT tap_sec.wait_for(format('SELECT coalesce(sum(tap_sec.mismatches(t)), 0) = 0 FROM unnest(%L::regclass[]) t',
                                 tables), timeout)
$$;

SELECT plan(25);

-- (a) the WHERE clause of a table kept by deltas, as the worker applies it
SET ROLE tap_sec_eve;
CREATE TABLE tap_sec_eve.src (id int PRIMARY KEY, g int NOT NULL, v int NOT NULL);
ALTER TABLE tap_sec_eve.src REPLICA IDENTITY FULL;
INSERT INTO tap_sec_eve.src SELECT i, i % 3, i FROM generate_series(1, 30) i;
CREATE FUNCTION tap_sec_eve.note(what text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tap_sec.seen VALUES (current_user, what);
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE 'ALTER ROLE tap_sec_eve SUPERUSER';
  END IF;
END $$;
CREATE FUNCTION tap_sec_eve.f(v int) RETURNS bool IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
  PERFORM tap_sec_eve.note('where');
  RETURN v > 0;
END $$;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_sec_eve.t FRESHNESS = INTERVAL '1' SECOND AS
    SELECT g, count(*) AS n, sum(v) AS total, avg(v) AS average
      FROM tap_sec_eve.src WHERE tap_sec_eve.f(v) GROUP BY g$$) \g /dev/null
RESET ROLE;
SELECT is((SELECT maintenance FROM materialized_table.materialized_tables
            WHERE table_name = 'tap_sec_eve.t'::regclass), 'INCREMENTAL',
          'a table with a function in its WHERE clause is kept by deltas');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes it up');
DELETE FROM seen;
INSERT INTO tap_sec_eve.src SELECT i, i % 3, i FROM generate_series(31, 40) i;
SELECT isnt(settled('{tap_sec_eve.t}', 10), NULL, 'the worker applies the inserts');
SELECT ok((SELECT count(*) FROM seen WHERE what = 'where') > 0, 'the worker ran the WHERE clause');
SELECT is((SELECT array_agg(DISTINCT who) FROM seen), ARRAY['tap_sec_eve']::name[],
          'as the table''s owner');
SELECT is((SELECT rolsuper FROM pg_roles WHERE rolname = 'tap_sec_eve'), false,
          'who did not become a superuser');

-- (b) the hidden objects of a table are not the owner's to alter or write
SELECT format('materialized_table_internal.state_%s',
              (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'tap_sec_eve.t'::regclass)) AS state,
       (SELECT query_view::regclass::text FROM materialized_table_internal.mt_table
         WHERE relid = 'tap_sec_eve.t'::regclass) AS view \gset
SELECT is((SELECT count(*) FROM pg_class c WHERE c.oid IN (:'state'::regclass, :'view'::regclass)
              AND c.relowner = (SELECT nspowner FROM pg_namespace WHERE nspname = 'materialized_table_internal')),
          2::bigint, 'the state table and the query view belong to the extension''s owner');
SET ROLE tap_sec_eve;
CREATE FUNCTION tap_sec_eve.no() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$;
SELECT throws_ok(format($$CREATE TRIGGER t BEFORE INSERT ON %s FOR EACH ROW EXECUTE FUNCTION tap_sec_eve.no()$$, :'state'),
                 '42501', NULL, 'the owner cannot add a trigger to the state table');
SELECT throws_ok(format('CREATE RULE r AS ON INSERT TO %s DO ALSO NOTHING', :'state'),
                 '42501', NULL, 'nor a rule');
SELECT throws_ok(format('ALTER TABLE %s ADD COLUMN x int', :'state'),
                 '42501', NULL, 'nor a column');
SELECT throws_ok(format('INSERT INTO %s (g, __mt_rows) VALUES (99, 1)', :'state'),
                 '42501', NULL, 'nor write rows into it');
SELECT throws_ok(format('ALTER VIEW %s SET SCHEMA tap_sec_eve', :'view'),
                 '42501', NULL, 'the owner cannot move the query view');
SELECT throws_ok(format('CREATE OR REPLACE VIEW %s AS SELECT 1 AS g, 0::bigint AS n, 0::bigint AS total, 0::numeric AS average', :'view'),
                 '42501', NULL, 'nor redefine it');
RESET ROLE;

-- (c) a table reading another owner's table runs its code as its own owner
SET ROLE tap_sec_alice;
CREATE TABLE tap_sec_alice.src (id int PRIMARY KEY, g int NOT NULL, v int NOT NULL);
ALTER TABLE tap_sec_alice.src REPLICA IDENTITY FULL;
INSERT INTO tap_sec_alice.src SELECT i, i % 2, i FROM generate_series(1, 10) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_sec_alice.up (PRIMARY KEY (id) NOT ENFORCED)
    FRESHNESS = INTERVAL '1' SECOND AS SELECT id, g, v FROM tap_sec_alice.src$$) \g /dev/null
GRANT USAGE ON SCHEMA tap_sec_alice TO tap_sec_mallory;
GRANT SELECT ON tap_sec_alice.up TO tap_sec_mallory;
SET ROLE tap_sec_mallory;
CREATE FUNCTION tap_sec_mallory.f(v int) RETURNS bool IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
  PERFORM tap_sec.note('downstream');
  -- fails for anyone but its owner: a failure must not fail the upstream
  IF current_user <> 'tap_sec_mallory' THEN
    RAISE EXCEPTION 'not my owner';
  END IF;
  RETURN v > 0;
END $$;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_sec_mallory.down FRESHNESS = INTERVAL '1' SECOND AS
    SELECT g, count(*) AS n, sum(v) AS total FROM tap_sec_alice.up WHERE tap_sec_mallory.f(v) GROUP BY g$$) \g /dev/null
RESET ROLE;
SELECT is((SELECT maintenance FROM materialized_table.materialized_tables
            WHERE table_name = 'tap_sec_mallory.down'::regclass), 'INCREMENTAL',
          'the downstream table is kept by deltas, fed by the upstream refresh');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes both up');
DELETE FROM seen;
INSERT INTO tap_sec_alice.src SELECT i, i % 2, i FROM generate_series(11, 20) i;
SET ROLE tap_sec_alice;
SELECT lives_ok($$SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_sec_alice.up REFRESH')$$,
                'the upstream owner''s refresh succeeds');
RESET ROLE;
SELECT isnt(settled('{tap_sec_alice.up, tap_sec_mallory.down}', 10), NULL, 'both tables follow');
SELECT ok((SELECT count(*) FROM seen WHERE what = 'downstream') > 0, 'the downstream query ran');
SELECT is((SELECT array_agg(DISTINCT who) FROM seen), ARRAY['tap_sec_mallory']::name[],
          'only as its own owner');

-- (d) a domain's check on a column, for values a superuser or the worker casts
SET ROLE tap_sec_mallory;
CREATE FUNCTION tap_sec_mallory.ok(v int) RETURNS bool IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
  PERFORM tap_sec.note('domain');
  RETURN true;
END $$;
CREATE DOMAIN tap_sec_mallory.d AS int CHECK (tap_sec_mallory.ok(VALUE));
CREATE TABLE tap_sec_mallory.src (id int PRIMARY KEY, k tap_sec_mallory.d NOT NULL, v int NOT NULL);
ALTER TABLE tap_sec_mallory.src REPLICA IDENTITY FULL;
INSERT INTO tap_sec_mallory.src SELECT i, i % 3, i FROM generate_series(1, 30) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_sec_mallory.by_k FRESHNESS = INTERVAL '1' SECOND AS
    SELECT k, count(*) AS n, sum(v) AS total, avg(v) AS average FROM tap_sec_mallory.src GROUP BY k;
  CREATE MATERIALIZED TABLE tap_sec_mallory.parts PARTITIONED BY (k)
    FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL AS
    SELECT k, count(*) AS n FROM tap_sec_mallory.src GROUP BY k$$) \g /dev/null
RESET ROLE;
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the table up');
DELETE FROM seen;
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE tap_sec_mallory.parts REFRESH PARTITION (k = '1')$$) \g /dev/null
SELECT is((SELECT array_agg(DISTINCT who) FROM seen), ARRAY['tap_sec_mallory']::name[],
          'a superuser''s REFRESH PARTITION checks the domain as the table''s owner');
DELETE FROM seen;
SET ROLE tap_sec_mallory;
INSERT INTO tap_sec_mallory.src SELECT i, i % 3, i FROM generate_series(31, 40) i;
RESET ROLE;
DELETE FROM seen;
SELECT isnt(settled('{tap_sec_mallory.by_k}', 10), NULL, 'the worker applies the inserts');
SELECT ok((SELECT count(*) FROM seen) > 0, 'the worker checked the domain');
SELECT is((SELECT array_agg(DISTINCT who) FROM seen), ARRAY['tap_sec_mallory']::name[],
          'as the table''s owner');
SELECT is((SELECT count(*) FROM materialized_table.refresh_history h
             JOIN pg_class c ON c.oid = h.table_name
            WHERE c.relnamespace::regnamespace::text LIKE 'tap_sec%' AND h.status = 'FAILED'),
          0::bigint, 'no refresh failed');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_sec_mallory.down') \g /dev/null
RESET search_path;
DROP SCHEMA tap_sec CASCADE;
DROP SCHEMA tap_sec_eve CASCADE;
DROP SCHEMA tap_sec_alice CASCADE;
DROP SCHEMA tap_sec_mallory CASCADE;
DROP OWNED BY tap_sec_eve, tap_sec_alice, tap_sec_mallory;
DROP ROLE tap_sec_eve;
DROP ROLE tap_sec_alice;
DROP ROLE tap_sec_mallory;
