/*-------------------------------------------------------------------------
 *
 * src/continuous/decoding.c
 *	  CONTINUOUS refresh mode: the slot, the origin and the decoding context.
 *
 * The worker owns one logical replication slot and one replication origin
 * per database (both named materialized_table_<database oid>) and keeps a
 * decoding context open, as a walsender does.  Decoding a batch reads the
 * WAL flushed so far and hands every change of a committed transaction to
 * the sink (collect.c).  The slot is held only while decoding.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlogutils.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/origin.h"
#include "replication/slot.h"
#include "storage/sinval.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "mt/catalog/history.h"
#include "mt/continuous/continuous.h"
#include "mt/continuous/cycle_int.h"
#include "mt/continuous/decoder.h"
#include "mt/continuous/snapshot.h"
#include "mt/refresh/refresh.h"
#include "mt/utils/spi_plans.h"

static void
noop_prepare_write(LogicalDecodingContext *ctx, XLogRecPtr lsn, TransactionId xid, bool last)
{
}

static void
noop_write(LogicalDecodingContext *ctx, XLogRecPtr lsn, TransactionId xid, bool last)
{
}

/* Is our plugin allowed here?  Say so in the log once if not. */
static bool
plugin_allowed(ContWorker *w)
{
	if (mt_output_plugin_allowed())
	{
		w->plugin_warned = false;
		return true;
	}
	if (!w->plugin_warned)
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("materialized_table cannot follow CONTINUOUS tables: output plugin \"%s\" is not allowed",
						MT_OUTPUT_PLUGIN),
				 errhint("Add %s to output_plugin_libraries in postgresql.conf and reload the configuration.",
						 MT_OUTPUT_PLUGIN)));
	w->plugin_warned = true;
	return false;
}

/* Take every table up again: the slot starts afresh. */
static void
mark_all_unsynced(ContWorker *w, const char *why)
{
	ListCell   *lc;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	mt_cont_unsync_all();
	if (why)
		foreach(lc, w->tables)
			mt_history_note(((ContTable *) lfirst(lc))->relid,
							mt_trigger_name(MT_TRIGGER_CONTINUOUS), NULL, "FAILED", why, false);
	PopActiveSnapshot();
	CommitTransactionCommand();
	foreach(lc, w->tables)
	{
		((ContTable *) lfirst(lc))->synced = false;
		((ContTable *) lfirst(lc))->has_baseline = false;
	}
}

static void
create_slot(ContWorker *w)
{
	LogicalDecodingContext *ctx;

	CheckLogicalDecodingRequirements();
	ReplicationSlotCreate(w->slot_name, true, RS_EPHEMERAL, false);
	ctx = CreateInitDecodingContext(MT_OUTPUT_PLUGIN, NIL, false, InvalidXLogRecPtr,
									XL_ROUTINE(.page_read = read_local_xlog_page,
											   .segment_open = wal_segment_open,
											   .segment_close = wal_segment_close),
									noop_prepare_write, noop_write, NULL);
	DecodingContextFindStartpoint(ctx);
	FreeDecodingContext(ctx);
	ReplicationSlotPersist();
	ReplicationSlotRelease();
}

/*
 * The decoding context's page reader: the WAL flushed so far, never
 * waiting for more.  The WAL writer flushes whole pages, so the last
 * record may be flushed only in part, and its tail can wait long: WAL
 * written by a transaction that commits nothing (pages pruned by a long
 * report, say) is flushed when that transaction ends.  read_local_xlog_page
 * would wait for the tail, and the committed changes before it with it.
 */
static int
read_flushed_wal_page(XLogReaderState *reader, XLogRecPtr page, int length,
					  XLogRecPtr record, char *buffer)
{
	if (page + length > GetFlushRecPtr(NULL))
		return -1;				/* decoding stops before this record */
	return read_local_xlog_page(reader, page, length, record, buffer);
}

/*
 * mt_cont_ensure_decoding
 *		The origin, the slot and an open decoding context; false if decoding
 *		is not possible right now.
 */
bool
mt_cont_ensure_decoding(ContWorker *w)
{
	ReplicationSlot *slot;
	XLogRecPtr	start;
	MemoryContext old;

	if (w->decoding)
		return true;
	if (!plugin_allowed(w))
		return false;
	strlcpy(w->slot_name, mt_continuous_slot_name(MyDatabaseId), sizeof(w->slot_name));

	if (w->origin == InvalidRepOriginId)
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		w->origin = replorigin_by_name(w->slot_name, true);
		if (w->origin == InvalidRepOriginId)
			w->origin = replorigin_create(w->slot_name);
		CommitTransactionCommand();
	}
	if (!w->origin_session)
	{
		replorigin_session_setup(w->origin);
		replorigin_session_origin = w->origin;
		w->origin_session = true;
	}
	w->sink.own_origin = w->origin;
	mt_decode_sink = &w->sink;

	slot = SearchNamedReplicationSlot(w->slot_name, true);
	if (slot && slot->data.restart_lsn == InvalidXLogRecPtr &&
		slot->data.invalidated_at != InvalidXLogRecPtr)
	{
		/* removed WAL it needed (max_slot_wal_keep_size): start over */
		ReplicationSlotDrop(w->slot_name, true);
		slot = NULL;
		create_slot(w);
		mark_all_unsynced(w, "the replication slot was invalidated (max_slot_wal_keep_size): the table is recomputed in full");
	}
	else if (slot == NULL)
	{
		bool		followed = false;
		ListCell   *lc;

		/*
		 * Tables followed already and no slot: this is a promoted standby,
		 * or a copy of the cluster (pg_basebackup), which have no slots.
		 * (The first table of a database has no slot either.)
		 */
		foreach(lc, w->tables)
			followed |= ((ContTable *) lfirst(lc))->synced;
		pgstat_report_activity(STATE_RUNNING, "materialized_table: creating replication slot");
		create_slot(w);
		mark_all_unsynced(w, followed ?
						  "the replication slot does not exist on this server (a promoted standby, or a copy of the cluster): the table is recomputed in full" :
						  NULL);
	}

	ReplicationSlotAcquire(w->slot_name, true);
	mt_batch_hold(false);		/* one a stopped worker left */
	w->confirm_lsn = InvalidXLogRecPtr;
	start = replorigin_session_get_progress(false);

	/*
	 * Created outside a transaction, the context would mark this process as
	 * one whose xmin the horizons ignore (as fits a walsender): the
	 * snapshots of our own transactions would then no longer keep the row
	 * versions they see from being pruned, and our updates would break HOT
	 * chains.
	 */
	old = CurrentMemoryContext;
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	MemoryContextSwitchTo(TopMemoryContext);
	w->decoding = CreateDecodingContext(start, NIL, false,
										XL_ROUTINE(.page_read = read_flushed_wal_page,
												   .segment_open = wal_segment_open,
												   .segment_close = wal_segment_close),
										noop_prepare_write, noop_write, NULL);
	CommitTransactionCommand();
	MemoryContextSwitchTo(old);
	XLogBeginRead(w->decoding->reader, MyReplicationSlot->data.restart_lsn);
	ReplicationSlotRelease();
	mt_decode_sink = NULL;
	return true;
}

/* Close the decoding context, which wants its slot held if it still exists. */
static void
close_decoding(ContWorker *w)
{
	if (w->decoding == NULL)
		return;
	if (MyReplicationSlot == NULL && SearchNamedReplicationSlot(w->slot_name, true))
		ReplicationSlotAcquire(w->slot_name, true);
	mt_batch_hold(false);
	if (MyReplicationSlot)
	{
		FreeDecodingContext(w->decoding);
		ReplicationSlotRelease();
	}
	else
	{
		/* the slot is gone, and the files it spilled with it */
		XLogReaderFree(w->decoding->reader);
		MemoryContextDelete(w->decoding->context);
	}
	w->decoding = NULL;
	w->confirm_lsn = InvalidXLogRecPtr;
	w->batch_pending = false;	/* decoded again from the origin's position */
}

/*
 * Hold the slot, for decoding only.  Acquiring a logical slot marks this
 * process as decoding, and other backends' snapshots then leave its
 * transactions out: while it held the slot, a reader would take the
 * worker's uncommitted writes for aborted ones and hint them so for good.
 * So the slot is held while decoding and released before applying.
 * False (the decoding context closed) if the slot is gone meanwhile.
 */
bool
mt_cont_acquire_slot(ContWorker *w)
{
	ReplicationSlot *slot = SearchNamedReplicationSlot(w->slot_name, true);

	if (slot == NULL || slot->data.invalidated_at != InvalidXLogRecPtr)
	{
		close_decoding(w);
		return false;
	}
	ReplicationSlotAcquire(w->slot_name, true);
	return true;
}

/*
 * The transaction a commit record ends (its prepared one for COMMIT
 * PREPARED), and when it committed; InvalidTransactionId for any other
 * record.
 */
static TransactionId
committed_xid(XLogReaderState *reader, TimestampTz *commit_time)
{
	uint8		info = XLogRecGetInfo(reader) & XLOG_XACT_OPMASK;
	xl_xact_parsed_commit parsed;

	if (XLogRecGetRmid(reader) != RM_XACT_ID ||
		(info != XLOG_XACT_COMMIT && info != XLOG_XACT_COMMIT_PREPARED))
		return InvalidTransactionId;
	ParseCommitRecord(XLogRecGetInfo(reader), (xl_xact_commit *) XLogRecGetData(reader), &parsed);
	*commit_time = parsed.xact_time;
	return info == XLOG_XACT_COMMIT_PREPARED ? parsed.twophase_xid : XLogRecGetXid(reader);
}

/*
 * Errors that say nothing of the transaction being decoded, but of the
 * process or the machine: the worker stops on them, as before, and decodes
 * the transaction again when it starts over.
 */
static bool
error_of_the_process(ErrorData *edata)
{
	int			class = ERRCODE_TO_CATEGORY(edata->sqlerrcode);

	return class == ERRCODE_INSUFFICIENT_RESOURCES ||
		class == ERRCODE_OPERATOR_INTERVENTION ||
		class == ERRCODE_SYSTEM_ERROR ||
		edata->sqlerrcode == ERRCODE_DATA_CORRUPTED ||
		edata->sqlerrcode == ERRCODE_INDEX_CORRUPTED;
}

/*
 * A committed transaction could not be replayed, and the reorder buffer
 * has let it go: some of its changes were handed over, the others never
 * will be.  Which relations those were is not known, so every table that
 * follows changes and has not seen the transaction yet is recomputed from
 * the sources as they are now, which is right whatever the transaction did.
 */
static void
transaction_lost(ContWorker *w, TransactionId xid, TimestampTz commit_time, ErrorData *edata)
{
	ListCell   *lc;
	MemoryContext old = MemoryContextSwitchTo(w->batch_context);

	foreach(lc, w->tables)
	{
		ContTable  *t = lfirst(lc);

		if (!t->synced || mt_cont_in_baseline(t, xid, w->decoding->reader->ReadRecPtr))
			continue;
		mt_cont_table_gives_up(t);
		if (t->oldest == 0 || commit_time < t->oldest)
			t->oldest = commit_time;
	}
	MemoryContextSwitchTo(old);
	mt_cont_note_batch_xid(w, xid);
	ereport(LOG,
			(errmsg("materialized_table worker could not decode transaction %u", xid),
			 errdetail("Decoding it failed: %s", edata->message),
			 errhint("The CONTINUOUS tables of this database are recomputed from their sources instead.")));
}

/*
 * Decode one record.  Replaying a committed transaction reads the catalog
 * as the transaction saw it, and that can fail for relations gone since:
 * PostgreSQL looks up the current pg_class row of a user_catalog_table,
 * say, and finds none once it was dropped.  Such a transaction is
 * skipped (see transaction_lost), once, instead of failing every attempt
 * to decode past it -- and with it, every table of the database.  Any
 * other failure stops the worker, as it would have.
 */
static void
decode_record(ContWorker *w)
{
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	PG_TRY();
	{
		LogicalDecodingProcessRecord(w->decoding, w->decoding->reader);
	}
	PG_CATCH();
	{
		TimestampTz commit_time = 0;
		TransactionId xid = committed_xid(w->decoding->reader, &commit_time);
		ErrorData  *edata;

		MemoryContextSwitchTo(caller);
		edata = CopyErrorData();
		/* the reorder buffer cleans a transaction up when its replay fails */
		if (!TransactionIdIsValid(xid) || error_of_the_process(edata) ||
			hash_search(w->decoding->reorder->by_txn, &xid, HASH_FIND, NULL) != NULL)
			PG_RE_THROW();
		FlushErrorState();
		/* the replay's transaction is aborted already; nothing else is open */
		if (IsTransactionState())
			AbortCurrentTransaction();
		CurrentResourceOwner = owner;
		MemoryContextSwitchTo(caller);
		transaction_lost(w, xid, commit_time, edata);
		FreeErrorData(edata);
	}
	PG_END_TRY();
}

/* Read the WAL flushed so far (or until the batch is full). */
void
mt_cont_decode_batch(ContWorker *w)
{
	XLogRecPtr	end_of_wal = GetFlushRecPtr(NULL);
	ResourceOwner owner = CurrentResourceOwner;

	w->sink.own_origin = w->origin;
	mt_decode_sink = &w->sink;
	pgstat_report_activity(STATE_RUNNING, "materialized_table: decoding changes");
	PG_TRY();
	{
		/*
		 * Decoding reads the catalogs as they were when each change was
		 * made; entries the apply built from today's catalogs would stand
		 * for older ones.  They differ only if a catalog change came in
		 * between, and every catalog change reaches this process as an
		 * invalidation message (the apply took its locks, so it read no
		 * catalog change before its message): without one since the last
		 * batch, the caches are kept, and so are the plans made from them.
		 */
		bool		moved = SharedInvalidMessageCounter != w->decoding_inval_count;
		uint64		before = SharedInvalidMessageCounter;

		if (!w->caches_fit_for_decoding || moved)
		{
			InvalidateSystemCaches();
			w->caches_fit_for_decoding = true;
		}
		while (w->decoding->reader->EndRecPtr < end_of_wal && !w->batch_full)
		{
			char	   *errm = NULL;
			XLogRecord *record = XLogReadRecord(w->decoding->reader, &errm);

			if (errm)
				elog(ERROR, "could not read WAL for logical decoding: %s", errm);
			if (record == NULL)
			{
				/* its tail is not flushed yet: read it again next batch */
				XLogBeginRead(w->decoding->reader, w->decoding->reader->EndRecPtr);
				break;
			}
			decode_record(w);
			CHECK_FOR_INTERRUPTS();
		}

		/*
		 * And the other way: what decoding built stands for the catalogs as
		 * of the changes it decoded.  A catalog change committed past the
		 * batch's end, its message read before or while decoding, would be
		 * hidden from the apply, which sees the change itself: a TRUNCATE's
		 * rows, read from the relation's old file, emptied at its commit.
		 */
		if (moved || SharedInvalidMessageCounter != before)
		{
			InvalidateSystemCaches();
			w->caches_fit_for_decoding = false;
		}
		w->decoding_inval_count = SharedInvalidMessageCounter;
	}
	PG_FINALLY();
	{
		mt_decode_sink = NULL;
		CurrentResourceOwner = owner;
	}
	PG_END_TRY();
	ReplicationSlotRelease();
}

/*
 * Close decoding; with drop, also remove the slot and the origin (see
 * mt_continuous_worker_stop).
 */
void
mt_cont_stop_decoding(ContWorker *w, bool drop)
{
	close_decoding(w);
	if (MyReplicationSlot)
		ReplicationSlotRelease();
	if (!drop)
		return;
	strlcpy(w->slot_name, mt_continuous_slot_name(MyDatabaseId), sizeof(w->slot_name));
	if (SearchNamedReplicationSlot(w->slot_name, true))
		ReplicationSlotDrop(w->slot_name, true);
	if (w->origin_session)
	{
		replorigin_session_reset();
		replorigin_session_origin = InvalidRepOriginId;
		w->origin_session = false;
	}
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	replorigin_drop_by_name(w->slot_name, true, true);
	CommitTransactionCommand();
	w->origin = InvalidRepOriginId;
}
