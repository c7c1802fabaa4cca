-- Who sees what: a materialized table's row in materialized_tables (its
-- query, options, state) and its refresh history (whose errors may quote
-- data values) show to the roles that may read the table -- its owner, a
-- role granted SELECT on it -- and to members of pg_read_all_stats, as
-- pg_stat_statements shows query texts; nobody else sees them.  The
-- lineage (names and states, no queries or errors) is anyone's to read.
CREATE ROLE vis_owner;
CREATE ROLE vis_reader;
CREATE ROLE vis_stranger;
CREATE ROLE vis_stats IN ROLE pg_read_all_stats;
CREATE SCHEMA vis_s AUTHORIZATION vis_owner;
GRANT USAGE ON SCHEMA vis_s TO PUBLIC;
SET ROLE vis_owner;
CREATE TABLE vis_s.src (id int PRIMARY KEY, secret text);
INSERT INTO vis_s.src VALUES (1, '42');
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE vis_s.t FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
    AS SELECT id, secret::int AS n FROM vis_s.src
$$);
GRANT SELECT ON vis_s.t TO vis_reader;
-- a scheduled refresh fails, its error quoting a value
UPDATE vis_s.src SET secret = 'the password is swordfish';
\set VERBOSITY terse
SELECT materialized_table.scheduled_refresh('vis_s.t', '2024-01-01 01:00:00+00');
\set VERBOSITY default
RESET ROLE;
CREATE FUNCTION vis_s.seen() RETURNS TABLE (tables bigint, history bigint, errors bigint, lineage bigint)
LANGUAGE sql AS $$
  SELECT (SELECT count(*) FROM materialized_table.materialized_tables m
           WHERE m.table_name = 'vis_s.t'::regclass),
         (SELECT count(*) FROM materialized_table.refresh_history h
           WHERE h.table_name = 'vis_s.t'::regclass),
         (SELECT count(*) FROM materialized_table.refresh_history h
           WHERE h.error LIKE '%swordfish%'),
         (SELECT count(*) FROM materialized_table.lineage l
           WHERE l.downstream = 'vis_s.t'::regclass)
$$;
SELECT 'superuser' AS who, * FROM vis_s.seen();
SET ROLE vis_owner;
SELECT 'owner' AS who, * FROM vis_s.seen();
SET ROLE vis_reader;
SELECT 'reader' AS who, * FROM vis_s.seen();
SET ROLE vis_stats;
SELECT 'pg_read_all_stats' AS who, * FROM vis_s.seen();
SET ROLE vis_stranger;
SELECT 'stranger' AS who, * FROM vis_s.seen();
RESET ROLE;
-- the grant taken back, the reader is a stranger
REVOKE SELECT ON vis_s.t FROM vis_reader;
SET ROLE vis_reader;
SELECT 'former reader' AS who, * FROM vis_s.seen();
RESET ROLE;

SET ROLE vis_owner;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE vis_s.t');
RESET ROLE;
DROP SCHEMA vis_s CASCADE;
DROP ROLE vis_owner;
DROP ROLE vis_reader;
DROP ROLE vis_stranger;
DROP ROLE vis_stats;
