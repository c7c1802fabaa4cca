-- Sources with row level security: decoded rows know nothing of the
-- policies the query applies as the table's owner, so a table reading such
-- a source is recomputed (through its query, policies and all) instead of
-- adjusted by decoded rows, which would count rows its owner may not see.
-- Turning row level security on later switches the table in the ALTER's
-- transaction; a policy created or dropped makes it recompute.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself (roles included).
\set schema tap_rs
\ir ../lib/tap_helpers.sql
SET search_path = tap_rs, public;
DROP ROLE IF EXISTS tap_rs_owner;
CREATE ROLE tap_rs_owner;
GRANT ALL ON SCHEMA tap_rs TO tap_rs_owner;

CREATE TABLE src (id int PRIMARY KEY, grp int NOT NULL, v int NOT NULL);
INSERT INTO src SELECT i, i % 5, i % 100 FROM generate_series(1, 1000) i;
ALTER TABLE src REPLICA IDENTITY FULL;
GRANT SELECT ON src TO tap_rs_owner;
CREATE POLICY small ON src FOR SELECT TO tap_rs_owner USING (v < 50);

SELECT plan(8);

SET ROLE tap_rs_owner;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_rs.s FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_rs.src GROUP BY grp$$) \g /dev/null
RESET ROLE;
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the table up');
SELECT is((SELECT maintenance FROM materialized_table.materialized_tables WHERE table_name = 's'::regclass),
          'INCREMENTAL', 'without row level security it is maintained incrementally');

ALTER TABLE src ENABLE ROW LEVEL SECURITY;
SELECT is((SELECT maintenance || ': ' || maintenance_detail FROM materialized_table.materialized_tables
            WHERE table_name = 's'::regclass),
          'FULL_RECOMPUTE: the query reads a table with row level security',
          'turning row level security on switches it to recomputes');
SELECT is((SELECT sum(n) FROM s), 500::numeric, 'and it holds only the rows its owner may see');
INSERT INTO src SELECT i, i % 5, i % 100 FROM generate_series(1001, 1100) i;
SELECT isnt(converged(10), NULL, 'inserts show as its owner sees them');

DROP POLICY small ON src;
CREATE POLICY smaller ON src FOR SELECT TO tap_rs_owner USING (v < 10);
SELECT isnt(wait_for($$SELECT sum(n) = 110 FROM tap_rs.s$$, 10), NULL,
            'a new policy shows without a change to the rows');
SELECT is(mismatches('s'), 0::bigint, 'the table equals its query');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_rs.s') \g /dev/null
RESET search_path;
DROP SCHEMA tap_rs CASCADE;
DROP OWNED BY tap_rs_owner;
DROP ROLE tap_rs_owner;
