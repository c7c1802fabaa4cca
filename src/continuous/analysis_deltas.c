/*-------------------------------------------------------------------------
 *
 * src/continuous/analysis_deltas.c
 *	  Whether DELTAS can maintain a CONTINUOUS table, and what they need:
 *	  the rows before aggregation, the source whose changed rows adjust
 *	  the groups, and the SQL of the terms of the delta rule.
 *
 * See DELTAS in mt/continuous/analysis.h; the aggregates themselves are
 * read by continuous/aggregates.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/transam.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/prep.h"
#include "parser/parse_agg.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/continuous/aggregates.h"
#include "mt/continuous/analysis_int.h"
#include "mt/utils/sql.h"

/*
 * Does the table hold nothing but the query's columns, each of the type
 * the query gives it (a declared column list may give others), in a plain
 * table (no partitions to route rows to)?
 */
static bool
table_holds_its_state(Oid relid, Oid viewid)
{
	MtTable    *mt = mt_catalog_lookup(relid, true);
	Relation	rel;
	Relation	view;
	TupleDesc	desc;
	TupleDesc	vdesc;
	bool		ok = true;

	if (mt == NULL || mt->metadata_columns != NIL || get_rel_relkind(relid) != RELKIND_RELATION)
		return false;
	rel = table_open(relid, AccessShareLock);
	view = table_open(viewid, AccessShareLock);
	desc = RelationGetDescr(rel);
	vdesc = RelationGetDescr(view);
	for (int v = 0; v < vdesc->natts; v++)
	{
		Form_pg_attribute vatt = TupleDescAttr(vdesc, v);
		bool		found = false;

		for (int i = 0; i < desc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, i);

			if (!att->attisdropped && strcmp(NameStr(att->attname), NameStr(vatt->attname)) == 0)
				found = !att->attgenerated && att->atttypid == vatt->atttypid &&
					att->atttypmod == vatt->atttypmod;
		}
		ok = ok && found;
	}
	table_close(view, AccessShareLock);
	table_close(rel, AccessShareLock);
	return ok;
}

/*
 * mt_deltas_in_place_possible
 *		Can the DELTAS table relid (query view viewid) be its own state?
 *		It can when each result column can be adjusted from its value alone
 *		-- count(*), count(x), and sum(x) of a column declared NOT NULL
 *		(whose sum is never NULL in a group that has rows) -- count(*) tells
 *		when a group has no rows left, equal group values print alike, and
 *		the table holds nothing else.  Then a changed group is one row
 *		updated in the table, instead of a row of hidden state updated and
 *		the table's row rewritten from it; avg, and sums that may be NULL,
 *		need the hidden counts.  Everything is read as it is now: the worker
 *		asks again each cycle of a table that has no hidden state.
 */
bool
mt_deltas_in_place_possible(MtAnalysis *a, Oid relid, Oid viewid)
{
	bool		counted = false;
	ListCell   *lc;

	if (a->strategy != MT_STRATEGY_DELTAS)
		return false;
	if (a->group_exprs == NIL || !a->plain_outputs || a->grouping_sets != NIL)
		return false;
	foreach(lc, a->group_exprs)
		if (!mt_group_prints_alike(lfirst(lc), false))
			return false;
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);
		HeapTuple	tup;
		bool		not_null;

		if (d->kind == MT_AGG_COUNT_STAR)
			counted = true;
		if (d->kind == MT_AGG_AVG || d->kind == MT_AGG_MIN || d->kind == MT_AGG_MAX ||
			d->output == NULL || d->scales != NIL)
			return false;
		if (d->kind != MT_AGG_SUM)
			continue;
		if (!OidIsValid(d->arg_relid))
			return false;
		tup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(d->arg_relid),
							  Int16GetDatum(d->arg_attnum));
		if (!HeapTupleIsValid(tup))
			return false;
		not_null = ((Form_pg_attribute) GETSTRUCT(tup))->attnotnull;
		ReleaseSysCache(tup);
		if (!not_null)
			return false;
	}
	return counted && table_holds_its_state(relid, viewid);
}

/* Is every item of the jointree a plain relation, joined by inner joins? */
static bool
inner_joins_only(Query *q, Node *node)
{
	ListCell   *lc;

	if (IsA(node, RangeTblRef))
		return rt_fetch(((RangeTblRef *) node)->rtindex, q->rtable)->rtekind == RTE_RELATION;
	if (IsA(node, JoinExpr))
		return ((JoinExpr *) node)->jointype == JOIN_INNER &&
			inner_joins_only(q, ((JoinExpr *) node)->larg) &&
			inner_joins_only(q, ((JoinExpr *) node)->rarg);
	if (!IsA(node, FromExpr))
		return false;
	foreach(lc, ((FromExpr *) node)->fromlist)
		if (!inner_joins_only(q, lfirst(lc)))
			return false;
	return true;
}

/* Is every column of the relation's primary key equal to another source's? */
static bool
joined_by_primary_key(MtGraph *g, int rtindex, Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	Oid			pk = RelationGetPrimaryKeyIndex(rel);
	bool		result = OidIsValid(pk);

	table_close(rel, AccessShareLock);
	if (!result)
		return false;
	rel = index_open(pk, AccessShareLock);
	for (int i = 0; i < rel->rd_index->indnkeyatts && result; i++)
	{
		MtVarRef	key = {rtindex, rel->rd_index->indkey.values[i]};
		ListCell   *lc;

		result = false;
		foreach(lc, g->edges)
		{
			MtEdge	   *e = lfirst(lc);

			if ((mt_same_var(e->from, key) && e->to.varno != rtindex) ||
				(mt_same_var(e->to, key) && e->from.varno != rtindex))
				result = true;
		}
	}
	index_close(rel, AccessShareLock);
	return result;
}

/*
 * The source whose changed rows become adjustments through the join: one
 * that is not joined by its primary key (the others look like dimensions
 * of it), the largest by its statistics, the first in the query on a tie.
 */
static int
delta_rtindex(MtGraph *g, List *rtindexes)
{
	int			best = 0;
	bool		best_dimension = true;
	double		best_rows = -1;
	ListCell   *lc;

	foreach(lc, rtindexes)
	{
		int			rtindex = lfirst_int(lc);
		Oid			relid = rt_fetch(rtindex, g->q->rtable)->relid;
		bool		dimension = joined_by_primary_key(g, rtindex, relid);
		double		rows = 0;
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));

		if (HeapTupleIsValid(tup))
		{
			rows = Max(0, ((Form_pg_class) GETSTRUCT(tup))->reltuples);
			ReleaseSysCache(tup);
		}
		if (best == 0 || (best_dimension && !dimension) ||
			(best_dimension == dimension && rows > best_rows))
		{
			best = rtindex;
			best_dimension = dimension;
			best_rows = rows;
		}
	}
	return best;
}

/*
 * The query's rows before aggregation: its FROM and WHERE, the grouping
 * columns under their result names, then the argument of each aggregate
 * that has one as __mt_arg_<n>.
 */
static Query *
rows_query(Query *q, List *group_tles, MtAnalysis *a)
{
	Query	   *rows = copyObject(q);
	ListCell   *lc;
	int			resno = 1;

	rows->targetList = NIL;
	foreach(lc, group_tles)
	{
		TargetEntry *tle = lfirst(lc);

		rows->targetList = lappend(rows->targetList,
								   makeTargetEntry(copyObject(tle->expr), resno++,
												   pstrdup(tle->resname), false));
	}
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);

		if (d->arg)
			rows->targetList = lappend(rows->targetList,
									   makeTargetEntry(copyObject(d->arg), resno,
													   psprintf("__mt_arg_%d", foreach_current_index(lc) + 1),
													   false));
		resno++;
	}
	rows->hasAggs = false;
	rows->groupClause = NIL;
	rows->groupingSets = NIL;
	rows->groupDistinct = false;
	rows->havingQual = NULL;
	rows->sortClause = NIL;
	rows->limitCount = NULL;
	rows->limitOffset = NULL;
	rows->limitOption = LIMIT_OPTION_DEFAULT;
	return rows;
}

/* unnest($paramid), the param an array of elemtype, as a FROM item's function. */
static RangeTblFunction *
unnest_param(int paramid, Oid elemtype)
{
	Param	   *param = makeNode(Param);
	FuncExpr   *unnest;
	RangeTblFunction *function = makeNode(RangeTblFunction);

	param->paramkind = PARAM_EXTERN;
	param->paramid = paramid;
	param->paramtype = get_array_type(elemtype);
	param->paramtypmod = -1;
	param->location = -1;
	unnest = makeFuncExpr(F_UNNEST_ANYARRAY, elemtype, list_make1(param), InvalidOid,
						  InvalidOid, COERCE_EXPLICIT_CALL);
	unnest->funcretset = true;
	function->funcexpr = (Node *) unnest;
	return function;
}

/*
 * Replace source rtindex of a rows query by unnest($paramid), the param an
 * array of that source's rows (its row type).
 */
static void
replace_by_rows(Query *rows, int rtindex, int paramid)
{
	RangeTblEntry *rte = rt_fetch(rtindex, rows->rtable);
	Oid			rowtype = get_rel_type_id(rte->relid);
	RangeTblFunction *function = unnest_param(paramid, rowtype);
	Relation	rel;

	/*
	 * The row type has the columns added to the relation since the query
	 * was made, which its range table entry does not name: named here, so
	 * that a column after them (add_signs) is not taken for one of them
	 */
	rel = table_open(rte->relid, AccessShareLock);
	for (int i = list_length(rte->eref->colnames); i < RelationGetDescr(rel)->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), i);

		rte->eref->colnames = lappend(rte->eref->colnames,
									  makeString(pstrdup(att->attisdropped ? "" : NameStr(att->attname))));
	}
	table_close(rel, AccessShareLock);
	function->funccolcount = list_length(rte->eref->colnames);
	rte->rtekind = RTE_FUNCTION;
	rte->relid = InvalidOid;
	rte->relkind = 0;
	rte->rellockmode = NoLock;
	rte->inh = false;
	rte->functions = list_make1(function);
	rte->funcordinality = false;
}

/*
 * The rows query with source rtindex replaced by $1: the rows a set of
 * changed rows of the source gives, joined with the other sources as they
 * are.
 */
static char *
changes_sql(Query *rows, int rtindex)
{
	Query	   *changes = copyObject(rows);

	replace_by_rows(changes, rtindex, 1);
	return mt_query_text(changes);
}

/*
 * Give a source replaced by replace_by_rows its rows' signs too: ROWS
 * FROM (unnest($rows), unnest($signs)), the signs (int4[], 1 or -1) in one
 * more column, __mt_sign; returns a Var of it.
 */
static Var *
add_signs(Query *q, int rtindex, int paramid)
{
	RangeTblEntry *rte = rt_fetch(rtindex, q->rtable);
	RangeTblFunction *function = unnest_param(paramid, INT4OID);
	int			attno = list_length(rte->eref->colnames) + 1;
	char	   *name = psprintf("__mt_sign_%d", rtindex);

	function->funccolcount = 1;
	rte->functions = lappend(rte->functions, function);
	/* (a column list of the query's alias names the first columns only) */
	if (rte->alias && rte->alias->colnames != NIL)
	{
		while (list_length(rte->alias->colnames) < list_length(rte->eref->colnames))
			rte->alias->colnames = lappend(rte->alias->colnames,
										   list_nth(rte->eref->colnames,
													list_length(rte->alias->colnames)));
		rte->alias->colnames = lappend(rte->alias->colnames, makeString(pstrdup(name)));
	}
	rte->eref->colnames = lappend(rte->eref->colnames, makeString(name));
	return makeVar(rtindex, attno, INT4OID, -1, InvalidOid, 0);
}

/*
 * A term of the delta rule: its sources (member numbers), whether its rows
 * carry their signs, and its SQL.
 */
typedef struct TermSql
{
	List	   *members;
	bool		signed_rows;
	char	   *sql;
} TermSql;

/*
 * mt_analysis_term_sql
 *		The rows query of a DELTAS join with the changed rows of some of
 *		its sources in place of the sources: members lists them, 0 for
 *		delta_source and n for the n-th of sides, and the i-th (from 1) is
 *		replaced by $i, an array of its rows.  With signed_rows, the i-th of
 *		n also reads $(n + i), the signs of its rows (1 added, -1 taken
 *		away), and the query's last column, __mt_sign, is their product: one
 *		query for the rows of both signs.  Made once per set, kept with the
 *		analysis.
 */
const char *
mt_analysis_term_sql(MtAnalysis *a, List *members, bool signed_rows)
{
	MemoryContext old;
	ListCell   *lc;
	Query	   *q;
	TermSql    *term;
	Expr	   *sign = NULL;

	foreach(lc, a->term_sqls)
		if (equal(((TermSql *) lfirst(lc))->members, members) &&
			((TermSql *) lfirst(lc))->signed_rows == signed_rows)
			return ((TermSql *) lfirst(lc))->sql;
	old = MemoryContextSwitchTo(GetMemoryChunkContext(a));
	q = copyObject(a->rows_query);
	foreach(lc, members)
	{
		int			m = lfirst_int(lc);
		int			rtindex = m == 0 ? a->delta_rtindex :
			((MtDeltaSide *) list_nth(a->sides, m - 1))->rtindex;

		replace_by_rows(q, rtindex, foreach_current_index(lc) + 1);
		if (signed_rows)
		{
			Var		   *var = add_signs(q, rtindex, list_length(members) + foreach_current_index(lc) + 1);

			/* (of 1s and -1s: the product cannot overflow) */
			sign = sign == NULL ? (Expr *) var :
				(Expr *) makeFuncExpr(F_INT4MUL, INT4OID, list_make2(sign, var), InvalidOid,
									  InvalidOid, COERCE_EXPLICIT_CALL);
		}
	}
	if (signed_rows)
		q->targetList = lappend(q->targetList,
								makeTargetEntry(sign, list_length(q->targetList) + 1,
												pstrdup(MT_SIGN_COLUMN), false));
	term = palloc(sizeof(TermSql));
	term->members = list_copy(members);
	term->signed_rows = signed_rows;
	term->sql = mt_query_text(q);
	a->term_sqls = lappend(a->term_sqls, term);
	MemoryContextSwitchTo(old);
	return term->sql;
}

/* The conditions of the WHERE clause and the inner joins' ON under node. */
static void
join_conditions(Node *node, List **conds)
{
	ListCell   *lc;

	if (IsA(node, JoinExpr))
	{
		JoinExpr   *j = (JoinExpr *) node;

		join_conditions(j->larg, conds);
		join_conditions(j->rarg, conds);
		if (j->jointype == JOIN_INNER)
			*conds = list_concat(*conds, make_ands_implicit((Expr *) j->quals));
	}
	else if (IsA(node, FromExpr))
	{
		foreach(lc, ((FromExpr *) node)->fromlist)
			join_conditions(lfirst(lc), conds);
		*conds = list_concat(*conds, make_ands_implicit((Expr *) ((FromExpr *) node)->quals));
	}
}

/* Does the expression read a system column or a whole row? */
static bool
reads_whole_or_system(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return ((Var *) node)->varattno <= 0;
	return expression_tree_walker(node, reads_whole_or_system, context);
}

/*
 * What a condition of the join says of the rows of range table entry
 * rtindex alone: the condition itself if it reads nothing else, of an OR
 * the OR of what each arm says (nothing if one arm says nothing), else
 * nothing (NULL).  Only what cannot fail once its constants are folded.
 */
static Node *
own_condition(Node *cond, int rtindex)
{
	Bitmapset  *relids;

	/* (a subquery is never prepared for a row: see mt_may_fail) */
	if (checkExprHasSubLink(cond))
		return NULL;
	relids = pull_varnos(NULL, cond);
	if (bms_is_empty(relids))
		return NULL;
	if (bms_membership(relids) == BMS_SINGLETON && bms_is_member(rtindex, relids))
	{
		bool		folded = true;

		if (reads_whole_or_system(cond, NULL) || mt_may_fail(cond, &folded))
			return NULL;
		return cond;
	}
	if (is_orclause(cond))
	{
		List	   *arms = NIL;
		ListCell   *lc;

		foreach(lc, ((BoolExpr *) cond)->args)
		{
			List	   *own = NIL;
			ListCell   *la;

			foreach(la, make_ands_implicit(lfirst(lc)))
			{
				Node	   *part = own_condition(lfirst(la), rtindex);

				if (part)
					own = lappend(own, part);
			}
			if (own == NIL)
				return NULL;
			arms = lappend(arms, make_ands_explicit(own));
		}
		return (Node *) make_orclause(arms);
	}
	return NULL;
}

/*
 * mt_own_row_filter
 *		What the WHERE clause and the inner joins' ON conditions say of the
 *		rows of range table entry rtindex alone, over Var(1, attnum) of its
 *		relation; NULL if nothing.  Of a relation no outer join nulls, a
 *		row that fails it is in no row the query reads (an outer join's ON
 *		is left out: it keeps the rows that fail it), so a change of such
 *		rows changes nothing the query shows, and decoding leaves it out:
 *		TPC-H Q19's lines of other ship modes, Q14's lines outside its
 *		month.
 */
Node *
mt_own_row_filter(Query *q, int rtindex)
{
	List	   *conds = NIL;
	List	   *own = NIL;
	ListCell   *lc;
	Node	   *filter;

	join_conditions((Node *) q->jointree, &conds);
	foreach(lc, conds)
	{
		Node	   *part = own_condition(lfirst(lc), rtindex);

		if (part)
			own = lappend(own, part);
	}
	if (own == NIL)
		return NULL;
	/*
	 * (with the conditions common to the arms of an OR taken out of it, as
	 * the planner does: Q19's ship modes are then read once, first)
	 */
	filter = (Node *) canonicalize_qual((Expr *) copyObject(make_ands_explicit(own)), false);
	ChangeVarNodes(filter, rtindex, 1, 0);
	return filter;
}

/*
 * The other sources of a join whose changed rows adjust the groups too
 * (MtDeltaSide): plain tables read once, and not materialized tables
 * (whose changes reach their readers through the chain, not decoding).
 */
static List *
delta_sides(Query *q, List *rtindexes, int rtindex)
{
	List	   *sides = NIL;
	ListCell   *lc;

	foreach(lc, rtindexes)
	{
		int			r = lfirst_int(lc);
		RangeTblEntry *rte = rt_fetch(r, q->rtable);
		MtDeltaSide *side;
		ListCell   *lo;
		bool		once = true;

		if (r == rtindex || rte->rtekind != RTE_RELATION ||
			(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_PARTITIONED_TABLE) ||
			mt_is_materialized_table(rte->relid))
			continue;
		foreach(lo, rtindexes)
			if (lfirst_int(lo) != r && rt_fetch(lfirst_int(lo), q->rtable)->relid == rte->relid)
				once = false;
		if (!once)
			continue;
		side = palloc0(sizeof(MtDeltaSide));
		side->relid = rte->relid;
		side->rtindex = r;
		sides = lappend(sides, side);
	}
	return sides;
}

/* What sum_only_columns gathers over a query. */
typedef struct ColumnReads
{
	int			rtindex;
	Bitmapset  *summed;			/* whole argument of a sum() */
	Bitmapset  *other;			/* read in any other way */
	bool		unknown;		/* read as a whole row, a system column or
								 * through a join's alias */
	Query	   *query;
} ColumnReads;

static bool
column_reads_walker(Node *node, ColumnReads *reads)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		Aggref	   *agg = (Aggref *) node;
		MtDeltaAgg	d;
		Node	   *arg = agg->args ? (Node *) ((TargetEntry *) linitial(agg->args))->expr : NULL;

		/* (a FILTER or an ORDER BY reads columns in other ways too) */
		if (agg->aggfilter == NULL && agg->aggorder == NIL && mt_delta_agg(agg, &d) &&
			d.kind == MT_AGG_SUM &&
			arg && IsA(arg, Var) &&
			((Var *) arg)->varno == reads->rtindex && ((Var *) arg)->varlevelsup == 0 &&
			((Var *) arg)->varattno > 0)
		{
			reads->summed = bms_add_member(reads->summed, ((Var *) arg)->varattno);
			return false;
		}
	}
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
	{
		Var		   *var = (Var *) node;

		if (var->varno == reads->rtindex && var->varattno > 0)
			reads->other = bms_add_member(reads->other, var->varattno);
		else if (var->varno == reads->rtindex ||
				 rt_fetch(var->varno, reads->query->rtable)->rtekind == RTE_JOIN)
			reads->unknown = true;
		return false;
	}
	return expression_tree_walker(node, column_reads_walker, (void *) reads);
}

/*
 * The columns of the delta source (rtindex) the query reads only as the
 * whole argument of a sum(), of integer or numeric types: an update that
 * changes nothing else changes only those sums, and the worker joins one
 * row (new minus old) instead of both.  NULL if none, or if the query
 * reads the source in a way this cannot tell apart.
 */
static Bitmapset *
sum_only_columns(Query *q, int rtindex)
{
	ColumnReads reads = {rtindex, NULL, NULL, false, q};
	Bitmapset  *result = NULL;
	Oid			relid = rt_fetch(rtindex, q->rtable)->relid;
	int			attno = -1;

	(void) column_reads_walker((Node *) q->targetList, &reads);
	(void) column_reads_walker((Node *) q->jointree, &reads);
	(void) column_reads_walker(q->havingQual, &reads);
	if (reads.unknown)
		return NULL;
	reads.summed = bms_del_members(reads.summed, reads.other);
	while ((attno = bms_next_member(reads.summed, attno)) >= 0)
	{
		Oid			type = get_atttype(relid, attno);

		if (type == INT2OID || type == INT4OID || type == INT8OID || type == NUMERICOID)
			result = bms_add_member(result, attno);
	}
	return result;
}

/*
 * mt_analysis_is_side
 *		Is relid one of the DELTAS join's other sources whose changed rows
 *		adjust (MtAnalysis.sides)?
 */
bool
mt_analysis_is_side(MtAnalysis *a, Oid relid)
{
	ListCell   *lc;

	foreach(lc, a->sides)
		if (((MtDeltaSide *) lfirst(lc))->relid == relid)
			return true;
	return false;
}

/* no more grouping sets than this are kept by deltas (each changed row adjusts one group of each) */
#define MAX_GROUPING_SETS		64

/*
 * The query's grouping sets, as a->grouping_sets (positions in group_tles);
 * false if there are too many, or one comes twice (its rows come twice in
 * the result, which the state, a row per group, cannot tell apart).
 */
static bool
grouping_sets(Query *q, List *group_tles, MtAnalysis *a)
{
	List	   *sets = expand_grouping_sets(q->groupingSets, q->groupDistinct,
											MAX_GROUPING_SETS);
	ListCell   *ls;

	/* (GROUPING() takes at most 31 arguments) */
	if (sets == NIL || group_tles == NIL || list_length(group_tles) > 31)
		return false;
	foreach(ls, sets)
	{
		Bitmapset  *members = NULL;
		ListCell   *lr;

		foreach(lr, (List *) lfirst(ls))
		{
			ListCell   *lt;
			int			pos = -1;

			foreach(lt, group_tles)
				if (((TargetEntry *) lfirst(lt))->ressortgroupref == (Index) lfirst_int(lr))
					pos = foreach_current_index(lt);
			if (pos < 0)
				return false;
			members = bms_add_member(members, pos);
		}
		foreach(lr, a->grouping_sets)
			if (bms_equal(lfirst(lr), members))
				return false;
		a->grouping_sets = lappend(a->grouping_sets, members);
	}
	return true;
}

/*
 * Fill the DELTAS part of a if the query allows it: count, sum and avg
 * (see continuous/aggregates.c) of inner joins of plain relations (the one
 * whose changes adjust read once), grouped by result columns or by nothing
 * at all.
 */
bool
mt_try_deltas(MtGraph *g, Query *q, MtAnalysis *a)
{
	RangeTblEntry *rte;
	List	   *rtindexes = NIL;
	List	   *group_tles = NIL;
	Query	   *rows;
	ListCell   *lc;
	int			rtindex;

	if (!q->hasAggs || q->hasWindowFuncs || q->hasTargetSRFs || q->hasSubLinks ||
		q->distinctClause || !inner_joins_only(q, (Node *) q->jointree))
		return false;
	mt_relids_under(q, (Node *) q->jointree, &rtindexes);

	/*
	 * The group columns: result columns (a state row per group is matched
	 * by them), plain columns or expressions whose equal values print
	 * alike, as adjustments keep them.
	 */
	foreach(lc, q->groupClause)
	{
		TargetEntry *tle = get_sortgroupclause_tle(lfirst(lc), q->targetList);

		if (tle->resjunk ||
			(mt_base_var(q, (Node *) tle->expr) == NULL &&
			 !mt_group_prints_alike((Node *) tle->expr, true)))
			return false;
	}
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		ListCell   *lg;

		foreach(lg, q->groupClause)
			if (((SortGroupClause *) lfirst(lg))->tleSortGroupRef == tle->ressortgroupref &&
				tle->ressortgroupref != 0 && !tle->resjunk &&
				!list_member_ptr(group_tles, tle))
			{
				group_tles = lappend(group_tles, tle);
				a->group_exprs = lappend(a->group_exprs, copyObject(tle->expr));
				a->group_outputs = lappend(a->group_outputs, pstrdup(tle->resname));
			}
	}
	if (list_length(group_tles) != list_length(q->groupClause))
		return false;			/* a column grouped twice */
	if (q->groupingSets && !grouping_sets(q, group_tles, a))
		return false;
	if (!mt_delta_outputs(q, group_tles, a))
		return false;
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);
		Var		   *var = d->arg ? mt_base_var(q, (Node *) d->arg) : NULL;

		if (var)
		{
			d->arg_relid = rt_fetch(var->varno, q->rtable)->relid;
			d->arg_attnum = var->varattno;
		}
		if (d->kind == MT_AGG_MIN || d->kind == MT_AGG_MAX)
			a->extrema = true;
	}

	/*
	 * grouping sets: no first rows by ORDER BY.  (A min or max a change
	 * removes from a group of a set makes the cycle recompute the table:
	 * re-reading the group would be its set's query, see mt_deltas_apply.)
	 */
	if (a->grouping_sets != NIL && a->topk)
		return false;
	rtindex = list_length(rtindexes) == 1 ? linitial_int(rtindexes) : delta_rtindex(g, rtindexes);
	rte = rt_fetch(rtindex, q->rtable);
	/* its change would be on both sides of the join (the others' name keys) */
	foreach(lc, rtindexes)
		if (lfirst_int(lc) != rtindex && rt_fetch(lfirst_int(lc), q->rtable)->relid == rte->relid)
			return false;
	a->delta_source = rte->relid;
	a->delta_join = list_length(rtindexes) > 1;

	/*
	 * A materialized table's changes come logged with its refreshes, not
	 * decoded by transaction: a group re-read for its min or max could not
	 * leave out those its snapshot saw
	 */
	if (a->extrema && mt_is_materialized_table(a->delta_source))
		return false;
	rows = rows_query(q, group_tles, a);
	a->rows_sql = mt_query_text(rows);
	if (a->delta_join)
	{
		a->changes_sql = changes_sql(rows, rtindex);
		a->sum_only_columns = sum_only_columns(q, rtindex);
		a->sides = delta_sides(q, rtindexes, rtindex);
		a->rows_query = rows;
		a->delta_rtindex = rtindex;
		return true;
	}

	/*
	 * one source: evaluated on (and deparsed for) its changed rows alone;
	 * with extrema, its changed rows go through the rows query as a join's
	 * do, which leaves out the groups re-read as of a later snapshot
	 * (group baselines, see Baselines in continuous/cycle.c)
	 */
	if (a->extrema)
		a->changes_sql = changes_sql(rows, rtindex);
	a->delta_quals = copyObject(q->jointree->quals);
	ChangeVarNodes((Node *) a->group_exprs, rtindex, 1, 0);
	ChangeVarNodes(a->delta_quals, rtindex, 1, 0);
	foreach(lc, a->aggs)
		ChangeVarNodes((Node *) ((MtDeltaAgg *) lfirst(lc))->arg, rtindex, 1, 0);
	return true;
}

/*
 * A btree comparison whose code is PostgreSQL's own: a user's type may
 * bring comparison functions that raise errors, and an error while
 * decoding would stop every table of the database.
 */
static bool
builtin_comparison(Oid opno)
{
	return get_opcode(opno) < FirstNormalObjectId && get_op_btree_interpretation(opno) != NIL;
}

/*
 * mt_may_fail
 *		Can evaluating this expression fail?  Only what surely cannot is
 *		let through: columns, constants, widening casts of integers,
 *		AND/OR/NOT, CASE, NULL tests and comparisons by PostgreSQL's own
 *		btree operators (=, <, IN (...), ...) of such; with context pointing to true, also
 *		whatever reads no column and is immutable, which preparing the
 *		expression folds.  (Changed rows are folded as they are decoded only
 *		where nothing can fail.)
 */
bool
mt_may_fail(Node *node, void *context)
{
	if (node == NULL)
		return false;
	/* (the query computed them when it ran: folded, they are constants) */
	if (context != NULL && *(bool *) context && !contain_var_clause(node) &&
		!contain_mutable_functions(node) && !checkExprHasSubLink(node) &&
		!contain_subplans(node) && !IsA(node, Param))
		return false;
	switch (nodeTag(node))
	{
		case T_Var:
		case T_Const:
			return false;
		case T_RelabelType:
		case T_CaseExpr:
		case T_CaseWhen:
		case T_BoolExpr:
		case T_NullTest:
		case T_BooleanTest:
		case T_List:
			break;
		case T_OpExpr:
			if (!builtin_comparison(((OpExpr *) node)->opno))
				return true;
			break;
		case T_ScalarArrayOpExpr:
			if (!builtin_comparison(((ScalarArrayOpExpr *) node)->opno))
				return true;
			break;
		case T_FuncExpr:
			/* casts that widen an integer (0 in "numeric_column < 0") */
			switch (((FuncExpr *) node)->funcid)
			{
				case F_NUMERIC_INT2:
				case F_NUMERIC_INT4:
				case F_NUMERIC_INT8:
				case F_INT4_INT2:
				case F_INT8_INT2:
				case F_INT8_INT4:
					break;
				default:
					return true;
			}
			break;
		default:
			return true;
	}
	return expression_tree_walker(node, mt_may_fail, context);
}
