-- CONTINUOUS tables keyed by expressions over one source's columns: GROUP
-- BY date_trunc('hour', ts) and x % 10 with aggregates deltas do not keep
-- (string_agg, count(DISTINCT)), DISTINCT lower(name), and a join whose
-- other source's changes name the expression's rows by a lookup.  Each
-- table holds exactly its query's rows after changes that move rows
-- between keys, its cycles by keys (each cycle's strategy in
-- refresh_history); a key whose computation fails (a division by zero in
-- an old row's key) recomputes the table instead, and a TRUNCATE, which
-- recomputes, shows that a recompute would be seen.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_expr_keys
\set with_cycles
\ir ../lib/tap_helpers.sql
SET search_path = tap_expr_keys, public;

CREATE TABLE events (id int PRIMARY KEY, ts timestamp NOT NULL, name text, x int NOT NULL,
                     d int NOT NULL, account_id int NOT NULL);
CREATE TABLE accounts (id int PRIMARY KEY, label text NOT NULL);
INSERT INTO accounts SELECT i, 'Label ' || (i % 7) FROM generate_series(1, 40) i;
INSERT INTO events
  SELECT i, timestamp '2026-01-01' + i * interval '13 minutes', CASE WHEN i % 19 = 0 THEN NULL ELSE 'Ev' || (i % 11) END,
         i, 1 + i % 5, 1 + i % 40
    FROM generate_series(1, 4000) i;

SELECT plan(13);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_expr_keys.hourly FRESHNESS = INTERVAL '1' SECOND AS
    SELECT date_trunc('hour', ts) AS hour, string_agg(name, ',' ORDER BY id) AS names,
           count(DISTINCT name) AS kinds
      FROM tap_expr_keys.events GROUP BY date_trunc('hour', ts);
  CREATE MATERIALIZED TABLE tap_expr_keys.buckets FRESHNESS = INTERVAL '1' SECOND AS
    SELECT x % 10 AS bucket, count(DISTINCT name) AS kinds, bool_and(name IS NOT NULL) AS named
      FROM tap_expr_keys.events GROUP BY x % 10;
  CREATE MATERIALIZED TABLE tap_expr_keys.names FRESHNESS = INTERVAL '1' SECOND AS
    SELECT DISTINCT lower(name) AS lname FROM tap_expr_keys.events;
  CREATE MATERIALIZED TABLE tap_expr_keys.by_label FRESHNESS = INTERVAL '1' SECOND AS
    SELECT lower(a.label) AS label, string_agg(e.id::text, ',' ORDER BY e.id) AS ids
      FROM tap_expr_keys.events e JOIN tap_expr_keys.accounts a ON a.id = e.account_id
     WHERE e.id % 9 = 0 GROUP BY lower(a.label);
  CREATE MATERIALIZED TABLE tap_expr_keys.ratios FRESHNESS = INTERVAL '1' SECOND AS
    SELECT 60 / d AS per, count(DISTINCT name) AS kinds FROM tap_expr_keys.events GROUP BY 60 / d
$m$)$$, 'the tables are created');
SELECT is((SELECT array_agg(t.maintenance || '/' || s.strategy ORDER BY t.table_name::text)
             FROM materialized_table.materialized_tables t
             JOIN materialized_table_internal.continuous_state s ON s.relid = t.table_name
            WHERE t.table_name IN (SELECT table_name FROM mine)),
          array_fill('INCREMENTAL/KEYS'::text, ARRAY[5]), 'each is kept by keys');
SELECT is((SELECT maintenance_detail FROM materialized_table.materialized_tables WHERE table_name = 'hourly'::regclass),
          'rows are recomputed for the changed values of hour', 'maintenance_detail names the expression''s column');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN (SELECT table_name FROM tap_expr_keys.mine)$$, 30),
            NULL, 'the worker takes them up');
SELECT isnt(converged(20), NULL, 'every table equals its query');
INSERT INTO mark SELECT clock_timestamp();

-- rows move between hours, buckets and names; new names; rows go
UPDATE events SET ts = ts + interval '5 hours' WHERE id % 23 = 0;
UPDATE events SET x = x + 3, name = 'EV' || (id % 4) WHERE id % 31 = 0;
INSERT INTO events VALUES (5001, '2026-03-01 10:30', 'Brand new', 7, 3, 1), (5002, '2026-03-01 10:45', NULL, 8, 2, 2);
DELETE FROM events WHERE id % 37 = 0;
SELECT isnt(converged(20), NULL, 'after changes of events every table equals its query');
-- a label changes: the lookup through the join names its rows
UPDATE accounts SET label = 'LABEL 3' WHERE id IN (5, 12);
SELECT isnt(converged(20), NULL, 'after a change of the joined table every table equals its query');

SELECT is(cycles('FULL'), 0::bigint, 'no table was recomputed whole');
SELECT cmp_ok(cycles('KEYS'), '>=', 6::bigint, 'the tables applied their changes by keys');

-- a key that cannot be computed: the table is recomputed, and right
INSERT INTO mark SELECT clock_timestamp();
UPDATE events SET d = 0 WHERE id = 10;
DELETE FROM events WHERE id = 10;
SELECT isnt(converged(20), NULL, 'after a change whose old key fails every table equals its query');
SELECT is(cycles_of('ratios', 'FULL'), 1::bigint, 'the table whose key failed was recomputed once');

-- positive control: a TRUNCATE recomputes, and says so
DELETE FROM mark;
INSERT INTO mark SELECT clock_timestamp();
TRUNCATE events;
INSERT INTO events VALUES (1, '2026-01-01', 'One', 1, 1, 1);
SELECT isnt(converged(20), NULL, 'after a TRUNCATE and new rows the tables follow');
SELECT cmp_ok(cycles('FULL'), '>', 0::bigint, 'a recompute would have been seen');

SELECT * FROM finish();
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM mine \g /dev/null
DROP SCHEMA tap_expr_keys CASCADE;
