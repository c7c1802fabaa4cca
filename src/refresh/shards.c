/*-------------------------------------------------------------------------
 *
 * src/refresh/shards.c
 *	  A CONTINUOUS table that Citus distributes, the coordinator's side.
 *
 * Its rows are in shards on the worker nodes, and the changes of its
 * sources' shards are decoded on those nodes, never here.  So each shard
 * is a materialized table of its node, reading its sources' co-located
 * shards, kept by that node's worker from that node's slot, exactly once
 * through that node's crashes as any table of one server is
 * (commands/shard_tables.c).  That is right only when the table's query
 * runs shard by shard: its sources are distributed tables co-located with
 * it or reference tables, and Citus pushes its INSERT ... SELECT down to
 * the shards (each row's distribution value comes from the rows of its
 * own shards).  Anything else is refused when the table is created.
 *
 * The coordinator keeps the definition.  Its worker calls follow_shards()
 * on every node in turn (mt_shards_follow): a node converts the shards it
 * holds and does not follow yet -- a new table's, one a shard move
 * brought -- and makes the others what the coordinator says (query,
 * freshness, suspended), then answers how many shards it follows and as
 * of when they are fresh.  Only when every shard is followed does the
 * table's last_refresh_time move on, to the oldest of them: a node that
 * does not answer leaves it behind, and freshness_met turns false once
 * the freshness has passed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/freshness.h"
#include "mt/refresh/shards.h"
#include "mt/utils/citus.h"
#include "mt/utils/extension.h"
#include "mt/utils/relations.h"
#include "mt/utils/sql.h"

bool
mt_shards_on_nodes(MtTable *mt)
{
	return mt->refresh_mode == MT_MODE_CONTINUOUS &&
		mt_citus_table_kind(mt->relid) == MT_CITUS_DISTRIBUTED;
}

typedef struct SourceCheck
{
	Oid			table;
	Oid			view;			/* its query view (the rule's OLD and NEW) */
	int			colocation;
} SourceCheck;

static void
not_on_nodes(Oid table, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("materialized table \"%s\" distributed by Citus cannot be maintained in CONTINUOUS refresh mode",
					get_rel_name(table)),
			 errdetail("%s", detail),
			 errhint("Use REFRESH_MODE = FULL, or distribute the table by the distribution column of its sources.")));
}

/* Every relation read is a co-located distributed table or a reference table. */
static bool
check_sources_walker(Node *node, SourceCheck *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;
		MtCitusKind kind;

		if (rte->rtekind != RTE_RELATION || rte->relid == context->view)
			return false;
		if (rte->relkind == RELKIND_VIEW || rte->relkind == RELKIND_MATVIEW)
			not_on_nodes(context->table,
						 psprintf("Its query reads view \"%s\"; the shards on the nodes read tables only.",
								  get_rel_name(rte->relid)));
		if (mt_is_materialized_table(rte->relid))
			not_on_nodes(context->table,
						 psprintf("Its query reads materialized table \"%s\".",
								  get_rel_name(rte->relid)));
		kind = mt_citus_table_kind(rte->relid);
		if (kind == MT_CITUS_NONE)
			not_on_nodes(context->table,
						 psprintf("Its query reads \"%s\", a table of the coordinator, whose changes the worker nodes do not see.",
								  get_rel_name(rte->relid)));
		if (kind == MT_CITUS_OTHER ||
			(kind == MT_CITUS_DISTRIBUTED &&
			 mt_citus_colocation_id(rte->relid) != context->colocation))
			not_on_nodes(context->table,
						 psprintf("Its query reads \"%s\", which is not co-located with it: its shards are computed on their nodes from the co-located shards of their sources.",
								  get_rel_name(rte->relid)));
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, check_sources_walker, context,
								 QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, check_sources_walker, context);
}

/*
 * mt_shards_check
 *		Can each shard of the table be computed on its node from its
 *		sources' shards?  The sources are checked here; the rest is
 *		Citus's own judgement: it pushes an INSERT ... SELECT down to the
 *		shards only when every row lands in the shard its source rows are
 *		co-located with, and otherwise says how it runs it instead.
 */
void
mt_shards_check(Oid relid, Oid query_view)
{
	SourceCheck context = {relid, query_view, mt_citus_colocation_id(relid)};
	uint64		i;
	char	   *method = NULL;
	int			nestlevel;

	(void) query_tree_walker(mt_view_query(query_view), check_sources_walker, &context,
							 QTW_EXAMINE_RTES_BEFORE);
	/*
	 * Citus's plan only: explaining its tasks would ask nodes about a
	 * table this transaction has not committed (and the coordinator, so
	 * asked, would wait for this very transaction)
	 */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("citus.explain_distributed_queries", "off", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	SPI_connect();
	if (SPI_execute(psprintf("EXPLAIN (COSTS OFF) INSERT INTO %s SELECT * FROM %s",
							 mt_qualified_name(relid), mt_qualified_name(query_view)),
					false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not explain the refresh of \"%s\"", get_rel_name(relid));
	for (i = 0; i < SPI_processed && method == NULL; i++)
	{
		char	   *line = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		char	   *at = line ? strstr(line, "INSERT/SELECT method: ") : NULL;

		if (at)
			method = pstrdup(at + strlen("INSERT/SELECT method: "));
	}
	SPI_finish();
	AtEOXact_GUC(true, nestlevel);
	if (method)
		not_on_nodes(relid,
					 psprintf("Citus does not run its query shard by shard (it would use the %s method).",
							  method));
}

/* The Citus tables a query reads, each once. */
static bool
citus_sources_walker(Node *node, List **sources)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION && rte->relkind == RELKIND_RELATION &&
			mt_citus_table_kind(rte->relid) != MT_CITUS_NONE)
			*sources = list_append_unique_oid(*sources, rte->relid);
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, citus_sources_walker, sources,
								 QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, citus_sources_walker, sources);
}

/*
 * mt_shards_prepare_sources
 *		Before a new CONTINUOUS table that Citus distributes is made: its
 *		distributed and reference sources get REPLICA IDENTITY FULL,
 *		which Citus sets on all their shards.  Each node's table then
 *		decodes its old rows whole without taking a lock for it.
 */
void
mt_shards_prepare_sources(Query *query)
{
	List	   *sources = NIL;
	ListCell   *lc;

	(void) query_tree_walker(query, citus_sources_walker, &sources, QTW_EXAMINE_RTES_BEFORE);
	foreach(lc, sources)
	{
		Oid			source = lfirst_oid(lc);

		if (mt_replica_identity(source) == REPLICA_IDENTITY_FULL)
			continue;
		if (!pg_class_ownercheck(source, GetUserId()))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("table \"%s\" needs REPLICA IDENTITY FULL to be followed continuously",
							get_rel_name(source)),
					 errdetail("Without it, the old values of updated and deleted rows are not decoded."),
					 errhint("Ask the owner of \"%s\" to run ALTER TABLE %s REPLICA IDENTITY FULL, or use REFRESH_MODE = FULL.",
							 get_rel_name(source), mt_qualified_name(source))));
		/*
		 * One connection per node for the rest of the transaction: Citus
		 * refuses to read and write, over several connections, placements
		 * that DDL changed.  (The first CREATE over new sources pays for it
		 * with a fill that runs shard after shard.)
		 */
		(void) set_config_option("citus.multi_shard_modify_mode", "sequential", PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
		mt_set_replica_identity_full(source);
	}
}

/* The SQL a node runs: its shards made what the coordinator says. */
static char *
follow_command(MtTable *mt, bool refresh)
{
	char	   *definition = mt_query_text(mt_view_query(mt->query_view));

	return psprintf("SELECT pg_catalog.concat_ws(' ', shards, pg_catalog.date_part('epoch', as_of))"
					"  FROM materialized_table_internal.follow_shards(%s::pg_catalog.regclass, %s, %s, %s, %s)",
					quote_literal_cstr(mt_qualified_name(mt->relid)),
					quote_literal_cstr(definition),
					quote_literal_cstr(mt_freshness_text(mt->freshness_value, mt->freshness_unit)),
					mt->status == MT_STATUS_SUSPENDED ? "true" : "false",
					refresh ? "true" : "false");
}

/*
 * mt_shards_follow
 *		Tell every node what the table is (with refresh, each node
 *		recomputes its shards too), and date the table by its shards once
 *		all of them are followed.  Returns NULL when every node answered
 *		and every shard is followed, else what went wrong.
 */
char *
mt_shards_follow(MtTable *mt, bool refresh)
{
	int			shard_count = 0;
	int			followed = 0;
	TimestampTz as_of = 0;
	char	   *problem;
	List	   *answers;
	ListCell   *lc;

	(void) mt_citus_distribution_column(mt->relid, &shard_count);
	/* (each node then works with the rights of the table's owner) */
	answers = mt_citus_on_all_nodes(follow_command(mt, refresh), &problem);
	foreach(lc, answers)
	{
		int			n;

		if (lfirst(lc) == NULL)
			continue;
		if (!mt_citus_count_as_of(lfirst(lc), &n, &as_of))
		{
			if (problem == NULL)
				problem = psprintf("a node answered \"%s\"", (char *) lfirst(lc));
			continue;
		}
		followed += n;
	}
	if (problem == NULL && followed != shard_count)
		problem = psprintf("%d of its %d shards are followed on their nodes", followed, shard_count);
	if (problem)
		return problem;
	if (as_of > mt->last_refresh_time)
		mt_catalog_set_last_refresh(mt->relid, as_of);
	return NULL;
}

/*
 * mt_shards_refresh
 *		ALTER ... REFRESH (or a new query) of such a table: each node
 *		recomputes its shards from their sources, each in its own
 *		transaction, before this one returns.
 */
void
mt_shards_refresh(MtTable *mt)
{
	char	   *problem = mt_shards_follow(mt, true);

	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("could not refresh every shard of materialized table \"%s\"",
						get_rel_name(mt->relid)),
				 errdetail("%s", problem),
				 errhint("The shards refreshed stay so; the coordinator's worker goes on following the others.")));
}
