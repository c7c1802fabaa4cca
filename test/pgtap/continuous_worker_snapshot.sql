-- The worker's snapshots hold back the removal of row versions like any
-- session's.  It decodes in its own process, and PostgreSQL lets the
-- horizons ignore a process that decodes outside a transaction (as a
-- walsender does, whose only xmin is the slot's); the worker also reads
-- and writes tables in transactions, and if its snapshots were ignored,
-- pruning elsewhere could remove row versions they still see -- the
-- worker's updates then broke HOT chains of its own state table (an
-- autovacuum looping forever in heap_page_prune, rows the index no
-- longer finds, duplicate key errors on UPDATE).
--
-- The worker is held inside a cycle (it recomputes a table whose query
-- sleeps on demand), a row is updated and its table vacuumed: the old
-- version must stay, the worker's snapshot predates the update.
--
-- Not wrapped in a transaction; the file cleans up after itself.
\set schema tap_cw
\ir ../lib/tap_helpers.sql
SET search_path = tap_cw, public;

CREATE TABLE src (id int PRIMARY KEY, v int);
INSERT INTO src VALUES (1, 1);
CREATE TABLE victim (id int PRIMARY KEY, v int) WITH (autovacuum_enabled = off);
INSERT INTO victim VALUES (1, 1);
CREATE TABLE control (seconds float);
INSERT INTO control VALUES (0);
-- sleeps as long as control says: a query made slow on demand
CREATE FUNCTION nap() RETURNS int LANGUAGE sql VOLATILE
AS $$ SELECT 1 FROM pg_sleep((SELECT seconds FROM tap_cw.control)) $$;

SELECT plan(5);

-- a volatile function makes the table recomputed every freshness period
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_cw.polled FRESHNESS = INTERVAL '1' SECOND AS
    SELECT count(*) AS n, tap_cw.nap() AS napped FROM tap_cw.src$$) \g /dev/null
SELECT isnt(wait_for($$SELECT synced FROM materialized_table_internal.continuous_state
                        WHERE relid = 'tap_cw.polled'::regclass$$, 20),
            NULL, 'the worker takes the table up');

UPDATE control SET seconds = 4;
SELECT isnt(wait_for($$SELECT wait_event = 'PgSleep' FROM pg_stat_activity
                        WHERE pid = tap_cw.worker_pid()$$, 10),
            NULL, 'the worker is inside a cycle, recomputing the slow table');
SELECT ok(backend_xmin IS NOT NULL, 'with a snapshot') FROM pg_stat_activity WHERE pid = worker_pid();

UPDATE victim SET v = 2;
VACUUM victim;
SELECT pg_stat_clear_snapshot() \g /dev/null
SELECT is(n_dead_tup, 1::bigint, 'VACUUM keeps the row version the worker''s snapshot may still see')
  FROM pg_stat_user_tables WHERE relid = 'victim'::regclass;

UPDATE control SET seconds = 0;
SELECT isnt(wait_for($$SELECT NOT EXISTS (SELECT FROM pg_stat_activity
                                           WHERE pid = tap_cw.worker_pid() AND wait_event = 'PgSleep')$$, 10),
            NULL, 'the worker goes on');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_cw.polled') \g /dev/null
RESET search_path;
DROP SCHEMA tap_cw CASCADE;
