-- FULL tables with a sub-minute freshness, driven by the database's worker:
-- refreshed on time, suspended and resumed, runs never overlap.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
SET client_min_messages = warning;
SET timezone = 'UTC';
\set schema tap_fw
\ir ../lib/tap_helpers.sql
CREATE TABLE tap_fw.src (id int PRIMARY KEY, v int);
INSERT INTO tap_fw.src VALUES (1, 10), (2, 20);
CREATE TABLE tap_fw.control (seconds float);
INSERT INTO tap_fw.control VALUES (0);
-- sleeps as long as tap_fw.control says: a query made slow on demand
CREATE FUNCTION tap_fw.nap() RETURNS int LANGUAGE sql VOLATILE
AS $$ SELECT 1 FROM pg_sleep((SELECT seconds FROM tap_fw.control)) $$;

CREATE TABLE tap_fw.timing (what text, seconds float);

SELECT plan(16);

SELECT lives_ok($$SELECT materialized_table.execute('
  CREATE MATERIALIZED TABLE tap_fw.fast FRESHNESS = INTERVAL ''5'' SECOND REFRESH_MODE = FULL
    AS SELECT sum(v) AS total, count(*) AS n FROM tap_fw.src')$$,
  'a 5-second FULL table is created');
SELECT is(scheduler, 'worker', 'the worker drives it (pg_cron has no second schedules)')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_fw.fast'::regclass;
SELECT is((SELECT count(*) FROM cron.job WHERE jobname LIKE '%tap_fw.fast%'), 0::bigint, 'it has no pg_cron job');
SELECT isnt(tap_fw.wait_for($$SELECT EXISTS (SELECT FROM pg_stat_activity
                                              WHERE backend_type = 'materialized_table worker'
                                                AND datname = current_database())$$, 10),
            NULL, 'a worker runs in this database');

-- a source change shows within 15 s
UPDATE tap_fw.src SET v = v + 1;
INSERT INTO tap_fw.timing
SELECT 'fast', tap_fw.wait_for($$SELECT (SELECT total FROM tap_fw.fast) = 32$$, 15);
SELECT ok(seconds IS NOT NULL, 'the 5-second table reflects a source change within 15 s')
  FROM tap_fw.timing WHERE what = 'fast';
SELECT diag('5-second table: source change visible after ' || coalesce(seconds::text, 'more than 15') || ' s')
  FROM tap_fw.timing WHERE what = 'fast';
SELECT ok(bool_and(date_part('second', started_at)::int % 5 = 0), 'scheduled runs start on 5-second boundaries')
  FROM materialized_table.refresh_history
 WHERE table_name = 'tap_fw.fast'::regclass AND trigger = 'SCHEDULED';
SELECT ok(next_refresh_time > now() AND next_refresh_time <= now() + interval '5 seconds'
          AND date_part('second', next_refresh_time)::int % 5 = 0
          AND last_refresh_time > now() - interval '10 seconds',
          'next_refresh_time and last_refresh_time are true')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_fw.fast'::regclass;

-- suspended, it stays put
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_fw.fast SUSPEND') \g /dev/null
SELECT pg_sleep(1) \g /dev/null
CREATE TEMP TABLE runs_before AS
SELECT count(*) AS n FROM materialized_table.refresh_history WHERE table_name = 'tap_fw.fast'::regclass;
UPDATE tap_fw.src SET v = v + 1;
SELECT pg_sleep(11) \g /dev/null
SELECT is((SELECT total FROM tap_fw.fast), 32::bigint, 'a suspended table is not refreshed');
SELECT is((SELECT count(*) FROM materialized_table.refresh_history WHERE table_name = 'tap_fw.fast'::regclass),
          (SELECT n FROM runs_before), 'and no run is recorded meanwhile');

-- resumed, it catches up
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_fw.fast RESUME') \g /dev/null
INSERT INTO tap_fw.timing
SELECT 'resumed', tap_fw.wait_for($$SELECT (SELECT total FROM tap_fw.fast) = 34$$, 15);
SELECT ok(seconds IS NOT NULL, 'resumed, it catches up within 15 s')
  FROM tap_fw.timing WHERE what = 'resumed';

-- two runs of one table never overlap: a run longer than the period
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_fw.slow FRESHNESS = INTERVAL '2' SECOND REFRESH_MODE = FULL
    AS SELECT (SELECT count(*) FROM tap_fw.src) AS n, tap_fw.nap() AS napped$$) \g /dev/null
UPDATE tap_fw.control SET seconds = 3;
SELECT isnt(tap_fw.wait_for($$SELECT EXISTS (SELECT FROM materialized_table.refresh_history
                                              WHERE table_name = 'tap_fw.slow'::regclass
                                                AND status = 'RUNNING')$$, 10),
            NULL, 'a slow scheduled run is under way');
SELECT is((SELECT query FROM pg_stat_activity
            WHERE backend_type = 'materialized_table worker' AND datname = current_database()),
          'materialized_table: scheduled refresh of slow', 'the worker shows what it does in pg_stat_activity');
-- a run that comes while another is going is skipped, and says so
SELECT materialized_table.scheduled_refresh('tap_fw.slow') \g /dev/null
SELECT is((SELECT error FROM materialized_table.refresh_history
            WHERE table_name = 'tap_fw.slow'::regclass AND status = 'SKIPPED'),
          'another refresh of the table was still running', 'a run due while another is going is SKIPPED');
SELECT pg_sleep(10) \g /dev/null
UPDATE tap_fw.control SET seconds = 0;
SELECT cmp_ok((SELECT count(*) FROM materialized_table.refresh_history
                WHERE table_name = 'tap_fw.slow'::regclass AND trigger = 'SCHEDULED' AND status = 'SUCCEEDED'),
              '>=', 2::bigint, 'the slow table was refreshed several times');
SELECT is((SELECT count(*) FROM materialized_table.refresh_history a
             JOIN materialized_table.refresh_history b
               ON a.table_name = b.table_name AND a.run_id < b.run_id
            WHERE a.table_name = 'tap_fw.slow'::regclass
              AND a.status <> 'SKIPPED' AND b.status <> 'SKIPPED'
              AND b.started_at < coalesce(a.finished_at, 'infinity')),
          0::bigint, 'no two runs of the table overlap');
SELECT ok(NOT EXISTS (SELECT FROM materialized_table.refresh_history
                       WHERE table_name IN ('tap_fw.fast'::regclass, 'tap_fw.slow'::regclass)
                         AND status = 'FAILED'),
          'no run failed');

SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_fw.slow') \g /dev/null
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_fw.fast') \g /dev/null
SELECT * FROM finish();
DROP SCHEMA tap_fw CASCADE;
