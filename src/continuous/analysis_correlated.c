/*-------------------------------------------------------------------------
 *
 * src/continuous/analysis_correlated.c
 *	  The keys that subqueries in expressions name: a relation read in a
 *	  subquery correlated on a key column of the result (or on a column of
 *	  a keyed source, looked up) names the keys of the rows it changes.
 *
 * Part of the analysis (mt/continuous/analysis_int.h): add_uses in
 * continuous/analysis.c asks it for the uses of the relations that
 * EXISTS, IN and scalar subqueries read.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

#include "mt/continuous/analysis_int.h"
#include "mt/continuous/key_columns.h"
#include "mt/utils/relations.h"

/* Does the column compare by a deterministic collation, if any? */
bool
mt_deterministic_column(Oid relid, AttrNumber attno)
{
	Oid			collation;
	Oid			type;
	int32		typmod;

	get_atttypetypmodcoll(relid, attno, &type, &typmod, &collation);
	return !OidIsValid(collation) || get_collation_isdeterministic(collation);
}

/* The keyed use of the query's relation at rtindex, if it has one. */
MtSourceUse *
mt_keyed_use_at(MtAnalysis *a, int rtindex)
{
	ListCell   *lc;

	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);

		if (use->rtindex == rtindex && !use->full && use->lookup_sql == NULL)
			return use;
	}
	return NULL;
}

/* ---------------------------------------------------------------------
 * Subqueries correlated on a key
 * ---------------------------------------------------------------------
 */

typedef struct SublinkScan
{
	List	   *sublinks;		/* SubLink: those of the query's own expressions */
	List	   *relids;			/* Oid: a relation read inside them, once per RTE */
	bool		views;			/* they read a view (its relations are not counted) */
} SublinkScan;

/* an occurrence of a relation in a subquery, and the keys it names */
typedef struct CorrelatedUse
{
	Query	   *sq;				/* the subquery */
	Index		rtindex;		/* the relation's RTE there */
	MtSourceUse *use;
} CorrelatedUse;

/* every relation RTE of a query and the queries inside it */
static bool
count_relations(Node *node, SublinkScan *s)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
	{
		ListCell   *lc;

		foreach(lc, ((Query *) node)->rtable)
		{
			RangeTblEntry *rte = lfirst(lc);

			if (rte->rtekind == RTE_RELATION && rte->relkind == RELKIND_VIEW)
				s->views = true;
			else if (rte->rtekind == RTE_RELATION)
				s->relids = lappend_oid(s->relids, rte->relid);
		}
		return query_tree_walker((Query *) node, count_relations, s, 0);
	}
	return expression_tree_walker(node, count_relations, s);
}

/* the SubLinks of the query's expressions (as mt_sublink_relids finds them) */
static bool
find_sublinks(Node *node, SublinkScan *s)
{
	if (node == NULL)
		return false;
	if (IsA(node, SubLink))
	{
		s->sublinks = lappend(s->sublinks, node);
		(void) count_relations(((SubLink *) node)->subselect, s);
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, find_sublinks, s, QTW_IGNORE_RT_SUBQUERIES);
	return expression_tree_walker(node, find_sublinks, s);
}

/*
 * The key candidates that the base column of q reaches are named, in use,
 * by the source's column attno.
 */
static void
name_keys(MtGraph *g, Var *base, AttrNumber attno, List *candidates, List *candidate_names,
		  MtSourceUse *use)
{
	MtVarRef	start = {base->varno, base->varattno};
	ListCell   *lr;

	foreach(lr, mt_reachable(g, start))
	{
		ListCell   *lcand;
		ListCell   *lname;

		forboth(lcand, candidates, lname, candidate_names)
			if (mt_same_var(*(MtVarRef *) lfirst(lcand), *(MtVarRef *) lfirst(lr)) &&
				!list_member(use->key_columns, makeString(lfirst(lname))))
			{
				use->attnums = lappend_int(use->attnums, attno);
				use->key_columns = lappend(use->key_columns, makeString(lfirst(lname)));
			}
	}
}

/*
 * name_keys for an occurrence that a correlation already made a lookup
 * (correlated_lookup): when this condition names keys, the occurrence's
 * changed rows name them themselves, and the lookup goes (its column and
 * the keys' would otherwise be read as one key: x IN (SELECT y ... WHERE
 * outer.c = inner.c), found by the differential test, seed 22 q0771).
 */
static void
name_use_keys(MtGraph *g, Var *base, AttrNumber attno, List *candidates, List *candidate_names,
			  MtSourceUse *use)
{
	char	   *lookup = use->lookup_sql;
	List	   *attnums = use->attnums;

	if (lookup != NULL)
	{
		use->lookup_sql = NULL;
		use->attnums = NIL;
	}
	name_keys(g, base, attno, candidates, candidate_names, use);
	if (lookup != NULL && use->key_columns == NIL)
	{
		use->lookup_sql = lookup;
		use->attnums = attnums;
	}
}

/* Do rel (and, with inh, its children) decode updates and deletes whole? */
bool
mt_identity_full(Oid relid, bool inh)
{
	ListCell   *lc;

	if (!inh)
		return mt_replica_identity(relid) == REPLICA_IDENTITY_FULL;
	foreach(lc, mt_leaf_relations(relid))
		if (mt_replica_identity(lfirst_oid(lc)) != REPLICA_IDENTITY_FULL)
			return false;
	return true;
}

/* The use of the relation at rtindex of subquery sq, created if new. */
static MtSourceUse *
occurrence_use(List **found, Query *sq, Index rtindex)
{
	RangeTblEntry *rte = rt_fetch(rtindex, sq->rtable);
	CorrelatedUse *cu;
	ListCell   *lc;

	foreach(lc, *found)
	{
		cu = lfirst(lc);
		if (cu->sq == sq && cu->rtindex == rtindex)
			return cu->use;
	}
	cu = palloc0(sizeof(CorrelatedUse));
	cu->sq = sq;
	cu->rtindex = rtindex;
	cu->use = palloc0(sizeof(MtSourceUse));
	cu->use->relid = rte->relid;
	cu->use->inh = rte->inh;
	*found = lappend(*found, cu);
	return cu->use;
}

/*
 * A correlation on a column of a keyed source of q that reaches no key
 * (TPC-H Q4's EXISTS (... l_orderkey = o_orderkey ...), grouped by
 * o_orderpriority): the occurrence names the keys of that source's rows
 * with its values, looked up (see add_lookups).  Only in the query itself,
 * not in a set operation's branch, whose uses are not told apart by
 * their place.
 */
static void
correlated_lookup(MtAnalysis *a, bool top, MtSourceUse *use, Var *base, AttrNumber attno)
{
	MtSourceUse *keyed;
	char	   *sql;

	if (!top || use->key_columns != NIL || use->lookup_sql != NULL ||
		(keyed = mt_keyed_use_at(a, base->varno)) == NULL ||
		!mt_deterministic_column(keyed->relid, base->varattno) ||
		(sql = mt_lookup_sql(keyed, base->varattno)) == NULL)
		return;
	use->attnums = list_make1_int(attno);
	use->lookup_sql = sql;
	use->lookup_family = keyed->family;
}

/*
 * correlated_uses
 *		The sources of q's subqueries whose changes name key values of the
 *		result, as uses (returned: their relids).
 *
 * A subquery of q's own expressions whose WHERE has, among its top-level
 * conjuncts, "inner = outer" (an equality of one type, and of a
 * deterministic collation) between a column of a relation read in it and a
 * column of q that reaches a key candidate gives, for each row of q, a
 * value that depends on the inner relation's
 * rows with inner = that row's value only: a changed inner row names the
 * key values of its old and new inner column, whatever the subquery does
 * with those rows (EXISTS, IN, a scalar aggregate, NOT EXISTS, ...).  Each
 * occurrence of the relation in q's subqueries (no views among them) must
 * be so correlated, and it must be decoded with its old rows whole; one that is not
 * is asked for REPLICA IDENTITY FULL (identity_wanted) and its changes
 * recompute the table until it has it.
 */
List *
mt_correlated_uses(MtGraph *g, Query *q, List *candidates, List *candidate_names, MtAnalysis *a,
				bool top)
{
	SublinkScan scan = {0};
	List	   *subqueries = NIL;	/* Query: of the SubLinks, LATERAL ones */
	List	   *found = NIL;	/* CorrelatedUse */
	List	   *relids = NIL;
	List	   *keyed = NIL;
	ListCell   *lf;
	ListCell   *ls;

	(void) query_tree_walker(q, find_sublinks, &scan, QTW_IGNORE_RT_SUBQUERIES);
	foreach(ls, scan.sublinks)
		subqueries = lappend(subqueries, ((SubLink *) lfirst(ls))->subselect);
	/* LATERAL subqueries in FROM are correlated as those are */
	foreach(ls, q->rtable)
		if (mt_is_lateral_subquery(lfirst(ls)))
		{
			subqueries = lappend(subqueries, ((RangeTblEntry *) lfirst(ls))->subquery);
			(void) count_relations((Node *) ((RangeTblEntry *) lfirst(ls))->subquery, &scan);
		}
	if (scan.views)
		return NIL;
	foreach(ls, subqueries)
	{
		Query	   *sq = lfirst(ls);
		ListCell   *lq;

		if (sq->jointree == NULL || sq->setOperations != NULL)
			continue;
		foreach(lq, make_ands_implicit((Expr *) sq->jointree->quals))
		{
			OpExpr	   *op = lfirst(lq);
			Var		   *inner;
			Var		   *outer;
			Var		   *ov;
			Var		   *base;
			MtSourceUse *use;

			if (!IsA(op, OpExpr) || !mt_keyable_equality(op))
				continue;
			inner = linitial(op->args);
			outer = lsecond(op->args);
			if (IsA(inner, Var) && IsA(outer, Var) &&
				((Var *) inner)->varlevelsup == 1 && ((Var *) outer)->varlevelsup == 0)
			{
				Var		   *swap = inner;

				inner = outer;
				outer = swap;
			}
			if (!IsA(inner, Var) || !IsA(outer, Var) ||
				inner->varlevelsup != 0 || outer->varlevelsup != 1)
				continue;
			inner = mt_base_var(sq, (Node *) inner);
			ov = copyObject(outer);
			ov->varlevelsup = 0;
			base = mt_base_var(q, (Node *) ov);
			if (inner == NULL || base == NULL || g->nullable[base->varno])
				continue;
			use = occurrence_use(&found, sq, inner->varno);
			name_use_keys(g, base, inner->varattno, candidates, candidate_names, use);
			correlated_lookup(a, top, use, base, inner->varattno);
		}
	}

	/*
	 * x IN (SELECT y FROM r ...), a condition of q's WHERE, that
	 * mt_keyed_in_output accepts.  (In WHERE, a NULL in the set is as good
	 * as false; NOT IN, which a NULL or an empty set changes for every row,
	 * is not keyed.)
	 */
	foreach(ls, make_ands_implicit((Expr *) q->jointree->quals))
	{
		SubLink    *sl = lfirst(ls);
		TargetEntry *tle = mt_keyed_in_output(sl);
		Query	   *sq;
		Var		   *inner;
		Var		   *base;
		MtSourceUse *use;

		if (tle == NULL)
			continue;
		sq = (Query *) sl->subselect;
		inner = mt_base_var(sq, (Node *) tle->expr);
		base = mt_base_var(q, linitial(((OpExpr *) sl->testexpr)->args));
		if (inner == NULL || base == NULL || g->nullable[base->varno])
			continue;
		use = occurrence_use(&found, sq, inner->varno);
		name_use_keys(g, base, inner->varattno, candidates, candidate_names, use);
		correlated_lookup(a, top, use, base, inner->varattno);
	}

	/* a relation whose every occurrence in the subqueries names keys */
	foreach(lf, found)
		relids = list_append_unique_oid(relids, ((CorrelatedUse *) lfirst(lf))->use->relid);
	foreach(ls, relids)
	{
		Oid			relid = lfirst_oid(ls);
		int			occurrences = 0;
		int			named = 0;
		bool		inh = false;
		ListCell   *lr;

		foreach(lr, scan.relids)
			occurrences += (lfirst_oid(lr) == relid);
		foreach(lr, found)
		{
			CorrelatedUse *cu = lfirst(lr);

			if (cu->use->relid == relid &&
				(cu->use->key_columns != NIL || cu->use->lookup_sql != NULL))
			{
				named++;
				inh |= cu->use->inh;
			}
		}
		if (named != occurrences)
			continue;
		if (!mt_identity_full(relid, inh))
		{
			a->identity_wanted = lappend_oid(a->identity_wanted, relid);
			continue;
		}
		foreach(lr, found)
		{
			CorrelatedUse *cu = lfirst(lr);
			ListCell   *lk;

			if (cu->use->relid != relid)
				continue;
			cu->use->family = list_length(a->uses);
			cu->use->in_subquery = true;
			a->uses = lappend(a->uses, cu->use);
			foreach(lk, cu->use->key_columns)
				a->keys = list_append_unique(a->keys, lfirst(lk));
		}
		keyed = lappend_oid(keyed, relid);
	}
	return keyed;
}
