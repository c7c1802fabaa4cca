-- min() and max() kept by deltas: an added value is folded in by
-- comparison, a removed one beyond the kept extremum changes nothing, and a
-- removed one that may have been the extremum makes its group (the table,
-- for a global aggregate) be re-read from the sources in that cycle.
-- Global and grouped, over int, numeric (of no declared scale and of one),
-- text (default collation and "C"), timestamptz, with NULLs, and through a
-- join; then the shapes still left to the other strategies.  Each step is
-- checked against the query (EXCEPT ALL both ways) and by the strategy of
-- its cycles (refresh_history.strategy).  A source whose WHERE calls seen(),
-- which counts its calls, shows how many rows a cycle read: a group re-read
-- reads that group's rows, an adjustment only the changed rows.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_mm
\ir ../lib/tap_helpers.sql
SET search_path = tap_mm, public;
SET TimeZone = 'UTC';

CREATE TABLE t (id int PRIMARY KEY, g int, i int, n numeric, nf numeric(8,2), s text,
                sc text COLLATE "C", ts timestamptz);
-- groups 0 - 9; the global extrema in rows 1 and 2 (i 0 and 1000, ...)
INSERT INTO t SELECT k, k % 10, 100 + k, 10 + k * 0.5, 20 + k * 0.25,
                     'm' || lpad(k::text, 3, '0'), 'M' || lpad(k::text, 3, '0'),
                     '2024-06-01 00:00+00'::timestamptz + k * interval '1 hour'
                FROM generate_series(3, 200) k;
INSERT INTO t VALUES (1, 1, 0, 0.5, 0.25, 'a', 'A', '2024-01-01 00:00+00'),
                     (2, 2, 1000, 999.5, 999.25, 'z', 'z', '2025-01-01 00:00+00'),
                     -- a group whose values are all NULL
                     (201, 11, NULL, NULL, NULL, NULL, NULL, NULL),
                     (202, 11, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE TABLE dim (id int PRIMARY KEY, region text NOT NULL);
INSERT INTO dim SELECT k, CASE WHEN k < 5 THEN 'north' ELSE 'south' END FROM generate_series(0, 11) k;

-- the counted source: 20 groups of 50 rows
-- (the worker's reads only: not this session's comparisons with the query)
CREATE SEQUENCE reads;
CREATE TABLE tester (pid int);
INSERT INTO tester VALUES (pg_backend_pid());
CREATE FUNCTION seen(int) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS
  $$BEGIN
      RETURN pg_backend_pid() = (SELECT pid FROM tap_mm.tester) OR nextval('tap_mm.reads') > 0;
    END$$;
CREATE TABLE c (id int PRIMARY KEY, g int NOT NULL, x int);
CREATE INDEX ON c (g);
INSERT INTO c SELECT k, k % 20, k FROM generate_series(1, 1000) k;
ANALYZE t, dim, c;

-- the strategies of a table's cycles since the mark
CREATE TEMP TABLE mark (at timestamptz, reads bigint);
CREATE FUNCTION cycles_since(t text) RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(string_agg(DISTINCT h.strategy, ','), '')
      FROM materialized_table.refresh_history h
     WHERE h.table_name = to_regclass(t) AND h.trigger = 'CONTINUOUS'
       AND h.started_at > (SELECT at FROM mark) AND h.status = 'SUCCEEDED' $$;
-- the rows written by those cycles
CREATE FUNCTION rows_since(t text) RETURNS bigint LANGUAGE sql AS $$
    SELECT coalesce(sum(h.rows), 0)::bigint FROM materialized_table.refresh_history h
     WHERE h.table_name = to_regclass(t) AND h.trigger = 'CONTINUOUS'
       AND h.started_at > (SELECT at FROM mark) AND h.status = 'SUCCEEDED' $$;
-- the rows of c the worker read since the mark
CREATE FUNCTION reads_since() RETURNS bigint LANGUAGE sql AS $$
    SELECT last_value - (SELECT reads FROM mark) FROM tap_mm.reads $$;
CREATE PROCEDURE step(sql text) LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM mark;
    INSERT INTO mark SELECT clock_timestamp(), last_value FROM tap_mm.reads;
    COMMIT;
    EXECUTE sql;
    COMMIT;
END $$;
-- every table of the schema equals its query
CREATE FUNCTION all_equal() RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(string_agg(t.table_name::text || ': ' || mismatches(t.table_name), ', '), '')
      FROM materialized_table.materialized_tables t
      JOIN pg_class k ON k.oid = t.table_name
     WHERE k.relnamespace = 'tap_mm'::regnamespace AND mismatches(t.table_name) <> 0 $$;

SELECT plan(72);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_mm.glob FRESHNESS = INTERVAL '1' SECOND AS
    SELECT count(*) AS c, min(i) AS min_i, max(i) AS max_i,
           min(nf) AS min_nf, max(nf) AS max_nf, min(s) AS min_s, max(s) AS max_s,
           min(sc) AS min_sc, max(sc) AS max_sc, min(ts) AS min_ts, max(ts) AS max_ts,
           sum(i) AS sum_i, avg(nf) AS avg_nf
      FROM tap_mm.t$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_mm.grp FRESHNESS = INTERVAL '1' SECOND AS
    SELECT g, count(*) AS c, min(i) AS min_i, max(i) AS max_i, min(nf) AS min_nf, max(nf) AS max_nf,
           min(s) AS min_s, max(s) AS max_s, min(sc) AS min_sc, max(sc) AS max_sc,
           min(ts) AS min_ts, max(ts) AS max_ts, max(i) FILTER (WHERE id % 2 = 0) AS max_even,
           max(i) - min(i) AS spread
      FROM tap_mm.t GROUP BY g$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_mm.by_region FRESHNESS = INTERVAL '1' SECOND AS
    SELECT d.region, count(*) AS c, min(t.i) AS min_i, max(t.s) AS max_s, min(t.ts) AS min_ts
      FROM tap_mm.t JOIN tap_mm.dim d ON d.id = t.g GROUP BY d.region$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_mm.counted FRESHNESS = INTERVAL '1' SECOND AS
    SELECT g, min(x) AS mn, max(x) AS mx, count(*) AS n FROM tap_mm.c WHERE tap_mm.seen(g)
     GROUP BY g$$) \g /dev/null
-- controls: aggregates still left to keys and full recomputes
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_mm.ctl_keys FRESHNESS = INTERVAL '1' SECOND AS
    SELECT g, min(i) AS min_i, string_agg(s, ',' ORDER BY s) AS ss FROM tap_mm.t GROUP BY g$$) \g /dev/null
-- a numeric of no declared scale: of equal values (1.0, 1.00) the query
-- gives the one it reads last, which the kept one need not be
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_mm.ctl_scale FRESHNESS = INTERVAL '1' SECOND AS
    SELECT g, max(n) AS max_n, count(*) AS c FROM tap_mm.t GROUP BY g$$) \g /dev/null
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_mm.ctl_full FRESHNESS = INTERVAL '1' SECOND AS
    SELECT min(i) AS min_i, max(DISTINCT s) AS max_s, count(*) AS c FROM tap_mm.t$$) \g /dev/null

SELECT isnt(wait_for($$SELECT bool_and(s.synced)
                          FROM materialized_table_internal.continuous_state s
                          JOIN pg_class c ON c.oid = s.relid
                         WHERE c.relnamespace = 'tap_mm'::regnamespace
                        HAVING count(*) = 7$$, 30), NULL,
            'the worker takes the tables up');
SELECT is(maintenance || ': ' || maintenance_detail,
          'INCREMENTAL: count, sum, avg, min and max of all rows are kept and adjusted by each changed row when the table is applied; the table is recomputed when a changed row removes the value of a min or max',
          'a global min and max: kept by deltas')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_mm.glob'::regclass;
SELECT is(maintenance || ': ' || maintenance_detail,
          'INCREMENTAL: count, sum, avg, min and max per group are kept and adjusted by each changed row when the table is applied; a group is re-read from the sources when a changed row removes the value of its min or max',
          'a grouped min and max: kept by deltas')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_mm.grp'::regclass;
SELECT matches(maintenance_detail, '^count, sum, avg, min and max per group are kept and adjusted by each changed row of t and of dim, joined with the other sources.*; a group is re-read from the sources when a changed row removes the value of its min or max$',
               'through a join: kept by deltas')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_mm.by_region'::regclass;
SELECT is(s.strategy, 'DELTAS', 'counted: kept by deltas')
  FROM materialized_table_internal.continuous_state s WHERE s.relid = 'tap_mm.counted'::regclass;
SELECT is(maintenance_detail, 'rows are recomputed for the changed values of g',
          'string_agg beside a min (control): by keys, as before')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_mm.ctl_keys'::regclass;
SELECT is(maintenance_detail, 'rows are recomputed for the changed values of g',
          'max of a numeric of no declared scale: by keys')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_mm.ctl_scale'::regclass;
SELECT is(maintenance_detail, 'the rows it aggregates are kept in a hidden table, recomputed for the changed values of i, s, and the table is computed from them',
          'a global max(DISTINCT) (control): not by deltas, but over its rows kept by keys')
  FROM materialized_table.materialized_tables WHERE table_name = 'tap_mm.ctl_full'::regclass;
SELECT is(all_equal(), '', 'every table equals its query');

-- inserts below a group's min and above its max, and between; NULLs
CALL step($$INSERT INTO t VALUES
             (301, 3, 50, 5.25, 5.5, 'b', 'B', '2024-02-01 00:00+00'),
             (302, 3, 900, 900.125, 900.5, 'y', 'y', '2024-12-01 00:00+00'),
             (303, 4, 150, 50, 50, 'm150', 'M150', '2024-06-05 00:00+00'),
             (304, 4, NULL, NULL, NULL, NULL, NULL, NULL),
             (305, 11, NULL, NULL, NULL, NULL, NULL, NULL),
             -- equal values of n, of two scales (found by the differential
             -- test, seed 21 q0186: max() kept 0.00 where the query gave 0.0)
             (401, 12, 7, 900.125, 9.5, 'q', 'q', '2024-12-01 00:00+00'),
             (402, 12, 8, 900.1250, 9.5, 'q', 'q', '2024-12-01 00:00+00')$$);
SELECT isnt(converged(20), NULL, 'inserts: converged');
SELECT is(all_equal(), '', 'every table equals its query');
SELECT is(cycles_since('tap_mm.glob'), 'DELTAS', 'glob: by deltas');
SELECT is(cycles_since('tap_mm.grp'), 'DELTAS', 'grp: by deltas');
SELECT is(cycles_since('tap_mm.by_region'), 'DELTAS', 'by_region: by deltas');
SELECT is((SELECT row(min_i, max_i, min_s, max_sc)::text FROM grp WHERE g = 3), '(50,900,b,y)',
          'group 3 has its new extrema');
SELECT is((SELECT row(c, min_i, max_s)::text FROM grp WHERE g = 11), '(3,,)',
          'a group of NULLs: its min and max are NULL');

-- deletes of values beyond the extrema: nothing to re-read
CALL step($$DELETE FROM t WHERE id IN (13, 24, 303)$$);
SELECT isnt(converged(20), NULL, 'deletes of values between the extrema: converged');
SELECT is(all_equal(), '', 'every table equals its query');
SELECT is(cycles_since('tap_mm.glob'), 'DELTAS', 'glob: by deltas, not recomputed');
SELECT is(cycles_since('tap_mm.grp'), 'DELTAS', 'grp: by deltas');
SELECT is(cycles_since('tap_mm.by_region'), 'DELTAS', 'by_region: by deltas');
CALL step($$DELETE FROM c WHERE id = 505$$);
SELECT isnt(converged(20), NULL, 'counted: a value between the extrema deleted: converged');
SELECT is(cycles_since('tap_mm.counted'), 'DELTAS', 'counted: by deltas');
SELECT is(reads_since(), 1::bigint, 'counted: only the deleted row was read (no group re-read)');

-- deletes of a group's extremum (not the table's): that group is re-read
CALL step($$DELETE FROM t WHERE id IN (301, 302)$$);
SELECT isnt(converged(20), NULL, 'group 3''s extrema deleted: converged');
SELECT is(all_equal(), '', 'every table equals its query');
SELECT is(cycles_since('tap_mm.grp'), 'DELTAS', 'grp: by deltas, the group re-read');
SELECT is(rows_since('tap_mm.grp'), 2::bigint, 'grp: one row rewritten (deleted, inserted)');
SELECT is((SELECT row(min_i, max_i, min_s, max_sc)::text FROM grp WHERE g = 3), '(103,293,m003,M193)',
          'group 3 has its next extrema');
SELECT is(cycles_since('tap_mm.glob'), 'DELTAS', 'glob: by deltas (no global extremum went)');
SELECT is(cycles_since('tap_mm.by_region'), 'DELTAS', 'by_region: by deltas');
CALL step($$DELETE FROM c WHERE id = 7$$);
SELECT isnt(converged(20), NULL, 'counted: a group''s min deleted: converged');
SELECT is(cycles_since('tap_mm.counted'), 'DELTAS', 'counted: by deltas');
SELECT cmp_ok(reads_since(), '<=', 52::bigint,
              'counted: that group''s rows read (49 and the deleted one), not the table''s 999');
SELECT cmp_ok(reads_since(), '>=', 49::bigint, 'counted: the group was re-read');
SELECT is((SELECT mn FROM counted WHERE g = 7), 27, 'counted: the group''s next min');

-- the extremum deleted with a duplicate of it left, then the duplicate
CALL step($$INSERT INTO t VALUES (306, 5, 105, 12.5, 21.25, 'm005', 'M005', '2024-06-01 05:00+00')$$);
SELECT isnt(converged(20), NULL, 'a duplicate of group 5''s min: converged');
CALL step($$DELETE FROM t WHERE id = 5$$);
SELECT isnt(converged(20), NULL, 'the min deleted, its duplicate left: converged');
SELECT is(all_equal(), '', 'every table equals its query');
SELECT is(cycles_since('tap_mm.grp'), 'DELTAS', 'grp: by deltas');
SELECT is((SELECT row(c, min_i, min_s, min_ts)::text FROM grp WHERE g = 5),
          '(20,105,m005,"2024-06-01 05:00:00+00")', 'group 5 keeps the duplicate as its min');
CALL step($$DELETE FROM t WHERE id = 306$$);
SELECT isnt(converged(20), NULL, 'the duplicate deleted: converged');
SELECT is(all_equal(), '', 'every table equals its query');
SELECT is((SELECT min_i FROM grp WHERE g = 5), 115, 'group 5''s next min');

-- updates moving the extremum: one row becomes the min, the old min moves up
CALL step($$UPDATE t SET i = 99, s = 'l', ts = '2024-05-01 00:00+00' WHERE id = 196;
            UPDATE t SET i = 500, s = 'n' WHERE id = 6$$);
SELECT isnt(converged(20), NULL, 'updates moving group 6''s extrema: converged');
SELECT is(all_equal(), '', 'every table equals its query');
SELECT is(cycles_since('tap_mm.grp'), 'DELTAS', 'grp: by deltas');
SELECT is((SELECT row(min_i, max_i, min_s, max_s)::text FROM grp WHERE g = 6), '(99,500,l,n)',
          'group 6''s new extrema');
-- a row moved to another group, taking a value beyond the extremum of both
CALL step($$UPDATE t SET g = 7 WHERE id = 16$$);
SELECT isnt(converged(20), NULL, 'a row moved to another group: converged');
SELECT is(all_equal(), '', 'every table equals its query');

-- every row of a group deleted, then new ones
CALL step($$DELETE FROM t WHERE g = 8$$);
SELECT isnt(converged(20), NULL, 'group 8 deleted: converged');
SELECT is((SELECT count(*) FROM grp WHERE g = 8), 0::bigint, 'group 8 is gone');
CALL step($$INSERT INTO t VALUES (308, 8, 7, 7, 7, 'q', 'Q', '2024-03-01 00:00+00'),
                                 (309, 8, 3, 3, 3, 'r', 'R', '2024-03-02 00:00+00')$$);
SELECT isnt(converged(20), NULL, 'group 8 back: converged');
SELECT is(all_equal(), '', 'every table equals its query');
SELECT is((SELECT row(c, min_i, max_i, min_s)::text FROM grp WHERE g = 8), '(2,3,7,q)',
          'group 8 has its new rows'' extrema');
-- a NULL group's values come and go
CALL step($$UPDATE t SET i = 5 WHERE id = 201$$);
SELECT isnt(converged(20), NULL, 'a value in the NULL group: converged');
CALL step($$UPDATE t SET i = NULL WHERE id = 201$$);
SELECT isnt(converged(20), NULL, 'and NULL again: converged');
SELECT is((SELECT row(c, min_i, max_i)::text FROM grp WHERE g = 11), '(3,,)',
          'the group''s min and max are NULL again');

-- the table's extremum deleted: a global aggregate is recomputed
CALL step($$DELETE FROM t WHERE id = 1$$);
SELECT isnt(converged(20), NULL, 'the global min deleted: converged');
SELECT is(all_equal(), '', 'every table equals its query');
SELECT is(cycles_since('tap_mm.glob'), 'FULL', 'glob: recomputed');
SELECT is(cycles_since('tap_mm.grp'), 'DELTAS', 'grp: by deltas, its group re-read');
SELECT is((SELECT row(min_i, min_s, min_sc)::text FROM glob), '(3,l,M003)', 'glob''s next min');

-- through the join: a dimension moves groups to another region, facts go
CALL step($$UPDATE dim SET region = 'north' WHERE id = 9;
            DELETE FROM t WHERE id = 9$$);
SELECT isnt(converged(20), NULL, 'a dimension changed, a fact deleted: converged');
SELECT is(all_equal(), '', 'every table equals its query');

-- TRUNCATE: recomputed; a global aggregate of no rows is one row
CALL step($$TRUNCATE t$$);
SELECT isnt(converged(20), NULL, 'TRUNCATE: converged');
SELECT is((SELECT row(c, min_i, max_s, min_ts)::text FROM glob), '(0,,,)',
          'glob: one row of count 0, its min and max NULL');
SELECT is((SELECT count(*) FROM grp), 0::bigint, 'grp is empty');
CALL step($$INSERT INTO t VALUES (1, 1, 10, 1, 1, 'k', 'K', '2024-01-01 00:00+00')$$);
SELECT isnt(converged(20), NULL, 'a row after TRUNCATE: converged');
SELECT is(cycles_since('tap_mm.glob'), 'DELTAS', 'glob: by deltas again');
SELECT is(all_equal(), '', 'every table equals its query');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_mm.' || t) FROM unnest(ARRAY['glob', 'grp', 'by_region', 'counted', 'ctl_keys', 'ctl_full']) t \g /dev/null
RESET search_path;
DROP SCHEMA tap_mm CASCADE;
