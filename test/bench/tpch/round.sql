-- test/bench/tpch/round.sql: one measured round of test/bench/tpch.sh.
--
-- CALL tpch_round(kind, fraction, tbl): change the data (tpch_change, in
-- a transaction of its own), then watch the database's worker until the
-- cycle that applied the change to the materialized table tbl has ended.
-- Returned (INOUT):
--   changed      rows the change inserted, updated or deleted
--   cycle_ms     the whole cycle of the worker that applied the change:
--                from its start (pg_stat_activity.state_change of the
--                worker's "decoding changes") to its end (state_change of
--                its return to idle, after its commits) -- decoding, the
--                apply of every table of the batch, the commits
--   cycle_start_exact  false when the cycle's start was not seen as
--                "decoding changes" (it was shorter than a poll): then the
--                last poll that saw the worker idle stands for it, which
--                makes cycle_ms up to one poll (1 ms) too long
--   decode_ms    from the cycle's start to the worker's "maintaining" the
--                table (decoding, and the wait for the decoded transactions
--                to be visible); NULL when that was not seen (an apply
--                shorter than a poll, 2 ms) or the start was not exact
--   history_ms   the sum of the durations in refresh_history of the
--                table's CONTINUOUS runs after the change (what the
--                extension records: its apply of the table alone)
--   history_runs how many runs those were
--   run_strategy how they computed the table's rows, refresh_history.strategy
--                (FULL, KEYS or DELTAS; several joined by '+')
--   visible_ms   from the commit of the change to the end of that cycle
--                (includes the wait for the cycle to start)
--   precommit_cpu_ms  CPU time of the worker process while the change ran,
--                before its commit (/proc/PID/schedstat): decoding the
--                change's WAL as it is flushed, which the cycle after the
--                commit then need not do (0 when nothing was flushed)
--   worker_cpu_ms  CPU time of the worker process from the start of the
--                change to the end of the cycle that applied it: the
--                precommit part and the cycle's own (not that of processes
--                it starts: parallel workers, the history row's writer)
--   failed       the error of a FAILED run of the table, if any
-- The cycle that applied the change is the first whose end finds the
-- table's continuous_state.applied_lsn past an LSN read in the change's
-- transaction before its commit: the worker sets it, in the transaction
-- that writes the table, to the end of the batch it decoded, and only for
-- tables the batch had work for -- the change's, as nothing else writes
-- the sources meanwhile.
SET client_min_messages = warning;

-- CPU time (ms) a process of the server has used so far
CREATE OR REPLACE FUNCTION tpch_cpu_ms(pid int) RETURNS float8 LANGUAGE sql VOLATILE
AS $$ SELECT split_part(pg_read_file('/proc/' || pid || '/schedstat'), ' ', 1)::float8 / 1e6 $$;

DROP PROCEDURE IF EXISTS tpch_round;
CREATE OR REPLACE PROCEDURE tpch_round(kind text, fraction float8, tbl regclass,
                                       INOUT changed bigint DEFAULT NULL,
                                       INOUT cycle_ms float8 DEFAULT NULL,
                                       INOUT cycle_start_exact boolean DEFAULT NULL,
                                       INOUT decode_ms float8 DEFAULT NULL,
                                       INOUT history_ms float8 DEFAULT NULL,
                                       INOUT history_runs int DEFAULT NULL,
                                       INOUT visible_ms float8 DEFAULT NULL,
                                       INOUT precommit_cpu_ms float8 DEFAULT NULL,
                                       INOUT worker_cpu_ms float8 DEFAULT NULL,
                                       INOUT run_strategy text DEFAULT NULL,
                                       INOUT failed text DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
    worker int;
    mark bigint;
    before_commit pg_lsn;
    committed_at timestamptz;
    polled_at timestamptz;
    idle_seen timestamptz;
    cycle_start timestamptz;
    in_cycle boolean := false;
    w_state text;
    w_query text;
    w_change timestamptz;
    cpu_start float8;
BEGIN
    SELECT pid INTO worker FROM pg_stat_activity
     WHERE backend_type = 'materialized_table worker' AND datname = current_database();
    IF worker IS NULL THEN
        RAISE EXCEPTION 'no materialized_table worker runs for database %', current_database();
    END IF;
    SELECT coalesce(max(run_id), 0) INTO mark FROM materialized_table.refresh_history;
    cpu_start := tpch_cpu_ms(worker);
    changed := tpch_change(kind, fraction);
    before_commit := pg_current_wal_insert_lsn();
    COMMIT;
    committed_at := clock_timestamp();
    precommit_cpu_ms := tpch_cpu_ms(worker) - cpu_start;
    LOOP
        PERFORM pg_stat_clear_snapshot();
        SELECT state, query, state_change INTO w_state, w_query, w_change
          FROM pg_stat_activity WHERE pid = worker;
        polled_at := clock_timestamp();
        IF w_state IS NULL THEN
            RAISE EXCEPTION 'the materialized_table worker (pid %) has gone', worker;
        ELSIF w_state = 'idle' THEN
            IF in_cycle AND w_change >= cycle_start THEN
                -- a cycle ended: was it the one that applied the change?
                IF (SELECT applied_lsn FROM materialized_table_internal.continuous_state
                     WHERE relid = tbl) > before_commit THEN
                    worker_cpu_ms := tpch_cpu_ms(worker) - cpu_start;
                    cycle_ms := extract(epoch FROM w_change - cycle_start) * 1000;
                    visible_ms := extract(epoch FROM w_change - committed_at) * 1000;
                    EXIT;
                END IF;
                in_cycle := false;
                decode_ms := NULL;
            END IF;
            idle_seen := polled_at;
        ELSIF in_cycle THEN
            IF decode_ms IS NULL AND cycle_start_exact AND w_change > cycle_start
               AND w_query = 'materialized_table: maintaining ' || (SELECT relname FROM pg_class WHERE oid = tbl) THEN
                decode_ms := extract(epoch FROM w_change - cycle_start) * 1000;
            END IF;
        ELSE
            -- a cycle (or what of it is left) after the commit
            in_cycle := true;
            cycle_start_exact := w_query = 'materialized_table: decoding changes'
                                 AND w_change > committed_at;
            cycle_start := CASE WHEN cycle_start_exact THEN w_change
                                ELSE greatest(idle_seen, committed_at) END;
        END IF;
        IF polled_at > committed_at + interval '300 s' THEN
            failed := 'no cycle applied the change within 300 s';
            EXIT;
        END IF;
        -- often while waiting for the cycle, so that its start is seen;
        -- less often during it, which shares the machine with this loop
        PERFORM pg_sleep(CASE WHEN in_cycle THEN 0.002 ELSE 0.001 END);
    END LOOP;
    SELECT sum(extract(epoch FROM duration) * 1000) FILTER (WHERE status = 'SUCCEEDED'),
           count(*) FILTER (WHERE status = 'SUCCEEDED'),
           string_agg(DISTINCT strategy, '+') FILTER (WHERE status = 'SUCCEEDED'),
           coalesce(failed, string_agg(error, '; ') FILTER (WHERE status = 'FAILED'))
      INTO history_ms, history_runs, run_strategy, failed
      FROM materialized_table.refresh_history
     WHERE run_id > mark AND table_name = tbl AND trigger = 'CONTINUOUS';
END $$;
