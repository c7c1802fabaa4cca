-- The lineage view, lineage_dot(), current_lag and freshness_met.
CREATE SCHEMA lineage_s;
SET search_path = lineage_s, public;
SET timezone = 'UTC';
CREATE TABLE orders (id int PRIMARY KEY, ds text NOT NULL, region_id int, amount int);
CREATE TABLE regions (id int PRIMARY KEY, name text);
INSERT INTO orders VALUES (1, '2024-06-01', 1, 10), (2, '2024-06-01', 2, 20), (3, '2024-06-02', 1, 30);
INSERT INTO regions VALUES (1, 'north'), (2, 'south');
CREATE TABLE ctl (divisor int);
INSERT INTO ctl VALUES (1);
-- the state a test may print: no times, no lags
CREATE FUNCTION show_lineage() RETURNS TABLE (upstream regclass, upstream_kind text, downstream regclass,
                                              level int, up_mode text, up_freshness interval,
                                              up_status text, up_last text, down_mode text,
                                              down_freshness interval, down_status text,
                                              down_last text, down_lag_known boolean,
                                              down_freshness_met boolean)
LANGUAGE sql AS $$
  SELECT upstream, upstream_kind, downstream, downstream_level,
         upstream_refresh_mode, upstream_freshness, upstream_refresh_status,
         upstream_last_refresh_status, downstream_refresh_mode, downstream_freshness,
         downstream_refresh_status, downstream_last_refresh_status,
         downstream_current_lag IS NOT NULL, downstream_freshness_met
    FROM materialized_table.lineage
   WHERE (SELECT relnamespace FROM pg_class WHERE oid = downstream) = 'lineage_s'::regnamespace
   ORDER BY downstream_level, downstream::text, upstream::text
$$;
-- the DOT text without its times, and without the nodes and edges of other
-- schemas
CREATE FUNCTION dot() RETURNS TABLE (line text) LANGUAGE sql AS $$
  SELECT regexp_replace(line, 'last refresh [0-9-]+ [0-9:]+ UTC', 'last refresh <time>')
    FROM regexp_split_to_table(materialized_table.lineage_dot(), E'\n') AS line
   WHERE line !~ '^\t"' OR line ~ '^\t"lineage_s\.'
$$;

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE daily PARTITIONED BY (ds) FRESHNESS = INTERVAL '1' HOUR AS
    SELECT o.ds, r.name AS region, sum(o.amount) AS total
      FROM orders o JOIN regions r ON r.id = o.region_id GROUP BY o.ds, r.name;
  CREATE MATERIALIZED TABLE totals FRESHNESS = INTERVAL '2' HOUR AS
    SELECT region, sum(total) AS total FROM daily GROUP BY region;
  CREATE MATERIALIZED TABLE report FRESHNESS = INTERVAL '4' HOUR AS
    SELECT t.region, t.total, (SELECT count(*) FROM daily) AS days FROM totals t;
  CREATE MATERIALIZED TABLE shares FRESHNESS = INTERVAL '4' HOUR AS
    SELECT region, total / ctl.divisor AS share FROM totals, ctl;
  CREATE MATERIALIZED TABLE constant FRESHNESS = INTERVAL '1' DAY AS SELECT 1 AS one
$$);
-- through a plain view, and through a partition of a materialized table
CREATE VIEW north AS SELECT * FROM daily WHERE region = 'north';
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE north_days FRESHNESS = INTERVAL '2' HOUR AS SELECT ds, total FROM north;
  CREATE MATERIALIZED TABLE first_day FRESHNESS = INTERVAL '1' HOUR AS SELECT region, total FROM daily_2024_06_01
$$);
SELECT * FROM show_lineage();
SELECT * FROM dot();

-- a suspended table: grey and dashed, and so are the edges out of it
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE totals SUSPEND');
SELECT downstream, downstream_refresh_status FROM materialized_table.lineage WHERE downstream = 'totals'::regclass;
SELECT * FROM dot() WHERE line LIKE '%totals%';

-- a failing table: red, and so are the edges out of it
UPDATE ctl SET divisor = 0;
\set SHOW_CONTEXT never
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE shares REFRESH');
\set SHOW_CONTEXT errors
SELECT downstream, downstream_last_refresh_status FROM materialized_table.lineage
 WHERE downstream = 'shares'::regclass AND upstream = 'totals'::regclass;
SELECT * FROM dot() WHERE line LIKE '%shares%';
-- fine again after a successful refresh; RESUME says nothing of upstream tables now
UPDATE ctl SET divisor = 1;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE shares REFRESH; ALTER MATERIALIZED TABLE totals RESUME');
SELECT * FROM dot() WHERE line LIKE '%shares%';

-- current_lag and freshness_met: a FULL table lags by the time since its last
-- successful refresh started (pretend it was two days ago; a 1-day table, so
-- that no scheduled refresh comes in between)
SELECT table_name, current_lag < freshness AS lag_below_freshness, freshness_met
  FROM materialized_table.materialized_tables WHERE table_name = 'constant'::regclass;
UPDATE materialized_table_internal.mt_table SET last_refresh_time = now() - interval '2 days'
 WHERE relid = 'constant'::regclass;
SELECT table_name, current_lag >= interval '2 days' AS lag_two_days, freshness_met
  FROM materialized_table.materialized_tables WHERE table_name = 'constant'::regclass;
SELECT * FROM dot() WHERE line LIKE '%"lineage_s.constant" [%';
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE constant REFRESH');
SELECT freshness_met FROM materialized_table.materialized_tables WHERE table_name = 'constant'::regclass;

-- the lineage follows renames and new queries
ALTER TABLE regions RENAME TO areas;
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE report AS
  SELECT t.region, t.total, (SELECT count(*) FROM orders) AS days FROM totals t$$);
SELECT upstream, upstream_kind, downstream FROM show_lineage();

-- anyone may look; the names in the DOT text are escaped
CREATE ROLE regress_mt_lineage_reader;
SET ROLE regress_mt_lineage_reader;
SELECT count(*) AS edges FROM materialized_table.lineage
 WHERE (SELECT relnamespace FROM pg_class WHERE oid = downstream) = 'lineage_s'::regnamespace;
SELECT count(*) AS dot_lines FROM regexp_split_to_table(materialized_table.lineage_dot(), E'\n') AS line
 WHERE line LIKE '%"lineage_s.%';
RESET ROLE;
CREATE TABLE "odd ""name""" (x int);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE "odd \ copy" FRESHNESS = INTERVAL '1' HOUR AS SELECT x FROM "odd ""name"""$$);
SELECT * FROM dot() WHERE line LIKE '%odd%';

-- the picture is valid Graphviz input in a fixed order: same text twice
SELECT materialized_table.lineage_dot() = materialized_table.lineage_dot() AS stable;

-- clean up
RESET search_path;
DROP SCHEMA lineage_s CASCADE;
DROP ROLE regress_mt_lineage_reader;
SELECT count(*) FROM materialized_table.lineage;
