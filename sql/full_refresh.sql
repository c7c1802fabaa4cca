--
-- FULL refresh mode: what a scheduled run refreshes (materialized_table.
-- scheduled_refresh, called here with chosen trigger times), failures, and
-- the refresh history.
--
SET timezone = 'UTC';
CREATE SCHEMA fr;
CREATE TABLE fr.events (ds text, hh text, amount int);
INSERT INTO fr.events VALUES
    ('2024-05-31', '10', 1), ('2024-06-01', '08', 10), ('2024-06-01', '09', 20),
    ('2024-01-01', '22', 100), ('2024-01-01', '23', 200), ('2024-01-02', '00', 300);

-- The tables' pg_cron jobs are paused after each statement that makes
-- them active: this file drives the runs itself (scheduled_refresh with
-- chosen trigger times), and a job firing at a minute a freshness names
-- would add a run to the histories it prints.
\set pause_jobs 'SELECT count(cron.alter_job(jobid, active := false)) FROM cron.job WHERE jobname LIKE ''materialized_table refresh fr.%'' AND active'

-- the history of one table, without times or IDs
CREATE FUNCTION fr.history(t regclass)
RETURNS TABLE (trigger text, partition text, status text, rows bigint, error text)
LANGUAGE sql AS $$
    SELECT trigger, partition, status, rows, error
      FROM materialized_table.refresh_history
     WHERE table_name = t ORDER BY run_id
$$;

-- 1 DAY with 'yyyy-MM-dd': the run at 2024-06-02 00:00 covers the day that
-- just closed, ds = '2024-06-01', and leaves the other partitions alone
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE fr.daily
    PARTITIONED BY (ds)
    WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd')
    FRESHNESS = INTERVAL '1' DAY REFRESH_MODE = FULL
    AS SELECT ds, sum(amount) AS total, count(*) AS n FROM fr.events GROUP BY ds $$);
:pause_jobs \g /dev/null
UPDATE fr.events SET amount = amount + 1000;
SELECT materialized_table.scheduled_refresh('fr.daily', '2024-06-02 00:00:00+00');
SELECT * FROM fr.daily ORDER BY ds;
SELECT * FROM fr.history('fr.daily');

-- a partition that does not exist yet is created
INSERT INTO fr.events VALUES ('2024-06-02', '12', 5), ('2024-06-02', '13', 6);
SELECT count(*) AS partitions FROM pg_inherits WHERE inhparent = 'fr.daily'::regclass;
SELECT materialized_table.scheduled_refresh('fr.daily', '2024-06-03 00:00:00+00');
SELECT count(*) AS partitions FROM pg_inherits WHERE inhparent = 'fr.daily'::regclass;
SELECT * FROM fr.daily WHERE ds = '2024-06-02';
-- a run whose period has no rows empties (only) that partition
DELETE FROM fr.events WHERE ds = '2024-06-02';
SELECT materialized_table.scheduled_refresh('fr.daily', '2024-06-03 00:00:00+00');
SELECT ds, total FROM fr.daily ORDER BY ds;

-- the schedule time is formatted in the session's time zone: the run at
-- 2024-06-01 15:00 UTC is midnight in Tokyo
SET timezone = 'Asia/Tokyo';
SELECT materialized_table.scheduled_refresh('fr.daily', '2024-06-01 15:00:00+00');
SET timezone = 'UTC';
SELECT materialized_table.scheduled_refresh('fr.daily', '2024-06-01 15:00:00+00');
SELECT partition FROM fr.history('fr.daily') WHERE trigger = 'SCHEDULED';

-- 1 HOUR with 'yyyy-MM-dd' and 'HH': the run at 2024-01-02 00:00 refreshes
-- ds = '2024-01-01', hh = '23'
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE fr.hourly
    PARTITIONED BY (ds, hh)
    WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd',
          'partition.fields.hh.date-formatter' = 'HH')
    FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
    AS SELECT ds, hh, sum(amount) AS total FROM fr.events GROUP BY ds, hh $$);
:pause_jobs \g /dev/null
UPDATE fr.events SET amount = amount + 1000;
SELECT materialized_table.scheduled_refresh('fr.hourly', '2024-01-02 00:00:00+00');
SELECT * FROM fr.hourly WHERE ds LIKE '2024-01-%' ORDER BY ds, hh;
SELECT * FROM fr.history('fr.hourly');

-- literal text in a pattern, and a pattern on a column that is not the
-- only partition key
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE fr.stamped
    PARTITIONED BY (period)
    WITH ('partition.fields.period.date-formatter' = 'yyyyMMdd''T''HHmm')
    FRESHNESS = INTERVAL '15' MINUTE REFRESH_MODE = FULL
    AS SELECT '20240601T0815'::text AS period, 1 AS one $$);
:pause_jobs \g /dev/null
SELECT materialized_table.scheduled_refresh('fr.stamped', '2024-06-01 08:30:00+00');
SELECT partition, status, rows FROM fr.history('fr.stamped');

-- without a formatter, every run recomputes the whole table
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE fr.whole
    FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
    AS SELECT ds, sum(amount) AS total FROM fr.events GROUP BY ds $$);
:pause_jobs \g /dev/null
UPDATE fr.events SET amount = amount - 2000;
SELECT materialized_table.scheduled_refresh('fr.whole', '2024-01-02 00:00:00+00');
SELECT * FROM fr.whole ORDER BY ds;
SELECT * FROM fr.history('fr.whole');

-- without a trigger time (as the job calls it): the latest schedule
-- boundary; last_refresh_time is the start of the last successful refresh
SELECT materialized_table.scheduled_refresh('fr.whole');
SELECT t.last_refresh_time = h.started_at AS last_refresh_is_latest_run,
       t.last_refresh_time <= now() AS not_in_future
  FROM materialized_table.materialized_tables t,
       LATERAL (SELECT max(started_at) AS started_at FROM materialized_table.refresh_history
                 WHERE table_name = t.table_name AND status = 'SUCCEEDED') h
 WHERE t.table_name = 'fr.whole'::regclass;

-- a refresh that fails keeps the old content, is recorded as FAILED with
-- its error, and does not move last_refresh_time; the next run succeeds
CREATE TABLE fr.nums (id int, v int);
INSERT INTO fr.nums VALUES (1, 1), (2, 2);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE fr.ratios (PRIMARY KEY (id) NOT ENFORCED)
    FRESHNESS = INTERVAL '10' MINUTE REFRESH_MODE = FULL
    AS SELECT id, 100 / v AS ratio FROM fr.nums $$);
:pause_jobs \g /dev/null
SELECT last_refresh_time AS ratios_refreshed FROM materialized_table.materialized_tables
 WHERE table_name = 'fr.ratios'::regclass \gset
INSERT INTO fr.nums VALUES (3, 0);
-- (terse: the error's context names the hidden view by OID)
\set VERBOSITY terse
SELECT materialized_table.scheduled_refresh('fr.ratios', '2024-06-01 12:00:00+00');
SELECT * FROM fr.ratios ORDER BY id;
SELECT last_refresh_time = :'ratios_refreshed' AS unchanged FROM materialized_table.materialized_tables
 WHERE table_name = 'fr.ratios'::regclass;
-- a primary-key violation
UPDATE fr.nums SET v = 4 WHERE id = 3;
INSERT INTO fr.nums VALUES (1, 5);
SELECT materialized_table.scheduled_refresh('fr.ratios', '2024-06-01 12:10:00+00');
\set VERBOSITY default
SELECT * FROM fr.ratios ORDER BY id;
-- fixed: the next run succeeds
DELETE FROM fr.nums WHERE v = 5;
SELECT materialized_table.scheduled_refresh('fr.ratios', '2024-06-01 12:20:00+00');
SELECT * FROM fr.ratios ORDER BY id;
SELECT * FROM fr.history('fr.ratios');
SELECT last_refresh_time > :'ratios_refreshed' AS moved FROM materialized_table.materialized_tables
 WHERE table_name = 'fr.ratios'::regclass;
-- a manual refresh that fails is recorded too, and one rolled back with
-- its transaction shows as FAILED
INSERT INTO fr.nums VALUES (4, 0);
\set VERBOSITY terse
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fr.ratios REFRESH');
\set VERBOSITY default
DELETE FROM fr.nums WHERE v = 0;
BEGIN;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fr.ratios REFRESH');
ROLLBACK;
SELECT trigger, status, error FROM fr.history('fr.ratios') WHERE trigger = 'MANUAL';

-- SUSPEND: manual refreshes still work; RESUME WITH ('sink.parallelism')
-- applies to the pipeline's next runs (and refreshes) only, and a plain
-- RESUME goes back to the table's own settings
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE fr.workers
    FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
    AS SELECT current_setting('max_parallel_workers_per_gather') AS parallel_workers $$);
:pause_jobs \g /dev/null
SELECT * FROM fr.workers;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fr.workers SUSPEND');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fr.workers REFRESH');
SELECT trigger, status FROM fr.history('fr.workers');
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE fr.workers RESUME WITH ('sink.parallelism' = '4')$$);
:pause_jobs \g /dev/null
SELECT materialized_table.scheduled_refresh('fr.workers', '2024-06-01 12:00:00+00');
SELECT * FROM fr.workers;
SELECT options, materialized_table.show_create(table_name) LIKE '%parallelism%' AS shown
  FROM materialized_table.materialized_tables WHERE table_name = 'fr.workers'::regclass;
SHOW max_parallel_workers_per_gather;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fr.workers SUSPEND');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fr.workers RESUME');
:pause_jobs \g /dev/null
SELECT materialized_table.scheduled_refresh('fr.workers', '2024-06-01 13:00:00+00');
SELECT * FROM fr.workers;

-- ALTER ... AS: the next scheduled run uses the new query; with a
-- formatter only the partition it covers, the older ones keep what the old
-- query wrote (history is not rewritten)
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE fr.daily
    AS SELECT ds, sum(amount) AS total, count(*) AS n, max(amount) AS biggest
         FROM fr.events GROUP BY ds $$);
:pause_jobs \g /dev/null
SELECT * FROM fr.daily ORDER BY ds;
SELECT materialized_table.scheduled_refresh('fr.daily', '2024-06-02 00:00:00+00');
SELECT * FROM fr.daily ORDER BY ds;
-- without a formatter the whole table is overwritten
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE fr.whole
    AS SELECT ds, sum(amount) AS total, count(*) AS n FROM fr.events GROUP BY ds $$);
:pause_jobs \g /dev/null
SELECT materialized_table.scheduled_refresh('fr.whole', '2024-01-02 01:00:00+00');
SELECT * FROM fr.whole ORDER BY ds;

-- a run after its table was dropped (the job was removed with it, but a
-- run may have started already) does nothing and records nothing
SELECT 'fr.whole'::regclass::oid AS whole_oid \gset
SELECT materialized_table.execute('DROP MATERIALIZED TABLE fr.whole');
SET client_min_messages = warning;
SELECT materialized_table.scheduled_refresh(:whole_oid::oid::regclass, '2024-01-02 02:00:00+00');
RESET client_min_messages;
SELECT count(*) AS history_rows FROM materialized_table.refresh_history
 WHERE table_name = :whole_oid::oid::regclass;
-- nor on a table that is not a materialized table
SET client_min_messages = warning;
SELECT materialized_table.scheduled_refresh('fr.nums', '2024-01-02 02:00:00+00');
RESET client_min_messages;
SELECT materialized_table.scheduled_refresh(NULL, '2024-01-02 02:00:00+00');

-- only the owner (or a superuser) may run it
CREATE ROLE regress_mt_fr_other;
GRANT USAGE ON SCHEMA fr TO regress_mt_fr_other;
SET ROLE regress_mt_fr_other;
SELECT materialized_table.scheduled_refresh('fr.ratios', '2024-06-01 12:30:00+00');
RESET ROLE;
REVOKE USAGE ON SCHEMA fr FROM regress_mt_fr_other;
DROP ROLE regress_mt_fr_other;

-- the history is kept materialized_table.history_retention: an old run
-- disappears at the next refresh
SHOW materialized_table.history_retention;
INSERT INTO materialized_table_internal.refresh_run (run_id, relid, trigger, started_at, pid)
VALUES (nextval('materialized_table_internal.refresh_run_seq'), 'fr.ratios'::regclass, 'MANUAL',
        now() - interval '3 days', 0);
SELECT count(*) AS old_runs FROM materialized_table.refresh_history
 WHERE table_name = 'fr.ratios'::regclass AND started_at < now() - interval '1 day';
ALTER SYSTEM SET materialized_table.history_retention = '1d';
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
SHOW materialized_table.history_retention;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE fr.ratios REFRESH');
SELECT count(*) AS old_runs FROM materialized_table.refresh_history
 WHERE table_name = 'fr.ratios'::regclass AND started_at < now() - interval '1 day';
SELECT count(*) > 0 AS recent_runs_kept FROM materialized_table.refresh_history
 WHERE table_name = 'fr.ratios'::regclass;
ALTER SYSTEM RESET materialized_table.history_retention;
SELECT pg_reload_conf();

-- dropping a table forgets its history
SELECT 'fr.ratios'::regclass::oid AS ratios_oid \gset
DROP TABLE fr.ratios;
SELECT count(*) AS history_rows FROM materialized_table_internal.refresh_run WHERE relid = :ratios_oid;

DROP SCHEMA fr CASCADE;
