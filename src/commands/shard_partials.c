/*-------------------------------------------------------------------------
 *
 * src/commands/shard_partials.c
 *	  A node's side of a CONTINUOUS table of the coordinator that
 *	  aggregates distributed sources: for each shard of its sources this
 *	  node holds, a materialized table of this node keeps that shard's
 *	  partial aggregates (count, sum, min, max per group), maintained by
 *	  this node's worker from this node's replication slot.
 *
 * The coordinator's worker calls follow_partials() on every node twice a
 * second (refresh/partials.c): a call creates the partial tables of the
 * shards placed here that have none yet (a new table's, or those a shard
 * move brought), recreates those whose query changed, drops those of
 * shards no longer here, aligns freshness and state, and returns how many
 * it follows, as of when they are fresh and their rows combined by group,
 * which the coordinator combines over all nodes.
 *
 * A partial table is named mt_partial_<the coordinator's table id>_<shard
 * index>, in the coordinator table's schema, owned by its owner.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "mt/catalog/catalog.h"
#include "mt/commands/shard_tables.h"
#include "mt/utils/citus.h"
#include "mt/utils/extension.h"
#include "mt/utils/sql.h"

PG_FUNCTION_INFO_V1(mt_follow_partials_sql);

#define MT_PARTIAL_LOCK_TIMEOUT "5s"

static char *
partial_relname(int64 id, int index)
{
	return psprintf("mt_partial_" INT64_FORMAT "_%d", id, index);
}

/*
 * Drop this table's partial tables in schema whose shard is not among
 * those followed here (all of them when there are none): those of its
 * owner only, whatever else bears such a name.
 */
static void
drop_stale(int64 id, const char *schema, Oid owner, List *shards)
{
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2];
	char	   *prefix = psprintf("mt_partial_" INT64_FORMAT "_", id);
	List	   *stale = NIL;
	ListCell   *lc;
	MemoryContext caller = CurrentMemoryContext;
	Oid			nspid = get_namespace_oid(schema, false);
	uint64		i;

	values[0] = CStringGetTextDatum(schema);
	values[1] = CStringGetTextDatum(prefix);
	SPI_connect();
	if (SPI_execute_with_args("SELECT c.relname::pg_catalog.text FROM pg_catalog.pg_class c"
							  "  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace"
							  " WHERE n.nspname OPERATOR(pg_catalog.=) $1::pg_catalog.name"
							  "   AND pg_catalog.starts_with(c.relname::pg_catalog.text, $2)",
							  2, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the partial tables of table " INT64_FORMAT, id);
	for (i = 0; i < SPI_processed; i++)
	{
		char	   *relname = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		char	   *end;
		long		index = strtol(relname + strlen(prefix), &end, 10);
		bool		here = false;
		MemoryContext spi;

		if (*end != '\0')
			continue;			/* another table's name */
		foreach(lc, shards)
			here |= ((MtLocalShard *) lfirst(lc))->index == index;
		if (here)
			continue;
		spi = MemoryContextSwitchTo(caller);
		stale = lappend(stale, pstrdup(relname));
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	foreach(lc, stale)
	{
		Oid			relid = get_relname_relid(lfirst(lc), nspid);

		if (OidIsValid(relid) && mt_is_materialized_table(relid) && mt_table_owner(relid) == owner)
			mt_shard_execute(psprintf("DROP MATERIALIZED TABLE %s",
									  quote_qualified_identifier(schema, lfirst(lc))));
	}
}

/*
 * Make one partial table what the coordinator says; its relid.  A new
 * query replaces it: its columns may be others.
 */
static Oid
follow_partial(const char *schema, const char *relname, const char *query,
			   const char *freshness, bool suspended)
{
	char	   *name = quote_qualified_identifier(schema, relname);
	Oid			nspid = get_namespace_oid(schema, false);
	Oid			relid = get_relname_relid(relname, nspid);
	MtTable    *mt = OidIsValid(relid) ? mt_catalog_lookup(relid, true) : NULL;

	if (OidIsValid(relid) && mt == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("relation \"%s\" already exists and is not a materialized table", name),
				 errdetail("The partial aggregates of a shard are kept in a materialized table of that name.")));
	if (mt != NULL && strcmp(mt_trimmed(mt->definition_query), query) != 0)
	{
		mt_shard_execute(psprintf("DROP MATERIALIZED TABLE %s", name));
		mt = NULL;
	}
	if (mt == NULL)
	{
		mt_shard_execute(psprintf("CREATE MATERIALIZED TABLE %s FRESHNESS = %s "
								  "REFRESH_MODE = CONTINUOUS AS %s", name, freshness, query));
		relid = get_relname_relid(relname, nspid);
		mt = mt_catalog_lookup(relid, false);
	}
	mt_shard_align(mt, name, freshness, suspended);
	return relid;
}

/*
 * The partial tables' rows combined by group, as the text of a text[] of
 * rows: a group column is grouped by, a count or sum summed, a min or max
 * taken again (kinds: "group", "sum", "min", "max" per column).
 */
static char *
combined_rows(List *relids, List *kinds)
{
	Relation	rel = relation_open(linitial_oid(relids), AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	StringInfoData cols;
	StringInfoData groups;
	StringInfoData from;
	ListCell   *lc;
	char	   *result = NULL;
	int			c = 0;

	initStringInfo(&cols);
	initStringInfo(&groups);
	initStringInfo(&from);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		const char *col;
		const char *kind;

		if (att->attisdropped)
			continue;
		if (c >= list_length(kinds))
			elog(ERROR, "a partial table has more columns than the coordinator's");
		kind = strVal(list_nth(kinds, c++));
		col = psprintf("u.%s", quote_identifier(NameStr(att->attname)));
		if (cols.len > 0)
			appendStringInfoString(&cols, ", ");
		if (strcmp(kind, "group") == 0)
		{
			appendStringInfoString(&cols, col);
			appendStringInfo(&groups, "%s%s", groups.len ? ", " : " GROUP BY ", col);
		}
		else if (strcmp(kind, "sum") == 0)
			appendStringInfo(&cols, "pg_catalog.sum(%s)::%s", col,
							 mt_type_sql(att->atttypid, att->atttypmod));
		else if (strcmp(kind, "min") == 0 || strcmp(kind, "max") == 0)
			appendStringInfo(&cols, "pg_catalog.%s(%s)", kind, col);
		else
			elog(ERROR, "unknown kind of partial column: %s", kind);
	}
	relation_close(rel, AccessShareLock);
	if (c != list_length(kinds))
		elog(ERROR, "a partial table has fewer columns than the coordinator's");
	/* each row says the node it comes from */
	appendStringInfoString(&cols, ", (SELECT groupid FROM pg_catalog.pg_dist_local_group)");
	foreach(lc, relids)
		appendStringInfo(&from, "%sSELECT * FROM %s", from.len ? " UNION ALL " : "",
						 mt_qualified_name(lfirst_oid(lc)));

	SPI_connect();
	if (SPI_execute(psprintf("SELECT pg_catalog.array_agg(r::pg_catalog.text)::pg_catalog.text"
							 "  FROM (SELECT %s FROM (%s) u%s) r", cols.data, from.data, groups.data),
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the partial tables");
	if (SPI_processed == 1)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		/* (SPI_palloc: in the caller's memory, past SPI_finish) */
		if (v != NULL)
			result = strcpy(SPI_palloc(strlen(v) + 1), v);
	}
	SPI_finish();
	return result ? result : "{}";
}

/*
 * What the partial tables are and the last refresh each one had:
 * "<group>:<relid>.<run>;..." with this node's group, a marker that
 * changes whenever their rows may have (a cycle that applied changes, a
 * recompute, a table made again).
 */
static char *
change_marker(List *relids)
{
	Datum	   *oids = palloc(sizeof(Datum) * Max(list_length(relids), 1));
	Oid			argtypes[1] = {OIDARRAYOID};
	Datum		values[1];
	ListCell   *lc;
	char	   *marker = NULL;
	int			n = 0;

	foreach(lc, relids)
		oids[n++] = ObjectIdGetDatum(lfirst_oid(lc));
	values[0] = PointerGetDatum(construct_array(oids, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	SPI_connect();
	if (SPI_execute_with_args("SELECT (SELECT groupid FROM pg_catalog.pg_dist_local_group)::pg_catalog.text"
							  "       OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||)"
							  "       pg_catalog.string_agg(t.relid::pg_catalog.text OPERATOR(pg_catalog.||) '.'"
							  "         OPERATOR(pg_catalog.||) COALESCE("
							  "           (SELECT r.run_id FROM materialized_table_internal.refresh_run r"
							  "             WHERE r.relid OPERATOR(pg_catalog.=) t.relid"
							  "             ORDER BY r.started_at DESC, r.run_id DESC LIMIT 1), 0)::pg_catalog.text,"
							  "         ';' ORDER BY t.relid)"
							  "  FROM pg_catalog.unnest($1) t(relid)",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the refreshes of the partial tables");
	if (SPI_processed == 1)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (v != NULL)
			marker = strcpy(SPI_palloc(strlen(v) + 1), v);
	}
	SPI_finish();
	return marker ? marker : "";
}

/*
 * follow_partials(id bigint, schema name, source regclass, owner name,
 *				   definition text, kinds text[], freshness text,
 *				   suspended bool, known text[]) -> text
 *		Three lines: "<tables followed> <epoch fresh as of>"; this node's
 *		change marker; the combined rows, or "=" when the marker is among
 *		known (the coordinator has combined these rows already).  An empty
 *		definition drops them all.
 */
Datum
mt_follow_partials_sql(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	char	   *schema = pstrdup(NameStr(*PG_GETARG_NAME(1)));
	Oid			source = PG_GETARG_OID(2);
	Oid			owner = get_role_oid(NameStr(*PG_GETARG_NAME(3)), false);
	char	   *definition = text_to_cstring(PG_GETARG_TEXT_PP(4));
	ArrayType  *kinds_array = PG_GETARG_ARRAYTYPE_P(5);
	char	   *freshness = text_to_cstring(PG_GETARG_TEXT_PP(6));
	bool		suspended = PG_GETARG_BOOL(7);
	ArrayType  *known_array = PG_GETARG_ARRAYTYPE_P(8);
	char	   *marker = "";
	bool		known = false;
	List	   *kinds = NIL;
	List	   *shards = NIL;
	List	   *relids = NIL;
	ListCell   *lc;
	Datum	   *elems;
	bool	   *elem_nulls;
	int			nelems;
	int			nestlevel;
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;
	char	   *rows = "{}";
	Datum		as_of = (Datum) 0;
	bool		as_of_null = true;
	StringInfoData result;

	deconstruct_array(kinds_array, TEXTOID, -1, false, TYPALIGN_INT, &elems, &elem_nulls, &nelems);
	for (int i = 0; i < nelems; i++)
		if (!elem_nulls[i])
			kinds = lappend(kinds, makeString(TextDatumGetCString(elems[i])));

	/* the shards are this node's own tables to this call */
	nestlevel = mt_citus_local_shard_access();
	(void) set_config_option("lock_timeout", MT_PARTIAL_LOCK_TIMEOUT, PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	if (definition[0] != '\0')
	{
		if (mt_citus_table_kind(source) != MT_CITUS_DISTRIBUTED)
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("\"%s\" is not a hash-distributed table", get_rel_name(source))));
		shards = mt_local_shards(source);
	}
	drop_stale(id, schema, owner, shards);

	/*
	 * The coordinator connects as the extension's owner; the query, its
	 * tables and their reading are the table owner's
	 */
	mt_run_as_owner_begin(owner, &save_userid, &save_sec, &save_nestlevel);
	foreach(lc, shards)
	{
		MtLocalShard *s = lfirst(lc);

		relids = lappend_oid(relids,
							 follow_partial(schema, partial_relname(id, s->index),
											mt_shard_query(definition, s->index),
											freshness, suspended));
	}
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
	if (relids != NIL)
	{
		/* (read before the rows: a cycle in between only makes the next pass read them again) */
		marker = change_marker(relids);
		deconstruct_array(known_array, TEXTOID, -1, false, TYPALIGN_INT, &elems, &elem_nulls, &nelems);
		for (int i = 0; i < nelems && !known; i++)
			known = !elem_nulls[i] && strcmp(TextDatumGetCString(elems[i]), marker) == 0;
		mt_run_as_owner_begin(owner, &save_userid, &save_sec, &save_nestlevel);
		rows = known ? "=" : combined_rows(relids, kinds);
		mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
		as_of = mt_shards_fresh_as_of(relids, &as_of_null);
	}
	AtEOXact_GUC(true, nestlevel);

	initStringInfo(&result);
	appendStringInfo(&result, "%d", list_length(relids));
	if (!as_of_null)
		appendStringInfo(&result, " %.6f",
						 (double) (DatumGetTimestampTz(as_of) +
								   (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC) /
						 USECS_PER_SEC);
	appendStringInfo(&result, "\n%s\n%s", marker, rows);
	PG_RETURN_TEXT_P(cstring_to_text(result.data));
}
