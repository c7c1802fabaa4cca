-- CONTINUOUS tables kept by keys through window functions and set
-- operations.  Windows: a result column in the PARTITION BY of every
-- window is a key, and a change recomputes the partitions it names (its
-- row's old and new values) -- rows moving between partitions, partitions
-- emptied and new ones, ranks shifting inside a partition, windows over
-- groups.  UNION [ALL], INTERSECT, EXCEPT ALL: each branch names the
-- result columns by position -- rows entering and leaving one branch,
-- duplicates across branches.  DISTINCT ON (team): the best row of each
-- team that changed; LATERAL unnest grouped by team; IN and EXISTS
-- subqueries (a change of scores names its keys, one of players
-- recomputes the table).  Cycles say KEYS in the history; a window over the
-- whole result, which no change can narrow, says FULL (the positive
-- control).
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_win
\ir ../lib/tap_helpers.sql
SET search_path = tap_win, public;

CREATE TABLE scores (id int PRIMARY KEY, team int NOT NULL, points int NOT NULL, tag text);
INSERT INTO scores SELECT i, i % 12, (i * 37) % 101, 'tag ' || (i % 3) FROM generate_series(1, 3000) i;
CREATE TABLE players (id int PRIMARY KEY, team int NOT NULL, active bool NOT NULL);
INSERT INTO players SELECT i, i % 15, i % 4 > 0 FROM generate_series(1, 400) i;

CREATE VIEW mine AS
  SELECT t.table_name FROM materialized_table.materialized_tables t
    JOIN pg_class c ON c.oid = t.table_name
   WHERE c.relnamespace = 'tap_win'::regnamespace;
CREATE TABLE mark (at timestamptz);
CREATE FUNCTION cycles(t regclass, strategy text) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM materialized_table.refresh_history h
   WHERE h.table_name = t AND h.trigger = 'CONTINUOUS' AND h.rows > 0
     AND h.started_at > (SELECT at FROM tap_win.mark) AND h.strategy = $2
$$;

SELECT plan(11);

SELECT lives_ok($$SELECT materialized_table.execute($m$
  CREATE MATERIALIZED TABLE tap_win.ranked FRESHNESS = INTERVAL '1' SECOND AS
    SELECT id, team, points, rank() OVER (PARTITION BY team ORDER BY points DESC, id) AS r,
           sum(points) OVER (PARTITION BY team, tag ORDER BY id) AS running
      FROM tap_win.scores;
  CREATE MATERIALIZED TABLE tap_win.team_tags FRESHNESS = INTERVAL '1' SECOND AS
    SELECT team, tag, count(*) AS n,
           dense_rank() OVER (PARTITION BY team ORDER BY count(*) DESC, tag) AS r
      FROM tap_win.scores GROUP BY team, tag;
  CREATE MATERIALIZED TABLE tap_win.overall FRESHNESS = INTERVAL '1' SECOND AS
    SELECT id, row_number() OVER (ORDER BY points DESC, id) AS place FROM tap_win.scores;
  CREATE MATERIALIZED TABLE tap_win.teams FRESHNESS = INTERVAL '1' SECOND AS
    SELECT team FROM tap_win.scores WHERE points > 90 UNION SELECT team FROM tap_win.players WHERE NOT active;
  CREATE MATERIALIZED TABLE tap_win.both_ FRESHNESS = INTERVAL '1' SECOND AS
    SELECT team, count(*) AS n FROM tap_win.scores GROUP BY team
    UNION ALL SELECT team, count(*) FROM tap_win.players GROUP BY team;
  CREATE MATERIALIZED TABLE tap_win.common FRESHNESS = INTERVAL '1' SECOND AS
    SELECT id, team FROM tap_win.scores INTERSECT SELECT id, team FROM tap_win.players WHERE active;
  CREATE MATERIALIZED TABLE tap_win.missing FRESHNESS = INTERVAL '1' SECOND AS
    SELECT team FROM tap_win.scores EXCEPT ALL SELECT team FROM tap_win.players;
  CREATE MATERIALIZED TABLE tap_win.best FRESHNESS = INTERVAL '1' SECOND AS
    SELECT DISTINCT ON (team) team, id, points FROM tap_win.scores ORDER BY team, points DESC, id;
  CREATE MATERIALIZED TABLE tap_win.unnested FRESHNESS = INTERVAL '1' SECOND AS
    SELECT s.team, count(*) AS n, sum(x) AS total
      FROM tap_win.scores s, LATERAL unnest(ARRAY[s.points, s.id % 7]) AS x GROUP BY s.team;
  CREATE MATERIALIZED TABLE tap_win.in_active FRESHNESS = INTERVAL '1' SECOND AS
    SELECT s.id, s.team FROM tap_win.scores s
     WHERE s.team IN (SELECT p.team FROM tap_win.players p WHERE p.active)
       AND EXISTS (SELECT FROM tap_win.players p WHERE p.id = s.id)
$m$)$$, 'window and set operation tables are created');
SELECT is((SELECT array_agg(strategy ORDER BY relid::regclass::text)
             FROM materialized_table_internal.continuous_state
            WHERE relid IN (SELECT table_name FROM mine)),
          ARRAY['KEYS', 'KEYS', 'KEYS', 'KEYS', 'KEYS', 'KEYS', 'KEYS', 'KEYS', 'KEYS', 'KEYS'],
          'windows (partitioned by a result column, or over the whole result), set operations, DISTINCT ON, LATERAL unnest and subqueries in WHERE are kept by keys');
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state
                        WHERE relid IN (SELECT table_name FROM tap_win.mine)$$, 30),
            NULL, 'the worker takes them up');
INSERT INTO mark SELECT clock_timestamp();

UPDATE scores SET points = points + 50 WHERE id % 41 = 0;
SELECT isnt(converged(20), NULL, 'ranks shift inside their partitions');
UPDATE scores SET team = (team + 5) % 12 WHERE id % 29 = 0;
UPDATE scores SET tag = 'tag 9' WHERE id % 31 = 0;
SELECT isnt(converged(20), NULL, 'rows moving between partitions');
DELETE FROM scores WHERE team = 3;
INSERT INTO scores SELECT 10000 + i, 20, i, 'tag 1' FROM generate_series(1, 30) i;
SELECT isnt(converged(20), NULL, 'a partition emptied, a new one');
UPDATE players SET active = NOT active WHERE id % 7 = 0;
UPDATE players SET team = 3 WHERE id % 11 = 0;
DELETE FROM players WHERE team = 5;
INSERT INTO players SELECT 1000 + i, 20, i % 2 = 0 FROM generate_series(1, 10) i;
SELECT isnt(converged(20), NULL, 'rows entering and leaving the branches of set operations');

-- (a cycle may recompute whole when a change names most keys: the cost
-- model's choice; each table must show cycles by keys)
SELECT is((SELECT array_agg(table_name::text ORDER BY table_name::text) FROM mine
            WHERE cycles(table_name, 'KEYS') = 0),
          NULL, 'every table applied changes by keys');
-- the whole-result window: the rows it numbers are kept by their ids, and
-- the table is numbered from them
SELECT is((SELECT maintenance_detail FROM materialized_table.materialized_tables
            WHERE table_name = 'overall'::regclass),
          'the rows its window functions are computed over are kept in a hidden table, recomputed for the changed values of id, and the table is computed from them',
          'a window over the whole result says how it is kept');
SELECT is((SELECT count(*) FROM pg_class
            WHERE relnamespace = 'materialized_table_internal'::regnamespace
              AND relname IN ('state_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'overall'::regclass),
                              'derived_' || (SELECT id FROM materialized_table_internal.mt_table WHERE relid = 'overall'::regclass))),
          2::bigint, 'its rows are kept in a hidden table, and numbered by a hidden view');
-- its subqueries are correlated on keys (an IN on team, an EXISTS on id):
-- what they read names keys (a subquery correlated on no key recomputes:
-- continuous_correlated.sql)
SELECT matches((SELECT maintenance_detail FROM materialized_table.materialized_tables
                 WHERE table_name = 'in_active'::regclass),
               'a change of players, read in a subquery correlated on (team, id|id, team)',
               'what the subqueries in WHERE read names keys');

SELECT * FROM finish();
SELECT materialized_table.execute(string_agg(format('DROP MATERIALIZED TABLE %s', table_name), '; '))
  FROM mine \g /dev/null
DROP SCHEMA tap_win CASCADE;
