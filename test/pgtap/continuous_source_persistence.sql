-- A source set UNLOGGED after its tables were created: its changes are no
-- longer in the WAL.  The CONTINUOUS tables reading it switch, in the
-- ALTER's transaction, to the pipeline their query now calls for (a
-- recompute each cycle, said in maintenance), and back to incremental
-- maintenance when it is set LOGGED again; a ROLLBACK switches nothing
-- (its recomputes show in the history as rolled back).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_ul
\set with_src
\ir ../lib/tap_helpers.sql
SET search_path = tap_ul, public;

SELECT plan(8);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_ul.s FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_ul.src GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_ul.k FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, max(v) AS top FROM tap_ul.src GROUP BY grp$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the tables up');
CREATE VIEW kinds AS
SELECT string_agg(maintenance, ', ' ORDER BY table_name::text) AS kinds
  FROM materialized_table.materialized_tables t JOIN pg_class c ON c.oid = t.table_name
 WHERE c.relnamespace = 'tap_ul'::regnamespace;

BEGIN;
ALTER TABLE src SET UNLOGGED;
ROLLBACK;
SELECT is((SELECT kinds FROM kinds), 'INCREMENTAL, INCREMENTAL', 'a SET UNLOGGED rolled back switches nothing');

ALTER TABLE src SET UNLOGGED;
SELECT is((SELECT kinds FROM kinds), 'FULL_RECOMPUTE, FULL_RECOMPUTE', 'an unlogged source is recomputed');
UPDATE src SET v = v + 1 WHERE id < 100;
INSERT INTO src VALUES (99999, 55, 5);
SELECT isnt(converged(10), NULL, 'changes of the unlogged source show');

ALTER TABLE src SET LOGGED;
SELECT is((SELECT kinds FROM kinds), 'INCREMENTAL, INCREMENTAL', 'logged again, the tables are maintained incrementally');
UPDATE src SET v = v + 1 WHERE id < 200;
DELETE FROM src WHERE id BETWEEN 300 AND 320;
SELECT isnt(converged(10), NULL, 'and follow its changes');
SELECT is(mismatches('s') + mismatches('k'), 0::bigint, 'both tables equal their queries');
-- (the recomputes of the SET UNLOGGED rolled back show as FAILED runs)
SELECT is(failed_cycles(), 2::bigint, 'no run failed but the two recomputes rolled back');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_ul.s; DROP MATERIALIZED TABLE tap_ul.k') \g /dev/null
RESET search_path;
DROP SCHEMA tap_ul CASCADE;
