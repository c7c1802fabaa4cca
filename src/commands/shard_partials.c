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
#include "optimizer/plancat.h"
#include "executor/spi.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "mt/catalog/catalog.h"
#include "mt/commands/shard_tables.h"
#include "mt/continuous/partial_log.h"
#include "mt/refresh/refresh.h"
#include "mt/utils/citus.h"
#include "mt/utils/extension.h"
#include "mt/utils/sql.h"

PG_FUNCTION_INFO_V1(mt_follow_partials_sql);
PG_FUNCTION_INFO_V1(mt_follow_keys_sql);

#define MT_PARTIAL_LOCK_TIMEOUT "5s"

static char *
partial_relname(int64 id, int index)
{
	return psprintf(MT_PARTIAL_PREFIX INT64_FORMAT "_%d", id, index);
}

/*
 * Drop the partial tables in schema named prefix<shard index> whose shard
 * is not among those followed here (all of them when there are none):
 * those of owner only, whatever else bears such a name.  With sources >= 0,
 * the names are prefix<source>_<shard index> (follow_keys) and those of a
 * source past that many are dropped.
 */
static void
drop_stale(const char *prefix, const char *schema, Oid owner, List *shards, int sources)
{
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		values[2];
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
		elog(ERROR, "could not read the partial tables named %s...", prefix);
	for (i = 0; i < SPI_processed; i++)
	{
		char	   *relname = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		char	   *end;
		long		index = strtol(relname + strlen(prefix), &end, 10);
		bool		here = false;
		MemoryContext spi;

		if (sources >= 0 && *end == '_' && end != relname + strlen(prefix))
		{
			here = (index <= sources);
			(void) strtol(end + 1, &end, 10);
		}
		else
			foreach(lc, shards)
				here |= ((MtLocalShard *) lfirst(lc))->index == index;
		if (*end != '\0')
			continue;			/* another table's name */
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
 * Make one partial table what the coordinator says, its writes logged
 * (ngroups: its group columns); its relid.  A new query replaces it: its
 * columns may be others.
 */
static Oid
follow_partial(int64 id, const char *schema, const char *relname, const char *query,
			   const char *freshness, bool suspended, int ngroups, bool forwards)
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
	/* (one made before its writes were logged is sent whole first: see mt_follow_partials_sql) */
	if (!mt_partial_log_has(relid))
		mt_partial_log_register(relid, id, ngroups, forwards);
	mt_shard_align(mt, name, freshness, suspended);
	return relid;
}

/*
 * The partial tables' rows combined by group, as the text of a text[] of
 * rows: a group column is grouped by, a count or sum summed, a min or max
 * taken again (kinds: "group", "sum", "min", "max" per column); those of
 * the groups keys names (char *[] of the group columns), or all with keys
 * NIL.  Under mt_portable_text_begin's settings.
 */
static char *
combined_rows(List *relids, List *kinds, List *keys)
{
	Relation	rel = relation_open(linitial_oid(relids), AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	StringInfoData cols;
	StringInfoData groups;
	StringInfoData from;
	ListCell   *lc;
	char	   *result = NULL;
	int			c = 0;
	List	   *group_columns = NIL;
	char	   *where = "";
	int			nparams = 0;
	Oid		   *argtypes = NULL;
	Datum	   *values = NULL;
	ParamListInfo params;

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
			group_columns = lappend(group_columns, pstrdup(NameStr(att->attname)));
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
	if (c != list_length(kinds))
		elog(ERROR, "a partial table has fewer columns than the coordinator's");
	if (keys != NIL)
	{
		List	   *filter = mt_filter_of_keys(group_columns, keys);

		nparams = mt_filter_params(filter, desc, &argtypes, &values, &params);
		where = psprintf(" WHERE %s", mt_filter_condition(filter, "u", desc, argtypes, 0));
	}
	relation_close(rel, AccessShareLock);
	/* each row says the node it comes from */
	appendStringInfoString(&cols, ", (SELECT groupid FROM pg_catalog.pg_dist_local_group)");
	foreach(lc, relids)
		appendStringInfo(&from, "%sSELECT * FROM %s", from.len ? " UNION ALL " : "",
						 mt_qualified_name(lfirst_oid(lc)));

	SPI_connect();

	/*
	 * Not read-only: with a snapshot newer than the one that took the log
	 * (mt_partial_log_take), which the call's own may not be -- a write
	 * committed in between would be taken but not read, and lost
	 */
	if (SPI_execute_with_args(psprintf("SELECT pg_catalog.array_agg(r::pg_catalog.text)::pg_catalog.text"
									   "  FROM (SELECT %s FROM (%s) u%s%s) r",
									   cols.data, from.data, where, groups.data),
							  nparams, argtypes, values, NULL, false, 0) != SPI_OK_SELECT)
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
 * Which partial tables this node has: "<group>:<relid>;<relid>..." with
 * this node's group.  The coordinator's known marker of the same tables,
 * with "@<batch>" after it, is the last batch of their logged groups it
 * combined (see continuous/partial_log.c).
 */
static char *
tables_marker(List *relids)
{
	StringInfoData marker;
	ListCell   *lc;
	bool		isnull;
	int32		group;

	SPI_connect();
	if (SPI_execute("SELECT groupid FROM pg_catalog.pg_dist_local_group", true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not read the group of this node");
	group = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	initStringInfo(&marker);
	appendStringInfo(&marker, "%d:", group);
	foreach(lc, relids)
		appendStringInfo(&marker, "%s%u", foreach_current_index(lc) ? ";" : "", lfirst_oid(lc));
	return marker.data;
}

/* The text of a text[] of the keys (char *[] of ngroups), one per row. */
static char *
keys_text(List *keys, int ngroups)
{
	int			n = list_length(keys) * ngroups;
	Datum	   *elems = palloc(sizeof(Datum) * n);
	bool	   *nulls = palloc(sizeof(bool) * n);
	int			dims[2] = {list_length(keys), ngroups};
	int			lbs[2] = {1, 1};
	ListCell   *lc;
	int			k = 0;

	foreach(lc, keys)
	{
		char	  **key = lfirst(lc);

		for (int i = 0; i < ngroups; i++, k++)
		{
			nulls[k] = (key[i] == NULL);
			elems[k] = nulls[k] ? (Datum) 0 : CStringGetTextDatum(key[i]);
		}
	}
	return OidOutputFunctionCall(F_ARRAY_OUT,
								 PointerGetDatum(construct_md_array(elems, nulls, 2, dims, lbs, TEXTOID,
																	-1, false, TYPALIGN_INT)));
}

/*
 * Drop the partial tables of coordinator's tables that known does not
 * list as live ("live:<id>;<id>..."): tables dropped while this node did
 * not answer.  Nothing without such a list.
 */
static void
drop_orphans(ArrayType *known_array)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	List	   *live = NIL;
	bool		listed = false;
	ListCell   *lc;

	deconstruct_array(known_array, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &nelems);
	for (int i = 0; i < nelems && !listed; i++)
	{
		char	   *known = nulls[i] ? NULL : TextDatumGetCString(elems[i]);
		char	   *p;

		if (known == NULL || strncmp(known, "live:", 5) != 0)
			continue;
		listed = true;
		for (p = known + 5; *p;)
		{
			int64	   *id = palloc(sizeof(int64));
			char	   *end;

			errno = 0;
			*id = strtoi64(p, &end, 10);
			if (errno != 0 || end == p || (*end != ';' && *end != '\0'))
				return;			/* not a list of ours: nothing is dropped */
			live = lappend(live, id);
			p = (*end == ';') ? end + 1 : end;
		}
	}
	if (!listed || live == NIL)
		return;
	foreach(lc, mt_partial_log_orphans(live))
	{
		Oid			relid = lfirst_oid(lc);

		if (mt_is_materialized_table(relid))
			mt_shard_execute(psprintf("DROP MATERIALIZED TABLE %s", mt_qualified_name(relid)));
		else
			mt_partial_log_forget(relid);
	}
}

/*
 * The batch of the partial tables' logged groups that the coordinator
 * combined last, from its known markers: -1 if it knows none of these
 * tables (or not their logged groups).
 */
static int64
acknowledged_batch(ArrayType *known_array, const char *marker)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	size_t		len = strlen(marker);

	deconstruct_array(known_array, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &nelems);
	for (int i = 0; i < nelems; i++)
	{
		char	   *known = nulls[i] ? NULL : TextDatumGetCString(elems[i]);
		char	   *end;
		int64		batch;

		if (known == NULL || strncmp(known, marker, len) != 0 || known[len] != '@')
			continue;
		errno = 0;
		batch = strtoi64(known + len + 1, &end, 10);
		if (errno == 0 && *end == '\0' && batch >= 0)
			return batch;
	}
	return -1;
}

/*
 * About how many groups the partial tables hold at least: their rows, as
 * the planner estimates them, over the number of tables (a group may be
 * in every shard).  A change of more groups than a third of that is sent
 * whole, which costs less per group than finding each.
 */
static double
estimated_groups(List *relids)
{
	ListCell   *lc;
	double		total = 0;

	foreach(lc, relids)
	{
		Relation	rel = relation_open(lfirst_oid(lc), AccessShareLock);
		BlockNumber pages;
		double		tuples;
		double		allvisfrac;

		estimate_rel_size(rel, NULL, &pages, &tuples, &allvisfrac);
		total += tuples;
		relation_close(rel, AccessShareLock);
	}
	return total / Max(list_length(relids), 1);
}

/*
 * follow_partials(id bigint, schema name, source regclass, owner name,
 *				   definition text, kinds text[], freshness text,
 *				   suspended bool, known text[]) -> text
 *		Lines: "<tables followed> <epoch fresh as of>"; this node's marker
 *		(its tables, "@<batch>" of their logged groups); then the combined
 *		rows of all groups, or "=" when the coordinator has combined them
 *		all already (known has this marker with the newest batch), or
 *		"+<the changed groups' keys, a text[][] of the group columns>" and
 *		on the next line the combined rows of those of them that have
 *		rows (when they are fewer than a third of the groups).  Values are in mt_portable_text_begin's form.  An empty
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
	int			ngroups = 0;
	Datum		as_of = (Datum) 0;
	bool		as_of_null = true;
	StringInfoData result;

	deconstruct_array(kinds_array, TEXTOID, -1, false, TYPALIGN_INT, &elems, &elem_nulls, &nelems);
	for (int i = 0; i < nelems; i++)
		if (!elem_nulls[i])
		{
			kinds = lappend(kinds, makeString(TextDatumGetCString(elems[i])));
			ngroups += (strcmp(strVal(llast(kinds)), "group") == 0);
		}

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
	drop_stale(psprintf(MT_PARTIAL_PREFIX INT64_FORMAT "_", id), schema, owner, shards, -1);
	drop_orphans(known_array);

	/*
	 * The coordinator connects as the extension's owner; the query, its
	 * tables and their reading are the table owner's
	 */
	mt_run_as_owner_begin(owner, &save_userid, &save_sec, &save_nestlevel);
	foreach(lc, shards)
	{
		MtLocalShard *s = lfirst(lc);

		relids = lappend_oid(relids,
							 follow_partial(id, schema, partial_relname(id, s->index),
											mt_shard_query(definition, s->index),
											freshness, suspended, ngroups, false));
	}
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
	if (relids != NIL)
	{
		char	   *tables = tables_marker(relids);
		int64		acked = acknowledged_batch(known_array, tables);
		List	   *keys = NIL;
		int64		newest;
		int			portable;

		/*
		 * The log is taken before the rows are read: a write committed in
		 * between is in the rows and in the next call's groups, sent twice
		 * and never missed
		 */
		newest = mt_partial_log_take(relids, acked, &keys);
		as_of = mt_shards_fresh_as_of(relids, &as_of_null);
		/* until each has had its first refresh, all rows again at every call */
		if (as_of_null)
			acked = newest = -1;
		marker = psprintf("%s@" INT64_FORMAT, tables, newest);
		mt_run_as_owner_begin(owner, &save_userid, &save_sec, &save_nestlevel);
		portable = mt_portable_text_begin();
		if (acked >= 0 && keys == NIL)
			rows = "=";
		else if (acked >= 0 && linitial(keys) != NULL &&
				 list_length(keys) * 3.0 <= estimated_groups(relids))
			rows = psprintf("+%s\n%s", keys_text(keys, ngroups),
							combined_rows(relids, kinds, keys));
		else
			rows = combined_rows(relids, kinds, NIL);
		mt_unpin_search_path(portable);
		mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
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

/* The elements of a one-dimensional array, as text (NULL for NULL). */
static List *
text_elements(ArrayType *array)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	List	   *result = NIL;

	deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &nelems);
	for (int i = 0; i < nelems; i++)
		result = lappend(result, nulls[i] ? NULL : TextDatumGetCString(elems[i]));
	return result;
}

/*
 * follow_keys(id bigint, schema name, sources regclass[], owner name,
 *			   definitions text[], ncolumns integer[], freshness text,
 *			   known text[]) -> text
 *		For each source k (a distributed or a reference table) and each
 *		of its shards held here, a materialized table
 *		mt_partial_<id>_s<k>_<shard index> whose query reads the key
 *		columns of definitions[k] from the shard; its applies log the key
 *		values its changes name (continuous/apply.c), it holds no rows.
 *		Lines: "<tables of source 1>,<of source 2>... <epoch fresh as
 *		of>"; then per source this node's marker of its tables
 *		("@<batch>" of their log) and the values logged since the batch
 *		known acknowledges: "=" none, "+<text[][] of the key columns>",
 *		or "*" all of them (nothing acknowledged, too many, or a change
 *		that names everything).  Values are in mt_portable_text_begin's
 *		form.  Empty definitions drop them all.
 */
Datum
mt_follow_keys_sql(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	char	   *schema = pstrdup(NameStr(*PG_GETARG_NAME(1)));
	ArrayType  *sources_array = PG_GETARG_ARRAYTYPE_P(2);
	Oid			owner = get_role_oid(NameStr(*PG_GETARG_NAME(3)), false);
	List	   *definitions = text_elements(PG_GETARG_ARRAYTYPE_P(4));
	ArrayType  *ncolumns_array = PG_GETARG_ARRAYTYPE_P(5);
	char	   *freshness = text_to_cstring(PG_GETARG_TEXT_PP(6));
	ArrayType  *known_array = PG_GETARG_ARRAYTYPE_P(7);
	Datum	   *sources;
	Datum	   *ncolumns;
	bool	   *nulls;
	int			nsources;
	int			nncolumns;
	int			nestlevel;
	List	   *per_source = NIL;	/* List of relids, per source */
	List	   *all_relids = NIL;
	Datum		as_of = (Datum) 0;
	bool		as_of_null = true;
	StringInfoData counts;
	StringInfoData lines;
	ListCell   *lc;
	int			k;

	deconstruct_array(sources_array, REGCLASSOID, sizeof(Oid), true, TYPALIGN_INT,
					  &sources, &nulls, &nsources);
	deconstruct_array(ncolumns_array, INT4OID, sizeof(int32), true, TYPALIGN_INT,
					  &ncolumns, &nulls, &nncolumns);
	if (nsources != list_length(definitions) || nsources != nncolumns)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("follow_keys needs as many definitions and column counts as sources")));

	nestlevel = mt_citus_local_shard_access();
	(void) set_config_option("lock_timeout", MT_PARTIAL_LOCK_TIMEOUT, PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	for (k = 0; k < nsources; k++)
	{
		Oid			source = DatumGetObjectId(sources[k]);
		char	   *prefix = psprintf(MT_PARTIAL_PREFIX INT64_FORMAT "_s%d_", id, k + 1);
		List	   *shards = NIL;
		List	   *relids = NIL;
		Oid			save_userid;
		int			save_sec;
		int			save_nestlevel;

		if (mt_citus_table_kind(source) == MT_CITUS_NONE)
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("\"%s\" is not a distributed or reference table", get_rel_name(source))));
		shards = mt_local_shards(source);
		drop_stale(prefix, schema, owner, shards, -1);
		mt_run_as_owner_begin(owner, &save_userid, &save_sec, &save_nestlevel);
		foreach(lc, shards)
		{
			MtLocalShard *s = lfirst(lc);

			relids = lappend_oid(relids,
								 follow_partial(id, schema, psprintf("%s%d", prefix, s->index),
												mt_shard_query(list_nth(definitions, k), s->index),
												freshness, false, DatumGetInt32(ncolumns[k]), true));
		}
		mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
		per_source = lappend(per_source, relids);
		all_relids = list_concat(all_relids, relids);
	}
	/* the tables of sources no longer read, or of all with none */
	drop_stale(psprintf(MT_PARTIAL_PREFIX INT64_FORMAT "_s", id), schema, owner, NIL, nsources);
	drop_orphans(known_array);

	/*
	 * As of when the tables are fresh before their logs are taken: each
	 * apply logs its keys and dates its table at once, so what is taken
	 * names every change up to then
	 */
	if (all_relids != NIL)
		as_of = mt_shards_fresh_as_of(all_relids, &as_of_null);
	initStringInfo(&counts);
	initStringInfo(&lines);
	foreach(lc, per_source)
	{
		List	   *relids = lfirst(lc);
		int			ncols = DatumGetInt32(ncolumns[foreach_current_index(lc)]);
		char	   *tables;
		int64		acked;
		int64		newest;
		List	   *keys = NIL;

		appendStringInfo(&counts, "%s%d", counts.len ? "," : "", list_length(relids));
		if (relids == NIL)
		{
			appendStringInfoString(&lines, "\n-\n=");
			continue;
		}
		tables = tables_marker(relids);
		acked = acknowledged_batch(known_array, tables);
		newest = mt_partial_log_take(relids, acked, &keys);
		/* until each has had its first apply, everything at every call */
		if (as_of_null)
			acked = newest = -1;
		appendStringInfo(&lines, "\n%s@" INT64_FORMAT "\n", tables, newest);
		if (acked >= 0 && keys == NIL)
			appendStringInfoChar(&lines, '=');
		else if (acked >= 0 && linitial(keys) != NULL && ncols > 0)
		{
			/* (its length first: values may hold new lines) */
			char	   *text = keys_text(keys, ncols);

			appendStringInfo(&lines, "+%zu %s", strlen(text), text);
		}
		else
			appendStringInfoChar(&lines, '*');
	}
	AtEOXact_GUC(true, nestlevel);

	if (nsources == 0)
		appendStringInfoChar(&counts, '0');
	if (!as_of_null)
		appendStringInfo(&counts, " %.6f",
						 (double) (DatumGetTimestampTz(as_of) +
								   (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * USECS_PER_SEC) /
						 USECS_PER_SEC);
	appendStringInfoString(&counts, lines.data);
	PG_RETURN_TEXT_P(cstring_to_text(counts.data));
}
