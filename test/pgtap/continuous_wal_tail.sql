-- A committed change is applied within the freshness even when the WAL
-- after it is flushed only in part.  The WAL writer flushes whole pages, so
-- a record can be flushed up to its last page, and the rest waits for its
-- transaction to end when that transaction commits nothing (a long report
-- pruning pages as it reads, or here a logical message outside any
-- transaction, followed by a sleep).  The worker reads the WAL flushed so
-- far and stops before such a record, rather than wait for its tail.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_wt
\set with_src
\ir ../lib/tap_helpers.sql
SET search_path = tap_wt, public;

SELECT plan(5);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_wt.sums FRESHNESS = INTERVAL '1' SECOND AS
    SELECT grp, count(*) AS n, sum(v) AS total FROM tap_wt.src GROUP BY grp$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the table up');

-- Five times: a change, committed asynchronously (which wakes the WAL
-- writer), then, in a transaction that goes on for 3 s, a record larger
-- than the WAL buffers: the WAL writer flushes the record's pages as they
-- are written out, all but its last, which waits for that transaction's
-- end.  The change must show within the freshness all the same.
CREATE TABLE lag (round int, seconds float);
SELECT writer_connect('tap_wt_w') \g /dev/null
SELECT dblink_exec('tap_wt_w', 'SET synchronous_commit = off') \g /dev/null
CREATE FUNCTION round_of(r int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM dblink_exec('tap_wt_w', format('INSERT INTO tap_wt.src VALUES (%s, %s, 1)', 10000 + r, 10000 + r));
    PERFORM dblink_send_query('tap_wt_w',
        'DO $d$ BEGIN '
        '  PERFORM pg_logical_emit_message(false, ''tap_wt'', '
        '    repeat(''x'', 2 * pg_size_bytes(current_setting(''wal_buffers''))::int)); '
        '  PERFORM pg_sleep(3); '
        'END $d$');
    INSERT INTO lag VALUES (r, wait_for(format('SELECT EXISTS (SELECT FROM tap_wt.sums WHERE grp = %s)', 10000 + r), 20));
    PERFORM * FROM dblink_get_result('tap_wt_w') AS t(status text);
    PERFORM * FROM dblink_get_result('tap_wt_w') AS t(status text);
END $$;
SELECT round_of(1) \g /dev/null
SELECT round_of(2) \g /dev/null
SELECT round_of(3) \g /dev/null
SELECT round_of(4) \g /dev/null
SELECT round_of(5) \g /dev/null

SELECT is((SELECT count(*) FROM lag WHERE seconds IS NOT NULL), 5::bigint,
          'each change is applied');
SELECT cmp_ok((SELECT max(seconds) FROM lag), '<', 2::float,
              'each within two seconds (freshness 1 s), without waiting for the record after it');
SELECT diag(format('changes visible after %s s', (SELECT string_agg(seconds::text, ', ' ORDER BY round) FROM lag)));
SELECT is(mismatches('sums'), 0::bigint, 'the table equals its query');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');

SELECT * FROM finish();
SELECT dblink_disconnect('tap_wt_w') \g /dev/null
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_wt.sums') \g /dev/null
RESET search_path;
DROP SCHEMA tap_wt CASCADE;
