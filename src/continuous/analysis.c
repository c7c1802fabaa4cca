/*-------------------------------------------------------------------------
 *
 * src/continuous/analysis.c
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
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteHandler.h"
#include "rewrite/rewriteManip.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/commands/commands.h"
#include "mt/continuous/aggregates.h"
#include "mt/continuous/analysis.h"
#include "mt/continuous/flatten.h"

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
static bool
has_row_security(Oid relid)
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
 * Can evaluating this expression fail?  Only what surely cannot is let
 * through: columns, constants, widening casts of integers, AND/OR/NOT,
 * CASE, NULL tests and comparisons by btree operators (=, <, IN (...),
 * ...) of such.
 */
static bool
may_fail(Node *node, void *context)
{
	if (node == NULL)
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
			if (get_op_btree_interpretation(((OpExpr *) node)->opno) == NIL)
				return true;
			break;
		case T_ScalarArrayOpExpr:
			if (get_op_btree_interpretation(((ScalarArrayOpExpr *) node)->opno) == NIL)
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
	return expression_tree_walker(node, may_fail, context);
}

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

static RelationCollector
sublink_relations(Query *q)
{
	RelationCollector c = {0};

	(void) query_tree_walker(q, sublink_relations_walker, &c, QTW_IGNORE_RT_SUBQUERIES);
	return c;
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
			if ((why = unsupported_shape(viewid, rte->subquery)) != NULL)
				return why;
		}
		return NULL;
	}
	/* subqueries in expressions: a change of what they read recomputes all */
	if (q->hasSubLinks && sublink_relations(q).untrackable)
		return "the query uses subqueries in expressions that read a view, a foreign table, a temporary or unlogged table, or a materialized view";
	if (q->groupingSets)
		return "the query uses grouping sets";
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);

		/* RTE_RESULT: a subquery merged into the query */
		if (rte->rtekind == RTE_JOIN || rte->rtekind == RTE_RESULT || is_view_self(rte, viewid))
			continue;

		/*
		 * Functions (unnest(t.tags), LATERAL or not) and VALUES: their rows
		 * follow from the rows they are joined with, or are constants (a
		 * function whose result can change is refused below)
		 */
		if (rte->rtekind == RTE_FUNCTION || rte->rtekind == RTE_TABLEFUNC ||
			rte->rtekind == RTE_VALUES)
			continue;
		if (rte->rtekind != RTE_RELATION)
			return "the query reads from a subquery or a function";
		if (!mt_relation_is_decodable(rte->relid))
			return "the query reads a view, a foreign table, a temporary or unlogged table, or a materialized view";
		if (rte->inh && !descendants_decodable(rte->relid))
			return "the query reads a table with a partition or child table that is foreign, temporary or unlogged";
		/* decoded rows know nothing of the policies the query applies */
		if (has_row_security(rte->relid))
			return "the query reads a table with row level security";
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
	if (a->group_exprs == NIL || !a->plain_outputs)
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
		if (d->kind == MT_AGG_AVG || d->output == NULL || d->scales != NIL)
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
joined_by_primary_key(Graph *g, int rtindex, Oid relid)
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
		VarRef		key = {rtindex, rel->rd_index->indkey.values[i]};
		ListCell   *lc;

		result = false;
		foreach(lc, g->edges)
		{
			Edge	   *e = lfirst(lc);

			if ((same_var(e->from, key) && e->to.varno != rtindex) ||
				(same_var(e->to, key) && e->from.varno != rtindex))
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
delta_rtindex(Graph *g, List *rtindexes)
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
	rows->groupDistinct = false;
	rows->havingQual = NULL;
	rows->sortClause = NIL;
	rows->limitCount = NULL;
	rows->limitOffset = NULL;
	rows->limitOption = LIMIT_OPTION_DEFAULT;
	return rows;
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
	Param	   *param = makeNode(Param);
	FuncExpr   *unnest;
	RangeTblFunction *function = makeNode(RangeTblFunction);

	param->paramkind = PARAM_EXTERN;
	param->paramid = paramid;
	param->paramtype = get_array_type(rowtype);
	param->paramtypmod = -1;
	param->location = -1;
	unnest = makeFuncExpr(F_UNNEST_ANYARRAY, rowtype, list_make1(param), InvalidOid,
						  InvalidOid, COERCE_EXPLICIT_CALL);
	unnest->funcretset = true;
	function->funcexpr = (Node *) unnest;
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

/* A term of the delta rule: its sources (member numbers), and its SQL. */
typedef struct TermSql
{
	List	   *members;
	char	   *sql;
} TermSql;

/*
 * mt_analysis_term_sql
 *		The rows query of a DELTAS join with the changed rows of some of
 *		its sources in place of the sources: members lists them, 0 for
 *		delta_source and n for the n-th of sides, and the i-th (from 1) is
 *		replaced by $i, an array of its rows.  Made once per set, kept with
 *		the analysis.
 */
const char *
mt_analysis_term_sql(MtAnalysis *a, List *members)
{
	MemoryContext old;
	ListCell   *lc;
	Query	   *q;
	TermSql    *term;

	foreach(lc, a->term_sqls)
		if (equal(((TermSql *) lfirst(lc))->members, members))
			return ((TermSql *) lfirst(lc))->sql;
	old = MemoryContextSwitchTo(GetMemoryChunkContext(a));
	q = copyObject(a->rows_query);
	foreach(lc, members)
	{
		int			m = lfirst_int(lc);
		int			rtindex = m == 0 ? a->delta_rtindex :
			((MtDeltaSide *) list_nth(a->sides, m - 1))->rtindex;

		replace_by_rows(q, rtindex, foreach_current_index(lc) + 1);
	}
	term = palloc(sizeof(TermSql));
	term->members = list_copy(members);
	term->sql = mt_query_text(q);
	a->term_sqls = lappend(a->term_sqls, term);
	MemoryContextSwitchTo(old);
	return term->sql;
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

/*
 * Fill the DELTAS part of a if the query allows it: count, sum and avg
 * (see continuous/aggregates.c) of inner joins of plain relations (the one
 * whose changes adjust read once), grouped by result columns or by nothing
 * at all.
 */
static bool
try_deltas(Graph *g, Query *q, MtAnalysis *a)
{
	RangeTblEntry *rte;
	List	   *rtindexes = NIL;
	List	   *group_tles = NIL;
	Query	   *rows;
	ListCell   *lc;
	int			rtindex;

	if (!q->hasAggs || q->hasWindowFuncs || q->hasTargetSRFs || q->hasSubLinks ||
		q->distinctClause || q->groupingSets ||
		!inner_joins_only(q, (Node *) q->jointree))
		return false;
	relids_under(q, (Node *) q->jointree, &rtindexes);

	/*
	 * The group columns: result columns (a state row per group is matched
	 * by them), plain columns or expressions whose equal values print
	 * alike, as adjustments keep them.
	 */
	foreach(lc, q->groupClause)
	{
		TargetEntry *tle = get_sortgroupclause_tle(lfirst(lc), q->targetList);

		if (tle->resjunk ||
			(base_var(q, (Node *) tle->expr) == NULL &&
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
	if (!mt_delta_outputs(q, group_tles, a))
		return false;
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);
		Var		   *var = d->arg ? base_var(q, (Node *) d->arg) : NULL;

		if (var)
		{
			d->arg_relid = rt_fetch(var->varno, q->rtable)->relid;
			d->arg_attnum = var->varattno;
		}
	}

	rtindex = list_length(rtindexes) == 1 ? linitial_int(rtindexes) : delta_rtindex(g, rtindexes);
	rte = rt_fetch(rtindex, q->rtable);
	/* its change would be on both sides of the join (the others' name keys) */
	foreach(lc, rtindexes)
		if (lfirst_int(lc) != rtindex && rt_fetch(lfirst_int(lc), q->rtable)->relid == rte->relid)
			return false;
	a->delta_source = rte->relid;
	a->delta_join = list_length(rtindexes) > 1;
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

	/* one source: evaluated on (and deparsed for) its changed rows alone */
	a->delta_quals = copyObject(q->jointree->quals);
	ChangeVarNodes((Node *) a->group_exprs, rtindex, 1, 0);
	ChangeVarNodes(a->delta_quals, rtindex, 1, 0);
	foreach(lc, a->aggs)
		ChangeVarNodes((Node *) ((MtDeltaAgg *) lfirst(lc))->arg, rtindex, 1, 0);
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

/*
 * Is tle in the PARTITION BY of every window of q?  Then the rows with
 * some values of it are computed from rows with those values alone, and
 * recomputing them recomputes whole partitions.
 */
static bool
partitions_every_window(Query *q, TargetEntry *tle)
{
	ListCell   *lc;

	if (tle->ressortgroupref == 0)
		return false;
	foreach(lc, q->windowClause)
	{
		WindowClause *wc = lfirst(lc);
		ListCell   *lp;
		bool		found = false;

		foreach(lp, wc->partitionClause)
			if (((SortGroupClause *) lfirst(lp))->tleSortGroupRef == tle->ressortgroupref)
				found = true;
		if (!found)
			return false;
	}
	return true;
}

/* Whether a change of relid recomputes the whole table (one use names no key) */
static bool
relid_read_whole(MtAnalysis *a, Oid relid)
{
	ListCell   *lc;

	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);

		if (use->relid == relid && use->full)
			return true;
	}
	return false;
}

/*
 * Add to a the uses of q's relations, each with the result columns its
 * changed rows name (names: q's result columns, in order).  A set
 * operation's branches each name the result columns by position: the
 * rows with some values of a result column come from branch rows with
 * those values alone.  Returns whether some use names a key.  g: q's graph.
 */
static bool
add_uses(Graph *g, Query *q, Oid viewid, List *names, MtAnalysis *a)
{
	List	   *candidates = NIL;	/* VarRef of key candidates, with ... */
	List	   *candidate_names = NIL;	/* ... their result column names */
	ListCell   *lc;
	ListCell   *lr;
	int			rtindex;
	int			position = 0;
	bool		any_keyed = false;

	if (q->setOperations)
	{
		foreach(lc, q->rtable)
		{
			RangeTblEntry *rte = lfirst(lc);
			Graph		branch = {0};

			if (rte->rtekind != RTE_SUBQUERY)
				continue;
			branch.q = rte->subquery;
			branch.nullable = palloc0(sizeof(bool) * (list_length(rte->subquery->rtable) + 1));
			walk_jointree(&branch, (Node *) rte->subquery->jointree, false);
			any_keyed |= add_uses(&branch, rte->subquery, viewid, names, a);
		}
		return any_keyed;
	}

	/* key candidates: plain columns of relations no outer join can null */
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		Var		   *var;
		VarRef	   *ref;

		if (tle->resjunk)
			continue;
		position++;
		if ((q->hasAggs || q->groupClause) && tle->ressortgroupref == 0)
			continue;
		if (q->hasWindowFuncs && !partitions_every_window(q, tle))
			continue;
		/* DISTINCT ON (a): the row kept for some a is one of a's rows */
		if (q->hasDistinctOn &&
			!get_sortgroupref_clause_noerr(tle->ressortgroupref, q->distinctClause))
			continue;
		var = base_var(q, (Node *) tle->expr);
		if (var == NULL || g->nullable[var->varno])
			continue;
		ref = palloc(sizeof(VarRef));
		ref->varno = var->varno;
		ref->attno = var->varattno;
		candidates = lappend(candidates, ref);
		candidate_names = lappend(candidate_names, pstrdup(list_nth(names, position - 1)));
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
		use->inh = rte->inh;
		use->family = list_length(a->uses);
		{
			Relation	rel = table_open(rte->relid, AccessShareLock);

			natts = RelationGetNumberOfAttributes(rel);
			table_close(rel, AccessShareLock);
		}
		for (attno = 1; attno <= natts; attno++)
		{
			VarRef		start = {rtindex, attno};
			List	   *reach = reachable(g, start);

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

	/*
	 * What subqueries in expressions read names no key: EXISTS (...), IN
	 * (...) or a scalar subquery may give another value for any row
	 */
	if (q->hasSubLinks)
		foreach(lc, sublink_relations(q).relids)
		{
			MtSourceUse *use = palloc0(sizeof(MtSourceUse));

			use->relid = lfirst_oid(lc);
			use->inh = true;	/* (the collector does not tell ONLY apart) */
			use->full = true;
			use->family = list_length(a->uses);
			a->uses = lappend(a->uses, use);
		}
	return any_keyed;
}

static MtAnalysis *
analyze_query_view(Oid viewid, Oid relid)
{
	Relation	view = table_open(viewid, AccessShareLock);
	Query	   *q = copyObject(get_view_query(view));
	const char *why;
	MtAnalysis *a;
	Graph		g = {0};
	List	   *names;
	ListCell   *lc;
	ListCell   *lr;
	List	   *told = NIL;		/* relations said to recompute the table */
	bool		any_keyed;

	table_close(view, AccessShareLock);

	q = mt_flatten_from_subqueries(q);
	why = unsupported_shape(viewid, q);
	if (why)
		return full_analysis(viewid, q, why);

	a = palloc0(sizeof(MtAnalysis));
	g.q = q;
	g.nullable = palloc0(sizeof(bool) * (list_length(q->rtable) + 1));
	walk_jointree(&g, (Node *) q->jointree, false);

	names = NIL;
	foreach(lc, q->targetList)
		if (!((TargetEntry *) lfirst(lc))->resjunk)
			names = lappend(names, ((TargetEntry *) lfirst(lc))->resname);
	any_keyed = add_uses(&g, q, viewid, names, a);

	if (try_deltas(&g, q, a))
	{
		List	   *named = NIL;
		const char *kept;

		a->strategy = MT_STRATEGY_DELTAS;
		a->in_place = OidIsValid(relid) && mt_deltas_in_place_possible(a, relid, viewid);
		kept = a->in_place ? "count and sum per group are adjusted in the table's own rows" :
			a->group_exprs == NIL ? "count, sum and avg of all rows are kept and adjusted" :
			"count, sum and avg per group are kept and adjusted";
		foreach(lc, a->uses)
		{
			MtSourceUse *use = lfirst(lc);

			/* its changes are adjustments: they need not name keys */
			if (use->relid == a->delta_source)
				use->full = false;
			else if (!use->full && !relid_read_whole(a, use->relid) && !mt_analysis_is_side(a, use->relid))
				foreach(lr, use->key_columns)
					named = list_append_unique(named, lfirst(lr));
		}
		if (!a->delta_join)
		{
			/*
			 * Folding changed rows into adjustments as decoding delivers
			 * them keeps a cycle as large as the groups it touches, however
			 * many rows one transaction changed; but an error there would
			 * stop decoding for every table of the database, so only
			 * expressions that cannot fail are evaluated there.
			 */
			a->fold_while_decoding = !may_fail(a->delta_quals, NULL) &&
				!may_fail((Node *) a->group_exprs, NULL);
			foreach(lc, a->aggs)
				if (may_fail((Node *) ((MtDeltaAgg *) lfirst(lc))->arg, NULL))
					a->fold_while_decoding = false;
			a->reason = psprintf("%s by each changed row %s", kept,
								 a->fold_while_decoding ? "as it is decoded" :
								 "when the table is applied (its WHERE clause, a group expression or an aggregate's argument may raise an error)");
		}
		else
		{
			List	   *side_names = NIL;

			foreach(lc, a->sides)
				side_names = lappend(side_names, makeString(get_rel_name(((MtDeltaSide *) lfirst(lc))->relid)));
			if (side_names == NIL)
				a->reason = psprintf("%s by each changed row of %s, joined with the other sources",
									 kept, get_rel_name(a->delta_source));
			else
				a->reason = psprintf("%s by each changed row of %s and of %s, joined with the other sources as the changes left them "
									 "(a cycle that cannot read them so, under concurrent writes, recomputes what those rows name)",
									 kept, get_rel_name(a->delta_source), mt_name_list_text(side_names));
			if (named != NIL)
				a->reason = psprintf("%s; a change of another source recomputes the groups of its values of %s",
									 a->reason, mt_name_list_text(named));
		}
		if (a->topk)
			a->reason = psprintf("%s; the first rows by its ORDER BY are rewritten from them when a group changed",
								 a->reason);
	}
	else if (q->limitCount || q->limitOffset)
		return full_analysis(viewid, q, "the query uses LIMIT or OFFSET (kept incrementally only over groups of count, sum and avg that deltas maintain)");
	else if (q->hasAggs && q->groupClause == NIL)
		return full_analysis(viewid, q, "the query is a global aggregate that deltas cannot maintain (of an aggregate other than count, sum and avg, or not over inner joins of tables)");
	else if (!any_keyed && q->hasWindowFuncs)
		return full_analysis(viewid, q, "no result column is in the PARTITION BY of every window function, so no change names the rows it affects");
	else if (!any_keyed)
		return full_analysis(viewid, q, "no change of a source names key values of the result");
	else
	{
		a->strategy = MT_STRATEGY_KEYS;
		a->reason = psprintf("rows are recomputed for the changed values of %s",
							 mt_name_list_text(a->keys));
	}
	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);

		if (use->full && !mt_analysis_is_side(a, use->relid) && !list_member_oid(told, use->relid))
		{
			a->reason = psprintf("%s; a change of %s recomputes the whole table",
								 a->reason, get_rel_name(use->relid));
			told = lappend_oid(told, use->relid);
		}
	}
	return a;
}

/*
 * mt_analyze_query_view
 *		How the pipeline maintains table relid, whose query is the view's.
 */
MtAnalysis *
mt_analyze_query_view(Oid viewid, Oid relid)
{
	MtAnalysis *a = analyze_query_view(viewid, relid);

	a->owner = mt_table_owner(relid);
	return a;
}
