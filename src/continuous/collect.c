/*-------------------------------------------------------------------------
 *
 * src/continuous/collect.c
 *	  CONTINUOUS refresh mode: the change sink, what decoding hands over.
 *
 * Decoding hands each change of a committed transaction to the sink
 * below, with the relation as the transaction saw it.  The interests of
 * that relation (the uses of it by the tables followed, built when
 * decoding first meets it) say what each table needs: key values (KEYS,
 * and the other sources of a DELTAS join), the row itself (DELTAS), or
 * "everything" (a full recompute: FULL, TRUNCATE, too much, a row that
 * cannot be read).  What a table needs is kept in its ContTable, in the
 * batch's memory, until the batch is applied.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/tupconvert.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "common/int.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"

#include "mt/continuous/cycle_int.h"
#include "mt/utils/relations.h"

/* past these, a table (or the batch) gives up details and recomputes */
#define MAX_TABLE_CHANGES		250000
#define MAX_BATCH_CHANGES		200000

/* A use of a relation by a table, as decoding meets it. */
typedef struct Interest
{
	ContTable  *table;
	MtSourceUse *use;
	int			nkeys;
	AttrNumber *attnums;		/* in the decoded relation's layout */
	FmgrInfo   *out;
	TupleConversionMap *to_source;	/* a partition's or child's layout ->
									 * the source's */
	/* use->filter, prepared when first needed (filter_of) */
	bool		filter_built;
	ExprState  *filter;
	EState	   *filter_estate;
	TupleTableSlot *filter_slot;
	TupleDesc	filter_layout;	/* the source's, as it was prepared */
} Interest;

typedef struct InterestEntry
{
	Oid			relid;			/* hash key: a decoded relation */
	List	   *interests;		/* Interest */
	TupleDesc	layout;			/* the relation's, as the interests were made */
	bool		built;
} InterestEntry;

/* ---------------------------------------------------------------------
 * Interests
 * ---------------------------------------------------------------------
 */

static Interest *
make_interest(ContWorker *w, ContTable *t, MtSourceUse *use, Relation rel, Relation source)
{
	Interest   *in = palloc0(sizeof(Interest));
	ListCell   *lc;
	int			i = 0;

	in->table = t;
	in->use = use;
	in->nkeys = list_length(use->attnums);
	in->attnums = palloc(sizeof(AttrNumber) * (in->nkeys + 1));
	in->out = palloc(sizeof(FmgrInfo) * (in->nkeys + 1));
	if (rel != source)
		in->to_source = convert_tuples_by_name(RelationGetDescr(rel), RelationGetDescr(source));
	foreach(lc, use->attnums)
	{
		AttrNumber	attnum = lfirst_int(lc);
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(source), attnum - 1);
		Oid			typoutput;
		bool		varlena;

		/* the decoded relation may be a partition with its own numbering */
		if (rel != source)
			attnum = get_attnum(RelationGetRelid(rel), NameStr(att->attname));
		in->attnums[i] = attnum;
		getTypeOutputInfo(att->atttypid, &typoutput, &varlena);
		fmgr_info_cxt(typoutput, &in->out[i], w->tables_context);
		i++;
	}
	return in;
}

/*
 * The relation's layout changed in the batch (DDL): the rows of the DELTAS
 * tables reading it so far are in the old one, and what was made for them
 * no longer fits.  Those tables are recomputed; the interests are made
 * again for the new layout, and the queries' analyses, which name the old
 * row type, before the next batch.
 */
static void
layout_changed(ContWorker *w, InterestEntry *entry)
{
	ListCell   *lc;

	foreach(lc, entry->interests)
	{
		Interest   *in = lfirst(lc);

		if (in->table->analysis->strategy == MT_STRATEGY_DELTAS &&
			in->use->relid == in->table->analysis->delta_source)
			mt_cont_table_gives_up(in->table);
	}
	w->reread_wanted = true;
}

/*
 * The interests of a decoded relation: its own uses, and those of the
 * tables it is a partition or an inheritance child of, where the query
 * reads them with their children.  Built on first use, with the catalog as
 * decoding sees it; made again when the relation's cache entry is
 * invalidated (an ATTACH, DETACH, INHERIT or NO INHERIT changes its
 * pg_class or pg_attribute rows, which invalidates it).
 */
static InterestEntry *
interests_of(ContWorker *w, Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	InterestEntry *entry;
	bool		found;
	List	   *ancestors;
	MemoryContext old;
	ListCell   *lt;

	entry = hash_search(w->interests, &relid, HASH_ENTER, &found);
	/* (no interests: its layout does not matter) */
	if (found && entry->built &&
		(entry->interests == NIL || mt_cont_same_layout(entry->layout, RelationGetDescr(rel))))
		return entry;
	if (found && !mt_cont_same_layout(entry->layout, RelationGetDescr(rel)))
		layout_changed(w, entry);
	entry->interests = NIL;
	entry->built = true;

	old = MemoryContextSwitchTo(w->tables_context);
	ancestors = mt_ancestor_relations(relid);
	entry->layout = CreateTupleDescCopy(RelationGetDescr(rel));
	foreach(lt, w->tables)
	{
		ContTable  *t = lfirst(lt);
		ListCell   *lu;

		foreach(lu, t->analysis->uses)
		{
			MtSourceUse *use = lfirst(lu);
			Relation	source_rel;

			if (use->relid == relid)
				source_rel = rel;
			else if (use->inh && list_member_oid(ancestors, use->relid))
				source_rel = RelationIdGetRelation(use->relid);
			else
				continue;
			if (!RelationIsValid(source_rel))
				continue;
			entry->interests = lappend(entry->interests,
									   make_interest(w, t, use, rel, source_rel));
			if (source_rel != rel)
				RelationClose(source_rel);
		}
	}
	list_free(ancestors);
	MemoryContextSwitchTo(old);
	return entry;
}

/* A relation's cache entry was invalidated: its interests are made again. */
static void
interests_invalidate(Datum arg, Oid relid)
{
	ContWorker *w = (ContWorker *) DatumGetPointer(arg);
	HASH_SEQ_STATUS status;
	InterestEntry *entry;

	if (w->interests == NULL)
		return;
	if (OidIsValid(relid))
	{
		entry = hash_search(w->interests, &relid, HASH_FIND, NULL);
		if (entry)
			entry->built = false;
		return;
	}
	hash_seq_init(&status, w->interests);
	while ((entry = hash_seq_search(&status)) != NULL)
		entry->built = false;
}

/*
 * The interests of the tables followed, made afresh: none built yet, each
 * built when decoding first meets its relation.
 */
void
mt_cont_interests_reset(ContWorker *w)
{
	HASHCTL		ctl;

	w->interests = NULL;
	if (w->tables == NIL)
		return;
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(InterestEntry);
	ctl.hcxt = w->tables_context;
	w->interests = hash_create("materialized_table interests", 64, &ctl,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	if (!w->interests_callback_registered)
	{
		CacheRegisterRelcacheCallback(interests_invalidate, PointerGetDatum(w));
		w->interests_callback_registered = true;
	}
}

/* ---------------------------------------------------------------------
 * Row filters
 * ---------------------------------------------------------------------
 */

/*
 * The interest's use->filter, prepared in the tables' memory when first
 * needed, as the table's owner (preparing folds constants), as
 * mt_deltas_begin prepares the WHERE clause of one source.
 */
static ExprState *
filter_of(ContWorker *w, Interest *in)
{
	Relation	source;
	MemoryContext old;
	Oid			save_userid;
	int			save_sec;

	if (in->filter_built)
		return in->filter;
	in->filter_built = true;
	if (in->use->filter == NULL)
		return NULL;
	source = RelationIdGetRelation(in->use->relid);
	if (!RelationIsValid(source))
		return NULL;
	old = MemoryContextSwitchTo(w->tables_context);
	in->filter_layout = CreateTupleDescCopy(RelationGetDescr(source));
	RelationClose(source);
	in->filter_estate = CreateExecutorState();
	in->filter_slot = MakeSingleTupleTableSlot(in->filter_layout, &TTSOpsHeapTuple);
	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(in->table->analysis->owner, save_sec | SECURITY_RESTRICTED_OPERATION);
	in->filter = ExecPrepareQual(make_ands_implicit((Expr *) in->use->filter), in->filter_estate);
	SetUserIdAndSecContext(save_userid, save_sec);
	MemoryContextSwitchTo(old);
	return in->filter;
}

/*
 * Can a version of a changed row be in a row of the query's FROM?  A row
 * the filter cannot read (another layout, a value toasted apart) is let
 * through.
 */
static bool
passes_filter(ContWorker *w, Interest *in, Relation rel, HeapTuple tuple)
{
	ExprState  *filter = filter_of(w, in);
	ExprContext *econtext;
	HeapTuple	row = tuple;
	Oid			save_userid;
	int			save_sec;
	bool		result;

	if (filter == NULL || HeapTupleHasExternal(tuple) ||
		!mt_cont_same_layout(in->filter_layout,
							 in->to_source ? in->to_source->outdesc : RelationGetDescr(rel)))
		return true;
	econtext = GetPerTupleExprContext(in->filter_estate);
	if (in->to_source)
		row = execute_attr_map_tuple(tuple, in->to_source);
	ExecStoreHeapTuple(row, in->filter_slot, false);
	econtext->ecxt_scantuple = in->filter_slot;
	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(in->table->analysis->owner, save_sec | SECURITY_RESTRICTED_OPERATION);
	result = ExecQual(filter, econtext);
	SetUserIdAndSecContext(save_userid, save_sec);
	ResetExprContext(econtext);
	ExecClearTuple(in->filter_slot);
	if (row != tuple)
		heap_freetuple(row);
	return result;
}

/*
 * Which of a changed row's versions (old, new) can change what the query
 * shows (keep); false if neither.  Without the whole old version (no
 * REPLICA IDENTITY FULL), both are kept, as if they could: what follows
 * gives up.
 */
static bool
filter_change(ContWorker *w, Interest *in, Relation rel, char action, HeapTuple *tuples,
			  bool *keep)
{
	keep[0] = keep[1] = true;
	if (in->use->filter == NULL ||
		(action != 'I' && (tuples[0] == NULL || rel->rd_rel->relreplident != REPLICA_IDENTITY_FULL)))
		return true;
	for (int i = 0; i < 2; i++)
		keep[i] = tuples[i] == NULL || passes_filter(w, in, rel, tuples[i]);
	return (tuples[0] && keep[0]) || (tuples[1] && keep[1]) || (tuples[0] == NULL && tuples[1] == NULL);
}

/* ---------------------------------------------------------------------
 * The batch
 * ---------------------------------------------------------------------
 */

/* A new batch: nothing decoded yet. */
void
mt_cont_batch_reset(ContWorker *w)
{
	ListCell   *lc;

	MemoryContextReset(w->batch_context);
	foreach(lc, w->tables)
		mt_cont_forget_batch_work(lfirst(lc));
	w->batch_changes = 0;
	w->batch_full = false;
	w->batch_xids = NIL;
}

/* The table has no work of the batch (any more). */
void
mt_cont_forget_batch_work(ContTable *t)
{
	t->full = false;
	t->keys = NULL;
	t->nkeys = 0;
	t->changes = NIL;
	t->changes_layout = NULL;
	t->nchanges = 0;
	t->folded = NULL;
	t->oldest = 0;
	t->side_changes = NIL;
	t->side_layouts = NULL;
	t->side_keys = NIL;
	t->side_full = false;
}

/* The table is recomputed in full: the details of its work are of no use. */
void
mt_cont_table_gives_up(ContTable *t)
{
	t->full = true;
	t->keys = NULL;
	t->nkeys = 0;
	t->changes = NIL;
	t->folded = NULL;
	t->side_changes = NIL;
	t->side_keys = NIL;
}

/* Has the batch given the table anything to do? */
bool
mt_cont_has_batch_work(ContTable *t)
{
	return t->full || t->nkeys > 0 || t->changes != NIL || t->folded != NULL ||
		t->side_changes != NIL || t->side_keys != NIL || t->side_full;
}

/* Keep a key tuple (deduplicated). */
void
mt_cont_add_key(ContWorker *w, ContTable *t, int family, char **values, int n)
{
	MtStringKey probe = {family, n, values};
	KeyEntry   *e;
	bool		found;

	if (t->keys == NULL)
		t->keys = mt_string_key_create("materialized_table keys", 256, sizeof(KeyEntry),
									   w->batch_context);
	e = hash_search(t->keys, &probe, HASH_ENTER, &found);
	if (found)
		return;
	mt_string_key_keep(&e->key);
	if (++t->nkeys > MAX_TABLE_CHANGES)
		mt_cont_table_gives_up(t);
}

/* The key values a decoded row gives; false if one cannot be read. */
static bool
extract_key(Interest *in, Relation rel, HeapTuple tuple, char **values)
{
	int			i;

	for (i = 0; i < in->nkeys; i++)
	{
		bool		isnull;
		Datum		d = heap_getattr(tuple, in->attnums[i], RelationGetDescr(rel), &isnull);
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), in->attnums[i] - 1);

		if (isnull)
		{
			values[i] = NULL;
			continue;
		}
		/* an unchanged toasted value is not in the WAL */
		if (att->attlen == -1 && VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(d)))
			return false;
		values[i] = OutputFunctionCall(&in->out[i], d);
	}
	return true;
}

/*
 * Do tuples of one descriptor read the same under the other?  A column
 * changing type (ALTER TABLE ... TYPE rewrites the table), added or dropped
 * changes the layout; decoding hands over each row in the layout of its
 * time.
 */
bool
mt_cont_same_layout(TupleDesc a, TupleDesc b)
{
	if (a->natts != b->natts)
		return false;
	for (int i = 0; i < a->natts; i++)
	{
		Form_pg_attribute x = TupleDescAttr(a, i);
		Form_pg_attribute y = TupleDescAttr(b, i);

		if (x->attisdropped != y->attisdropped || x->atttypid != y->atttypid ||
			x->attlen != y->attlen || x->attbyval != y->attbyval || x->attalign != y->attalign)
			return false;
	}
	return true;
}

/*
 * Do the rows a DELTAS table keeps for applying still read right?  Applying
 * reads them with the source as it is then, which DDL committed since they
 * were decoded may have changed.
 */
bool
mt_cont_changes_layout_current(ContTable *t)
{
	Relation	source;
	bool		same;

	if (t->changes == NIL)
		return true;
	source = RelationIdGetRelation(t->analysis->delta_source);
	if (!RelationIsValid(source))
		return false;
	same = mt_cont_same_layout(t->changes_layout, RelationGetDescr(source));
	RelationClose(source);
	return same;
}

/* new - old of an integer or numeric column; false if it does not fit */
static bool
difference(Oid type, Datum new, Datum old, Datum *result, bool *zero)
{
	switch (type)
	{
		case INT2OID:
			{
				int32		d = (int32) DatumGetInt16(new) - DatumGetInt16(old);

				if (d < PG_INT16_MIN || d > PG_INT16_MAX)
					return false;
				*result = Int16GetDatum((int16) d);
				*zero = (d == 0);
				return true;
			}
		case INT4OID:
			{
				int32		d;

				if (pg_sub_s32_overflow(DatumGetInt32(new), DatumGetInt32(old), &d))
					return false;
				*result = Int32GetDatum(d);
				*zero = (d == 0);
				return true;
			}
		case INT8OID:
			{
				int64		d;

				if (pg_sub_s64_overflow(DatumGetInt64(new), DatumGetInt64(old), &d))
					return false;
				*result = Int64GetDatum(d);
				*zero = (d == 0);
				return true;
			}
		case NUMERICOID:
			{
				bool		error = false;
				Numeric		d = numeric_sub_opt_error(DatumGetNumeric(new), DatumGetNumeric(old),
													  &error);

				if (error)
					return false;
				*result = NumericGetDatum(d);
				*zero = DatumGetBool(DirectFunctionCall2(numeric_eq, new, old));
				return true;
			}
	}
	return false;
}

/*
 * An update of a delta source row that changes, among the columns its
 * table's query reads, only columns it reads as sums (sum_only_columns):
 * both versions join the same rows of the other sources and land in the
 * same group, so one row -- the new one with those columns set to new
 * minus old -- joined once gives the adjustment both would.  Returns
 * false if the update is not of that kind; else *adjust is that row, or
 * NULL when the sums do not change either (the update changes nothing
 * the table shows).
 */
static bool
fold_update(ContTable *t, TupleDesc desc, HeapTuple old, HeapTuple new, HeapTuple *adjust)
{
	Bitmapset  *sums = t->analysis->sum_only_columns;
	Datum	   *oldv = palloc(sizeof(Datum) * desc->natts);
	bool	   *oldn = palloc(sizeof(bool) * desc->natts);
	Datum	   *newv = palloc(sizeof(Datum) * desc->natts);
	bool	   *newn = palloc(sizeof(bool) * desc->natts);
	bool		changes = false;
	bool		foldable = true;

	heap_deform_tuple(old, desc, oldv, oldn);
	heap_deform_tuple(new, desc, newv, newn);
	for (int i = 0; foldable && i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		bool		zero;

		if (att->attisdropped || (oldn[i] && newn[i]))
			continue;
		if (oldn[i] != newn[i])
			foldable = false;
		else if (!bms_is_member(att->attnum, sums))
			foldable = datumIsEqual(oldv[i], newv[i], att->attbyval, att->attlen);
		else
		{
			foldable = difference(att->atttypid, newv[i], oldv[i], &newv[i], &zero);
			changes |= !zero;
		}
	}
	if (foldable)
		*adjust = changes ? heap_form_tuple(desc, newv, newn) : NULL;
	pfree(oldv);
	pfree(oldn);
	pfree(newv);
	pfree(newn);
	return foldable;
}

/*
 * Fold a changed row (old and new versions, either may be NULL) of the
 * source of a single-source DELTAS table into the batch's adjustments.
 */
static void
fold_change(ContTable *t, Interest *in, HeapTuple *tuples)
{
	int			i;

	if (t->folded == NULL)
		t->folded = mt_deltas_begin(t->relid, t->analysis);
	for (i = 0; i < 2; i++)
	{
		HeapTuple	tuple = tuples[i];

		if (tuple == NULL)
			continue;
		if (in->to_source)
			tuple = execute_attr_map_tuple(tuple, in->to_source);
		mt_deltas_add_row(t->folded, tuple, i == 0 ? -1 : 1);
		if (tuple != tuples[i])
			heap_freetuple(tuple);
	}
	/* as many groups as rows kept the other way: a recompute will do */
	if (mt_deltas_ngroups(t->folded) > MAX_TABLE_CHANGES)
		mt_cont_table_gives_up(t);
}

/*
 * Which of the join's other sources (MtAnalysis.sides) relid is, counting
 * from 1; 0 if none.
 */
static int
side_of(ContTable *t, Oid relid)
{
	ListCell   *lc;

	if (t->analysis->strategy != MT_STRATEGY_DELTAS)
		return 0;
	foreach(lc, t->analysis->sides)
		if (((MtDeltaSide *) lfirst(lc))->relid == relid)
			return foreach_current_index(lc) + 1;
	return 0;
}

/*
 * A changed row of one of a DELTAS join's other sources: kept as rows (the
 * delta rule adjusts by them), and as the key tuples it names (or
 * "everything"), which are recomputed instead when the rule cannot be
 * applied (mt_cont_sides_decide).
 */
static void
side_change(ContTable *t, int side, Interest *in, Relation rel, char action,
			HeapTuple oldtup, HeapTuple newtup, bool *keep, TransactionId xid)
{
	HeapTuple	tuples[2] = {oldtup, newtup};

	if ((action != 'I' && (oldtup == NULL ||
						   rel->rd_rel->relreplident != REPLICA_IDENTITY_FULL)) ||
		(newtup && action == 'U' && HeapTupleHasExternal(newtup)))
	{
		mt_cont_table_gives_up(t);	/* no whole old row to read, or to join */
		return;
	}
	if (t->side_layouts == NULL)
		t->side_layouts = palloc0(sizeof(TupleDesc) * list_length(t->analysis->sides));
	if (t->side_layouts[side - 1] == NULL)
		t->side_layouts[side - 1] =
			CreateTupleDescCopy(in->to_source ? in->to_source->outdesc : RelationGetDescr(rel));
	for (int i = 0; i < 2; i++)
	{
		RowChange  *rc;
		char	  **values;

		if (tuples[i] == NULL || !keep[i])
			continue;
		if (in->use->full)
			t->side_full = true;
		else if (!t->side_full)
		{
			SideKey    *k = palloc(sizeof(SideKey));

			values = palloc(sizeof(char *) * (in->nkeys + 1));
			if (!extract_key(in, rel, tuples[i], values))
				t->side_full = true;
			k->family = in->use->family;
			k->values = values;
			k->nvalues = in->nkeys;
			t->side_keys = lappend(t->side_keys, k);
		}
		rc = palloc(sizeof(RowChange));
		rc->sign = (i == 0) ? -1 : 1;
		rc->xid = xid;
		rc->side = side;
		rc->tuple = in->to_source ? execute_attr_map_tuple(tuples[i], in->to_source) :
			heap_copytuple(tuples[i]);
		t->side_changes = lappend(t->side_changes, rc);
	}
	if (++t->nchanges > MAX_TABLE_CHANGES)
		mt_cont_table_gives_up(t);
}

/* ---------------------------------------------------------------------
 * The sink
 * ---------------------------------------------------------------------
 */

/*
 * A row change decoded (arg: the worker): what each table reading the
 * relation needs of it.
 */
void
mt_cont_sink_change(void *arg, ReorderBufferTXN *txn, Relation rel, char action,
					HeapTuple oldtup, HeapTuple newtup)
{
	ContWorker *w = (ContWorker *) arg;
	InterestEntry *entry;
	MemoryContext old;
	ListCell   *lc;
	bool		relevant = false;
	bool		counted = false;
	int			side;
	HeapTuple	versions[2] = {oldtup, newtup};
	bool		keep[2];

	if (w->interests == NULL)
		return;
	entry = interests_of(w, rel);
	if (entry->interests == NIL)
		return;

	old = MemoryContextSwitchTo(w->batch_context);
	foreach(lc, entry->interests)
	{
		Interest   *in = lfirst(lc);
		ContTable  *t = in->table;

		if (!t->synced || mt_cont_in_baseline(t, txn->xid, txn->final_lsn))
			continue;
		/* a row in no row of the query's FROM, in both versions */
		if (!t->full && !filter_change(w, in, rel, action, versions, keep))
			continue;

		/*
		 * (of a table recomputed, too: the recompute must see the change, or
		 * the next batch starts past it)
		 */
		relevant = true;
		if (t->oldest == 0 || txn->xact_time.commit_time < t->oldest)
			t->oldest = txn->xact_time.commit_time;
		if (t->full)
			continue;
		counted = true;
		if ((side = side_of(t, in->use->relid)) > 0)
		{
			side_change(t, side, in, rel, action, oldtup, newtup, keep, txn->xid);
			continue;
		}
		if (in->use->full || t->analysis->strategy == MT_STRATEGY_FULL ||
			(action != 'I' && (oldtup == NULL ||
							   rel->rd_rel->relreplident != REPLICA_IDENTITY_FULL)))
		{
			/* no whole old row to read (replica identity not FULL): recompute */
			mt_cont_table_gives_up(t);
			continue;
		}

		/* through a join, changes of the other sources name groups */
		if (t->analysis->strategy == MT_STRATEGY_KEYS ||
			in->use->relid != t->analysis->delta_source)
		{
			char	  **values = palloc(sizeof(char *) * (in->nkeys + 1));

			if (oldtup && keep[0] && !extract_key(in, rel, oldtup, values))
				mt_cont_table_gives_up(t);
			else if (oldtup && keep[0])
				mt_cont_add_key(w, t, in->use->family, values, in->nkeys);
			if (newtup && keep[1] && !t->full)
			{
				if (!extract_key(in, rel, newtup, values))
					mt_cont_table_gives_up(t);
				else
					mt_cont_add_key(w, t, in->use->family, values, in->nkeys);
			}
		}
		else
		{
			HeapTuple	tuples[2] = {oldtup, newtup};
			HeapTuple	adjust;
			bool		folded = false;
			int			i;

			if (newtup && action == 'U' && HeapTupleHasExternal(newtup))
			{
				mt_cont_table_gives_up(t);
				continue;
			}
			for (i = 0; i < 2; i++)
				if (!keep[i])
					tuples[i] = NULL;
			if (t->analysis->fold_while_decoding)
			{
				fold_change(t, in, tuples);
				continue;
			}
			if (t->changes_layout == NULL)
				t->changes_layout = CreateTupleDescCopy(in->to_source ? in->to_source->outdesc
														: RelationGetDescr(rel));
			/* kept as copies in the source's layout */
			for (i = 0; i < 2; i++)
				if (tuples[i])
					tuples[i] = in->to_source ?
						execute_attr_map_tuple(tuples[i], in->to_source) :
						heap_copytuple(tuples[i]);
			if (tuples[0] && tuples[1] && t->analysis->sum_only_columns &&
				fold_update(t, t->changes_layout, tuples[0], tuples[1], &adjust))
			{
				/* one row for both, or none */
				heap_freetuple(tuples[0]);
				heap_freetuple(tuples[1]);
				tuples[0] = NULL;
				tuples[1] = adjust;
				folded = true;
			}
			for (i = 0; i < 2; i++)
			{
				RowChange  *rc;

				if (tuples[i] == NULL)
					continue;
				rc = palloc(sizeof(RowChange));
				rc->sign = (i == 0) ? -1 : folded ? 0 : 1;
				rc->xid = txn->xid;
				rc->tuple = tuples[i];
				t->changes = lappend(t->changes, rc);
			}
			if (++t->nchanges > MAX_TABLE_CHANGES)
				mt_cont_table_gives_up(t);
		}
	}
	if (relevant)
		mt_cont_note_batch_xid(w, txn->xid);
	if (counted && ++w->batch_changes > MAX_BATCH_CHANGES)
		w->batch_full = true;
	MemoryContextSwitchTo(old);
}

/*
 * The batch has work from transaction xid: the snapshots that apply it
 * must see it committed (wait_for_visibility).  A recompute that does not
 * may even read a relation the transaction truncated, its new file, as of
 * before the transaction: empty.
 */
void
mt_cont_note_batch_xid(ContWorker *w, TransactionId xid)
{
	MemoryContext old = MemoryContextSwitchTo(w->batch_context);

	/* TransactionIds kept in an OID list: both are 32-bit */
	if (w->batch_xids == NIL || (TransactionId) llast_oid(w->batch_xids) != xid)
		w->batch_xids = lappend_oid(w->batch_xids, (Oid) xid);
	MemoryContextSwitchTo(old);
}

/* A TRUNCATE decoded: the tables reading the relation are recomputed. */
void
mt_cont_sink_truncate(void *arg, ReorderBufferTXN *txn, Relation rel)
{
	ContWorker *w = (ContWorker *) arg;
	InterestEntry *entry;
	ListCell   *lc;

	if (w->interests == NULL)
		return;
	entry = interests_of(w, rel);
	foreach(lc, entry->interests)
	{
		ContTable  *t = ((Interest *) lfirst(lc))->table;

		if (!t->synced || mt_cont_in_baseline(t, txn->xid, txn->final_lsn))
			continue;
		mt_cont_table_gives_up(t);
		mt_cont_note_batch_xid(w, txn->xid);
		if (t->oldest == 0 || txn->xact_time.commit_time < t->oldest)
			t->oldest = txn->xact_time.commit_time;
	}
}

void
mt_cont_sink_commit(void *arg, ReorderBufferTXN *txn, XLogRecPtr commit_lsn)
{
}
