/*-------------------------------------------------------------------------
 *
 * src/commands/shard_tables.c
 *	  A node's side of a CONTINUOUS table that Citus distributes: each shard
 *	  of it held by this node becomes a materialized table of this node,
 *	  whose query reads the co-located shards of its sources, kept by this
 *	  node's worker from this node's replication slot.
 *
 * The coordinator's worker calls follow_shards() on every node, again and
 * again (refresh/shards.c): a call makes this node's shards of the table
 * what the coordinator says (its query, freshness, suspended or not), and
 * converts the shards it does not follow yet -- a new table's, or one a
 * shard move just brought here -- by CREATE OR ALTER, which recomputes
 * them in place.  It returns how many shards this node follows and the
 * time their content is fresh as of, from which the coordinator dates the
 * table.  A call changes nothing when everything is as said.
 *
 * Each shard's query is the coordinator's, analyzed here (the node has
 * Citus's shells of the distributed tables and their metadata) with each
 * shell replaced by its shard: a hash-distributed source by its shard of
 * the same index (co-located tables have the same hash ranges), a
 * reference table by its one shard.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "nodes/nodeFuncs.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "parser/scansup.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/freshness.h"
#include "mt/commands/shard_tables.h"
#include "mt/utils/citus.h"
#include "mt/utils/extension.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/sql.h"

PG_FUNCTION_INFO_V1(mt_follow_shards_sql);

#define MT_SHARD_LOCK_TIMEOUT "5s"

/*
 * The oid of a shard, as SQL, whatever the search_path: Citus leaves the
 * name of a shard of public's tables unqualified.
 */
#define MT_SHARD_RELATION(table, shard) \
	"pg_catalog.to_regclass(CASE WHEN (SELECT c.relnamespace FROM pg_catalog.pg_class c" \
	"                                  WHERE c.oid OPERATOR(pg_catalog.=) " table ")" \
	"                                 OPERATOR(pg_catalog.=) pg_catalog.to_regnamespace('public')" \
	"                            THEN 'public.' ELSE '' END OPERATOR(pg_catalog.||)" \
	"                       pg_catalog.shard_name(" table ", " shard "))::pg_catalog.oid"


/* The table's shards placed on this node, with their index (MtLocalShard). */
List *
mt_local_shards(Oid table)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(table)};
	List	   *result = NIL;
	MemoryContext caller = CurrentMemoryContext;
	uint64		i;

	SPI_connect();
	if (SPI_execute_with_args("SELECT " MT_SHARD_RELATION("s.logicalrelid", "s.shardid") ", s.i"
							  "  FROM (SELECT logicalrelid, shardid, (pg_catalog.row_number() OVER"
							  "               (ORDER BY shardminvalue::pg_catalog.int4))::pg_catalog.int4 - 1 AS i"
							  "          FROM pg_catalog.pg_dist_shard"
							  "         WHERE logicalrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass) s"
							  " WHERE EXISTS (SELECT FROM pg_catalog.pg_dist_placement p"
							  "                WHERE p.shardid OPERATOR(pg_catalog.=) s.shardid"
							  "                  AND p.groupid OPERATOR(pg_catalog.=)"
							  "                      (SELECT groupid FROM pg_catalog.pg_dist_local_group))"
							  " ORDER BY s.i",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the shards of \"%s\"", get_rel_name(table));
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		bool		isnull;
		Datum		relid = SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext spi;
		MtLocalShard *s;

		/* placed here, not created yet (a shard move under way) */
		if (isnull)
			continue;
		spi = MemoryContextSwitchTo(caller);
		s = palloc(sizeof(MtLocalShard));
		s->relid = DatumGetObjectId(relid);
		s->index = DatumGetInt32(SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull));
		result = lappend(result, s);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	return result;
}

/* The shard of source that goes with the table's shard of this index. */
static Oid
source_shard(Oid source, int index)
{
	Oid			argtypes[2] = {OIDOID, INT4OID};
	Datum		values[2] = {ObjectIdGetDatum(source), Int32GetDatum(index)};
	Oid			shard = InvalidOid;
	bool		isnull;
	MtCitusKind kind = mt_citus_table_kind(source);

	if (kind == MT_CITUS_REFERENCE)
		values[1] = Int32GetDatum(0);
	else if (kind != MT_CITUS_DISTRIBUTED)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a shard cannot read \"%s\", which Citus does not distribute",
						get_rel_name(source)),
				 errdetail("The shards of a CONTINUOUS table read the shards of distributed and reference tables on their node.")));
	SPI_connect();
	if (SPI_execute_with_args("SELECT " MT_SHARD_RELATION("logicalrelid", "shardid")
							  "  FROM pg_catalog.pg_dist_shard"
							  " WHERE logicalrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass"
							  " ORDER BY shardminvalue::pg_catalog.int4 NULLS FIRST OFFSET $2 LIMIT 1",
							  2, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the shards of \"%s\"", get_rel_name(source));
	if (SPI_processed == 1)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			shard = DatumGetObjectId(d);
	}
	SPI_finish();
	if (!OidIsValid(shard))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shard %d of \"%s\" is not on this node", index, get_rel_name(source)),
				 errdetail("A shard of a CONTINUOUS table is kept on the node that holds its sources' co-located shards."),
				 errhint("The coordinator tries again once a shard move has ended.")));
	return shard;
}

/*
 * The shell's columns must be the shard's, at the same numbers: the
 * query's columns are read by number, its text by name.
 */
static void
check_same_columns(Oid shell, Oid shard)
{
	Relation	a = relation_open(shell, AccessShareLock);
	Relation	b = relation_open(shard, AccessShareLock);
	TupleDesc	da = RelationGetDescr(a);
	TupleDesc	db = RelationGetDescr(b);
	bool		same = da->natts == db->natts;
	int			i;

	for (i = 0; same && i < da->natts; i++)
	{
		Form_pg_attribute x = TupleDescAttr(da, i);
		Form_pg_attribute y = TupleDescAttr(db, i);

		same = x->attisdropped == y->attisdropped &&
			(x->attisdropped || strcmp(NameStr(x->attname), NameStr(y->attname)) == 0);
	}
	relation_close(b, NoLock);
	relation_close(a, NoLock);
	if (!same)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the columns of shard \"%s\" are not those of \"%s\"",
						get_rel_name(shard), get_rel_name(shell)),
				 errdetail("A column was dropped from the table before Citus distributed it.")));
}

typedef struct ShardRewrite
{
	int			index;
} ShardRewrite;

/* Each relation the query reads becomes its shard of this index. */
static bool
to_shards_walker(Node *node, ShardRewrite *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION)
		{
			Oid			shard = source_shard(rte->relid, context->index);

			check_same_columns(rte->relid, shard);
			rte->relid = shard;
		}
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, to_shards_walker, context,
								 QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, to_shards_walker, context);
}

/* text without the white space around it, as a statement keeps its query */
char *
mt_trimmed(const char *text)
{
	const char *end = text + strlen(text);

	while (*text && scanner_isspace(*text))
		text++;
	while (end > text && scanner_isspace(end[-1]))
		end--;
	return pnstrdup(text, end - text);
}

/* The table's query as its shard of this index reads it. */
char *
mt_shard_query(const char *definition, int index)
{
	List	   *raw;
	Query	   *query;
	ShardRewrite context = {index};
	int			nestlevel = mt_pin_search_path();

	/* the coordinator qualified every name that is not in pg_catalog */
	raw = raw_parser(definition, RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1)
		elog(ERROR, "the definition of a distributed table's shards is not one query");
	query = parse_analyze_fixedparams(linitial_node(RawStmt, raw), definition, NULL, 0, NULL);
	mt_unpin_search_path(nestlevel);
	(void) query_tree_walker(query, to_shards_walker, &context, QTW_EXAMINE_RTES_BEFORE);
	return mt_trimmed(mt_query_text(query));
}

/* Run a statement of the extension on this node. */
void
mt_shard_execute(const char *statement)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(statement)};

	SPI_connect();
	if (SPI_execute_with_args("SELECT materialized_table.execute($1)", 1, argtypes, values,
							  NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not run: %s", statement);
	SPI_finish();
	CommandCounterIncrement();
}

/*
 * Make one shard what the coordinator says.  With refresh, its rows are
 * recomputed, unless converting it or its new query just did.
 */
static void
follow_shard(Oid shard, const char *query, const char *freshness, bool suspended, bool refresh)
{
	char	   *name = mt_qualified_name(shard);
	MtTable    *mt = mt_catalog_lookup(shard, true);
	bool		recomputed = false;

	if (mt == NULL)
	{
		mt_shard_execute(psprintf("CREATE OR ALTER MATERIALIZED TABLE %s FRESHNESS = %s "
								   "REFRESH_MODE = CONTINUOUS AS %s", name, freshness, query));
		mt = mt_catalog_lookup(shard, false);
		recomputed = true;
	}
	if (mt->refresh_mode != MT_MODE_CONTINUOUS)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shard \"%s\" is a materialized table in FULL refresh mode", get_rel_name(shard)),
				 errhint("Drop it with DROP MATERIALIZED TABLE on this node; the coordinator converts it again.")));
	if (strcmp(mt_trimmed(mt->definition_query), query) != 0)
	{
		mt_shard_execute(psprintf("ALTER MATERIALIZED TABLE %s AS %s", name, query));
		recomputed = true;
	}
	mt_shard_align(mt, name, freshness, suspended);
	if (refresh && !recomputed)
		mt_shard_execute(psprintf("ALTER MATERIALIZED TABLE %s REFRESH", name));
}

/* A node's materialized table given the coordinator's freshness and state. */
void
mt_shard_align(MtTable *mt, const char *name, const char *freshness, bool suspended)
{
	if (strcmp(mt_freshness_text(mt->freshness_value, mt->freshness_unit), freshness) != 0)
		mt_shard_execute(psprintf("ALTER MATERIALIZED TABLE %s SET FRESHNESS = %s", name, freshness));
	if (suspended != (mt->status == MT_STATUS_SUSPENDED))
		mt_shard_execute(psprintf("ALTER MATERIALIZED TABLE %s %s", name,
								  suspended ? "SUSPEND" : "RESUME"));
}

/* The time these tables' content is fresh as of: the oldest of them. */
Datum
mt_shards_fresh_as_of(List *relids, bool *isnull)
{
	Oid			argtypes[1] = {OIDARRAYOID};
	Datum	   *oids = palloc(sizeof(Datum) * Max(list_length(relids), 1));
	Datum		values[1];
	Datum		result = (Datum) 0;
	ListCell   *lc;
	int			n = 0;

	*isnull = true;
	foreach(lc, relids)
		oids[n++] = ObjectIdGetDatum(lfirst_oid(lc));
	values[0] = PointerGetDatum(construct_array(oids, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	SPI_connect();
	if (SPI_execute_with_args("SELECT pg_catalog.min(pg_catalog.statement_timestamp() OPERATOR(pg_catalog.-) current_lag)"
							  "  FROM materialized_table_internal.tables"
							  " WHERE table_name::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1)",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read how fresh the shards are");
	if (SPI_processed == 1)
		result = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, isnull);
	SPI_finish();
	return result;
}

/*
 * follow_shards(t regclass, definition text, freshness text, suspended
 *				 bool, refresh bool) -> (shards int, as_of timestamptz)
 */
Datum
mt_follow_shards_sql(PG_FUNCTION_ARGS)
{
	Oid			table = PG_GETARG_OID(0);
	char	   *definition = text_to_cstring(PG_GETARG_TEXT_PP(1));
	char	   *freshness = text_to_cstring(PG_GETARG_TEXT_PP(2));
	bool		suspended = PG_GETARG_BOOL(3);
	bool		refresh = PG_GETARG_BOOL(4);
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {false, false};
	List	   *shards;
	List	   *relids = NIL;
	ListCell   *lc;
	int			nestlevel;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "follow_shards must return a row");
	if (mt_citus_table_kind(table) != MT_CITUS_DISTRIBUTED)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a hash-distributed table", get_rel_name(table))));

	/*
	 * A shard is this node's own table to this node's extension: written
	 * and altered here, its hidden objects made here, none of it sent on.
	 */
	nestlevel = mt_citus_local_shard_access();
	(void) set_config_option("materialized_table.conversion_from_table", "on", PGC_SUSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	/* a shard locked by a transaction of the coordinator's: tried again later */
	(void) set_config_option("lock_timeout", MT_SHARD_LOCK_TIMEOUT, PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	shards = mt_local_shards(table);
	foreach(lc, shards)
	{
		MtLocalShard *s = lfirst(lc);
		Oid			save_userid;
		int			save_sec;
		int			save_nestlevel;

		/*
		 * The coordinator connects as the extension's owner, but the query
		 * is the table owner's: analyze it and run the statements that
		 * plan it with the rights of the shard's owner (Citus gives a
		 * shard the owner of its table), as its own node would.
		 */
		mt_run_as_owner_begin(mt_table_owner(s->relid), &save_userid, &save_sec, &save_nestlevel);
		follow_shard(s->relid, mt_shard_query(definition, s->index), freshness, suspended, refresh);
		mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
		relids = lappend_oid(relids, s->relid);
	}
	values[0] = Int32GetDatum(list_length(shards));
	values[1] = mt_shards_fresh_as_of(relids, &nulls[1]);
	AtEOXact_GUC(true, nestlevel);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}
