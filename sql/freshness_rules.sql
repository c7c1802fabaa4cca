-- Changing FRESHNESS (ALTER ... SET FRESHNESS, CREATE OR ALTER): Realtime
-- Compute's rules, each refusal and what it names; the pipeline follows in
-- the same transaction.
CREATE SCHEMA fresh_s;
SET search_path = fresh_s, public;
SET timezone = 'UTC';
CREATE TABLE src (id int PRIMARY KEY, grp int, v int);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src SELECT i, i % 3, i FROM generate_series(1, 9) i;
-- what drives a table: mode, freshness, scheduler, its pg_cron job, its
-- registration with the continuous pipeline
CREATE FUNCTION state(t regclass) RETURNS TABLE (refresh_mode text, freshness interval, status text,
                                                 scheduler text, cron_schedule text,
                                                 cron_active boolean, continuous boolean)
LANGUAGE sql AS $$
  SELECT m.refresh_mode, m.freshness, m.refresh_status, m.scheduler, j.schedule, j.active,
         EXISTS (SELECT FROM materialized_table_internal.continuous_state c WHERE c.relid = t)
    FROM materialized_table.materialized_tables m
    JOIN materialized_table_internal.mt_table mt ON mt.relid = m.table_name
    LEFT JOIN cron.job j ON j.jobid = mt.cron_jobid
   WHERE m.table_name = t
$$;

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE keyed (PRIMARY KEY (grp) NOT ENFORCED) FRESHNESS = INTERVAL '1' HOUR AS
    SELECT grp, sum(v) AS total FROM src GROUP BY grp;
  CREATE MATERIALIZED TABLE unkeyed FRESHNESS = INTERVAL '1' HOUR AS SELECT grp, v FROM src;
  CREATE MATERIALIZED TABLE fast FRESHNESS = INTERVAL '10' SECOND AS SELECT id, v FROM src
$$);
SELECT * FROM state('keyed');
SELECT * FROM state('fast');

-- rule: at most one day
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '2' DAY$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '25' HOUR$$);

-- rule: a FULL table's freshness must be a cron schedule
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '5' HOUR$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE unkeyed SET FRESHNESS = INTERVAL '45' MINUTE$$);

-- a new freshness within FULL mode: the schedule changes with the catalog,
-- in the same transaction
BEGIN;
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '2' HOUR$$);
SELECT * FROM state('keyed');
ROLLBACK;
SELECT * FROM state('keyed');
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '2' HOUR$$);
SELECT * FROM state('keyed');

-- rule: a table without a primary key cannot cross
-- materialized_table.freshness_threshold (30 minutes), either way
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE unkeyed SET FRESHNESS = INTERVAL '10' MINUTE$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fast SET FRESHNESS = INTERVAL '1' HOUR$$);
-- ... but may move on its side of it (30 minutes is on the FULL side)
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE unkeyed SET FRESHNESS = INTERVAL '30' MINUTE$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fast SET FRESHNESS = INTERVAL '20' MINUTE$$);
SELECT * FROM state('unkeyed');
SELECT * FROM state('fast');
-- the threshold is a setting
SET materialized_table.freshness_threshold = '2h';
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE unkeyed SET FRESHNESS = INTERVAL '1' HOUR$$);
RESET materialized_table.freshness_threshold;

-- rule: a table with a primary key may cross; its pipeline switches from
-- pg_cron to the continuous worker and back, in the same transaction
BEGIN;
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '1' MINUTE$$);
SELECT * FROM state('keyed');
ROLLBACK;
SELECT * FROM state('keyed');
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '1' MINUTE$$);
SELECT * FROM state('keyed');
BEGIN;
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '3' HOUR$$);
SELECT * FROM state('keyed');
ROLLBACK;
SELECT * FROM state('keyed');
-- crossing into FULL mode needs a cron schedule too
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '45' MINUTE$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '3' HOUR$$);
SELECT * FROM state('keyed');
-- a suspended table switches too, and stays suspended
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SUSPEND;
                                    ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '1' MINUTE$$);
SELECT * FROM state('keyed');
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '1' HOUR$$);
SELECT * FROM state('keyed');
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed RESUME$$);
SELECT * FROM state('keyed');

-- CREATE OR ALTER with a new freshness: the same rules, the schedule
-- changes at once
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE keyed (PRIMARY KEY (grp) NOT ENFORCED)
  FRESHNESS = INTERVAL '3' HOUR AS SELECT grp, sum(v) AS total FROM src GROUP BY grp$$);
SELECT * FROM state('keyed');
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE unkeyed
  FRESHNESS = INTERVAL '10' MINUTE AS SELECT grp, v FROM src$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE unkeyed
  FRESHNESS = INTERVAL '7' HOUR AS SELECT grp, v FROM src$$);
-- the freshness may switch the mode only where the statement does not name one
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE keyed (PRIMARY KEY (grp) NOT ENFORCED)
  FRESHNESS = INTERVAL '10' MINUTE REFRESH_MODE = FULL AS SELECT grp, sum(v) AS total FROM src GROUP BY grp$$);
SELECT * FROM state('keyed');

-- rule: a downstream table's freshness is a positive integer multiple of
-- each upstream materialized table's, checked at CREATE ...
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE up FRESHNESS = INTERVAL '2' HOUR AS SELECT grp, v FROM src
$$);
CREATE VIEW up_view AS SELECT * FROM up;
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE down FRESHNESS = INTERVAL '3' HOUR AS SELECT grp FROM up$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE down FRESHNESS = INTERVAL '1' HOUR AS SELECT grp FROM up_view$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE down FRESHNESS = INTERVAL '4' HOUR AS SELECT grp, count(*) AS n FROM up GROUP BY grp$$);
-- ... when the downstream side changes ...
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE down SET FRESHNESS = INTERVAL '3' HOUR$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE down SET FRESHNESS = INTERVAL '8' HOUR$$);
-- ... when the upstream side changes ...
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE up SET FRESHNESS = INTERVAL '3' HOUR$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE up SET FRESHNESS = INTERVAL '4' HOUR$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE up SET FRESHNESS = INTERVAL '1' HOUR$$);
SELECT table_name, freshness FROM materialized_table.materialized_tables
 WHERE table_name IN ('up'::regclass, 'down'::regclass) ORDER BY table_name::text;
-- ... when a new query reads other tables ...
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE other FRESHNESS = INTERVAL '3' HOUR AS SELECT 1 AS one$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE down AS
  SELECT grp, count(*) AS n FROM up, other GROUP BY grp$$);
-- ... and across units and modes (10 s divides 1 min and 20 s, not 15 s)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE cont (PRIMARY KEY (id) NOT ENFORCED) FRESHNESS = INTERVAL '10' SECOND AS SELECT id, v FROM src;
  CREATE MATERIALIZED TABLE cont_full FRESHNESS = INTERVAL '1' MINUTE REFRESH_MODE = FULL AS SELECT count(*) AS n FROM cont;
  CREATE MATERIALIZED TABLE cont_down FRESHNESS = INTERVAL '20' SECOND AS SELECT id FROM cont WHERE v > 3
$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE cont_bad FRESHNESS = INTERVAL '15' SECOND AS SELECT id FROM cont$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE cont SET FRESHNESS = INTERVAL '7' SECOND$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE cont SET FRESHNESS = INTERVAL '5' SECOND$$);
-- CREATE OR ALTER checks once, with the new freshness and the new query:
-- 3 hours does not fit the old query's table (2 hours) but fits the new one's
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE two FRESHNESS = INTERVAL '2' HOUR AS SELECT 1 AS one;
  CREATE MATERIALIZED TABLE swap FRESHNESS = INTERVAL '2' HOUR AS SELECT one FROM two
$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE swap FRESHNESS = INTERVAL '4' HOUR AS
  SELECT one FROM other$$);
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE swap FRESHNESS = INTERVAL '3' HOUR AS
  SELECT one FROM other$$);
SELECT upstream, downstream, downstream_freshness FROM materialized_table.lineage
 WHERE downstream = 'swap'::regclass ORDER BY upstream::text;

-- a refused change in a batch undoes the changes before it
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE keyed SET FRESHNESS = INTERVAL '1' MINUTE;
                                    ALTER MATERIALIZED TABLE unkeyed SET FRESHNESS = INTERVAL '1' MINUTE$$);
SELECT * FROM state('keyed');

-- a cycle cannot be made
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE up AS
  SELECT grp, v FROM src WHERE grp IN (SELECT grp FROM down)$$);

-- SUSPEND and RESUME work when an upstream table is suspended, and say so
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE up SUSPEND');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE down SUSPEND');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE down RESUME');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE up RESUME');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE down SUSPEND; ALTER MATERIALIZED TABLE down RESUME');
SELECT table_name, refresh_status FROM materialized_table.materialized_tables
 WHERE table_name IN ('up'::regclass, 'down'::regclass) ORDER BY table_name::text;

-- a table with a primary key refreshes rows that change but keep their key
UPDATE src SET v = v * 10;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE keyed REFRESH');
SELECT * FROM keyed ORDER BY grp;

-- clean up
RESET search_path;
DROP SCHEMA fresh_s CASCADE;
SELECT count(*) FROM materialized_table.materialized_tables;
