-- materialized_table.refresh(table, partition, cascade): order along the
-- lineage, failure propagation, the checks made before anything runs.
CREATE SCHEMA cascade_s;
SET search_path = cascade_s, public;
SET timezone = 'UTC';
CREATE TABLE src (id int PRIMARY KEY, grp int, v int);
INSERT INTO src SELECT i, i % 3, i FROM generate_series(1, 9) i;
-- mid's query divides by ctl.divisor: 0 makes it fail
CREATE TABLE ctl (divisor int);
INSERT INTO ctl VALUES (1);
-- this test's refresh history, without times or ids (nor the runs of the
-- tables' pg_cron jobs, which fire at the hours their freshness names)
CREATE FUNCTION history(since bigint) RETURNS TABLE (table_name regclass, trigger text, status text,
                                                     error text, same_cascade boolean)
LANGUAGE sql AS $$
  SELECT table_name, trigger, status, error,
         cascade_id = (SELECT max(cascade_id) FROM materialized_table.refresh_history)
    FROM materialized_table.refresh_history
   WHERE run_id > since AND table_name::text NOT LIKE '%.%'
   ORDER BY run_id
$$;
CREATE TABLE mark (run_id bigint);
CREATE FUNCTION set_mark() RETURNS void LANGUAGE sql AS $$
  DELETE FROM mark;
  INSERT INTO mark SELECT coalesce(max(run_id), 0) FROM materialized_table.refresh_history
$$;

-- three levels with a failing middle table, and another branch:
--   src -> top -> mid -> leaf
--          top -> side -> side_leaf
--          top, side -> both        (both is below side: depth 2)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE top FRESHNESS = INTERVAL '1' HOUR AS SELECT id, grp, v FROM src;
  CREATE MATERIALIZED TABLE mid FRESHNESS = INTERVAL '2' HOUR AS
    SELECT grp, sum(v) / min(ctl.divisor) AS total FROM top, ctl GROUP BY grp;
  CREATE MATERIALIZED TABLE leaf FRESHNESS = INTERVAL '4' HOUR AS SELECT grp, total FROM mid WHERE total > 0;
  CREATE MATERIALIZED TABLE side FRESHNESS = INTERVAL '2' HOUR AS SELECT count(*) AS n FROM top;
  CREATE MATERIALIZED TABLE side_leaf FRESHNESS = INTERVAL '4' HOUR AS SELECT n * 2 AS n2 FROM side;
  CREATE MATERIALIZED TABLE both_ FRESHNESS = INTERVAL '2' HOUR AS
    SELECT t.grp, s.n FROM (SELECT DISTINCT grp FROM top) t CROSS JOIN side s
$$);

-- without cascade: the table alone, no cascade id
SELECT set_mark();
INSERT INTO src VALUES (10, 1, 10);
SELECT table_name, depth, status, rows, detail, cascade_id FROM materialized_table.refresh('top');
SELECT table_name, trigger, status, error FROM history((SELECT run_id FROM mark));
SELECT cascade_id IS NULL AS no_cascade_id FROM materialized_table.refresh_history
 WHERE run_id > (SELECT run_id FROM mark);

-- with cascade: upstream first, by depth, then by name; one cascade id
SELECT set_mark();
INSERT INTO src VALUES (11, 2, 11);
SELECT table_name, depth, status, rows, detail, cascade_id IS NOT NULL AS has_cascade_id
  FROM materialized_table.refresh('top', cascade => true);
SELECT * FROM history((SELECT run_id FROM mark));
SELECT * FROM leaf ORDER BY grp;
SELECT * FROM side_leaf;

-- a failing middle table: the tables below it fail because of it, the
-- other branch runs, what succeeded stays
SELECT set_mark();
UPDATE ctl SET divisor = 0;
INSERT INTO src VALUES (12, 0, 12);
SELECT table_name, depth, status, rows, detail FROM materialized_table.refresh('top', NULL, true);
SELECT * FROM history((SELECT run_id FROM mark));
SELECT count(*) AS top_rows FROM top;
SELECT * FROM leaf ORDER BY grp;
SELECT * FROM side_leaf;
SELECT table_name, last_refresh_status FROM (
  SELECT downstream AS table_name, downstream_last_refresh_status AS last_refresh_status
    FROM materialized_table.lineage) l
 GROUP BY 1, 2 ORDER BY table_name::text;

-- the table named fails: its error is the caller's, and the tables below
-- it are recorded as failed because of it
SELECT set_mark();
\set SHOW_CONTEXT never
SELECT * FROM materialized_table.refresh('mid', cascade => true);
\set SHOW_CONTEXT errors
SELECT * FROM history((SELECT run_id FROM mark));
UPDATE ctl SET divisor = 1;
SELECT table_name, status FROM materialized_table.refresh('mid', cascade => true);

-- a cascade is part of the caller's transaction
BEGIN;
INSERT INTO src VALUES (13, 1, 13);
SELECT table_name, status FROM materialized_table.refresh('top', cascade => true);
SELECT * FROM side;
ROLLBACK;
SELECT * FROM side;

-- at most 6 levels below the table named: checked before anything runs
-- (top -> side -> side_leaf -> l1 -> l2 -> l3 -> l4 is 6 levels)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE l1 FRESHNESS = INTERVAL '4' HOUR AS
    SELECT n FROM side_leaf CROSS JOIN (SELECT count(*) AS n FROM side) s;
  CREATE MATERIALIZED TABLE l2 FRESHNESS = INTERVAL '4' HOUR AS SELECT n FROM l1;
  CREATE MATERIALIZED TABLE l3 FRESHNESS = INTERVAL '4' HOUR AS SELECT n FROM l2;
  CREATE MATERIALIZED TABLE l4 FRESHNESS = INTERVAL '4' HOUR AS SELECT n FROM l3
$$);
SELECT table_name, depth, status FROM materialized_table.refresh('top', cascade => true) WHERE depth >= 3;
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE l5 FRESHNESS = INTERVAL '4' HOUR AS SELECT n FROM l4$$);
SELECT set_mark();
SELECT * FROM materialized_table.refresh('top', cascade => true);
SELECT count(*) AS runs FROM history((SELECT run_id FROM mark));
SELECT table_name, depth, status FROM materialized_table.refresh('side', cascade => true) WHERE depth >= 5;

-- a partition refresh cascades only to tables partitioned alike: checked
-- before anything runs, naming the table that is not
CREATE TABLE events (ds text, kind text, n int);
INSERT INTO events VALUES ('d1', 'a', 1), ('d1', 'b', 2), ('d2', 'a', 3);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE ev PARTITIONED BY (ds) FRESHNESS = INTERVAL '1' HOUR AS
    SELECT ds, kind, sum(n) AS n FROM events GROUP BY ds, kind;
  CREATE MATERIALIZED TABLE ev_day PARTITIONED BY (ds) FRESHNESS = INTERVAL '1' HOUR AS
    SELECT ds, sum(n) AS n FROM ev GROUP BY ds;
  CREATE MATERIALIZED TABLE ev_kind PARTITIONED BY (kind) FRESHNESS = INTERVAL '1' HOUR AS
    SELECT kind, sum(n) AS n FROM ev GROUP BY kind;
  CREATE MATERIALIZED TABLE ev_all FRESHNESS = INTERVAL '1' HOUR AS SELECT sum(n) AS n FROM ev_day
$$);
SELECT set_mark();
SELECT * FROM materialized_table.refresh('ev', '{"ds": "d1"}', true);
SELECT materialized_table.execute('DROP MATERIALIZED TABLE ev_kind');
SELECT * FROM materialized_table.refresh('ev', '{"ds": "d1"}', true);
SELECT count(*) AS runs FROM history((SELECT run_id FROM mark));
SELECT materialized_table.execute('DROP MATERIALIZED TABLE ev_all');
UPDATE events SET n = n * 10;
SELECT table_name, depth, status, rows FROM materialized_table.refresh('ev', '{"ds": "d1"}', true);
SELECT * FROM ev_day ORDER BY ds;
SELECT table_name, trigger, partition, status FROM materialized_table.refresh_history
 WHERE run_id > (SELECT run_id FROM mark) ORDER BY run_id;
-- a whole-table cascade needs no partition columns
SELECT table_name, depth, status FROM materialized_table.refresh('ev', cascade => true);

-- bad partitions
SELECT * FROM materialized_table.refresh('ev', '{"day": "d1"}');
SELECT * FROM materialized_table.refresh('ev', '["d1"]');
SELECT * FROM materialized_table.refresh('ev', '{}');
SELECT * FROM materialized_table.refresh('ev', '{"ds": null}');
SELECT * FROM materialized_table.refresh('top', '{"ds": "d1"}');
-- not a materialized table
SELECT * FROM materialized_table.refresh('src');
SELECT * FROM materialized_table.refresh(NULL);

-- only the owner of every table of the cascade may run it
CREATE ROLE regress_mt_cascade_owner LOGIN;
GRANT USAGE ON SCHEMA cascade_s TO regress_mt_cascade_owner;
GRANT SELECT ON src TO regress_mt_cascade_owner;
ALTER TABLE top OWNER TO regress_mt_cascade_owner;
SELECT set_mark();
SET ROLE regress_mt_cascade_owner;
SELECT table_name, status FROM materialized_table.refresh('top');
SELECT * FROM materialized_table.refresh('top', cascade => true);
RESET ROLE;
SELECT table_name, trigger, status FROM history((SELECT run_id FROM mark));

-- clean up
RESET search_path;
DROP SCHEMA cascade_s CASCADE;
DROP ROLE regress_mt_cascade_owner;
SELECT count(*) FROM materialized_table.materialized_tables;
