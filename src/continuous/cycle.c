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
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "replication/logical.h"
#include "replication/origin.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/guc.h"
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
#include "mt/continuous/snapshot.h"
#include "mt/materialized_table.h"

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
