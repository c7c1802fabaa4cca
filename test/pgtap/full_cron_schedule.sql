-- FULL tables on pg_cron: a 1-minute table is refreshed by its job on
-- time; a suspended one stays put, and catches up once resumed.
--
-- Not wrapped in a transaction: pg_cron's jobs only see committed data.
-- The file cleans up after itself.  It waits for up to three minute
-- boundaries.
SET client_min_messages = warning;
SET timezone = 'UTC';
\set schema tap_fc
\ir ../lib/tap_helpers.sql
CREATE TABLE tap_fc.src (id int PRIMARY KEY, v int);
INSERT INTO tap_fc.src VALUES (1, 10), (2, 20);

CREATE TABLE tap_fc.timing (what text, seconds float);

SELECT plan(13);

SELECT lives_ok($$SELECT materialized_table.execute('
  CREATE MATERIALIZED TABLE tap_fc.minutely FRESHNESS = INTERVAL ''1'' MINUTE REFRESH_MODE = FULL
    AS SELECT sum(v) AS total FROM tap_fc.src;
  CREATE MATERIALIZED TABLE tap_fc.paused FRESHNESS = INTERVAL ''1'' MINUTE REFRESH_MODE = FULL
    AS SELECT sum(v) AS total FROM tap_fc.src;
  ALTER MATERIALIZED TABLE tap_fc.paused SUSPEND')$$,
  'two 1-minute FULL tables, one of them suspended');
SELECT is(scheduler, 'pg_cron', 'pg_cron drives ' || table_name::text)
  FROM materialized_table.materialized_tables
 WHERE table_name IN ('tap_fc.minutely'::regclass, 'tap_fc.paused'::regclass) ORDER BY table_name::text;
SELECT is(string_agg(format('%s: %s, %s', jobname, schedule, CASE WHEN active THEN 'active' ELSE 'inactive' END),
                     '; ' ORDER BY jobname),
          'materialized_table refresh tap_fc.minutely: * * * * *, active; '
          'materialized_table refresh tap_fc.paused: * * * * *, inactive',
          'each has a job, the suspended one inactive')
  FROM cron.job WHERE jobname LIKE 'materialized_table refresh tap_fc.%';

-- a source change shows within 75 s
UPDATE tap_fc.src SET v = v + 1;
INSERT INTO tap_fc.timing
SELECT 'minutely', tap_fc.wait_for($$SELECT (SELECT total FROM tap_fc.minutely) = 32$$, 75);
SELECT ok(seconds IS NOT NULL, 'the 1-minute table reflects a source change within 75 s')
  FROM tap_fc.timing WHERE what = 'minutely';
SELECT diag('1-minute table: source change visible after ' || coalesce(seconds::text, 'more than 75') || ' s')
  FROM tap_fc.timing WHERE what = 'minutely';
SELECT ok(started_at - date_trunc('minute', started_at) < interval '5 seconds',
          'the run started at the minute boundary')
  FROM materialized_table.refresh_history
 WHERE table_name = 'tap_fc.minutely'::regclass AND trigger = 'SCHEDULED' AND status = 'SUCCEEDED'
 ORDER BY run_id DESC LIMIT 1;
-- pg_cron records the end of a job a moment after the job's commit
SELECT isnt(tap_fc.wait_for($$SELECT EXISTS (SELECT FROM cron.job_run_details d JOIN cron.job j USING (jobid)
                                            WHERE j.jobname = 'materialized_table refresh tap_fc.minutely'
                                              AND d.status = 'succeeded' AND d.username = current_user)$$, 10),
            NULL, 'pg_cron ran the job as the table''s owner, successfully');
SELECT ok(next_refresh_time > now() AND next_refresh_time <= now() + interval '1 minute'
          AND date_part('second', next_refresh_time) = 0
          AND last_refresh_time > now() - interval '75 seconds',
          'next_refresh_time and last_refresh_time are true')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_fc.minutely'::regclass;

-- meanwhile the suspended table stayed put
SELECT is((SELECT total FROM tap_fc.paused), 30::bigint, 'the suspended table is not refreshed');
SELECT is((SELECT count(*) FROM materialized_table.refresh_history
            WHERE table_name = 'tap_fc.paused'::regclass AND trigger = 'SCHEDULED'),
          0::bigint, 'and has no scheduled run');

-- resumed, it catches up at the next minute
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_fc.paused RESUME') \g /dev/null
INSERT INTO tap_fc.timing
SELECT 'resumed', tap_fc.wait_for($$SELECT (SELECT total FROM tap_fc.paused) = 32$$, 75);
SELECT ok(seconds IS NOT NULL, 'resumed, it catches up within 75 s')
  FROM tap_fc.timing WHERE what = 'resumed';
-- a run the minute just started may still be going: give it time to end
SELECT tap_fc.wait_for($$SELECT NOT EXISTS (SELECT FROM materialized_table.refresh_history
                                           WHERE status = 'RUNNING'
                                             AND started_at < now() - interval '20 seconds')$$, 30) \g /dev/null
SELECT is((SELECT string_agg(table_name || ' ' || status || ': ' || coalesce(error, ''), '; ')
             FROM materialized_table.refresh_history
            WHERE table_name IN ('tap_fc.minutely'::regclass, 'tap_fc.paused'::regclass)
              AND (status = 'FAILED' OR (status = 'RUNNING' AND started_at < now() - interval '20 seconds'))),
          NULL, 'no run failed or hangs');

SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_fc.minutely; DROP MATERIALIZED TABLE tap_fc.paused') \g /dev/null
SELECT is((SELECT count(*) FROM cron.job WHERE jobname LIKE 'materialized_table refresh tap_fc.%'),
          0::bigint, 'DROP removes the jobs');
SELECT * FROM finish();
DROP SCHEMA tap_fc CASCADE;
