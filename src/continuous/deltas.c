/*-------------------------------------------------------------------------
 *
 * src/continuous/deltas.c
 *	  The DELTAS strategy: hidden state, adjustments, and applying them.
 *
 * See mt/continuous/deltas.h.  Adjustments are computed in C from changed
 * rows: the query's WHERE clause and aggregate arguments are evaluated on
 * each row with the executor's expression machinery; sums are kept as
 * numeric, so they are exact.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/dependency.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "parser/parse_oper.h"
#include "storage/bufmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/commands/commands.h"
#include "mt/continuous/aggregates.h"
#include "mt/continuous/chain.h"
#include "mt/continuous/deltas.h"
#include "mt/catalog/marker.h"
#include "mt/materialized_table.h"
#include "mt/utils/row_cache.h"

/*
 * A lookup of a group's row through the table's key index costs about as
 * much as reading this many rows in a scan of the table (about 8 and 0.15
 * microseconds on the benchmark's machine): groups more than the table's
 * rows over this are found by one scan instead.
 */
#define SCAN_ROWS_PER_LOOKUP	50

/* a state of more groups is rebuilt without holding them in memory */
#define MAX_PARALLEL_GROUPS		1000000

/* one group's adjustments */
typedef struct DeltaGroup
{
	struct DeltaGroup *next;	/* same hash */
	char	  **values;			/* group columns as text, NULL for NULL: as
								 * first seen, the value a new group shows */
	char	  **keys;			/* the same, numerics normalized: to match */
	int64		rows;
	Datum	   *sums;			/* numeric */
	int64	   *nn;
	int64	   *sc;				/* values per display scale (see
								 * continuous/aggregates.c), all aggregates' */
} DeltaGroup;

typedef struct DeltaBucket
{
	uint32		hash;
	DeltaGroup *groups;
} DeltaBucket;

struct MtDeltaSet
{
	Oid			relid;
	Oid			owner;			/* the table's: its query's code runs as it */
	MtAnalysis *a;
	int			ngroup;
	int			nagg;
	int			nsc;			/* scale counts, of all aggregates */
	int		   *sc_first;		/* per aggregate, its first one */
	bool	   *group_numeric;	/* group columns whose text is normalized */
	bool		inexact;		/* a NaN or an infinity was summed, or a
								 * value of an unforeseen scale */
	MemoryContext context;
	MemoryContext scratch;		/* for one addition */
	/* evaluation over source rows */
	EState	   *estate;
	ExprContext *econtext;
	TupleTableSlot *slot;
	ExprState  *qual;
	ExprState **args;
	Oid		   *argtypes;
	ExprState **group_states;
	FmgrInfo   *group_out;
	/* the adjustments */
	HTAB	   *buckets;
	List	   *groups;			/* DeltaGroup, in arrival order */
	int64		nrows;
	bool		exact;			/* terms read with the active snapshot */
};

static char *
internal_name(const char *prefix, Oid relid)
{
	return quote_qualified_identifier(MT_INTERNAL_SCHEMA,
									  mt_hidden_name(psprintf("%s_", prefix), mt_catalog_id(relid)));
}

/*
 * The query's expressions (its WHERE clause, the aggregates' arguments,
 * and whatever functions, operators and casts they call) are the table
 * owner's code: they are prepared and evaluated as the owner, in a
 * security-restricted operation, as REFRESH MATERIALIZED VIEW runs them.
 * This is done per row, so it only switches the user: the search_path is
 * pinned by whoever runs the set (the worker, or a refresh).  An error in
 * between restores the user with the (sub)transaction.
 */
static void
as_owner_begin(MtDeltaSet *set, Oid *save_userid, int *save_sec)
{
	GetUserIdAndSecContext(save_userid, save_sec);
	SetUserIdAndSecContext(set->owner, *save_sec | SECURITY_RESTRICTED_OPERATION);
}

static void
as_owner_end(Oid save_userid, int save_sec)
{
	SetUserIdAndSecContext(save_userid, save_sec);
}

static Form_pg_attribute
named_column(TupleDesc desc, const char *name)
{
	int			i;

	for (i = 0; i < desc->natts; i++)
		if (strcmp(NameStr(TupleDescAttr(desc, i)->attname), name) == 0)
			return TupleDescAttr(desc, i);
	elog(ERROR, "column \"%s\" not found", name);
	return NULL;
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
		Form_pg_attribute att = named_column(vdesc, lfirst(lc));
		const char *name = quote_identifier(lfirst(lc));

		appendStringInfo(&cols, "%s %s, ", name,
						 mt_type_sql(att->atttypid, att->atttypmod));
		appendStringInfo(&keys, "%s%s", keys.len ? ", " : "", name);
	}
	/* a global aggregate's one row */
	if (keys.len == 0)
		appendStringInfoString(&keys, "(true)");
	appendStringInfoString(&cols, "__mt_rows bigint NOT NULL");
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);
		int			i = foreach_current_index(lc);

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
 * The state table's columns, for reading filters on group columns: the
 * table's own, when it is its own state.
 */
static TupleDesc
state_desc(Oid relid)
{
	Oid			stateid = mt_hidden_relid("state_", relid);
	Relation	state = table_open(OidIsValid(stateid) ? stateid : relid, AccessShareLock);
	TupleDesc	desc = CreateTupleDescCopy(RelationGetDescr(state));

	table_close(state, AccessShareLock);
	return desc;
}

/*
 * "r.<group column>, ..., <aggregates>" over the query's rows (the rows
 * query of the analysis, as r), in the state's column order after the
 * group columns: the row count, then per aggregate the sum of its argument
 * and the number of non-NULL arguments (count(*) keeps none: its count is
 * the row count).  Over adjustment rows (sign 0 in mt_deltas_add_joined),
 * each an update that changed only columns read as sums, set to new minus
 * old: those sums, and no rows or counts.
 */
static char *
state_aggregates(MtAnalysis *a, bool sums_as_numeric, bool adjustments)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, a->group_outputs)
		appendStringInfo(&buf, "r.%s, ", quote_identifier(lfirst(lc)));
	appendStringInfoString(&buf, adjustments ? "0::pg_catalog.int8" : "pg_catalog.count(*)");
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);
		char	   *arg = psprintf("r.__mt_arg_%d", foreach_current_index(lc) + 1);
		char	   *sum_type = format_type_be_qualified(sums_as_numeric ? NUMERICOID : d->sum_type);
		bool		summed = adjustments ?
			(d->kind == MT_AGG_SUM && d->arg_relid == a->delta_source &&
			 bms_is_member(d->arg_attnum, a->sum_only_columns)) :
			(d->kind == MT_AGG_SUM || d->kind == MT_AGG_AVG);

		if (summed)
			appendStringInfo(&buf, ", COALESCE(pg_catalog.sum(%s)::%s, 0)", arg, sum_type);
		else
			appendStringInfo(&buf, ", 0::%s", sum_type);
		if (d->kind == MT_AGG_COUNT_STAR || adjustments)
			appendStringInfoString(&buf, ", 0::pg_catalog.int8");
		else
			appendStringInfo(&buf, ", pg_catalog.count(%s)", arg);
	}
	/* then the numbers of values of each display scale */
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);
		char	   *arg = psprintf("r.__mt_arg_%d", foreach_current_index(lc) + 1);

		for (int j = 0; j < mt_delta_nscales(d); j++)
			if (adjustments)
				appendStringInfoString(&buf, ", 0::pg_catalog.int8");
			else
				appendStringInfo(&buf, ", pg_catalog.count(*) FILTER (WHERE pg_catalog.scale(%s) = %d)",
								 arg, list_nth_int(d->scales, j));
	}
	return buf.data;
}

static char *
group_by_positions(int ngroup)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 1; i <= ngroup; i++)
		appendStringInfo(&buf, "%s%d", i > 1 ? ", " : " GROUP BY ", i);
	return buf.data;
}

/*
 * Insert the rows of the last SPI result into the state table, one array
 * parameter per column.
 */
static void
insert_result(const char *state, Oid relid)
{
	SPITupleTable *result = SPI_tuptable;
	uint64		n = SPI_processed;
	TupleDesc	desc = result->tupdesc;
	Oid		   *types = palloc(sizeof(Oid) * (desc->natts + 1));
	Datum	   *arrays = palloc(sizeof(Datum) * (desc->natts + 1));
	StringInfoData unnest;
	int			c;

	if (n == 0)
		return;
	initStringInfo(&unnest);
	for (c = 0; c < desc->natts; c++)
	{
		Oid			type = TupleDescAttr(desc, c)->atttypid;
		Datum	   *elems = palloc(sizeof(Datum) * n);
		bool	   *nulls = palloc(sizeof(bool) * n);
		int			dims[1] = {(int) n};
		int			lbs[1] = {1};
		int16		typlen;
		bool		typbyval;
		char		typalign;
		uint64		r;

		for (r = 0; r < n; r++)
			elems[r] = SPI_getbinval(result->vals[r], desc, c + 1, &nulls[r]);
		get_typlenbyvalalign(type, &typlen, &typbyval, &typalign);
		types[c] = get_array_type(type);
		arrays[c] = PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, type, typlen,
													   typbyval, typalign));
		appendStringInfo(&unnest, "%spg_catalog.unnest($%d)", c > 0 ? ", " : "", c + 1);
	}
	if (SPI_execute_with_args(psprintf("INSERT INTO %s SELECT * FROM ROWS FROM (%s)",
									   state, unnest.data),
							  desc->natts, types, arrays, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not rebuild the state of \"%s\"", get_rel_name(relid));
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
	TupleDesc	desc = state_desc(relid);
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
	select = psprintf("SELECT %s FROM (%s) r%s%s", state_aggregates(a, false, false), a->rows_sql,
					  where_rows, group_by_positions(list_length(a->group_outputs)));

	SPI_connect();
	mt_internal_depth++;
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
		insert_result(state, relid);
	mt_internal_depth--;
	SPI_finish();
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
}

/* ---------------------------------------------------------------------
 * Adjustments
 * ---------------------------------------------------------------------
 */

MtDeltaSet *
mt_deltas_begin(Oid relid, MtAnalysis *a)
{
	MtDeltaSet *set = palloc0(sizeof(MtDeltaSet));
	MemoryContext old;
	Relation	source;
	HASHCTL		ctl;
	ListCell   *lc;
	int			i;
	Oid			save_userid;
	int			save_sec;

	set->relid = relid;
	set->owner = a->owner;
	set->a = a;
	set->ngroup = list_length(a->group_exprs);
	set->nagg = list_length(a->aggs);
	set->context = AllocSetContextCreate(CurrentMemoryContext, "materialized_table deltas",
										 ALLOCSET_DEFAULT_SIZES);
	set->scratch = AllocSetContextCreate(set->context, "materialized_table deltas scratch",
										 ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(set->context);
	set->sc_first = palloc(sizeof(int) * (set->nagg + 1));
	foreach(lc, a->aggs)
	{
		set->sc_first[foreach_current_index(lc)] = set->nsc;
		set->nsc += mt_delta_nscales(lfirst(lc));
	}
	set->group_numeric = palloc(sizeof(bool) * (set->ngroup + 1));
	foreach(lc, a->group_exprs)
		set->group_numeric[foreach_current_index(lc)] =
			exprType(lfirst(lc)) == NUMERICOID && exprTypmod(lfirst(lc)) < 0;
	ctl.keysize = sizeof(uint32);
	ctl.entrysize = sizeof(DeltaBucket);
	ctl.hcxt = set->context;
	set->buckets = hash_create("materialized_table delta groups", 256, &ctl,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	if (a->delta_join)
	{
		/* rows come through the join, in SQL (mt_deltas_add_joined) */
		MemoryContextSwitchTo(old);
		return set;
	}

	/*
	 * The source's row layout, without a lock: this may run inside logical
	 * decoding (rows folded as they are decoded), which must not wait for
	 * DDL another session holds on the source.
	 */
	source = RelationIdGetRelation(a->delta_source);
	if (!RelationIsValid(source))
		elog(ERROR, "could not open relation with OID %u", a->delta_source);
	set->estate = CreateExecutorState();
	set->econtext = GetPerTupleExprContext(set->estate);
	set->slot = MakeSingleTupleTableSlot(CreateTupleDescCopy(RelationGetDescr(source)),
										 &TTSOpsHeapTuple);
	RelationClose(source);

	/* preparing folds constants: it may run the owner's functions */
	as_owner_begin(set, &save_userid, &save_sec);
	if (a->delta_quals)
		set->qual = ExecPrepareQual(make_ands_implicit((Expr *) a->delta_quals), set->estate);
	set->args = palloc0(sizeof(ExprState *) * (set->nagg + 1));
	set->argtypes = palloc0(sizeof(Oid) * (set->nagg + 1));
	i = 0;
	foreach(lc, a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);

		if (d->arg)
		{
			set->args[i] = ExecPrepareExpr(d->arg, set->estate);
			set->argtypes[i] = exprType((Node *) d->arg);
		}
		i++;
	}
	set->group_states = palloc(sizeof(ExprState *) * (set->ngroup + 1));
	set->group_out = palloc(sizeof(FmgrInfo) * (set->ngroup + 1));
	foreach(lc, a->group_exprs)
	{
		Oid			typoutput;
		bool		varlena;

		i = foreach_current_index(lc);
		set->group_states[i] = ExecPrepareExpr(lfirst(lc), set->estate);
		getTypeOutputInfo(exprType(lfirst(lc)), &typoutput, &varlena);
		fmgr_info(typoutput, &set->group_out[i]);
	}
	as_owner_end(save_userid, save_sec);
	MemoryContextSwitchTo(old);
	return set;
}

static Datum
numeric_zero(void)
{
	return DirectFunctionCall1(int8_numeric, Int64GetDatum(0));
}

/* The group of these values, created (with zero adjustments) if new. */
static DeltaGroup *
find_group(MtDeltaSet *set, char **values)
{
	uint32		hash = 0;
	DeltaBucket *bucket;
	DeltaGroup *g;
	MemoryContext old;
	bool		found;
	char	  **keys = palloc(sizeof(char *) * (set->ngroup + 1));
	int			i;

	/*
	 * Equal numerics of other scales are one group (1.0 = 1.00); a new
	 * group shows its first value as it came, as the query shows one of its
	 * values
	 */
	for (i = 0; i < set->ngroup; i++)
		keys[i] = (set->group_numeric[i] && values[i]) ?
			numeric_normalize(DatumGetNumeric(DirectFunctionCall3(numeric_in,
																  CStringGetDatum(values[i]),
																  ObjectIdGetDatum(InvalidOid),
																  Int32GetDatum(-1)))) :
			values[i];
	for (i = 0; i < set->ngroup; i++)
		hash = hash_combine(hash, keys[i] ? hash_bytes((unsigned char *) keys[i],
													   strlen(keys[i])) : 0x7f4a7c15);
	bucket = hash_search(set->buckets, &hash, HASH_ENTER, &found);
	if (!found)
		bucket->groups = NULL;
	for (g = bucket->groups; g; g = g->next)
	{
		for (i = 0; i < set->ngroup; i++)
		{
			if ((g->keys[i] == NULL) != (keys[i] == NULL))
				break;
			if (keys[i] && strcmp(g->keys[i], keys[i]) != 0)
				break;
		}
		if (i == set->ngroup)
			return g;
	}
	old = MemoryContextSwitchTo(set->context);
	g = palloc0(sizeof(DeltaGroup));
	g->values = palloc(sizeof(char *) * (set->ngroup + 1));
	g->keys = palloc(sizeof(char *) * (set->ngroup + 1));
	for (i = 0; i < set->ngroup; i++)
	{
		g->values[i] = values[i] ? pstrdup(values[i]) : NULL;
		g->keys[i] = keys[i] == values[i] ? g->values[i] : pstrdup(keys[i]);
	}
	g->sums = palloc(sizeof(Datum) * (set->nagg + 1));
	g->nn = palloc0(sizeof(int64) * (set->nagg + 1));
	g->sc = palloc0(sizeof(int64) * (set->nsc + 1));
	for (i = 0; i < set->nagg; i++)
		g->sums[i] = numeric_zero();
	g->next = bucket->groups;
	bucket->groups = g;
	set->groups = lappend(set->groups, g);
	MemoryContextSwitchTo(old);
	return g;
}

/*
 * Add (sign 1) or subtract (sign -1) a numeric to a group's sum.  The new
 * sum replaces the old one in the set's memory: a set that folds millions
 * of rows grows with its groups only.
 */
static void
add_to_sum(MtDeltaSet *set, DeltaGroup *g, int agg, Datum value, int sign)
{
	MemoryContext old = MemoryContextSwitchTo(set->scratch);
	Datum		sum = DirectFunctionCall2(sign > 0 ? numeric_add : numeric_sub,
										  g->sums[agg], value);

	MemoryContextSwitchTo(set->context);
	pfree(DatumGetPointer(g->sums[agg]));
	g->sums[agg] = datumCopy(sum, false, -1);
	MemoryContextSwitchTo(old);
	MemoryContextReset(set->scratch);
}

/*
 * Count a summed value by its display scale, if its aggregate counts them;
 * a NaN or an infinity cannot be taken back out of a sum: the table is
 * recomputed instead (mt_deltas_inexact).
 */
static void
count_scale(MtDeltaSet *set, DeltaGroup *g, int agg, Datum value, int sign)
{
	MtDeltaAgg *d = list_nth(set->a->aggs, agg);
	int			scale;
	ListCell   *lc;

	if (numeric_is_nan(DatumGetNumeric(value)) || numeric_is_inf(DatumGetNumeric(value)))
	{
		set->inexact = true;
		return;
	}
	if (d->scales == NIL)
		return;
	scale = DatumGetInt32(DirectFunctionCall1(numeric_scale, value));
	foreach(lc, d->scales)
		if (lfirst_int(lc) == scale)
		{
			if (mt_delta_nscales(d) > 0)
				g->sc[set->sc_first[agg] + foreach_current_index(lc)] += sign;
			return;
		}
	set->inexact = true;
}

static Datum
to_numeric(Datum value, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DirectFunctionCall1(int2_numeric, value);
		case INT4OID:
			return DirectFunctionCall1(int4_numeric, value);
		case INT8OID:
			return DirectFunctionCall1(int8_numeric, value);
		default:
			return value;
	}
}

/*
 * mt_deltas_add_row
 *		A source row (in the source table's column layout) that was added
 *		(sign 1) or removed (sign -1).
 */
void
mt_deltas_add_row(MtDeltaSet *set, HeapTuple tuple, int sign)
{
	ExprContext *econtext = set->econtext;
	MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	char	  **values = palloc(sizeof(char *) * (set->ngroup + 1));
	DeltaGroup *g;
	int			i;
	Oid			save_userid;
	int			save_sec;

	ExecStoreHeapTuple(tuple, set->slot, false);
	econtext->ecxt_scantuple = set->slot;
	as_owner_begin(set, &save_userid, &save_sec);
	if (set->qual && !ExecQual(set->qual, econtext))
	{
		as_owner_end(save_userid, save_sec);
		MemoryContextSwitchTo(old);
		ResetExprContext(econtext);
		return;
	}
	for (i = 0; i < set->ngroup; i++)
	{
		bool		isnull;
		Datum		d = ExecEvalExprSwitchContext(set->group_states[i], econtext, &isnull);

		values[i] = isnull ? NULL : OutputFunctionCall(&set->group_out[i], d);
	}
	g = find_group(set, values);
	g->rows += sign;
	for (i = 0; i < set->nagg; i++)
	{
		MtDeltaAgg *d = list_nth(set->a->aggs, i);
		bool		isnull;
		Datum		v;

		if (set->args[i] == NULL)
			continue;
		v = ExecEvalExprSwitchContext(set->args[i], econtext, &isnull);
		if (isnull)
			continue;
		g->nn[i] += sign;
		if (d->kind == MT_AGG_COUNT)
			continue;
		v = to_numeric(v, set->argtypes[i]);
		count_scale(set, g, i, v, sign);
		add_to_sum(set, g, i, v, sign);
	}
	as_owner_end(save_userid, save_sec);
	set->nrows++;
	MemoryContextSwitchTo(old);
	ResetExprContext(econtext);
	ExecClearTuple(set->slot);
}

/*
 * An array of rows of relid (tuples in its column layout), for a term's
 * parameter.
 */
static Datum
rows_array(Oid relid, List *tuples, Oid *arraytype)
{
	Oid			rowtype = get_rel_type_id(relid);
	Datum	   *rows = palloc(sizeof(Datum) * (list_length(tuples) + 1));
	Relation	source = table_open(relid, AccessShareLock);
	TupleDesc	sdesc = RelationGetDescr(source);
	int16		typlen;
	bool		typbyval;
	char		typalign;
	ListCell   *lc;
	int			n = 0;

	foreach(lc, tuples)
		rows[n++] = heap_copy_tuple_as_datum(lfirst(lc), sdesc);
	table_close(source, AccessShareLock);
	get_typlenbyvalalign(rowtype, &typlen, &typbyval, &typalign);
	*arraytype = get_array_type(rowtype);
	return PointerGetDatum(construct_array(rows, n, rowtype, typlen, typbyval, typalign));
}

/*
 * mt_deltas_add_term
 *		One term of the delta rule: the rows query sql with nsets sources
 *		replaced by sets of their changed rows ($1, $2: tuples[i] of
 *		relids[i], in their column layouts), counted factor times (1 or -1);
 *		with adjustments, the first set are adjustment rows (sign 0, see
 *		state_aggregates).  Groups the filter exclude names get nothing from
 *		it.  With set->exact, the other sources are read with the active
 *		snapshot (continuous/snapshot.c), else as they are now.
 */
void
mt_deltas_add_term(MtDeltaSet *set, const char *term_sql, int nsets, Oid *relids,
				   List **tuples, int factor, bool adjustments, List *exclude)
{
	MtAnalysis *a = set->a;
	TupleDesc	desc = state_desc(set->relid);
	Oid		   *ftypes;
	Datum	   *fvalues;
	ParamListInfo fparams;
	int			nfilter;
	Oid		   *types;
	Datum	   *values;
	uint64		r;
	char	   *sql;
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;

	for (int i = 0; i < nsets; i++)
		if (tuples[i] == NIL)
			return;
	mt_run_as_owner_begin(set->owner, &save_userid, &save_sec, &save_nestlevel);
	nfilter = mt_filter_params(exclude, desc, &ftypes, &fvalues, &fparams);
	types = palloc(sizeof(Oid) * (nfilter + nsets));
	values = palloc(sizeof(Datum) * (nfilter + nsets));
	for (int i = 0; i < nsets; i++)
		values[i] = rows_array(relids[i], tuples[i], &types[i]);
	memcpy(types + nsets, ftypes, sizeof(Oid) * nfilter);
	memcpy(values + nsets, fvalues, sizeof(Datum) * nfilter);

	sql = psprintf("SELECT %s FROM (%s) r%s%s",
				   state_aggregates(a, true, adjustments), term_sql,
				   exclude ? psprintf(" WHERE (%s) IS NOT TRUE",
									  mt_filter_condition(exclude, "r", desc, ftypes, nsets)) : "",
				   group_by_positions(set->ngroup));

	/* a few thousand changed rows, joined with tables mostly in memory */
	mt_favour_index_lookups();
	SPI_connect();
	if (SPI_execute_with_args(sql, nfilter + nsets, types, values, NULL, set->exact, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not join the changed rows of \"%s\"", get_rel_name(relids[0]));
	for (r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	rdesc = SPI_tuptable->tupdesc;
		MemoryContext old = MemoryContextSwitchTo(set->context);
		char	  **group = palloc(sizeof(char *) * (set->ngroup + 1));
		DeltaGroup *g;
		bool		isnull;
		int			i;

		for (i = 0; i < set->ngroup; i++)
			group[i] = SPI_getvalue(tup, rdesc, i + 1);
		g = find_group(set, group);
		g->rows += factor * DatumGetInt64(SPI_getbinval(tup, rdesc, set->ngroup + 1, &isnull));
		for (i = 0; i < set->nagg; i++)
		{
			Datum		sum = SPI_getbinval(tup, rdesc, set->ngroup + 2 + 2 * i, &isnull);

			if (numeric_is_nan(DatumGetNumeric(sum)) || numeric_is_inf(DatumGetNumeric(sum)))
				set->inexact = true;
			add_to_sum(set, g, i, sum, factor);
			g->nn[i] += factor * DatumGetInt64(SPI_getbinval(tup, rdesc, set->ngroup + 3 + 2 * i,
															 &isnull));
		}
		for (i = 0; i < set->nsc; i++)
			g->sc[i] += factor * DatumGetInt64(SPI_getbinval(tup, rdesc,
															 set->ngroup + 2 + 2 * set->nagg + i,
															 &isnull));
		MemoryContextSwitchTo(old);
	}
	for (int i = 0; i < nsets; i++)
		set->nrows += list_length(tuples[i]);
	SPI_finish();
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
}

/*
 * mt_deltas_set_exact
 *		Read the joined sources of the terms with the active snapshot.
 */
void
mt_deltas_set_exact(MtDeltaSet *set, bool exact)
{
	set->exact = exact;
}

/*
 * mt_deltas_add_joined
 *		Rows of the delta source (in its column layout) that were added
 *		(sign 1) or removed (sign -1), or that adjust sums (sign 0, see
 *		state_aggregates), joined with the other sources.
 */
void
mt_deltas_add_joined(MtDeltaSet *set, List *tuples, int sign, List *exclude)
{
	mt_deltas_add_term(set, set->a->changes_sql, 1, &set->a->delta_source, &tuples,
					   sign == 0 ? 1 : sign, sign == 0, exclude);
}

/*
 * mt_deltas_add_logged
 *		Adjustments kept in change_deltas: keys as text, deltas as text
 *		(rows, then sum and count of each aggregate).
 */
void
mt_deltas_add_logged(MtDeltaSet *set, List *keys, List *deltas)
{
	MemoryContext old = MemoryContextSwitchTo(set->context);
	char	  **values = palloc(sizeof(char *) * (set->ngroup + 1));
	DeltaGroup *g;
	int			i;

	for (i = 0; i < set->ngroup; i++)
		values[i] = list_nth(keys, i);
	g = find_group(set, values);
	g->rows += pg_strtoint64(list_nth(deltas, 0));
	for (i = 0; i < set->nagg; i++)
	{
		add_to_sum(set, g, i, DirectFunctionCall3(numeric_in,
												  CStringGetDatum(list_nth(deltas, 1 + 2 * i)),
												  ObjectIdGetDatum(InvalidOid),
												  Int32GetDatum(-1)), 1);
		g->nn[i] += pg_strtoint64(list_nth(deltas, 2 + 2 * i));
	}
	for (i = 0; i < set->nsc; i++)
		g->sc[i] += pg_strtoint64(list_nth(deltas, 1 + 2 * set->nagg + i));
	set->nrows++;
	MemoryContextSwitchTo(old);
}

/*
 * mt_deltas_merge
 *		Add the adjustments of src to those of set (same table).
 */
void
mt_deltas_merge(MtDeltaSet *set, MtDeltaSet *src)
{
	ListCell   *lc;

	foreach(lc, src->groups)
	{
		DeltaGroup *s = lfirst(lc);
		DeltaGroup *g = find_group(set, s->values);
		int			i;

		g->rows += s->rows;
		for (i = 0; i < set->nagg; i++)
		{
			g->nn[i] += s->nn[i];
			add_to_sum(set, g, i, s->sums[i], 1);
		}
		for (i = 0; i < set->nsc; i++)
			g->sc[i] += s->sc[i];
	}
	set->nrows += src->nrows;
	set->inexact |= src->inexact;
}

/* The number of groups the set adjusts. */
int64
mt_deltas_ngroups(MtDeltaSet *set)
{
	return list_length(set->groups);
}

static char *
numeric_text(Datum n)
{
	return DatumGetCString(DirectFunctionCall1(numeric_out, n));
}

/*
 * mt_deltas_log
 *		Keep the adjustments for later (table suspended or not due).
 */
void
mt_deltas_log(MtDeltaSet *set)
{
	Oid			types[3] = {OIDOID, TEXTARRAYOID, TEXTARRAYOID};
	SPIPlanPtr	plan;
	ListCell   *lc;

	if (set->groups == NIL)
		return;
	SPI_connect();
	plan = SPI_prepare("INSERT INTO materialized_table_internal.change_deltas (relid, keys, deltas) "
					   "VALUES ($1, $2, $3)", 3, types);
	foreach(lc, set->groups)
	{
		DeltaGroup *g = lfirst(lc);
		Datum	   *keys = palloc(sizeof(Datum) * (set->ngroup + 1));
		bool	   *knulls = palloc(sizeof(bool) * (set->ngroup + 1));
		Datum	   *deltas = palloc(sizeof(Datum) * (1 + 2 * set->nagg + set->nsc));
		Datum		values[3];
		int			dims[1];
		int			lbs[1] = {1};
		int			i;

		for (i = 0; i < set->ngroup; i++)
		{
			knulls[i] = (g->values[i] == NULL);
			keys[i] = knulls[i] ? (Datum) 0 : CStringGetTextDatum(g->values[i]);
		}
		deltas[0] = CStringGetTextDatum(psprintf(INT64_FORMAT, g->rows));
		for (i = 0; i < set->nagg; i++)
		{
			deltas[1 + 2 * i] = CStringGetTextDatum(numeric_text(g->sums[i]));
			deltas[2 + 2 * i] = CStringGetTextDatum(psprintf(INT64_FORMAT, g->nn[i]));
		}
		for (i = 0; i < set->nsc; i++)
			deltas[1 + 2 * set->nagg + i] = CStringGetTextDatum(psprintf(INT64_FORMAT, g->sc[i]));
		values[0] = ObjectIdGetDatum(set->relid);
		dims[0] = set->ngroup;
		values[1] = PointerGetDatum(construct_md_array(keys, knulls, 1, dims, lbs, TEXTOID,
													   -1, false, TYPALIGN_INT));
		values[2] = PointerGetDatum(construct_array(deltas, 1 + 2 * set->nagg + set->nsc,
													TEXTOID, -1, false, TYPALIGN_INT));
		if (SPI_execute_plan(plan, values, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not keep the adjustments of \"%s\"", get_rel_name(set->relid));
	}
	SPI_finish();
}

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
			elems[i] = CStringGetTextDatum(numeric_text(g->sums[agg]));
		else
			elems[i] = CStringGetTextDatum(psprintf(INT64_FORMAT, g->nn[agg]));
		i++;
	}
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, TEXTOID, -1, false,
											  TYPALIGN_INT));
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

/* A filter family of one column per group column, values appended below. */
static MtFilterFamily *
group_family(MtDeltaSet *set, bool rowwise)
{
	MtFilterFamily *family = palloc0(sizeof(MtFilterFamily));
	ListCell   *lc;

	family->rowwise = rowwise;
	foreach(lc, set->a->group_outputs)
	{
		MtFilterColumn *col = palloc0(sizeof(MtFilterColumn));

		col->name = lfirst(lc);
		family->columns = lappend(family->columns, col);
	}
	return family;
}

/*
 * The groups of the set as a filter.  With several group columns, the
 * groups are matched row by row: matching each column's values alone would
 * take in every combination of them -- with GROUP BY day, region, a few
 * changed rows would name every region of every day they touch.  A group
 * with a NULL column is a family of its own (row matching has no NULLs).
 */
static List *
touched_groups(MtDeltaSet *set)
{
	MtFilterFamily *rows = group_family(set, set->ngroup > 1);
	List	   *filter = list_make1(rows);
	ListCell   *lg;
	int			i;

	foreach(lg, set->groups)
	{
		DeltaGroup *g = lfirst(lg);
		MtFilterFamily *family = rows;

		for (i = 0; i < set->ngroup && rows->rowwise; i++)
			if (g->values[i] == NULL)
			{
				family = group_family(set, false);
				filter = lappend(filter, family);
				break;
			}
		for (i = 0; i < set->ngroup; i++)
		{
			MtFilterColumn *col = list_nth(family->columns, i);

			if (g->values[i] == NULL)
				col->has_null = true;
			else
				col->values = lappend(col->values, g->values[i]);
		}
	}
	if (list_length(((MtFilterColumn *) linitial(rows->columns))->values) == 0 &&
		!((MtFilterColumn *) linitial(rows->columns))->has_null)
		filter = list_delete_first(filter);
	return filter;
}

/*
 * mt_deltas_apply
 *		Add the adjustments to the state; return the filter of the groups
 *		they touched, for refreshing the table from the derived view, or
 *		set *whole when the table's one row is to be (a global aggregate).
 *		A sum that is NaN or infinite now makes the set inexact.
 */
List *
mt_deltas_apply(MtDeltaSet *set, bool *whole)
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
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;

	*whole = false;
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
		Form_pg_attribute att = named_column(vdesc, lfirst(lc));
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
	SPI_connect();
	mt_internal_depth++;
	if (SPI_execute_with_args(psprintf("INSERT INTO %s AS s (%s) SELECT %s FROM ROWS FROM (%s) AS u(%s) "
									   "ON CONFLICT (%s) DO UPDATE SET %s "
									   "RETURNING CASE WHEN s.__mt_rows = 0 AND %s THEN s.ctid END, "
									   "false%s",
									   state, cols.data, casts.data, unnest.data, names.data,
									   conflict.data, sets.data,
									   set->ngroup > 0 ? "true" : "false", broken.data),
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
	mt_internal_depth--;
	SPI_finish();
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);

	if (set->ngroup == 0)
	{
		*whole = true;
		return NIL;
	}
	return touched_groups(set);
}

/* ---------------------------------------------------------------------
 * The table's own rows as the state (MtAnalysis.in_place)
 * ---------------------------------------------------------------------
 */

bool
mt_deltas_has_state(Oid relid)
{
	return OidIsValid(mt_hidden_relid("state_", relid));
}

/*
 * mt_deltas_saw_null_sum
 *		Did a changed row bring a NULL to a sum kept in the table's own
 *		rows?  Their sums rest on their arguments' NOT NULL constraints;
 *		one dropped since, the table needs the hidden counts after all.
 */
bool
mt_deltas_saw_null_sum(MtDeltaSet *set)
{
	ListCell   *lc;

	foreach(lc, set->groups)
	{
		DeltaGroup *g = lfirst(lc);

		for (int i = 0; i < set->nagg; i++)
			if (((MtDeltaAgg *) list_nth(set->a->aggs, i))->kind == MT_AGG_SUM &&
				g->nn[i] != g->rows)
				return true;
	}
	return false;
}

/*
 * mt_deltas_inexact
 *		Can the adjustments not be trusted (see MtDeltaSet.inexact)?  The
 *		table is then recomputed.
 */
bool
mt_deltas_inexact(MtDeltaSet *set)
{
	return set->inexact;
}

/*
 * Does the group's adjustment change nothing (rows changed outside the
 * query's columns)?  zero is a numeric 0.
 */
static bool
idle_group(MtDeltaSet *set, DeltaGroup *g, Datum zero)
{
	if (g->rows != 0)
		return false;
	for (int i = 0; i < set->nsc; i++)
		if (g->sc[i] != 0)
			return false;
	for (int i = 0; i < set->nagg; i++)
		if (g->nn[i] != 0 ||
			!DatumGetBool(DirectFunctionCall2(numeric_eq, g->sums[i], zero)))
			return false;
	return true;
}

/* An int8[] of the groups' row counts (agg < 0) or non-NULL counts, or a numeric[] of sums. */
static Datum
adjustment_array(List *groups, int agg, bool sums)
{
	int			n = list_length(groups);
	Datum	   *elems = palloc(sizeof(Datum) * (n + 1));
	ListCell   *lc;

	foreach(lc, groups)
	{
		DeltaGroup *g = lfirst(lc);

		elems[foreach_current_index(lc)] = agg < 0 ? Int64GetDatum(g->rows) :
			sums ? g->sums[agg] : Int64GetDatum(g->nn[agg]);
	}
	return sums ? PointerGetDatum(construct_array(elems, n, NUMERICOID, -1, false, TYPALIGN_INT)) :
		PointerGetDatum(construct_array(elems, n, INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
										TYPALIGN_DOUBLE));
}

/*
 * The MERGE adding the adjustments of groups that have NULL in the same
 * group columns (nulls) to the table's rows, and its parameters: the
 * groups' other columns as text[], then the row counts and each
 * aggregate's sums or counts.  A matched group whose row count falls to
 * zero is deleted, an unmatched one with rows inserted.
 */
static char *
in_place_merge(MtDeltaSet *set, Relation rel, List *groups, Bitmapset *nulls,
			   int *nparams, Oid *types, Datum *values)
{
	TupleDesc	desc = RelationGetDescr(rel);
	StringInfoData cols;
	StringInfoData unnest;
	StringInfoData names;
	StringInfoData on;
	StringInfoData sets;
	StringInfoData icols;
	StringInfoData ivals;
	const char *rows_column = NULL;
	ListCell   *lc;
	int			p = 0;

	initStringInfo(&cols);
	initStringInfo(&unnest);
	initStringInfo(&names);
	initStringInfo(&on);
	initStringInfo(&sets);
	initStringInfo(&icols);
	initStringInfo(&ivals);
	foreach(lc, set->a->group_outputs)
	{
		int			i = foreach_current_index(lc);
		const char *name = quote_identifier(lfirst(lc));
		Form_pg_attribute att = named_column(desc, lfirst(lc));

		appendStringInfo(&on, "%s", i > 0 ? " AND " : "");
		appendStringInfo(&icols, "%s%s", i > 0 ? ", " : "", name);
		if (bms_is_member(i, nulls))
		{
			appendStringInfo(&on, "m.%s IS NULL", name);
			appendStringInfo(&ivals, "%sNULL", i > 0 ? ", " : "");
			continue;
		}
		appendStringInfo(&on, "m.%s %s d.__mt_k%d", name, mt_equality_sql(att->atttypid), i);
		appendStringInfo(&ivals, "%sd.__mt_k%d", i > 0 ? ", " : "", i);
		appendStringInfo(&cols, "u.k%d::%s AS __mt_k%d, ", i,
						 mt_type_sql(att->atttypid, att->atttypmod),
						 i);
		appendStringInfo(&unnest, "pg_catalog.unnest($%d::pg_catalog.text[]), ", p + 1);
		appendStringInfo(&names, "k%d, ", i);
		types[p] = TEXTARRAYOID;
		values[p++] = column_array(groups, set->ngroup, i, true, 0, false);
	}
	appendStringInfoString(&cols, "u.r AS __mt_r");
	appendStringInfo(&unnest, "pg_catalog.unnest($%d::pg_catalog.int8[])", p + 1);
	appendStringInfoString(&names, "r");
	types[p] = INT8ARRAYOID;
	values[p++] = adjustment_array(groups, -1, false);
	foreach(lc, set->a->aggs)
	{
		MtDeltaAgg *d = lfirst(lc);
		int			i = foreach_current_index(lc);
		const char *name = quote_identifier(d->output);
		char	   *adjustment;

		if (d->kind == MT_AGG_COUNT_STAR)
		{
			adjustment = "d.__mt_r";
			rows_column = rows_column ? rows_column : name;
		}
		else
		{
			bool		sums = (d->kind == MT_AGG_SUM);

			adjustment = psprintf("d.__mt_a%d", i);
			appendStringInfo(&cols, ", u.a%d::%s AS __mt_a%d", i,
							 format_type_be_qualified(d->output_type), i);
			appendStringInfo(&unnest, ", pg_catalog.unnest($%d::pg_catalog.%s[])", p + 1,
							 sums ? "numeric" : "int8");
			appendStringInfo(&names, ", a%d", i);
			types[p] = sums ? NUMERICARRAYOID : INT8ARRAYOID;
			values[p++] = adjustment_array(groups, i, sums);
		}
		appendStringInfo(&sets, "%s%s = m.%s + %s", i > 0 ? ", " : "", name, name, adjustment);
		appendStringInfo(&icols, ", %s", name);
		appendStringInfo(&ivals, ", %s", adjustment);
	}
	*nparams = p;
	return psprintf("MERGE INTO %s m USING (SELECT %s FROM ROWS FROM (%s) u(%s)) d ON %s "
					"WHEN MATCHED AND m.%s + d.__mt_r <= 0 THEN DELETE "
					"WHEN MATCHED THEN UPDATE SET %s "
					"WHEN NOT MATCHED AND d.__mt_r > 0 THEN INSERT (%s) VALUES (%s)",
					mt_qualified_name(set->relid), cols.data, unnest.data, names.data, on.data,
					rows_column, sets.data, icols.data, ivals.data);
}

/*
 * A valid, plain btree index of rel on exactly the columns keys (attnums,
 * in any order), without expressions or predicate; InvalidOid if none.
 */
static Oid
key_index(Relation rel, List *keys)
{
	List	   *indexes = RelationGetIndexList(rel);
	Oid			found = InvalidOid;
	ListCell   *lc;

	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index form = index->rd_index;
		bool		fits = index->rd_rel->relam == BTREE_AM_OID && form->indisvalid &&
			form->indisready && form->indislive && form->indnkeyatts == list_length(keys) &&
			heap_attisnull(index->rd_indextuple, Anum_pg_index_indexprs, NULL) &&
			heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL);

		for (int i = 0; fits && i < form->indnkeyatts; i++)
			fits = list_member_int(keys, form->indkey.values[i]);
		index_close(index, AccessShareLock);
		if (fits)
		{
			found = lfirst_oid(lc);
			break;
		}
	}
	list_free(indexes);
	return found;
}

/*
 * How one result column of an aggregate is adjusted: its value plus the
 * adjustment (the group's row count, non-NULL count or sum) converted to
 * the column's type.
 */
typedef struct AggColumn
{
	AttrNumber	attno;
	FmgrInfo	plus;			/* the column type's + */
	FmgrInfo	convert;		/* adjustment -> column type, if needed */
	bool		converts;
	int			convert_args;
} AggColumn;

/*
 * Fill col for a column of type type adjusted by values of type from;
 * false if PostgreSQL has no + for the type or no cast that is a function
 * or binary coercible.
 */
static bool
agg_column(AggColumn *col, AttrNumber attno, Oid type, Oid from)
{
	Oid			plus = LookupOperName(NULL, list_make2(makeString("pg_catalog"), makeString("+")),
									  type, type, true, -1);
	Oid			func = InvalidOid;

	col->attno = attno;
	col->converts = false;
	if (!OidIsValid(plus))
		return false;
	fmgr_info(get_opcode(plus), &col->plus);
	if (type == from)
		return true;
	switch (find_coercion_pathway(type, from, COERCION_EXPLICIT, &func))
	{
		case COERCION_PATH_RELABELTYPE:
			return true;
		case COERCION_PATH_FUNC:
			fmgr_info(func, &col->convert);
			col->converts = true;
			col->convert_args = get_func_nargs(func);
			return true;
		default:
			return false;
	}
}

/* What the group adds to aggregate agg's column: rows, non-NULL count or sum. */
static Datum
group_adjustment(MtDeltaSet *set, DeltaGroup *g, int agg)
{
	MtAggKind	kind = ((MtDeltaAgg *) list_nth(set->a->aggs, agg))->kind;

	return kind == MT_AGG_COUNT_STAR ? Int64GetDatum(g->rows) :
		kind == MT_AGG_SUM ? g->sums[agg] : Int64GetDatum(g->nn[agg]);
}

static Datum
converted(AggColumn *col, Datum value, int32 typmod)
{
	if (!col->converts)
		return value;
	if (col->convert_args == 1)
		return FunctionCall1(&col->convert, value);
	return FunctionCall3(&col->convert, value, Int32GetDatum(typmod), BoolGetDatum(true));
}

/*
 * Adjusting the table's rows one by one, without a statement: what
 * in_place_merge's MERGE does, without planning it, unnesting arrays and
 * joining them (most of its cost at a few thousand groups).  Rows are
 * updated, deleted and inserted through the executor's routines for
 * logical replication (constraints, index entries, statistics).
 */
typedef struct DirectApply
{
	MtDeltaSet *set;
	TupleDesc	desc;
	AttrNumber *group_attno;	/* group column -> the table's column */
	AttrNumber	last_group_attno;	/* the last of them in the table */
	AggColumn  *aggs;			/* aggregate -> how its column is adjusted */
	AttrNumber	rows_attno;		/* a count(*) column */
	DeltaGroup **groups;
	Datum	  **keyvals;		/* per group, its values as the table's types */
	bool	  **keynulls;		/* per group, which of them are NULL */
	uint32	   *hashes;			/* per group, image_hash of its values */
	bool	   *matched;		/* per group: its row was found */
	MtRowCache *cache;			/* where the rows were last seen */
	EState	   *estate;
	ResultRelInfo *rri;
	EPQState	epq;
	TupleTableSlot *newslot;
	int64		written;
} DirectApply;

/*
 * Add group gi's adjustments to its row, in oldslot; delete it if no rows
 * are left.  The row's new place is remembered for the next cycle.
 */
static void
adjust_row(DirectApply *d, int gi, TupleTableSlot *oldslot)
{
	DeltaGroup *g = d->groups[gi];
	TupleTableSlot *newslot = d->newslot;
	bool		isnull;
	Datum		rows = slot_getattr(oldslot, d->rows_attno, &isnull);

	d->matched[gi] = true;
	d->written++;
	if (!isnull && DatumGetInt64(rows) + g->rows <= 0)
	{
		ExecSimpleRelationDelete(d->rri, d->estate, &d->epq, oldslot);
		mt_row_cache_forget(d->cache, d->hashes[gi]);
		return;
	}
	ExecClearTuple(newslot);
	slot_getallattrs(oldslot);
	memcpy(newslot->tts_values, oldslot->tts_values, sizeof(Datum) * d->desc->natts);
	memcpy(newslot->tts_isnull, oldslot->tts_isnull, sizeof(bool) * d->desc->natts);
	for (int i = 0; i < d->set->nagg; i++)
	{
		int			c = d->aggs[i].attno - 1;

		if (!newslot->tts_isnull[c])	/* NULL + x is NULL */
			newslot->tts_values[c] =
				FunctionCall2Coll(&d->aggs[i].plus, InvalidOid, newslot->tts_values[c],
								  converted(&d->aggs[i], group_adjustment(d->set, g, i),
											TupleDescAttr(d->desc, c)->atttypmod));
	}
	ExecStoreVirtualTuple(newslot);
	ExecSimpleRelationUpdate(d->rri, d->estate, &d->epq, oldslot, newslot);
	mt_row_cache_set(d->cache, d->hashes[gi], &newslot->tts_tid, true);
}

/* The row of group gi, which had none (if it has rows now). */
static void
insert_group(DirectApply *d, int gi)
{
	DeltaGroup *g = d->groups[gi];
	TupleTableSlot *newslot = d->newslot;

	if (g->rows <= 0)
		return;
	ExecClearTuple(newslot);
	memset(newslot->tts_isnull, true, sizeof(bool) * d->desc->natts);
	for (int i = 0; i < d->set->ngroup; i++)
	{
		newslot->tts_values[d->group_attno[i] - 1] = d->keyvals[gi][i];
		newslot->tts_isnull[d->group_attno[i] - 1] = (g->values[i] == NULL);
	}
	for (int i = 0; i < d->set->nagg; i++)
	{
		int			c = d->aggs[i].attno - 1;

		newslot->tts_values[c] = converted(&d->aggs[i], group_adjustment(d->set, g, i),
										   TupleDescAttr(d->desc, c)->atttypmod);
		newslot->tts_isnull[c] = false;
	}
	ExecStoreVirtualTuple(newslot);
	ExecSimpleRelationInsert(d->rri, d->estate, newslot);
	mt_row_cache_set(d->cache, d->hashes[gi], &newslot->tts_tid, true);
	d->written++;
}

/*
 * Find the row of each group of pending (indexes of groups) through the
 * table's key index (the index's equality on each key column, IS NULL for
 * NULL) and adjust it.
 */
static void
adjust_through_index(DirectApply *d, Relation rel, Oid indexid, int *pending, int npending,
					 TupleTableSlot *oldslot)
{
	MtDeltaSet *set = d->set;
	Relation	index = index_open(indexid, AccessShareLock);
	ScanKeyData *skeys = palloc(sizeof(ScanKeyData) * set->ngroup);
	int		   *key_group = palloc(sizeof(int) * set->ngroup);	/* index column -> group column */
	RegProcedure *key_eq = palloc(sizeof(RegProcedure) * set->ngroup);
	IndexScanDesc scan;

	for (int k = 0; k < set->ngroup; k++)
	{
		key_group[k] = 0;
		while (d->group_attno[key_group[k]] != index->rd_index->indkey.values[k])
			key_group[k]++;
		key_eq[k] = get_opcode(get_opfamily_member(index->rd_opfamily[k], index->rd_opcintype[k],
												   index->rd_opcintype[k], BTEqualStrategyNumber));
		if (!RegProcedureIsValid(key_eq[k]))
			elog(ERROR, "no equality operator in the key index of \"%s\"",
				 RelationGetRelationName(rel));
	}
	scan = index_beginscan(rel, index, d->estate->es_snapshot, set->ngroup, 0);
	for (int p = 0; p < npending; p++)
	{
		int			gi = pending[p];

		for (int k = 0; k < set->ngroup; k++)
		{
			int			i = key_group[k];

			if (d->keynulls[gi][i])
				ScanKeyEntryInitialize(&skeys[k], SK_ISNULL | SK_SEARCHNULL, k + 1,
									   InvalidStrategy, InvalidOid, InvalidOid, InvalidOid,
									   (Datum) 0);
			else
				ScanKeyEntryInitialize(&skeys[k], 0, k + 1, BTEqualStrategyNumber,
									   index->rd_opcintype[k], index->rd_indcollation[k],
									   key_eq[k], d->keyvals[gi][i]);
		}
		/* the scan allocates what it keeps across groups here, not per tuple */
		index_rescan(scan, skeys, set->ngroup, NULL, 0);
		while (index_getnext_slot(scan, ForwardScanDirection, oldslot))
		{
			MemoryContext outer = MemoryContextSwitchTo(GetPerTupleMemoryContext(d->estate));

			adjust_row(d, gi, oldslot);
			MemoryContextSwitchTo(outer);
			ResetPerTupleExprContext(d->estate);
		}
	}
	index_endscan(scan);
	index_close(index, NoLock);
}

/* groups by the hash of their values' images, chained through next */
typedef struct ImageBucket
{
	uint32		hash;
	int			first;			/* a group, or -1 */
} ImageBucket;

static uint32
image_hash(DirectApply *d, Datum *values, bool *nulls)
{
	uint32		hash = 0;

	for (int i = 0; i < d->set->ngroup; i++)
	{
		Form_pg_attribute att = TupleDescAttr(d->desc, d->group_attno[i] - 1);

		hash = hash_combine(hash, nulls[i] ? 0x7f4a7c15 :
							datum_image_hash(values[i], att->attbyval, att->attlen));
	}
	return hash;
}

/*
 * Are the group values of the row in slot (deformed up to them) those of
 * group gi?  Compared by their images (datum_image_eq, as Memoize does):
 * for the group columns of a table that is its own state, equal values
 * print alike (group_prints_alike) and are stored alike.
 */
static bool
row_of_group(DirectApply *d, TupleTableSlot *slot, int gi)
{
	for (int i = 0; i < d->set->ngroup; i++)
	{
		Form_pg_attribute att = TupleDescAttr(d->desc, d->group_attno[i] - 1);
		int			c = d->group_attno[i] - 1;

		if (slot->tts_isnull[c] != d->keynulls[gi][i] ||
			(!slot->tts_isnull[c] && !datum_image_eq(slot->tts_values[c], d->keyvals[gi][i],
													 att->attbyval, att->attlen)))
			return false;
	}
	return true;
}

/*
 * Adjust the rows of the groups whose places the cache knows, and still
 * finds them at; returns how many groups remain, their indexes in pending.
 * A place that no longer holds its group's row is forgotten.  The page is
 * pruned first, as an index scan or a scan of the table would: that frees
 * the room of the row's dead versions for its new one (a HOT update).
 */
static int
adjust_through_cache(DirectApply *d, Relation rel, int ngroups, int *pending,
					 TupleTableSlot *oldslot)
{
	int			npending = 0;

	for (int gi = 0; gi < ngroups; gi++)
	{
		ItemPointerData tid;
		MemoryContext outer;
		bool		found;
		Buffer		buf;

		if (!mt_row_cache_get(d->cache, d->hashes[gi], &tid))
		{
			pending[npending++] = gi;
			continue;
		}
		outer = MemoryContextSwitchTo(GetPerTupleMemoryContext(d->estate));
		buf = ReadBuffer(rel, ItemPointerGetBlockNumber(&tid));
		heap_page_prune_opt(rel, buf);
		ReleaseBuffer(buf);
		found = table_tuple_fetch_row_version(rel, &tid, d->estate->es_snapshot, oldslot);
		if (found)
		{
			slot_getsomeattrs(oldslot, d->last_group_attno);
			found = row_of_group(d, oldslot, gi);
		}
		if (found)
			adjust_row(d, gi, oldslot);
		else
		{
			mt_row_cache_forget(d->cache, d->hashes[gi]);
			pending[npending++] = gi;
		}
		MemoryContextSwitchTo(outer);
		ResetPerTupleExprContext(d->estate);
	}
	return npending;
}

/*
 * Read the table once and adjust the row of each group of pending it
 * finds in the groups' hash, remembering where every other row is.  The
 * new row versions this writes are of the scan's own command, so the scan
 * does not see them; it sees the old versions of rows adjusted before it
 * in this command, whose new places are already remembered.
 */
static void
adjust_through_scan(DirectApply *d, Relation rel, int *pending, int npending,
					TupleTableSlot *oldslot)
{
	MtDeltaSet *set = d->set;
	int		   *next = palloc(sizeof(int) * (npending + 1));
	bool	   *tnulls = palloc(sizeof(bool) * (set->ngroup + 1));
	Datum	   *tvalues = palloc(sizeof(Datum) * (set->ngroup + 1));
	HASHCTL		ctl;
	HTAB	   *images;
	TableScanDesc scan;

	ctl.keysize = sizeof(uint32);
	ctl.entrysize = sizeof(ImageBucket);
	ctl.hcxt = CurrentMemoryContext;
	images = hash_create("materialized_table in-place groups", npending, &ctl,
						 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (int p = 0; p < npending; p++)
	{
		int			gi = pending[p];
		ImageBucket *b;
		bool		found;

		b = hash_search(images, &d->hashes[gi], HASH_ENTER, &found);
		next[p] = found ? b->first : -1;
		b->first = p;
	}

	scan = table_beginscan(rel, d->estate->es_snapshot, 0, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, oldslot))
	{
		MemoryContext outer = MemoryContextSwitchTo(GetPerTupleMemoryContext(d->estate));
		ImageBucket *b;
		uint32		hash;
		int			p;

		slot_getsomeattrs(oldslot, d->last_group_attno);
		for (int i = 0; i < set->ngroup; i++)
		{
			tvalues[i] = oldslot->tts_values[d->group_attno[i] - 1];
			tnulls[i] = oldslot->tts_isnull[d->group_attno[i] - 1];
		}
		hash = image_hash(d, tvalues, tnulls);
		b = hash_search(images, &hash, HASH_FIND, NULL);
		for (p = b ? b->first : -1; p >= 0; p = next[p])
			if (row_of_group(d, oldslot, pending[p]))
				break;
		if (p >= 0)
			adjust_row(d, pending[p], oldslot);
		else
			mt_row_cache_set(d->cache, hash, &oldslot->tts_tid, false);
		MemoryContextSwitchTo(outer);
		ResetPerTupleExprContext(d->estate);
	}
	table_endscan(scan);
	hash_destroy(images);
}

/*
 * Add the adjustments of groups to the table's rows (DirectApply): each
 * row found where the worker last wrote it (utils/row_cache.c), else through the
 * table's key index, or, for groups that are many for the table (or
 * without such an index), by one scan of the table.  Returns the number
 * of rows written, or -1 when the table needs the MERGE: triggers, row
 * level security, columns other than the query's, or a type without + or
 * a plain cast.
 */
static int64
adjust_rows_directly(MtDeltaSet *set, Relation rel, List *keys, List *groups)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Oid			indexid = key_index(rel, keys);
	int			ncols = 0;
	int			ngroups = list_length(groups);
	double		tuples = rel->rd_rel->reltuples >= 0 ? rel->rd_rel->reltuples :
		(double) RelationGetNumberOfBlocks(rel) * 100;
	FmgrInfo   *group_in = palloc(sizeof(FmgrInfo) * (set->ngroup + 1));
	Oid		   *group_ioparam = palloc(sizeof(Oid) * (set->ngroup + 1));
	DirectApply d = {0};
	RangeTblEntry *rte;
	TupleTableSlot *oldslot;
	MemoryContext work;
	MemoryContext outer;
	ListCell   *lc;
	int		   *pending;
	int			npending;

	if (groups == NIL)
		return 0;				/* not even a scan */
	if (rel->trigdesc != NULL || rel->rd_rel->relrowsecurity)
		return -1;
	for (int i = 0; i < desc->natts; i++)
		if (!TupleDescAttr(desc, i)->attisdropped)
			ncols++;
	if (ncols != set->ngroup + set->nagg)
		return -1;
	d.set = set;
	d.desc = desc;
	d.group_attno = palloc(sizeof(AttrNumber) * (set->ngroup + 1));
	d.aggs = palloc0(sizeof(AggColumn) * (set->nagg + 1));
	foreach(lc, set->a->group_outputs)
	{
		int			i = foreach_current_index(lc);
		Form_pg_attribute att = named_column(desc, lfirst(lc));
		Oid			infunc;

		d.group_attno[i] = att->attnum;
		d.last_group_attno = Max(d.last_group_attno, att->attnum);
		getTypeInputInfo(att->atttypid, &infunc, &group_ioparam[i]);
		fmgr_info(infunc, &group_in[i]);
	}
	foreach(lc, set->a->aggs)
	{
		MtDeltaAgg *agg = lfirst(lc);
		int			i = foreach_current_index(lc);
		Form_pg_attribute att = named_column(desc, agg->output);

		if (att->atttypid != agg->output_type ||
			!agg_column(&d.aggs[i], att->attnum, att->atttypid,
						agg->kind == MT_AGG_SUM ? NUMERICOID : INT8OID))
			return -1;
		if (agg->kind == MT_AGG_COUNT_STAR && d.rows_attno == InvalidAttrNumber)
			d.rows_attno = att->attnum;
	}

	/* what lives until the groups are applied; freed at the end */
	work = AllocSetContextCreate(CurrentMemoryContext, "materialized_table in-place apply",
								 ALLOCSET_DEFAULT_SIZES);
	outer = MemoryContextSwitchTo(work);
	d.groups = palloc(sizeof(DeltaGroup *) * (ngroups + 1));
	d.keyvals = palloc(sizeof(Datum *) * (ngroups + 1));
	d.keynulls = palloc(sizeof(bool *) * (ngroups + 1));
	d.hashes = palloc(sizeof(uint32) * (ngroups + 1));
	d.matched = palloc0(sizeof(bool) * (ngroups + 1));
	pending = palloc(sizeof(int) * (ngroups + 1));
	foreach(lc, groups)
	{
		DeltaGroup *g = lfirst(lc);
		int			gi = foreach_current_index(lc);

		d.groups[gi] = g;
		d.keyvals[gi] = palloc(sizeof(Datum) * set->ngroup);
		d.keynulls[gi] = palloc(sizeof(bool) * set->ngroup);
		for (int i = 0; i < set->ngroup; i++)
		{
			d.keynulls[gi][i] = (g->values[i] == NULL);
			d.keyvals[gi][i] = g->values[i] == NULL ? (Datum) 0 :
				InputFunctionCall(&group_in[i], g->values[i], group_ioparam[i],
								  TupleDescAttr(desc, d.group_attno[i] - 1)->atttypmod);
		}
		d.hashes[gi] = image_hash(&d, d.keyvals[gi], d.keynulls[gi]);
	}
	d.cache = mt_row_cache_open(rel);

	d.estate = CreateExecutorState();
	rte = makeNode(RangeTblEntry);
	rte->rtekind = RTE_RELATION;
	rte->relid = RelationGetRelid(rel);
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = MT_REFRESH_LOCKMODE;
	ExecInitRangeTable(d.estate, list_make1(rte));
	d.rri = makeNode(ResultRelInfo);
	InitResultRelInfo(d.rri, rel, 1, NULL, 0);
	ExecOpenIndices(d.rri, false);
	EvalPlanQualInit(&d.epq, d.estate, NULL, NIL, -1);
	/* after the statements before it in this transaction, as they would be */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	d.estate->es_snapshot = GetActiveSnapshot();
	d.estate->es_output_cid = GetCurrentCommandId(true);
	oldslot = table_slot_create(rel, &d.estate->es_tupleTable);
	d.newslot = table_slot_create(rel, &d.estate->es_tupleTable);

	npending = adjust_through_cache(&d, rel, ngroups, pending, oldslot);
	if (npending > 0 &&
		(!OidIsValid(indexid) || (double) npending * SCAN_ROWS_PER_LOOKUP > tuples))
		adjust_through_scan(&d, rel, pending, npending, oldslot);
	else if (npending > 0)
		adjust_through_index(&d, rel, indexid, pending, npending, oldslot);
	/* new groups, after the search, which is then not bothered by their rows */
	for (int p = 0; p < npending; p++)
	{
		if (!d.matched[pending[p]])
		{
			MemoryContextSwitchTo(GetPerTupleMemoryContext(d.estate));
			insert_group(&d, pending[p]);
			MemoryContextSwitchTo(work);
			ResetPerTupleExprContext(d.estate);
		}
	}

	EvalPlanQualEnd(&d.epq);
	ExecCloseIndices(d.rri);
	ExecResetTupleTable(d.estate->es_tupleTable, false);
	FreeExecutorState(d.estate);
	PopActiveSnapshot();
	CommandCounterIncrement();
	MemoryContextSwitchTo(outer);
	MemoryContextDelete(work);
	return d.written;
}

/*
 * Adjust the table's rows of groups by in_place_merge's MERGE, one per
 * pattern of NULL group columns among them (= finds no NULL; IS NULL
 * does, and both use the table's index on them).  The caller is connected
 * to SPI.  Returns the number of rows written.
 */
static int64
merge_groups(MtDeltaSet *set, Relation rel, List *groups)
{
	int			nparams = set->ngroup + 1 + set->nagg;
	Oid		   *types = palloc(sizeof(Oid) * nparams);
	Datum	   *values = palloc(sizeof(Datum) * nparams);
	List	   *patterns = NIL; /* Bitmapset of NULL group columns */
	List	   *members = NIL;	/* List of DeltaGroup, per pattern */
	ListCell   *lc;
	ListCell   *lp;
	ListCell   *lm;
	int64		written = 0;

	foreach(lc, groups)
	{
		DeltaGroup *g = lfirst(lc);
		Bitmapset  *nulls = NULL;
		bool		placed = false;

		for (int i = 0; i < set->ngroup; i++)
			if (g->values[i] == NULL)
				nulls = bms_add_member(nulls, i);
		forboth(lp, patterns, lm, members)
		{
			if (bms_equal(lfirst(lp), nulls))
			{
				lfirst(lm) = lappend(lfirst(lm), g);
				placed = true;
				break;
			}
		}
		if (!placed)
		{
			patterns = lappend(patterns, nulls);
			members = lappend(members, list_make1(g));
		}
	}
	forboth(lp, patterns, lm, members)
	{
		char	   *sql = in_place_merge(set, rel, lfirst(lm), lfirst(lp), &nparams, types, values);

		if (SPI_execute_with_args(sql, nparams, types, values, NULL, false, 0) != SPI_OK_MERGE)
			elog(ERROR, "could not adjust the rows of \"%s\"", get_rel_name(set->relid));
		written += SPI_processed;
	}
	return written;
}

/*
 * Hand the table's rows of the touched groups to the CONTINUOUS tables
 * downstream: as they are before the adjustments (sign -1) or after (1).
 */
static void
feed_groups(MtChainFeed *feed, MtDeltaSet *set, Relation rel, int sign)
{
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *filter = touched_groups(set);
	Oid		   *types;
	Datum	   *values;
	ParamListInfo params;
	int			nparams = mt_filter_params(filter, desc, &types, &values, &params);
	Datum	   *row = palloc(sizeof(Datum) * (desc->natts + 1));
	bool	   *isnull = palloc(sizeof(bool) * (desc->natts + 1));

	if (filter == NIL)
		return;
	if (SPI_execute_with_args(psprintf("SELECT * FROM %s WHERE %s", mt_qualified_name(set->relid),
									   mt_filter_condition(filter, NULL, desc, types, 0)),
							  nparams, types, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the rows of \"%s\"", get_rel_name(set->relid));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		int			c = 0;

		/* in the table's layout, dropped columns included */
		for (int i = 0; i < desc->natts; i++)
		{
			isnull[i] = true;
			if (!TupleDescAttr(desc, i)->attisdropped)
				row[i] = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, ++c,
									   &isnull[i]);
		}
		mt_chain_row(feed, heap_form_tuple(desc, row, isnull), sign);
	}
}

/*
 * mt_deltas_apply_in_place
 *		Add the adjustments to the table's own rows: one by one, found
 *		through its key index or by one scan of it (adjust_rows_directly),
 *		or else by MERGEs (merge_groups).
 *		Returns the number of rows written, or -1 if they cannot be
 *		adjusted one by one (see mt_unique_beyond_keys): the caller
 *		recomputes instead.
 */
int64
mt_deltas_apply_in_place(MtDeltaSet *set)
{
	MtTable    *mt = mt_catalog_lookup(set->relid, false);
	Relation	rel = table_open(set->relid, MT_REFRESH_LOCKMODE);
	List	   *keys = NIL;
	List	   *live = NIL;		/* the groups that change something */
	MtChainFeed *feed;
	ListCell   *lc;
	int64		written;
	Datum		zero = numeric_zero();
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;

	foreach(lc, set->a->group_outputs)
		keys = lappend_int(keys, get_attnum(set->relid, lfirst(lc)));
	if (mt_unique_beyond_keys(rel, keys))
	{
		table_close(rel, NoLock);
		return -1;
	}
	foreach(lc, set->groups)
		if (!idle_group(set, lfirst(lc), zero))
			live = lappend(live, lfirst(lc));

	mt_run_as_owner_begin(set->owner, &save_userid, &save_sec, &save_nestlevel);
	mt_favour_index_lookups();
	SPI_connect();
	feed = mt_chain_begin(mt, CreateTupleDescCopy(RelationGetDescr(rel)));
	if (feed)
		feed_groups(feed, set, rel, -1);
	mt_internal_depth++;
	written = adjust_rows_directly(set, rel, keys, live);
	if (written < 0)
		written = merge_groups(set, rel, live);
	mt_internal_depth--;
	if (feed)
	{
		CommandCounterIncrement();
		feed_groups(feed, set, rel, 1);
		mt_chain_finish(feed);
	}
	SPI_finish();
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
	table_close(rel, NoLock);
	return written;
}
