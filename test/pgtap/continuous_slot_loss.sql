-- Losing the replication slot to max_slot_wal_keep_size: the worker is
-- stalled in a long recompute while the sources keep changing and WAL
-- grows past the limit; the checkpoint invalidates the slot.  The worker
-- holds the slot only while it decodes, so it is not ended: when the
-- recompute is over it finds the slot lost and creates a new one,
-- every table is recomputed in full, the history says why, and nothing
-- that changed meanwhile is lost.
--
-- Changes max_slot_wal_keep_size of the test cluster for its duration
-- (ALTER SYSTEM, reset at the end).  Not wrapped in a transaction; the
-- file cleans up after itself.
\set schema tap_sl
\ir ../lib/tap_helpers.sql
SET search_path = tap_sl, public;

CREATE TABLE src (id int PRIMARY KEY, grp int NOT NULL, v numeric(10,2) NOT NULL);
INSERT INTO src SELECT i, i % 20, i % 100 FROM generate_series(1, 5000) i;
CREATE TABLE junk (x text);
CREATE TABLE control (seconds float);
INSERT INTO control VALUES (0);
-- sleeps as long as control says: a query made slow on demand
CREATE FUNCTION nap() RETURNS int LANGUAGE sql VOLATILE
AS $$ SELECT 1 FROM pg_sleep((SELECT seconds FROM tap_sl.control)) $$;
-- WAL in segments of its own: a write and a switch, n times
CREATE PROCEDURE new_segments(n int) LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..n LOOP
        INSERT INTO tap_sl.junk VALUES (repeat('x', 1000));
        COMMIT;
        PERFORM pg_switch_wal();
    END LOOP;
END $$;

SELECT plan(12);

ALTER SYSTEM SET max_slot_wal_keep_size = '1MB';
SELECT pg_reload_conf() \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_sl.sums FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_sl.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_sl.tops FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, max(v) AS top FROM tap_sl.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_sl.slow FRESHNESS = INTERVAL '1' SECOND AS
    SELECT count(*) AS n, tap_sl.nap() AS napped FROM tap_sl.src$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the tables up');
SELECT is(current_setting('max_slot_wal_keep_size'), '1MB', 'max_slot_wal_keep_size is small');
CREATE TEMP TABLE mark AS SELECT clock_timestamp() AS at;

-- the worker stalls in a long recompute: its slot does not move
UPDATE control SET seconds = 15;
SELECT isnt(wait_for($$SELECT wait_event = 'PgSleep' FROM pg_stat_activity WHERE pid = tap_sl.worker_pid()$$, 10),
            NULL, 'the worker is stalled in a long recompute');
UPDATE control SET seconds = 0;
CREATE TEMP TABLE stalled AS SELECT worker_pid() AS pid;

-- the sources change and WAL grows past the limit
UPDATE src SET v = v + 1 WHERE id % 3 = 0;
DELETE FROM src WHERE id % 10 = 0;
CALL new_segments(4);
CHECKPOINT;
SELECT is((SELECT wal_status FROM pg_replication_slots WHERE slot_name = slot_name()), 'lost',
          'the checkpoint invalidated the slot');
SELECT ok(EXISTS (SELECT FROM pg_stat_activity WHERE pid = (SELECT pid FROM stalled)),
          'the worker, not holding the slot outside decoding, goes on');
-- changes while the worker is still stalled
INSERT INTO src SELECT i, i % 20, 50 FROM generate_series(6001, 6100) i;
UPDATE src SET grp = (grp + 3) % 20 WHERE id % 7 = 0;

SELECT isnt(wait_for($$SELECT wal_status IS DISTINCT FROM 'lost' FROM pg_replication_slots
                        WHERE slot_name = tap_sl.slot_name()$$, 30),
            NULL, 'a new worker creates a new slot');
SELECT isnt(converged(30), NULL, 'every table recovers its query''s result');
SELECT is(mismatches(t::regclass), 0::bigint, t || ' equals its query: nothing lost')
  FROM unnest(ARRAY['sums', 'tops', 'slow']) t;
SELECT is((SELECT count(DISTINCT table_name) FROM materialized_table.refresh_history
            WHERE trigger = 'CONTINUOUS' AND status = 'FAILED' AND started_at > (SELECT at FROM mark)
              AND error LIKE '%replication slot was invalidated%'
              AND table_name IN ('sums'::regclass, 'tops'::regclass, 'slow'::regclass)),
          3::bigint, 'the history of every table says that the slot was lost');
SELECT ok(bool_and(EXISTS (SELECT FROM materialized_table.refresh_history h
                            JOIN materialized_table.refresh_history f
                              ON f.table_name = h.table_name AND f.error LIKE '%replication slot was invalidated%'
                           WHERE h.table_name = t::regclass AND h.trigger = 'CONTINUOUS'
                             AND h.status = 'SUCCEEDED' AND h.run_id > f.run_id)),
          'and records the recompute that followed')
  FROM unnest(ARRAY['sums', 'tops', 'slow']) t;

SELECT * FROM finish();
ALTER SYSTEM RESET max_slot_wal_keep_size;
SELECT pg_reload_conf() \g /dev/null
SELECT materialized_table.execute($$
  DROP MATERIALIZED TABLE tap_sl.sums; DROP MATERIALIZED TABLE tap_sl.tops;
  DROP MATERIALIZED TABLE tap_sl.slow$$) \g /dev/null
RESET search_path;
DROP SCHEMA tap_sl CASCADE;
