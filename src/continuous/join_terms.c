/*-------------------------------------------------------------------------
 *
 * src/continuous/join_terms.c
 *	  CONTINUOUS refresh mode: the adjustments a DELTAS table's batch makes.
 *
 * A single source's changed rows adjust the groups they land in.  Through
 * a join, delta_source's changed rows are joined with the other sources;
 * when the other sources changed too, the delta rule adds a term for every
 * set of the changed sources, read with a snapshot that sees exactly what
 * the batch decoded (continuous/snapshot.c).  A change a group's baseline
 * saw adds nothing to that group (see Baselines in cycle.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "mt/continuous/cycle_int.h"
#include "mt/continuous/snapshot.h"

/*
 * Changed rows of one sign, by the baselines that saw them; or, merged
 * (signed_classes), of both signs, each row's in signs.
 */
typedef struct RowClass
{
	int			sign;			/* -1, 1, 0 (adjustments), or MIXED_SIGNS */
	Bitmapset  *mask;			/* which baselines saw them */
	List	   *tuples;			/* HeapTuple */
	List	   *signs;			/* int: with signed rows, each tuple's */
} RowClass;

#define MIXED_SIGNS		2

/* A changed row, to find the same row taken away again (cancel_out). */
typedef struct RowImage
{
	uint32		hash;
	int			position;		/* in its class */
	HeapTuple	tuple;
} RowImage;

/* A row's columns, as bytes: the same bytes are the same row. */
static uint32
row_hash(HeapTuple tuple)
{
	Size		start = offsetof(HeapTupleHeaderData, t_bits);

	return hash_bytes((const unsigned char *) tuple->t_data + start, tuple->t_len - start);
}

static bool
same_row(HeapTuple a, HeapTuple b)
{
	Size		start = offsetof(HeapTupleHeaderData, t_bits);

	return a->t_len == b->t_len &&
		HeapTupleHeaderGetNatts(a->t_data) == HeapTupleHeaderGetNatts(b->t_data) &&
		(a->t_data->t_infomask & HEAP_HASNULL) == (b->t_data->t_infomask & HEAP_HASNULL) &&
		a->t_data->t_hoff == b->t_data->t_hoff &&
		memcmp((char *) a->t_data + start, (char *) b->t_data + start, a->t_len - start) == 0;
}

static int
by_hash(const void *a, const void *b)
{
	uint32		x = ((const RowImage *) a)->hash;
	uint32		y = ((const RowImage *) b)->hash;

	return (x > y) - (x < y);
}

/*
 * Rows a batch added and took away again (a row updated twice gives its
 * middle version both ways) add nothing to any term of the delta rule,
 * which is linear in each source's changed rows: cancelled, they leave
 * terms the size of what changed, not of how often (a customer moved ten
 * times in a batch is two rows, not twenty, in every product with the
 * changed orders).  removed and added are classes of the same baselines.
 */
static void
cancel_out(RowClass *removed, RowClass *added)
{
	int			n = list_length(removed->tuples);
	RowImage   *images = palloc(sizeof(RowImage) * n);
	bool	   *gone = palloc0(sizeof(bool) * n);
	List	   *kept = NIL;
	ListCell   *lc;

	foreach(lc, removed->tuples)
	{
		RowImage   *image = &images[foreach_current_index(lc)];

		image->tuple = lfirst(lc);
		image->hash = row_hash(image->tuple);
		image->position = foreach_current_index(lc);
	}
	qsort(images, n, sizeof(RowImage), by_hash);
	foreach(lc, added->tuples)
	{
		HeapTuple	tuple = lfirst(lc);
		uint32		hash = row_hash(tuple);
		int			lo = 0;
		int			hi = n;
		bool		cancelled = false;

		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			if (images[mid].hash < hash)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && images[lo].hash == hash && !cancelled; lo++)
			if (!gone[images[lo].position] && same_row(images[lo].tuple, tuple))
				gone[images[lo].position] = cancelled = true;
		if (!cancelled)
			kept = lappend(kept, tuple);
	}
	added->tuples = kept;
	kept = NIL;
	foreach(lc, removed->tuples)
		if (!gone[foreach_current_index(lc)])
			kept = lappend(kept, lfirst(lc));
	removed->tuples = kept;
}

/* The class of classes with this sign and mask, or NULL. */
static RowClass *
class_of(List *classes, int sign, Bitmapset *mask)
{
	ListCell   *lc;

	foreach(lc, classes)
	{
		RowClass   *c = lfirst(lc);

		if (c->sign == sign && bms_equal(c->mask, mask))
			return c;
	}
	return NULL;
}

/*
 * The classes with the rows of both signs of each baseline mask merged,
 * their signs beside them, so that a term is one query for both (its
 * planning and its joins' startup once, not per sign and per product of
 * signs).  Not with a min or max among the aggregates, whose rows taken
 * away are told apart in the state (mt_deltas_add_term's factor).
 * Adjustment rows stay a class of their own, of sign 1 each.
 */
static List *
signed_classes(List *classes)
{
	List	   *merged = NIL;
	ListCell   *lc;

	foreach(lc, classes)
	{
		RowClass   *c = lfirst(lc);
		RowClass   *into = c->sign == 0 ? NULL : class_of(merged, MIXED_SIGNS, c->mask);
		ListCell   *lt;

		if (into == NULL)
		{
			into = palloc0(sizeof(RowClass));
			into->sign = c->sign == 0 ? 0 : MIXED_SIGNS;
			into->mask = c->mask;
			merged = lappend(merged, into);
		}
		foreach(lt, c->tuples)
		{
			into->tuples = lappend(into->tuples, lfirst(lt));
			into->signs = lappend_int(into->signs, c->sign == 0 ? 1 : c->sign);
		}
	}
	return merged;
}

static List *
row_classes(List *changes, List *baselines, bool signed_rows)
{
	List	   *classes = NIL;
	ListCell   *lc;

	foreach(lc, changes)
	{
		RowChange  *rc = lfirst(lc);
		Bitmapset  *mask = NULL;
		ListCell   *lb;
		RowClass   *class;

		foreach(lb, baselines)
			if (mt_cont_saw(&((GroupBaseline *) lfirst(lb))->seen, rc->xid))
				mask = bms_add_member(mask, foreach_current_index(lb));
		class = class_of(classes, rc->sign, mask);
		if (class == NULL)
		{
			class = palloc0(sizeof(RowClass));
			class->sign = rc->sign;
			class->mask = mask;
			classes = lappend(classes, class);
		}
		class->tuples = lappend(class->tuples, rc->tuple);
	}
	foreach(lc, classes)
	{
		RowClass   *removed = lfirst(lc);
		ListCell   *la;

		if (removed->sign != -1)
			continue;
		foreach(la, classes)
		{
			RowClass   *added = lfirst(la);

			if (added->sign == 1 && bms_equal(added->mask, removed->mask))
				cancel_out(removed, added);
		}
	}
	return signed_rows ? signed_classes(classes) : classes;
}

/* The groups of the baselines in mask: their rows get nothing from a term. */
static List *
excluded_groups(List *baselines, Bitmapset *mask)
{
	List	   *exclude = NIL;
	int			b = -1;

	while ((b = bms_next_member(mask, b)) >= 0)
		exclude = list_concat(exclude, ((GroupBaseline *) list_nth(baselines, b))->groups);
	return exclude;
}

/* A source's changed rows in a term of the delta rule. */
typedef struct TermMember
{
	int			member;			/* 0: delta_source; n: the n-th side */
	Oid			relid;
	List	   *classes;		/* RowClass */
} TermMember;

#define MAX_TERM_SOURCES	4		/* changed sources of one batch */

/*
 * The terms of one set of changed sources (bits of set, over members):
 * the query's rows with each replaced by its changed rows, counted with
 * the product of their signs, and with a minus sign for an even number of
 * sources (inclusion-exclusion).  A product with an adjustment row of
 * delta_source (sign 0, new minus old of summed columns) counts its sums
 * alone.  Each combination of the members' classes is one query, which
 * leaves out the groups of the baselines that saw any of its rows.
 */
static void
add_term_set(ContTable *t, MtDeltaSet *set, List *baselines, TermMember *members, int nmembers,
			 int bits)
{
	List	   *ids = NIL;
	TermMember *in[MAX_TERM_SOURCES];
	int			pick[MAX_TERM_SOURCES];
	int			n = 0;
	int			sign;
	const char *sql;

	for (int i = 0; i < nmembers; i++)
		if (bits & (1 << i))
		{
			in[n++] = &members[i];
			ids = lappend_int(ids, members[i].member);
		}
	sign = (n % 2 == 1) ? 1 : -1;
	sql = mt_analysis_term_sql(t->analysis, ids, !t->analysis->extrema);
	memset(pick, 0, sizeof(pick));
	for (;;)
	{
		Oid			relids[MAX_TERM_SOURCES];
		List	   *tuples[MAX_TERM_SOURCES];
		List	   *signs[MAX_TERM_SOURCES];
		Bitmapset  *mask = NULL;
		int			factor = sign;
		bool		adjustments = false;
		int			i;

		for (i = 0; i < n; i++)
		{
			RowClass   *c = list_nth(in[i]->classes, pick[i]);

			relids[i] = in[i]->relid;
			tuples[i] = c->tuples;
			signs[i] = c->signs;
			mask = bms_union(mask, c->mask);
			if (c->sign == 0)
				adjustments = true;
			else if (c->sign != MIXED_SIGNS)
				factor *= c->sign;
		}
		mt_deltas_add_term(set, sql, n, relids, tuples, t->analysis->extrema ? NULL : signs,
						   factor, adjustments, excluded_groups(baselines, mask));
		/* the next combination of classes */
		for (i = 0; i < n; i++)
		{
			if (++pick[i] < list_length(in[i]->classes))
				break;
			pick[i] = 0;
		}
		if (i == n)
			break;
	}
}

/*
 * The terms of the delta rule for a DELTAS join: delta_source's changed
 * rows joined with the other sources; with sides (the batch applied with
 * a snapshot of its end, mt_cont_sides_decide), the terms of every set of the
 * changed sources (see add_term_set).  A change a group's baseline saw
 * adds nothing to that group (see Baselines above).
 */
static void
add_joined_changes(ContTable *t, MtDeltaSet *set, bool sides)
{
	List	   *baselines = mt_cont_group_baselines(t->relid);
	TermMember	members[MAX_TERM_SOURCES];
	int			nmembers = 0;
	ListCell   *lc;

	if (t->changes != NIL)
	{
		members[0].member = 0;
		members[0].relid = t->analysis->delta_source;
		members[0].classes = row_classes(t->changes, baselines, !t->analysis->extrema);
		nmembers = 1;
	}
	if (!sides)
	{
		foreach(lc, nmembers ? members[0].classes : NIL)
		{
			RowClass   *c = lfirst(lc);

			if (c->signs)
				mt_deltas_add_term(set, mt_analysis_term_sql(t->analysis, list_make1_int(0), true),
								   1, &members[0].relid, &c->tuples, &c->signs, 1, c->sign == 0,
								   excluded_groups(baselines, c->mask));
			else
				mt_deltas_add_joined(set, c->tuples, c->sign, excluded_groups(baselines, c->mask));
		}
		return;
	}
	/*
	 * (mt_cont_sides_decide lets through MAX_TERM_SOURCES changed sources at
	 * most)
	 */
	for (int k = 1; k <= list_length(t->analysis->sides); k++)
	{
		List	   *rows = NIL;

		foreach(lc, t->side_changes)
			if (((RowChange *) lfirst(lc))->side == k)
				rows = lappend(rows, lfirst(lc));
		if (rows == NIL)
			continue;
		Assert(nmembers < MAX_TERM_SOURCES);
		members[nmembers].member = k;
		members[nmembers].relid = ((MtDeltaSide *) list_nth(t->analysis->sides, k - 1))->relid;
		members[nmembers].classes = row_classes(rows, baselines, !t->analysis->extrema);
		nmembers++;
	}
	for (int bits = 1; bits < (1 << nmembers); bits++)
		add_term_set(t, set, baselines, members, nmembers, bits);
}

/*
 * Before a DELTAS join's changes are applied or kept: may the other
 * sources' changed rows adjust its groups by the delta rule?  Only with a
 * snapshot that sees exactly what the batch decoded (continuous/snapshot.c),
 * only if no earlier adjustment of the table may have read a transaction
 * this batch decodes (inexact_lsn), only with MAX_TERM_SOURCES changed
 * sources at most (their sets are that many terms, 2^n - 1), and only if
 * the rows' layout is still their source's.  Then that snapshot is pushed (the caller
 * pops it once the adjustments are made) and true returned.  Otherwise
 * the rows name the key tuples to recompute instead (or everything), and
 * the adjustments of delta_source's rows read the sources as they are
 * now, which marks the table inexact up to here.
 */
bool
mt_cont_sides_decide(ContWorker *w, ContTable *t)
{
	Bitmapset  *changed = NULL;
	bool		layouts_current = true;
	ListCell   *lc;

	if (t->full || t->analysis->strategy != MT_STRATEGY_DELTAS || !t->analysis->delta_join ||
		(t->changes == NIL && t->side_changes == NIL))
		return false;
	if (t->changes != NIL)
		changed = bms_add_member(changed, 0);
	foreach(lc, t->side_changes)
		changed = bms_add_member(changed, ((RowChange *) lfirst(lc))->side);
	if (t->side_layouts)
		for (int i = 0; i < list_length(t->analysis->sides); i++)
		{
			Relation	source;

			if (t->side_layouts[i] == NULL)
				continue;
			source = RelationIdGetRelation(((MtDeltaSide *) list_nth(t->analysis->sides, i))->relid);
			if (!RelationIsValid(source) ||
				!mt_cont_same_layout(t->side_layouts[i], RelationGetDescr(source)))
				layouts_current = false;
			if (RelationIsValid(source))
				RelationClose(source);
		}
	if (bms_num_members(changed) <= MAX_TERM_SOURCES && layouts_current &&
		w->batch_start >= t->inexact_lsn &&
		mt_batch_snapshot_push(t->reads))
		return true;

	/* the rows of the other sources name what to recompute */
	if (t->side_full)
		mt_cont_table_gives_up(t);
	else
	{
		foreach(lc, t->side_keys)
		{
			SideKey    *k = lfirst(lc);

			mt_cont_add_key(w, t, k->family, k->values, k->nvalues);
		}
		t->inexact_lsn = GetXLogInsertRecPtr();
	}
	return false;
}

/*
 * The adjustments of the batch (and optionally those kept) of a DELTAS
 * table; with sides, read with the snapshot mt_cont_sides_decide pushed, and
 * adjusted by the other sources' changed rows too.
 */
MtDeltaSet *
mt_cont_batch_deltas(ContTable *t, bool with_logged, bool sides)
{
	MtDeltaSet *set;
	ListCell   *lc;

	/* the folded set is left as decoding made it: a failed apply keeps it */
	if (t->folded && !with_logged)
		return t->folded;
	set = mt_deltas_begin(t->relid, t->analysis);
	mt_deltas_set_exact(set, sides);
	if (t->folded)
		mt_deltas_merge(set, t->folded);
	else if (t->analysis->delta_join || t->analysis->extrema)
	{
		/*
		 * (one source with a min or max too: its groups re-read as of a
		 * snapshot leave out the changes that snapshot saw)
		 */
		add_joined_changes(t, set, sides);
	}
	else
		foreach(lc, t->changes)
		{
			RowChange  *rc = lfirst(lc);

			mt_deltas_add_row(set, rc->tuple, rc->sign);
		}
	if (with_logged)
	{
		Oid			types[1] = {OIDOID};
		Datum		values[1] = {ObjectIdGetDatum(t->relid)};
		uint64		r;

		SPI_connect();
		if (SPI_execute_with_args("SELECT keys, deltas FROM materialized_table_internal.change_deltas "
								  "WHERE relid = $1", 1, types, values, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read the kept adjustments of \"%s\"", get_rel_name(t->relid));
		for (r = 0; r < SPI_processed; r++)
		{
			HeapTuple	tup = SPI_tuptable->vals[r];
			List	   *lists[2] = {NIL, NIL};
			int			c;

			for (c = 0; c < 2; c++)
			{
				bool		isnull;
				ArrayType  *arr = DatumGetArrayTypeP(SPI_getbinval(tup, SPI_tuptable->tupdesc,
																   c + 1, &isnull));
				Datum	   *elems;
				bool	   *nulls;
				int			n;
				int			i;

				deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
				for (i = 0; i < n; i++)
					lists[c] = lappend(lists[c], nulls[i] ? NULL : TextDatumGetCString(elems[i]));
			}
			mt_deltas_add_logged(set, lists[0], lists[1]);
		}
		SPI_finish();
	}
	return set;
}
