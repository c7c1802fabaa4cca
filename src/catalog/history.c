/*-------------------------------------------------------------------------
 *
 * src/catalog/history.c
 *	  Recording refreshes in materialized_table.refresh_history.
 *
 * See mt/catalog/history.h for when rows are written.  The autonomous writes go
 * through a dynamic background worker: the request is placed in a dynamic
 * shared memory segment, the worker connects to this database as the
 * extension's owner, inserts the row in its own transaction and exits;
 * the requester waits for it, so the row exists when the call returns.
 * If no worker slot is free the row is not written and a WARNING says so:
 * the refresh itself never fails for want of a history row.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

#include "mt/catalog/history.h"
#include "mt/utils/bgworker.h"
#include "mt/bgw/launcher.h"
#include "mt/materialized_table.h"
#include "mt/utils/spi_plans.h"

PGDLLEXPORT void mt_history_worker_main(Datum arg);

/* how long the history writer waits for a lock before giving up */
#define HISTORY_LOCK_TIMEOUT "1s"

int64		mt_history_cascade_id = 0;

typedef enum HistoryRowKind
{
	HISTORY_RUN,
	HISTORY_RESULT,
	HISTORY_RUN_AND_RESULT
} HistoryRowKind;

/* What is written; in a DSM segment when written autonomously. */
typedef struct HistoryRow
{
	Oid			dbid;
	Oid			userid;
	HistoryRowKind kind;
	int64		run_id;
	Oid			relid;
	TimestampTz started_at;
	TimestampTz finished_at;
	uint64		xid;			/* FullTransactionId, 0 for none */
	int			pid;
	int64		cascade_id;
	int64		rows;			/* -1 for none */
	int			trigger_off;	/* offsets into text[], -1 for NULL */
	int			partition_off;
	int			status_off;
	int			error_off;
	int			strategy_off;
	int			text_len;
	bool		written;		/* set by the writer once committed */
	char		text[FLEXIBLE_ARRAY_MEMBER];
} HistoryRow;

static HistoryRow *
history_row_make(HistoryRowKind kind, const char *trigger, const char *partition,
				 const char *status, const char *error, const char *strategy)
{
	const char *strings[5] = {trigger, partition, status, error, strategy};
	int			offsets[5];
	int			len = 0;
	HistoryRow *row;
	int			i;

	for (i = 0; i < lengthof(strings); i++)
		len += strings[i] ? strlen(strings[i]) + 1 : 0;
	row = palloc0(offsetof(HistoryRow, text) + len + 1);
	row->kind = kind;
	row->dbid = MyDatabaseId;
	row->userid = mt_extension_owner();
	row->pid = MyProcPid;
	row->rows = -1;
	row->cascade_id = mt_history_cascade_id;
	len = 0;
	for (i = 0; i < lengthof(strings); i++)
	{
		offsets[i] = -1;
		if (strings[i])
		{
			offsets[i] = len;
			strcpy(row->text + len, strings[i]);
			len += strlen(strings[i]) + 1;
		}
	}
	row->trigger_off = offsets[0];
	row->partition_off = offsets[1];
	row->status_off = offsets[2];
	row->error_off = offsets[3];
	row->strategy_off = offsets[4];
	row->text_len = len;
	return row;
}

static Datum
text_at(HistoryRow *row, int off, char *isnull)
{
	*isnull = (off < 0) ? 'n' : ' ';
	return off < 0 ? (Datum) 0 : CStringGetTextDatum(row->text + off);
}

/*
 * Does refresh_result have the strategy column (version 1.2)?  Until ALTER
 * EXTENSION ... UPDATE adds it, results are written without.
 */
static bool
catalog_has_strategy(void)
{
	Oid			result = get_relname_relid("refresh_result", mt_internal_namespace());

	return OidIsValid(result) && get_attnum(result, "strategy") != InvalidAttrNumber;
}

/* Insert the row(s) with SPI in the current transaction. */
static void
history_row_insert(HistoryRow *row)
{
	MtSavedUser saved;

	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (row->kind != HISTORY_RESULT)
	{
		Oid			types[8] = {INT8OID, OIDOID, TEXTOID, TEXTOID, TIMESTAMPTZOID,
		XID8OID, INT4OID, INT8OID};
		Datum		values[8];
		char		nulls[8] = "        ";

		values[0] = Int64GetDatum(row->run_id);
		values[1] = ObjectIdGetDatum(row->relid);
		values[2] = text_at(row, row->trigger_off, &nulls[2]);
		values[3] = text_at(row, row->partition_off, &nulls[3]);
		values[4] = TimestampTzGetDatum(row->started_at);
		values[5] = FullTransactionIdGetDatum(FullTransactionIdFromU64(row->xid));
		nulls[5] = row->xid ? ' ' : 'n';
		values[6] = Int32GetDatum(row->pid);
		values[7] = Int64GetDatum(row->cascade_id);
		nulls[7] = row->cascade_id ? ' ' : 'n';
		if (mt_spi_execute_saved("INSERT INTO materialized_table_internal.refresh_run "
								  "(run_id, relid, trigger, partition, started_at, xid, pid, cascade_id) "
								  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
								  8, types, values, nulls, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not record a refresh run");
	}
	if (row->kind != HISTORY_RUN)
	{
		Oid			types[6] = {INT8OID, TIMESTAMPTZOID, TEXTOID, INT8OID, TEXTOID, TEXTOID};
		Datum		values[6];
		char		nulls[6] = "      ";
		bool		has_strategy = catalog_has_strategy();

		values[0] = Int64GetDatum(row->run_id);
		values[1] = TimestampTzGetDatum(row->finished_at);
		values[2] = text_at(row, row->status_off, &nulls[2]);
		values[3] = Int64GetDatum(row->rows);
		nulls[3] = row->rows < 0 ? 'n' : ' ';
		values[4] = text_at(row, row->error_off, &nulls[4]);
		values[5] = text_at(row, row->strategy_off, &nulls[5]);
		if (mt_spi_execute_saved(has_strategy ?
								 "INSERT INTO materialized_table_internal.refresh_result "
								 "(run_id, finished_at, status, rows, error, strategy) "
								 "VALUES ($1, $2, $3, $4, $5, $6)" :
								 "INSERT INTO materialized_table_internal.refresh_result "
								 "(run_id, finished_at, status, rows, error) "
								 "VALUES ($1, $2, $3, $4, $5)",
								 has_strategy ? 6 : 5, types, values, nulls, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not record a refresh result");
	}
	SPI_finish();
	mt_as_extension_owner_end(&saved);
}

/*
 * Delete history older than materialized_table.history_retention.
 *
 * The requester waits for this worker without the lock manager knowing,
 * so rows it has locked itself (a DROP that forgot a table's history, in
 * the same transaction as this refresh) must be skipped, not waited for:
 * they go at the next trim.  A run still going is kept whatever its age.
 */
static void
history_trim(void)
{
	Oid			types[1] = {INT4OID};
	Datum		values[1] = {Int32GetDatum(mt_history_retention)};
	MtSavedUser saved;

	if (mt_history_retention <= 0)
		return;
	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (SPI_execute_with_args("WITH old AS ("
							  "  DELETE FROM materialized_table_internal.refresh_run"
							  "   WHERE run_id IN ("
							  "     SELECT run_id FROM materialized_table_internal.refresh_run"
							  "      WHERE started_at < pg_catalog.now() - $1 * interval '1 second'"
							  "        AND pg_catalog.pg_xact_status(xid) IS DISTINCT FROM 'in progress'"
							  "        FOR UPDATE SKIP LOCKED)"
							  "  RETURNING run_id) "
							  "DELETE FROM materialized_table_internal.refresh_result r"
							  " USING old WHERE r.run_id = old.run_id",
							  1, types, values, NULL, false, 0) < 0)
		elog(ERROR, "could not trim the refresh history");
	/* results whose run row was never written (its writer gave up) */
	if (SPI_execute_with_args("DELETE FROM materialized_table_internal.refresh_result r"
							  " WHERE r.finished_at < pg_catalog.now() - $1 * interval '1 second'"
							  "   AND NOT EXISTS (SELECT FROM materialized_table_internal.refresh_run o"
							  "                    WHERE o.run_id = r.run_id)",
							  1, types, values, NULL, false, 0) < 0)
		elog(ERROR, "could not trim the refresh history");
	SPI_finish();
	mt_as_extension_owner_end(&saved);
}

void
mt_history_worker_main(Datum arg)
{
	dsm_segment *seg;
	HistoryRow *row;

	mt_bgworker_signals();
	seg = dsm_attach(DatumGetUInt32(arg));
	if (seg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not map the refresh history request")));
	row = dsm_segment_address(seg);
	mt_bgworker_connect(row->dbid, row->userid, NULL);

	/*
	 * The requester waits for this worker, and the lock manager does not
	 * know it: a lock request of ours queued behind one that waits for the
	 * requester (DROP EXTENSION, a VACUUM FULL of the history) would never
	 * be granted.  Give up instead; the requester goes on without the row.
	 */
	SetConfigOption("lock_timeout", HISTORY_LOCK_TIMEOUT, PGC_SUSET, PGC_S_OVERRIDE);

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "materialized_table: recording refresh history");
	/* our own writes: the guards need not look the tables up (more locks) */
	MT_INTERNAL_BEGIN();
	history_row_insert(row);
	if (row->kind != HISTORY_RESULT)
		history_trim();
	MT_INTERNAL_END();
	PopActiveSnapshot();
	CommitTransactionCommand();
	row->written = true;
	pgstat_report_activity(STATE_IDLE, NULL);
	dsm_detach(seg);
	proc_exit(0);
}

/* Write a row in a transaction of its own and wait until it is there. */
static void
history_row_insert_autonomously(HistoryRow *row)
{
	Size		size = offsetof(HistoryRow, text) + row->text_len + 1;
	dsm_segment *seg = dsm_create(size, 0);
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;

	memcpy(dsm_segment_address(seg), row, size);
	mt_bgworker_describe(&worker, "materialized_table history writer",
						 "materialized_table history writer", "mt_history_worker_main",
						 BGW_NEVER_RESTART);
	worker.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(seg));
	worker.bgw_notify_pid = MyProcPid;

	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
	{
		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("could not record a refresh in the refresh history"),
				 errdetail("No background worker slot was free."),
				 errhint("Raise max_worker_processes.")));
		dsm_detach(seg);
		return;
	}
	(void) WaitForBackgroundWorkerShutdown(handle);
	if (!((HistoryRow *) dsm_segment_address(seg))->written)
		ereport(WARNING,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not record a refresh in the refresh history"),
				 errdetail("The history writer failed; the server log says why.")));
	dsm_detach(seg);
}

static int64
next_run_id(void)
{
	MtSavedUser saved;
	int64		id;
	bool		isnull;

	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (mt_spi_execute_saved("SELECT pg_catalog.nextval('materialized_table_internal.refresh_run_seq')",
							 0, NULL, NULL, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not allocate a refresh run id");
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	return id;
}

/*
 * mt_history_start
 *		Record that a refresh starts.  Autonomous unless the caller's
 *		transaction is the only one that could ever see the table (CREATE)
 *		or the caller commits right after (the continuous worker).
 */
MtHistoryRun *
mt_history_start(Oid relid, const char *trigger, const char *partition,
				 TimestampTz started, bool autonomous)
{
	MtHistoryRun *run = palloc0(sizeof(MtHistoryRun));
	HistoryRow *row = history_row_make(HISTORY_RUN, trigger, partition, NULL, NULL, NULL);

	/*
	 * A table created in this transaction may yet vanish with it: a row
	 * written on its own would then describe a table that never existed.
	 */
	if (autonomous)
	{
		Relation	rel = RelationIdGetRelation(relid);

		if (RelationIsValid(rel))
		{
			if (rel->rd_createSubid != InvalidSubTransactionId)
				autonomous = false;
			RelationClose(rel);
		}
	}

	run->run_id = next_run_id();
	run->relid = relid;
	run->autonomous = autonomous;
	row->run_id = run->run_id;
	row->relid = relid;
	row->started_at = started;
	row->xid = U64FromFullTransactionId(GetTopFullTransactionId());
	if (autonomous)
		history_row_insert_autonomously(row);
	else
		history_row_insert(row);
	return run;
}

void
mt_history_succeeded(MtHistoryRun *run, int64 rows, const char *strategy)
{
	HistoryRow *row = history_row_make(HISTORY_RESULT, NULL, NULL, "SUCCEEDED", NULL, strategy);

	row->run_id = run->run_id;
	row->finished_at = GetCurrentTimestamp();
	row->rows = rows;
	history_row_insert(row);
}

/* Called after the refresh's subtransaction was rolled back. */
void
mt_history_failed(MtHistoryRun *run, const char *error)
{
	HistoryRow *row = history_row_make(HISTORY_RESULT, NULL, NULL, "FAILED", error, NULL);

	row->run_id = run->run_id;
	row->finished_at = GetCurrentTimestamp();
	if (run->autonomous)
		history_row_insert_autonomously(row);
	else
		history_row_insert(row);
}

/* A run that did not happen (skipped) or ended at once, in one go. */
void
mt_history_note(Oid relid, const char *trigger, const char *partition,
				const char *status, const char *error, bool autonomous)
{
	HistoryRow *row = history_row_make(HISTORY_RUN_AND_RESULT, trigger, partition,
									   status, error, NULL);

	row->run_id = next_run_id();
	row->relid = relid;
	row->started_at = row->finished_at = GetCurrentTimestamp();
	if (autonomous)
		history_row_insert_autonomously(row);
	else
		history_row_insert(row);
}

/* The table is gone: so is its history. */
void
mt_history_forget_table(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	MtSavedUser saved;

	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (SPI_execute_with_args("WITH gone AS ("
							  "  DELETE FROM materialized_table_internal.refresh_run"
							  "   WHERE relid = $1 RETURNING run_id) "
							  "DELETE FROM materialized_table_internal.refresh_result r"
							  " USING gone WHERE r.run_id = gone.run_id",
							  1, types, values, NULL, false, 0) < 0)
		elog(ERROR, "could not delete the refresh history of a dropped table");
	SPI_finish();
	mt_as_extension_owner_end(&saved);
}
