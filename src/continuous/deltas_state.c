/*-------------------------------------------------------------------------
 *
 * src/continuous/deltas_state.c
 *	  The DELTAS strategy: the hidden state, and adding adjustments to it.
 *
 * See mt/continuous/deltas.h.  A DELTAS table that is not its own state
 * has a state table and a derived view in the internal schema; this
 * creates and drops them, rebuilds the state from the sources (all of it
 * or some groups), and adds the adjustments of a set (continuous/deltas.c)
 * to it, returning the groups touched, which the table is then refreshed
 * for from the derived view, and those whose min or max a removed value
 * may have been, which the caller re-reads (mt_deltas_rebuild_state).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/hidden_objects.h"
#include "mt/catalog/marker.h"
#include "mt/continuous/aggregates.h"
#include "mt/continuous/deltas.h"
#include "mt/continuous/deltas_int.h"
#include "mt/materialized_table.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/sql.h"

/* a state of more groups is rebuilt without holding them in memory */
#define MAX_PARALLEL_GROUPS		1000000

static char *
internal_name(const char *prefix, Oid relid)
{
	return quote_qualified_identifier(MT_INTERNAL_SCHEMA,
									  mt_hidden_name(psprintf("%s_", prefix), mt_catalog_id(relid)));
}

Oid
mt_deltas_derived_view(Oid relid)
{
	return mt_hidden_relid("derived_", relid);
}

/*
 * mt_deltas_create_objects
 *		The state table and derived view of a new DELTAS table (empty state:
 *		the worker fills it when it takes the table up).
 */
void
mt_deltas_create_objects(Oid relid, MtAnalysis *a)
{
	MtTable    *mt = mt_catalog_lookup(relid, false);
	Relation	view = table_open(mt->query_view, AccessShareLock);
	TupleDesc	vdesc = RelationGetDescr(view);
	char	   *state = internal_name("state", relid);
	char	   *derived = internal_name("derived", relid);
	StringInfoData cols;
	StringInfoData keys;
	ListCell   *lc;
	MtSavedUser saved;
	ObjectAddress table;
	ObjectAddress part;

	initStringInfo(&cols);
	initStringInfo(&keys);
	foreach(lc, a->group_outputs)
	{
		Form_pg_attribute att = mt_find_attribute(vdesc, lfirst(lc));
		const char *name = quote_identifier(lfirst(lc));

		appendStringInfo(&cols, "%s %s, ", name,
						 mt_type_sql(att->atttypid, att->atttypmod));
		appendStringInfo(&keys, "%s%s", keys.len ? ", " : "", name);
	}
	if (a->grouping_sets != NIL)
	{
		appendStringInfo(&cols, "%s integer NOT NULL, ", MT_GROUPING_SET_COLUMN);
		appendStringInfo(&keys, ", %s", MT_GROUPING_SET_COLUMN);
	}
	/* a global aggregate's one row */
	if (keys.len == 0)
		appendStringInfoString(&keys, "(true)");
	appendStringInfoString(&cols, "__mt_rows bigint NOT NULL");
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);
		int			i = foreach_current_index(lc);

		if (d->kind == MT_AGG_MIN || d->kind == MT_AGG_MAX)
			appendStringInfo(&cols, ", %s %s%s, %s bigint NOT NULL", mt_sum_column(i),
							 format_type_be_qualified(d->sum_type), mt_delta_collate_sql(d),
							 mt_nn_column(i));
		else
			appendStringInfo(&cols, ", %s %s NOT NULL, %s bigint NOT NULL", mt_sum_column(i),
							 format_type_be_qualified(d->sum_type), mt_nn_column(i));
	}
	foreach(lc, a->aggs)
		for (int j = 0; j < mt_delta_nscales(lfirst(lc)); j++)
			appendStringInfo(&cols, ", %s bigint NOT NULL",
							 mt_scale_column(foreach_current_index(lc), j));
	table_close(view, AccessShareLock);

	/* created with the extension owner's rights in its schema, then given away */
	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	/* room on each page for a group's new version: counters change in place (HOT) */
	mt_spi_exec(psprintf("CREATE TABLE %s (%s) WITH (fillfactor = 70)", state, cols.data),
				SPI_OK_UTILITY);
	mt_spi_exec(psprintf("CREATE UNIQUE INDEX ON %s (%s) NULLS NOT DISTINCT", state, keys.data),
				SPI_OK_UTILITY);
	CommandCounterIncrement();
	mt_spi_exec(psprintf("CREATE VIEW %s AS %s", derived, mt_delta_derived_sql(a, state)),
				SPI_OK_UTILITY);
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	CommandCounterIncrement();

	ObjectAddressSet(table, RelationRelationId, relid);
	ObjectAddressSet(part, RelationRelationId,
					 mt_hidden_relid("state_", relid));
	recordDependencyOn(&part, &table, DEPENDENCY_INTERNAL);
	mt_grant_hidden_object(relid, part.objectId, true);
	ObjectAddressSet(part, RelationRelationId, mt_deltas_derived_view(relid));
	recordDependencyOn(&part, &table, DEPENDENCY_INTERNAL);
	mt_grant_hidden_object(relid, part.objectId, false);
	CommandCounterIncrement();
}

/* Drop them (the table stays, but is no longer maintained by deltas). */
void
mt_deltas_drop_objects(Oid relid)
{
	Oid			derived = mt_hidden_relid("derived_", relid);
	Oid			state = mt_hidden_relid("state_", relid);
	ObjectAddress address;

	/* they are parts of the table: detach them before they can go alone */
	if (OidIsValid(derived))
	{
		deleteDependencyRecordsForClass(RelationRelationId, derived, RelationRelationId,
										DEPENDENCY_INTERNAL);
		CommandCounterIncrement();
		ObjectAddressSet(address, RelationRelationId, derived);
		performDeletion(&address, DROP_RESTRICT, PERFORM_DELETION_INTERNAL);
	}
	if (OidIsValid(state))
	{
		deleteDependencyRecordsForClass(RelationRelationId, state, RelationRelationId,
										DEPENDENCY_INTERNAL);
		CommandCounterIncrement();
		ObjectAddressSet(address, RelationRelationId, state);
		performDeletion(&address, DROP_RESTRICT, PERFORM_DELETION_INTERNAL);
	}
	CommandCounterIncrement();
}

/*
 * mt_deltas_rebuild_state
 *		Recompute the state from the sources, as of snapshot: all of it, or
 *		the groups the filter names (on group columns).  The groups are
 *		computed by a query that may run in parallel, as REFRESH
 *		MATERIALIZED VIEW's does (an INSERT ... SELECT may not), then
 *		inserted; a table of more than MAX_PARALLEL_GROUPS rows is rebuilt
 *		by INSERT ... SELECT instead, not to hold its groups in memory (as
 *		is one with a group column of a type without an array type).
 */
void
mt_deltas_rebuild_state(Oid relid, MtAnalysis *a, Snapshot snapshot, List *filter)
{
	char	   *state = internal_name("state", relid);
	TupleDesc	desc = mt_deltas_state_desc(relid);
	Oid		   *argtypes;
	Datum	   *values;
	ParamListInfo params;
	int			nparams;
	char	   *where_state = "";
	char	   *where_rows = "";
	char	   *select;
	SPIPlanPtr	plan;
	SPIExecuteOptions options;
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	bool		parallel = true;
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;

	if (HeapTupleIsValid(tup))
	{
		parallel = ((Form_pg_class) GETSTRUCT(tup))->reltuples < MAX_PARALLEL_GROUPS;
		ReleaseSysCache(tup);
	}
	/* reading the filter's values runs their types' input (a domain's checks) */
	mt_run_as_owner_begin(a->owner, &save_userid, &save_sec, &save_nestlevel);
	nparams = mt_filter_params(filter, desc, &argtypes, &values, &params);
	/* the groups are inserted from arrays of each column's type */
	for (int c = 0; c < desc->natts; c++)
		if (!OidIsValid(get_array_type(TupleDescAttr(desc, c)->atttypid)))
			parallel = false;
	if (filter != NIL)
	{
		where_state = psprintf(" WHERE %s", mt_filter_condition(filter, "s", desc, argtypes, 0));
		where_rows = psprintf(" WHERE %s", mt_filter_condition(filter, "r", desc, argtypes, 0));
	}
	select = psprintf("SELECT %s FROM (%s) r%s%s", mt_deltas_state_aggregates(a, false, false, false),
					  a->rows_sql, where_rows,
					  mt_deltas_group_by(a));

	SPI_connect();
	MT_INTERNAL_BEGIN();
	if (SPI_execute_with_args(psprintf("DELETE FROM %s s%s", state, where_state),
							  nparams, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not rebuild the state of \"%s\"", get_rel_name(relid));
	plan = parallel ? SPI_prepare_cursor(select, nparams, argtypes, CURSOR_OPT_PARALLEL_OK) :
		SPI_prepare(psprintf("INSERT INTO %s %s", state, select), nparams, argtypes);
	if (plan == NULL)
		elog(ERROR, "could not prepare the state of \"%s\": %s", get_rel_name(relid),
			 SPI_result_code_string(SPI_result));
	memset(&options, 0, sizeof(options));
	options.params = params;
	options.read_only = true;	/* with the snapshot, as is */
	PushActiveSnapshot(snapshot);
	if (SPI_execute_plan_extended(plan, &options) != (parallel ? SPI_OK_SELECT : SPI_OK_INSERT))
		elog(ERROR, "could not rebuild the state of \"%s\"", get_rel_name(relid));
	PopActiveSnapshot();
	if (parallel)
		mt_spi_insert_result(state);
	MT_INTERNAL_END();
	SPI_finish();
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
}

/* ---------------------------------------------------------------------
 * Adding a set to the state
 * ---------------------------------------------------------------------
 */

/* A text[] of one column of the groups. */
static Datum
column_array(List *groups, int ngroup, int col, bool keys, int agg, bool sums)
{
	int			n = list_length(groups);
	Datum	   *elems = palloc(sizeof(Datum) * (n + 1));
	bool	   *nulls = palloc0(sizeof(bool) * (n + 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};
	ListCell   *lc;
	int			i = 0;

	foreach(lc, groups)
	{
		DeltaGroup *g = lfirst(lc);

		if (keys)
		{
			nulls[i] = (g->values[col] == NULL);
			elems[i] = nulls[i] ? (Datum) 0 : CStringGetTextDatum(g->values[col]);
		}
		else if (agg < 0)
			elems[i] = CStringGetTextDatum(psprintf(INT64_FORMAT, g->rows));
		else if (sums)
			elems[i] = CStringGetTextDatum(mt_deltas_numeric_text(g->sums[agg]));
		else
			elems[i] = CStringGetTextDatum(psprintf(INT64_FORMAT, g->nn[agg]));
		i++;
	}
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, TEXTOID, -1, false,
											  TYPALIGN_INT));
}

/* An array of an extremum's most extreme values added to the groups. */
static Datum
extremum_array(MtDeltaSet *set, int agg, Oid *arraytype)
{
	ExtremumType *e = &set->ext[agg];
	int			n = list_length(set->groups);
	Datum	   *elems = palloc(sizeof(Datum) * (n + 1));
	bool	   *nulls = palloc(sizeof(bool) * (n + 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int16		typlen;
	bool		typbyval;
	char		typalign;
	ListCell   *lc;

	foreach(lc, set->groups)
	{
		DeltaGroup *g = lfirst(lc);
		int			i = foreach_current_index(lc);

		nulls[i] = !g->has_added[agg];
		elems[i] = g->added[agg];
	}
	get_typlenbyvalalign(e->type, &typlen, &typbyval, &typalign);
	*arraytype = get_array_type(e->type);
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, e->type, typlen,
											  typbyval, typalign));
}

/*
 * The groups a removed value of an extremum was not strictly beyond the
 * kept extremum of (it may have been the extremum, or one of its equals),
 * as the state holds them before the set is added (DeltaGroup.reread
 * set): their extremum is not known without reading their rows.  A group
 * the state does not hold had no rows: what was removed was added in the
 * same set, and it is re-read too.  Their number in *n.
 */
static List *
groups_to_reread(MtDeltaSet *set, const char *state, int64 *n)
{
	List	   *candidates = NIL;
	List	   *filter = NIL;
	TupleDesc	desc;
	Oid		   *types;
	Datum	   *values;
	ParamListInfo params;
	int			nparams;
	StringInfoData sql;
	ListCell   *lc;
	uint64		r;

	*n = 0;
	foreach(lc, set->groups)
	{
		DeltaGroup *g = lfirst(lc);

		g->reread = false;
		for (int i = 0; i < set->nagg && !g->reread; i++)
			g->reread = set->ext[i].is_extremum && g->has_removed[i];
		if (g->reread)
			candidates = lappend(candidates, g);
	}
	if (candidates == NIL)
		return NIL;

	desc = mt_deltas_state_desc(set->relid);
	if (set->ngroup > 0)
		filter = mt_deltas_groups_filter(set, candidates);
	nparams = mt_filter_params(filter, desc, &types, &values, &params);
	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT ");
	foreach(lc, set->a->group_outputs)
		appendStringInfo(&sql, "s.%s, ", quote_identifier(lfirst(lc)));
	if (set->nsets > 0)
		appendStringInfo(&sql, "s.%s, ", MT_GROUPING_SET_COLUMN);
	for (int i = 0; i < set->nagg; i++)
		if (set->ext[i].is_extremum)
			appendStringInfo(&sql, "s.%s, ", mt_sum_column(i));
	appendStringInfo(&sql, "true FROM %s s", state);
	if (filter != NIL)
		appendStringInfo(&sql, " WHERE %s", mt_filter_condition(filter, "s", desc, types, 0));

	SPI_connect();
	if (SPI_execute_with_args(sql.data, nparams, types, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the state of \"%s\"", get_rel_name(set->relid));
	for (r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	rdesc = SPI_tuptable->tupdesc;
		char	  **keys = palloc(sizeof(char *) * (set->ngroup + 1));
		DeltaGroup *g;
		int			col = set->ngroup;

		for (int k = 0; k < set->ngroup; k++)
			keys[k] = SPI_getvalue(tup, rdesc, k + 1);
		g = mt_deltas_lookup_group(set, keys);
		if (g == NULL)
			continue;
		/* (one that removed nothing stays false) */
		g->reread = false;
		for (int i = 0; i < set->nagg; i++)
		{
			bool		isnull;
			Datum		kept;

			if (!set->ext[i].is_extremum)
				continue;
			kept = SPI_getbinval(tup, rdesc, ++col, &isnull);
			if (g->has_removed[i] &&
				(isnull || !mt_deltas_beyond(set, i, g->removed[i], kept)))
				g->reread = true;
		}
	}
	SPI_finish();

	foreach(lc, candidates)
		if (!((DeltaGroup *) lfirst(lc))->reread)
			candidates = foreach_delete_current(candidates, lc);
	*n = list_length(candidates);
	return candidates;
}

/* An int8[] of one scale count of the groups. */
static Datum
scale_count_array(List *groups, int sc)
{
	Datum	   *elems = palloc(sizeof(Datum) * (list_length(groups) + 1));
	ListCell   *lc;

	foreach(lc, groups)
		elems[foreach_current_index(lc)] = Int64GetDatum(((DeltaGroup *) lfirst(lc))->sc[sc]);
	return PointerGetDatum(construct_array(elems, list_length(groups), INT8OID, sizeof(int64),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * Which state rows of no rows are deleted, as SQL over the state row s:
 * none of a global aggregate, whose one row stays; of grouping sets, all
 * but the set of no columns, whose one row does too.
 */
static const char *
empty_deleted(MtDeltaSet *set)
{
	ListCell   *lc;

	if (set->ngroup == 0)
		return "false";
	foreach(lc, set->a->grouping_sets)
		if (bms_is_empty(lfirst(lc)))
			return psprintf("s.%s OPERATOR(pg_catalog.<>) %d", MT_GROUPING_SET_COLUMN,
							mt_grouping_mask(set->a, lfirst(lc)));
	return "true";
}

/*
 * mt_deltas_apply
 *		Add the adjustments to the state; return the filter of the groups
 *		they touched, for refreshing the table from the derived view, or
 *		set *whole when the table's one row is to be (a global aggregate).
 *		A sum that is NaN or infinite now makes the set inexact.  The
 *		groups whose min or max may be gone (groups_to_reread) are in
 *		*reread, a filter (their number in *nreread), for the caller to
 *		re-read from the sources; of a global aggregate or of grouping
 *		sets, they make the set inexact (its one row is the whole table; a
 *		set's group is not a filter of the query's rows).
 */
List *
mt_deltas_apply(MtDeltaSet *set, bool *whole, List **reread, int64 *nreread)
{
	MtAnalysis *a = set->a;
	MtTable    *mt = mt_catalog_lookup(set->relid, false);
	Relation	view;
	TupleDesc	vdesc;
	char	   *state = internal_name("state", set->relid);
	StringInfoData cols;
	StringInfoData unnest;
	StringInfoData names;
	StringInfoData casts;
	StringInfoData sets;
	StringInfoData conflict;
	int			nparams = set->ngroup + 1 + 2 * set->nagg + set->nsc;
	StringInfoData broken;
	Oid		   *types = palloc(sizeof(Oid) * nparams);
	Datum	   *values = palloc(sizeof(Datum) * nparams);
	ListCell   *lc;
	int			p = 0;
	int			i;
	List	   *rereads = NIL;
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;

	*whole = false;
	*reread = NIL;
	*nreread = 0;
	if (set->groups == NIL)
		return NIL;
	view = table_open(mt->query_view, AccessShareLock);
	vdesc = CreateTupleDescCopy(RelationGetDescr(view));
	table_close(view, AccessShareLock);

	initStringInfo(&cols);
	initStringInfo(&unnest);
	initStringInfo(&names);
	initStringInfo(&casts);
	initStringInfo(&sets);
	initStringInfo(&conflict);
	initStringInfo(&broken);
	i = 0;
	foreach(lc, a->group_outputs)
	{
		Form_pg_attribute att = mt_find_attribute(vdesc, lfirst(lc));
		char	   *type = mt_type_sql(att->atttypid, att->atttypmod);

		appendStringInfo(&cols, "%s, ", quote_identifier(lfirst(lc)));
		appendStringInfo(&conflict, "%s%s", conflict.len ? ", " : "", quote_identifier(lfirst(lc)));
		appendStringInfo(&unnest, "pg_catalog.unnest($%d::pg_catalog.text[]), ", p + 1);
		appendStringInfo(&names, "g%d, ", i);
		appendStringInfo(&casts, "u.g%d::%s, ", i, type);
		types[p] = TEXTARRAYOID;
		values[p++] = column_array(set->groups, set->ngroup, i, true, 0, false);
		i++;
	}
	if (set->nsets > 0)
	{
		appendStringInfo(&cols, "%s, ", MT_GROUPING_SET_COLUMN);
		appendStringInfo(&conflict, ", %s", MT_GROUPING_SET_COLUMN);
		appendStringInfo(&unnest, "pg_catalog.unnest($%d::pg_catalog.text[]), ", p + 1);
		appendStringInfo(&names, "g%d, ", i);
		appendStringInfo(&casts, "u.g%d::pg_catalog.int4, ", i);
		types[p] = TEXTARRAYOID;
		values[p++] = column_array(set->groups, set->ngroup, i, true, 0, false);
	}
	appendStringInfoString(&cols, "__mt_rows");
	appendStringInfo(&unnest, "pg_catalog.unnest($%d::pg_catalog.text[])", p + 1);
	appendStringInfoString(&names, "r");
	appendStringInfoString(&casts, "u.r::pg_catalog.int8");
	appendStringInfoString(&sets, "__mt_rows = s.__mt_rows + EXCLUDED.__mt_rows");
	types[p] = TEXTARRAYOID;
	values[p++] = column_array(set->groups, set->ngroup, 0, false, -1, false);
	i = 0;
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);

		if (set->ext[i].is_extremum)
		{
			/* the most extreme value added, compared with the kept one */
			appendStringInfo(&cols, ", %s, %s", mt_sum_column(i), mt_nn_column(i));
			appendStringInfo(&unnest, ", pg_catalog.unnest($%d), pg_catalog.unnest($%d::pg_catalog.text[])",
							 p + 1, p + 2);
			appendStringInfo(&names, ", s%d, n%d", i, i);
			appendStringInfo(&casts, ", u.s%d, u.n%d::pg_catalog.int8", i, i);
			appendStringInfo(&sets, ", %s = %s(s.%s, EXCLUDED.%s), %s = s.%s + EXCLUDED.%s",
							 mt_sum_column(i), d->kind == MT_AGG_MIN ? "LEAST" : "GREATEST",
							 mt_sum_column(i), mt_sum_column(i),
							 mt_nn_column(i), mt_nn_column(i), mt_nn_column(i));
			values[p] = extremum_array(set, i, &types[p]);
			p++;
			types[p] = TEXTARRAYOID;
			values[p++] = column_array(set->groups, set->ngroup, 0, false, i, false);
			i++;
			continue;
		}
		appendStringInfo(&cols, ", %s, %s", mt_sum_column(i), mt_nn_column(i));
		appendStringInfo(&unnest, ", pg_catalog.unnest($%d::pg_catalog.text[]), pg_catalog.unnest($%d::pg_catalog.text[])",
						 p + 1, p + 2);
		appendStringInfo(&names, ", s%d, n%d", i, i);
		appendStringInfo(&casts, ", u.s%d::%s, u.n%d::pg_catalog.int8", i,
						 format_type_be_qualified(d->sum_type), i);
		appendStringInfo(&sets, ", %s = s.%s + EXCLUDED.%s, %s = s.%s + EXCLUDED.%s",
						 mt_sum_column(i), mt_sum_column(i), mt_sum_column(i),
						 mt_nn_column(i), mt_nn_column(i), mt_nn_column(i));
		types[p] = TEXTARRAYOID;
		values[p++] = column_array(set->groups, set->ngroup, 0, false, i, true);
		types[p] = TEXTARRAYOID;
		values[p++] = column_array(set->groups, set->ngroup, 0, false, i, false);
		if (d->sum_type == NUMERICOID)
			appendStringInfo(&broken, " OR s.%s IN ('NaN'::pg_catalog.numeric, "
							 "'Infinity'::pg_catalog.numeric, '-Infinity'::pg_catalog.numeric)",
							 mt_sum_column(i));
		i++;
	}
	foreach(lc, a->aggs)
	{
		for (int j = 0; j < mt_delta_nscales(lfirst(lc)); j++)
		{
			char	   *col = mt_scale_column(foreach_current_index(lc), j);

			appendStringInfo(&cols, ", %s", col);
			appendStringInfo(&unnest, ", pg_catalog.unnest($%d::pg_catalog.int8[])", p + 1);
			appendStringInfo(&names, ", c%d", p);
			appendStringInfo(&casts, ", u.c%d", p);
			appendStringInfo(&sets, ", %s = s.%s + EXCLUDED.%s", col, col, col);
			types[p] = INT8ARRAYOID;
			values[p++] = scale_count_array(set->groups, set->sc_first[foreach_current_index(lc)] + j);
		}
	}
	/* a global aggregate's one row */
	if (conflict.len == 0)
		appendStringInfoString(&conflict, "(true)");

	/* the casts to the group columns' types are the owner's (a domain's checks) */
	mt_run_as_owner_begin(set->owner, &save_userid, &save_sec, &save_nestlevel);
	/* (read before the adjustments change the extrema) */
	if (set->next > 0)
		rereads = groups_to_reread(set, state, nreread);
	SPI_connect();
	MT_INTERNAL_BEGIN();
	if (SPI_execute_with_args(psprintf("INSERT INTO %s AS s (%s) SELECT %s FROM ROWS FROM (%s) AS u(%s) "
									   "ON CONFLICT (%s) DO UPDATE SET %s "
									   "RETURNING CASE WHEN s.__mt_rows = 0 AND %s THEN s.ctid END, "
									   "false%s",
									   state, cols.data, casts.data, unnest.data, names.data,
									   conflict.data, sets.data,
									   empty_deleted(set), broken.data),
							  nparams, types, values, NULL, false, 0) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not adjust the state of \"%s\"", get_rel_name(set->relid));
	/* groups that lost their last row (or came and went within the batch) */
	{
		Datum	   *empty = palloc(sizeof(Datum) * (SPI_processed + 1));
		int			nempty = 0;
		uint64		r;
		Oid			tidarray = TIDARRAYOID;
		Datum		arg;

		for (r = 0; r < SPI_processed; r++)
		{
			bool		isnull;
			Datum		tid = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1,
											&isnull);

			if (!isnull)
				empty[nempty++] = tid;
			if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2,
										   &isnull)))
				set->inexact = true;
		}
		arg = PointerGetDatum(construct_array(empty, nempty, TIDOID, sizeof(ItemPointerData),
											  false, TYPALIGN_SHORT));
		if (nempty > 0 &&
			SPI_execute_with_args(psprintf("DELETE FROM %s WHERE ctid = ANY ($1)", state),
								  1, &tidarray, &arg, NULL, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "could not adjust the state of \"%s\"", get_rel_name(set->relid));
	}
	MT_INTERNAL_END();
	SPI_finish();
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);

	if (set->ngroup == 0)
	{
		*whole = true;
		if (rereads != NIL)
			set->inexact = true;
		return NIL;
	}
	/*
	 * Of grouping sets, a group is re-read by its set's own query, which
	 * the filter of the table's rows cannot make: recomputed in full
	 */
	if (rereads != NIL && set->nsets > 0)
		set->inexact = true;
	else if (rereads != NIL)
		*reread = mt_deltas_groups_filter(set, rereads);
	return mt_deltas_touched_groups(set);
}

/* Has the table a hidden state, or is it its own (MtAnalysis.in_place)? */
bool
mt_deltas_has_state(Oid relid)
{
	return OidIsValid(mt_hidden_relid("state_", relid));
}
