-- 00_smoke.sql: pgTAP smoke test -- the extension's objects exist and a
-- materialized table behaves like a read-only table that refreshes.
-- Runs outside a transaction (see test/run.sh): it drops what it creates.
SET client_min_messages = warning;
SELECT plan(9);

SELECT has_schema('materialized_table');
SELECT has_function('materialized_table', 'execute', ARRAY['text']);
SELECT has_view('materialized_table', 'materialized_tables', 'view materialized_tables');
SELECT has_view('materialized_table', 'refresh_history', 'view refresh_history');

CREATE TABLE tap_smoke_src (k int, v int);
INSERT INTO tap_smoke_src SELECT i % 2, i FROM generate_series(1, 6) i;

SELECT lives_ok($$SELECT materialized_table.execute(
    'CREATE MATERIALIZED TABLE tap_smoke FRESHNESS = INTERVAL ''1'' HOUR
       AS SELECT k, sum(v) AS total FROM tap_smoke_src GROUP BY k')$$,
    'CREATE MATERIALIZED TABLE');
SELECT results_eq('SELECT k, total FROM tap_smoke ORDER BY k',
                  $$VALUES (0, 12::bigint), (1, 9::bigint)$$,
                  'the table holds the query result after CREATE');
SELECT throws_ok('INSERT INTO tap_smoke VALUES (5, 5)', '42809', NULL,
                 'hand-written INSERT is refused');

INSERT INTO tap_smoke_src VALUES (1, 100);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE tap_smoke REFRESH');
SELECT results_eq('SELECT k, total FROM tap_smoke ORDER BY k',
                  $$VALUES (0, 12::bigint), (1, 109::bigint)$$,
                  'REFRESH recomputes the content');

SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_smoke');
SELECT is((SELECT count(*) FROM materialized_table.materialized_tables
            WHERE table_name::text = 'tap_smoke'), 0::bigint,
          'DROP removes the catalog row');
DROP TABLE tap_smoke_src;

SELECT * FROM finish();
