-- DROP EXTENSION materialized_table while its worker follows CONTINUOUS
-- tables under a write load: no replication slot, replication origin,
-- worker or catalog row is left; created again, the extension works again.
--
-- Runs only when this database has no materialized tables but its own
-- (DROP EXTENSION ... CASCADE would take them along).  Not wrapped in a
-- transaction; the file cleans up after itself.
\set schema tap_cx
\ir ../lib/tap_helpers.sql
SET search_path = tap_cx, public;

CREATE TABLE src (id int PRIMARY KEY, grp int NOT NULL, v numeric(10,2) NOT NULL);
INSERT INTO src SELECT i, i % 20, i % 100 FROM generate_series(1, 5000) i;
CREATE PROCEDURE writer(seconds float) LANGUAGE plpgsql AS $$
DECLARE
    stop timestamptz := clock_timestamp() + seconds * interval '1 second';
BEGIN
    WHILE clock_timestamp() < stop LOOP
        UPDATE tap_cx.src SET v = v + 1, grp = (grp + 1) % 20 WHERE id = 1 + (random() * 4999)::int;
        COMMIT;
    END LOOP;
END $$;

CREATE TEMP TABLE others AS
SELECT count(*) AS n FROM materialized_table.materialized_tables;
SELECT (n = 0) AS run_drop FROM others \gset

SELECT plan(14);
\if :run_drop
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cx.sums FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_cx.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_cx.tops FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, max(v) AS top FROM tap_cx.src GROUP BY grp$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the tables up');
SELECT writer_connect('tap_cx_w') \g /dev/null
SELECT dblink_send_query('tap_cx_w', 'CALL tap_cx.writer(5)') \g /dev/null
SELECT pg_sleep(1.5) \g /dev/null
SELECT isnt(wait_for(format($$SELECT confirmed_flush_lsn >= %L FROM pg_replication_slots
                               WHERE slot_name = tap_cx.slot_name()$$, pg_current_wal_lsn()), 10),
            NULL, 'the worker follows the writes through its slot');

-- DROP EXTENSION while the worker is in the middle of a cycle: it waits
-- here for the pipeline's state, which this transaction holds, and finds
-- its tables gone once the DROP commits
SET statement_timeout = '60s';
CREATE TEMP TABLE drop_started AS SELECT clock_timestamp() AS at;
BEGIN;
LOCK TABLE materialized_table_internal.continuous_state IN ACCESS EXCLUSIVE MODE;
SELECT pg_sleep(1) \g /dev/null
DROP EXTENSION materialized_table CASCADE;
COMMIT;
RESET statement_timeout;
SELECT cmp_ok(clock_timestamp() - (SELECT at FROM drop_started), '<', interval '10 seconds',
              'DROP EXTENSION with a running worker finishes promptly');
SELECT ok(to_regclass('tap_cx.sums') IS NULL AND to_regclass('tap_cx.tops') IS NULL,
          'the materialized tables went with it (CASCADE)');
SELECT ok(to_regnamespace('materialized_table_internal') IS NULL,
          'and every catalog row with the internal schema');
-- (the schema named in the control file outlives the extension, empty, as
-- PostgreSQL leaves a schema that CREATE EXTENSION created for it)
SELECT is((SELECT count(*) FROM pg_class WHERE relnamespace = to_regnamespace('materialized_table')), 0::bigint,
          'nothing is left in the public schema');
-- the worker leaves at once, without an error (after which it would be
-- started again, a few seconds later, to clean up)
SELECT isnt(wait_for($$SELECT NOT EXISTS (SELECT FROM pg_stat_activity
                                           WHERE backend_type = 'materialized_table worker'
                                             AND datname = current_database())
                         AND NOT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = tap_cx.slot_name())
                         AND NOT EXISTS (SELECT FROM pg_replication_origin WHERE roname = tap_cx.slot_name())$$, 3),
            NULL, 'the worker leaves the database, leaving no replication slot or origin, within 3 s');
SELECT pg_sleep(6) \g /dev/null
SELECT is((SELECT count(*) FROM pg_stat_activity
            WHERE backend_type = 'materialized_table worker' AND datname = current_database()),
          0::bigint, 'no worker comes back');
SELECT is((SELECT count(*) FROM pg_replication_slots WHERE slot_name = slot_name()), 0::bigint,
          'no replication slot is left');
SELECT is((SELECT count(*) FROM pg_replication_origin WHERE roname = slot_name()), 0::bigint,
          'no replication origin is left');
SELECT is(status, 'CALL', 'the writes went on meanwhile') FROM dblink_get_result('tap_cx_w') AS r(status text);
SELECT dblink_disconnect('tap_cx_w') \g /dev/null

-- created again, it works again
SELECT lives_ok('CREATE EXTENSION materialized_table', 'the extension can be created again');
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cx.sums FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_cx.src GROUP BY grp$$) \g /dev/null
UPDATE src SET grp = 99 WHERE id = 1;
SELECT isnt(wait_for($$SELECT EXISTS (SELECT FROM tap_cx.sums WHERE grp = 99)$$, 20), NULL,
            'a new CONTINUOUS table follows its source');
SELECT is(mismatches('sums'), 0::bigint, 'and equals its query');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_cx.sums') \g /dev/null
\else
SELECT skip('other materialized tables exist in this database', 14);
\endif

SELECT * FROM finish();
CREATE EXTENSION IF NOT EXISTS materialized_table;
RESET search_path;
DROP SCHEMA tap_cx CASCADE;
