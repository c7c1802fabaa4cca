/*-------------------------------------------------------------------------
 *
 * src/continuous/kept_rows.c
 *	  The KEYS strategy over rows kept in a hidden state.
 *
 * See mt/continuous/kept_rows.h.  The analysis (continuous/analysis.c)
 * asks whether a KEYS query with a LIMIT or OFFSET can be kept so, and has
 * the state's query made here (also of a subquery in FROM); the pipeline
 * creates the hidden objects; each cycle replaces the state's rows of the
 * keys a change names from that query, and the table's rows from the
 * derived view.  A table whose objects are missing (its pipeline was made
 * before its query could be kept so) gets them, filled whole, at its next
 * cycle.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/hidden_objects.h"
#include "mt/catalog/marker.h"
#include "mt/continuous/kept_rows.h"
#include "mt/continuous/key_columns.h"
#include "mt/materialized_table.h"
#include "mt/utils/extension.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/sql.h"
#include "mt/utils/string_key.h"
#include "mt/utils/subxact.h"

/* a LIMIT or OFFSET whose value a change of the sources could change */
static bool
changing_value(Node *node)
{
	return node != NULL &&
		(contain_var_clause(node) || checkExprHasSubLink(node) ||
		 contain_mutable_functions(node));
}

/*
 * mt_kept_rows_unfit
 *		Why the first rows of query q (with a LIMIT or OFFSET) cannot be
 *		taken from all its rows kept, or NULL if they can.  The state keeps
 *		the values the rows are sorted by: they must be the sources', not
 *		those of the time they were computed at.
 */
const char *
mt_kept_rows_unfit(Query *q)
{
	ListCell   *lc;

	if (changing_value(q->limitCount) || changing_value(q->limitOffset))
		return "the query's LIMIT or OFFSET is not a constant";
	foreach(lc, q->sortClause)
	{
		TargetEntry *tle = get_sortgroupclause_tle(lfirst(lc), q->targetList);

		if (contain_mutable_functions((Node *) tle->expr))
			return "the query uses LIMIT or OFFSET over an ORDER BY expression whose value may change without a change of the sources";
	}
	return NULL;
}

static void prepare_top(MtAnalysis *a, Query *q);

/* the state's column of an ORDER BY expression the query does not show */
static char *
sort_column_name(AttrNumber resno)
{
	return psprintf("__mt_sort_%d", resno);
}

/*
 * mt_kept_rows_prepare
 *		The rows the state keeps: query q without its LIMIT and OFFSET, each
 *		expression it sorts by in the result, and without the ORDER BY
 *		itself unless DISTINCT ON needs it to pick its rows.
 */
void
mt_kept_rows_prepare(MtAnalysis *a, Query *q)
{
	Query	   *body = copyObject(q);
	ListCell   *lc;

	body->limitCount = NULL;
	body->limitOffset = NULL;
	body->limitOption = LIMIT_OPTION_DEFAULT;
	foreach(lc, body->sortClause)
	{
		TargetEntry *tle = get_sortgroupclause_tle(lfirst(lc), body->targetList);

		if (tle->resjunk)
		{
			tle->resjunk = false;
			tle->resname = sort_column_name(tle->resno);
		}
	}
	if (!body->hasDistinctOn)
		body->sortClause = NIL;
	a->rows_kept = true;
	a->body_query = body;
	a->body_sql = mt_query_text(body);
	prepare_top(a, q);
}

/*
 * mt_kept_rows_prepare_subquery
 *		The rows the state keeps: sub, the subquery at rtindex of query q
 *		(its columns named as q reads them); the derived view is q reading
 *		the state there.
 */
void
mt_kept_rows_prepare_subquery(MtAnalysis *a, Query *q, int rtindex, Query *sub)
{
	a->rows_kept = true;
	a->body_query = sub;
	a->body_sql = mt_query_text(sub);
	a->outer_query = copyObject(q);
	a->outer_rtindex = rtindex;
}

/*
 * mt_kept_rows_prepare_cte
 *		The rows the state keeps: sub, the one WITH query of q (its columns
 *		named as q reads them); the derived view is q reading the state
 *		wherever it reads the WITH query.
 */
void
mt_kept_rows_prepare_cte(MtAnalysis *a, Query *q, Query *sub)
{
	mt_kept_rows_prepare_subquery(a, q, 0, sub);
	a->outer_cte = pstrdup(((CommonTableExpr *) linitial(q->cteList))->ctename);
}

/* An entry of the range table reads the state instead. */
static void
read_state(RangeTblEntry *rte, Oid stateid)
{
	if (rte->rtekind == RTE_CTE && rte->alias == NULL)
		rte->alias = makeAlias(rte->eref->aliasname, NIL);
	rte->rtekind = RTE_RELATION;
	rte->relid = stateid;
	rte->relkind = RELKIND_RELATION;
	rte->rellockmode = AccessShareLock;
	rte->subquery = NULL;
	rte->security_barrier = false;
	rte->inh = false;
	rte->requiredPerms = ACL_SELECT;
	rte->ctename = NULL;
	rte->ctelevelsup = 0;
	rte->self_reference = false;
}

typedef struct CteReplacer
{
	const char *name;
	Oid			stateid;
	int			depth;
} CteReplacer;

static bool
replace_cte_walker(Node *node, CteReplacer *r)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_CTE && rte->ctelevelsup == r->depth &&
			strcmp(rte->ctename, r->name) == 0)
			read_state(rte, r->stateid);
		return false;
	}
	if (IsA(node, Query))
	{
		bool		result;

		r->depth++;
		result = query_tree_walker((Query *) node, replace_cte_walker, r, QTW_EXAMINE_RTES_BEFORE);
		r->depth--;
		return result;
	}
	return expression_tree_walker(node, replace_cte_walker, r);
}

/* The derived view's query of a kept subquery: q reading the state. */
static char *
outer_sql(MtAnalysis *a, Oid stateid)
{
	Query	   *q = copyObject(a->outer_query);

	if (a->outer_cte)
	{
		CteReplacer r = {a->outer_cte, stateid, 0};

		(void) query_tree_walker(q, replace_cte_walker, &r, QTW_EXAMINE_RTES_BEFORE);
		q->cteList = NIL;
	}
	else
		read_state(rt_fetch(a->outer_rtindex, q->rtable), stateid);
	return mt_query_text(q);
}

/* ---------------------------------------------------------------------
 * A global aggregate over its input rows kept
 * ---------------------------------------------------------------------
 */

typedef struct VarCollector
{
	List	   *vars;			/* Var of the query's level, each once */
	int			depth;			/* of the subquery walked */
	bool		ok;				/* no whole-row or system column, no join
								 * alias */
	List	   *rtable;
} VarCollector;

static bool
collect_vars_walker(Node *node, VarCollector *c)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;
		ListCell   *lc;

		if (v->varlevelsup != c->depth)
			return false;
		if (v->varattno <= 0 || rt_fetch(v->varno, c->rtable)->rtekind != RTE_RELATION)
		{
			c->ok = false;
			return true;
		}
		foreach(lc, c->vars)
			if (((Var *) lfirst(lc))->varno == v->varno &&
				((Var *) lfirst(lc))->varattno == v->varattno)
				return false;
		v = copyObject(v);
		v->varlevelsup = 0;
		c->vars = lappend(c->vars, v);
		return false;
	}
	if (IsA(node, Query))
	{
		bool		result;

		c->depth++;
		result = query_tree_walker((Query *) node, collect_vars_walker, c, 0);
		c->depth--;
		return result;
	}
	return expression_tree_walker(node, collect_vars_walker, c);
}

/* base, or base_2, base_3 ...: a name none of taken (String) has */
static char *
unique_name(const char *base, List *taken)
{
	char	   *name = pstrdup(base);
	ListCell   *lc;
	int			n = 1;

	for (;;)
	{
		bool		used = false;

		foreach(lc, taken)
			if (strcmp(strVal(lfirst(lc)), name) == 0)
				used = true;
		if (!used)
			return name;
		name = psprintf("%s_%d", base, ++n);
	}
}

/* the state's column of a Var: its column's name, made unique */
static char *
input_column_name(Var *v, List *rtable, List *taken)
{
	return unique_name(get_attname(rt_fetch(v->varno, rtable)->relid, v->varattno, false), taken);
}

/* outer reads body alone, as range table entry 1, its columns named colnames */
static void
read_kept(Query *outer, Query *body, List *colnames)
{
	RangeTblEntry *rte = makeNode(RangeTblEntry);
	RangeTblRef *ref = makeNode(RangeTblRef);

	rte->rtekind = RTE_SUBQUERY;
	rte->subquery = body;
	rte->eref = makeAlias("kept", colnames);
	rte->inFromCl = true;
	ref->rtindex = 1;
	outer->rtable = list_make1(rte);
	outer->jointree = makeFromExpr(list_make1(ref), NULL);
}

/* The rows body computes, in no order, all of them: what a state keeps. */
static void
unordered_rows(Query *body)
{
	body->sortClause = NIL;
	body->distinctClause = NIL;
	body->hasDistinctOn = false;
	body->limitCount = NULL;
	body->limitOffset = NULL;
	body->limitOption = LIMIT_OPTION_DEFAULT;
}

/*
 * mt_kept_rows_input_query
 *		The rows aggregate query q aggregates (all of them, or by its
 *		GROUP BY, whose items read them as its result does): each column
 *		of its level it reads (in its WHERE and subqueries too, which may
 *		name keys) as a column of their own; NULL
 *		if they cannot be kept (a whole-row reference, a subquery or window
 *		in what q computes from them).  *vars: those columns' Vars.
 */
Query *
mt_kept_rows_input_query(Query *q, List **vars)
{
	VarCollector c = {0};
	Query	   *body;
	List	   *names = NIL;
	ListCell   *lc;

	if (q->groupingSets || q->hasWindowFuncs || q->setOperations ||
		q->hasTargetSRFs || q->cteList || q->rowMarks ||
		checkExprHasSubLink((Node *) q->targetList) || checkExprHasSubLink(q->havingQual))
		return NULL;
	c.ok = true;
	c.rtable = q->rtable;
	/* (not the columns a JOIN lists as its own: they are all of its sides') */
	(void) query_tree_walker(q, collect_vars_walker, &c, QTW_IGNORE_JOINALIASES);
	if (!c.ok || c.vars == NIL)
		return NULL;
	body = copyObject(q);
	body->targetList = NIL;
	foreach(lc, c.vars)
	{
		char	   *name = input_column_name(lfirst(lc), q->rtable, names);

		names = lappend(names, makeString(name));
		body->targetList = lappend(body->targetList,
								   makeTargetEntry(copyObject(lfirst(lc)),
												   foreach_current_index(lc) + 1, name, false));
	}
	body->hasAggs = false;
	body->groupClause = NIL;
	body->groupDistinct = false;
	body->havingQual = NULL;
	unordered_rows(body);
	*vars = c.vars;
	return body;
}

typedef struct InputMapper
{
	List	   *vars;
} InputMapper;

/* a Var of the query's level becomes the state's column of it */
static Node *
map_input_mutator(Node *node, InputMapper *m)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varlevelsup == 0)
	{
		Var		   *v = (Var *) node;
		ListCell   *lc;

		foreach(lc, m->vars)
			if (((Var *) lfirst(lc))->varno == v->varno &&
				((Var *) lfirst(lc))->varattno == v->varattno)
			{
				Var		   *mapped = copyObject(v);

				mapped->varno = 1;
				mapped->varattno = foreach_current_index(lc) + 1;
				mapped->varnosyn = 0;
				mapped->varattnosyn = 0;
				return (Node *) mapped;
			}
		elog(ERROR, "a column of the query is not among its input's");
	}
	return expression_tree_mutator(node, map_input_mutator, m);
}

/*
 * mt_kept_rows_prepare_input
 *		The state keeps body, the rows global aggregate q reads (made by
 *		mt_kept_rows_input_query, with vars); the derived view is q over the
 *		state: its groups, aggregates and HAVING of the state's columns.
 */
void
mt_kept_rows_prepare_input(MtAnalysis *a, Query *q, Query *body, List *vars)
{
	Query	   *outer = copyObject(q);
	InputMapper m = {vars};
	List	   *colnames = NIL;
	ListCell   *lc;

	foreach(lc, body->targetList)
		colnames = lappend(colnames, makeString(pstrdup(((TargetEntry *) lfirst(lc))->resname)));
	read_kept(outer, body, colnames);
	outer->targetList = (List *) map_input_mutator((Node *) outer->targetList, &m);
	outer->havingQual = map_input_mutator(outer->havingQual, &m);
	outer->hasSubLinks = false;
	mt_kept_rows_prepare_subquery(a, outer, 1, body);

	/*
	 * the groups, where they are columns of the state the result shows --
	 * unless the result is the first of them (a group changed may enter or
	 * leave it, and move others in or out)
	 */
	if (outer->limitCount || outer->limitOffset)
		return;
	a->group_is_key = outer->groupClause != NIL;
	foreach(lc, outer->groupClause)
	{
		SortGroupClause *sgc = lfirst(lc);
		TargetEntry *tle = get_sortgroupclause_tle(sgc, outer->targetList);

		if (tle->resjunk || !IsA(tle->expr, Var))
		{
			a->group_is_key = false;
			continue;
		}
		a->group_columns = lappend(a->group_columns,
								   pstrdup(strVal(list_nth(colnames, ((Var *) tle->expr)->varattno - 1))));
		a->group_results = lappend(a->group_results, pstrdup(tle->resname));
	}
	/* (a filter's key tuples have at most 31 columns) */
	if (list_length(a->group_columns) > 31)
	{
		a->group_columns = a->group_results = NIL;
		a->group_is_key = false;
	}
}

/* ---------------------------------------------------------------------
 * Window functions over their input rows kept
 * ---------------------------------------------------------------------
 */

typedef struct WindowSplit
{
	Query	   *q;
	List	   *inputs;			/* Expr: the state's columns, in order ... */
	List	   *names;			/* String: ... and their names */
	bool		ok;				/* nothing the state cannot hold */
} WindowSplit;

/* The state's column of expr (added if new), as a Var of the outer query. */
static Var *
input_var(WindowSplit *s, Node *expr, const char *base)
{
	AttrNumber	attno = 0;
	ListCell   *lc;

	foreach(lc, s->inputs)
		if (equal(lfirst(lc), expr))
			attno = foreach_current_index(lc) + 1;
	if (attno == 0)
	{
		s->inputs = lappend(s->inputs, copyObject(expr));
		s->names = lappend(s->names, makeString(unique_name(base, s->names)));
		attno = list_length(s->inputs);
	}
	return makeVar(1, attno, exprType(expr), exprTypmod(expr), exprCollation(expr), 0);
}

/*
 * What window functions are computed over becomes the state's columns: a
 * grouping expression whole, an aggregate whole, any other column read;
 * the window functions themselves stay above.
 */
static Node *
window_input_mutator(Node *node, WindowSplit *s)
{
	ListCell   *lc;

	if (node == NULL)
		return NULL;
	if (!IsA(node, Const))
		foreach(lc, s->q->groupClause)
		{
			TargetEntry *tle = get_sortgroupclause_tle(lfirst(lc), s->q->targetList);

			if (equal(tle->expr, node))
				return (Node *) input_var(s, node, "__mt_group");
		}
	if (IsA(node, Aggref))
		return (Node *) input_var(s, node, "__mt_agg");
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;

		if (v->varlevelsup != 0 || v->varattno <= 0)
		{
			s->ok = false;
			return node;
		}
		return (Node *) input_var(s, node,
								  get_rte_attribute_name(rt_fetch(v->varno, s->q->rtable), v->varattno));
	}
	if (IsA(node, GroupingFunc) || IsA(node, SubLink))
	{
		s->ok = false;
		return node;
	}
	return expression_tree_mutator(node, window_input_mutator, s);
}

/*
 * mt_kept_rows_window_query
 *		Split query q, with window functions, in two: the rows its window
 *		functions are computed over (its FROM, WHERE, GROUP BY and HAVING,
 *		the grouping expressions first, then each aggregate and column its
 *		result reads), returned, and *outer, q over them (its window
 *		functions, DISTINCT, ORDER BY and LIMIT over range table entry 1,
 *		a subquery of the rows returned).  NULL when q cannot be so split.
 */
Query *
mt_kept_rows_window_query(Query *q, Query **outer)
{
	WindowSplit s = {0};
	Query	   *body;
	Query	   *top;
	ListCell   *lc;

	if (!q->hasWindowFuncs || q->groupingSets || q->setOperations || q->hasTargetSRFs ||
		q->cteList || q->rowMarks || (q->hasAggs && q->groupClause == NIL) ||
		checkExprHasSubLink((Node *) q->targetList))
		return NULL;
	s.q = q;
	s.ok = true;
	/* the grouping expressions first: the state's keys, as the groups' */
	foreach(lc, q->groupClause)
	{
		TargetEntry *tle = get_sortgroupclause_tle(lfirst(lc), q->targetList);

		(void) input_var(&s, (Node *) tle->expr,
						 tle->resjunk || tle->resname == NULL ? "__mt_group" : tle->resname);
	}
	/* (an expression grouped by twice would be one column) */
	if (list_length(s.inputs) != list_length(q->groupClause))
		return NULL;
	top = copyObject(q);
	top->targetList = (List *) window_input_mutator((Node *) top->targetList, &s);
	if (!s.ok || s.inputs == NIL)
		return NULL;

	body = copyObject(q);
	body->targetList = NIL;
	foreach(lc, s.inputs)
	{
		int			i = foreach_current_index(lc);
		TargetEntry *tle = makeTargetEntry(copyObject(lfirst(lc)), i + 1,
										   pstrdup(strVal(list_nth(s.names, i))), false);

		/* (a grouping expression keeps the reference its GROUP BY item has) */
		if (i < list_length(q->groupClause))
			tle->ressortgroupref = ((SortGroupClause *) list_nth(q->groupClause, i))->tleSortGroupRef;
		body->targetList = lappend(body->targetList, tle);
	}
	body->hasWindowFuncs = false;
	body->windowClause = NIL;
	unordered_rows(body);

	read_kept(top, body, list_copy_deep(s.names));
	top->hasAggs = false;
	top->groupClause = NIL;
	top->groupDistinct = false;
	top->havingQual = NULL;
	top->hasSubLinks = false;
	top->constraintDeps = NIL;
	*outer = top;
	return body;
}

static char *
hidden_name(const char *prefix, Oid relid)
{
	return quote_qualified_identifier(MT_INTERNAL_SCHEMA,
									  mt_hidden_name(prefix, mt_catalog_id(relid)));
}

/* Can a B-tree index have a column of this type? */
static bool
indexable(Oid typid)
{
	return OidIsValid(GetDefaultOpClass(typid, BTREE_AM_OID));
}

/*
 * An ORDER BY item over the state's column, as SQL.  An operator that is
 * not the type's default ordering either way is written USING, and
 * *default_ops set false: no index of default operator classes serves it.
 */
static char *
order_item_sql(SortGroupClause *sgc, TargetEntry *tle, bool *default_ops)
{
	Oid			typid = exprType((Node *) tle->expr);
	TypeCacheEntry *tc = lookup_type_cache(typid, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
	const char *nulls = sgc->nulls_first ? "NULLS FIRST" : "NULLS LAST";
	const char *name = quote_identifier(tle->resname);

	if (sgc->sortop == tc->lt_opr)
		return psprintf("%s ASC %s", name, nulls);
	if (sgc->sortop == tc->gt_opr)
		return psprintf("%s DESC %s", name, nulls);
	*default_ops = false;
	return psprintf("%s USING %s %s", name, mt_operator_sql(sgc->sortop), nulls);
}

/*
 * The derived view's pieces: q's result columns, and its ORDER BY, OFFSET
 * and LIMIT over the state's columns (the body's).
 */
static void
prepare_top(MtAnalysis *a, Query *q)
{
	StringInfoData cols;
	StringInfoData order;
	StringInfoData clauses;
	ListCell   *lc;
	bool		default_ops = true;
	bool		indexed = list_length(q->sortClause) <= INDEX_MAX_KEYS;

	initStringInfo(&cols);
	initStringInfo(&order);
	initStringInfo(&clauses);
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst(lc);

		if (!tle->resjunk)
			appendStringInfo(&cols, "%s%s", cols.len ? ", " : "", quote_identifier(tle->resname));
	}
	foreach(lc, q->sortClause)
	{
		SortGroupClause *sgc = lfirst(lc);
		TargetEntry *tle = get_sortgroupclause_tle(sgc, a->body_query->targetList);

		appendStringInfo(&order, "%s%s", order.len ? ", " : "",
						 order_item_sql(sgc, tle, &default_ops));
		indexed = indexed && indexable(exprType((Node *) tle->expr));
	}
	if (order.len)
		appendStringInfo(&clauses, " ORDER BY %s", order.data);
	if (q->limitOffset)
		appendStringInfo(&clauses, " OFFSET (%s)", mt_expression_text(q->limitOffset));
	if (q->limitCount && q->limitOption == LIMIT_OPTION_WITH_TIES)
		appendStringInfo(&clauses, " FETCH FIRST (%s) ROWS WITH TIES",
						 mt_expression_text(q->limitCount));
	else if (q->limitCount)
		appendStringInfo(&clauses, " LIMIT (%s)", mt_expression_text(q->limitCount));
	a->top_columns = cols.data;
	a->top_clauses = clauses.data;
	/* the first rows read in order from an index, when one can serve */
	a->top_index = (order.len && default_ops && indexed) ? order.data : NULL;
}

/* The result column of the state's query of that name, or NULL. */
static TargetEntry *
body_column(MtAnalysis *a, const char *name)
{
	ListCell   *lt;

	foreach(lt, a->body_query->targetList)
		if (!((TargetEntry *) lfirst(lt))->resjunk &&
			strcmp(((TargetEntry *) lfirst(lt))->resname, name) == 0)
			return lfirst(lt);
	return NULL;
}

/*
 * mt_kept_rows_create_objects
 *		The state table (empty: the worker fills it when it takes the table
 *		up) and the derived view of a new table, with an index on the keys
 *		of each source (each cycle replaces the state's rows by them) and
 *		one in the ORDER BY's order (the first rows are read from it).
 */
void
mt_kept_rows_create_objects(Oid relid, MtAnalysis *a)
{
	char	   *state = hidden_name("state_", relid);
	StringInfoData cols;
	StringInfoData keys;
	ListCell   *lc;
	List	   *firsts = NIL;	/* String: the first column of each index */
	MtSavedUser saved;

	initStringInfo(&cols);
	initStringInfo(&keys);
	foreach(lc, a->body_query->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		Node	   *expr = (Node *) tle->expr;

		if (tle->resjunk)
			continue;
		appendStringInfo(&cols, "%s%s %s%s", cols.len ? ", " : "", quote_identifier(tle->resname),
						 mt_type_sql(exprType(expr), exprTypmod(expr)),
						 mt_collate_sql(exprCollation(expr)));
	}

	/* created with the extension owner's rights in its schema, then given away */
	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	mt_spi_exec(psprintf("CREATE TABLE %s (%s)", state, cols.data), SPI_OK_UTILITY);
	/*
	 * an index on the key columns of each source's changes (a cycle
	 * replaces the rows matching any of them), unless one starts alike
	 */
	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);
		ListCell   *lk;

		if (use->full || use->lookup_sql || use->key_columns == NIL ||
			list_member(firsts, linitial(use->key_columns)))
			continue;
		resetStringInfo(&keys);
		foreach(lk, use->key_columns)
		{
			TargetEntry *tle = body_column(a, strVal(lfirst(lk)));

			if (tle == NULL || !indexable(exprType((Node *) tle->expr)))
				break;
			appendStringInfo(&keys, "%s%s", keys.len ? ", " : "", quote_identifier(strVal(lfirst(lk))));
		}
		if (lk != NULL || list_length(use->key_columns) > INDEX_MAX_KEYS)
			continue;
		firsts = lappend(firsts, linitial(use->key_columns));
		mt_spi_exec(psprintf("CREATE INDEX ON %s (%s)", state, keys.data), SPI_OK_UTILITY);
	}
	if (a->top_index)
		mt_spi_exec(psprintf("CREATE INDEX ON %s (%s)", state, a->top_index), SPI_OK_UTILITY);
	/* the rows of the groups a cycle rewrites are read from it */
	if (a->group_columns != NIL && list_length(a->group_columns) <= INDEX_MAX_KEYS &&
		!list_member(firsts, makeString(linitial(a->group_columns))))
	{
		resetStringInfo(&keys);
		foreach(lc, a->group_columns)
		{
			TargetEntry *tle = body_column(a, lfirst(lc));

			if (tle == NULL || !indexable(exprType((Node *) tle->expr)))
				break;
			appendStringInfo(&keys, "%s%s", keys.len ? ", " : "", quote_identifier(lfirst(lc)));
		}
		if (lc == NULL)
			mt_spi_exec(psprintf("CREATE INDEX ON %s (%s)", state, keys.data), SPI_OK_UTILITY);
	}
	CommandCounterIncrement();
	/* as its reader, the table's owner: it may read the query's sources too */
	mt_spi_exec(psprintf("CREATE VIEW %s WITH (security_invoker = true) AS %s", hidden_name("derived_", relid),
						 a->outer_query ?
						 outer_sql(a, mt_hidden_relid("state_", relid)) :
						 psprintf("SELECT %s FROM %s%s", a->top_columns, state, a->top_clauses)),
				SPI_OK_UTILITY);
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	CommandCounterIncrement();

	mt_hidden_part_of(mt_hidden_relid("state_", relid), relid);
	mt_grant_hidden_object(relid, mt_hidden_relid("state_", relid), true);
	mt_hidden_part_of(mt_hidden_relid("derived_", relid), relid);
	mt_grant_hidden_object(relid, mt_hidden_relid("derived_", relid), false);
	CommandCounterIncrement();
}

/* a state of more rows is rebuilt without holding them in memory */
#define MAX_PARALLEL_ROWS		1000000

/*
 * Rebuild the whole state by a query that may run in parallel, as REFRESH
 * MATERIALIZED VIEW's does (an INSERT ... SELECT may not), its rows then
 * inserted?  Not for one of more than MAX_PARALLEL_ROWS rows, nor with a
 * column of a type without an array type (the rows travel in arrays).
 */
static bool
parallel_rebuild(Oid stateid, TupleDesc desc)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(stateid));
	bool		parallel = true;

	if (HeapTupleIsValid(tup))
	{
		parallel = ((Form_pg_class) GETSTRUCT(tup))->reltuples < MAX_PARALLEL_ROWS;
		ReleaseSysCache(tup);
	}
	for (int c = 0; c < desc->natts; c++)
		if (!OidIsValid(get_array_type(TupleDescAttr(desc, c)->atttypid)))
			parallel = false;
	return parallel;
}

typedef struct GroupsSeen
{
	HTAB	   *seen;			/* MtStringKey entries */
	List	   *groups;			/* char **, each group once */
	MemoryContext cxt;
} GroupsSeen;

/* The groups of the state's rows a statement returned, kept once each. */
static void
note_groups(GroupsSeen *g, int ncols)
{
	MemoryContext old = MemoryContextSwitchTo(g->cxt);

	if (g->seen == NULL)
		g->seen = mt_string_key_create("materialized_table kept groups", 64,
									   sizeof(MtStringKey), g->cxt);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		char	  **values = palloc(sizeof(char *) * ncols);
		MtStringKey probe = {0, ncols, values};
		bool		found;

		for (int c = 0; c < ncols; c++)
			values[c] = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, c + 1);
		(void) hash_search(g->seen, &probe, HASH_ENTER, &found);
		if (!found)
			g->groups = lappend(g->groups, values);
		else
			pfree(values);
	}
	MemoryContextSwitchTo(old);
}

/*
 * Can the planner join a filter's keys into the state's query anywhere?
 * Not into a level it must compute whole first (an aggregate: TPC-H Q13's
 * orders per customer), where a plain "col = ANY ($1)" is pushed down.
 */
static bool
joinable_body(Query *body)
{
	return body != NULL && !mt_query_computed_whole(body);
}

/* values of a filter column past which the filter may be joined instead */
#define MANY_KEY_VALUES		64

/*
 * The state's query of the rows the filter names.  Of many keys, with
 * "col = ANY ($1)" the planner probes an index of the column's own table
 * once per value, where the keys joined to the query could reach a table
 * that the column equals and its own conditions keep few rows of (TPC-H
 * Q17: 5,000 parts of changed lines, 20 of which pass its brand and
 * container); elsewhere (Q21's orders) the plain filter is cheaper.  The
 * planner's estimates of both, with the filter's values, choose.  (stateid:
 * the state, whose columns the filter names.)
 */
static char *
rows_sql(MtAnalysis *a, Oid stateid, List *filter, TupleDesc desc, Oid *argtypes,
		 int nparams, ParamListInfo params)
{
	const char *pushed = mt_keys_pushed_sql(a, filter, stateid);
	char	   *select = psprintf("SELECT * FROM (%s) r", pushed ? pushed : a->body_sql);
	char	   *plain = mt_filter_select(select, filter, "r", desc, argtypes);
	char	   *joined;
	bool		many = false;
	ListCell   *lf;
	ListCell   *lc;

	foreach(lf, filter)
		foreach(lc, ((MtFilterFamily *) lfirst(lf))->columns)
			many |= list_length(((MtFilterColumn *) lfirst(lc))->values) > MANY_KEY_VALUES;
	if (!many || !joinable_body(a->body_query))
		return plain;
	joined = mt_filter_select_joined(select, filter, "r", desc, argtypes);
	if (mt_estimated_cost(joined, nparams, argtypes, params) <
		mt_estimated_cost(plain, nparams, argtypes, params))
		return joined;
	return plain;
}

/*
 * mt_kept_rows_refresh
 *		Replace the state's rows of the keys the filter names (NIL: all of
 *		them) with the query's, as the table's owner, then the table's rows
 *		with the state's first ones, or, of a query grouped over the state,
 *		the rows of the groups the replaced rows are in.  Returns what was
 *		written to the table.
 */
MtRefreshCounts
mt_kept_rows_refresh(Oid relid, MtAnalysis *a, List *filter)
{
	Oid			stateid = mt_hidden_relid("state_", relid);
	char	   *state;
	Relation	rel;
	TupleDesc	desc;
	Oid		   *argtypes;
	Datum	   *values;
	ParamListInfo params;
	int			nparams;
	char	   *where_state = "";
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;
	MtRefreshRequest req = {0};
	bool		by_groups;
	const char *returning = "";
	GroupsSeen	groups = {NULL, NIL, CurrentMemoryContext};

	if (!OidIsValid(stateid))
	{
		mt_kept_rows_create_objects(relid, a);
		stateid = mt_hidden_relid("state_", relid);
		filter = NIL;
	}
	state = hidden_name("state_", relid);
	by_groups = filter != NIL && a->group_columns != NIL;
	if (by_groups)
	{
		StringInfoData cols;
		ListCell   *lc;

		initStringInfo(&cols);
		foreach(lc, a->group_columns)
			appendStringInfo(&cols, "%ss.%s", cols.len ? ", " : "", quote_identifier(lfirst(lc)));
		returning = psprintf(" RETURNING %s", cols.data);
	}
	rel = table_open(stateid, AccessShareLock);
	desc = CreateTupleDescCopy(RelationGetDescr(rel));
	table_close(rel, AccessShareLock);

	/* reading the filter's values runs their types' input (a domain's checks) */
	mt_run_as_owner_begin(a->owner, &save_userid, &save_sec, &save_nestlevel);
	nparams = mt_filter_params(filter, desc, &argtypes, &values, &params);
	if (filter != NIL)
	{
		where_state = psprintf(" WHERE %s", mt_filter_condition(filter, "s", desc, argtypes, 0));
		mt_favour_index_lookups();
	}
	SPI_connect();
	MT_INTERNAL_BEGIN();
	if (SPI_execute_with_args(psprintf("DELETE FROM %s s%s%s", state, where_state, returning),
							  nparams, argtypes, values, NULL, false, 0) !=
		(by_groups ? SPI_OK_DELETE_RETURNING : SPI_OK_DELETE))
		elog(ERROR, "could not replace the rows of the state of \"%s\"", get_rel_name(relid));
	if (by_groups)
		note_groups(&groups, list_length(a->group_columns));
	if (filter == NIL && parallel_rebuild(stateid, desc))
	{
		/* all of them: read by a query that may run in parallel */
		SPIPlanPtr	plan = SPI_prepare_cursor(psprintf("SELECT * FROM (%s) r", a->body_sql),
											  0, NULL, CURSOR_OPT_PARALLEL_OK);
		SPIExecuteOptions options = {0};

		if (plan == NULL || SPI_execute_plan_extended(plan, &options) != SPI_OK_SELECT)
			elog(ERROR, "could not compute the state of \"%s\"", get_rel_name(relid));
		mt_spi_insert_result(state);
	}
	else if (SPI_execute_with_args(psprintf("INSERT INTO %s AS s %s%s", state,
											rows_sql(a, stateid, filter, desc, argtypes, nparams, params),
											returning),
								   nparams, argtypes, values, NULL, false, 0) !=
			 (by_groups ? SPI_OK_INSERT_RETURNING : SPI_OK_INSERT))
		elog(ERROR, "could not replace the rows of the state of \"%s\"", get_rel_name(relid));
	if (by_groups)
		note_groups(&groups, list_length(a->group_columns));
	MT_INTERNAL_END();
	SPI_finish();
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
	CommandCounterIncrement();

	req.relid = relid;
	req.source_view = mt_hidden_relid("derived_", relid);
	if (by_groups)
	{
		MtRefreshCounts none = {0};

		/* no row of the state changed: neither did a group */
		if (groups.groups == NIL)
			return none;
		req.filter = mt_filter_of_keys(a->group_results, groups.groups);
		req.by_key = a->group_is_key;
	}
	return mt_refresh_rows(&req);
}
