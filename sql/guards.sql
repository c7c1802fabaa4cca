-- Guards: the content of a materialized table changes only by refreshes,
-- its columns only by ALTER MATERIALIZED TABLE; privileges are the owner's.
CREATE SCHEMA guards_s;
SET search_path = guards_s, public;
CREATE TABLE src (id int, ds text, v int);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src VALUES (1, 'a', 10), (2, 'b', 20);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE g1 FRESHNESS = INTERVAL '1' HOUR AS SELECT id, ds, v FROM src;
  CREATE MATERIALIZED TABLE g2 PARTITIONED BY (ds) FRESHNESS = INTERVAL '1' HOUR AS SELECT ds, id, v FROM src
$$);

-- writes by hand are refused, on the table and on its partitions
INSERT INTO g1 VALUES (3, 'c', 30);
UPDATE g1 SET v = 0;
DELETE FROM g1;
MERGE INTO g1 USING src ON g1.id = src.id WHEN MATCHED THEN DELETE;
TRUNCATE g1;
TRUNCATE src, g1;
COPY g1 FROM stdin;
\.
INSERT INTO g2 VALUES ('a', 3, 30);
INSERT INTO g2_a VALUES ('a', 3, 30);
UPDATE g2_b SET v = 0;
DELETE FROM g2_a;
TRUNCATE g2_a;
COPY g2_b FROM stdin;
\.
-- also from a data-modifying CTE, a function, or an updatable view
WITH d AS (DELETE FROM g1 RETURNING *) SELECT count(*) FROM d;
CREATE FUNCTION sneaky() RETURNS void LANGUAGE plpgsql AS $$ BEGIN DELETE FROM g1; END $$;
SELECT sneaky();
CREATE VIEW g1_view AS SELECT * FROM g1;
UPDATE g1_view SET v = 0;
INSERT INTO g1 SELECT * FROM g1 WHERE false;
-- nothing changed
SELECT * FROM g1 ORDER BY id;
SELECT * FROM g2 ORDER BY id;
-- reading is fine, and so is EXPLAIN of a write (it writes nothing)
SELECT count(*) FROM g1 JOIN g2 USING (id);
COPY g1 TO stdout;
COPY (SELECT id FROM g2 ORDER BY id) TO stdout;
SELECT id FROM g1 ORDER BY id FOR UPDATE;
EXPLAIN (COSTS OFF) DELETE FROM g1;

-- column and partition changes are refused, with a hint
ALTER TABLE g1 ADD COLUMN extra int;
ALTER TABLE g1 DROP COLUMN v;
ALTER TABLE g1 ALTER COLUMN v TYPE bigint;
ALTER TABLE g1 ALTER COLUMN v SET DEFAULT 1;
ALTER TABLE g1 ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY;
ALTER TABLE g1 RENAME COLUMN v TO w;
ALTER TABLE g1 RENAME v TO w;
ALTER TABLE g2_a RENAME COLUMN v TO w;
ALTER TABLE g2 DETACH PARTITION g2_a;
CREATE TABLE g2_c (ds text, id int, v int);
ALTER TABLE g2 ATTACH PARTITION g2_c FOR VALUES IN ('c');
CREATE TABLE g2_d PARTITION OF g2 FOR VALUES IN ('d');
CREATE TABLE g1_child () INHERITS (g1);
ALTER TABLE g2_c INHERIT g1;
DROP TABLE g2_a;
-- refreshes write directly: no triggers, no foreign keys from or to the table
CREATE FUNCTION trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER t BEFORE INSERT ON g1 FOR EACH ROW EXECUTE FUNCTION trg();
CREATE TRIGGER t AFTER DELETE ON g2_a FOR EACH STATEMENT EXECUTE FUNCTION trg();
CREATE UNIQUE INDEX g1_id ON g1 (id);
CREATE TABLE fk_child (id int REFERENCES g1 (id));
CREATE TABLE fk_child (id int, FOREIGN KEY (id) REFERENCES g1 (id));
CREATE TABLE fk_child (id int);
ALTER TABLE fk_child ADD FOREIGN KEY (id) REFERENCES g1 (id);
ALTER TABLE fk_child ADD COLUMN id2 int REFERENCES g1 (id);
CREATE TABLE fk_parent (id int PRIMARY KEY);
ALTER TABLE g1 ADD FOREIGN KEY (id) REFERENCES fk_parent (id);
DROP TABLE fk_child, fk_parent;
DROP INDEX g1_id;
-- a table's hidden objects change only with it: not even a superuser
-- renames, moves, alters, replaces or hooks into its query view by hand
DO $$
DECLARE
    v text := (SELECT query_view::text FROM materialized_table_internal.mt_table
                WHERE relid = 'g1'::regclass);
    s text;
BEGIN
    FOREACH s IN ARRAY ARRAY[
        'ALTER VIEW %s RENAME TO renamed',
        'ALTER TABLE %s RENAME COLUMN id TO id2',
        'ALTER VIEW %s SET SCHEMA public',
        'ALTER VIEW %s SET (security_invoker = false)',
        'CREATE OR REPLACE VIEW %s AS SELECT 1 AS x',
        'CREATE RULE r AS ON INSERT TO %s DO INSTEAD NOTHING',
        'CREATE TRIGGER t INSTEAD OF INSERT ON %s FOR EACH ROW EXECUTE FUNCTION guards_s.trg()']
    LOOP
        BEGIN
            EXECUTE format(s, v);
            RAISE NOTICE '%: allowed', format(s, 'query_N');
        EXCEPTION WHEN OTHERS THEN
            RAISE NOTICE '%: % %', format(s, 'query_N'), SQLSTATE,
                replace(SQLERRM, split_part(v, '.', 2), 'query_N');
        END;
    END LOOP;
END $$;
-- allowed: indexes, comments, statistics, storage, renames, moves, ownership
CREATE INDEX g1_v ON g1 (v);
CREATE UNIQUE INDEX g2_id ON g2 (ds, id);
COMMENT ON TABLE g1 IS 'guarded';
COMMENT ON COLUMN g1.v IS 'a value';
ALTER TABLE g1 ALTER COLUMN v SET STATISTICS 500;
ALTER TABLE g1 SET (fillfactor = 80);
ANALYZE g1;
VACUUM g1;
CLUSTER g1 USING g1_v;
ALTER TABLE g1 RENAME TO g1_renamed;
ALTER INDEX g1_v RENAME TO g1_v2;
CREATE SCHEMA guards_t;
ALTER TABLE g1_renamed SET SCHEMA guards_t;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE guards_t.g1_renamed REFRESH');
ALTER TABLE guards_t.g1_renamed SET SCHEMA guards_s;
ALTER TABLE g1_renamed RENAME TO g1;
BEGIN;
LOCK TABLE g1 IN ACCESS SHARE MODE;
COMMIT;
-- the refresh keeps working with the index
INSERT INTO src VALUES (3, 'c', 30);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE g1 REFRESH; ALTER MATERIALIZED TABLE g2 REFRESH');
SELECT * FROM g1 ORDER BY id;
SELECT tableoid::regclass, * FROM g2 ORDER BY id;
-- the refresh engine is not fooled by a session that fails half-way
BEGIN;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE g1 REFRESH');
INSERT INTO g1 VALUES (9, 'z', 90);
ROLLBACK;
INSERT INTO g1 VALUES (9, 'z', 90);

-- privileges
CREATE ROLE regress_mt_owner LOGIN;
CREATE ROLE regress_mt_other LOGIN;
GRANT USAGE, CREATE ON SCHEMA guards_s TO regress_mt_owner;
GRANT USAGE ON SCHEMA guards_s TO regress_mt_other;
GRANT SELECT ON src TO regress_mt_owner;
CREATE TABLE secret (id int, v int);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE secret REPLICA IDENTITY FULL;
INSERT INTO secret VALUES (1, 100);
-- creating a materialized table needs SELECT on its sources
SET ROLE regress_mt_owner;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p1 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id, v FROM secret');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p1 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT s.id FROM src s WHERE EXISTS (SELECT FROM secret x WHERE x.id = s.id)');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p1 FRESHNESS = INTERVAL ''1'' HOUR AS WITH w AS (SELECT * FROM secret) SELECT id FROM w');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p1 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id FROM src UNION ALL SELECT id FROM (SELECT id FROM secret) s');
SELECT to_regclass('p1');
RESET ROLE;
GRANT SELECT (id) ON secret TO regress_mt_owner;
SET ROLE regress_mt_owner;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p1 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id, v FROM secret');
RESET ROLE;
GRANT SELECT ON secret TO regress_mt_owner;
SET ROLE regress_mt_owner;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p1 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id, v FROM secret');
SELECT * FROM p1;
SELECT tableowner FROM pg_tables WHERE tablename = 'p1';
-- the owner may not write by hand either
INSERT INTO p1 VALUES (2, 200);
RESET ROLE;
-- another role cannot alter, refresh or drop it, or read it without a grant
SET ROLE regress_mt_other;
SELECT * FROM p1;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p1 REFRESH');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p1 SUSPEND');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p1 SET FRESHNESS = INTERVAL ''2'' HOUR');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p1 ADD c AS id + 1');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE p1');
SELECT materialized_table.execute('CREATE OR ALTER MATERIALIZED TABLE p1 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id, v FROM secret');
DROP TABLE p1;
ALTER TABLE p1 RENAME TO p2;
-- definitions are public, as view definitions are in PostgreSQL; its
-- state and history show only to roles that may read the table
SELECT materialized_table.show_create('p1');
SELECT refresh_mode, freshness FROM materialized_table.materialized_tables WHERE table_name = 'p1'::regclass;
RESET ROLE;
-- refreshes run with the owner's privileges: a superuser's refresh reads as the owner
UPDATE secret SET v = 101;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p1 REFRESH');
SELECT * FROM p1;
-- an owner who lost SELECT on a source cannot refresh, whoever asks
REVOKE SELECT ON secret FROM regress_mt_owner;
UPDATE secret SET v = 102;
\set SHOW_CONTEXT never
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p1 REFRESH');
SET ROLE regress_mt_owner;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p1 REFRESH');
RESET ROLE;
\set SHOW_CONTEXT errors
SELECT * FROM p1;
SELECT status, error FROM materialized_table.refresh_history WHERE table_name = 'p1'::regclass ORDER BY run_id;
-- a new query is checked with the owner's privileges, whoever changes it
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p1 AS SELECT id, v, v + 1 AS w FROM secret');
-- a refresh cannot be used to run code as someone else
GRANT SELECT ON secret TO regress_mt_owner;
CREATE FUNCTION whoami() RETURNS text LANGUAGE sql STABLE AS 'SELECT current_user::text';
GRANT EXECUTE ON FUNCTION whoami() TO regress_mt_owner;
SET ROLE regress_mt_owner;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p2 FRESHNESS = INTERVAL ''1'' HOUR AS SELECT guards_s.whoami() AS who, session_user::text AS sess');
RESET ROLE;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p2 REFRESH');
SELECT who FROM p2;
-- the owner hands the table on: the new owner can refresh and drop it
ALTER TABLE p1 OWNER TO regress_mt_other;
GRANT SELECT ON secret TO regress_mt_other;
SET ROLE regress_mt_other;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p1 REFRESH');
SELECT * FROM p1;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE p1');
RESET ROLE;
SET ROLE regress_mt_owner;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE p2');
RESET ROLE;

-- clean up
RESET search_path;
DROP SCHEMA guards_s CASCADE;
DROP SCHEMA guards_t;
DROP ROLE regress_mt_owner;
DROP ROLE regress_mt_other;
SELECT count(*) FROM materialized_table.materialized_tables;
