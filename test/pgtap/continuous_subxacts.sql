-- Sources written in subtransactions: each writer transaction makes
-- changes in subtransactions that commit and in others that roll back
-- (PL/pgSQL exception blocks, as SAVEPOINT / ROLLBACK TO would), and every
-- fifth opens more than 64 of them, so that the snapshots taken meanwhile
-- overflow their list of subtransactions.  Refreshes by hand during the
-- load make the worker recompute from such snapshots and follow the
-- transactions they did not see.  Every table converges to its query:
-- changes of rolled back subtransactions never count, those of committed
-- ones count once.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_sx
\set with_src
\ir ../lib/tap_helpers.sql
SET search_path = tap_sx, public;

SELECT plan(8);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_sx.own FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_sx.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_sx.avgs FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, avg(v) AS mean FROM tap_sx.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_sx.tops FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, max(v) AS top FROM tap_sx.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_sx.big FRESHNESS = INTERVAL '1' SECOND AS
    SELECT id, grp, v FROM tap_sx.src WHERE v > 90$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the tables up');

-- (a procedure that commits cannot have a SET search_path: names are qualified)
CREATE PROCEDURE sub_writer(seconds float) LANGUAGE plpgsql AS $$
DECLARE
    stop timestamptz := clock_timestamp() + seconds * interval '1 second';
    k int;
    t int := 0;
BEGIN
    WHILE clock_timestamp() < stop LOOP
        t := t + 1;
        FOR s IN 1 .. CASE WHEN t % 5 = 0 THEN 70 ELSE 3 END LOOP
            k := 1 + (random() * 6000)::int;
            -- a subtransaction that commits
            BEGIN
                INSERT INTO tap_sx.src AS x VALUES (k, k % 23, random() * 100)
                    ON CONFLICT (id) DO UPDATE SET v = excluded.v, grp = (x.grp + 1) % 20;
            END;
            -- one that rolls back, after changing rows
            BEGIN
                UPDATE tap_sx.src SET v = v + 1000, grp = grp + 100 WHERE id BETWEEN k AND k + 20;
                DELETE FROM tap_sx.src WHERE id = k + 30;
                INSERT INTO tap_sx.src VALUES (k + 100000, 777, 1);
                RAISE EXCEPTION 'rolled back';
            EXCEPTION WHEN raise_exception THEN
                NULL;
            END;
        END LOOP;
        DELETE FROM tap_sx.src WHERE id = 1 + (random() * 6000)::int;
        COMMIT;
    END LOOP;
END $$;

SELECT writer_connect('tap_sx_w') \g /dev/null
SELECT dblink_send_query('tap_sx_w', 'CALL tap_sx.sub_writer(10)') \g /dev/null

-- recomputes from snapshots taken while such transactions run
SELECT pg_sleep(2) \g /dev/null
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_sx.own REFRESH; ALTER MATERIALIZED TABLE tap_sx.avgs REFRESH') \g /dev/null
SELECT pg_sleep(3) \g /dev/null
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_sx.tops REFRESH; ALTER MATERIALIZED TABLE tap_sx.big REFRESH') \g /dev/null

SELECT is(status, 'CALL', 'the write load ran') FROM dblink_get_result('tap_sx_w') AS r(status text);
SELECT dblink_disconnect('tap_sx_w') \g /dev/null

SELECT isnt(converged(30), NULL, 'the tables converge');
SELECT is(mismatches('own'), 0::bigint, 'own-rows deltas equal the query');
SELECT is(mismatches('avgs'), 0::bigint, 'deltas with hidden state equal the query');
SELECT is(mismatches('tops') + mismatches('big'), 0::bigint, 'keys tables equal their queries');
SELECT is((SELECT count(*) FROM own WHERE grp = 777), 0::bigint,
          'nothing of a rolled back subtransaction shows');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_sx.own; DROP MATERIALIZED TABLE tap_sx.avgs;
  DROP MATERIALIZED TABLE tap_sx.tops; DROP MATERIALIZED TABLE tap_sx.big') \g /dev/null
RESET search_path;
DROP SCHEMA tap_sx CASCADE;
