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
 *	   row itself (DELTAS), or "everything" (FULL, TRUNCATE, too much).
 *	   With DELTAS joins, the slot holds an xmin from before decoding until
 *	   the batch is applied (the delta rule's snapshot: see
 *	   continuous/snapshot.c);
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
 * This file holds the cycle itself and all the worker keeps between cycles
 * (ContWorker); the files it calls, one per concern, are listed in
 * mt/continuous/cycle_int.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "replication/logical.h"
#include "replication/origin.h"
#include "replication/slot.h"
#include "storage/procarray.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "mt/bgw/launcher.h"
#include "mt/continuous/continuous.h"
#include "mt/continuous/cycle_int.h"
#include "mt/continuous/snapshot.h"

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
 * Does a table join sources whose changes all adjust it (the delta rule,
 * whose snapshot needs the slot to hold an xmin: continuous/snapshot.c)?
 */
static bool
joins_by_deltas(ContWorker *w)
{
	ListCell   *lc;

	foreach(lc, w->tables)
	{
		ContTable  *t = lfirst(lc);

		if (t->analysis->strategy == MT_STRATEGY_DELTAS && t->analysis->delta_join)
			return true;
	}
	return false;
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
		/* for the delta rule's snapshots, until the batch is applied */
		mt_batch_hold(joins_by_deltas(w));
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
	if (mt_batch_holding() && mt_cont_acquire_slot(w))
	{
		mt_batch_hold(false);
		ReplicationSlotRelease();
	}
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
