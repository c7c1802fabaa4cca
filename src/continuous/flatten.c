/*-------------------------------------------------------------------------
 *
 * src/continuous/flatten.c
 *	  Subqueries in FROM that only rename and compute columns, merged into
 *	  the query that reads them before it is analysed.
 *
 * SELECT nation, o_year, sum(amount) FROM (SELECT n_name AS nation, ...
 * FROM part, supplier, lineitem, ... WHERE ...) AS profit GROUP BY ...
 * (TPC-H Q9) is the same query as its FROM and WHERE written inline with
 * the subquery's expressions in place of its columns: maintained as that
 * query, its changes name keys and adjust aggregates where the subquery
 * alone would have the table recomputed.  The planner pulls such
 * subqueries up the same way (pull_up_simple_subquery); here only those
 * in the top FROM list, directly or under inner joins, are merged, which
 * needs no placeholder for expressions under an outer join.  WITH queries
 * the planner would inline are read as such subqueries first.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"

#include "mt/continuous/flatten.h"

/* Whether the subquery of rte only filters, joins, renames and computes. */
static bool
is_simple_subquery(RangeTblEntry *rte)
{
	Query	   *sq = rte->subquery;

	if (rte->rtekind != RTE_SUBQUERY || rte->lateral || rte->security_barrier)
		return false;
	if (sq->commandType != CMD_SELECT || sq->utilityStmt)
		return false;
	if (sq->hasAggs || sq->hasWindowFuncs || sq->hasTargetSRFs ||
		sq->hasSubLinks || sq->hasRecursive || sq->hasModifyingCTE ||
		sq->hasForUpdate || sq->hasRowSecurity)
		return false;
	if (sq->groupClause || sq->groupingSets || sq->havingQual ||
		sq->distinctClause || sq->limitCount || sq->limitOffset ||
		sq->setOperations || sq->cteList || sq->rowMarks)
		return false;
	/* read once per row of the subquery, not once per reference to it */
	if (contain_volatile_functions((Node *) sq->targetList))
		return false;
	return true;
}

/*
 * Merge the subquery of range table entry rtindex into q: its range table
 * is appended to q's, each reference to one of its columns becomes that
 * column's expression, and its entry stays, as an RTE_RESULT nothing
 * references, so that no range table index changes.  Returns the new q;
 * *sub_jointree is the subquery's FROM and WHERE, to put in its place.
 */
static Query *
merge_subquery(Query *q, int rtindex, FromExpr **sub_jointree)
{
	RangeTblEntry *rte = rt_fetch(rtindex, q->rtable);
	RangeTblEntry *original = copyObject(rte);
	Query	   *sq = mt_flatten_from_subqueries(copyObject(rte->subquery));

	OffsetVarNodes((Node *) sq, list_length(q->rtable), 0);
	q->rtable = list_concat(q->rtable, sq->rtable);

	rte->rtekind = RTE_RESULT;
	rte->subquery = NULL;
	rte->eref = makeAlias(rte->eref->aliasname, NIL);
	rte->alias = NULL;

	*sub_jointree = sq->jointree;
	return (Query *) ReplaceVarsFromTargetList((Node *) q, rtindex, 0, original,
											   sq->targetList,
											   REPLACEVARS_REPORT_ERROR, 0,
											   &q->hasSubLinks);
}

/* Whether node is a RangeTblRef to a simple subquery; its index if so */
static bool
simple_subquery_ref(Query *q, Node *node, int *rtindex)
{
	if (node == NULL || !IsA(node, RangeTblRef))
		return false;
	*rtindex = ((RangeTblRef *) node)->rtindex;
	return is_simple_subquery(rt_fetch(*rtindex, q->rtable));
}

/* Is there a simple subquery under node, through inner joins alone? */
static bool
inner_joins_to_subquery(Query *q, Node *node)
{
	JoinExpr   *join;
	int			rtindex;

	if (node == NULL)
		return false;
	if (IsA(node, RangeTblRef))
		return simple_subquery_ref(q, node, &rtindex);
	if (!IsA(node, JoinExpr))
		return false;
	join = (JoinExpr *) node;
	/* a USING or aliased join names the subquery's columns as its own */
	if (join->jointype != JOIN_INNER || join->usingClause || join->alias)
		return false;
	return inner_joins_to_subquery(q, join->larg) || inner_joins_to_subquery(q, join->rarg);
}

/* Does a Var of the query (outside join aliases) name range table entry rtindex? */
typedef struct VarnoSearch
{
	int			rtindex;
	int			levelsup;
} VarnoSearch;

static bool
names_rtindex_walker(Node *node, VarnoSearch *search)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
		return ((Var *) node)->varno == search->rtindex &&
			((Var *) node)->varlevelsup == search->levelsup;
	if (IsA(node, Query))
	{
		bool		found;

		search->levelsup++;
		found = query_tree_walker((Query *) node, names_rtindex_walker, search,
								  QTW_IGNORE_JOINALIASES);
		search->levelsup--;
		return found;
	}
	return expression_tree_walker(node, names_rtindex_walker, search);
}

/*
 * Inner joins of the top FROM list that lead to a subquery become FROM
 * items of their own, their ON clauses ANDed to WHERE -- the same rows for
 * inner joins -- so that the subquery is merged as a FROM item.  (A
 * subquery merged under a JOIN would leave the join's own range table
 * entry naming columns it no longer has.)  Outer joins stay as they are:
 * their nullable side's expressions would have to become NULL.  The join's
 * entry stays, as an RTE_RESULT nothing references.
 */
static void
dissolve_inner_joins(Query *q)
{
	FromExpr   *top = q->jointree;
	int			i;

	for (i = 0; i < list_length(top->fromlist); i++)
	{
		JoinExpr   *join = list_nth(top->fromlist, i);
		VarnoSearch search;

		if (!IsA(join, JoinExpr) || !inner_joins_to_subquery(q, (Node *) join))
			continue;
		search.rtindex = join->rtindex;
		search.levelsup = -1;
		if (names_rtindex_walker((Node *) q, &search))
			continue;
		top->fromlist = list_concat(list_concat(list_copy_head(top->fromlist, i),
												list_make2(join->larg, join->rarg)),
									list_copy_tail(top->fromlist, i + 1));
		top->quals = make_and_qual(top->quals, join->quals);
		rt_fetch(join->rtindex, q->rtable)->rtekind = RTE_RESULT;
		i--;					/* its sides may be such joins too */
	}
}

/* Does the query read a WITH query (of its own or of an outer level)? */
static bool
reads_cte_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
	{
		ListCell   *lc;

		foreach(lc, ((Query *) node)->rtable)
			if (((RangeTblEntry *) lfirst(lc))->rtekind == RTE_CTE)
				return true;
		return query_tree_walker((Query *) node, reads_cte_walker, context, 0);
	}
	return expression_tree_walker(node, reads_cte_walker, context);
}

/*
 * Inline into q's range table the WITH queries of owner it reads
 * (levelsup: how far up owner is); false if one cannot be.
 */
static bool
inline_cte_refs(Query *owner, Query *q, Index levelsup)
{
	ListCell   *lc;
	bool		all = true;

	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);
		CommonTableExpr *cte = NULL;
		ListCell   *lcte;

		if (rte->rtekind != RTE_CTE || rte->ctelevelsup != levelsup)
			continue;
		foreach(lcte, owner->cteList)
			if (strcmp(((CommonTableExpr *) lfirst(lcte))->ctename, rte->ctename) == 0)
				cte = lfirst(lcte);
		if (rte->self_reference || cte == NULL ||
			cte->ctematerialized == CTEMaterializeAlways ||
			!IsA(cte->ctequery, Query) ||
			((Query *) cte->ctequery)->commandType != CMD_SELECT ||
			reads_cte_walker(cte->ctequery, NULL))
		{
			all = false;
			continue;
		}
		rte->rtekind = RTE_SUBQUERY;
		rte->subquery = copyObject((Query *) cte->ctequery);
		rte->security_barrier = false;
		rte->ctename = NULL;
		rte->ctelevelsup = 0;
		rte->self_reference = false;
		rte->coltypes = rte->coltypmods = rte->colcollations = NIL;
	}
	return all;
}

/*
 * WITH queries read as subqueries in FROM, as the planner inlines them:
 * those not MATERIALIZED, not recursive, not data-modifying, that read no
 * other WITH query -- read by the query or by its set operation's
 * branches.  The WITH list goes once nothing reads it any more.
 */
static void
inline_ctes(Query *q)
{
	ListCell   *lc;
	bool		all;

	if (q->cteList == NIL || q->hasRecursive || q->hasModifyingCTE)
		return;
	all = inline_cte_refs(q, q, 0);
	if (q->setOperations)
		foreach(lc, q->rtable)
		{
			RangeTblEntry *rte = lfirst(lc);

			if (rte->rtekind == RTE_SUBQUERY)
				all &= inline_cte_refs(q, rte->subquery, 1);
		}
	/* nothing else may read the WITH list (a subquery in an expression) */
	if (all && !query_tree_walker(q, reads_cte_walker, NULL, QTW_IGNORE_CTE_SUBQUERIES))
		q->cteList = NIL;
}

/*
 * mt_flatten_from_subqueries
 *		q with the simple subqueries of its FROM merged into it.
 *
 * Those of the top FROM list give their FROM items and WHERE to q's;
 * those under inner joins once the joins are dissolved (dissolve_inner_joins); the
 * branches of a set operation are flattened each; WITH queries first become
 * subqueries (inline_ctes).  q is changed in place;
 * the result may be a new tree.
 */
Query *
mt_flatten_from_subqueries(Query *q)
{
	int			i;

	inline_ctes(q);
	/* a set operation: its branches' */
	if (q->setOperations)
	{
		ListCell   *lc;

		foreach(lc, q->rtable)
		{
			RangeTblEntry *rte = lfirst(lc);

			if (rte->rtekind == RTE_SUBQUERY)
				rte->subquery = mt_flatten_from_subqueries(rte->subquery);
		}
		return q;
	}
	if (q->jointree == NULL)
		return q;
	dissolve_inner_joins(q);
	for (i = 0; i < list_length(q->jointree->fromlist); i++)
	{
		Node	   *item = list_nth(q->jointree->fromlist, i);
		FromExpr   *top;
		FromExpr   *sub;
		int			rtindex;

		if (!simple_subquery_ref(q, item, &rtindex))
			continue;
		q = merge_subquery(q, rtindex, &sub);
		top = q->jointree;
		top->fromlist = list_concat(list_concat(list_copy_head(top->fromlist, i),
												sub->fromlist),
									list_copy_tail(top->fromlist, i + 1));
		top->quals = make_and_qual(top->quals, sub->quals);
		i += list_length(sub->fromlist) - 1;
	}
	return q;
}
