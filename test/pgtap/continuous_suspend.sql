-- SUSPEND and RESUME of CONTINUOUS tables: a suspended table holds still
-- while its sources change, its work is kept (keys, adjustments, or "all")
-- while the slot moves on, so WAL is not held back; on RESUME it catches
-- up with nothing lost.  Then the same under a write load from another
-- session, suspending and resuming while it runs.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_cs
\set with_src
\ir ../lib/tap_helpers.sql
SET search_path = tap_cs, public;

CREATE TABLE other (id int PRIMARY KEY, v int);
INSERT INTO other SELECT i, i FROM generate_series(1, 100) i;


-- what each table holds when it is suspended
CREATE TABLE frozen (name text, content text);
CREATE FUNCTION content(t regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
    EXECUTE format('SELECT string_agg(x::text, '';'' ORDER BY x::text) FROM %s x', t) INTO r;
    RETURN r;
END $$;

SELECT plan(23);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cs.sums FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_cs.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_cs.tops FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, max(DISTINCT v) AS top, min(DISTINCT id) AS first FROM tap_cs.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_cs.total FRESHNESS = INTERVAL '1' SECOND AS
    SELECT count(*) AS n, sum(v) AS total, max(DISTINCT v) AS top FROM tap_cs.src
     GROUP BY GROUPING SETS (());  -- (grouping sets: recomputed)
  CREATE MATERIALIZED TABLE tap_cs.others FRESHNESS = INTERVAL '1' SECOND AS
    SELECT id, v FROM tap_cs.other$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the tables up');
SELECT is((SELECT string_agg(strategy, ',' ORDER BY relid::regclass::text) FROM materialized_table_internal.continuous_state
            WHERE relid IN ('sums'::regclass, 'tops'::regclass, 'total'::regclass)),
          'DELTAS,KEYS,FULL', 'one table per strategy');

SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE tap_cs.sums SUSPEND; ALTER MATERIALIZED TABLE tap_cs.tops SUSPEND;
  ALTER MATERIALIZED TABLE tap_cs.total SUSPEND$$) \g /dev/null
-- a cycle under way when SUSPEND committed may still finish
SELECT pg_sleep(1) \g /dev/null
INSERT INTO frozen SELECT t, content(t::regclass) FROM unnest(ARRAY['sums', 'tops', 'total']) t;
CREATE TEMP TABLE mark AS SELECT clock_timestamp() AS at;

UPDATE src SET v = v + 1 WHERE id % 3 = 0;
DELETE FROM src WHERE id % 50 = 0;
UPDATE src SET grp = (grp + 7) % 20 WHERE id % 11 = 0;
INSERT INTO src SELECT i, i % 20, i % 100 FROM generate_series(5001, 5500) i;
-- the unsuspended table goes on meanwhile
UPDATE other SET v = -v WHERE id <= 10;
CREATE TEMP TABLE change_lsn AS SELECT pg_current_wal_lsn() AS lsn;

SELECT isnt(wait_for('SELECT tap_cs.mismatches(''tap_cs.others'') = 0', 10), NULL,
            'a table that is not suspended goes on');
SELECT isnt(wait_for($$SELECT confirmed_flush_lsn >= (SELECT lsn FROM change_lsn)
                         FROM pg_replication_slots WHERE slot_name = tap_cs.slot_name()$$, 10),
            NULL, 'the slot moves past the changes of suspended tables: they hold no WAL back');
SELECT pg_sleep(2) \g /dev/null
SELECT is(content(name::regclass), content, name || ' holds still while suspended')
  FROM frozen ORDER BY name;
SELECT is((SELECT count(*) FROM materialized_table.refresh_history
            WHERE table_name IN ('sums'::regclass, 'tops'::regclass, 'total'::regclass)
              AND started_at > (SELECT at FROM mark)),
          0::bigint, 'no cycle of a suspended table is recorded');
SELECT ok(mismatches('sums') > 0 AND mismatches('tops') > 0 AND mismatches('total') > 0,
          'the suspended tables differ from their queries by now');
SELECT ok((SELECT count(*) FROM materialized_table_internal.change_deltas WHERE relid = 'sums'::regclass) > 0,
          'the adjustments of the deltas table are kept');
SELECT ok((SELECT count(*) FROM materialized_table_internal.change_keys WHERE relid = 'tops'::regclass) > 0,
          'the changed keys of the keys table are kept');
SELECT ok((SELECT needs_full FROM materialized_table_internal.continuous_state WHERE relid = 'total'::regclass),
          'the table recomputed in full is marked to be');
SELECT ok((SELECT pending_since IS NOT NULL FROM materialized_table_internal.continuous_state WHERE relid = 'sums'::regclass),
          'the time of the oldest change waiting is kept');

-- RESUME catches up
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE tap_cs.sums RESUME; ALTER MATERIALIZED TABLE tap_cs.tops RESUME;
  ALTER MATERIALIZED TABLE tap_cs.total RESUME$$) \g /dev/null
SELECT isnt(converged(15), NULL, 'resumed, every table catches up with its query');
SELECT is((SELECT count(*) FROM materialized_table_internal.change_keys WHERE relid IN ('sums'::regclass, 'tops'::regclass))
          + (SELECT count(*) FROM materialized_table_internal.change_deltas WHERE relid IN ('sums'::regclass, 'tops'::regclass)),
          0::bigint, 'and the kept work is consumed');
SELECT ok(NOT needs_full AND pending_since IS NULL, relid::regclass::text || ' has nothing pending')
  FROM materialized_table_internal.continuous_state
 WHERE relid IN ('sums'::regclass, 'tops'::regclass, 'total'::regclass) ORDER BY relid::regclass::text;

-- suspended and resumed under a write load from another session
SELECT writer_connect('tap_cs_w') \g /dev/null
SELECT dblink_send_query('tap_cs_w', $$CALL tap_cs.writer(12, 'UPDATE tap_cs.other SET v = v + 1 WHERE id = 1 + (random() * 99)::int')$$) \g /dev/null
SELECT pg_sleep(1) \g /dev/null
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_cs.sums SUSPEND; ALTER MATERIALIZED TABLE tap_cs.tops SUSPEND') \g /dev/null
SELECT pg_sleep(2) \g /dev/null
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_cs.sums RESUME') \g /dev/null
SELECT pg_sleep(1.5) \g /dev/null
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_cs.total SUSPEND') \g /dev/null
SELECT pg_sleep(2) \g /dev/null
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_cs.tops RESUME; ALTER MATERIALIZED TABLE tap_cs.total RESUME') \g /dev/null
SELECT pg_sleep(1) \g /dev/null
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_cs.sums SUSPEND') \g /dev/null
SELECT pg_sleep(0.7) \g /dev/null
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_cs.sums RESUME') \g /dev/null
SELECT is(status, 'CALL', 'the write load ran') FROM dblink_get_result('tap_cs_w') AS r(status text);
SELECT dblink_disconnect('tap_cs_w') \g /dev/null
SELECT isnt(converged(20), NULL, 'after the load, every table equals its query: nothing lost, nothing twice');
SELECT is(mismatches(t::regclass), 0::bigint, t || ' equals its query')
  FROM unnest(ARRAY['sums', 'tops', 'total']) t;

SELECT * FROM finish();
SELECT materialized_table.execute($$
  DROP MATERIALIZED TABLE tap_cs.sums; DROP MATERIALIZED TABLE tap_cs.tops;
  DROP MATERIALIZED TABLE tap_cs.total; DROP MATERIALIZED TABLE tap_cs.others$$) \g /dev/null
RESET search_path;
DROP SCHEMA tap_cs CASCADE;
