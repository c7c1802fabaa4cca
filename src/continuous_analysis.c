/*-------------------------------------------------------------------------
 *
 * continuous_analysis.c
 *	  Deciding how a CONTINUOUS table is maintained (see the header).
 *
 * The query is read from the table's query view, as PostgreSQL stores it
 * (parse-analyzed, views it reads not yet expanded).
 *
 * Key columns.  A result column is a key candidate when it is a plain
 * column of a relation that no outer join can null: a grouping column, a
 * DISTINCT column, or any plain column of a select-project-join query.
 * Equalities between columns link a source's columns to candidates:
 * those of inner joins and WHERE both ways, those of an outer join's ON
 * clause only from the nullable side to the preserved side (a new row on
 * the nullable side changes the rows of the preserved rows it matches,
 * which carry the preserved side's values).  Every result row a changed
 * source row contributes to carries that row's values in the linked
 * candidates, so recomputing the rows with those values is enough.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteHandler.h"
#include "rewrite/rewriteManip.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "commands.h"
#include "continuous_analysis.h"

const char *
mt_strategy_name(MtStrategy strategy)
{
	switch (strategy)
	{
		case MT_STRATEGY_KEYS:
			return "KEYS";
		case MT_STRATEGY_DELTAS:
			return "DELTAS";
		case MT_STRATEGY_FULL:
			return "FULL";
	}
	return NULL;
}

/* Can logical decoding see this relation's changes? */
bool
mt_relation_is_decodable(Oid relid)
{
	char		relkind = get_rel_relkind(relid);

	return (relkind == RELKIND_RELATION || relkind == RELKIND_PARTITIONED_TABLE) &&
		get_rel_persistence(relid) == RELPERSISTENCE_PERMANENT;
}

/* The distinct source relations of an analysis. */
List *
mt_analysis_sources(MtAnalysis *analysis)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, analysis->uses)
		result = list_append_unique_oid(result, ((MtSourceUse *) lfirst(lc))->relid);
	return result;
}

/* ---------------------------------------------------------------------
 * Every base relation a query reads, through views and subqueries
 * ---------------------------------------------------------------------
 */

typedef struct RelationCollector
{
	List	   *relids;
	bool		untrackable;	/* reads something decoding cannot see */
	List	   *views;			/* views being expanded, outermost first */
} RelationCollector;

/*
 * A view's stored query (before PostgreSQL 16) starts with two range table
 * entries for the view itself, OLD and NEW, that are never read.
 */
static bool
is_view_self(RangeTblEntry *rte, Oid viewid)
{
	return rte->rtekind == RTE_RELATION && rte->relid == viewid;
}

static bool collect_relations_walker(Node *node, RelationCollector *c);

static void
collect_from_rtable(List *rtable, RelationCollector *c)
{
	ListCell   *lc;

	foreach(lc, rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_RELATION)
		{
			if (c->views && is_view_self(rte, llast_oid(c->views)))
				continue;
			if (rte->relkind == RELKIND_VIEW)
			{
				Relation	view;
				Query	   *vq;

				if (list_member_oid(c->views, rte->relid))
					continue;	/* a view cannot really read itself */
				view = table_open(rte->relid, AccessShareLock);
				vq = copyObject(get_view_query(view));
				table_close(view, AccessShareLock);
				c->views = lappend_oid(c->views, rte->relid);
				(void) collect_relations_walker((Node *) vq, c);
				c->views = list_delete_last(c->views);
			}
			else if (mt_relation_is_decodable(rte->relid))
				c->relids = list_append_unique_oid(c->relids, rte->relid);
			else
				c->untrackable = true;
		}
		else if (rte->rtekind == RTE_FUNCTION || rte->rtekind == RTE_TABLEFUNC)
			c->untrackable |= contain_mutable_functions((Node *) rte->functions) ||
				contain_mutable_functions((Node *) rte->tablefunc);
	}
}

static bool
collect_relations_walker(Node *node, RelationCollector *c)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
	{
		Query	   *q = (Query *) node;

		collect_from_rtable(q->rtable, c);
		return query_tree_walker(q, collect_relations_walker, c, 0);
	}
	return expression_tree_walker(node, collect_relations_walker, c);
}

/* FULL: every base relation, any change recomputes everything. */
static MtAnalysis *
full_analysis(Oid viewid, Query *q, const char *reason)
{
	MtAnalysis *a = palloc0(sizeof(MtAnalysis));
	RelationCollector c = {0};
	ListCell   *lc;

	c.views = list_make1_oid(viewid);
	(void) collect_relations_walker((Node *) q, &c);
	a->strategy = MT_STRATEGY_FULL;
	a->reason = pstrdup(reason);
	a->poll = c.untrackable || contain_mutable_functions((Node *) q);
	foreach(lc, c.relids)
	{
		MtSourceUse *use = palloc0(sizeof(MtSourceUse));

		use->relid = lfirst_oid(lc);
		use->full = true;
		use->family = list_length(a->uses);
		a->uses = lappend(a->uses, use);
	}
	if (a->poll)
		a->reason = psprintf("%s; the result can change without a change of a table logical decoding sees, so it is recomputed every freshness period",
							 reason);
	return a;
}

/* ---------------------------------------------------------------------
 * Shape checks
 * ---------------------------------------------------------------------
 */

/* Why the query cannot be maintained by keys, or NULL. */
static const char *
unsupported_shape(Oid viewid, Query *q)
{
	ListCell   *lc;

	if (q->setOperations)
		return "the query combines results with a set operation";
	if (q->cteList)
		return "the query uses WITH";
	if (q->hasWindowFuncs)
		return "the query uses window functions";
	if (q->hasTargetSRFs)
		return "the query uses set-returning functions";
	if (q->hasSubLinks)
		return "the query uses subqueries in expressions";
	if (q->limitCount || q->limitOffset)
		return "the query uses LIMIT or OFFSET";
	if (q->groupingSets)
		return "the query uses grouping sets";
	if (q->hasDistinctOn)
		return "the query uses DISTINCT ON";
	if ((q->hasAggs || q->groupClause) && q->groupClause == NIL)
		return "the query is a global aggregate";
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		if (rte->rtekind == RTE_JOIN || is_view_self(rte, viewid))
			continue;
		if (rte->rtekind != RTE_RELATION)
			return "the query reads from a subquery or a function";
		if (!mt_relation_is_decodable(rte->relid))
			return "the query reads a view, a foreign table, a temporary or unlogged table, or a materialized view";
	}
	if (contain_mutable_functions((Node *) q))
		return "the query uses functions whose result can change over time";
	return NULL;
}

/* A Var of a base relation, through join alias Vars and relabelings. */
static Var *
base_var(Query *q, Node *node)
{
	while (node && IsA(node, RelabelType))
		node = (Node *) ((RelabelType *) node)->arg;
	if (node == NULL || !IsA(node, Var))
		return NULL;
	for (;;)
	{
		Var		   *var = (Var *) node;
		RangeTblEntry *rte;

		if (var->varlevelsup != 0 || var->varattno <= 0)
			return NULL;
		rte = rt_fetch(var->varno, q->rtable);
		if (rte->rtekind == RTE_RELATION)
			return var;
		if (rte->rtekind != RTE_JOIN || var->varattno > list_length(rte->joinaliasvars))
			return NULL;
		node = list_nth(rte->joinaliasvars, var->varattno - 1);
		while (node && IsA(node, RelabelType))
			node = (Node *) ((RelabelType *) node)->arg;
		if (node == NULL || !IsA(node, Var))
			return NULL;
	}
}

/* ---------------------------------------------------------------------
 * The equality graph
 * ---------------------------------------------------------------------
 */

typedef struct VarRef
{
	int			varno;
	int			attno;
} VarRef;

typedef struct Edge
{
	VarRef		from;
	VarRef		to;
	bool		directed;		/* from nullable side to preserved side */
} Edge;

typedef struct Graph
{
	Query	   *q;
	List	   *edges;			/* Edge */
	bool	   *nullable;		/* by range table index */
} Graph;

static bool
same_var(VarRef a, VarRef b)
{
	return a.varno == b.varno && a.attno == b.attno;
}

/* The two base Vars of a "var = var" qual, if it is one. */
static bool
equality_vars(Graph *g, Node *qual, Var **left, Var **right)
{
	OpExpr	   *op;

	if (!IsA(qual, OpExpr))
		return false;
	op = (OpExpr *) qual;
	if (list_length(op->args) != 2 ||
		!op_mergejoinable(op->opno, exprType(linitial(op->args))))
		return false;
	*left = base_var(g->q, linitial(op->args));
	*right = base_var(g->q, lsecond(op->args));
	return *left && *right;
}

/* Is every base relation under node on the given side? (rtindex list) */
static void
relids_under(Query *q, Node *node, List **relids)
{
	if (IsA(node, RangeTblRef))
		*relids = lappend_int(*relids, ((RangeTblRef *) node)->rtindex);
	else if (IsA(node, JoinExpr))
	{
		relids_under(q, ((JoinExpr *) node)->larg, relids);
		relids_under(q, ((JoinExpr *) node)->rarg, relids);
	}
	else if (IsA(node, FromExpr))
	{
		ListCell   *lc;

		foreach(lc, ((FromExpr *) node)->fromlist)
			relids_under(q, lfirst(lc), relids);
	}
}

static void
add_edges(Graph *g, Node *quals, List *nullable_side)
{
	ListCell   *lc;

	foreach(lc, make_ands_implicit((Expr *) quals))
	{
		Var		   *l;
		Var		   *r;
		Edge	   *e;

		if (!equality_vars(g, lfirst(lc), &l, &r))
			continue;
		e = palloc0(sizeof(Edge));
		e->from.varno = l->varno;
		e->from.attno = l->varattno;
		e->to.varno = r->varno;
		e->to.attno = r->varattno;
		if (nullable_side != NIL)
		{
			bool		l_null = list_member_int(nullable_side, l->varno);
			bool		r_null = list_member_int(nullable_side, r->varno);

			if (l_null == r_null)
				continue;		/* not an edge across the outer join */
			if (r_null)
			{
				VarRef		t = e->from;

				e->from = e->to;
				e->to = t;
			}
			e->directed = true;
		}
		g->edges = lappend(g->edges, e);
	}
}

static void
walk_jointree(Graph *g, Node *node, bool nullable)
{
	if (node == NULL)
		return;
	if (IsA(node, RangeTblRef))
		g->nullable[((RangeTblRef *) node)->rtindex] = nullable;
	else if (IsA(node, FromExpr))
	{
		FromExpr   *f = (FromExpr *) node;
		ListCell   *lc;

		foreach(lc, f->fromlist)
			walk_jointree(g, lfirst(lc), nullable);
		add_edges(g, f->quals, NIL);
	}
	else if (IsA(node, JoinExpr))
	{
		JoinExpr   *j = (JoinExpr *) node;
		List	   *nullable_side = NIL;

		switch (j->jointype)
		{
			case JOIN_INNER:
				walk_jointree(g, j->larg, nullable);
				walk_jointree(g, j->rarg, nullable);
				add_edges(g, j->quals, NIL);
				break;
			case JOIN_LEFT:
				walk_jointree(g, j->larg, nullable);
				walk_jointree(g, j->rarg, true);
				relids_under(g->q, j->rarg, &nullable_side);
				add_edges(g, j->quals, nullable_side);
				break;
			case JOIN_RIGHT:
				walk_jointree(g, j->larg, true);
				walk_jointree(g, j->rarg, nullable);
				relids_under(g->q, j->larg, &nullable_side);
				add_edges(g, j->quals, nullable_side);
				break;
			default:
				/* FULL: both sides nullable, no edge crosses */
				walk_jointree(g, j->larg, true);
				walk_jointree(g, j->rarg, true);
				break;
		}
	}
}

/*
 * The key candidate a source column reaches, by breadth-first search over
 * the equalities (directed edges one way only).
 */
static List *
reachable(Graph *g, VarRef start)
{
	List	   *seen = list_make1(palloc(sizeof(VarRef)));
	int			i;

	*(VarRef *) linitial(seen) = start;
	for (i = 0; i < list_length(seen); i++)
	{
		VarRef		cur = *(VarRef *) list_nth(seen, i);
		ListCell   *lc;

		foreach(lc, g->edges)
		{
			Edge	   *e = lfirst(lc);
			VarRef		next;
			ListCell   *ls;
			bool		known = false;

			if (same_var(e->from, cur))
				next = e->to;
			else if (!e->directed && same_var(e->to, cur))
				next = e->from;
			else
				continue;
			foreach(ls, seen)
				if (same_var(*(VarRef *) lfirst(ls), next))
					known = true;
			if (!known)
			{
				VarRef	   *v = palloc(sizeof(VarRef));

				*v = next;
				seen = lappend(seen, v);
			}
		}
	}
	return seen;
}

/* ---------------------------------------------------------------------
 * DELTAS
 * ---------------------------------------------------------------------
 */

/* The kind of a supported aggregate, or -1. */
static int
delta_agg_kind(Aggref *agg, Oid *sum_type)
{
	char	   *name;
	Oid			argtype = InvalidOid;
	int32		argtypmod = -1;

	if (agg->aggfilter || agg->aggorder || agg->aggdistinct || agg->aggvariadic ||
		agg->aggkind != AGGKIND_NORMAL || agg->agglevelsup != 0 ||
		get_func_namespace(agg->aggfnoid) != PG_CATALOG_NAMESPACE)
		return -1;
	name = get_func_name(agg->aggfnoid);
	if (agg->args)
	{
		argtype = exprType((Node *) ((TargetEntry *) linitial(agg->args))->expr);
		argtypmod = exprTypmod((Node *) ((TargetEntry *) linitial(agg->args))->expr);
	}

	if (strcmp(name, "count") == 0)
	{
		*sum_type = INT8OID;
		return agg->aggstar ? MT_AGG_COUNT_STAR : MT_AGG_COUNT;
	}
	if (list_length(agg->args) != 1)
		return -1;
	/*
	 * Sums must come out exactly as the query computes them: float sums
	 * drift under additions and subtractions, and a numeric sum's display
	 * scale is the largest scale among the rows summed, which a running
	 * total cannot know once rows go away -- unless every value has the
	 * same scale, as in a numeric column with a declared scale.
	 */
	if (argtype == NUMERICOID && argtypmod < 0 &&
		(strcmp(name, "sum") == 0 || strcmp(name, "avg") == 0))
		return -1;
	if (strcmp(name, "sum") == 0)
	{
		if (argtype == INT2OID || argtype == INT4OID)
			*sum_type = INT8OID;
		else if (argtype == INT8OID || argtype == NUMERICOID)
			*sum_type = NUMERICOID;
		else
			return -1;
		return MT_AGG_SUM;
	}
	if (strcmp(name, "avg") == 0)
	{
		if (argtype != INT2OID && argtype != INT4OID && argtype != INT8OID &&
			argtype != NUMERICOID)
			return -1;
		*sum_type = NUMERICOID;
		return MT_AGG_AVG;
	}
	return -1;
}

/* Fill the DELTAS part of a if the query allows it. */
static bool
try_deltas(Query *q, MtAnalysis *a)
{
	RangeTblEntry *rte;
	ListCell   *lc;
	Node	   *from;

	if (!q->hasAggs || q->havingQual || q->distinctClause ||
		list_length(q->jointree->fromlist) != 1)
		return false;
	from = linitial(q->jointree->fromlist);
	if (!IsA(from, RangeTblRef))
		return false;
	rte = rt_fetch(((RangeTblRef *) from)->rtindex, q->rtable);
	if (rte->rtekind != RTE_RELATION)
		return false;

	foreach(lc, q->groupClause)
	{
		SortGroupClause *sgc = lfirst(lc);
		TargetEntry *tle = get_sortgroupclause_tle(sgc, q->targetList);

		if (tle->resjunk || base_var(q, (Node *) tle->expr) == NULL)
			return false;
	}
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst(lc);

		if (tle->resjunk)
			continue;
		if (tle->ressortgroupref && base_var(q, (Node *) tle->expr))
		{
			a->group_exprs = lappend(a->group_exprs, copyObject(tle->expr));
			a->group_outputs = lappend(a->group_outputs, pstrdup(tle->resname));
		}
		else if (IsA(tle->expr, Aggref))
		{
			Aggref	   *agg = (Aggref *) tle->expr;
			MtDeltaAgg *d = palloc0(sizeof(MtDeltaAgg));
			int			kind = delta_agg_kind(agg, &d->sum_type);

			if (kind < 0)
				return false;
			d->kind = kind;
			d->arg = agg->args ? copyObject(((TargetEntry *) linitial(agg->args))->expr) : NULL;
			d->output = pstrdup(tle->resname);
			d->output_type = agg->aggtype;
			a->aggs = lappend(a->aggs, d);
		}
		else
			return false;
	}
	if (list_length(a->group_exprs) != list_length(q->groupClause))
		return false;
	a->delta_source = rte->relid;
	a->delta_quals = copyObject(q->jointree->quals);

	/* the expressions will be evaluated on (and deparsed for) the source alone */
	ChangeVarNodes((Node *) a->group_exprs, ((RangeTblRef *) from)->rtindex, 1, 0);
	ChangeVarNodes(a->delta_quals, ((RangeTblRef *) from)->rtindex, 1, 0);
	foreach(lc, a->aggs)
		ChangeVarNodes((Node *) ((MtDeltaAgg *) lfirst(lc))->arg,
					   ((RangeTblRef *) from)->rtindex, 1, 0);
	return true;
}

/*
 * When the source's primary key is among the columns a use reads keys
 * from, the key alone names the rows: fewer columns make a tighter filter
 * and one an index serves.
 */
static void
narrow_to_primary_key(MtSourceUse *use)
{
	Relation	rel = table_open(use->relid, AccessShareLock);
	Oid			pk = RelationGetPrimaryKeyIndex(rel);
	List	   *attnums = NIL;
	List	   *columns = NIL;

	table_close(rel, AccessShareLock);
	if (!OidIsValid(pk))
		return;
	rel = index_open(pk, AccessShareLock);
	for (int i = 0; i < rel->rd_index->indnkeyatts; i++)
	{
		int			pos = -1;
		ListCell   *lc;

		foreach(lc, use->attnums)
			if (lfirst_int(lc) == rel->rd_index->indkey.values[i])
				pos = foreach_current_index(lc);
		if (pos < 0)
		{
			index_close(rel, AccessShareLock);
			return;
		}
		attnums = lappend_int(attnums, list_nth_int(use->attnums, pos));
		columns = lappend(columns, list_nth(use->key_columns, pos));
	}
	index_close(rel, AccessShareLock);
	use->attnums = attnums;
	use->key_columns = columns;
}

/* ---------------------------------------------------------------------
 * The analysis
 * ---------------------------------------------------------------------
 */

MtAnalysis *
mt_analyze_query_view(Oid viewid)
{
	Relation	view = table_open(viewid, AccessShareLock);
	Query	   *q = copyObject(get_view_query(view));
	const char *why;
	MtAnalysis *a;
	Graph		g = {0};
	List	   *candidates = NIL;	/* VarRef of key candidates, with ... */
	List	   *candidate_names = NIL;	/* ... their result column names */
	ListCell   *lc;
	ListCell   *lr;
	int			rtindex;
	bool		any_keyed = false;

	table_close(view, AccessShareLock);

	why = unsupported_shape(viewid, q);
	if (why)
		return full_analysis(viewid, q, why);

	a = palloc0(sizeof(MtAnalysis));
	g.q = q;
	g.nullable = palloc0(sizeof(bool) * (list_length(q->rtable) + 1));
	walk_jointree(&g, (Node *) q->jointree, false);

	/* key candidates: plain columns of relations no outer join can null */
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		Var		   *var;
		VarRef	   *ref;

		if (tle->resjunk)
			continue;
		if ((q->hasAggs || q->groupClause) && tle->ressortgroupref == 0)
			continue;
		var = base_var(q, (Node *) tle->expr);
		if (var == NULL || g.nullable[var->varno])
			continue;
		ref = palloc(sizeof(VarRef));
		ref->varno = var->varno;
		ref->attno = var->varattno;
		candidates = lappend(candidates, ref);
		candidate_names = lappend(candidate_names, pstrdup(tle->resname));
	}

	/* one use per occurrence of a base relation */
	for (rtindex = 1; rtindex <= list_length(q->rtable); rtindex++)
	{
		RangeTblEntry *rte = rt_fetch(rtindex, q->rtable);
		MtSourceUse *use;
		AttrNumber	attno;
		int			natts;

		if (rte->rtekind != RTE_RELATION || is_view_self(rte, viewid))
			continue;
		use = palloc0(sizeof(MtSourceUse));
		use->relid = rte->relid;
		use->family = list_length(a->uses);
		{
			Relation	rel = table_open(rte->relid, AccessShareLock);

			natts = RelationGetNumberOfAttributes(rel);
			table_close(rel, AccessShareLock);
		}
		for (attno = 1; attno <= natts; attno++)
		{
			VarRef		start = {rtindex, attno};
			List	   *reach = reachable(&g, start);

			foreach(lr, reach)
			{
				VarRef	   *v = lfirst(lr);
				ListCell   *lcand;
				ListCell   *lname;

				forboth(lcand, candidates, lname, candidate_names)
				{
					if (same_var(*(VarRef *) lfirst(lcand), *v) &&
						!list_member(use->key_columns, makeString(lfirst(lname))))
					{
						use->attnums = lappend_int(use->attnums, attno);
						use->key_columns = lappend(use->key_columns, makeString(lfirst(lname)));
					}
				}
			}
		}
		narrow_to_primary_key(use);
		use->full = (use->key_columns == NIL);
		any_keyed |= !use->full;
		a->uses = lappend(a->uses, use);
		foreach(lr, use->key_columns)
			a->keys = list_append_unique(a->keys, lfirst(lr));
	}

	if (!any_keyed)
		return full_analysis(viewid, q, "no change of a source names key values of the result");

	if (try_deltas(q, a))
	{
		a->strategy = MT_STRATEGY_DELTAS;
		a->reason = pstrdup("count, sum and avg per group are kept and adjusted by each changed row");
	}
	else
	{
		a->strategy = MT_STRATEGY_KEYS;
		a->reason = psprintf("rows are recomputed for the changed values of %s",
							 mt_name_list_text(a->keys));
	}
	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);

		if (use->full)
			a->reason = psprintf("%s; a change of %s recomputes the whole table",
								 a->reason, get_rel_name(use->relid));
	}
	return a;
}
