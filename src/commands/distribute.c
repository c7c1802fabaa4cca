/*-------------------------------------------------------------------------
 *
 * src/commands/distribute.c
 *	  DISTRIBUTED BY on a database where Citus is installed.  There the
 *	  table becomes a Citus distributed table (create_distributed_table)
 *	  instead of local hash partitions: its INTO n BUCKETS are its shards,
 *	  and it is co-located with a source distributed on the same column,
 *	  so that Citus can run its refresh shard by shard on the workers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "parser/parsetree.h"
#include "utils/lsyscache.h"

#include "mt/commands/create_plan.h"
#include "mt/commands/distribute.h"
#include "mt/utils/citus.h"
#include "mt/utils/extension.h"

/*
 * mt_citus_check_distribution
 *		Citus distributes a table by hash of one column, and does not
 *		distribute a table partitioned on two levels (ours would be: by
 *		PARTITIONED BY, then the buckets).
 */
void
mt_citus_check_distribution(MtStatement *st, MtCreateStmt *c)
{
	MtDistribution *d = c->distribution;

	if (d->kind == MT_DISTRIBUTION_RANGE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("DISTRIBUTED BY RANGE is not supported where Citus is installed"),
				 errdetail("Citus distributes a table by the hash of one column."),
				 errhint("Use DISTRIBUTED BY HASH (column) INTO n BUCKETS."),
				 mt_errposition(st->source, d->location)));
	if (list_length(d->columns) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a materialized table distributed by Citus has one distribution column"),
				 errdetail("Citus distributes a table by the hash of one column."),
				 errhint("Name one column in DISTRIBUTED BY HASH (column)."),
				 mt_errposition(st->source, d->location)));
	if (c->partition_keys != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a materialized table distributed by Citus cannot also be PARTITIONED BY"),
				 errdetail("Its partitions would be partitioned again by the buckets, and Citus does not distribute a table partitioned on two levels."),
				 errhint("Drop PARTITIONED BY or DISTRIBUTED BY."),
				 mt_errposition(st->source, d->location)));
}

/*
 * The base table and column an output column of the query is, if it is
 * one: a column of the query's own relations, directly or through a join's
 * merged columns.
 */
static bool
output_source(Query *query, const char *column, Oid *relid, AttrNumber *attno)
{
	ListCell   *lc;
	Node	   *expr = NULL;

	foreach(lc, query->targetList)
	{
		TargetEntry *tle = lfirst(lc);

		if (!tle->resjunk && tle->resname && strcmp(tle->resname, column) == 0)
			expr = (Node *) tle->expr;
	}
	while (expr && IsA(expr, Var) && ((Var *) expr)->varlevelsup == 0 &&
		   ((Var *) expr)->varattno > 0)
	{
		Var		   *var = (Var *) expr;
		RangeTblEntry *rte = rt_fetch(var->varno, query->rtable);

		if (rte->rtekind == RTE_RELATION)
		{
			*relid = rte->relid;
			*attno = var->varattno;
			return true;
		}
		if (rte->rtekind != RTE_JOIN)
			break;
		expr = list_nth(rte->joinaliasvars, var->varattno - 1);
	}
	return false;
}

/*
 * mt_citus_colocation
 *		A source hash-distributed on the table's distribution column, with
 *		the same type and the same shard count, is the one to co-locate
 *		with: each shard of the table then holds the rows computed from
 *		the shards of that source on the same node.  Without INTO n
 *		BUCKETS the table takes that source's shard count.
 */
Oid
mt_citus_colocation(MtDistribution *d, bool explicit_buckets, Query *query, List *planned)
{
	const char *column = strVal(linitial(d->columns));
	Oid			relid;
	AttrNumber	attno;
	char	   *dist_column;
	int			shards;

	if (!output_source(query, column, &relid, &attno))
		return InvalidOid;
	dist_column = mt_citus_distribution_column(relid, &shards);
	if (dist_column == NULL || strcmp(dist_column, get_attname(relid, attno, false)) != 0 ||
		get_atttype(relid, attno) != mt_find_planned(planned, column)->typid)
		return InvalidOid;
	if (!explicit_buckets)
		d->buckets = shards;
	return d->buckets == shards ? relid : InvalidOid;
}
