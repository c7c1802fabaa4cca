-- 000_settings: while the regression files run, the pg_cron jobs of their
-- FULL tables do nothing (materialized_table.scheduled_refreshes = off in
-- this database), so that no result depends on the clock; zz_settings.sql
-- sets it back.  Each session, and each job's run, starts with it.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_cron;
CREATE EXTENSION IF NOT EXISTS materialized_table;
RESET client_min_messages;
SELECT format('ALTER DATABASE %I SET materialized_table.scheduled_refreshes = off',
              current_database()) \gexec
\c
SHOW materialized_table.scheduled_refreshes;

-- what the setting does
CREATE SCHEMA sr;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE sr.hourly FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
    AS SELECT 1 AS x
$$);
-- the statement the table's job runs
SELECT j.command AS job_command
  FROM cron.job j
  JOIN materialized_table_internal.mt_table m ON j.jobid = m.cron_jobid
 WHERE m.relid = 'sr.hourly'::regclass \gset
SELECT :'job_command' AS job_command;

-- off: the job's run does nothing ...
SELECT :'job_command' \gexec
SELECT count(*) AS scheduled_runs FROM materialized_table.refresh_history
 WHERE table_name = 'sr.hourly'::regclass AND trigger = 'SCHEDULED';
-- ... while a call with a trigger time, as tests make, refreshes
SELECT materialized_table.scheduled_refresh('sr.hourly', '2026-01-01 10:00+00');
SELECT count(*) AS scheduled_runs FROM materialized_table.refresh_history
 WHERE table_name = 'sr.hourly'::regclass AND trigger = 'SCHEDULED';

-- on (the default elsewhere): the job's run refreshes
SET materialized_table.scheduled_refreshes = on;
SELECT :'job_command' \gexec
SELECT count(*) AS scheduled_runs FROM materialized_table.refresh_history
 WHERE table_name = 'sr.hourly'::regclass AND trigger = 'SCHEDULED';

-- a superuser's setting
CREATE ROLE sr_user;
SET ROLE sr_user;
SET materialized_table.scheduled_refreshes = on;
RESET ROLE;
DROP ROLE sr_user;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE sr.hourly');
DROP SCHEMA sr;
