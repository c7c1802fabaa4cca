-- A database without pg_cron (pg_cron lives in one database per cluster):
-- the database's worker refreshes its FULL tables on time, starts only
-- when the database needs it, leaves when it does not, and does not keep
-- DROP DATABASE waiting.
--
-- Not wrapped in a transaction; the file cleans up after itself.  The
-- other database is reached through dblink.
SET client_min_messages = warning;
SET timezone = 'UTC';
\set schema tap_nc
\ir ../lib/tap_helpers.sql
DROP DATABASE IF EXISTS tap_mt_nocron;
CREATE DATABASE tap_mt_nocron;

-- run(sql): one statement in the other database; its first value as text
CREATE FUNCTION tap_nc.run(sql text) RETURNS text LANGUAGE sql AS $$
    SELECT v FROM dblink('tap_nc', sql) AS t(v text)
$$;
-- the other database's worker, if one runs
CREATE VIEW tap_nc.worker AS
SELECT pid, query FROM pg_stat_activity
 WHERE backend_type = 'materialized_table worker' AND datname = 'tap_mt_nocron';
CREATE TABLE tap_nc.timing (what text, seconds float);

SELECT dblink_connect('tap_nc', format('host=%s port=%s dbname=tap_mt_nocron user=%s',
                                       current_setting('unix_socket_directories'),
                                       current_setting('port'), current_user)) \g /dev/null
SELECT dblink_exec('tap_nc', $$
    SET client_min_messages = warning;
    CREATE EXTENSION materialized_table;
    CREATE TABLE src (id int PRIMARY KEY, v int);
    INSERT INTO src VALUES (1, 10), (2, 20)$$) \g /dev/null

SELECT plan(13);

SELECT is(tap_nc.run($$SELECT count(*)::text FROM pg_extension WHERE extname = 'pg_cron'$$), '0',
          'pg_cron is not installed there');
SELECT is((SELECT count(*) FROM tap_nc.worker), 0::bigint,
          'no worker runs in a database that has no materialized table to drive');

SELECT tap_nc.run($$
    SELECT materialized_table.execute('
      CREATE MATERIALIZED TABLE every_minute FRESHNESS = INTERVAL ''1'' MINUTE REFRESH_MODE = FULL
        AS SELECT sum(v) AS total FROM src;
      CREATE MATERIALIZED TABLE every_3s FRESHNESS = INTERVAL ''3'' SECOND REFRESH_MODE = FULL
        AS SELECT sum(v) AS total FROM src')$$) \g /dev/null
SELECT is(tap_nc.run($$SELECT string_agg(table_name || ' ' || scheduler, ', ' ORDER BY table_name::text)
                         FROM materialized_table.materialized_tables$$),
          'every_3s worker, every_minute worker', 'the worker drives both tables');
SELECT isnt(tap_nc.wait_for($$SELECT EXISTS (SELECT FROM tap_nc.worker)$$, 10), NULL,
            'a worker starts there');

-- refreshed on time
SELECT dblink_exec('tap_nc', 'UPDATE src SET v = v + 1') \g /dev/null
INSERT INTO tap_nc.timing
SELECT '3s', tap_nc.wait_for($$SELECT tap_nc.run('SELECT total::text FROM every_3s') = '32'$$, 15);
SELECT ok(seconds IS NOT NULL, 'the 3-second table reflects a source change within 15 s')
  FROM tap_nc.timing WHERE what = '3s';
INSERT INTO tap_nc.timing
SELECT 'minute', tap_nc.wait_for($$SELECT tap_nc.run('SELECT total::text FROM every_minute') = '32'$$, 75);
SELECT ok(seconds IS NOT NULL, 'the 1-minute table reflects it within 75 s')
  FROM tap_nc.timing WHERE what = 'minute';
SELECT diag('no pg_cron: source change visible after ' || string_agg(what || ' ' || coalesce(seconds::text, 'timeout') || ' s', ', '))
  FROM tap_nc.timing;
SELECT is(tap_nc.run($$SELECT bool_and(started_at - date_trunc('minute', started_at) < interval '5 seconds')::text
                         FROM materialized_table.refresh_history
                        WHERE table_name = 'every_minute'::regclass AND trigger = 'SCHEDULED'$$),
          'true', 'the 1-minute table''s runs start at the minute boundary');
-- (a 3-second run may be going right now)
SELECT is(tap_nc.run($$SELECT coalesce(string_agg(table_name || ' ' || trigger || ' ' || status || ': ' ||
                                                   coalesce(error, ''), '; '), 'none')
                         FROM materialized_table.refresh_history
                        WHERE status NOT IN ('SUCCEEDED', 'RUNNING')$$),
          'none', 'every run that ended succeeded');

-- the worker leaves when the database has nothing for it
SELECT tap_nc.run($$
    SELECT materialized_table.execute('DROP MATERIALIZED TABLE every_minute; DROP MATERIALIZED TABLE every_3s')$$) \g /dev/null
SELECT isnt(tap_nc.wait_for($$SELECT NOT EXISTS (SELECT FROM tap_nc.worker)$$, 15), NULL,
            'the worker leaves once the last table it drives is gone');

-- and comes back for a new one
SELECT tap_nc.run($$
    SELECT materialized_table.execute('
      CREATE MATERIALIZED TABLE every_2s FRESHNESS = INTERVAL ''2'' SECOND REFRESH_MODE = FULL
        AS SELECT sum(v) AS total FROM src')$$) \g /dev/null
SELECT isnt(tap_nc.wait_for($$SELECT EXISTS (SELECT FROM tap_nc.worker)$$, 10), NULL,
            'a new table brings the worker back');

-- DROP DATABASE does not wait for it
SELECT dblink_disconnect('tap_nc') \g /dev/null
CREATE TEMP TABLE drop_started AS SELECT clock_timestamp() AS at;
DROP DATABASE tap_mt_nocron;
SELECT cmp_ok(clock_timestamp() - (SELECT at FROM drop_started), '<', interval '10 seconds',
              'DROP DATABASE with the worker running succeeds quickly');
SELECT diag('DROP DATABASE took ' || round(extract(epoch FROM clock_timestamp() - (SELECT at FROM drop_started))::numeric, 2) || ' s');
SELECT is((SELECT count(*) FROM tap_nc.worker), 0::bigint, 'and no worker is left for it');
SELECT is((SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'materialized_table launcher'),
          1::bigint, 'the launcher is still there');

SELECT * FROM finish();
DROP SCHEMA tap_nc CASCADE;
DROP EXTENSION dblink;
