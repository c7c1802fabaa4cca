/*-------------------------------------------------------------------------
 *
 * src/continuous/aggregates.c
 *	  The aggregates a DELTAS table keeps, and its result computed from
 *	  them.
 *
 * A DELTAS table's state holds, per group, its row count and, per
 * aggregate of the query (wherever it appears: a result column alone, in
 * an expression, in HAVING), the sum of its argument and the number of
 * non-NULL arguments.  The result columns are the query's own expressions
 * with each aggregate replaced by its value from the state and each group
 * expression by the group's column: sum(price * (1 - discount)) / count(*)
 * needs nothing but the sums and counts.
 *
 * Extrema.  Of min(x) and max(x) the state keeps the extremum itself (and
 * the number of non-NULL arguments), under the ordering of the aggregate's
 * sort operator, which must be its type's default B-tree ordering (the
 * state's SQL compares by least() and greatest(), which use it).  An added
 * value is folded in by comparison; a removed one strictly beyond the kept
 * extremum changes nothing, and a removed one that is not (it may have
 * been the extremum) makes its group be re-read from the sources
 * (continuous/deltas_state.c).  A nondeterministic collation, whose equal
 * values may differ, is left to the other strategies.
 *
 * Display scales.  A numeric sum is shown with the largest display scale
 * among the values summed, which a running total cannot know once values
 * go away.  When the argument's scale can be told from the query -- a
 * column of declared scale, constants, and +, -, * and CASE over them --
 * the possible scales are few and known: the state counts the values of
 * each, and the largest one with values is the sum's scale.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/nbtree.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"

#include "mt/continuous/aggregates.h"
#include "mt/utils/sql.h"

/* ---------------------------------------------------------------------
 * Display scales of numeric expressions
 * ---------------------------------------------------------------------
 */

static List *
add_scale(List *scales, int scale, bool *known)
{
	if (!list_member_int(scales, scale))
		scales = lappend_int(scales, scale);
	if (list_length(scales) > MT_MAX_SCALES)
		*known = false;
	return scales;
}

static bool scales_of(Node *node, List **scales);

/* The scales of combining each scale of a with each of b by +, - or *. */
static bool
combined_scales(Node *a, Node *b, bool multiply, List **scales)
{
	List	   *sa = NIL;
	List	   *sb = NIL;
	bool		known = true;
	ListCell   *la;
	ListCell   *lb;

	if (!scales_of(a, &sa) || !scales_of(b, &sb))
		return false;
	foreach(la, sa)
		foreach(lb, sb)
			*scales = add_scale(*scales,
								multiply ? lfirst_int(la) + lfirst_int(lb) :
								Max(lfirst_int(la), lfirst_int(lb)), &known);
	return known;
}

/*
 * The display scales a numeric (or integer) expression's non-NULL values
 * can have, as PostgreSQL's numeric arithmetic computes them: a sum's or
 * difference's is the larger of its operands', a product's their sum.
 * False when they cannot be told.
 */
static bool
scales_of(Node *node, List **scales)
{
	Oid			type = exprType(node);
	bool		known = true;

	if (type == INT2OID || type == INT4OID || type == INT8OID)
	{
		*scales = add_scale(*scales, 0, &known);
		return true;
	}
	if (type != NUMERICOID)
		return false;
	/* a declared scale: every value has it */
	if (exprTypmod(node) >= (int32) VARHDRSZ)
	{
		*scales = add_scale(*scales, (exprTypmod(node) - VARHDRSZ) & 0xffff, &known);
		return true;
	}
	switch (nodeTag(node))
	{
		case T_Const:
			{
				Const	   *c = (Const *) node;

				if (c->constisnull)
					return true;
				if (numeric_is_nan(DatumGetNumeric(c->constvalue)) ||
					numeric_is_inf(DatumGetNumeric(c->constvalue)))
					return false;
				*scales = add_scale(*scales,
									DatumGetInt32(DirectFunctionCall1(numeric_scale,
																	  c->constvalue)),
									&known);
				return known;
			}
		case T_RelabelType:
			return scales_of((Node *) ((RelabelType *) node)->arg, scales);
		case T_OpExpr:
		case T_FuncExpr:
			{
				List	   *args;
				Oid			func;

				if (IsA(node, OpExpr))
				{
					args = ((OpExpr *) node)->args;
					func = get_opcode(((OpExpr *) node)->opno);
				}
				else
				{
					args = ((FuncExpr *) node)->args;
					func = ((FuncExpr *) node)->funcid;
				}
				switch (func)
				{
					case F_NUMERIC_ADD:
					case F_NUMERIC_SUB:
						return combined_scales(linitial(args), lsecond(args), false, scales);
					case F_NUMERIC_MUL:
						return combined_scales(linitial(args), lsecond(args), true, scales);
					case F_NUMERIC_UMINUS:
					case F_NUMERIC_UPLUS:
					case F_ABS_NUMERIC:
					case F_NUMERIC_INT2:
					case F_NUMERIC_INT4:
					case F_NUMERIC_INT8:
						return scales_of(linitial(args), scales);
					case F_ROUND_NUMERIC:
					case F_TRUNC_NUMERIC:
						*scales = add_scale(*scales, 0, &known);
						return true;
					case F_ROUND_NUMERIC_INT4:
					case F_TRUNC_NUMERIC_INT4:
						{
							Node	   *digits = lsecond(args);

							if (!IsA(digits, Const) || ((Const *) digits)->constisnull)
								return false;
							*scales = add_scale(*scales,
												Max(DatumGetInt32(((Const *) digits)->constvalue), 0),
												&known);
							return true;
						}
					default:
						return false;
				}
			}
		case T_CaseExpr:
			{
				CaseExpr   *c = (CaseExpr *) node;
				ListCell   *lc;

				foreach(lc, c->args)
					if (!scales_of((Node *) ((CaseWhen *) lfirst(lc))->result, scales))
						return false;
				return c->defresult == NULL || scales_of((Node *) c->defresult, scales);
			}
		case T_CoalesceExpr:
			{
				ListCell   *lc;

				foreach(lc, ((CoalesceExpr *) node)->args)
					if (!scales_of(lfirst(lc), scales))
						return false;
				return true;
			}
		default:
			return false;
	}
}

/* ---------------------------------------------------------------------
 * Aggregates
 * ---------------------------------------------------------------------
 */

/* CASE WHEN filter THEN value END */
static Expr *
filtered(Expr *filter, Expr *value)
{
	CaseExpr   *c = makeNode(CaseExpr);
	CaseWhen   *w = makeNode(CaseWhen);

	w->expr = filter;
	w->result = value;
	w->location = -1;
	c->casetype = exprType((Node *) value);
	c->casecollid = exprCollation((Node *) value);
	c->args = list_make1(w);
	c->defresult = (Expr *) makeNullConst(c->casetype, exprTypmod((Node *) value),
										  c->casecollid);
	c->location = -1;
	return (Expr *) c;
}

/*
 * Can min(x) or max(x) (agg, whose argument is of type argtype) be kept
 * by comparison?  Its sort operator must be the default B-tree ordering of
 * the type (the state's least() and greatest() use that one), the type
 * must have an array type (the values travel in arrays), and a collation
 * deterministic.  Fills the comparison and the collation.
 */
static bool
extremum_kept(Aggref *agg, Oid argtype, MtDeltaAgg *d)
{
	HeapTuple	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(agg->aggfnoid));
	Oid			sortop;
	Oid			opfamily;
	Oid			opcintype;
	Oid			opclass;
	int16		strategy;

	if (!HeapTupleIsValid(tup))
		return false;
	sortop = ((Form_pg_aggregate) GETSTRUCT(tup))->aggsortop;
	ReleaseSysCache(tup);
	if (!OidIsValid(sortop) ||
		!get_ordering_op_properties(sortop, &opfamily, &opcintype, &strategy) ||
		strategy != (d->kind == MT_AGG_MIN ? BTLessStrategyNumber : BTGreaterStrategyNumber))
		return false;
	opclass = GetDefaultOpClass(argtype, BTREE_AM_OID);
	if (!OidIsValid(opclass) || get_opclass_family(opclass) != opfamily ||
		!OidIsValid(get_array_type(argtype)))
		return false;
	if (OidIsValid(agg->inputcollid) && !get_collation_isdeterministic(agg->inputcollid))
		return false;
	d->cmp_proc = get_opfamily_proc(opfamily, opcintype, opcintype, BTORDER_PROC);
	d->collation = agg->inputcollid;
	d->sum_type = argtype;
	return OidIsValid(d->cmp_proc);
}

/*
 * mt_delta_agg
 *		Fill d from a count(*), count(x), sum(x), avg(x), min(x) or max(x)
 *		of the query's level, with or without FILTER (an ORDER BY inside
 *		changes none of them); false for any other aggregate.
 */
bool
mt_delta_agg(Aggref *agg, MtDeltaAgg *d)
{
	char	   *name;
	Expr	   *arg = NULL;
	Oid			argtype = InvalidOid;
	ListCell   *lc;

	memset(d, 0, sizeof(MtDeltaAgg));
	if (agg->aggdistinct || agg->aggvariadic || agg->aggkind != AGGKIND_NORMAL ||
		agg->agglevelsup != 0 || get_func_namespace(agg->aggfnoid) != PG_CATALOG_NAMESPACE)
		return false;
	name = get_func_name(agg->aggfnoid);
	foreach(lc, agg->args)
	{
		TargetEntry *tle = lfirst(lc);

		if (tle->resjunk)
			continue;			/* an ORDER BY expression */
		if (arg != NULL)
			return false;
		arg = tle->expr;
		argtype = exprType((Node *) arg);
	}
	d->agg_type = agg->aggtype;

	if (strcmp(name, "count") == 0)
	{
		d->sum_type = INT8OID;
		d->kind = agg->aggstar ? MT_AGG_COUNT_STAR : MT_AGG_COUNT;
		if (agg->aggfilter)
		{
			/* counting the rows the filter lets through */
			d->kind = MT_AGG_COUNT;
			arg = filtered(agg->aggfilter,
						   arg ? arg : (Expr *) makeBoolConst(true, false));
		}
		d->arg = arg ? copyObject(arg) : NULL;
		return true;
	}
	if (arg == NULL)
		return false;
	if (strcmp(name, "sum") == 0)
	{
		if (argtype == INT2OID || argtype == INT4OID)
			d->sum_type = INT8OID;
		else if (argtype == INT8OID || argtype == NUMERICOID)
			d->sum_type = NUMERICOID;
		else
			return false;		/* float sums drift under additions and
								 * subtractions */
		d->kind = MT_AGG_SUM;
	}
	else if (strcmp(name, "avg") == 0)
	{
		if (argtype != INT2OID && argtype != INT4OID && argtype != INT8OID &&
			argtype != NUMERICOID)
			return false;
		d->sum_type = NUMERICOID;
		d->kind = MT_AGG_AVG;
	}
	else if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0)
	{
		d->kind = strcmp(name, "min") == 0 ? MT_AGG_MIN : MT_AGG_MAX;
		/*
		 * Which of several equal values the query returns depends on the
		 * order it reads them in: equal values must print alike (not 1.0
		 * and 1.00) for the one kept to be the query's
		 */
		if (!extremum_kept(agg, argtype, d) || !mt_group_prints_alike((Node *) arg, false))
			return false;
		if (agg->aggfilter)
			arg = filtered(agg->aggfilter, arg);
		d->arg = copyObject(arg);
		return true;
	}
	else
		return false;
	if (argtype == NUMERICOID && exprTypmod((Node *) arg) < 0)
	{
		/* its sum's display scale must come out as the query's */
		if (!scales_of((Node *) arg, &d->scales) || d->scales == NIL)
			return false;
		list_sort(d->scales, list_int_cmp);
	}
	if (agg->aggfilter)
		arg = filtered(agg->aggfilter, arg);
	d->arg = copyObject(arg);
	return true;
}

/* ---------------------------------------------------------------------
 * The result from the state
 * ---------------------------------------------------------------------
 */

typedef struct OutputContext
{
	List	   *groups;			/* Expr: the group expressions */
	List	   *aggrefs;		/* Aggref, in the order of a->aggs */
	MtAnalysis *a;				/* its grouping sets, if any */
	bool		ok;
} OutputContext;

/* Collect the query's aggregates, each once. */
static bool
collect_aggrefs(Node *node, OutputContext *cx)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		if (!list_member(cx->aggrefs, node))
			cx->aggrefs = lappend(cx->aggrefs, node);
		return false;			/* (an aggregate of this level has none inside) */
	}
	if (IsA(node, GroupingFunc))
	{
		/* (its arguments are group expressions: over_state computes it) */
		if (cx->a->grouping_sets == NIL)
			cx->ok = false;
		return false;
	}
	if (IsA(node, SubLink) || IsA(node, WindowFunc))
		cx->ok = false;
	return expression_tree_walker(node, collect_aggrefs, cx);
}

/*
 * mt_grouping_mask
 *		GROUPING() of all group expressions in a row of a grouping set:
 *		a bit for each, the first the highest, set when the set leaves it out.
 */
int
mt_grouping_mask(MtAnalysis *a, Bitmapset *set)
{
	int			mask = 0;

	for (int i = 0; i < list_length(a->group_exprs); i++)
		mask = (mask << 1) | (bms_is_member(i, set) ? 0 : 1);
	return mask;
}

/*
 * GROUPING(args) over the state: a CASE over its grouping set column (the
 * group columns' Vars, then that one), one WHEN per set.
 */
static Node *
grouping_over_state(GroupingFunc *gf, OutputContext *cx)
{
	CaseExpr   *c = makeNode(CaseExpr);
	int			ngroup = list_length(cx->groups);
	ListCell   *ls;

	c->casetype = INT4OID;
	c->arg = (Expr *) makeVar(1, ngroup + 1, INT4OID, -1, InvalidOid, 0);
	foreach(ls, cx->a->grouping_sets)
	{
		Bitmapset  *members = lfirst(ls);
		CaseWhen   *w = makeNode(CaseWhen);
		CaseTestExpr *test = makeNode(CaseTestExpr);
		int			value = 0;
		ListCell   *la;

		foreach(la, gf->args)
		{
			int			pos = -1;
			ListCell   *lg;

			foreach(lg, cx->groups)
				if (equal(lfirst(la), lfirst(lg)))
					pos = foreach_current_index(lg);
			if (pos < 0)
			{
				cx->ok = false;
				return (Node *) gf;
			}
			value = (value << 1) | (bms_is_member(pos, members) ? 0 : 1);
		}
		test->typeId = INT4OID;
		test->typeMod = -1;
		test->collation = InvalidOid;
		w->expr = (Expr *) make_opclause(Int4EqualOperator,
										 BOOLOID, false, (Expr *) test,
										 (Expr *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
															Int32GetDatum(mt_grouping_mask(cx->a, members)),
															false, true),
										 InvalidOid, InvalidOid);
		((OpExpr *) w->expr)->opfuncid = F_INT4EQ;
		w->result = (Expr *) makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
									   Int32GetDatum(value), false, true);
		w->location = -1;
		c->args = lappend(c->args, w);
	}
	c->defresult = (Expr *) makeNullConst(INT4OID, -1, InvalidOid);
	c->location = -1;
	return (Node *) c;
}

/*
 * An expression over the state: aggregates and group expressions as Vars
 * (the group columns, with grouping sets the set's, then the aggregates).
 */
static Node *
over_state(Node *node, OutputContext *cx)
{
	ListCell   *lc;
	int			first_agg = list_length(cx->groups) + (cx->a->grouping_sets != NIL ? 1 : 0);

	if (node == NULL)
		return NULL;
	if (IsA(node, GroupingFunc))
		return grouping_over_state((GroupingFunc *) node, cx);
	foreach(lc, cx->groups)
	{
		Node	   *g = lfirst(lc);

		if (equal(node, g))
			return (Node *) makeVar(1, foreach_current_index(lc) + 1, exprType(g),
									exprTypmod(g), exprCollation(g), 0);
	}
	if (IsA(node, Aggref))
	{
		Aggref	   *agg = (Aggref *) node;

		foreach(lc, cx->aggrefs)
			if (equal(node, lfirst(lc)))
				return (Node *) makeVar(1, first_agg + foreach_current_index(lc) + 1,
										agg->aggtype, -1, agg->aggcollid, 0);
	}
	/* a column neither grouped nor aggregated (functionally dependent) */
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
		cx->ok = false;
	return expression_tree_mutator(node, over_state, cx);
}

/* The position of node in a list (by equal()). */
static int
position_of(List *list, Node *node)
{
	ListCell   *lc;

	foreach(lc, list)
		if (equal(lfirst(lc), node))
			return foreach_current_index(lc);
	elog(ERROR, "expression not found");
	return -1;
}

/*
 * Whether tle is a result column of the derived view: one of the query's,
 * or, with ORDER BY ... LIMIT, an expression it is sorted by.
 */
static bool
is_output(Query *q, MtAnalysis *a, TargetEntry *tle)
{
	if (!tle->resjunk)
		return true;
	return a->topk && tle->ressortgroupref != 0 &&
		get_sortgroupref_clause_noerr(tle->ressortgroupref, q->sortClause) != NULL;
}

/*
 * mt_delta_outputs
 *		The aggregates the query's result columns and HAVING read (a->aggs)
 *		and the result columns and HAVING over them (a->outputs,
 *		a->having); false if one is not maintained by deltas.  group_tles
 *		are the result's group columns, in group order.
 */
bool
mt_delta_outputs(Query *q, List *group_tles, MtAnalysis *a)
{
	OutputContext cx = {NIL, NIL, a, true};
	ListCell   *lc;

	a->topk = (q->limitCount != NULL || q->limitOffset != NULL);
	foreach(lc, group_tles)
		cx.groups = lappend(cx.groups, ((TargetEntry *) lfirst(lc))->expr);
	foreach(lc, q->targetList)
		if (is_output(q, a, lfirst(lc)))
			(void) collect_aggrefs((Node *) ((TargetEntry *) lfirst(lc))->expr, &cx);
	(void) collect_aggrefs(q->havingQual, &cx);
	if (!cx.ok)
		return false;
	foreach(lc, cx.aggrefs)
	{
		MtDeltaAgg *d = palloc(sizeof(MtDeltaAgg));

		if (!mt_delta_agg(lfirst(lc), d))
			return false;
		a->aggs = lappend(a->aggs, d);
	}

	a->plain_outputs = (q->havingQual == NULL && !a->topk);
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		MtDeltaOutput *out;

		if (!is_output(q, a, tle))
			continue;
		out = palloc(sizeof(MtDeltaOutput));
		out->name = tle->resname ? pstrdup(tle->resname) : NULL;
		out->expr = (Expr *) over_state((Node *) tle->expr, &cx);
		out->junk = tle->resjunk;
		out->sortref = a->topk ? tle->ressortgroupref : 0;
		a->outputs = lappend(a->outputs, out);
		if (tle->resjunk)
			continue;
		if (IsA(tle->expr, Aggref))
		{
			MtDeltaAgg *d = list_nth(a->aggs, position_of(cx.aggrefs, (Node *) tle->expr));

			if (d->output == NULL)
			{
				d->output = out->name;
				d->output_type = exprType((Node *) tle->expr);
				continue;
			}
		}
		if (!list_member_ptr(group_tles, tle))
			a->plain_outputs = false;
	}
	a->having = over_state(q->havingQual, &cx);
	if (a->topk)
	{
		a->sort_clause = copyObject(q->sortClause);
		a->limit_count = copyObject(q->limitCount);
		a->limit_offset = copyObject(q->limitOffset);
		a->limit_option = q->limitOption;
	}
	return cx.ok;
}

/*
 * mt_group_prints_alike
 *		Can a group column's values be told apart by their text, as
 *		adjustments keep them?  Equal values must print alike: not floats
 *		(0 = -0) or text under a nondeterministic collation; numerics only
 *		of a declared scale (1.0 = 1.00) -- the hidden state normalizes the
 *		others' text, a table that is its own state cannot.
 */
bool
mt_group_prints_alike(Node *expr, bool normalized_numeric)
{
	switch (exprType(expr))
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case BOOLOID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case UUIDOID:
			return true;
		case NUMERICOID:
			return normalized_numeric || exprTypmod(expr) >= 0;
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			return !OidIsValid(exprCollation(expr)) ||
				get_collation_isdeterministic(exprCollation(expr));
		default:
			return false;
	}
}

/* ---------------------------------------------------------------------
 * The state's columns, and the derived view over them
 * ---------------------------------------------------------------------
 */

char *
mt_sum_column(int agg)
{
	return psprintf("__mt_sum_%d", agg + 1);
}

char *
mt_nn_column(int agg)
{
	return psprintf("__mt_nn_%d", agg + 1);
}

/* the number of the aggregate's values of its scale-th possible scale */
char *
mt_scale_column(int agg, int scale)
{
	return psprintf("__mt_sc_%d_%d", agg + 1, scale + 1);
}

/* How many scale counts the state keeps for an aggregate. */
int
mt_delta_nscales(MtDeltaAgg *d)
{
	return list_length(d->scales) > 1 ? list_length(d->scales) : 0;
}

/* The sum of an aggregate shown with the display scale of its values. */
static char *
shown_sum(MtDeltaAgg *d, int i)
{
	StringInfoData scale;

	if (d->scales == NIL)
		return mt_sum_column(i);
	if (list_length(d->scales) == 1)
		return psprintf("pg_catalog.round(%s, %d)", mt_sum_column(i), linitial_int(d->scales));
	/* the largest scale that values have */
	initStringInfo(&scale);
	appendStringInfoString(&scale, "CASE");
	for (int j = list_length(d->scales) - 1; j >= 0; j--)
		appendStringInfo(&scale, " WHEN %s > 0 THEN %d", mt_scale_column(i, j),
						 list_nth_int(d->scales, j));
	appendStringInfoString(&scale, " ELSE 0 END");
	return psprintf("pg_catalog.round(%s, %s)", mt_sum_column(i), scale.data);
}

/*
 * mt_delta_collate_sql
 *		" COLLATE <the extremum's collation>", qualified, or "" for an
 *		aggregate that has none.
 */
char *
mt_delta_collate_sql(MtDeltaAgg *d)
{
	if (d->kind != MT_AGG_MIN && d->kind != MT_AGG_MAX)
		return "";
	return mt_collate_sql(d->collation);
}

/* An aggregate's value from the state's columns. */
static char *
agg_value_sql(MtDeltaAgg *d, int i)
{
	char	   *value = NULL;

	switch (d->kind)
	{
		case MT_AGG_MIN:
		case MT_AGG_MAX:
			/* the extremum kept, NULL when there are no values */
			return psprintf("(%s)::%s%s", mt_sum_column(i),
							format_type_be_qualified(d->agg_type), mt_delta_collate_sql(d));
		case MT_AGG_COUNT_STAR:
			value = "__mt_rows";
			break;
		case MT_AGG_COUNT:
			value = mt_nn_column(i);
			break;
		case MT_AGG_SUM:
			value = psprintf("CASE WHEN %s > 0 THEN %s END", mt_nn_column(i), shown_sum(d, i));
			break;
		case MT_AGG_AVG:
			value = psprintf("CASE WHEN %s > 0 THEN %s::pg_catalog.numeric / %s::pg_catalog.numeric END",
							 mt_nn_column(i), shown_sum(d, i), mt_nn_column(i));
			break;
	}
	return psprintf("(%s)::%s", value, format_type_be_qualified(d->agg_type));
}

/*
 * mt_delta_derived_sql
 *		The query of a DELTAS table's derived view over its state: the
 *		query's result columns and HAVING, parse-analyzed over a subquery
 *		of the state that gives the group columns and the aggregates'
 *		values, then deparsed (PostgreSQL qualifies every name it calls).
 *		A state row per group that has rows; the one row of a global
 *		aggregate, rows or not.
 */
char *
mt_delta_derived_sql(MtAnalysis *a, const char *state)
{
	StringInfoData inner;
	char	   *sql;
	List	   *raw;
	Query	   *q;
	ListCell   *lc;
	int			resno = 1;

	initStringInfo(&inner);
	foreach(lc, a->group_outputs)
		appendStringInfo(&inner, "%s, ", quote_identifier(lfirst(lc)));
	if (a->grouping_sets != NIL)
		appendStringInfo(&inner, "%s, ", MT_GROUPING_SET_COLUMN);
	foreach(lc, a->aggs)
		appendStringInfo(&inner, "%s AS __mt_agg_%d, ",
						 agg_value_sql(lfirst(lc), foreach_current_index(lc)),
						 foreach_current_index(lc) + 1);
	appendStringInfo(&inner, "__mt_rows FROM %s", state);
	/* the one row of a global aggregate, or of grouping set (), rows or not */
	if (a->group_exprs != NIL)
	{
		appendStringInfoString(&inner, " WHERE __mt_rows > 0");
		foreach(lc, a->grouping_sets)
			if (bms_is_empty(lfirst(lc)))
				appendStringInfo(&inner, " OR %s OPERATOR(pg_catalog.=) %d", MT_GROUPING_SET_COLUMN,
								 mt_grouping_mask(a, lfirst(lc)));
	}

	sql = psprintf("SELECT * FROM (SELECT %s) s", inner.data);
	raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	q = parse_analyze_fixedparams(linitial(raw), sql, NULL, 0, NULL);
	q->targetList = NIL;
	foreach(lc, a->outputs)
	{
		MtDeltaOutput *out = lfirst(lc);

		TargetEntry *tle = makeTargetEntry(copyObject(out->expr), resno++,
										   out->name ? pstrdup(out->name) : NULL,
										   out->junk);

		tle->ressortgroupref = out->sortref;
		q->targetList = lappend(q->targetList, tle);
	}
	q->jointree->quals = copyObject(a->having);
	if (a->topk)
	{
		q->sortClause = copyObject(a->sort_clause);
		q->limitCount = copyObject(a->limit_count);
		q->limitOffset = copyObject(a->limit_offset);
		q->limitOption = a->limit_option;
	}
	return mt_query_text(q);
}
