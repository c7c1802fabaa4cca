-- DROP EXTENSION materialized_table removes every pg_cron job and lets
-- the worker go, even while scheduled refreshes are running; the extension
-- is created again at the end.
--
-- Runs only when this database has no materialized tables but its own
-- (DROP EXTENSION ... CASCADE would take them along).  Not wrapped in a
-- transaction; the file cleans up after itself.
SET client_min_messages = warning;
\set schema tap_de
\ir ../lib/tap_helpers.sql
CREATE TABLE tap_de.src (id int PRIMARY KEY, v int);
INSERT INTO tap_de.src VALUES (1, 10);
CREATE TABLE tap_de.control (seconds float);
INSERT INTO tap_de.control VALUES (0);
CREATE FUNCTION tap_de.nap() RETURNS int LANGUAGE sql VOLATILE
AS $$ SELECT 1 FROM pg_sleep((SELECT seconds FROM tap_de.control)) $$;
CREATE TEMP TABLE others AS
SELECT count(*) AS n FROM materialized_table.materialized_tables;

SELECT (n = 0) AS run_drop FROM others \gset

SELECT plan(7);
\if :run_drop
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_de.hourly FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
    AS SELECT id, v FROM tap_de.src;
  CREATE MATERIALIZED TABLE tap_de.slow FRESHNESS = INTERVAL '2' SECOND REFRESH_MODE = FULL
    AS SELECT (SELECT count(*) FROM tap_de.src) AS n, tap_de.nap() AS napped$$) \g /dev/null
SELECT is((SELECT count(*) FROM cron.job WHERE jobname LIKE 'materialized_table refresh tap_de.%'),
          1::bigint, 'the hourly table has a pg_cron job');
UPDATE tap_de.control SET seconds = 3;
SELECT isnt(tap_de.wait_for($$SELECT EXISTS (SELECT FROM materialized_table.refresh_history
                                              WHERE table_name = 'tap_de.slow'::regclass
                                                AND status = 'RUNNING')$$, 10),
            NULL, 'the worker is in the middle of a slow refresh');

-- DROP EXTENSION waits for that refresh, and only for it
SET statement_timeout = '60s';
CREATE TEMP TABLE drop_started AS SELECT clock_timestamp() AS at;
DROP EXTENSION materialized_table CASCADE;
RESET statement_timeout;
SELECT cmp_ok(clock_timestamp() - (SELECT at FROM drop_started), '<', interval '10 seconds',
              'DROP EXTENSION during a scheduled refresh finishes promptly');
SELECT diag('DROP EXTENSION took ' || round(extract(epoch FROM clock_timestamp() - (SELECT at FROM drop_started))::numeric, 2) || ' s');
SELECT is((SELECT count(*) FROM cron.job WHERE command LIKE '%materialized_table.scheduled_refresh%'),
          0::bigint, 'every job of the extension is gone');
SELECT ok(to_regclass('tap_de.hourly') IS NULL AND to_regclass('tap_de.slow') IS NULL,
          'the materialized tables went with it (CASCADE)');
SELECT isnt(tap_de.wait_for($$SELECT NOT EXISTS (SELECT FROM pg_stat_activity
                                                  WHERE backend_type = 'materialized_table worker'
                                                    AND datname = current_database())$$, 15),
            NULL, 'the worker leaves the database');
SELECT lives_ok('CREATE EXTENSION materialized_table', 'the extension can be created again');
\else
SELECT skip('other materialized tables exist in this database', 7);
\endif

SELECT * FROM finish();
CREATE EXTENSION IF NOT EXISTS materialized_table;
DROP SCHEMA tap_de CASCADE;
