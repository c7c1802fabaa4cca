-- current_lag and freshness_met of a CONTINUOUS table: zero while the
-- worker keeps up, the age of the oldest change it keeps while the table is
-- suspended, zero again once it has caught up.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
SET client_min_messages = warning;
SET timezone = 'UTC';
CREATE SCHEMA tap_lag;
CREATE TABLE tap_lag.src (id int PRIMARY KEY, v int);
ALTER TABLE tap_lag.src REPLICA IDENTITY FULL;
INSERT INTO tap_lag.src SELECT i, i FROM generate_series(1, 10) i;

-- wait_for(query, seconds): true once query returned true, false if it did
-- not within the time given.  Each poll sees what is committed.
CREATE FUNCTION tap_lag.wait_for(query text, timeout float) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    start timestamptz := clock_timestamp();
    done boolean;
BEGIN
    LOOP
        EXECUTE query INTO done;
        IF done THEN
            RETURN true;
        END IF;
        IF clock_timestamp() - start > timeout * interval '1 second' THEN
            RETURN false;
        END IF;
        PERFORM pg_sleep(0.1);
    END LOOP;
END
$$;
-- the lag as the view computes it, as of the start of the statement
-- (statement_timestamp(): a polling loop within one statement sees it still)
CREATE FUNCTION tap_lag.lag() RETURNS interval LANGUAGE plpgsql AS $$
BEGIN
  RETURN (SELECT current_lag FROM materialized_table.materialized_tables
           WHERE table_name = 'tap_lag.cont'::regclass);
END
$$;

SELECT plan(9);

SELECT lives_ok($$SELECT materialized_table.execute('
  CREATE MATERIALIZED TABLE tap_lag.cont (PRIMARY KEY (id) NOT ENFORCED) FRESHNESS = INTERVAL ''2'' SECOND
    AS SELECT id, v FROM tap_lag.src')$$, 'a CONTINUOUS table with a 2-second freshness');
SELECT ok(tap_lag.wait_for($$SELECT tap_lag.lag() = interval '0'$$, 30),
          'once the worker has taken it up, its lag is zero');
SELECT ok(tap_lag.wait_for($$SELECT freshness_met FROM materialized_table.materialized_tables
                              WHERE table_name = 'tap_lag.cont'::regclass$$, 5),
          'and its freshness is met');

-- changes while it keeps up: the lag stays below the freshness
UPDATE tap_lag.src SET v = v + 1 WHERE id = 1;
SELECT ok(tap_lag.wait_for($$SELECT (SELECT v FROM tap_lag.cont WHERE id = 1) = 2$$, 10),
          'a change is applied');
SELECT ok(tap_lag.wait_for($$SELECT tap_lag.lag() = interval '0'$$, 5), 'and the lag is zero again');

-- suspended: the changes it keeps age
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_lag.cont SUSPEND') \g /dev/null
UPDATE tap_lag.src SET v = v + 1 WHERE id = 2;
SELECT pg_sleep(4) \g /dev/null
SELECT cmp_ok(tap_lag.lag(), '>', interval '3 seconds',
              'suspended with a change kept, the lag grows past the freshness');
SELECT is((SELECT freshness_met FROM materialized_table.materialized_tables
            WHERE table_name = 'tap_lag.cont'::regclass), false, 'freshness is not met');
SELECT is((SELECT downstream_freshness_met FROM materialized_table.lineage
            WHERE downstream = 'tap_lag.cont'::regclass), false, 'the lineage says so too');

-- resumed: it catches up and the lag is zero again
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_lag.cont RESUME') \g /dev/null
SELECT ok(tap_lag.wait_for($$SELECT (SELECT v FROM tap_lag.cont WHERE id = 2) = 3
                                AND tap_lag.lag() = interval '0'$$, 15),
          'resumed, it catches up and its lag is zero');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_lag.cont') \g /dev/null
DROP SCHEMA tap_lag CASCADE;
