-- Sources with values stored out of line (TOAST): an update that leaves
-- such a value as it is does not write it again, and decoding gives only a
-- pointer to it.  Tables that show the value, aggregate it, or filter on it
-- converge all the same, through updates of other columns, updates of the
-- value itself, deletes and inserts.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_tt
\ir ../lib/tap_helpers.sql
SET search_path = tap_tt, public;

-- incompressible 6,400-character documents, stored out of line
CREATE TABLE docs (id int PRIMARY KEY, grp int NOT NULL, tag text, doc text NOT NULL);
INSERT INTO docs
SELECT i, i % 5, 't' || (i % 3), (SELECT string_agg(md5(i::text || g::text), '') FROM generate_series(1, 200) g)
  FROM generate_series(1, 300) i;

SELECT plan(6);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_tt.shown FRESHNESS = INTERVAL '1' SECOND AS
    SELECT id, grp, doc FROM tap_tt.docs WHERE grp <> 4;
  CREATE MATERIALIZED TABLE tap_tt.measured FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(length(doc)) AS chars, max(doc) AS top FROM tap_tt.docs GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_tt.filtered FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(id) AS ids FROM tap_tt.docs WHERE doc LIKE '%ab%' GROUP BY grp;
  CREATE MATERIALIZED TABLE tap_tt.tagged FRESHNESS = INTERVAL '1' SECOND AS
    SELECT tag, count(*) AS n FROM tap_tt.docs GROUP BY tag$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the tables up');
SELECT ok((SELECT pg_column_size(doc) FROM docs WHERE id = 1) >= 6400
          AND (SELECT reltoastrelid <> 0 FROM pg_class WHERE oid = 'docs'::regclass),
          'the documents are stored out of line, uncompressed');

-- the documents stay as they are
UPDATE docs SET grp = (grp + 1) % 5 WHERE id % 7 = 0;
UPDATE docs SET tag = NULL WHERE id % 11 = 0;
DELETE FROM docs WHERE id % 13 = 0;
-- the documents change
UPDATE docs SET doc = doc || 'x' WHERE id % 17 = 0;
INSERT INTO docs
SELECT i, i % 5, 'new', (SELECT string_agg(md5(i::text || g::text), '') FROM generate_series(1, 150) g)
  FROM generate_series(1001, 1020) i;

SELECT isnt(converged(20), NULL, 'the tables converge');
SELECT is(mismatches('shown') + mismatches('measured'), 0::bigint,
          'tables showing and aggregating the documents equal their queries');
SELECT is(mismatches('filtered') + mismatches('tagged'), 0::bigint,
          'tables filtering on them or ignoring them equal their queries');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_tt.shown; DROP MATERIALIZED TABLE tap_tt.measured;
  DROP MATERIALIZED TABLE tap_tt.filtered; DROP MATERIALIZED TABLE tap_tt.tagged') \g /dev/null
RESET search_path;
DROP SCHEMA tap_tt CASCADE;
