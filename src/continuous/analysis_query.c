/*-------------------------------------------------------------------------
 *
 * src/continuous/analysis_query.c
 *	  What the analysis of a CONTINUOUS table reads of its query: the
 *	  relations it reads, whether its shape can be maintained by keys, and
 *	  the equalities between its columns.
 *
 * A query that reads what logical decoding cannot see, or has a shape
 * keys cannot follow, is maintained FULL (mt_full_analysis).  Otherwise
 * the equality graph links each source's columns to the result columns
 * that can serve as keys (see continuous/analysis.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteHandler.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "mt/continuous/analysis_int.h"

/* Can logical decoding see this relation's changes? */
bool
mt_relation_is_decodable(Oid relid)
{
	char		relkind = get_rel_relkind(relid);

	return (relkind == RELKIND_RELATION || relkind == RELKIND_PARTITIONED_TABLE) &&
		get_rel_persistence(relid) == RELPERSISTENCE_PERMANENT;
}

/*
 * Can logical decoding see the changes of every partition or inheritance
 * child of the relation?  (A foreign, temporary or unlogged child's rows
 * are read with the parent's, but their changes are never decoded.)
 */
static bool
descendants_decodable(Oid relid)
{
	ListCell   *lc;

	foreach(lc, find_all_inheritors(relid, NoLock, NULL))
	{
		char		relkind = get_rel_relkind(lfirst_oid(lc));

		if (relkind != RELKIND_PARTITIONED_TABLE && relkind != '\0' &&
			!mt_relation_is_decodable(lfirst_oid(lc)))
			return false;
	}
	return true;
}

/* Is row level security enabled on the relation? */
bool
mt_has_row_security(Oid relid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		result = false;

	if (HeapTupleIsValid(tuple))
	{
		result = ((Form_pg_class) GETSTRUCT(tuple))->relrowsecurity;
		ReleaseSysCache(tuple);
	}
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
bool
mt_is_view_self(RangeTblEntry *rte, Oid viewid)
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
			if (c->views && mt_is_view_self(rte, llast_oid(c->views)))
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
			{
				c->relids = list_append_unique_oid(c->relids, rte->relid);
				if (rte->inh && !descendants_decodable(rte->relid))
					c->untrackable = true;
			}
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
MtAnalysis *
mt_full_analysis(Oid viewid, Query *q, const char *reason)
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
		use->inh = true;		/* (the collector does not tell ONLY apart) */
		use->full = true;
		use->family = list_length(a->uses);
		a->uses = lappend(a->uses, use);
	}
	if (a->poll)
		a->reason = psprintf("%s; the result can change without a change of a table logical decoding sees, so it is recomputed every freshness period",
							 reason);
	return a;
}

/* The relations read by the subqueries in q's expressions (SubLinks). */
static bool
sublink_relations_walker(Node *node, RelationCollector *c)
{
	if (node == NULL)
		return false;
	if (IsA(node, SubLink))
	{
		(void) collect_relations_walker(((SubLink *) node)->subselect, c);
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, sublink_relations_walker, c,
								 QTW_IGNORE_RT_SUBQUERIES);
	return expression_tree_walker(node, sublink_relations_walker, c);
}

/* ... and by the LATERAL subqueries of its FROM */
static RelationCollector
sublink_relations(Query *q)
{
	RelationCollector c = {0};
	ListCell   *lc;

	(void) query_tree_walker(q, sublink_relations_walker, &c, QTW_IGNORE_RT_SUBQUERIES);
	foreach(lc, q->rtable)
		if (mt_is_lateral_subquery(lfirst(lc)))
			(void) collect_relations_walker((Node *) ((RangeTblEntry *) lfirst(lc))->subquery, &c);
	return c;
}

/*
 * The relations the subqueries in q's expressions and its LATERAL
 * subqueries read (see add_uses()).
 */
List *
mt_sublink_relids(Query *q)
{
	return sublink_relations(q).relids;
}

/*
 * A LATERAL subquery in FROM (one flattening could not merge: LIMIT,
 * aggregates): read as a subquery in an expression is, its sources naming
 * keys through its correlation.
 */
bool
mt_is_lateral_subquery(RangeTblEntry *rte)
{
	return rte->rtekind == RTE_SUBQUERY && rte->lateral;
}

/* Does q read one? */
bool
mt_has_lateral_subquery(Query *q)
{
	ListCell   *lc;

	foreach(lc, q->rtable)
		if (mt_is_lateral_subquery(lfirst(lc)))
			return true;
	return false;
}

/* ---------------------------------------------------------------------
 * Shape checks
 * ---------------------------------------------------------------------
 */

/* Why the query cannot be maintained by keys, or NULL. */
const char *
mt_unsupported_shape(Oid viewid, Query *q)
{
	ListCell   *lc;

	/* what continuous/flatten.c could not read as subqueries */
	if (q->cteList)
		return "the query uses a WITH query that is RECURSIVE, MATERIALIZED or data-modifying, or reads another";
	if (q->setOperations)
	{
		/* UNION, INTERSECT, EXCEPT: what its branches are */
		if (q->limitCount || q->limitOffset)
			return "the query uses LIMIT or OFFSET over a set operation";
		foreach(lc, q->rtable)
		{
			RangeTblEntry *rte = lfirst(lc);
			const char *why;

			if (rte->rtekind != RTE_SUBQUERY)
				continue;
			if (rte->subquery->limitCount || rte->subquery->limitOffset)
				return "a branch of the set operation uses LIMIT or OFFSET";
			if (rte->subquery->groupingSets)
				return "a branch of the set operation uses grouping sets";
			if ((why = mt_unsupported_shape(viewid, rte->subquery)) != NULL)
				return why;
		}
		return NULL;
	}
	/* subqueries in expressions: a change of what they read recomputes all */
	if ((q->hasSubLinks || mt_has_lateral_subquery(q)) && sublink_relations(q).untrackable)
		return "the query uses subqueries in expressions that read a view, a foreign table, a temporary or unlogged table, or a materialized view";
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		/* RTE_RESULT: a subquery merged into the query */
		if (rte->rtekind == RTE_JOIN || rte->rtekind == RTE_RESULT || mt_is_view_self(rte, viewid))
			continue;

		/*
		 * Functions (unnest(t.tags), LATERAL or not) and VALUES: their rows
		 * follow from the rows they are joined with, or are constants (a
		 * function whose result can change is refused below)
		 */
		if (rte->rtekind == RTE_FUNCTION || rte->rtekind == RTE_TABLEFUNC ||
			rte->rtekind == RTE_VALUES || mt_is_lateral_subquery(rte))
			continue;
		if (rte->rtekind != RTE_RELATION)
			return "the query reads from a subquery or a function";
		if (!mt_relation_is_decodable(rte->relid))
			return "the query reads a view, a foreign table, a temporary or unlogged table, or a materialized view";
		if (rte->inh && !descendants_decodable(rte->relid))
			return "the query reads a table with a partition or child table that is foreign, temporary or unlogged";
		/* decoded rows know nothing of the policies the query applies */
		if (mt_has_row_security(rte->relid))
			return "the query reads a table with row level security";
	}
	if (contain_mutable_functions((Node *) q))
		return "the query uses functions whose result can change over time";
	return NULL;
}

/* A Var of a base relation, through join alias Vars and relabelings. */
Var *
mt_base_var(Query *q, Node *node)
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

bool
mt_same_var(MtVarRef a, MtVarRef b)
{
	return a.varno == b.varno && a.attno == b.attno;
}

/* The two base Vars of a "var = var" qual, if it is one. */
static bool
equality_vars(MtGraph *g, Node *qual, Var **left, Var **right)
{
	OpExpr	   *op;

	if (!IsA(qual, OpExpr))
		return false;
	op = (OpExpr *) qual;
	if (list_length(op->args) != 2 ||
		!op_mergejoinable(op->opno, exprType(linitial(op->args))))
		return false;
	*left = mt_base_var(g->q, linitial(op->args));
	*right = mt_base_var(g->q, lsecond(op->args));
	return *left && *right;
}

/* Is every base relation under node on the given side? (rtindex list) */
void
mt_relids_under(Query *q, Node *node, List **relids)
{
	if (IsA(node, RangeTblRef))
		*relids = lappend_int(*relids, ((RangeTblRef *) node)->rtindex);
	else if (IsA(node, JoinExpr))
	{
		mt_relids_under(q, ((JoinExpr *) node)->larg, relids);
		mt_relids_under(q, ((JoinExpr *) node)->rarg, relids);
	}
	else if (IsA(node, FromExpr))
	{
		ListCell   *lc;

		foreach(lc, ((FromExpr *) node)->fromlist)
			mt_relids_under(q, lfirst(lc), relids);
	}
}

static void
add_edges(MtGraph *g, Node *quals, List *nullable_side)
{
	ListCell   *lc;

	foreach(lc, make_ands_implicit((Expr *) quals))
	{
		Var		   *l;
		Var		   *r;
		MtEdge	   *e;

		if (!equality_vars(g, lfirst(lc), &l, &r))
			continue;
		e = palloc0(sizeof(MtEdge));
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
				MtVarRef	t = e->from;

				e->from = e->to;
				e->to = t;
			}
			e->directed = true;
		}
		g->edges = lappend(g->edges, e);
	}
}

void
mt_walk_jointree(MtGraph *g, Node *node, bool nullable)
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
			mt_walk_jointree(g, lfirst(lc), nullable);
		add_edges(g, f->quals, NIL);
	}
	else if (IsA(node, JoinExpr))
	{
		JoinExpr   *j = (JoinExpr *) node;
		List	   *nullable_side = NIL;

		switch (j->jointype)
		{
			case JOIN_INNER:
				mt_walk_jointree(g, j->larg, nullable);
				mt_walk_jointree(g, j->rarg, nullable);
				add_edges(g, j->quals, NIL);
				break;
			case JOIN_LEFT:
				mt_walk_jointree(g, j->larg, nullable);
				mt_walk_jointree(g, j->rarg, true);
				mt_relids_under(g->q, j->rarg, &nullable_side);
				add_edges(g, j->quals, nullable_side);
				break;
			case JOIN_RIGHT:
				mt_walk_jointree(g, j->larg, true);
				mt_walk_jointree(g, j->rarg, nullable);
				mt_relids_under(g->q, j->larg, &nullable_side);
				add_edges(g, j->quals, nullable_side);
				break;
			default:
				/* FULL: both sides nullable, no edge crosses */
				mt_walk_jointree(g, j->larg, true);
				mt_walk_jointree(g, j->rarg, true);
				break;
		}
	}
}

/*
 * The key candidate a source column reaches, by breadth-first search over
 * the equalities (directed edges one way only).
 */
List *
mt_reachable(MtGraph *g, MtVarRef start)
{
	List	   *seen = list_make1(palloc(sizeof(MtVarRef)));
	int			i;

	*(MtVarRef *) linitial(seen) = start;
	for (i = 0; i < list_length(seen); i++)
	{
		MtVarRef	cur = *(MtVarRef *) list_nth(seen, i);
		ListCell   *lc;

		foreach(lc, g->edges)
		{
			MtEdge	   *e = lfirst(lc);
			MtVarRef	next;
			ListCell   *ls;
			bool		known = false;

			if (mt_same_var(e->from, cur))
				next = e->to;
			else if (!e->directed && mt_same_var(e->to, cur))
				next = e->from;
			else
				continue;
			foreach(ls, seen)
				if (mt_same_var(*(MtVarRef *) lfirst(ls), next))
					known = true;
			if (!known)
			{
				MtVarRef   *v = palloc(sizeof(MtVarRef));

				*v = next;
				seen = lappend(seen, v);
			}
		}
	}
	return seen;
}

/* Does each name of the list stand once (the state's columns)? */
bool
mt_names_distinct(List *names)
{
	ListCell   *lc;
	ListCell   *ln;

	foreach(lc, names)
		foreach(ln, names)
			if (lc != ln && strcmp(strVal(lfirst(lc)), strVal(lfirst(ln))) == 0)
				return false;
	return true;
}

/* Does q group by a column it shows (which can name groups of its rows)? */
bool
mt_groups_by_shown_column(Query *q)
{
	ListCell   *lc;

	foreach(lc, q->groupClause)
	{
		TargetEntry *tle = get_sortgroupclause_tle(lfirst(lc), q->targetList);

		if (!tle->resjunk && IsA(tle->expr, Var))
			return true;
	}
	return false;
}
