/*-------------------------------------------------------------------------
 *
 * src/continuous/cycle.c
 *	  CONTINUOUS refresh mode, the side of the per-database worker.
 *
 * The worker owns one logical replication slot and one replication origin
 * per database (both named materialized_table_<database oid>) and keeps a
 * decoding context open, as a walsender does.  Each cycle:
 *
 *	1. decode: read the WAL flushed so far; for every change of a source,
 *	   note what each table that reads it needs -- key values (KEYS), the
 *	   row itself (DELTAS), or "everything" (FULL, TRUNCATE, too much);
 *	2. apply: tables that are due get the work done (each in a
 *	   subtransaction, so one failure costs only that table, whose work is
 *	   then kept); the others -- suspended, or not due yet -- get it
 *	   written to change_keys / change_deltas.  Quick work is committed in
 *	   one transaction, each long recompute in one of its own after it
 *	   (see apply_batch); then the replication origin's progress is set to
 *	   where decoding stopped;
 *	3. after commit, confirm that position to the slot (when it is next
 *	   held), which may then release WAL.  Suspended tables never hold WAL
 *	   back.
 *
 * Exactly once.  After a crash the slot restarts from its last confirmed
 * position, at or before the origin's, and decoding skips every
 * transaction that committed before the origin's position: work is neither
 * lost (the origin only moves once the batch is applied) nor done twice
 * (a table whose work of the batch was committed before the crash says so
 * in its applied_lsn, and decoding skips that work for it).
 * Recomputing keys is idempotent anyway; DELTAS rely on this.
 *
 * Baselines.  A full recompute of a DELTAS table reads the sources with a
 * snapshot; transactions that snapshot already saw must not be added
 * again when they are decoded later, so the snapshot is kept as the
 * table's baseline and decoded transactions visible in it are skipped.
 * Through a join, a change of a source other than the one that adjusts
 * recomputes only the groups it names (whose adjustments so far may have
 * read that source's old row): that snapshot is kept with those groups
 * (continuous_baseline), and a change it saw adds nothing to them.  Either
 * kind is forgotten once decoding has passed the point where its snapshot
 * was taken.
 *
 * Taking a table up.  A new table (or one whose query changed) is
 * recomputed once by the worker before its changes are followed: changes
 * committed after its CREATE may have been decoded before the worker knew
 * it.  The same happens to every table when the slot has to be created
 * again (first table of a database, or a slot lost to
 * max_slot_wal_keep_size), and the history says so.
 *
 * Our own writes carry the origin and are not decoded into work.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlogutils.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/origin.h"
#include "replication/slot.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "storage/sinval.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "mt/bgw/launcher.h"
#include "mt/catalog/freshness.h"
#include "mt/catalog/history.h"
#include "mt/commands/commands.h"
#include "mt/continuous/continuous.h"
#include "mt/continuous/cycle_int.h"
#include "mt/continuous/decoder.h"
#include "mt/continuous/snapshot.h"
#include "mt/materialized_table.h"
#include "mt/refresh/refresh.h"

/*
 * All the worker keeps from one cycle to the next (see ContWorker), handed
 * from here to the functions of the other files.
 */
static ContWorker worker = {
	.applied_lsn_kept = true,
	.origin = InvalidRepOriginId,
	.confirm_lsn = InvalidXLogRecPtr,
	.sink = {mt_cont_sink_change, mt_cont_sink_truncate, mt_cont_sink_commit, &worker,
			 InvalidRepOriginId},
	.pending_end = InvalidXLogRecPtr,
	.batch_start = InvalidXLogRecPtr,
};

/* =====================================================================
 * The slot and the decoding context
 * =====================================================================
 */

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
	const char *allowed = GetConfigOption("output_plugin_libraries", true, false);

	if (allowed == NULL || strstr(allowed, MT_OUTPUT_PLUGIN) != NULL)
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
	SPI_connect();
	mt_spi_exec("UPDATE materialized_table_internal.continuous_state "
				"SET synced = false, baseline_xmin = NULL, baseline_xmax = NULL, baseline_xip = NULL",
				SPI_OK_UPDATE);
	mt_spi_exec("DELETE FROM materialized_table_internal.continuous_baseline", SPI_OK_DELETE);
	SPI_finish();
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
	if (w->batch_xids == NIL || (TransactionId) llast_oid(w->batch_xids) != xid)
		w->batch_xids = lappend_oid(w->batch_xids, (Oid) xid);
	MemoryContextSwitchTo(old);
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
		if (!w->caches_fit_for_decoding || SharedInvalidMessageCounter != w->decoding_inval_count)
		{
			InvalidateSystemCaches();
			w->caches_fit_for_decoding = true;
		}
		w->decoding_inval_count = SharedInvalidMessageCounter;
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

/* =====================================================================
 * The tables followed
 * =====================================================================
 */

/*
 * Tables the worker could not read (their query could not be analyzed):
 * not followed, and tried again after a back-off.  In TopMemoryContext
 * (ContWorker.unreadable).
 */
typedef struct Unreadable
{
	Oid			relid;
	int			failures;
	TimestampTz retry_after;
} Unreadable;

/*
 * The relations a query view reads: through the views it reads, down to
 * the partitions of the tables, in OID order.  Its operators are named
 * with their schema: an exact match for oid = regclass elsewhere on a
 * search_path would be taken over pg_catalog's oid = oid.
 */
static List *
relations_read(Oid query_view)
{
	return mt_spi_oids("WITH RECURSIVE reads(relid) AS ("
					   "  SELECT $1 "
					   "  UNION "
					   "  SELECT d.refobjid FROM pg_catalog.pg_rewrite r "
					   "    JOIN reads ON r.ev_class OPERATOR(pg_catalog.=) reads.relid "
					   "    JOIN pg_catalog.pg_depend d "
					   "      ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass::pg_catalog.oid "
					   "         AND d.objid OPERATOR(pg_catalog.=) r.oid "
					   "         AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid "
					   "   WHERE d.refobjid OPERATOR(pg_catalog.<>) reads.relid) "
					   "SELECT relid FROM reads "
					   "UNION "
					   "SELECT p.relid FROM reads, "
					   "  LATERAL pg_catalog.pg_partition_tree(reads.relid::pg_catalog.regclass) p "
					   "ORDER BY 1", query_view);
}

static Unreadable *
unreadable_entry(ContWorker *w, Oid relid)
{
	ListCell   *lc;

	foreach(lc, w->unreadable)
		if (((Unreadable *) lfirst(lc))->relid == relid)
			return lfirst(lc);
	return NULL;
}

/*
 * A table could not be read: say so in its history, and have it wait for a
 * full recompute, its changes unread from now on.  Its freshness shows as
 * not met (pending_since) until it is maintained again.
 */
static void
table_unreadable(ContWorker *w, MtTable *mt, ErrorData *edata, TimestampTz started)
{
	Unreadable *u = unreadable_entry(w, mt->relid);
	int64		freshness = mt_freshness_seconds(mt->freshness_value, mt->freshness_unit) * USECS_PER_SEC;
	MtHistoryRun *run;

	if (u == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		u = palloc0(sizeof(Unreadable));
		u->relid = mt->relid;
		w->unreadable = lappend(w->unreadable, u);
		MemoryContextSwitchTo(old);
	}
	u->failures++;
	u->retry_after = mt_cont_retry_time(GetCurrentTimestamp(), freshness, u->failures);
	ereport(LOG,
			(errmsg("materialized_table could not follow \"%s\": %s",
					get_rel_name(mt->relid), edata->message),
			 errdetail("The table is recomputed once it can be followed again.")));
	mt_cont_state_exec("UPDATE materialized_table_internal.continuous_state "
					   "SET needs_full = true, pending_since = pg_catalog.coalesce(pending_since, $2) "
					   "WHERE relid = $1", mt->relid, TIMESTAMPTZOID,
					   TimestampTzGetDatum(started), false);
	run = mt_history_start(mt->relid, mt_trigger_name(MT_TRIGGER_CONTINUOUS), NULL, started, false);
	mt_history_failed(run, edata->message);
}

/* Analyze one table to follow, into context. */
static ContTable *
read_table(MtTable *mt, MemoryContext context)
{
	MemoryContext old = MemoryContextSwitchTo(context);
	ContTable  *t;

	t = palloc0(sizeof(ContTable));
	t->relid = mt->relid;
	t->query_view = mt->query_view;
	t->freshness = mt_freshness_seconds(mt->freshness_value, mt->freshness_unit) * USECS_PER_SEC;
	t->analysis = mt_analyze_query_view(mt->query_view, mt->relid);
	/* what an earlier process kept for it may have been read so */
	t->inexact_lsn = GetXLogInsertRecPtr();
	t->reads = relations_read(mt->query_view);
	t->writes = mt_leaf_relations(mt->relid);
	MemoryContextSwitchTo(old);
	return t;
}

/*
 * The tables to follow, analyzed, into context; false if one is locked.
 * What the analysis locks beyond them is waited for briefly at most.  A
 * table whose analysis fails is left out (table_unreadable), and the
 * others are followed all the same.
 */
static bool
read_tables(ContWorker *w, List *mts, MemoryContext context, List **result)
{
	ListCell   *lc;
	TimestampTz now = GetCurrentTimestamp();
	List	   *still_unreadable = NIL;

	*result = NIL;
	w->applied_lsn_kept = mt_cont_catalog_keeps_applied_lsn();
	foreach(lc, mts)
	{
		MtTable    *mt = lfirst(lc);
		Unreadable *u = unreadable_entry(w, mt->relid);
		MtSubxact	sub;
		ContTable  *volatile t = NULL;
		ErrorData  *volatile edata = NULL;

		if (u && now < u->retry_after)
		{
			still_unreadable = lappend(still_unreadable, u);
			continue;			/* failed a moment ago */
		}
		/* the lock keeps a DROP out while the query is analyzed */
		if (!ConditionalLockRelationOid(mt->relid, AccessShareLock))
			return false;
		if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(mt->relid)) ||
			!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(mt->query_view)))
			continue;			/* dropped since the list was read */
		mt_subxact_begin(&sub);
		PG_TRY();
		{
			t = read_table(mt, context);
			mt_subxact_commit(&sub);
		}
		PG_CATCH();
		{
			edata = mt_subxact_rollback(&sub);
		}
		PG_END_TRY();
		if (edata && mt_cont_gave_way(edata))
			return false;
		if (edata)
		{
			if (mt_cont_dropped_meanwhile(mt->relid))
				continue;
			table_unreadable(w, mt, edata, now);
			still_unreadable = lappend(still_unreadable, unreadable_entry(w, mt->relid));
			continue;
		}
		if (u)
			ereport(LOG,
					(errmsg("materialized_table follows \"%s\" again", get_rel_name(mt->relid))));
		{
			MemoryContext old = MemoryContextSwitchTo(context);

			*result = lappend(*result, t);
			MemoryContextSwitchTo(old);
		}
	}
	/* tables read again, or gone, are forgotten here */
	foreach(lc, w->unreadable)
		if (!list_member_ptr(still_unreadable, lfirst(lc)))
			pfree(lfirst(lc));
	list_free(w->unreadable);
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		w->unreadable = list_copy(still_unreadable);
		MemoryContextSwitchTo(old);
	}
	foreach(lc, *result)
		mt_cont_load_baseline(w, lfirst(lc));
	return true;
}

/* What the worker learnt of a table it keeps following. */
static void
carry_over(ContWorker *w, List *new_tables)
{
	ListCell   *ln;
	ListCell   *lo;

	foreach(ln, new_tables)
	{
		ContTable  *t = lfirst(ln);

		foreach(lo, w->tables)
		{
			ContTable  *old = lfirst(lo);

			if (old->relid == t->relid && old->query_view == t->query_view)
			{
				t->full_ms = old->full_ms;
				t->key_ms = old->key_ms;
				t->retry_after = old->retry_after;
				t->failures = old->failures;
				t->inexact_lsn = old->inexact_lsn;
				break;
			}
		}
	}
}

/* See mt_continuous_worker_tables_changed. */
bool
mt_cont_tables_changed(ContWorker *w, List *mts)
{
	MemoryContext context;
	List	   *new_tables = NIL;
	volatile bool busy = false;

	/* the batch waiting to be applied refers to the tables as they are */
	if (w->batch_pending)
		return false;
	context = AllocSetContextCreate(TopMemoryContext, "materialized_table continuous",
									ALLOCSET_DEFAULT_SIZES);
	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		mt_cont_set_lock_timeout();
		PushActiveSnapshot(GetTransactionSnapshot());
		busy = !read_tables(w, mts, context, &new_tables);
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		mt_cont_catch_lock_timeout(context);
		busy = true;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(TopMemoryContext);

	if (busy)
	{
		MemoryContextDelete(context);
		return false;
	}
	carry_over(w, new_tables);
	w->reread_wanted = false;
	if (w->tables_context)
		MemoryContextDelete(w->tables_context);
	w->tables_context = context;
	w->tables = new_tables;
	mt_cont_interests_reset(w);
	return true;
}

/* =====================================================================
 * The cycle
 * =====================================================================
 */

/*
 * mt_continuous_worker_start
 *		The worker starts: follow these tables (see below).
 */
bool
mt_continuous_worker_start(List *mts)
{
	worker.batch_context = AllocSetContextCreate(TopMemoryContext, "materialized_table batch",
												 ALLOCSET_DEFAULT_SIZES);
	return mt_continuous_worker_tables_changed(mts);
}

/*
 * mt_continuous_worker_tables_changed
 *		The worker read the catalog again: rebuild what it follows.  False,
 *		with what it followed unchanged, if a table is locked (being dropped
 *		or altered): waiting for it could deadlock with that DDL, so the
 *		caller tries again a moment later.
 */
bool
mt_continuous_worker_tables_changed(List *mts)
{
	return mt_cont_tables_changed(&worker, mts);
}

/*
 * mt_continuous_worker_reread_wanted
 *		Should the worker read its tables again before the next batch?
 *		Decoding met a source whose row layout changed (DDL).
 */
bool
mt_continuous_worker_reread_wanted(void)
{
	return worker.reread_wanted;
}

/* ---------------------------------------------------------------------
 * Applying the batch
 * ---------------------------------------------------------------------
 */

/* The commits decoded must be visible to the snapshots that read sources. */
static void
wait_for_visibility(ContWorker *w)
{
	ListCell   *lc;

	foreach(lc, w->batch_xids)
	{
		TransactionId xid = (TransactionId) lfirst_oid(lc);

		while (TransactionIdIsInProgress(xid))
		{
			CHECK_FOR_INTERRUPTS();
			pg_usleep(1000L);
		}
	}
}

/*
 * The transactions of a batch but its last commit asynchronously: they are
 * visible at once, and made durable by the last one, whose commit flushes
 * the WAL up to it -- or lost with it in a crash, which applied_lsn makes
 * right either way.
 */
static void
commit_asynchronously(void)
{
	(void) set_config_option("synchronous_commit", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
}

/*
 * The batch's work of a table is committed: forget it, so that applying
 * the batch again (after a lock timeout elsewhere) does not do it twice.
 */
static void
batch_done(ContTable *t, XLogRecPtr batch_end)
{
	mt_cont_forget_batch_work(t);
	t->applied_lsn = batch_end;
}

/* cheapest first: by the measured cost of a full recompute */
static int
by_full_cost(const ListCell *a, const ListCell *b)
{
	double		x = ((ContTable *) lfirst(a))->full_ms;
	double		y = ((ContTable *) lfirst(b))->full_ms;

	return (x > y) - (x < y);
}

/*
 * A table whose work takes long, in a transaction of its own; false if a
 * lock could not be had in time (nothing of it is committed).
 */
static bool
apply_slow_table(ContWorker *w, ContTable *t, TimestampTz now, XLogRecPtr batch_end)
{
	MemoryContext caller = CurrentMemoryContext;
	bool		had_work = mt_cont_has_batch_work(t);
	volatile bool done = true;

	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		mt_cont_set_lock_timeout();
		commit_asynchronously();
		PushActiveSnapshot(GetTransactionSnapshot());
		(void) mt_cont_process_table(w, t, now, false);
		if (had_work)
			mt_cont_note_applied(w, list_make1(t), batch_end);
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		mt_cont_catch_lock_timeout(caller);
		done = false;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(caller);
	if (done && had_work)
		batch_done(t, batch_end);
	return done;
}

/*
 * Apply the batch; set the origin to where decoding stopped.  False if a
 * table's lock could not be had in time: the batch is applied again at the
 * next cycle, but for the tables whose work is committed already.
 *
 * The quick work of every table -- incremental steps, work kept for later,
 * recomputes measured as quick -- is committed first, in one transaction;
 * then each table whose work takes long (slow_work) in one of its own,
 * cheapest first, so that a long recompute holds back neither the others'
 * results nor one another's; then the origin's progress.  Each table's work
 * of the batch is written exactly once: the transaction that writes it
 * sets its applied_lsn to the batch's end, and after a crash that came
 * before the origin's progress, decoding skips for that table what the
 * batch held (mt_cont_in_baseline).
 */
static bool
apply_batch(ContWorker *w, XLogRecPtr batch_end)
{
	TimestampTz now = GetCurrentTimestamp();
	MemoryContext caller = CurrentMemoryContext;
	List	   *slow = NIL;
	List	   *done = NIL;
	bool		complete = true;
	ListCell   *lc;

	wait_for_visibility(w);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	mt_cont_set_lock_timeout();	/* a timeout postpones the whole batch */
	if (w->applied_lsn_kept)
		commit_asynchronously();
	PushActiveSnapshot(GetTransactionSnapshot());
	foreach(lc, w->tables)
	{
		ContTable  *t = lfirst(lc);
		bool		had_work = mt_cont_has_batch_work(t);
		bool		postponed = mt_cont_process_table(w, t, now, w->applied_lsn_kept);
		MemoryContext old = MemoryContextSwitchTo(caller);

		if (postponed)
			slow = lappend(slow, t);
		else if (had_work)
			done = lappend(done, t);
		MemoryContextSwitchTo(old);
	}
	mt_cont_note_applied(w, done, batch_end);
	/* a 1.0 catalog: the whole batch and the origin's progress at once */
	if (!w->applied_lsn_kept)
	{
		mt_cont_forget_old_baselines(batch_end);
		replorigin_session_origin_lsn = batch_end;
		replorigin_session_origin_timestamp = now;
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	replorigin_session_origin_lsn = InvalidXLogRecPtr;
	replorigin_session_origin_timestamp = 0;
	MemoryContextSwitchTo(caller);
	foreach(lc, done)
		batch_done(lfirst(lc), batch_end);

	list_sort(slow, by_full_cost);
	foreach(lc, slow)
		complete &= apply_slow_table(w, lfirst(lc), now, batch_end);
	list_free(slow);
	list_free(done);
	if (!complete)
		return false;

	if (w->applied_lsn_kept)
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		mt_cont_set_lock_timeout();
		PushActiveSnapshot(GetTransactionSnapshot());
		mt_cont_forget_old_baselines(batch_end);
		PopActiveSnapshot();

		replorigin_session_origin_lsn = batch_end;
		replorigin_session_origin_timestamp = now;
		CommitTransactionCommand();
		replorigin_session_origin_lsn = InvalidXLogRecPtr;
		replorigin_session_origin_timestamp = 0;
	}

	/*
	 * A table taken up in this cycle follows its changes from now on (a
	 * recompute may have changed its baseline).
	 */
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	foreach(lc, w->tables)
	{
		ContTable  *t = lfirst(lc);

		if (!t->synced || t->has_baseline || t->analysis->strategy == MT_STRATEGY_DELTAS)
			mt_cont_load_baseline(w, t);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(TopMemoryContext);
	return true;
}

/*
 * Apply the batch, unless a lock could not be had in time: then what of it
 * is not committed yet is applied at the next cycle.
 */
static bool
try_apply_batch(ContWorker *w, XLogRecPtr batch_end)
{
	MemoryContext caller = CurrentMemoryContext;
	volatile bool done = true;

	PG_TRY();
	{
		done = apply_batch(w, batch_end);
	}
	PG_CATCH();
	{
		mt_cont_catch_lock_timeout(caller);
		done = false;
	}
	PG_END_TRY();
	return done;
}

/*
 * mt_continuous_worker_cycle
 *		Decode, apply, confirm.  Returns how long to wait (ms) before the
 *		next cycle.
 */
long
mt_continuous_worker_cycle(void)
{
	ContWorker *w = &worker;
	ListCell   *lc;
	int64		min_freshness = INT64_MAX;

	if (w->tables == NIL)
	{
		if (w->decoding)
			mt_continuous_worker_stop(true);
		return 10000;
	}
	if (!mt_cont_ensure_decoding(w))
		return 5000;

	if (!w->batch_pending)
	{
		if (!mt_cont_acquire_slot(w))
			return 0;			/* gone meanwhile: start over at once */
		/* the previous batch is committed: the slot may release its WAL */
		if (w->confirm_lsn != InvalidXLogRecPtr)
			LogicalConfirmReceivedLocation(w->confirm_lsn);
		/* what committed before this is read in this cycle (unless it is full) */
		w->batch_horizon = GetCurrentTimestamp();
		mt_cont_batch_reset(w);
		w->batch_start = w->decoding->reader->EndRecPtr;
		mt_cont_decode_batch(w);
		w->pending_end = w->decoding->reader->EndRecPtr;
		mt_batch_snapshot_reset(w->pending_end);
		w->batch_pending = true;
	}
	if (!try_apply_batch(w, w->pending_end))
		return 200;				/* DDL holds something: again shortly */
	w->batch_pending = false;
	w->confirm_lsn = w->pending_end;
	if (!w->batch_full)
		mt_worker_set_horizon(w->batch_horizon);
	pgstat_report_activity(STATE_IDLE, NULL);

	foreach(lc, w->tables)
		min_freshness = Min(min_freshness, ((ContTable *) lfirst(lc))->freshness);
	if (w->batch_full)
		return 0;
	/*
	 * Cycle often enough that a change is applied within the shortest
	 * freshness (the wait for the cycle, then the cycle itself), and not
	 * more: a cycle's work -- pruning each page of a table it updates,
	 * statements, commits -- grows with the number of cycles more than
	 * with the changes, and the sources' writers share the machine with
	 * it.  As Flink's continuous mode checkpoints once per freshness.
	 */
	return Max(100, Min(1000, min_freshness / 1000 * 3 / 4));
}

/*
 * mt_continuous_worker_stop
 *		Close decoding; with drop, also remove the slot and the origin
 *		(no CONTINUOUS table left, or the extension is gone).
 */
void
mt_continuous_worker_stop(bool drop)
{
	mt_cont_stop_decoding(&worker, drop);
}
