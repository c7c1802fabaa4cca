-- A CONTINUOUS table dropped by a transaction that held it (and its
-- source) locked for a while first, as DROP MATERIALIZED TABLE, DROP
-- SCHEMA ... CASCADE or DROP TABLE ... CASCADE do while they run: the
-- worker, finding the table locked, keeps its changes for later, which
-- reads the table and its source, each time waiting for them briefly; when
-- the drop commits during such a wait, the table is gone and the worker
-- goes on with the others -- the same process, no error of its own.  (The
-- change waiting to be applied as the lock is taken is what makes the
-- worker keep work for the table.)
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_dl
\set with_src
\ir ../lib/tap_helpers.sql
SET search_path = tap_dl, public;

CREATE TABLE dim (grp int PRIMARY KEY, label text NOT NULL);
INSERT INTO dim SELECT g, 'g' || g FROM generate_series(0, 19) g;

-- each round: a joined DELTAS table over its own copy of the source, a
-- change, the table and the source locked for long enough that the worker
-- waits for them several times, then the table dropped in the same
-- transaction (at a different moment of the worker's waits each round)
CREATE PROCEDURE round(i int) LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE tap_dl.s%s AS SELECT * FROM tap_dl.src', i);
    EXECUTE format('ALTER TABLE tap_dl.s%s ADD PRIMARY KEY (id)', i);
    PERFORM materialized_table.execute(format(
        'CREATE MATERIALIZED TABLE tap_dl.t%s FRESHNESS = INTERVAL ''1'' SECOND AS '
        'SELECT d.label, count(*) AS n, sum(s.v) AS total '
        'FROM tap_dl.s%s s JOIN tap_dl.dim d ON d.grp = s.grp GROUP BY d.label', i, i));
    COMMIT;
    PERFORM tap_dl.wait_for(format(
        'SELECT synced FROM materialized_table_internal.continuous_state '
        'WHERE relid = ''tap_dl.t%s''::regclass', i), 20);
    EXECUTE format('UPDATE tap_dl.s%s SET v = v + 1 WHERE id <= 10', i);
    COMMIT;
    EXECUTE format('LOCK TABLE tap_dl.t%s, tap_dl.s%s IN ACCESS EXCLUSIVE MODE', i, i);
    PERFORM pg_sleep(0.55 + 0.07 * i);
    PERFORM materialized_table.execute(format('DROP MATERIALIZED TABLE tap_dl.t%s', i));
    COMMIT;
    EXECUTE format('DROP TABLE tap_dl.s%s', i);
    COMMIT;
END $$;

SELECT plan(5);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_dl.stay FRESHNESS = INTERVAL '1' SECOND AS
    SELECT d.label, count(*) AS n, sum(s.v) AS total
      FROM tap_dl.src s JOIN tap_dl.dim d ON d.grp = s.grp GROUP BY d.label$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the table up');
CREATE TEMP TABLE worker AS SELECT worker_pid() AS pid;
CREATE TEMP TABLE mark AS SELECT clock_timestamp() AS at;

DO $$BEGIN FOR i IN 1..12 LOOP CALL tap_dl.round(i); END LOOP; END$$;

UPDATE src SET v = v + 2 WHERE id <= 100;
SELECT is(worker_pid(), (SELECT pid FROM worker), 'the worker survived the drops (the same process)');
SELECT isnt(converged(20), NULL, 'the table that stays converges');
SELECT is(mismatches('stay'), 0::bigint, 'and equals its query');
SELECT is((SELECT count(*) FROM materialized_table_internal.refresh_run r
            WHERE r.started_at > (SELECT at FROM mark)
              AND NOT EXISTS (SELECT FROM pg_class WHERE oid = r.relid)),
          0::bigint, 'no cycle of a dropped table is in the history (its drop was no failure)');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_dl.stay') \g /dev/null
RESET search_path;
DROP SCHEMA tap_dl CASCADE;
