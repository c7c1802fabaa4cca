/*-------------------------------------------------------------------------
 *
 * src/continuous/apply.c
 *	  CONTINUOUS refresh mode: one table's work of a batch.
 *
 * A table that is due gets its work done now -- the rows of the keys it
 * names recomputed (KEYS), the adjustments applied (DELTAS), or all of it
 * recomputed -- in a subtransaction, so that its failure costs only that
 * table, whose work is then kept.  The others (suspended, or not due yet)
 * get it written to change_keys / change_deltas, for later.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "pgstat.h"
#include "catalog/pg_type.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/history.h"
#include "mt/continuous/cycle_int.h"
#include "mt/continuous/partial_log.h"
#include "mt/continuous/kept_rows.h"
#include "mt/continuous/key_columns.h"
#include "mt/materialized_table.h"
#include "mt/utils/extension.h"

/* a full recompute measured under this is done with the quick work */
#define QUICK_RECOMPUTE_MS		50

/*
 * A node's table that forwards keys (follow_keys): its work is to log the
 * key values its changes name, in its columns' order, for the coordinator
 * to recompute -- or that everything changed.  It holds no rows.
 */
static void
forward_keys(ContTable *t, TableState *st)
{
	bool		everything = t->full || st->needs_full || !st->synced ||
		t->analysis->strategy != MT_STRATEGY_KEYS || !mt_cont_changes_layout_current(t) ||
		list_length(t->analysis->uses) != 1;
	List	   *logged = st->pending_since ? mt_cont_logged_keys(t->relid) : NIL;
	Relation	rel = relation_open(t->relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	int			ncols = 0;
	List	   *keys = NIL;

	for (int i = 0; i < desc->natts; i++)
		ncols += !TupleDescAttr(desc, i)->attisdropped;
	if (!everything)
	{
		MtSourceUse *use = linitial(t->analysis->uses);
		int			nkey = list_length(use->key_columns);
		int		   *place = palloc(sizeof(int) * (nkey + 1));
		Oid		   *types = palloc(sizeof(Oid) * (nkey + 1));
		List	   *named = NIL;
		ListCell   *lc;
		Oid			save_userid;
		int			save_sec;
		int			save_nestlevel;

		/* where each key column of the use is among the table's */
		foreach(lc, use->key_columns)
		{
			AttrNumber	attnum = get_attnum(t->relid, strVal(lfirst(lc)));
			int			i = foreach_current_index(lc);

			place[i] = -1;
			if (attnum > 0 && attnum <= ncols)
			{
				place[i] = attnum - 1;
				types[i] = TupleDescAttr(desc, attnum - 1)->atttypid;
			}
			everything |= (place[i] < 0 || use->key_sql != NULL);
		}
		everything |= (nkey != ncols);
		if (t->keys && !everything)
		{
			HASH_SEQ_STATUS status;
			KeyEntry   *e;

			hash_seq_init(&status, t->keys);
			while ((e = hash_seq_search(&status)) != NULL)
				named = lappend(named, e);
		}
		foreach(lc, logged)
			named = lappend(named, lfirst(lc));
		/* (a domain's input checks are the owner's code) */
		mt_run_as_owner_begin(t->analysis->owner, &save_userid, &save_sec, &save_nestlevel);
		foreach(lc, everything ? NIL : named)
		{
			KeyEntry   *e = lfirst(lc);
			char	  **key;

			if (e->key.tag != use->family || e->key.n != nkey)
				continue;
			key = palloc0(sizeof(char *) * (ncols + 1));
			for (int i = 0; i < nkey; i++)
				key[place[i]] = mt_portable_convert(types[i], e->key.values[i], true);
			keys = lappend(keys, key);
		}
		mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
	}
	relation_close(rel, AccessShareLock);
	mt_partial_log_named(t->relid, keys, ncols, everything);
	if (logged != NIL)
		mt_cont_forget_logged_keys(t->relid);
	t->cycle_strategy = t->analysis->strategy;
	mt_cont_note_applied_now(t->relid, GetCurrentTimestamp());
	mt_catalog_set_last_refresh(t->relid, GetCurrentTransactionStartTimestamp());
}

/* Do the table's work now. */
static MtRefreshCounts
apply_table(ContWorker *w, ContTable *t, TableState *st)
{
	MtRefreshCounts counts = {0};
	bool		full = t->full || st->needs_full || !st->synced ||
		t->analysis->strategy == MT_STRATEGY_FULL || !mt_cont_changes_layout_current(t);
	MtRefreshRequest req = {0};
	int64		nkeys = 0;
	bool		had_logged = false;
	List	   *named;
	TimestampTz start = GetCurrentTimestamp();
	bool		sides = false;

	if (t->forwards)
	{
		forward_keys(t, st);
		return counts;
	}

	if (t->analysis->strategy == MT_STRATEGY_DELTAS && mt_cont_own_rows(t) &&
		(!st->deltas || !mt_deltas_in_place_possible(t->analysis, t->relid, t->query_view)))
	{
		mt_cont_keep_state(t);
		full = true;
	}
	if (!full)
	{
		sides = mt_cont_sides_decide(w, t);
		full = t->full;
	}
	named = full ? NIL : mt_cont_named_keys(t, st, &nkeys, &had_logged);
	/* (keys computed from the changed rows may have failed) */
	if (t->full)
	{
		full = true;
		named = NIL;
	}
	req.relid = t->relid;
	if (named != NIL && mt_cont_full_is_cheaper(t, named, nkeys))
		full = true;
	/*
	 * of grouping sets, the groups a change of a join's other source names
	 * are in every set, most of them rows the filter cannot name: the cycle
	 * recomputes
	 */
	if (named != NIL && t->analysis->grouping_sets != NIL)
		full = true;
	else if (!full && t->analysis->strategy == MT_STRATEGY_KEYS)
	{
		req.filter = named;
		if (req.filter != NIL && t->analysis->rows_kept)
			counts = mt_kept_rows_refresh(t->relid, t->analysis, named);
		else if (req.filter != NIL)
		{
			req.source_sql = mt_keys_pushed_sql(t->analysis, named, t->relid);
			counts = mt_refresh_rows(&req);
		}
		mt_cont_measure_keys(t, nkeys, start);
	}
	else if (!full && t->analysis->strategy == MT_STRATEGY_DELTAS && mt_cont_own_rows(t))
	{
		MtDeltaSet *set = mt_cont_batch_deltas(t, st->pending_since != 0, sides);
		int64		written = -1;

		if (sides)
			PopActiveSnapshot();
		sides = false;

		if (mt_deltas_saw_null_sum(set))
			mt_cont_keep_state(t);
		else
			written = mt_deltas_apply_in_place(set);
		/* not applied: recomputed in full, below */
		full = (written < 0);
		if (!full && named != NIL)
		{
			start = GetCurrentTimestamp();
			counts = mt_cont_recompute_groups(t, named);
			mt_cont_measure_keys(t, nkeys, start);
		}
		counts.inserted += Max(written, 0);
		if (!full && st->pending_since)
			mt_cont_forget_logged_deltas(t->relid);
	}
	else if (!full && t->analysis->strategy == MT_STRATEGY_DELTAS)
	{
		MtDeltaSet *set = mt_cont_batch_deltas(t, st->pending_since != 0, sides);
		bool		whole;
		List	   *reread;
		int64		nreread;

		if (sides)
			PopActiveSnapshot();
		sides = false;

		req.filter = mt_deltas_apply(set, &whole, &reread, &nreread);
		/*
		 * a NaN or an infinity summed, or a global min or max removed:
		 * recomputed in full, below
		 */
		full = mt_deltas_inexact(set);
		/* groups whose min or max may be gone: re-read with those named */
		named = list_concat(named, reread);
		nkeys += nreread;
		if (!full && named != NIL)
		{
			start = GetCurrentTimestamp();
			mt_cont_recompute_groups(t, named);
			mt_cont_measure_keys(t, nkeys, start);
			req.filter = list_concat(req.filter, named);
		}
		req.source_view = mt_deltas_derived_view(t->relid);
		/* the touched groups alone: matched by their group columns */
		req.by_key = (named == NIL);
		/* the first rows by ORDER BY may now come from any group */
		if (t->analysis->topk && req.filter != NIL)
		{
			req.filter = NIL;
			whole = true;
		}
		if (!full && (req.filter != NIL || whole))
			counts = mt_refresh_rows(&req);
		if (!full && st->pending_since)
			mt_cont_forget_logged_deltas(t->relid);
	}
	if (sides)
		PopActiveSnapshot();	/* (not needed after all: recomputed) */
	if (had_logged && !full)
		mt_cont_forget_logged_keys(t->relid);
	if (full)
	{
		start = GetCurrentTimestamp();
		counts = mt_cont_recompute_full(t);
		t->full_ms = mt_cont_measured(t->full_ms, mt_cont_elapsed_ms(start));
	}
	t->cycle_strategy = full ? MT_STRATEGY_FULL : t->analysis->strategy;

	mt_cont_note_applied_now(t->relid, GetCurrentTimestamp());
	mt_catalog_set_last_refresh(t->relid, GetCurrentTransactionStartTimestamp());
	return counts;
}

/* Keep the table's work for later. */
static void
defer_table(ContWorker *w, ContTable *t, TableState *st)
{
	TimestampTz oldest = t->oldest;
	bool		sides = false;

	if (!t->full && mt_cont_changes_layout_current(t))
		sides = mt_cont_sides_decide(w, t);
	if (t->full || !mt_cont_changes_layout_current(t))
		mt_cont_need_full(t->relid);
	else
	{
		/* keys: of a KEYS table, or of the sources a DELTAS table joins */
		mt_cont_log_keys(t);
		if (t->analysis->strategy == MT_STRATEGY_DELTAS &&
			(t->changes || t->folded || (sides && t->side_changes)))
			mt_deltas_log(mt_cont_batch_deltas(t, false, sides));
	}
	if (sides)
		PopActiveSnapshot();
	if (oldest == 0)
		return;
	mt_cont_note_pending(t->relid, oldest);
}

/*
 * After a table failed: keep its work for the next try.  If even that
 * fails (keeping adjustments evaluates the query's expressions on the
 * changed rows, which may be what failed), the table waits for a full
 * recompute instead: its failure must not fail the cycle of every table,
 * which would then be decoded and fail again, for ever.  Giving way to a
 * lock holder while keeping postpones the whole batch, as elsewhere.
 */
static void
keep_after_failure(ContWorker *w, ContTable *t, TableState *st)
{
	MtSubxact	sub;
	ErrorData  *volatile edata = NULL;

	mt_subxact_begin(&sub);
	PG_TRY();
	{
		defer_table(w, t, st);
		mt_subxact_commit(&sub);
	}
	PG_CATCH();
	{
		edata = mt_subxact_rollback(&sub);
	}
	PG_END_TRY();
	if (edata == NULL || mt_cont_dropped_meanwhile(t->relid))
		return;
	if (mt_cont_gave_way(edata))
		ReThrowError(edata);
	ereport(LOG,
			(errmsg("materialized_table could not keep the changes of \"%s\" for later: %s",
					get_rel_name(t->relid), edata->message),
			 errdetail("The table is recomputed in full when it is tried again.")));
	mt_cont_table_gives_up(t);
	defer_table(w, t, st);
}

/*
 * Will the table's work take long -- a full recompute not measured as
 * quick?  It is done in a transaction of its own, after the others'.
 */
static bool
slow_work(ContTable *t, TableState *st)
{
	bool		full = t->full || st->needs_full || !st->synced ||
		t->analysis->strategy == MT_STRATEGY_FULL;

	return full && !(t->full_ms > 0 && t->full_ms < QUICK_RECOMPUTE_MS);
}

/*
 * Apply or keep one table's work in a subtransaction; on failure keep the
 * work, record the failure and try again after a back-off
 * (mt_cont_retry_time).
 * With quick_only, work that will take long (slow_work) is left for the
 * caller, and true returned.
 */
bool
mt_cont_process_table(ContWorker *w, ContTable *t, TimestampTz now, bool quick_only)
{
	MtSubxact	sub;
	TableState	st;
	TimestampTz pending;
	TimestampTz started = GetCurrentTimestamp();
	bool		due;
	bool		applied = false;
	MtRefreshCounts counts = {0};

	st = mt_cont_read_state(t->relid);
	if (!st.exists)
		return false;			/* dropped meanwhile */
	if (!st.synced && t->synced)
		return false;			/* its query changed: taken up again next cycle */
	pending = st.pending_since;
	if (t->oldest && (pending == 0 || t->oldest < pending))
		pending = t->oldest;
	if (!mt_cont_has_batch_work(t) && st.synced && !st.needs_full && pending == 0 &&
		!(st.poll && TimestampDifferenceExceeds(st.last_apply, now, t->freshness / 1000)))
		return false;

	/* a table is due when its oldest waiting change is half its freshness old */
	due = !st.synced || st.needs_full || st.poll ||
		(pending != 0 && now - pending >= t->freshness / 2) ||
		(mt_cont_has_batch_work(t) && t->freshness <= 2 * USECS_PER_SEC);
	if (now < t->retry_after)
		due = false;			/* it failed a moment ago */
	if (quick_only && due && !st.suspended && slow_work(t, &st))
		return true;			/* in a transaction of its own (apply_batch) */

	mt_subxact_begin(&sub);
	PG_TRY();
	{
		if (st.suspended || !due || !mt_cont_lock_for_apply(t))
			defer_table(w, t, &st);
		else
		{
			pgstat_report_activity(STATE_RUNNING,
								   psprintf("materialized_table: maintaining %s",
											get_rel_name(t->relid)));
			counts = apply_table(w, t, &st);
			applied = true;
		}
		mt_subxact_commit(&sub);
	}
	PG_CATCH();
	{
		ErrorData  *edata = mt_subxact_rollback(&sub);

		if (mt_cont_dropped_meanwhile(t->relid))
			return false;
		if (mt_cont_gave_way(edata))
		{
			/* DDL on something the query reads: not a failure, try again soon */
			t->retry_after = TimestampTzPlusMilliseconds(now, 1000);
			keep_after_failure(w, t, &st);
			return false;
		}
		ereport(LOG,
				(errmsg("materialized_table could not maintain \"%s\": %s",
						get_rel_name(t->relid), edata->message)));
		t->failures++;
		t->retry_after = mt_cont_retry_time(now, t->freshness, t->failures);
		keep_after_failure(w, t, &st);
		{
			MtHistoryRun *run = mt_history_start(t->relid, mt_trigger_name(MT_TRIGGER_CONTINUOUS),
												 NULL, started, false);

			mt_history_failed(run, edata->message);
		}
		return false;
	}
	PG_END_TRY();

	if (applied)
	{
		MtHistoryRun *run = mt_history_start(t->relid, mt_trigger_name(MT_TRIGGER_CONTINUOUS),
											 NULL, started, false);

		t->failures = 0;

		mt_history_succeeded(run, counts.inserted + counts.deleted,
							 mt_strategy_name(t->cycle_strategy));
	}
	return false;
}
