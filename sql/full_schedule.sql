--
-- FULL refresh mode: the schedule of each table (pg_cron job or the
-- database's worker), and how commands change it.
--
SET timezone = 'UTC';
CREATE SCHEMA fs;
CREATE TABLE fs.src (id int PRIMARY KEY, v int);
INSERT INTO fs.src VALUES (1, 10), (2, 20);

-- the jobs of this test's tables, without their IDs
CREATE VIEW fs.jobs AS
SELECT j.jobname, j.schedule, j.username, j.active, j.database,
       j.command = format('SELECT materialized_table.scheduled_refresh(%L::pg_catalog.regclass)',
                          format('%I.%I', n.nspname, c.relname)) AS command_ok
  FROM cron.job j
  JOIN materialized_table.materialized_tables t
    ON j.jobid = (SELECT cron_jobid FROM materialized_table_internal.mt_table m WHERE m.relid = t.table_name)
  JOIN pg_class c ON c.oid = t.table_name
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE t.table_name::text LIKE 'fs.%'
 ORDER BY j.jobname;

-- every freshness FULL mode allows: minutes and hours that divide their
-- unit's range, one day; seconds too (driven by the worker)
DO $$
DECLARE
    f text;
BEGIN
    FOREACH f IN ARRAY ARRAY['1 SECOND', '2 SECOND', '3 SECOND', '4 SECOND', '5 SECOND',
                             '6 SECOND', '10 SECOND', '12 SECOND', '15 SECOND', '20 SECOND',
                             '30 SECOND',
                             '1 MINUTE', '2 MINUTE', '3 MINUTE', '4 MINUTE', '5 MINUTE',
                             '6 MINUTE', '10 MINUTE', '12 MINUTE', '15 MINUTE', '20 MINUTE',
                             '30 MINUTE',
                             '1 HOUR', '2 HOUR', '3 HOUR', '4 HOUR', '6 HOUR', '8 HOUR',
                             '12 HOUR', '1 DAY'] LOOP
        PERFORM materialized_table.execute(format(
            $f$CREATE MATERIALIZED TABLE fs.%I FRESHNESS = INTERVAL '%s' %s REFRESH_MODE = FULL
               AS SELECT id, v FROM fs.src$f$,
            'every_' || lpad(split_part(f, ' ', 1), 2, '0') || '_' || lower(split_part(f, ' ', 2)),
            split_part(f, ' ', 1), split_part(f, ' ', 2)));
    END LOOP;
END
$$;

SELECT t.table_name, t.freshness, t.scheduler, j.schedule, j.active, j.username, j.command_ok
  FROM materialized_table.materialized_tables t
  LEFT JOIN fs.jobs j ON j.jobname = 'materialized_table refresh ' || t.table_name::text
 WHERE t.table_name::text LIKE 'fs.every%'
 ORDER BY t.freshness, t.table_name::text;

-- a job per pg_cron table, none for the others; all in this database
SELECT count(*) AS jobs, count(DISTINCT jobname) AS names,
       bool_and(database = current_database()) AS here
  FROM fs.jobs;
SELECT count(*) AS worker_tables_with_job
  FROM materialized_table_internal.mt_table
 WHERE scheduler = 'worker' AND cron_jobid IS DISTINCT FROM 0 AND cron_jobid IS NOT NULL;

-- next_refresh_time: the next schedule boundary, in the future, on a
-- whole second; at most one period away
SELECT count(*) AS tables,
       bool_and(next_refresh_time > now()) AS in_future,
       bool_and(next_refresh_time <= now() + freshness) AS within_period,
       bool_and(date_part('second', next_refresh_time)::numeric % 1 = 0) AS whole_second,
       bool_and(freshness < interval '1 minute' OR date_part('second', next_refresh_time) = 0) AS minute_aligned,
       bool_and(freshness < interval '1 hour' OR date_part('minute', next_refresh_time) = 0) AS hour_aligned
  FROM materialized_table.materialized_tables
 WHERE table_name::text LIKE 'fs.every%';
SELECT date_part('hour', next_refresh_time) AS hour, date_part('minute', next_refresh_time) AS minute
  FROM materialized_table.materialized_tables
 WHERE table_name = 'fs.every_01_day'::regclass;

DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT table_name FROM materialized_table.materialized_tables
              WHERE table_name::text LIKE 'fs.every%' LOOP
        PERFORM materialized_table.execute(format('DROP MATERIALIZED TABLE %s', r.table_name));
    END LOOP;
END
$$;
SELECT count(*) AS jobs_left FROM cron.job WHERE jobname LIKE 'materialized_table refresh fs.%';

-- freshness that cannot be a schedule is refused at CREATE
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs.bad FRESHNESS = INTERVAL '7' MINUTE
  REFRESH_MODE = FULL AS SELECT id FROM fs.src$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs.bad FRESHNESS = INTERVAL '60' SECOND
  REFRESH_MODE = FULL AS SELECT id FROM fs.src$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs.bad FRESHNESS = INTERVAL '5' HOUR
  REFRESH_MODE = FULL AS SELECT id FROM fs.src$$);
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs.bad FRESHNESS = INTERVAL '2' DAY
  REFRESH_MODE = FULL AS SELECT id FROM fs.src$$);

-- the job runs as the table's owner and is named after the table
CREATE ROLE regress_mt_fs_owner LOGIN;
CREATE ROLE regress_mt_fs_owner2 LOGIN;
CREATE ROLE regress_mt_fs_group NOLOGIN;
GRANT USAGE ON SCHEMA fs TO regress_mt_fs_owner, regress_mt_fs_owner2, regress_mt_fs_group;
GRANT SELECT ON fs.src TO regress_mt_fs_owner, regress_mt_fs_owner2, regress_mt_fs_group;
CREATE SCHEMA fs_owned AUTHORIZATION regress_mt_fs_owner;
GRANT USAGE, CREATE ON SCHEMA fs_owned TO regress_mt_fs_group;
GRANT USAGE ON SCHEMA fs_owned TO regress_mt_fs_owner2;
SET ROLE regress_mt_fs_owner;
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs_owned."Totals by id"
  FRESHNESS = INTERVAL '10' MINUTE REFRESH_MODE = FULL AS SELECT id, sum(v) AS total FROM fs.src GROUP BY id$$);
-- the owner sees the job as theirs (pg_cron shows each role its own jobs)
RESET ROLE;
GRANT USAGE ON SCHEMA cron TO regress_mt_fs_owner;
SET ROLE regress_mt_fs_owner;
SELECT jobname, schedule, username, active FROM cron.job;
-- and a scheduled run works with the owner's rights alone
SELECT materialized_table.scheduled_refresh('fs_owned."Totals by id"', '2024-06-02 00:10:00+00');
SELECT * FROM fs_owned."Totals by id" ORDER BY id;
RESET ROLE;
REVOKE USAGE ON SCHEMA cron FROM regress_mt_fs_owner;
-- a new owner: the job follows, and so does the hidden query view
ALTER TABLE fs_owned."Totals by id" OWNER TO regress_mt_fs_owner2;
SELECT jobname, username FROM cron.job WHERE jobname LIKE '%Totals by id%';
SET ROLE regress_mt_fs_owner2;
SELECT materialized_table.scheduled_refresh('fs_owned."Totals by id"', '2024-06-02 00:20:00+00');
RESET ROLE;
-- a rename (of the table or its schema) renames the job
ALTER TABLE fs_owned."Totals by id" RENAME TO "Sums";
ALTER SCHEMA fs_owned RENAME TO fs_owned2;
SELECT jobname, username FROM cron.job WHERE jobname LIKE '%fs_owned%';
-- pg_cron runs jobs only for roles that can log in: the worker drives a
-- table owned by a group role
ALTER TABLE fs_owned2."Sums" OWNER TO regress_mt_fs_group;
SELECT scheduler FROM materialized_table.materialized_tables WHERE table_name = 'fs_owned2."Sums"'::regclass;
SELECT count(*) AS jobs FROM cron.job WHERE jobname LIKE '%fs_owned%';
ALTER TABLE fs_owned2."Sums" OWNER TO regress_mt_fs_owner;
SELECT scheduler FROM materialized_table.materialized_tables WHERE table_name = 'fs_owned2."Sums"'::regclass;
SELECT jobname, username FROM cron.job WHERE jobname LIKE '%fs_owned%';
-- pg_cron knows the owner by name: renaming the role renames it in the job
ALTER ROLE regress_mt_fs_owner RENAME TO regress_mt_fs_owner_renamed;
SELECT jobname, username FROM cron.job WHERE jobname LIKE '%fs_owned%';
ALTER ROLE regress_mt_fs_owner_renamed RENAME TO regress_mt_fs_owner;
SET ROLE regress_mt_fs_group;
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs_owned2.by_group
  FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL AS SELECT id FROM fs.src$$);
RESET ROLE;
SELECT table_name, scheduler FROM materialized_table.materialized_tables
 WHERE table_name = 'fs_owned2.by_group'::regclass;
-- a name too long for cron.job is clipped, and stays unique
ALTER TABLE fs_owned2."Sums" RENAME TO "a name so long that the job name must be clipped, 1";
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs_owned2."a name so long that the job name must be clipped, 2"
  FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL AS SELECT id FROM fs.src$$);
SELECT count(*) AS jobs, count(DISTINCT jobname) AS names,
       bool_and(jobname LIKE 'materialized_table refresh fs_owned2."a name so%... (%)') AS clipped
  FROM cron.job WHERE jobname LIKE '%fs_owned2%';
-- DROP SCHEMA ... CASCADE removes the jobs
DROP SCHEMA fs_owned2 CASCADE;
SELECT count(*) AS jobs_left FROM cron.job WHERE jobname LIKE '%fs_owned%';
DROP OWNED BY regress_mt_fs_owner, regress_mt_fs_owner2, regress_mt_fs_group;
DROP ROLE regress_mt_fs_owner;
DROP ROLE regress_mt_fs_owner2;
DROP ROLE regress_mt_fs_group;

-- ROLLBACK of CREATE leaves no job
BEGIN;
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs.rolled_back
  FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL AS SELECT id FROM fs.src$$);
SELECT jobname, schedule FROM cron.job WHERE jobname = 'materialized_table refresh fs.rolled_back';
ROLLBACK;
SELECT count(*) AS jobs FROM cron.job WHERE jobname = 'materialized_table refresh fs.rolled_back';
SELECT to_regclass('fs.rolled_back') AS table_left;

-- plain DROP TABLE removes the job too
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs.dropped_plainly
  FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL AS SELECT id FROM fs.src$$);
SELECT jobname FROM fs.jobs;
DROP TABLE fs.dropped_plainly;
SELECT count(*) AS jobs FROM cron.job WHERE jobname = 'materialized_table refresh fs.dropped_plainly';
-- and a DROP that is rolled back keeps it
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs.kept
  FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL AS SELECT id FROM fs.src$$);
BEGIN;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE fs.kept');
SELECT count(*) AS jobs FROM fs.jobs;
ROLLBACK;
SELECT jobname, schedule, active FROM fs.jobs;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE fs.kept');

-- a new freshness reschedules: SET FRESHNESS, CREATE OR ALTER.  (With the
-- default materialized_table.freshness_threshold, a freshness crossing it
-- switches the refresh mode; here every change stays in FULL mode.)
SET materialized_table.freshness_threshold = '1s';
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs.resched
  FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL AS SELECT id, v FROM fs.src$$);
SELECT jobname, schedule, active FROM fs.jobs;
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fs.resched SET FRESHNESS = INTERVAL '2' HOUR$$);
SELECT jobname, schedule, active FROM fs.jobs;
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE fs.resched
  FRESHNESS = INTERVAL '15' MINUTE REFRESH_MODE = FULL AS SELECT id, v FROM fs.src$$);
SELECT jobname, schedule, active FROM fs.jobs;
SELECT freshness, scheduler FROM materialized_table.materialized_tables WHERE table_name = 'fs.resched'::regclass;
-- an identical CREATE OR ALTER changes nothing
SELECT materialized_table.execute($$CREATE OR ALTER MATERIALIZED TABLE fs.resched
  FRESHNESS = INTERVAL '15' MINUTE REFRESH_MODE = FULL AS SELECT id, v FROM fs.src$$);
SELECT jobname, schedule, active FROM fs.jobs;
-- to seconds: the worker takes over and the job goes
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fs.resched SET FRESHNESS = INTERVAL '30' SECOND$$);
SELECT freshness, scheduler FROM materialized_table.materialized_tables WHERE table_name = 'fs.resched'::regclass;
SELECT count(*) AS jobs FROM fs.jobs;
-- and back to minutes: a job again
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fs.resched SET FRESHNESS = INTERVAL '1' MINUTE$$);
SELECT freshness, scheduler FROM materialized_table.materialized_tables WHERE table_name = 'fs.resched'::regclass;
SELECT jobname, schedule, active FROM fs.jobs;
-- a refused freshness changes nothing
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fs.resched SET FRESHNESS = INTERVAL '7' MINUTE$$);
SELECT jobname, schedule, active FROM fs.jobs;
-- a rolled back change neither
BEGIN;
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fs.resched SET FRESHNESS = INTERVAL '4' HOUR$$);
SELECT jobname, schedule, active FROM fs.jobs;
ROLLBACK;
SELECT jobname, schedule, active FROM fs.jobs;
-- a rename: the job's name follows
ALTER TABLE fs.resched RENAME TO resched2;
SELECT jobname, schedule, active FROM fs.jobs;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE fs.resched2');
SELECT count(*) AS jobs FROM cron.job WHERE jobname LIKE 'materialized_table refresh fs.%';
RESET materialized_table.freshness_threshold;

-- SUSPEND deactivates the job, RESUME reactivates it
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs.pausing
  FRESHNESS = INTERVAL '5' MINUTE REFRESH_MODE = FULL AS SELECT id, v FROM fs.src$$);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fs.pausing SUSPEND');
SELECT jobname, schedule, active FROM fs.jobs;
SELECT refresh_status, next_refresh_time FROM materialized_table.materialized_tables
 WHERE table_name = 'fs.pausing'::regclass;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fs.pausing SUSPEND');
-- a new freshness while suspended keeps the job inactive
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fs.pausing SET FRESHNESS = INTERVAL '10' MINUTE$$);
SELECT jobname, schedule, active FROM fs.jobs;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fs.pausing RESUME');
SELECT jobname, schedule, active FROM fs.jobs;
SELECT refresh_status, next_refresh_time > now() AS next_in_future
  FROM materialized_table.materialized_tables WHERE table_name = 'fs.pausing'::regclass;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fs.pausing RESUME');
-- RESUME options: known ones are checked, unknown ones listed
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fs.pausing SUSPEND');
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fs.pausing RESUME WITH ('sink.paralelism' = '4')$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fs.pausing RESUME WITH ('sink.parallelism' = 'four')$$);
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fs.pausing RESUME WITH ('sink.parallelism' = '0')$$);
SELECT refresh_status FROM materialized_table.materialized_tables WHERE table_name = 'fs.pausing'::regclass;
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fs.pausing RESUME WITH ('sink.parallelism' = '4')$$);
SELECT jobname, schedule, active FROM fs.jobs;
-- not persisted: neither in the options nor in show_create
SELECT options FROM materialized_table.materialized_tables WHERE table_name = 'fs.pausing'::regclass;
SELECT materialized_table.show_create('fs.pausing');
-- a rolled back SUSPEND leaves the job active
BEGIN;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fs.pausing SUSPEND');
SELECT active FROM fs.jobs;
ROLLBACK;
SELECT jobname, active FROM fs.jobs;
-- a table suspended on a worker schedule has no job either way
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE fs.pausing_fast
  FRESHNESS = INTERVAL '10' SECOND REFRESH_MODE = FULL AS SELECT id, v FROM fs.src$$);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fs.pausing_fast SUSPEND');
SELECT refresh_status, scheduler, next_refresh_time FROM materialized_table.materialized_tables
 WHERE table_name = 'fs.pausing_fast'::regclass;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fs.pausing_fast RESUME');
SELECT refresh_status, scheduler, next_refresh_time > now() AS next_in_future
  FROM materialized_table.materialized_tables WHERE table_name = 'fs.pausing_fast'::regclass;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE fs.pausing_fast');
-- DROP works while suspended and takes the (inactive) job along
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fs.pausing SUSPEND');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE fs.pausing');
SELECT count(*) AS jobs FROM cron.job WHERE jobname LIKE 'materialized_table refresh fs.%';

DROP VIEW fs.jobs;
DROP SCHEMA fs CASCADE;
