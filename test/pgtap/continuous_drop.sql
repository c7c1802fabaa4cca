-- DROP MATERIALIZED TABLE of CONTINUOUS tables while another session
-- writes their sources: tables come and go many times (of each strategy,
-- suspended with work kept, dropped in a transaction that rolls back);
-- the worker survives all of it, the tables that stay converge, and no
-- pipeline row or hidden object is left behind.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_cd
\set with_src
\ir ../lib/tap_helpers.sql
SET search_path = tap_cd, public;



-- CREATE, a moment of load, DROP: n times, cycling through the strategies
CREATE PROCEDURE come_and_go(n int) LANGUAGE plpgsql AS $$
DECLARE
    queries text[] := ARRAY[
        'SELECT grp, count(*) AS n, sum(v) AS total FROM tap_cd.src GROUP BY grp',
        'SELECT grp, count(DISTINCT v) AS kinds FROM tap_cd.src GROUP BY grp',
        'SELECT id, v FROM tap_cd.src WHERE v > 90',
        'SELECT count(*) AS n FROM tap_cd.src'];
BEGIN
    FOR i IN 1..n LOOP
        PERFORM materialized_table.execute(format(
            'CREATE MATERIALIZED TABLE tap_cd.tmp FRESHNESS = INTERVAL ''1'' SECOND AS %s',
            queries[1 + i % 4]));
        COMMIT;
        PERFORM pg_sleep(0.2 + random() * 0.6);
        PERFORM materialized_table.execute('DROP MATERIALIZED TABLE tap_cd.tmp');
        COMMIT;
    END LOOP;
END $$;

SELECT plan(13);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cd.stay FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_cd.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_cd.stay_keys FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(DISTINCT v) AS kinds FROM tap_cd.src GROUP BY grp$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the tables up');
CREATE TEMP TABLE worker AS SELECT worker_pid() AS pid;
CREATE TEMP TABLE mark AS SELECT clock_timestamp() AS at;

SELECT writer_connect('tap_cd_w') \g /dev/null
SELECT dblink_send_query('tap_cd_w', 'CALL tap_cd.writer(12)') \g /dev/null

-- tables come and go under load
CALL come_and_go(8);

-- dropped while suspended, with work kept
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cd.kept_deltas FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n FROM tap_cd.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_cd.kept_keys FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(DISTINCT v) AS kinds FROM tap_cd.src GROUP BY grp$$) \g /dev/null
SELECT pg_sleep(1) \g /dev/null
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_cd.kept_deltas SUSPEND; ALTER MATERIALIZED TABLE tap_cd.kept_keys SUSPEND') \g /dev/null
SELECT isnt(wait_for($$SELECT EXISTS (SELECT FROM materialized_table_internal.change_keys WHERE relid = 'tap_cd.kept_keys'::regclass)
                        AND EXISTS (SELECT FROM materialized_table_internal.change_deltas WHERE relid = 'tap_cd.kept_deltas'::regclass)$$, 10),
            NULL, 'suspended tables have work kept');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_cd.kept_deltas; DROP MATERIALIZED TABLE tap_cd.kept_keys') \g /dev/null

-- a DROP that rolls back leaves the table followed
BEGIN;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_cd.stay_keys') \g /dev/null
SELECT pg_sleep(1) \g /dev/null
ROLLBACK;

SELECT is(status, 'CALL', 'the write load ran') FROM dblink_get_result('tap_cd_w') AS r(status text);
SELECT dblink_disconnect('tap_cd_w') \g /dev/null

SELECT is(worker_pid(), (SELECT pid FROM worker), 'the worker survived it all (the same process)');
SELECT isnt(converged(20), NULL, 'the tables that stay converge');
SELECT is(mismatches('stay'), 0::bigint, 'the deltas table equals its query');
SELECT is(mismatches('stay_keys'), 0::bigint, 'the table whose DROP rolled back equals its query');
SELECT is((SELECT count(*) FROM materialized_table.refresh_history
            WHERE table_name IN ('stay'::regclass, 'stay_keys'::regclass) AND status = 'FAILED'),
          0::bigint, 'no cycle of theirs failed');
SELECT is((SELECT count(*) FROM materialized_table.refresh_history h
            WHERE h.started_at > (SELECT at FROM mark) AND h.status = 'FAILED'
              AND h.trigger = 'CONTINUOUS'),
          0::bigint, 'no cycle of a table being dropped failed either');
-- a cycle keeping work for a table as it is dropped may commit that work
-- after the DROP; the next DROP collects it
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cd.last FRESHNESS = INTERVAL '1' SECOND AS SELECT count(*) AS n FROM tap_cd.src$$) \g /dev/null
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_cd.last') \g /dev/null
SELECT is((SELECT count(*) FROM materialized_table_internal.continuous_state c
            WHERE NOT EXISTS (SELECT FROM pg_class WHERE oid = c.relid)),
          0::bigint, 'no pipeline state is left of the dropped tables');
SELECT is((SELECT count(*) FROM materialized_table_internal.change_keys c
            WHERE NOT EXISTS (SELECT FROM pg_class WHERE oid = c.relid))
          + (SELECT count(*) FROM materialized_table_internal.change_deltas c
            WHERE NOT EXISTS (SELECT FROM pg_class WHERE oid = c.relid)),
          0::bigint, 'nor kept work');
SELECT is((SELECT count(*) FROM pg_class c
            WHERE c.relnamespace = 'materialized_table_internal'::regnamespace AND c.relkind IN ('r', 'v')
              AND (c.relname LIKE 'state\_%' OR c.relname LIKE 'derived\_%')
              AND NOT EXISTS (SELECT FROM materialized_table_internal.continuous_state s
                                 JOIN materialized_table_internal.mt_table t ON t.relid = s.relid
                               WHERE c.relname IN ('state_' || t.id, 'derived_' || t.id))),
          0::bigint, 'nor hidden state tables or views');
SELECT is((SELECT count(*) FROM materialized_table_internal.mt_table t
            WHERE NOT EXISTS (SELECT FROM pg_class WHERE oid = t.relid)),
          0::bigint, 'nor catalog rows');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_cd.stay; DROP MATERIALIZED TABLE tap_cd.stay_keys') \g /dev/null
RESET search_path;
DROP SCHEMA tap_cd CASCADE;
