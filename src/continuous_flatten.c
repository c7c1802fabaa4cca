/*-------------------------------------------------------------------------
 *
 * continuous_flatten.c
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
 * directly in the top FROM list are merged, which needs no placeholder
 * for expressions under an outer join.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"

#include "continuous_flatten.h"

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

/*
 * The simple subqueries that are sides of inner joins under node: a side
 * can only be replaced by one FROM item, and the subquery's WHERE joins
 * the ON clause, which for an inner join filters the same rows.  Outer
 * joins are left alone: their nullable side's expressions would have to
 * become NULL, their preserved side's WHERE cannot move into ON.
 */
static List *
inner_join_subqueries(Query *q, Node *node, List *found)
{
	JoinExpr   *join;
	Node	   *sides[2];
	int			i;

	if (node == NULL || !IsA(node, JoinExpr))
		return found;
	join = (JoinExpr *) node;
	found = inner_join_subqueries(q, join->larg, found);
	found = inner_join_subqueries(q, join->rarg, found);
	/* a USING or aliased join names the subquery's columns as its own */
	if (join->jointype != JOIN_INNER || join->usingClause || join->alias)
		return found;
	sides[0] = join->larg;
	sides[1] = join->rarg;
	for (i = 0; i < 2; i++)
	{
		int			rtindex;

		if (simple_subquery_ref(q, sides[i], &rtindex) &&
			list_length(rt_fetch(rtindex, q->rtable)->subquery->jointree->fromlist) == 1)
			found = lappend_int(found, rtindex);
	}
	return found;
}

/* Put sub's one FROM item in place of the join side rtindex under node. */
static void
replace_join_side(Node *node, int rtindex, FromExpr *sub)
{
	JoinExpr   *join;
	Node	  **sides[2];
	int			i;

	if (node == NULL || !IsA(node, JoinExpr))
		return;
	join = (JoinExpr *) node;
	sides[0] = &join->larg;
	sides[1] = &join->rarg;
	for (i = 0; i < 2; i++)
	{
		if (IsA(*sides[i], RangeTblRef) && ((RangeTblRef *) *sides[i])->rtindex == rtindex)
		{
			*sides[i] = linitial(sub->fromlist);
			join->quals = make_and_qual(join->quals, sub->quals);
			return;
		}
		replace_join_side(*sides[i], rtindex, sub);
	}
}

/*
 * mt_flatten_from_subqueries
 *		q with the simple subqueries of its FROM merged into it.
 *
 * Those of the top FROM list give their FROM items and WHERE to q's;
 * those that are a side of an inner join, see inner_join_subqueries; the
 * branches of a set operation are flattened each.  q is changed in place;
 * the result may be a new tree.
 */
Query *
mt_flatten_from_subqueries(Query *q)
{
	int			i;

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
	for (i = 0; i < list_length(q->jointree->fromlist); i++)
	{
		Node	   *item = list_nth(q->jointree->fromlist, i);
		FromExpr   *top;
		FromExpr   *sub;
		int			rtindex;

		if (!simple_subquery_ref(q, item, &rtindex))
		{
			ListCell   *lc;

			foreach(lc, inner_join_subqueries(q, item, NIL))
			{
				q = merge_subquery(q, lfirst_int(lc), &sub);
				replace_join_side(list_nth(q->jointree->fromlist, i), lfirst_int(lc), sub);
			}
			continue;
		}
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
