/*-------------------------------------------------------------------------
 *
 * src/continuous/deltas.c
 *	  The DELTAS strategy: a set of per-group adjustments, from changed rows.
 *
 * See mt/continuous/deltas.h.  Adjustments are computed in C from changed
 * rows: the query's WHERE clause and aggregate arguments are evaluated on
 * each row with the executor's expression machinery; sums are kept as
 * numeric, so they are exact.  Rows joined with other sources go through
 * SQL, the terms of the delta rule, over the state's aggregates (also
 * those rebuilding the state, continuous/deltas_state.c).  A set is kept
 * for later in change_deltas, added to the hidden state
 * (continuous/deltas_state.c) or handed to the refresh engine to be added
 * to the table's own rows (refresh/in_place.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"

#include "mt/catalog/marker.h"
#include "mt/continuous/aggregates.h"
#include "mt/continuous/deltas.h"
#include "mt/continuous/deltas_int.h"
#include "mt/materialized_table.h"
#include "mt/refresh/in_place.h"

/* a group found by its keys (MtDeltaSet.buckets) */
typedef struct DeltaGroupEntry
{
	MtStringKey key;			/* the group's keys */
	DeltaGroup *group;
} DeltaGroupEntry;

/*
 * The query's expressions (its WHERE clause, the aggregates' arguments,
 * and whatever functions, operators and casts they call) are the table
 * owner's code: they are prepared and evaluated as the owner, in a
 * security-restricted operation, as REFRESH MATERIALIZED VIEW runs them.
 * This is done per row, so it only switches the user: the search_path is
 * pinned by whoever runs the set (the worker, or a refresh).  An error in
 * between restores the user with the (sub)transaction.
 */
static void
as_owner_begin(MtDeltaSet *set, Oid *save_userid, int *save_sec)
{
	GetUserIdAndSecContext(save_userid, save_sec);
	SetUserIdAndSecContext(set->owner, *save_sec | SECURITY_RESTRICTED_OPERATION);
}

static void
as_owner_end(Oid save_userid, int save_sec)
{
	SetUserIdAndSecContext(save_userid, save_sec);
}

/* ---------------------------------------------------------------------
 * The state's SQL: for the terms of the delta rule (below), and for
 * rebuilding the state (continuous/deltas_state.c)
 * ---------------------------------------------------------------------
 */

/*
 * The state table's columns, for reading filters on group columns: the
 * table's own, when it is its own state.
 */
TupleDesc
mt_deltas_state_desc(Oid relid)
{
	Oid			stateid = mt_hidden_relid("state_", relid);
	Relation	state = table_open(OidIsValid(stateid) ? stateid : relid, AccessShareLock);
	TupleDesc	desc = CreateTupleDescCopy(RelationGetDescr(state));

	table_close(state, AccessShareLock);
	return desc;
}

/*
 * "r.<group column>, ..., <aggregates>" over the query's rows (the rows
 * query of the analysis, as r), in the state's column order after the
 * group columns: the row count, then per aggregate the sum of its argument
 * and the number of non-NULL arguments (count(*) keeps none: its count is
 * the row count; min and max keep the extremum in place of the sum).  Over
 * adjustment rows (sign 0 in mt_deltas_add_joined),
 * each an update that changed only columns read as sums, set to new minus
 * old: those sums, and no rows or counts.  With signed_rows, each row
 * counts with its sign, r.__mt_sign (see mt_analysis_term_sql).
 */
char *
mt_deltas_state_aggregates(MtAnalysis *a, bool sums_as_numeric, bool adjustments, bool signed_rows)
{
	StringInfoData buf;
	ListCell   *lc;
	const char *sign = "r." MT_SIGN_COLUMN;

	initStringInfo(&buf);
	foreach(lc, a->group_outputs)
		appendStringInfo(&buf, "r.%s, ", quote_identifier(lfirst(lc)));
	if (a->grouping_sets != NIL)
	{
		appendStringInfoString(&buf, "GROUPING(");
		foreach(lc, a->group_outputs)
			appendStringInfo(&buf, "%sr.%s", foreach_current_index(lc) > 0 ? ", " : "",
							 quote_identifier(lfirst(lc)));
		appendStringInfoString(&buf, "), ");
	}
	if (adjustments)
		appendStringInfoString(&buf, "0::pg_catalog.int8");
	else if (signed_rows)
		appendStringInfo(&buf, "COALESCE(pg_catalog.sum(%s), 0)::pg_catalog.int8", sign);
	else
		appendStringInfoString(&buf, "pg_catalog.count(*)");
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);
		char	   *arg = psprintf("r.__mt_arg_%d", foreach_current_index(lc) + 1);
		char	   *sum_type = format_type_be_qualified(sums_as_numeric ? NUMERICOID : d->sum_type);
		bool		summed = adjustments ?
			(d->kind == MT_AGG_SUM && d->arg_relid == a->delta_source &&
			 bms_is_member(d->arg_attnum, a->sum_only_columns)) :
			(d->kind == MT_AGG_SUM || d->kind == MT_AGG_AVG);

		if (d->kind == MT_AGG_MIN || d->kind == MT_AGG_MAX)
		{
			/* the extremum itself, of the argument's type */
			if (adjustments)
				appendStringInfo(&buf, ", NULL::%s, 0::pg_catalog.int8",
								 format_type_be_qualified(d->sum_type));
			else
				appendStringInfo(&buf, ", pg_catalog.%s(%s%s), pg_catalog.count(%s)",
								 d->kind == MT_AGG_MIN ? "min" : "max", arg,
								 mt_delta_collate_sql(d), arg);
			continue;
		}
		if (summed && signed_rows)
			appendStringInfo(&buf, ", (COALESCE(pg_catalog.sum(%s) FILTER (WHERE %s OPERATOR(pg_catalog.>) 0)::%s, 0)"
							 " OPERATOR(pg_catalog.-) COALESCE(pg_catalog.sum(%s) FILTER (WHERE %s OPERATOR(pg_catalog.<) 0)::%s, 0))",
							 arg, sign, sum_type, arg, sign, sum_type);
		else if (summed)
			appendStringInfo(&buf, ", COALESCE(pg_catalog.sum(%s)::%s, 0)", arg, sum_type);
		else
			appendStringInfo(&buf, ", 0::%s", sum_type);
		if (d->kind == MT_AGG_COUNT_STAR || adjustments)
			appendStringInfoString(&buf, ", 0::pg_catalog.int8");
		else if (signed_rows)
			appendStringInfo(&buf, ", COALESCE(pg_catalog.sum(%s) FILTER (WHERE %s IS NOT NULL), 0)::pg_catalog.int8",
							 sign, arg);
		else
			appendStringInfo(&buf, ", pg_catalog.count(%s)", arg);
	}
	/* then the numbers of values of each display scale */
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);
		char	   *arg = psprintf("r.__mt_arg_%d", foreach_current_index(lc) + 1);

		for (int j = 0; j < mt_delta_nscales(d); j++)
			if (adjustments)
				appendStringInfoString(&buf, ", 0::pg_catalog.int8");
			else if (signed_rows)
				appendStringInfo(&buf, ", COALESCE(pg_catalog.sum(%s) FILTER (WHERE pg_catalog.scale(%s) OPERATOR(pg_catalog.=) %d), 0)::pg_catalog.int8",
								 sign, arg, list_nth_int(d->scales, j));
			else
				appendStringInfo(&buf, ", pg_catalog.count(*) FILTER (WHERE pg_catalog.scale(%s) = %d)",
								 arg, list_nth_int(d->scales, j));
	}
	return buf.data;
}

/*
 * " GROUP BY 1, 2, ..." over the group columns of mt_deltas_state_aggregates,
 * nothing for none; of grouping sets, " GROUP BY GROUPING SETS ((1, 2), (1),
 * ())".
 */
char *
mt_deltas_group_by(MtAnalysis *a)
{
	StringInfoData buf;
	int			ngroup = list_length(a->group_outputs);
	ListCell   *lc;

	initStringInfo(&buf);
	if (a->grouping_sets == NIL)
	{
		for (int i = 1; i <= ngroup; i++)
			appendStringInfo(&buf, "%s%d", i > 1 ? ", " : " GROUP BY ", i);
		return buf.data;
	}
	appendStringInfoString(&buf, " GROUP BY GROUPING SETS (");
	foreach(lc, a->grouping_sets)
	{
		Bitmapset  *members = lfirst(lc);
		int			m = -1;
		bool		first = true;

		appendStringInfoString(&buf, foreach_current_index(lc) > 0 ? ", (" : "(");
		while ((m = bms_next_member(members, m)) >= 0)
		{
			appendStringInfo(&buf, "%s%d", first ? "" : ", ", m + 1);
			first = false;
		}
		appendStringInfoChar(&buf, ')');
	}
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

/* ---------------------------------------------------------------------
 * Adjustments
 * ---------------------------------------------------------------------
 */

MtDeltaSet *
mt_deltas_begin(Oid relid, MtAnalysis *a)
{
	MtDeltaSet *set = palloc0(sizeof(MtDeltaSet));
	MemoryContext old;
	Relation	source;
	ListCell   *lc;
	int			i;
	Oid			save_userid;
	int			save_sec;

	set->relid = relid;
	set->owner = a->owner;
	set->a = a;
	set->nkey = list_length(a->group_exprs);
	set->nsets = list_length(a->grouping_sets);
	set->ngroup = set->nkey + (set->nsets > 0 ? 1 : 0);
	set->nagg = list_length(a->aggs);
	set->context = AllocSetContextCreate(CurrentMemoryContext, "materialized_table deltas",
										 ALLOCSET_DEFAULT_SIZES);
	set->scratch = AllocSetContextCreate(set->context, "materialized_table deltas scratch",
										 ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(set->context);
	set->sc_first = palloc(sizeof(int) * (set->nagg + 1));
	foreach(lc, a->aggs)
	{
		set->sc_first[foreach_current_index(lc)] = set->nsc;
		set->nsc += mt_delta_nscales(lfirst(lc));
	}
	set->group_numeric = palloc0(sizeof(bool) * (set->ngroup + 1));
	foreach(lc, a->group_exprs)
		set->group_numeric[foreach_current_index(lc)] =
			exprType(lfirst(lc)) == NUMERICOID && exprTypmod(lfirst(lc)) < 0;
	set->set_masks = palloc(sizeof(char *) * (set->nsets + 1));
	set->set_members = palloc(sizeof(Bitmapset *) * (set->nsets + 1));
	foreach(lc, a->grouping_sets)
	{
		set->set_members[foreach_current_index(lc)] = lfirst(lc);
		set->set_masks[foreach_current_index(lc)] =
			psprintf("%d", mt_grouping_mask(a, lfirst(lc)));
	}
	set->buckets = mt_string_key_create("materialized_table delta groups", 256,
										sizeof(DeltaGroupEntry), set->context);
	set->ext = palloc0(sizeof(ExtremumType) * (set->nagg + 1));
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);
		ExtremumType *e = &set->ext[foreach_current_index(lc)];
		Oid			func;
		bool		varlena;

		if (d->kind != MT_AGG_MIN && d->kind != MT_AGG_MAX)
			continue;
		e->is_extremum = true;
		e->dir = d->kind == MT_AGG_MIN ? 1 : -1;
		fmgr_info(d->cmp_proc, &e->cmp);
		e->collation = d->collation;
		e->type = d->sum_type;
		get_typlenbyval(e->type, &e->typlen, &e->typbyval);
		getTypeInputInfo(e->type, &func, &e->ioparam);
		fmgr_info(func, &e->in);
		getTypeOutputInfo(e->type, &func, &varlena);
		fmgr_info(func, &e->out);
		set->next++;
	}
	if (a->delta_join)
	{
		/* rows come through the join, in SQL (mt_deltas_add_joined) */
		MemoryContextSwitchTo(old);
		return set;
	}

	/*
	 * The source's row layout, without a lock: this may run inside logical
	 * decoding (rows folded as they are decoded), which must not wait for
	 * DDL another session holds on the source.
	 */
	source = RelationIdGetRelation(a->delta_source);
	if (!RelationIsValid(source))
		elog(ERROR, "could not open relation with OID %u", a->delta_source);
	set->estate = CreateExecutorState();
	set->econtext = GetPerTupleExprContext(set->estate);
	set->slot = MakeSingleTupleTableSlot(CreateTupleDescCopy(RelationGetDescr(source)),
										 &TTSOpsHeapTuple);
	RelationClose(source);

	/* preparing folds constants: it may run the owner's functions */
	as_owner_begin(set, &save_userid, &save_sec);
	if (a->delta_quals)
		set->qual = ExecPrepareQual(make_ands_implicit((Expr *) a->delta_quals), set->estate);
	set->args = palloc0(sizeof(ExprState *) * (set->nagg + 1));
	set->argtypes = palloc0(sizeof(Oid) * (set->nagg + 1));
	i = 0;
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);

		if (d->arg)
		{
			set->args[i] = ExecPrepareExpr(d->arg, set->estate);
			set->argtypes[i] = exprType((Node *) d->arg);
		}
		i++;
	}
	set->group_states = palloc(sizeof(ExprState *) * (set->ngroup + 1));
	set->group_out = palloc(sizeof(FmgrInfo) * (set->ngroup + 1));
	foreach(lc, a->group_exprs)
	{
		Oid			typoutput;
		bool		varlena;

		i = foreach_current_index(lc);
		set->group_states[i] = ExecPrepareExpr(lfirst(lc), set->estate);
		getTypeOutputInfo(exprType(lfirst(lc)), &typoutput, &varlena);
		fmgr_info(typoutput, &set->group_out[i]);
	}
	as_owner_end(save_userid, save_sec);
	MemoryContextSwitchTo(old);
	return set;
}

static Datum
numeric_zero(void)
{
	return DirectFunctionCall1(int8_numeric, Int64GetDatum(0));
}

/*
 * The group of these values: NULL if the set has none and create is
 * false, else created (with zero adjustments) if new.
 */
static DeltaGroup *
group_of(MtDeltaSet *set, char **values, bool create)
{
	DeltaGroupEntry *entry;
	MtStringKey probe;
	DeltaGroup *g;
	MemoryContext old;
	bool		found;
	char	  **keys = palloc(sizeof(char *) * (set->ngroup + 1));
	int			i;

	/*
	 * Equal numerics of other scales are one group (1.0 = 1.00); a new
	 * group shows its first value as it came, as the query shows one of its
	 * values
	 */
	for (i = 0; i < set->ngroup; i++)
		keys[i] = (set->group_numeric[i] && values[i]) ?
			numeric_normalize(DatumGetNumeric(DirectFunctionCall3(numeric_in,
																  CStringGetDatum(values[i]),
																  ObjectIdGetDatum(InvalidOid),
																  Int32GetDatum(-1)))) :
			values[i];
	probe.tag = 0;
	probe.n = set->ngroup;
	probe.values = keys;
	entry = hash_search(set->buckets, &probe, create ? HASH_ENTER : HASH_FIND, &found);
	if (found)
		return entry->group;
	if (!create)
		return NULL;
	old = MemoryContextSwitchTo(set->context);
	g = palloc0(sizeof(DeltaGroup));
	g->values = palloc(sizeof(char *) * (set->ngroup + 1));
	g->keys = palloc(sizeof(char *) * (set->ngroup + 1));
	for (i = 0; i < set->ngroup; i++)
	{
		g->values[i] = values[i] ? pstrdup(values[i]) : NULL;
		g->keys[i] = keys[i] == values[i] ? g->values[i] : pstrdup(keys[i]);
	}
	g->sums = palloc(sizeof(Datum) * (set->nagg + 1));
	g->nn = palloc0(sizeof(int64) * (set->nagg + 1));
	g->sc = palloc0(sizeof(int64) * (set->nsc + 1));
	for (i = 0; i < set->nagg; i++)
		g->sums[i] = numeric_zero();
	if (set->next > 0)
	{
		g->added = palloc0(sizeof(Datum) * set->nagg);
		g->has_added = palloc0(sizeof(bool) * set->nagg);
		g->removed = palloc0(sizeof(Datum) * set->nagg);
		g->has_removed = palloc0(sizeof(bool) * set->nagg);
	}
	entry->key.values = g->keys;	/* the same strings, the set's own */
	entry->group = g;
	set->groups = lappend(set->groups, g);
	MemoryContextSwitchTo(old);
	return g;
}

static DeltaGroup *
find_group(MtDeltaSet *set, char **values)
{
	return group_of(set, values, true);
}

/*
 * mt_deltas_lookup_group
 *		The set's group of these values (group columns as text), or NULL.
 */
DeltaGroup *
mt_deltas_lookup_group(MtDeltaSet *set, char **values)
{
	return group_of(set, values, false);
}

/* -1, 0 or 1 as value is before, at or beyond kept in the extremum's order */
static int
extremum_order(MtDeltaSet *set, int agg, Datum value, Datum kept)
{
	ExtremumType *e = &set->ext[agg];
	int32		c = DatumGetInt32(FunctionCall2Coll(&e->cmp, e->collation, value, kept));

	return e->dir * ((c > 0) - (c < 0));
}

/*
 * mt_deltas_beyond
 *		Is value strictly beyond kept, in the order of extremum agg (greater
 *		for a min, less for a max)?  Then removing it leaves kept the
 *		extremum.
 */
bool
mt_deltas_beyond(MtDeltaSet *set, int agg, Datum value, Datum kept)
{
	return extremum_order(set, agg, value, kept) > 0;
}

/*
 * Fold a non-NULL value added to (or removed from) a group into the most
 * extreme one added (removed) so far, as the aggregate would: a min keeps
 * the least.  The value is copied into the set's memory.
 */
static void
fold_extremum(MtDeltaSet *set, DeltaGroup *g, int agg, Datum value, bool removed)
{
	ExtremumType *e = &set->ext[agg];
	Datum	   *kept = removed ? &g->removed[agg] : &g->added[agg];
	bool	   *has = removed ? &g->has_removed[agg] : &g->has_added[agg];
	MemoryContext old;

	if (*has && extremum_order(set, agg, value, *kept) >= 0)
		return;
	old = MemoryContextSwitchTo(set->context);
	if (*has && !e->typbyval)
		pfree(DatumGetPointer(*kept));
	*kept = datumCopy(value, e->typbyval, e->typlen);
	*has = true;
	MemoryContextSwitchTo(old);
}

/*
 * Add (sign 1) or subtract (sign -1) a numeric to a group's sum.  The new
 * sum replaces the old one in the set's memory: a set that folds millions
 * of rows grows with its groups only.
 */
static void
add_to_sum(MtDeltaSet *set, DeltaGroup *g, int agg, Datum value, int sign)
{
	MemoryContext old = MemoryContextSwitchTo(set->scratch);
	Datum		sum = DirectFunctionCall2(sign > 0 ? numeric_add : numeric_sub,
										  g->sums[agg], value);

	MemoryContextSwitchTo(set->context);
	pfree(DatumGetPointer(g->sums[agg]));
	g->sums[agg] = datumCopy(sum, false, -1);
	MemoryContextSwitchTo(old);
	MemoryContextReset(set->scratch);
}

/*
 * Count a summed value by its display scale, if its aggregate counts them;
 * a NaN or an infinity cannot be taken back out of a sum: the table is
 * recomputed instead (mt_deltas_inexact).
 */
static void
count_scale(MtDeltaSet *set, DeltaGroup *g, int agg, Datum value, int sign)
{
	MtDeltaAgg *d = list_nth(set->a->aggs, agg);
	int			scale;
	ListCell   *lc;

	if (numeric_is_nan(DatumGetNumeric(value)) || numeric_is_inf(DatumGetNumeric(value)))
	{
		set->inexact = true;
		return;
	}
	if (d->scales == NIL)
		return;
	scale = DatumGetInt32(DirectFunctionCall1(numeric_scale, value));
	foreach(lc, d->scales)
		if (lfirst_int(lc) == scale)
		{
			if (mt_delta_nscales(d) > 0)
				g->sc[set->sc_first[agg] + foreach_current_index(lc)] += sign;
			return;
		}
	set->inexact = true;
}

static Datum
to_numeric(Datum value, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DirectFunctionCall1(int2_numeric, value);
		case INT4OID:
			return DirectFunctionCall1(int4_numeric, value);
		case INT8OID:
			return DirectFunctionCall1(int8_numeric, value);
		default:
			return value;
	}
}

/*
 * mt_deltas_add_row
 *		A source row (in the source table's column layout) that was added
 *		(sign 1) or removed (sign -1).
 */
void
mt_deltas_add_row(MtDeltaSet *set, HeapTuple tuple, int sign)
{
	ExprContext *econtext = set->econtext;
	MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	char	  **values = palloc(sizeof(char *) * (set->ngroup + 1));
	Datum	   *args = palloc(sizeof(Datum) * (set->nagg + 1));
	bool	   *argnull = palloc(sizeof(bool) * (set->nagg + 1));
	int			i;
	Oid			save_userid;
	int			save_sec;

	ExecStoreHeapTuple(tuple, set->slot, false);
	econtext->ecxt_scantuple = set->slot;
	as_owner_begin(set, &save_userid, &save_sec);
	if (set->qual && !ExecQual(set->qual, econtext))
	{
		as_owner_end(save_userid, save_sec);
		MemoryContextSwitchTo(old);
		ResetExprContext(econtext);
		return;
	}
	for (i = 0; i < set->nkey; i++)
	{
		bool		isnull;
		Datum		d = ExecEvalExprSwitchContext(set->group_states[i], econtext, &isnull);

		values[i] = isnull ? NULL : OutputFunctionCall(&set->group_out[i], d);
	}
	for (i = 0; i < set->nagg; i++)
	{
		argnull[i] = true;
		if (set->args[i] == NULL)
			continue;
		args[i] = ExecEvalExprSwitchContext(set->args[i], econtext, &argnull[i]);
		if (!argnull[i] && !set->ext[i].is_extremum &&
			((MtDeltaAgg *) list_nth(set->a->aggs, i))->kind != MT_AGG_COUNT)
			args[i] = to_numeric(args[i], set->argtypes[i]);
	}

	/* the row's group, or its group in each grouping set */
	for (int s = 0; s < Max(set->nsets, 1); s++)
	{
		char	  **group = values;
		DeltaGroup *g;

		if (set->nsets > 0)
		{
			group = palloc(sizeof(char *) * (set->ngroup + 1));
			for (i = 0; i < set->nkey; i++)
				group[i] = bms_is_member(i, set->set_members[s]) ? values[i] : NULL;
			group[set->nkey] = set->set_masks[s];
		}
		g = find_group(set, group);
		g->rows += sign;
		for (i = 0; i < set->nagg; i++)
		{
			MtDeltaAgg *d = list_nth(set->a->aggs, i);

			if (argnull[i])
				continue;
			g->nn[i] += sign;
			if (d->kind == MT_AGG_COUNT)
				continue;
			if (set->ext[i].is_extremum)
			{
				fold_extremum(set, g, i, args[i], sign < 0);
				continue;
			}
			count_scale(set, g, i, args[i], sign);
			add_to_sum(set, g, i, args[i], sign);
		}
	}
	as_owner_end(save_userid, save_sec);
	set->nrows++;
	MemoryContextSwitchTo(old);
	ResetExprContext(econtext);
	ExecClearTuple(set->slot);
}

/*
 * An array of rows of relid (tuples in its column layout), for a term's
 * parameter.
 */
static Datum
rows_array(Oid relid, List *tuples, Oid *arraytype)
{
	Oid			rowtype = get_rel_type_id(relid);
	Datum	   *rows = palloc(sizeof(Datum) * (list_length(tuples) + 1));
	Relation	source = table_open(relid, AccessShareLock);
	TupleDesc	sdesc = RelationGetDescr(source);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	ListCell   *lc;
	int			n = 0;

	foreach(lc, tuples)
		rows[n++] = heap_copy_tuple_as_datum(lfirst(lc), sdesc);
	table_close(source, AccessShareLock);
	get_typlenbyvalalign(rowtype, &typlen, &typbyval, &typalign);
	*arraytype = get_array_type(rowtype);
	return PointerGetDatum(construct_array(rows, n, rowtype, typlen, typbyval, typalign));
}

/* The signs of a term's rows (int List), as an int4[] for its parameter. */
static Datum
signs_array(List *signs)
{
	Datum	   *elems = palloc(sizeof(Datum) * (list_length(signs) + 1));
	ListCell   *lc;

	foreach(lc, signs)
		elems[foreach_current_index(lc)] = Int32GetDatum(lfirst_int(lc));
	return PointerGetDatum(construct_array(elems, list_length(signs), INT4OID, sizeof(int32),
										   true, TYPALIGN_INT));
}

/*
 * mt_deltas_add_term
 *		One term of the delta rule: the rows query sql with nsets sources
 *		replaced by sets of their changed rows ($1, $2: tuples[i] of
 *		relids[i], in their column layouts), counted factor times (1 or -1);
 *		with signs (not NULL), signs[i] are tuples[i]'s signs (1 added, -1
 *		taken away), and term_sql is mt_analysis_term_sql's with signed
 *		rows; with adjustments, the first set are adjustment rows (sign 0, see
 *		mt_deltas_state_aggregates).  Groups the filter exclude names get
 *		nothing from it.  With set->exact, the other sources are read with
 *		the active snapshot (continuous/snapshot.c), else as they are now.
 */
void
mt_deltas_add_term(MtDeltaSet *set, const char *term_sql, int nsets, Oid *relids,
				   List **tuples, List **signs, int factor, bool adjustments, List *exclude)
{
	MtAnalysis *a = set->a;
	TupleDesc	desc = mt_deltas_state_desc(set->relid);
	Oid		   *ftypes;
	Datum	   *fvalues;
	ParamListInfo fparams;
	int			nfilter;
	int			nsetparams;
	Oid		   *types;
	Datum	   *values;
	uint64		r;
	char	   *sql;
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;

	for (int i = 0; i < nsets; i++)
		if (tuples[i] == NIL)
			return;
	mt_run_as_owner_begin(set->owner, &save_userid, &save_sec, &save_nestlevel);
	nfilter = mt_filter_params(exclude, desc, &ftypes, &fvalues, &fparams);
	nsetparams = signs ? 2 * nsets : nsets;
	types = palloc(sizeof(Oid) * (nfilter + nsetparams));
	values = palloc(sizeof(Datum) * (nfilter + nsetparams));
	for (int i = 0; i < nsets; i++)
	{
		values[i] = rows_array(relids[i], tuples[i], &types[i]);
		if (signs)
		{
			values[nsets + i] = signs_array(signs[i]);
			types[nsets + i] = INT4ARRAYOID;
		}
	}
	memcpy(types + nsetparams, ftypes, sizeof(Oid) * nfilter);
	memcpy(values + nsetparams, fvalues, sizeof(Datum) * nfilter);

	sql = psprintf("SELECT %s FROM (%s) r%s%s",
				   mt_deltas_state_aggregates(a, true, adjustments, signs != NULL), term_sql,
				   exclude ? psprintf(" WHERE (%s) IS NOT TRUE",
									  mt_filter_condition(exclude, "r", desc, ftypes, nsetparams)) : "",
				   mt_deltas_group_by(a));

	/* a few thousand changed rows, joined with tables mostly in memory */
	mt_favour_index_lookups();
	SPI_connect();
	if (SPI_execute_with_args(sql, nfilter + nsetparams, types, values, NULL, set->exact, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not join the changed rows of \"%s\"", get_rel_name(relids[0]));
	for (r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	rdesc = SPI_tuptable->tupdesc;
		MemoryContext old = MemoryContextSwitchTo(set->context);
		char	  **group = palloc(sizeof(char *) * (set->ngroup + 1));
		DeltaGroup *g;
		bool		isnull;
		int			i;

		for (i = 0; i < set->ngroup; i++)
			group[i] = SPI_getvalue(tup, rdesc, i + 1);
		g = find_group(set, group);
		g->rows += factor * DatumGetInt64(SPI_getbinval(tup, rdesc, set->ngroup + 1, &isnull));
		for (i = 0; i < set->nagg; i++)
		{
			bool		no_value;
			Datum		sum = SPI_getbinval(tup, rdesc, set->ngroup + 2 + 2 * i, &no_value);

			g->nn[i] += factor * DatumGetInt64(SPI_getbinval(tup, rdesc, set->ngroup + 3 + 2 * i,
															 &isnull));
			if (set->ext[i].is_extremum)
			{
				/* the term's rows are added (factor 1) or taken away (-1) */
				if (!no_value)
					fold_extremum(set, g, i, sum, factor < 0);
				continue;
			}
			if (numeric_is_nan(DatumGetNumeric(sum)) || numeric_is_inf(DatumGetNumeric(sum)))
				set->inexact = true;
			add_to_sum(set, g, i, sum, factor);
		}
		for (i = 0; i < set->nsc; i++)
			g->sc[i] += factor * DatumGetInt64(SPI_getbinval(tup, rdesc,
															 set->ngroup + 2 + 2 * set->nagg + i,
															 &isnull));
		MemoryContextSwitchTo(old);
	}
	for (int i = 0; i < nsets; i++)
		set->nrows += list_length(tuples[i]);
	SPI_finish();
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
}

/*
 * mt_deltas_set_exact
 *		Read the joined sources of the terms with the active snapshot.
 */
void
mt_deltas_set_exact(MtDeltaSet *set, bool exact)
{
	set->exact = exact;
}

/*
 * mt_deltas_add_joined
 *		Rows of the delta source (in its column layout) that were added
 *		(sign 1) or removed (sign -1), or that adjust sums (sign 0, see
 *		mt_deltas_state_aggregates), joined with the other sources.
 */
void
mt_deltas_add_joined(MtDeltaSet *set, List *tuples, int sign, List *exclude)
{
	mt_deltas_add_term(set, set->a->changes_sql, 1, &set->a->delta_source, &tuples, NULL,
					   sign == 0 ? 1 : sign, sign == 0, exclude);
}

/* A logged extremum (text, NULL for none) folded into a group. */
static void
fold_logged_extremum(MtDeltaSet *set, DeltaGroup *g, int agg, char *text, bool removed)
{
	ExtremumType *e = &set->ext[agg];

	if (text != NULL)
		fold_extremum(set, g, agg, InputFunctionCall(&e->in, text, e->ioparam, -1), removed);
}

/*
 * mt_deltas_add_logged
 *		Adjustments kept in change_deltas: keys as text, deltas as text
 *		(rows, then sum and count of each aggregate -- of an extremum, the
 *		most extreme value added, or NULL, in place of the sum -- then the
 *		scale counts, then each extremum's most extreme value removed).
 */
void
mt_deltas_add_logged(MtDeltaSet *set, List *keys, List *deltas)
{
	MemoryContext old = MemoryContextSwitchTo(set->context);
	char	  **values = palloc(sizeof(char *) * (set->ngroup + 1));
	DeltaGroup *g;
	int			i;
	int			next = 0;

	for (i = 0; i < set->ngroup; i++)
		values[i] = list_nth(keys, i);
	g = find_group(set, values);
	g->rows += pg_strtoint64(list_nth(deltas, 0));
	for (i = 0; i < set->nagg; i++)
	{
		if (set->ext[i].is_extremum)
		{
			fold_logged_extremum(set, g, i, list_nth(deltas, 1 + 2 * i), false);
			fold_logged_extremum(set, g, i,
								 list_nth(deltas, 1 + 2 * set->nagg + set->nsc + next++), true);
			g->nn[i] += pg_strtoint64(list_nth(deltas, 2 + 2 * i));
			continue;
		}
		add_to_sum(set, g, i, DirectFunctionCall3(numeric_in,
												  CStringGetDatum(list_nth(deltas, 1 + 2 * i)),
												  ObjectIdGetDatum(InvalidOid),
												  Int32GetDatum(-1)), 1);
		g->nn[i] += pg_strtoint64(list_nth(deltas, 2 + 2 * i));
	}
	for (i = 0; i < set->nsc; i++)
		g->sc[i] += pg_strtoint64(list_nth(deltas, 1 + 2 * set->nagg + i));
	set->nrows++;
	MemoryContextSwitchTo(old);
}

/*
 * mt_deltas_merge
 *		Add the adjustments of src to those of set (same table).
 */
void
mt_deltas_merge(MtDeltaSet *set, MtDeltaSet *src)
{
	ListCell   *lc;

	foreach(lc, src->groups)
	{
		DeltaGroup *s = lfirst(lc);
		DeltaGroup *g = find_group(set, s->values);
		int			i;

		g->rows += s->rows;
		for (i = 0; i < set->nagg; i++)
		{
			g->nn[i] += s->nn[i];
			if (!set->ext[i].is_extremum)
				add_to_sum(set, g, i, s->sums[i], 1);
			else
			{
				if (s->has_added[i])
					fold_extremum(set, g, i, s->added[i], false);
				if (s->has_removed[i])
					fold_extremum(set, g, i, s->removed[i], true);
			}
		}
		for (i = 0; i < set->nsc; i++)
			g->sc[i] += s->sc[i];
	}
	set->nrows += src->nrows;
	set->inexact |= src->inexact;
}

/* The number of groups the set adjusts. */
int64
mt_deltas_ngroups(MtDeltaSet *set)
{
	return list_length(set->groups);
}

char *
mt_deltas_numeric_text(Datum n)
{
	return DatumGetCString(DirectFunctionCall1(numeric_out, n));
}

/*
 * mt_deltas_log
 *		Keep the adjustments for later (table suspended or not due).
 */
void
mt_deltas_log(MtDeltaSet *set)
{
	Oid			types[3] = {OIDOID, TEXTARRAYOID, TEXTARRAYOID};
	SPIPlanPtr	plan;
	ListCell   *lc;

	if (set->groups == NIL)
		return;
	SPI_connect();
	plan = SPI_prepare("INSERT INTO materialized_table_internal.change_deltas (relid, keys, deltas) "
					   "VALUES ($1, $2, $3)", 3, types);
	foreach(lc, set->groups)
	{
		DeltaGroup *g = lfirst(lc);
		Datum	   *keys = palloc(sizeof(Datum) * (set->ngroup + 1));
		bool	   *knulls = palloc(sizeof(bool) * (set->ngroup + 1));
		int			ndeltas = 1 + 2 * set->nagg + set->nsc + set->next;
		Datum	   *deltas = palloc(sizeof(Datum) * ndeltas);
		bool	   *dnulls = palloc0(sizeof(bool) * ndeltas);
		Datum		values[3];
		int			dims[1];
		int			lbs[1] = {1};
		int			i;
		int			next = 0;

		for (i = 0; i < set->ngroup; i++)
		{
			knulls[i] = (g->values[i] == NULL);
			keys[i] = knulls[i] ? (Datum) 0 : CStringGetTextDatum(g->values[i]);
		}
		deltas[0] = CStringGetTextDatum(psprintf(INT64_FORMAT, g->rows));
		for (i = 0; i < set->nagg; i++)
		{
			deltas[2 + 2 * i] = CStringGetTextDatum(psprintf(INT64_FORMAT, g->nn[i]));
			if (!set->ext[i].is_extremum)
			{
				deltas[1 + 2 * i] = CStringGetTextDatum(mt_deltas_numeric_text(g->sums[i]));
				continue;
			}
			/* (see mt_deltas_add_logged) */
			dnulls[1 + 2 * i] = !g->has_added[i];
			if (g->has_added[i])
				deltas[1 + 2 * i] = CStringGetTextDatum(OutputFunctionCall(&set->ext[i].out,
																		   g->added[i]));
			dnulls[ndeltas - set->next + next] = !g->has_removed[i];
			if (g->has_removed[i])
				deltas[ndeltas - set->next + next] =
					CStringGetTextDatum(OutputFunctionCall(&set->ext[i].out, g->removed[i]));
			next++;
		}
		for (i = 0; i < set->nsc; i++)
			deltas[1 + 2 * set->nagg + i] = CStringGetTextDatum(psprintf(INT64_FORMAT, g->sc[i]));
		values[0] = ObjectIdGetDatum(set->relid);
		dims[0] = set->ngroup;
		values[1] = PointerGetDatum(construct_md_array(keys, knulls, 1, dims, lbs, TEXTOID,
													   -1, false, TYPALIGN_INT));
		dims[0] = ndeltas;
		values[2] = PointerGetDatum(construct_md_array(deltas, dnulls, 1, dims, lbs, TEXTOID,
													   -1, false, TYPALIGN_INT));
		if (SPI_execute_plan(plan, values, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not keep the adjustments of \"%s\"", get_rel_name(set->relid));
	}
	SPI_finish();
}

/* A filter family of one column per group column, values appended below. */
static MtFilterFamily *
group_family(MtDeltaSet *set, bool rowwise)
{
	MtFilterFamily *family = palloc0(sizeof(MtFilterFamily));
	ListCell   *lc;

	family->rowwise = rowwise;
	foreach(lc, set->a->group_outputs)
	{
		MtFilterColumn *col = palloc0(sizeof(MtFilterColumn));

		col->name = lfirst(lc);
		family->columns = lappend(family->columns, col);
	}
	return family;
}

/*
 * The groups of grouping sets as a filter of the table's rows: most have
 * NULLs, in the columns their set leaves out.  A family per pattern of
 * NULL columns, its other columns matched row by row (or alone), the NULL
 * ones by IS NULL (see MtFilterFamily).
 */
static List *
sets_filter(MtDeltaSet *set, List *groups)
{
	List	   *filter = NIL;
	List	   *patterns = NIL; /* int: the non-NULL columns of each family */
	ListCell   *lg;

	foreach(lg, groups)
	{
		DeltaGroup *g = lfirst(lg);
		MtFilterFamily *family = NULL;
		int			pattern = 0;
		ListCell   *lp;

		for (int i = 0; i < set->nkey; i++)
			if (g->values[i] != NULL)
				pattern |= 1 << i;
		foreach(lp, patterns)
			if (lfirst_int(lp) == pattern)
				family = list_nth(filter, foreach_current_index(lp));
		if (family == NULL)
		{
			family = group_family(set, pg_popcount32(pattern) > 1);
			filter = lappend(filter, family);
			patterns = lappend_int(patterns, pattern);
		}
		for (int i = 0; i < set->nkey; i++)
		{
			MtFilterColumn *col = list_nth(family->columns, i);

			if (g->values[i] == NULL)
				col->has_null = true;
			else
				col->values = lappend(col->values, g->values[i]);
		}
	}
	return filter;
}

/*
 * The groups of the set as a filter.  With several group columns, the
 * groups are matched row by row: matching each column's values alone would
 * take in every combination of them -- with GROUP BY day, region, a few
 * changed rows would name every region of every day they touch.  A group
 * with a NULL column is a family of its own (row matching has no NULLs).
 */
List *
mt_deltas_touched_groups(MtDeltaSet *set)
{
	return mt_deltas_groups_filter(set, set->groups);
}

/*
 * mt_deltas_groups_filter
 *		Some groups of the set (DeltaGroup), as a filter (see
 *		mt_deltas_touched_groups).
 */
List *
mt_deltas_groups_filter(MtDeltaSet *set, List *groups)
{
	MtFilterFamily *rows;
	List	   *filter;
	ListCell   *lg;
	int			i;

	if (set->nsets > 0)
		return sets_filter(set, groups);
	rows = group_family(set, set->ngroup > 1);
	filter = list_make1(rows);
	foreach(lg, groups)
	{
		DeltaGroup *g = lfirst(lg);
		MtFilterFamily *family = rows;

		for (i = 0; i < set->ngroup && rows->rowwise; i++)
			if (g->values[i] == NULL)
			{
				family = group_family(set, false);
				filter = lappend(filter, family);
				break;
			}
		for (i = 0; i < set->ngroup; i++)
		{
			MtFilterColumn *col = list_nth(family->columns, i);

			if (g->values[i] == NULL)
				col->has_null = true;
			else
				col->values = lappend(col->values, g->values[i]);
		}
	}
	if (list_length(((MtFilterColumn *) linitial(rows->columns))->values) == 0 &&
		!((MtFilterColumn *) linitial(rows->columns))->has_null)
		filter = list_delete_first(filter);
	return filter;
}

/* ---------------------------------------------------------------------
 * The table's own rows as the state (MtAnalysis.in_place)
 * ---------------------------------------------------------------------
 */

/*
 * mt_deltas_saw_null_sum
 *		Did a changed row bring a NULL to a sum kept in the table's own
 *		rows?  Their sums rest on their arguments' NOT NULL constraints;
 *		one dropped since, the table needs the hidden counts after all.
 */
bool
mt_deltas_saw_null_sum(MtDeltaSet *set)
{
	ListCell   *lc;

	foreach(lc, set->groups)
	{
		DeltaGroup *g = lfirst(lc);

		for (int i = 0; i < set->nagg; i++)
			if (((MtDeltaAgg *) list_nth(set->a->aggs, i))->kind == MT_AGG_SUM &&
				g->nn[i] != g->rows)
				return true;
	}
	return false;
}

/*
 * mt_deltas_inexact
 *		Can the adjustments not be trusted (see MtDeltaSet.inexact)?  The
 *		table is then recomputed.
 */
bool
mt_deltas_inexact(MtDeltaSet *set)
{
	return set->inexact;
}

/*
 * Does the group's adjustment change nothing (rows changed outside the
 * query's columns)?  zero is a numeric 0.
 */
static bool
idle_group(MtDeltaSet *set, DeltaGroup *g, Datum zero)
{
	if (g->rows != 0)
		return false;
	for (int i = 0; i < set->nsc; i++)
		if (g->sc[i] != 0)
			return false;
	for (int i = 0; i < set->nagg; i++)
		if (g->nn[i] != 0 ||
			!DatumGetBool(DirectFunctionCall2(numeric_eq, g->sums[i], zero)))
			return false;
	return true;
}
/*
 * mt_deltas_apply_in_place
 *		Add the adjustments of the groups that change something to the
 *		table's own rows (refresh/in_place.c); the rows of all the groups
 *		touched are fed to the tables downstream.  Returns the number of
 *		rows written, or -1 if they cannot be adjusted one by one (see
 *		mt_unique_beyond_keys): the caller recomputes instead.
 */
int64
mt_deltas_apply_in_place(MtDeltaSet *set)
{
	MtInPlaceRequest req = {0};
	Datum		zero = numeric_zero();
	ListCell   *lc;

	req.relid = set->relid;
	req.owner = set->owner;
	req.ngroup = set->ngroup;
	req.group_columns = set->a->group_outputs;
	req.nagg = set->nagg;
	req.aggs = palloc(sizeof(MtInPlaceColumn) * (set->nagg + 1));
	foreach(lc, set->a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);
		MtInPlaceColumn *col = &req.aggs[foreach_current_index(lc)];

		col->name = d->output;
		col->type = d->output_type;
		col->kind = d->kind == MT_AGG_COUNT_STAR ? MT_IN_PLACE_ROWS :
			d->kind == MT_AGG_SUM ? MT_IN_PLACE_SUM : MT_IN_PLACE_COUNT;
	}
	foreach(lc, set->groups)
	{
		DeltaGroup *g = lfirst(lc);
		MtInPlaceGroup *live;

		if (idle_group(set, g, zero))
			continue;
		live = palloc(sizeof(MtInPlaceGroup));
		live->values = g->values;
		live->rows = g->rows;
		live->sums = g->sums;
		live->nn = g->nn;
		req.groups = lappend(req.groups, live);
	}
	req.touched = mt_deltas_touched_groups(set);
	return mt_in_place_apply(&req);
}
