/*-------------------------------------------------------------------------
 *
 * src/refresh/partials.c
 *	  A CONTINUOUS table of the coordinator that aggregates distributed
 *	  sources, not co-located with them: kept from partial aggregates that
 *	  the worker nodes keep per shard.
 *
 * The changes of a shard are decoded on its node only.  So the table's
 * aggregates are split, as Citus itself splits them: each shard of the
 * sources gets a materialized table of its node holding that shard's
 * partial aggregates per group (count, sum, min, max; avg as a sum and a
 * count), kept by that node's worker from that node's slot, incrementally
 * wherever the node can (commands/shard_partials.c).  Twice a second the
 * coordinator's worker asks every node for the partial rows, combined by
 * group, of the groups that changed there since its last pass
 * (mt_partials_follow; the node logs them, continuous/partial_log.c),
 * puts them in a hidden table here in place of that node's rows of those
 * groups (refresh/partial_rows.c), and rewrites the table's rows of those
 * groups from the query over it (a hidden view): a pass costs the groups
 * that changed, not the sources nor all the groups.
 *
 * This is right when each shard's partial rows come from its own shards
 * alone: the sources are co-located distributed tables and reference
 * tables, and Citus pushes the query down to the shards once it is also
 * grouped by a source's distribution column.  Anything else is refused
 * when the table is created.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/pg_am.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parsetree.h"
#include "parser/parse_func.h"
#include "parser/parse_oper.h"
#include "parser/parser.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/freshness.h"
#include "mt/catalog/hidden_objects.h"
#include "mt/catalog/history.h"
#include "mt/catalog/marker.h"
#include "mt/refresh/partial_rows.h"
#include "mt/refresh/partials.h"
#include "mt/refresh/refresh.h"
#include "mt/utils/citus.h"
#include "mt/utils/extension.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/relations.h"
#include "mt/utils/sql.h"
#include "mt/utils/subxact.h"

/* an aggregate of the query, and where its partial results are */
typedef struct PartialAgg
{
	Aggref	   *agg;
	const char *name;			/* count, sum, avg, min or max */
	int			first;			/* its first partial column (p<first>) */
} PartialAgg;

typedef struct PartialPlan
{
	Query	   *partial;		/* each shard's query, over the shells */
	List	   *kinds;			/* String per partial column: how partials
								 * combine (group, sum, min, max) */
	List	   *coldefs;		/* char *: each partial column's definition */
	List	   *aggs;			/* PartialAgg */
	List	   *groups;			/* Expr: the query's group expressions */
	Oid			source;			/* a distributed source: its shards index
								 * the partial tables */
	int			source_rtindex;
	const char *why;			/* why not, when partial is NULL */
} PartialPlan;

static char *
column_sql(const char *name, Oid type, int32 typmod, Oid collation)
{
	char	   *sql = psprintf("%s %s", quote_identifier(name), mt_type_sql(type, typmod));

	if (OidIsValid(collation))
	{
		HeapTuple	tup = SearchSysCache1(COLLOID, ObjectIdGetDatum(collation));
		Form_pg_collation coll;

		if (!HeapTupleIsValid(tup))
			elog(ERROR, "cache lookup failed for collation %u", collation);
		coll = (Form_pg_collation) GETSTRUCT(tup);
		sql = psprintf("%s COLLATE %s", sql,
					   quote_qualified_identifier(get_namespace_name(coll->collnamespace),
												  NameStr(coll->collname)));
		ReleaseSysCache(tup);
	}
	return sql;
}

typedef struct AggWalk
{
	List	   *aggs;			/* Aggref, each once */
	bool		other;			/* a GroupingFunc or a nested level */
} AggWalk;

static bool
collect_aggs(Node *node, AggWalk *w)
{
	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		if (((Aggref *) node)->agglevelsup != 0)
			w->other = true;
		else if (!list_member(w->aggs, node))
			w->aggs = lappend(w->aggs, node);
		return false;
	}
	if (IsA(node, GroupingFunc))
		w->other = true;
	return expression_tree_walker(node, collect_aggs, w);
}

/* The name of an aggregate whose partial results combine, or NULL. */
static const char *
combinable(Aggref *agg)
{
	char	   *name = get_func_name(agg->aggfnoid);
	Oid			argtype = agg->aggargtypes ? linitial_oid(agg->aggargtypes) : InvalidOid;

	if (get_func_namespace(agg->aggfnoid) != PG_CATALOG_NAMESPACE ||
		agg->aggdistinct != NIL || agg->aggorder != NIL || agg->aggkind != AGGKIND_NORMAL ||
		agg->aggdirectargs != NIL || list_length(agg->args) > 1)
		return NULL;
	if (strcmp(name, "count") == 0)
		return "count";
	/* (float sums depend on the order of their terms) */
	if (strcmp(name, "sum") == 0 &&
		(argtype == INT2OID || argtype == INT4OID || argtype == INT8OID ||
		 argtype == NUMERICOID || argtype == INTERVALOID || argtype == CASHOID))
		return "sum";
	if (strcmp(name, "avg") == 0 &&
		(argtype == INT2OID || argtype == INT4OID || argtype == INT8OID || argtype == NUMERICOID))
		return "avg";
	if (strcmp(name, "min") == 0 || strcmp(name, "max") == 0)
		return strcmp(name, "min") == 0 ? "min" : "max";
	return NULL;
}

/* A copy of agg as pg_catalog.<name>(its argument). */
static Aggref *
partial_agg(Aggref *agg, const char *name)
{
	Aggref	   *a = copyObject(agg);
	Oid			argtype = strcmp(name, "count") == 0 ? ANYOID : linitial_oid(agg->aggargtypes);

	a->aggfnoid = LookupFuncName(list_make2(makeString("pg_catalog"), makeString(pstrdup(name))),
								 1, &argtype, false);
	a->aggtype = get_func_rettype(a->aggfnoid);
	a->aggcollid = InvalidOid;
	return a;
}

static void
add_column(PartialPlan *plan, Query *p, Expr *expr, const char *name, const char *kind,
		   Index sortgroupref)
{
	TargetEntry *tle = makeTargetEntry(expr, list_length(p->targetList) + 1, pstrdup(name), false);

	tle->ressortgroupref = sortgroupref;
	p->targetList = lappend(p->targetList, tle);
	plan->kinds = lappend(plan->kinds, makeString(pstrdup(kind)));
	plan->coldefs = lappend(plan->coldefs,
							column_sql(name, exprType((Node *) expr), exprTypmod((Node *) expr),
									   exprCollation((Node *) expr)));
}

/* Does this part of the FROM clause read a hash-distributed table? */
static bool
reads_distributed(Query *q, Node *node)
{
	if (IsA(node, RangeTblRef))
	{
		RangeTblEntry *rte = rt_fetch(((RangeTblRef *) node)->rtindex, q->rtable);

		return rte->rtekind == RTE_RELATION &&
			mt_citus_table_kind(rte->relid) == MT_CITUS_DISTRIBUTED;
	}
	if (IsA(node, JoinExpr))
		return reads_distributed(q, ((JoinExpr *) node)->larg) ||
			reads_distributed(q, ((JoinExpr *) node)->rarg);
	if (IsA(node, FromExpr))
	{
		ListCell   *lc;

		foreach(lc, ((FromExpr *) node)->fromlist)
			if (reads_distributed(q, lfirst(lc)))
				return true;
	}
	return false;
}

/*
 * Is every side an outer join keeps whole split by shards?  A reference
 * table kept whole would have its unmatched rows once per shard.
 */
static bool
preserved_sides_sharded(Query *q, Node *node)
{
	if (IsA(node, JoinExpr))
	{
		JoinExpr   *j = (JoinExpr *) node;

		if ((j->jointype == JOIN_LEFT || j->jointype == JOIN_FULL) && !reads_distributed(q, j->larg))
			return false;
		if ((j->jointype == JOIN_RIGHT || j->jointype == JOIN_FULL) && !reads_distributed(q, j->rarg))
			return false;
		return preserved_sides_sharded(q, j->larg) && preserved_sides_sharded(q, j->rarg);
	}
	if (IsA(node, FromExpr))
	{
		ListCell   *lc;

		foreach(lc, ((FromExpr *) node)->fromlist)
			if (!preserved_sides_sharded(q, lfirst(lc)))
				return false;
	}
	return true;
}

/*
 * The partial plan of a query, or one whose why says why it has none.
 * (Citus's judgement whether it runs shard by shard is pushdown_problem's.)
 */
static PartialPlan *
plan_partials(Query *q, Oid view)
{
	PartialPlan *plan = palloc0(sizeof(PartialPlan));
	AggWalk		w = {NIL, false};
	Query	   *p;
	ListCell   *lc;
	int			colocation = 0;
	int			col = 0;

	if (q->commandType != CMD_SELECT || q->setOperations || q->cteList || !q->hasAggs ||
		q->hasWindowFuncs || q->hasTargetSRFs || q->hasSubLinks || q->distinctClause ||
		q->groupingSets || q->limitCount || q->limitOffset || q->rowMarks)
	{
		plan->why = "Its query is not one aggregate of joined tables: subqueries, windows, DISTINCT, grouping sets and LIMIT are not combined from the shards.";
		return plan;
	}
	foreach(lc, q->rtable)
	{
		RangeTblEntry *rte = lfirst(lc);
		MtCitusKind kind;

		/* (and the view's own OLD and NEW) */
		if (rte->rtekind == RTE_JOIN || (rte->rtekind == RTE_RELATION && rte->relid == view))
			continue;
		if (rte->rtekind != RTE_RELATION || rte->relkind == RELKIND_VIEW ||
			rte->relkind == RELKIND_MATVIEW || mt_is_materialized_table(rte->relid))
		{
			plan->why = "Its query reads something other than tables (a view, a function, a subquery or a materialized table).";
			return plan;
		}
		kind = mt_citus_table_kind(rte->relid);
		if (kind == MT_CITUS_REFERENCE)
			continue;
		if (kind != MT_CITUS_DISTRIBUTED)
		{
			plan->why = psprintf("Its query reads \"%s\", which is neither a hash-distributed nor a reference table.",
								 get_rel_name(rte->relid));
			return plan;
		}
		if (!OidIsValid(plan->source))
		{
			plan->source = rte->relid;
			plan->source_rtindex = foreach_current_index(lc) + 1;
			colocation = mt_citus_colocation_id(rte->relid);
		}
		else if (mt_citus_colocation_id(rte->relid) != colocation)
		{
			plan->why = psprintf("Its query reads \"%s\" and \"%s\", which are not co-located.",
								 get_rel_name(plan->source), get_rel_name(rte->relid));
			return plan;
		}
	}
	if (!OidIsValid(plan->source))
	{
		plan->why = "Its query reads reference tables only, whose every node holds all of their rows.";
		return plan;
	}

	if (!preserved_sides_sharded(q, (Node *) q->jointree))
	{
		plan->why = "An outer join of its query keeps the rows of reference tables alone, which every shard would keep.";
		return plan;
	}

	(void) collect_aggs((Node *) q->targetList, &w);
	(void) collect_aggs(q->havingQual, &w);
	if (w.other)
	{
		plan->why = "Its query uses GROUPING() or an aggregate of an outer level.";
		return plan;
	}

	/* each shard's: the group columns, then the partial aggregates */
	p = copyObject(q);
	p->targetList = NIL;
	p->havingQual = NULL;
	p->sortClause = NIL;
	foreach(lc, q->groupClause)
	{
		TargetEntry *tle = get_sortgroupclause_tle(lfirst(lc), q->targetList);

		plan->groups = lappend(plan->groups, copyObject(tle->expr));
		add_column(plan, p, copyObject(tle->expr), psprintf("g%d", list_length(plan->groups)),
				   "group", tle->ressortgroupref);
	}
	foreach(lc, w.aggs)
	{
		PartialAgg *pa = palloc0(sizeof(PartialAgg));

		pa->agg = lfirst(lc);
		pa->name = combinable(pa->agg);
		if (pa->name == NULL)
		{
			plan->why = psprintf("Its aggregate %s%s cannot be combined from the partial results of the shards (count, sum and avg of exact types, min and max can).",
								 get_func_name(pa->agg->aggfnoid),
								 pa->agg->aggdistinct ? " with DISTINCT" :
								 pa->agg->aggorder ? " with ORDER BY" : "");
			return plan;
		}
		pa->first = ++col;
		if (strcmp(pa->name, "avg") == 0)
		{
			add_column(plan, p, (Expr *) partial_agg(pa->agg, "sum"), psprintf("p%d", col), "sum", 0);
			add_column(plan, p, (Expr *) partial_agg(pa->agg, "count"), psprintf("p%d", ++col), "sum", 0);
		}
		else
			add_column(plan, p, (Expr *) copyObject(pa->agg), psprintf("p%d", col),
					   strcmp(pa->name, "count") == 0 ? "sum" : pa->name, 0);
		plan->aggs = lappend(plan->aggs, pa);
	}
	plan->partial = p;
	return plan;
}

/*
 * Does Citus run the partial query shard by shard?  Asked of it grouped
 * by the source's distribution column too: then each task must be one
 * shard group's, with nothing computed on the coordinator.  NULL if so,
 * else why not.
 */
static char *
pushdown_problem(PartialPlan *plan)
{
	Query	   *p = copyObject(plan->partial);
	RangeTblEntry *rte = rt_fetch(plan->source_rtindex, p->rtable);
	int			shard_count;
	char	   *column = mt_citus_distribution_column(plan->source, &shard_count);
	AttrNumber	attnum = get_attnum(plan->source, column);
	Oid			type;
	int32		typmod;
	Oid			collation;
	Var		   *var;
	TargetEntry *tle;
	SortGroupClause *sgc = makeNode(SortGroupClause);
	Index		ref = 0;
	ListCell   *lc;
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	char	   *problem = NULL;
	int			nestlevel;

	get_atttypetypmodcoll(rte->relid, attnum, &type, &typmod, &collation);
	var = makeVar(plan->source_rtindex, attnum, type, typmod, collation, 0);
	foreach(lc, p->targetList)
		ref = Max(ref, ((TargetEntry *) lfirst(lc))->ressortgroupref);
	tle = makeTargetEntry((Expr *) var, list_length(p->targetList) + 1, "d", false);
	tle->ressortgroupref = ++ref;
	p->targetList = lappend(p->targetList, tle);
	sgc->tleSortGroupRef = ref;
	get_sort_group_operators(type, true, true, false, &sgc->sortop, &sgc->eqop, NULL,
							 &sgc->hashable);
	p->groupClause = lappend(p->groupClause, sgc);

	nestlevel = NewGUCNestLevel();
	(void) set_config_option("citus.explain_distributed_queries", "off", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	BeginInternalSubTransaction(NULL);
	PG_TRY();
	{
		uint64		i;

		SPI_connect();
		if (SPI_execute(psprintf("EXPLAIN (COSTS OFF) %s", mt_query_text(p)), false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not explain the partial aggregates");
		for (i = 0; i < SPI_processed && problem == NULL; i++)
		{
			char	   *line = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

			if (line == NULL ||
				(i == 0 && strncmp(line, "Custom Scan (Citus", strlen("Custom Scan (Citus")) != 0) ||
				strstr(line, "Subplan") != NULL || strstr(line, "Repartition") != NULL ||
				strstr(line, "MapMergeJob") != NULL)
				problem = MemoryContextStrdup(caller,
											  "Citus would not run its aggregates shard by shard: the sources are not joined by their distribution columns.");
		}
		SPI_finish();
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(caller);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		problem = psprintf("Citus would not run its aggregates shard by shard: %s", edata->message);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(caller);
	CurrentResourceOwner = owner;
	AtEOXact_GUC(true, nestlevel);
	return problem;
}

typedef struct FinalContext
{
	List	   *groups;			/* the query's group expressions */
	List	   *group_vars;		/* Var of the hidden table, for each */
	List	   *aggs;			/* PartialAgg */
	List	   *combined;		/* Expr combining each's partials */
	bool		ungrouped;		/* a column outside groups and aggregates */
} FinalContext;

static Node *
to_final(Node *node, FinalContext *cx)
{
	ListCell   *lc;

	if (node == NULL)
		return NULL;
	foreach(lc, cx->groups)
		if (equal(node, lfirst(lc)))
			return copyObject(list_nth(cx->group_vars, foreach_current_index(lc)));
	if (IsA(node, Aggref))
	{
		foreach(lc, cx->aggs)
			if (equal(node, ((PartialAgg *) lfirst(lc))->agg))
				return copyObject(list_nth(cx->combined, foreach_current_index(lc)));
		cx->ungrouped = true;
		return node;
	}
	if (IsA(node, Var))
		cx->ungrouped = true;
	return expression_tree_mutator(node, to_final, cx);
}

/* How the partials of pa combine into its value, as SQL over s. */
static char *
combine_sql(PartialAgg *pa)
{
	char	   *type = format_type_be_qualified(pa->agg->aggtype);

	if (strcmp(pa->name, "count") == 0 || strcmp(pa->name, "sum") == 0)
		return psprintf("pg_catalog.sum(s.p%d)::%s", pa->first, type);
	if (strcmp(pa->name, "avg") == 0)
		return psprintf("(CASE WHEN pg_catalog.sum(s.p%d) OPERATOR(pg_catalog.>) 0::pg_catalog.numeric"
						" THEN pg_catalog.sum(s.p%d)::pg_catalog.numeric OPERATOR(pg_catalog./)"
						" pg_catalog.sum(s.p%d)::pg_catalog.numeric END)::%s",
						pa->first + 1, pa->first, pa->first + 1, type);
	return psprintf("pg_catalog.%s(s.p%d)", pa->name, pa->first);
}

/*
 * The query over the hidden table of combined partial rows: the original
 * query's result columns, each group expression become its column, each
 * aggregate its partials combined; NULL if a result column is neither.
 */
static char *
final_sql(PartialPlan *plan, Query *q, const char *staging)
{
	StringInfoData sql;
	StringInfoData groups;
	FinalContext cx = {0};
	Query	   *c;
	List	   *tlist = NIL;
	ListCell   *lc;
	int			nestlevel;
	int			ngroups = list_length(plan->groups);

	initStringInfo(&sql);
	initStringInfo(&groups);
	appendStringInfoString(&sql, "SELECT ");
	foreach(lc, plan->aggs)
		appendStringInfo(&sql, "%s, ", combine_sql(lfirst(lc)));
	for (int i = 1; i <= ngroups; i++)
	{
		appendStringInfo(&sql, "s.g%d, ", i);
		appendStringInfo(&groups, "%ss.g%d", groups.len ? ", " : " GROUP BY ", i);
	}
	appendStringInfo(&sql, "true FROM %s s%s", staging, groups.data);

	nestlevel = mt_pin_search_path();
	c = parse_analyze_fixedparams(linitial_node(RawStmt, raw_parser(sql.data, RAW_PARSE_DEFAULT)),
								  sql.data, NULL, 0, NULL);
	mt_unpin_search_path(nestlevel);

	cx.groups = plan->groups;
	cx.aggs = plan->aggs;
	foreach(lc, c->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		int			i = foreach_current_index(lc);

		if (i < list_length(plan->aggs))
			cx.combined = lappend(cx.combined, tle->expr);
		else if (i < list_length(plan->aggs) + ngroups)
			cx.group_vars = lappend(cx.group_vars, tle->expr);
	}
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst(lc);

		if (tle->resjunk)
			continue;
		tlist = lappend(tlist, makeTargetEntry((Expr *) to_final((Node *) tle->expr, &cx),
											   list_length(tlist) + 1, tle->resname, false));
	}
	/* the group columns, for GROUP BY */
	foreach(lc, c->targetList)
	{
		TargetEntry *tle = copyObject(lfirst(lc));

		if (tle->ressortgroupref == 0)
			continue;
		tle->resno = list_length(tlist) + 1;
		tle->resjunk = true;
		tlist = lappend(tlist, tle);
	}
	c->targetList = tlist;
	c->havingQual = to_final(q->havingQual, &cx);
	if (cx.ungrouped)
		return NULL;
	return mt_query_text(c);
}


static void
refuse(Oid relid, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("materialized table \"%s\" of the coordinator cannot follow its Citus sources in CONTINUOUS refresh mode",
					get_rel_name(relid)),
			 errdetail("The changes of shards are decoded on the nodes that hold them, so such a table is kept from partial aggregates of each shard, combined here. %s",
					   why),
			 errhint("Distribute the materialized table by its sources' distribution column (DISTRIBUTED BY HASH), or use REFRESH_MODE = FULL.")));
}

static List *group_columns(MtTable *mt, Query *q, PartialPlan *plan);

/* Can the group expressions be indexed (a btree opclass for each)? */
static bool
indexable(List *groups)
{
	ListCell   *lc;

	foreach(lc, groups)
		if (!OidIsValid(GetDefaultOpClass(exprType(lfirst(lc)), BTREE_AM_OID)))
			return false;
	return groups != NIL;
}

bool
mt_partials_on_nodes(MtTable *mt)
{
	return mt->refresh_mode == MT_MODE_CONTINUOUS &&
		OidIsValid(mt_hidden_relid("partials_", mt->relid));
}

/* Does node read a column outside the group expressions and aggregates? */
static bool
ungrouped(Node *node, List *groups)
{
	if (node == NULL)
		return false;
	if (list_member(groups, node) || IsA(node, Aggref))
		return false;
	if (IsA(node, Var))
		return true;
	return expression_tree_walker(node, ungrouped, groups);
}

char *
mt_partials_unfit(MtTable *mt)
{
	Query	   *q = mt_view_query(mt->query_view);
	PartialPlan *plan = plan_partials(q, mt->query_view);

	if (plan->partial == NULL)
		return (char *) plan->why;
	/* (a column grouped by the primary key of its table: see final_sql) */
	if (ungrouped((Node *) q->targetList, plan->groups))
		return "A result column reads a column that is neither grouped by nor aggregated.";
	return pushdown_problem(plan);
}

char *
mt_partials_prepare(MtTable *mt)
{
	Query	   *q = mt_view_query(mt->query_view);
	PartialPlan *plan = plan_partials(q, mt->query_view);
	char	   *staging = mt_partials_hidden_name(mt->relid, "partials_");
	char	   *combined = mt_partials_hidden_name(mt->relid, "combined_");
	char	   *problem;
	char	   *final;
	int			nestlevel;
	StringInfoData cols;
	ListCell   *lc;
	MtSavedUser saved;
	ObjectAddress table;
	ObjectAddress part;
	List	   *columns;

	if (plan->partial == NULL)
		refuse(mt->relid, plan->why);
	if ((problem = pushdown_problem(plan)) != NULL)
		refuse(mt->relid, problem);

	initStringInfo(&cols);
	foreach(lc, plan->coldefs)
		appendStringInfo(&cols, "%s%s", cols.len ? ", " : "", (char *) lfirst(lc));
	/* the group of the node each row comes from (its rows are replaced together) */
	appendStringInfoString(&cols, ", __mt_node integer NOT NULL");
	/* created with the extension owner's rights in its schema */
	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	/* rewritten at every pass: not worth the WAL */
	mt_spi_exec(psprintf("CREATE UNLOGGED TABLE %s (%s)", staging, cols.data), SPI_OK_UTILITY);
	CommandCounterIncrement();
	/* a pass replaces the rows of the groups that changed: found by them */
	if (indexable(plan->groups))
		mt_ensure_index_on(mt_hidden_relid("partials_", mt->relid),
						   mt_partials_staging_groups(list_length(plan->groups)));
	final = final_sql(plan, q, staging);
	if (final == NULL)
	{
		SPI_finish();
		refuse(mt->relid, "A result column reads a column that is neither grouped by nor aggregated.");
	}
	/* the coordinator's alone: not for Citus to create on the nodes */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("citus.enable_ddl_propagation", "off", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	mt_spi_exec(psprintf("CREATE VIEW %s AS %s", combined, final), SPI_OK_UTILITY);
	AtEOXact_GUC(true, nestlevel);
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	CommandCounterIncrement();

	ObjectAddressSet(table, RelationRelationId, mt->relid);
	ObjectAddressSet(part, RelationRelationId, mt_hidden_relid("partials_", mt->relid));
	recordDependencyOn(&part, &table, DEPENDENCY_INTERNAL);
	/* written by the owner: reading the nodes' rows runs its domains' checks */
	mt_grant_hidden_object(mt->relid, part.objectId, true);
	ObjectAddressSet(part, RelationRelationId, mt_hidden_relid("combined_", mt->relid));
	recordDependencyOn(&part, &table, DEPENDENCY_INTERNAL);
	mt_grant_hidden_object(mt->relid, part.objectId, false);
	CommandCounterIncrement();

	/* ... and so are the table's rows */
	columns = group_columns(mt, q, plan);
	if (columns != NIL && indexable(plan->groups))
		mt_ensure_index_on(mt->relid, columns);

	return psprintf("partial aggregates of each shard of %s are kept on its worker node, from that node's slot, "
					"and combined here by group twice a second",
					get_rel_name(plan->source));
}

/*
 * The ids of the tables whose nodes keep tables for them in this database,
 * "<id>;<id>...": those with a hidden table partials_<id>, and those the
 * nodes send the keys of (forwarded_table), as committed.
 */
char *
mt_partials_live_tables(void)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(mt_internal_namespace())};
	char	   *ids = NULL;

	SPI_connect();
	if (mt_spi_execute_saved("SELECT pg_catalog.string_agg(id, ';') FROM ("
							 "SELECT pg_catalog.substr(c.relname::pg_catalog.text, 10) AS id"
							 "  FROM pg_catalog.pg_class c"
							 " WHERE c.relnamespace OPERATOR(pg_catalog.=) $1"
							 "   AND c.relkind OPERATOR(pg_catalog.=) 'r'"
							 "   AND c.relname::pg_catalog.text OPERATOR(pg_catalog.~) '^partials_[0-9]+$'"
							 " UNION ALL "
							 "SELECT t.id::pg_catalog.text FROM materialized_table_internal.mt_table t"
							 "  JOIN materialized_table_internal.forwarded_table f"
							 "    ON f.relid OPERATOR(pg_catalog.=) t.relid::pg_catalog.oid) ids",
							 1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the tables kept from partial aggregates");
	if (SPI_processed == 1)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (v != NULL)
			ids = strcpy(SPI_palloc(strlen(v) + 1), v);
	}
	SPI_finish();
	return ids ? ids : "";
}

/*
 * The SQL a node runs for the table (an empty definition drops its
 * partials); known: the change markers of the rows already combined.
 */
static char *
follow_command(MtTable *mt, PartialPlan *plan, bool drop, List *known)
{
	StringInfoData kinds;
	StringInfoData markers;
	ListCell   *lc;

	initStringInfo(&kinds);
	initStringInfo(&markers);
	foreach(lc, plan ? plan->kinds : NIL)
		appendStringInfo(&kinds, "%s%s", kinds.len ? "," : "", strVal(lfirst(lc)));
	/* (a marker is digits, letters, ':', ';' and '@': nothing to quote) */
	foreach(lc, known)
		appendStringInfo(&markers, "%s%s", markers.len ? "," : "", (char *) lfirst(lc));
	/* the tables kept so here: a node drops the partial tables of others */
	if (known != NIL)
		appendStringInfo(&markers, ",live:%s", mt_partials_live_tables());
	return psprintf("SELECT materialized_table_internal.follow_partials(" INT64_FORMAT ", %s, %s::pg_catalog.regclass, "
					"%s, %s, %s::pg_catalog.text[], %s, %s, %s::pg_catalog.text[])",
					mt_catalog_id(mt->relid),
					quote_literal_cstr(get_namespace_name(get_rel_namespace(mt->relid))),
					quote_literal_cstr(drop ? "pg_catalog.pg_class" : mt_qualified_name(plan->source)),
					quote_literal_cstr(GetUserNameFromId(mt_table_owner(mt->relid), false)),
					quote_literal_cstr(drop ? "" : mt_query_text(plan->partial)),
					quote_literal_cstr(psprintf("{%s}", kinds.data)),
					quote_literal_cstr(mt_freshness_text(mt->freshness_value, mt->freshness_unit)),
					mt->status == MT_STATUS_SUSPENDED ? "true" : "false",
					quote_literal_cstr(psprintf("{%s}", markers.data)));
}


/*
 * The table's columns that show the query's group expressions (NIL if one
 * is not shown as it is): the changed groups' rows are found by them.
 */
static List *
group_columns(MtTable *mt, Query *q, PartialPlan *plan)
{
	List	   *columns = NIL;
	ListCell   *lg;

	foreach(lg, plan->groups)
	{
		ListCell   *lc;
		char	   *name = NULL;

		foreach(lc, q->targetList)
		{
			TargetEntry *tle = lfirst(lc);

			if (!tle->resjunk && tle->resname && equal(tle->expr, lfirst(lg)))
			{
				name = tle->resname;
				break;
			}
		}
		if (name == NULL || get_attnum(mt->relid, name) == InvalidAttrNumber)
			return NIL;
		columns = lappend(columns, name);
	}
	return columns;
}


/*
 * Are the nodes that answered with shards those of the last pass (known:
 * its markers, each after the first led by its node's group)?  Then the
 * hidden table holds no other node's rows.
 */
static bool
same_nodes(List *known, List *nodes)
{
	ListCell   *lc;

	if (known == NIL || list_length(known) != list_length(nodes) + 1)
		return false;
	foreach(lc, nodes)
	{
		NodeRows   *node = lfirst(lc);
		bool		found = false;

		for (int i = 1; i < list_length(known) && !found; i++)
			found = atoi(list_nth(known, i)) == node->group;
		if (!found)
			return false;
	}
	return true;
}

/*
 * mt_partials_follow
 *		Tell every node what the table's partial aggregates are, and once
 *		every shard has them, combine the nodes' rows into the table and
 *		date it by the oldest shard.  *known: the change markers of the
 *		rows combined so far (the caller keeps them between passes; NIL at
 *		first), so that a node whose partials did not change sends none.
 *		NULL, or what went wrong (then *known is left as it was).
 */
char *
mt_partials_follow(MtTable *mt, List **known)
{
	PartialPlan *plan;
	char	   *problem;
	List	   *answers;
	List	   *nodes = NIL;
	List	   *markers = NIL;
	ListCell   *lc;
	int			shard_count = 0;
	int			followed = 0;
	Query	   *query;
	StagedChange change;
	TimestampTz as_of = 0;
	TimestampTz started = GetCurrentTimestamp();
	Oid			combined;

	/*
	 * The table before its query view and hidden objects (deparsing the
	 * query locks what it reads), as DROP and ALTER take them; one
	 * dropped or altered meanwhile is left to the next pass
	 */
	LockRelationOid(mt->relid, MT_REFRESH_LOCKMODE);
	mt = mt_catalog_lookup(mt->relid, true);
	if (mt == NULL || !mt_partials_on_nodes(mt))
		return NULL;
	query = mt_view_query(mt->query_view);
	plan = plan_partials(query, mt->query_view);
	if (plan->partial == NULL)
		return (char *) plan->why;
	combined = mt_hidden_relid("combined_", mt->relid);
	/* markers of another hidden table (a new query) are not known here */
	if (*known != NIL && strcmp(linitial(*known), psprintf("0:%u", combined)) != 0)
		*known = NIL;
	(void) mt_citus_distribution_column(plan->source, &shard_count);
	answers = mt_citus_on_all_nodes(follow_command(mt, plan, false, *known), &problem);
	if (problem)
		return problem;
	foreach(lc, answers)
	{
		char	   *answer = lfirst(lc);
		char	   *marker = strchr(answer, '\n');
		char	   *rows = marker ? strchr(marker + 1, '\n') : NULL;
		int			n;

		if (rows == NULL || !mt_citus_count_as_of(answer, &n, &as_of))
			return psprintf("a node answered \"%s\"", answer);
		followed += n;
		*rows = '\0';
		if (n > 0)
		{
			NodeRows   *node = palloc0(sizeof(NodeRows));

			node->marker = marker + 1;
			node->group = atoi(node->marker);
			node->rows = strcmp(rows + 1, "=") == 0 ? NULL : rows + 1;
			if (node->rows && node->rows[0] == '+')
			{
				node->keys = node->rows + 1;
				node->rows = strchr(node->keys, '\n');
				if (node->rows == NULL)
					return psprintf("a node answered \"%s\"", answer);
				*node->rows++ = '\0';
			}
			nodes = lappend(nodes, node);
			markers = lappend(markers, node->marker);
		}
	}
	if (followed != shard_count)
		return psprintf("%d of the %d shards of \"%s\" have their partial aggregates kept on their nodes",
						followed, shard_count, get_rel_name(plan->source));
	/* suspended: the nodes keep the partials, the table stays as it was */
	if (mt->status == MT_STATUS_SUSPENDED)
		return NULL;

	/*
	 * nothing changed on any node: nothing to combine; else a run of the
	 * table's history, its rows rewritten from the kept partials
	 */
	change = mt_partials_stage_rows(mt->relid, nodes, list_length(plan->groups),
									!same_nodes(*known, nodes));
	if (change.changed)
	{
		MtRefreshRequest req = {0};
		MtHistoryRun *run = mt_history_start(mt->relid, mt_trigger_name(MT_TRIGGER_CONTINUOUS),
											 NULL, started, false);
		MtRefreshCounts counts;
		List	   *columns = group_columns(mt, query, plan);

		req.relid = mt->relid;
		req.source_view = combined;
		/* the rows of the changed groups, found by the columns that show them */
		if (!change.all && columns != NIL && change.keys != NIL)
		{
			req.filter = mt_partials_table_filter(mt->relid, columns, change.keys);
			req.by_key = true;
		}
		counts = mt_refresh_rows(&req);
		/* DELTAS: the changed groups combined again; FULL: all of them */
		mt_history_succeeded(run, counts.inserted + counts.deleted, req.filter ? "DELTAS" : "FULL");
	}
	if (as_of > mt->last_refresh_time)
		mt_catalog_set_last_refresh(mt->relid, as_of);
	*known = lcons(psprintf("0:%u", combined), markers);
	return NULL;
}

void
mt_partials_drop(Oid relid)
{
	MtTable    *mt = mt_catalog_lookup(relid, true);
	const char *prefixes[2] = {"combined_", "partials_"};
	char	   *problem;

	if (mt == NULL || !OidIsValid(mt_hidden_relid("partials_", relid)))
		return;
	/* a node that does not answer keeps its partial tables, unread */
	(void) mt_citus_on_all_nodes(follow_command(mt, NULL, true, NIL), &problem);
	if (problem)
		ereport(LOG,
				(errmsg("could not drop the partial aggregates of materialized table \"%s\" on every node",
						get_rel_name(relid)),
				 errdetail("%s", problem)));
	for (int i = 0; i < 2; i++)
	{
		Oid			part = mt_hidden_relid(prefixes[i], relid);
		ObjectAddress address;

		if (!OidIsValid(part))
			continue;
		deleteDependencyRecordsForClass(RelationRelationId, part, RelationRelationId,
										DEPENDENCY_INTERNAL);
		CommandCounterIncrement();
		ObjectAddressSet(address, RelationRelationId, part);
		performDeletion(&address, DROP_RESTRICT, PERFORM_DELETION_INTERNAL);
		CommandCounterIncrement();
	}
}
