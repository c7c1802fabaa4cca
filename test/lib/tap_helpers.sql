-- Helpers of the pgTAP tests that wait for the workers (test/pgtap/*.sql),
-- created in the schema the including file names:
--
--   \set schema tap_xyz
--   \ir ../lib/continuous_tap.sql
--
-- The schema is created afresh (a failed earlier run may have left it), and
-- the including file drops it at the end.
--
--   wait_for(query, timeout)   seconds until query returned true, or NULL
--   mismatches(t)              rows in which t and its query differ
--                              (EXCEPT ALL both ways)
--   converged(timeout)         seconds until every CONTINUOUS table of the
--                              schema equals its query, or NULL
--   failed_cycles()            refreshes of the schema's tables that failed
--   writer_connect(name)       a dblink connection to this database, to run
--                              a load in another session while the test goes on
--   worker_pid()               the pid of this database's worker, or NULL
--   slot_name()                the name of this database's replication slot
--
-- With \set with_cycles, also:
--   mine                       a view: the materialized tables of the schema
--   mark                       a table: the time (at) cycles() counts from
--   cycles(strategy)           cycles of the schema's tables since the mark
--                              whose strategy was strategy (refresh_history)
--   cycles_of(t, strategy)     the same, of table t
--
-- With \set with_steps, also (not with with_cycles):
--   step(sql, ...)             marks the time, commits, runs each statement
--                              and commits them: one batch of changes
--   cycles_since(t)            the strategies (distinct, comma-separated) of
--                              t's cycles that succeeded since the mark
--
-- With \set with_src, also a source table and a writer:
--   src(id, grp, v)            5,000 rows in 20 groups
--   writer(seconds, also)      random inserts, updates (of groups too) and
--                              deletes on src, one transaction each, for
--                              that many seconds; also, if given, is one
--                              more statement run in each
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS dblink;
DROP SCHEMA IF EXISTS :"schema" CASCADE;
CREATE SCHEMA :"schema";

CREATE FUNCTION :"schema".wait_for(query text, timeout float) RETURNS float
LANGUAGE plpgsql AS $$
DECLARE
    start timestamptz := clock_timestamp();
    done boolean;
BEGIN
    LOOP
        EXECUTE query INTO done;
        IF done THEN
            RETURN round(extract(epoch FROM clock_timestamp() - start)::numeric, 2);
        END IF;
        IF clock_timestamp() - start > timeout * interval '1 second' THEN
            RETURN NULL;
        END IF;
        -- pg_stat_activity and pg_replication_slots are read once per
        -- transaction unless told
        PERFORM pg_stat_clear_snapshot();
        PERFORM pg_sleep(0.05);
    END LOOP;
END
$$;

\ir mismatches.sql

CREATE FUNCTION :"schema".converged(timeout float) RETURNS float
LANGUAGE plpgsql SET search_path = :"schema", public AS $$
BEGIN
    RETURN wait_for(format($q$SELECT coalesce(sum(%I.mismatches(t.table_name)), 0) = 0
                               FROM materialized_table.materialized_tables t
                               JOIN pg_class c ON c.oid = t.table_name
                              WHERE c.relnamespace = %L::regnamespace
                                AND t.refresh_mode = 'CONTINUOUS'$q$,
                           current_schema(), current_schema()), timeout);
END
$$;

CREATE FUNCTION :"schema".failed_cycles() RETURNS bigint
LANGUAGE sql AS $$
  SELECT count(*) FROM materialized_table.refresh_history h
    JOIN pg_class c ON c.oid = h.table_name
   WHERE c.relnamespace = current_schema()::regnamespace AND h.status = 'FAILED'
$$;

CREATE FUNCTION :"schema".writer_connect(name text) RETURNS text
LANGUAGE sql AS $$
  SELECT dblink_connect(name, format('host=%s port=%s dbname=%s user=%s',
                                     split_part(current_setting('unix_socket_directories'), ',', 1),
                                     current_setting('port'), current_database(), current_user))
$$;

CREATE FUNCTION :"schema".worker_pid() RETURNS int
LANGUAGE sql AS $$
  SELECT pid FROM pg_stat_activity
   WHERE backend_type = 'materialized_table worker' AND datname = current_database()
$$;

CREATE FUNCTION :"schema".slot_name() RETURNS text
LANGUAGE sql AS $$
  SELECT 'materialized_table_' || oid FROM pg_database WHERE datname = current_database()
$$;

\if :{?with_cycles}
CREATE VIEW :"schema".mine AS
  SELECT t.table_name FROM materialized_table.materialized_tables t
    JOIN pg_class c ON c.oid = t.table_name
   WHERE c.relnamespace = :'schema'::regnamespace;
CREATE TABLE :"schema".mark (at timestamptz);
SELECT format($f$
CREATE FUNCTION %1$I.cycles(strategy text) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM materialized_table.refresh_history h
   WHERE h.table_name IN (SELECT table_name FROM %1$I.mine) AND h.trigger = 'CONTINUOUS'
     AND h.started_at > (SELECT at FROM %1$I.mark) AND h.strategy = $1
$$;
CREATE FUNCTION %1$I.cycles_of(t regclass, strategy text) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM materialized_table.refresh_history h
   WHERE h.table_name = t AND h.trigger = 'CONTINUOUS'
     AND h.started_at > (SELECT max(at) FROM %1$I.mark) AND h.strategy = $2
$$$f$, :'schema') \gexec
\endif

\if :{?with_steps}
CREATE TEMP TABLE mark (at timestamptz);
-- (a procedure that commits cannot have a SET search_path: the names are
-- qualified as it is created)
SELECT format($f$
CREATE FUNCTION %1$I.cycles_since(t regclass) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(DISTINCT h.strategy, ','), '')
    FROM materialized_table.refresh_history h
   WHERE h.table_name = t AND h.trigger = 'CONTINUOUS'
     AND h.started_at > (SELECT at FROM pg_temp.mark) AND h.status = 'SUCCEEDED'
$$;
CREATE PROCEDURE %1$I.step(VARIADIC sqls text[]) LANGUAGE plpgsql AS $$
DECLARE
    s text;
BEGIN
    DELETE FROM pg_temp.mark;
    INSERT INTO pg_temp.mark VALUES (clock_timestamp());
    COMMIT;
    FOREACH s IN ARRAY sqls LOOP
        EXECUTE s;
    END LOOP;
    COMMIT;
END
$$$f$, :'schema') \gexec
\endif

\if :{?with_src}
CREATE TABLE :"schema".src (id int PRIMARY KEY, grp int NOT NULL, v numeric(10,2) NOT NULL);
INSERT INTO :"schema".src SELECT i, i % 20, i % 100 FROM generate_series(1, 5000) i;
-- (a procedure that commits cannot have a SET search_path: the names are
-- qualified as it is created)
SELECT format($f$
CREATE PROCEDURE %1$I.writer(seconds float, also text DEFAULT NULL) LANGUAGE plpgsql AS $$
DECLARE
    stop timestamptz := clock_timestamp() + seconds * interval '1 second';
    k int;
BEGIN
    WHILE clock_timestamp() < stop LOOP
        k := 1 + (random() * 6000)::int;
        INSERT INTO %1$I.src AS s VALUES (k, k %% 23, random() * 100)
            ON CONFLICT (id) DO UPDATE SET v = excluded.v, grp = (s.grp + 1) %% 20;
        UPDATE %1$I.src SET v = v + 1 WHERE id = 1 + (random() * 6000)::int;
        DELETE FROM %1$I.src WHERE id = 1 + (random() * 6000)::int;
        IF also IS NOT NULL THEN
            EXECUTE also;
        END IF;
        COMMIT;
    END LOOP;
END $$$f$, :'schema') \gexec
\endif
