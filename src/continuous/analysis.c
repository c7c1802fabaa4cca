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
 * This file finds the keys of each source and chooses the strategy; what
 * the query reads, its shape and its equalities are read by
 * continuous/analysis_query.c, what DELTAS need by
 * continuous/analysis_deltas.c, the keys subqueries in expressions name by
 * continuous/analysis_correlated.c (see mt/continuous/analysis_int.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteHandler.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/hidden_objects.h"
#include "mt/continuous/analysis_int.h"
#include "mt/continuous/key_columns.h"
#include "mt/continuous/flatten.h"
#include "mt/continuous/kept_rows.h"
#include "mt/materialized_table.h"
#include "mt/utils/citus.h"
#include "mt/utils/relations.h"
#include "mt/utils/sql.h"

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
add_uses(MtGraph *g, Query *q, Oid viewid, List *names, MtAnalysis *a, bool top)
{
	List	   *candidates = NIL;	/* MtVarRef of key candidates, with ... */
	List	   *candidate_names = NIL;	/* ... their result column names */
	List	   *expressions = NIL;	/* expressions over one table, with ... */
	List	   *expression_names = NIL; /* ... theirs */
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
			MtGraph		branch = {0};

			if (rte->rtekind != RTE_SUBQUERY)
				continue;
			branch.q = rte->subquery;
			branch.nullable = palloc0(sizeof(bool) * (list_length(rte->subquery->rtable) + 1));
			mt_walk_jointree(&branch, (Node *) rte->subquery->jointree, false);
			any_keyed |= add_uses(&branch, rte->subquery, viewid, names, a, false);
		}
		return any_keyed;
	}

	/* a FULL JOIN of two tables: each names keys on both sides */
	if (top && mt_full_join_uses(q, names, a))
		return true;

	/* key candidates: plain columns of relations no outer join can null */
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		Var		   *var;
		MtVarRef   *ref;

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
		var = mt_base_var(q, (Node *) tle->expr);
		if (var == NULL && mt_expression_key_rtindex(q, g->nullable, (Node *) tle->expr) > 0)
		{
			expressions = lappend(expressions, tle->expr);
			expression_names = lappend(expression_names, list_nth(names, position - 1));
		}
		if (var == NULL || g->nullable[var->varno])
			continue;
		ref = palloc(sizeof(MtVarRef));
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

		if (rte->rtekind != RTE_RELATION || mt_is_view_self(rte, viewid))
			continue;
		use = palloc0(sizeof(MtSourceUse));
		use->relid = rte->relid;
		use->inh = rte->inh;
		use->rtindex = top ? rtindex : 0;
		/*
		 * (not of a relation an outer join nulls: a row of it that fails
		 * the WHERE clause can still take the NULL-extended row away; not of
		 * a materialized table, whose changes come logged, not decoded)
		 */
		if (top && !g->nullable[rtindex] && !mt_is_materialized_table(rte->relid))
			use->filter = mt_own_row_filter(q, rtindex);
		use->family = list_length(a->uses);
		{
			Relation	rel = table_open(rte->relid, AccessShareLock);

			natts = RelationGetNumberOfAttributes(rel);
			table_close(rel, AccessShareLock);
		}
		for (attno = 1; attno <= natts; attno++)
		{
			MtVarRef	start = {rtindex, attno};
			List	   *reach = mt_reachable(g, start);

			foreach(lr, reach)
			{
				MtVarRef   *v = lfirst(lr);
				ListCell   *lcand;
				ListCell   *lname;

				forboth(lcand, candidates, lname, candidate_names)
				{
					if (mt_same_var(*(MtVarRef *) lfirst(lcand), *v) &&
						!list_member(use->key_columns, makeString(lfirst(lname))))
					{
						use->attnums = lappend_int(use->attnums, attno);
						use->key_columns = lappend(use->key_columns, makeString(lfirst(lname)));
					}
				}
			}
		}
		mt_narrow_to_primary_key(use);
		if (use->key_columns == NIL)
			mt_expression_keys_use(use, rtindex, expressions, expression_names);
		use->full = (use->key_columns == NIL);
		any_keyed |= !use->full;
		a->uses = lappend(a->uses, use);
		foreach(lr, use->key_columns)
			a->keys = list_append_unique(a->keys, lfirst(lr));
	}

	/*
	 * What subqueries in expressions read names no key, but through a
	 * correlation on one (correlated_uses): EXISTS (...), IN (...) or a
	 * scalar subquery may give another value for any row
	 */
	if (q->hasSubLinks || mt_has_lateral_subquery(q))
	{
		List	   *keyed = mt_correlated_uses(g, q, candidates, candidate_names, a, top);

		any_keyed |= (keyed != NIL);
		foreach(lc, mt_sublink_relids(q))
		{
			MtSourceUse *use;

			if (list_member_oid(keyed, lfirst_oid(lc)))
				continue;
			use = palloc0(sizeof(MtSourceUse));
			use->relid = lfirst_oid(lc);
			use->inh = true;	/* (the collector does not tell ONLY apart) */
			use->full = true;
			use->family = list_length(a->uses);
			a->uses = lappend(a->uses, use);
		}
	}
	return any_keyed;
}

/*
 * A KEYS query's sources whose changes name no key (so far: any change
 * recomputed the table) but that an inner join's equality ties to another
 * source whose changes do: a changed row names the keys of that source's
 * rows with its value of the column, looked up when the table is applied.
 * So does an outer join's equality, from its nullable side to its
 * preserved side: the preserved rows a changed row joins are those whose
 * result rows it changes, matched or null-extended.  (The other source's
 * rows are as the lookup finds them: one that changed
 * too names its own old and new keys.)  Such a source must be decoded
 * whole: one that is not is asked for REPLICA IDENTITY FULL
 * (identity_wanted) and its changes recompute the table until it has it.
 */
static void
add_lookups(MtGraph *g, Query *q, MtAnalysis *a)
{
	ListCell   *lc;

	if (q->setOperations)
		return;
	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);
		int			natts;

		if (!use->full || use->rtindex == 0)
			continue;
		{
			Relation	rel = table_open(use->relid, AccessShareLock);

			natts = RelationGetNumberOfAttributes(rel);
			table_close(rel, AccessShareLock);
		}
		for (AttrNumber attno = 1; attno <= natts && use->full; attno++)
		{
			MtVarRef	start = {use->rtindex, attno};
			ListCell   *lr;

			foreach(lr, mt_reachable(g, start))
			{
				MtVarRef   *v = lfirst(lr);
				MtSourceUse *keyed;
				char	   *sql;

				/* one type, and values equal as the lookup compares them */
				if (v->varno == use->rtindex || g->nullable[v->varno] ||
					(keyed = mt_keyed_use_at(a, v->varno)) == NULL ||
					get_atttype(keyed->relid, v->attno) != get_atttype(use->relid, attno) ||
					!mt_deterministic_column(use->relid, attno) ||
					!mt_deterministic_column(keyed->relid, v->attno) ||
					(sql = mt_lookup_sql(keyed, v->attno)) == NULL)
					continue;
				if (!mt_identity_full(use->relid, use->inh))
				{
					a->identity_wanted = list_append_unique_oid(a->identity_wanted, use->relid);
					break;
				}
				use->full = false;
				use->attnums = list_make1_int(attno);
				use->lookup_sql = sql;
				use->lookup_family = keyed->family;
				break;
			}
		}
	}
}

static MtAnalysis *analyze_query(Query *q, Oid viewid, Oid relid, bool keys_only);

/*
 * The analysis by keys of sub, rows below a query that are to be kept
 * (continuous/kept_rows.c), its result columns named names; NULL if sub is
 * not kept by keys.
 */
static MtAnalysis *
analyze_kept_rows(Query *sub, List *names, Oid viewid)
{
	ListCell   *lc;
	ListCell   *ln = list_head(names);
	MtAnalysis *a;

	foreach(lc, sub->targetList)
	{
		TargetEntry *tle = lfirst(lc);

		if (tle->resjunk || ln == NULL)
			continue;
		tle->resname = pstrdup(strVal(lfirst(ln)));
		ln = lnext(names, ln);
	}
	a = analyze_query(copyObject(sub), viewid, InvalidOid, true);
	if (a->strategy != MT_STRATEGY_KEYS || a->rows_kept || a->poll)
		return NULL;
	return a;
}

/*
 * The reason of a table over kept rows: what they are, the keys, then
 * what the rows' analysis tells of each source (after its first sentence).
 */
static char *
kept_reason(MtAnalysis *a, const char *rows)
{
	const char *rest = strchr(a->reason, ';');

	return psprintf("%s are kept in a hidden table, recomputed for the changed values of %s, and the table is computed from them%s",
					rows, mt_name_list_text(a->keys), rest ? rest : "");
}

/*
 * A query whose FROM is one subquery that could not be merged into it (it
 * aggregates, say: TPC-H Q13), reading every source of the query: the
 * subquery's rows may be kept by keys in a hidden state, and the query
 * computed from them (continuous/kept_rows.c).  The subquery's place in
 * the range table, or 0.
 */
static int
kept_subquery(Query *q, Oid viewid)
{
	RangeTblRef *ref;
	RangeTblEntry *rte;
	ListCell   *lc;

	if (q->setOperations || q->hasSubLinks || q->cteList ||
		list_length(q->jointree->fromlist) != 1 || !IsA(linitial(q->jointree->fromlist), RangeTblRef))
		return 0;
	ref = linitial(q->jointree->fromlist);
	/* nothing else read (a view's query has its OLD and NEW entries) */
	foreach(lc, q->rtable)
		if (foreach_current_index(lc) + 1 != ref->rtindex && !mt_is_view_self(lfirst(lc), viewid))
			return 0;
	rte = rt_fetch(ref->rtindex, q->rtable);
	if (rte->rtekind != RTE_SUBQUERY || rte->lateral || rte->subquery->setOperations ||
		rte->subquery->limitCount || rte->subquery->limitOffset)
		return 0;
	/* its columns become the state's: each must have a name of its own */
	if (!mt_names_distinct(rte->eref->colnames))
		return 0;
	return ref->rtindex;
}

/*
 * The analysis of a query kept_subquery found: its subquery's by keys,
 * with the subquery's columns named as the query reads them; NULL when
 * the subquery is not kept by keys.
 */
static MtAnalysis *
analyze_kept_subquery(Query *q, int rtindex, Oid viewid)
{
	RangeTblEntry *rte = rt_fetch(rtindex, q->rtable);
	Query	   *sub = copyObject(rte->subquery);
	MtAnalysis *a = analyze_kept_rows(sub, rte->eref->colnames, viewid);

	if (a == NULL)
		return NULL;
	mt_kept_rows_prepare_subquery(a, q, rtindex, sub);
	a->reason = kept_reason(a, "the rows of its subquery in FROM");
	return a;
}

/*
 * A query recomputed before its input rows could be kept by keys needed no
 * old rows: a source without them (whose owner the table's may not be)
 * keeps it recomputed rather than refused -- asked for them, as a
 * correlated subquery's is (identity_wanted).  The sources so.
 */
static List *
old_rows_wanted(MtAnalysis *a)
{
	List	   *wanted = NIL;
	ListCell   *lc;

	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);

		if (!use->full && !mt_identity_full(use->relid, use->inh) &&
			!OidIsValid(mt_owning_materialized_table(use->relid)))
			wanted = list_append_unique_oid(wanted, use->relid);
	}
	return wanted;
}

/*
 * The analysis of an aggregate query whose input rows are kept by keys
 * (mt_kept_rows_input_query); NULL when they cannot be, with *wanted the
 * sources that would let them be with REPLICA IDENTITY FULL.
 */
static MtAnalysis *
analyze_kept_input(Query *q, Oid viewid, List **wanted)
{
	List	   *vars;
	Query	   *body = mt_kept_rows_input_query(q, &vars);
	MtAnalysis *a;

	if (body == NULL || (a = analyze_kept_rows(body, NIL, viewid)) == NULL ||
		(*wanted = old_rows_wanted(a)) != NIL)
		return NULL;
	mt_kept_rows_prepare_input(a, q, body, vars);
	a->reason = kept_reason(a, "the rows it aggregates");
	return a;
}

/*
 * The analysis of a query whose window functions no result column
 * partitions, over their input rows kept by keys
 * (mt_kept_rows_window_query); NULL when they cannot be, with *wanted as
 * analyze_kept_input's.
 */
static MtAnalysis *
analyze_kept_window(Query *q, Oid viewid, List **wanted)
{
	Query	   *outer;
	Query	   *body = mt_kept_rows_window_query(q, &outer);
	MtAnalysis *a;

	if (body == NULL || contain_mutable_functions((Node *) q) ||
		(a = analyze_kept_rows(body, NIL, viewid)) == NULL ||
		(*wanted = old_rows_wanted(a)) != NIL)
		return NULL;
	mt_kept_rows_prepare_subquery(a, outer, 1, body);
	a->reason = kept_reason(a, "the rows its window functions are computed over");
	return a;
}

/*
 * The sources whose changes name no rows of the result by their own
 * values: they recompute the whole table, or the rows of the rows they
 * are correlated with (read in a subquery) or, with joins, join, looked
 * up.
 */
static List *
coarse_sources(MtAnalysis *a, bool joins)
{
	List	   *relids = NIL;
	ListCell   *lc;

	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);

		if (use->full || (use->lookup_sql && (joins || use->in_subquery)))
			relids = list_append_unique_oid(relids, use->relid);
	}
	return relids;
}

/*
 * A grouped query kept by keys (by_groups) where a source's changes reach
 * the groups only through another source, or not at all: TPC-H Q4's lines
 * name the priorities of their orders (nearly every group at any change),
 * Q16's supplies the brands, types and sizes of their parts.  Its input
 * rows may be kept by finer keys (the orders, the supplies), the table
 * computed from them (continuous/kept_rows.c): a cycle reads the changed
 * rows from the sources, the groups they are in from the state.  Only when
 * fewer sources are so, and where only joins were looked up (they name
 * few groups), when a cycle rewrites only those groups (of a LIMIT, all
 * of them: TPC-H Q21); NULL otherwise.
 */
static MtAnalysis *
analyze_kept_groups(Query *q, Oid viewid, MtAnalysis *by_groups)
{
	List	   *coarse = coarse_sources(by_groups, true);
	bool		joins_only = coarse_sources(by_groups, false) == NIL;
	List	   *wanted = NIL;
	List	   *still;
	MtAnalysis *a;

	/* (a column grouped by a key of its table is not one of the state's) */
	if (coarse == NIL || q->constraintDeps != NIL ||
		(joins_only && !mt_groups_by_shown_column(q)))
		return NULL;
	if ((a = analyze_kept_input(copyObject(q), viewid, &wanted)) == NULL)
	{
		/* asked for the old rows that would let them be kept */
		by_groups->identity_wanted = list_concat_unique_oid(by_groups->identity_wanted, wanted);
		return NULL;
	}
	still = coarse_sources(a, true);
	if (list_difference_oid(still, coarse) != NIL || list_length(still) >= list_length(coarse))
		return NULL;
	if (q->limitCount || q->limitOffset)
		a->reason = psprintf("%s; the table, the first groups by its ORDER BY, is computed from all of them",
							 a->reason);
	return a;
}

/*
 * A query with one WITH query that is not inlined (read twice: TPC-H Q15)
 * and kept by keys as a query of its own (reading no other WITH query):
 * its rows are kept in a hidden state, and the query reads them wherever
 * it read the WITH query (continuous/kept_rows.c).  The query's other
 * sources recompute both.  NULL when it cannot be kept so.
 */
static MtAnalysis *
analyze_kept_cte(Query *q, Oid viewid)
{
	CommonTableExpr *cte = linitial(q->cteList);
	Query	   *sub;
	Query	   *outer;
	MtAnalysis *a;
	MtAnalysis *others;
	ListCell   *lc;

	if (list_length(q->cteList) != 1 || cte->cterecursive || !IsA(cte->ctequery, Query) ||
		((Query *) cte->ctequery)->commandType != CMD_SELECT ||
		((Query *) cte->ctequery)->cteList != NIL ||
		((Query *) cte->ctequery)->limitCount || ((Query *) cte->ctequery)->limitOffset)
		return NULL;
	if (!mt_names_distinct(cte->ctecolnames))
		return NULL;
	sub = copyObject((Query *) cte->ctequery);
	/* what the query reads beside the WITH query */
	outer = copyObject(q);
	outer->cteList = NIL;
	others = mt_full_analysis(viewid, outer, "");
	if (others->poll || contain_mutable_functions((Node *) q))
		return NULL;
	/* decoded rows know nothing of the policies the query applies */
	foreach(lc, others->uses)
		if (mt_has_row_security(((MtSourceUse *) lfirst(lc))->relid))
			return NULL;
	if ((a = analyze_kept_rows(sub, cte->ctecolnames, viewid)) == NULL)
		return NULL;
	mt_kept_rows_prepare_cte(a, q, sub);
	a->reason = kept_reason(a, psprintf("the rows of its WITH query %s",
										quote_identifier(cte->ctename)));
	foreach(lc, others->uses)
	{
		MtSourceUse *use = lfirst(lc);

		use->family = list_length(a->uses);
		a->uses = lappend(a->uses, use);
		a->reason = psprintf("%s; a change of %s recomputes the whole table", a->reason,
							 get_rel_name(use->relid));
	}
	return a;
}

static MtAnalysis *
analyze_query_view(Oid viewid, Oid relid)
{
	Relation	view = table_open(viewid, AccessShareLock);
	Query	   *q = copyObject(get_view_query(view));
	MtAnalysis *a;
	ListCell   *lc;

	table_close(view, AccessShareLock);
	a = analyze_query(copyObject(q), viewid, relid, false);

	/*
	 * A table of the coordinator over shards not kept from partial
	 * aggregates: the nodes send the keys that changes of the shards name,
	 * never their rows
	 */
	if (OidIsValid(relid) && mt_citus_installed() && mt_citus_table_kind(relid) == MT_CITUS_NONE &&
		!OidIsValid(mt_hidden_relid("partials_", relid)))
		foreach(lc, mt_analysis_sources(a))
			if (mt_citus_table_kind(lfirst_oid(lc)) != MT_CITUS_NONE)
			{
				a = analyze_query(q, viewid, relid, true);
				a->from_nodes = true;
				break;
			}
	return a;
}

/*
 * How query q (of view viewid, maintaining table relid, or InvalidOid) is
 * kept; with keys_only, not by deltas.
 */
static MtAnalysis *
analyze_query(Query *q, Oid viewid, Oid relid, bool keys_only)
{
	const char *why;
	MtAnalysis *a;
	MtGraph		g = {0};
	List	   *names;
	ListCell   *lc;
	ListCell   *lr;
	List	   *told = NIL;		/* relations said to recompute the table */
	bool		any_keyed;
	int			kept;
	Query	   *orig;

	/* (flattening inlines a WITH query in FROM, even one also read elsewhere) */
	orig = q->cteList ? copyObject(q) : q;
	q = mt_flatten_from_subqueries(q);
	why = mt_unsupported_shape(viewid, q);
	if (why && !keys_only && (kept = kept_subquery(q, viewid)) != 0 &&
		!contain_mutable_functions((Node *) q) &&
		(a = analyze_kept_subquery(q, kept, viewid)) != NULL)
		return a;
	if (why && !keys_only && q->cteList && (a = analyze_kept_cte(orig, viewid)) != NULL)
		return a;
	if (why)
		return mt_full_analysis(viewid, q, why);

	a = palloc0(sizeof(MtAnalysis));
	g.q = q;
	g.nullable = palloc0(sizeof(bool) * (list_length(q->rtable) + 1));
	mt_walk_jointree(&g, (Node *) q->jointree, false);

	names = NIL;
	foreach(lc, q->targetList)
		if (!((TargetEntry *) lfirst(lc))->resjunk)
			names = lappend(names, ((TargetEntry *) lfirst(lc))->resname);
	any_keyed = add_uses(&g, q, viewid, names, a, true);

	if (!keys_only && mt_try_deltas(&g, q, a))
	{
		List	   *named = NIL;
		const char *kept;

		a->strategy = MT_STRATEGY_DELTAS;
		a->in_place = OidIsValid(relid) && mt_deltas_in_place_possible(a, relid, viewid);
		kept = a->grouping_sets != NIL ?
			psprintf("%s per group of each of its %d grouping sets are kept and adjusted",
					 a->extrema ? "count, sum, avg, min and max" : "count, sum and avg",
					 list_length(a->grouping_sets)) :
			a->in_place ? "count and sum per group are adjusted in the table's own rows" :
			a->extrema && a->group_exprs == NIL ? "count, sum, avg, min and max of all rows are kept and adjusted" :
			a->extrema ? "count, sum, avg, min and max per group are kept and adjusted" :
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
			a->fold_while_decoding = !mt_may_fail(a->delta_quals, NULL) &&
				!mt_may_fail((Node *) a->group_exprs, NULL);
			foreach(lc, a->aggs)
				if (mt_may_fail((Node *) ((MtDeltaAgg *) lfirst(lc))->arg, NULL))
					a->fold_while_decoding = false;

			/*
			 * A group re-read as of a snapshot must leave out the changes
			 * that snapshot saw, which are told apart by transaction: the
			 * rows are kept until the table is applied
			 */
			a->reason = psprintf("%s by each changed row %s", kept,
								 a->extrema ? "when the table is applied" :
								 a->fold_while_decoding ? "as it is decoded" :
								 "when the table is applied (its WHERE clause, a group expression or an aggregate's argument may raise an error)");
			if (a->extrema)
				a->fold_while_decoding = false;
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
									 "(a cycle that cannot read them so recomputes %s)",
									 kept, get_rel_name(a->delta_source), mt_name_list_text(side_names),
									 a->grouping_sets ? "the table" : "what those rows name");
			if (named != NIL && a->grouping_sets)
				a->reason = psprintf("%s; a change of another source recomputes the table", a->reason);
			else if (named != NIL)
				a->reason = psprintf("%s; a change of another source recomputes the groups of its values of %s",
									 a->reason, mt_name_list_text(named));
		}
		if (a->extrema)
			a->reason = psprintf("%s; %s", a->reason, a->group_exprs == NIL || a->grouping_sets ?
								 "the table is recomputed when a changed row removes the value of a min or max" :
								 "a group is re-read from the sources when a changed row removes the value of its min or max");
		if (a->topk)
			a->reason = psprintf("%s; the first rows by its ORDER BY are rewritten from them when a group changed",
								 a->reason);
	}
	else if (q->groupingSets)
		return mt_full_analysis(viewid, q, "the query uses grouping sets, which are kept by deltas only with count, sum "
								"and avg of exact types, min and max, each set once, and without ORDER BY ... LIMIT");
	else if ((q->limitCount || q->limitOffset) && (why = mt_kept_rows_unfit(q)) != NULL)
		return mt_full_analysis(viewid, q, why);
	else if (q->hasAggs && q->groupClause == NIL)
	{
		List	   *wanted = NIL;
		MtAnalysis *kept = keys_only ? NULL : analyze_kept_input(q, viewid, &wanted);

		if (kept)
			return kept;
		kept = mt_full_analysis(viewid, q, "the query is a global aggregate that deltas cannot maintain (of an aggregate other than count, sum, avg, min and max, or not over inner joins of tables)");
		kept->identity_wanted = wanted;
		return kept;
	}
	else if (!any_keyed && q->hasWindowFuncs)
	{
		List	   *wanted = NIL;
		MtAnalysis *kept = keys_only ? NULL : analyze_kept_window(q, viewid, &wanted);

		if (kept)
			return kept;
		kept = mt_full_analysis(viewid, q, "no result column is in the PARTITION BY of every window function, so no change names the rows it affects");
		kept->identity_wanted = wanted;
		return kept;
	}
	else if (!any_keyed)
		return mt_full_analysis(viewid, q, "no change of a source names key values of the result");
	else
	{
		a->strategy = MT_STRATEGY_KEYS;
		mt_coarsen_key_uses(a);
		a->reason = psprintf("rows are recomputed for the changed values of %s",
							 mt_name_list_text(a->keys));
		add_lookups(&g, q, a);
		if (!keys_only && q->groupClause != NIL)
		{
			MtAnalysis *finer = analyze_kept_groups(q, viewid, a);

			if (finer)
				return finer;
		}
		if (q->limitCount || q->limitOffset)
		{
			mt_kept_rows_prepare(a, q);
			a->reason = psprintf("%s; all the query's rows are kept in a hidden table, and the table is their first rows by its ORDER BY", a->reason);
		}
	}
	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);

		if (use->lookup_sql && !list_member_oid(told, use->relid))
		{
			MtSourceUse *keyed = list_nth(a->uses, use->lookup_family);
			char	   *column = get_attname(use->relid, linitial_int(use->attnums), false);

			/* (another use of it may still recompute the table: said once) */
			if (relid_read_whole(a, use->relid))
				continue;

			if (use->in_subquery)
				a->reason = psprintf("%s; a change of %s, read in a subquery correlated with %s, recomputes the rows of the %s rows it names (by %s)",
									 a->reason, get_rel_name(use->relid), get_rel_name(keyed->relid),
									 get_rel_name(keyed->relid), column);
			else
				a->reason = psprintf("%s; a change of %s recomputes the rows of the %s rows it joins (by %s)",
									 a->reason, get_rel_name(use->relid), get_rel_name(keyed->relid), column);
			told = lappend_oid(told, use->relid);
		}
		else if (use->full && !mt_analysis_is_side(a, use->relid) && !list_member_oid(told, use->relid))
		{
			a->reason = psprintf("%s; a change of %s recomputes the whole table",
								 a->reason, get_rel_name(use->relid));
			told = lappend_oid(told, use->relid);
		}
		else if (use->in_subquery && !list_member_oid(told, use->relid))
		{
			List	   *columns = NIL;
			ListCell   *lo;

			/* the keys of all its occurrences */
			foreach(lo, a->uses)
			{
				MtSourceUse *other = lfirst(lo);

				if (other->in_subquery && other->relid == use->relid)
					columns = list_concat_unique(columns, other->key_columns);
			}
			a->reason = psprintf("%s; a change of %s, read in a subquery correlated on %s, recomputes the rows of its values",
								 a->reason, get_rel_name(use->relid), mt_name_list_text(columns));
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
	List	   *filtered = NIL;
	ListCell   *lc;

	a->owner = mt_table_owner(relid);
	/* what a cycle reads its keys' rows from: the state's query, or the view */
	if (a->strategy == MT_STRATEGY_KEYS && !a->from_nodes && !a->poll)
	{
		Relation	view = table_open(viewid, AccessShareLock);

		mt_keys_pushed_note(a, a->rows_kept ? a->body_query : get_view_query(view));
		table_close(view, AccessShareLock);
		if (a->pushed_keys != NIL)
		{
			List	   *columns = NIL;

			foreach(lc, a->pushed_keys)
				columns = lappend(columns, makeString(((MtPushedKey *) lfirst(lc))->column));
			a->reason = psprintf("%s; the rows of changed values of %s are recomputed with those values carried into the IN subquery that tests %s",
								 a->reason, mt_name_list_text(columns),
								 list_length(columns) > 1 ? "each" : "it");
		}
	}
	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);

		if (use->filter)
			filtered = list_append_unique(filtered, makeString(get_rel_name(use->relid)));
	}
	if (filtered != NIL)
		a->reason = psprintf("%s; changed rows of %s that fail the query's conditions on their own columns are left out as they are decoded",
							 a->reason, mt_name_list_text(filtered));
	return a;
}
