/*-------------------------------------------------------------------------
 *
 * src/catalog/catalog.c
 *	  Reading and writing the catalog of materialized tables.
 *
 * Rows are written through SPI with parameters.  The one hot question,
 * "is this relation a materialized table (or a partition of one)?", is
 * asked by the executor hook for every write statement, so its answers
 * are cached per backend and dropped whenever PostgreSQL invalidates the
 * relation's relcache entry (creating and dropping a table both do).
 *
 * Locking: a command that changes a table's row, or its pg_cron job, locks
 * the table itself first and then the row (mt_catalog_lock), and reads
 * the row only after both: so commands on one table queue in one order,
 * and each sees the row as the one before it left it.  See mt/catalog/catalog.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "executor/spi.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/marker.h"
#include "mt/materialized_table.h"
#include "mt/utils/spi_plans.h"

typedef struct MtCacheEntry
{
	Oid			relid;			/* hash key */
	Oid			owning_mt;		/* the MT this relation is or belongs to */
} MtCacheEntry;

static HTAB *mt_cache = NULL;

static void
mt_cache_invalidate(Datum arg, Oid relid)
{
	if (mt_cache == NULL)
		return;
	if (!OidIsValid(relid))
		mt_catalog_cache_reset();
	else
		hash_search(mt_cache, &relid, HASH_REMOVE, NULL);
}

void
mt_catalog_cache_reset(void)
{
	HASH_SEQ_STATUS status;
	MtCacheEntry *entry;

	if (mt_cache == NULL)
		return;
	hash_seq_init(&status, mt_cache);
	while ((entry = hash_seq_search(&status)) != NULL)
		hash_search(mt_cache, &entry->relid, HASH_REMOVE, NULL);
}

/*
 * Probe the catalog's primary key index for relid.
 *
 * The executor hook asks this for the target of every write, so it reads
 * the row as catalog lookups do, committed or not (SnapshotSelf), and not
 * with an MVCC snapshot: in a SERIALIZABLE transaction, an MVCC read would
 * take a predicate lock on the catalog, and an INSERT into the source of a
 * table being created would then conflict with the CREATE that writes the
 * catalog, making one of them fail where CREATE TABLE AS does not.
 */
/*
 * Lock the extension's relation name in mode and return its OID, or
 * InvalidOid if there is none.  A DROP EXTENSION may hold the relation:
 * once it has committed, the relation is gone, and the caller must not
 * open it by the OID it looked up before waiting.
 */
static Oid
lock_internal_relation(const char *name, LOCKMODE mode)
{
	Oid			nsp = mt_internal_namespace();
	Oid			relid;

	if (!OidIsValid(nsp))
		return InvalidOid;
	relid = get_relname_relid(name, nsp);
	if (!OidIsValid(relid))
		return InvalidOid;
	LockRelationOid(relid, mode);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
	{
		UnlockRelationOid(relid, mode);
		return InvalidOid;
	}
	return relid;
}

static bool
catalog_has_row(Oid relid)
{
	Oid			catalog_oid;
	Oid			index_oid;
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	bool		found;

	if (!OidIsValid(mt_internal_namespace()))
		return false;
	index_oid = get_relname_relid("mt_table_pkey", mt_internal_namespace());
	if (!OidIsValid(index_oid))
		return false;
	/* no catalog once a DROP EXTENSION has committed: no materialized table */
	catalog_oid = lock_internal_relation(MT_CATALOG_TABLE, AccessShareLock);
	if (!OidIsValid(catalog_oid))
		return false;
	rel = table_open(catalog_oid, NoLock);
	ScanKeyInit(&key, Anum_mt_table_relid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(rel, index_oid, true, SnapshotSelf, 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * mt_owning_materialized_table
 *		The MT that relid is, or is a partition of; InvalidOid if none.
 */
Oid
mt_owning_materialized_table(Oid relid)
{
	MtCacheEntry *entry;
	bool		found;
	Oid			owner = InvalidOid;

	if (mt_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(MtCacheEntry);
		ctl.hcxt = CacheMemoryContext;
		mt_cache = hash_create("materialized_table relations", 64, &ctl,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		CacheRegisterRelcacheCallback(mt_cache_invalidate, (Datum) 0);
	}

	entry = hash_search(mt_cache, &relid, HASH_FIND, &found);
	if (found)
		return entry->owning_mt;

	if (catalog_has_row(relid))
		owner = relid;
	else if (get_rel_relispartition(relid))
	{
		List	   *ancestors = get_partition_ancestors(relid);

		if (ancestors != NIL && catalog_has_row(llast_oid(ancestors)))
			owner = llast_oid(ancestors);
	}

	entry = hash_search(mt_cache, &relid, HASH_ENTER, NULL);
	entry->owning_mt = owner;
	return owner;
}

bool
mt_is_materialized_table(Oid relid)
{
	return OidIsValid(relid) && mt_owning_materialized_table(relid) == relid;
}

/* ---------------------------------------------------------------------
 * Conversions
 * ---------------------------------------------------------------------
 */

const char *
mt_status_name(MtStatus status)
{
	switch (status)
	{
		case MT_STATUS_INITIALIZING:
			return "INITIALIZING";
		case MT_STATUS_ACTIVATED:
			return "ACTIVATED";
		case MT_STATUS_SUSPENDED:
			return "SUSPENDED";
	}
	return NULL;
}

static MtStatus
status_from_name(const char *name)
{
	if (strcmp(name, "ACTIVATED") == 0)
		return MT_STATUS_ACTIVATED;
	if (strcmp(name, "SUSPENDED") == 0)
		return MT_STATUS_SUSPENDED;
	return MT_STATUS_INITIALIZING;
}

const char *
mt_freshness_unit_name(MtFreshnessUnit unit)
{
	switch (unit)
	{
		case MT_UNIT_SECOND:
			return "SECOND";
		case MT_UNIT_MINUTE:
			return "MINUTE";
		case MT_UNIT_HOUR:
			return "HOUR";
		case MT_UNIT_DAY:
			return "DAY";
	}
	return NULL;
}

const char *
mt_mode_name(MtRefreshMode mode)
{
	return mode == MT_MODE_FULL ? "FULL" : "CONTINUOUS";
}

static MtFreshnessUnit
unit_from_name(const char *name)
{
	if (strcmp(name, "MINUTE") == 0)
		return MT_UNIT_MINUTE;
	if (strcmp(name, "HOUR") == 0)
		return MT_UNIT_HOUR;
	if (strcmp(name, "DAY") == 0)
		return MT_UNIT_DAY;
	return MT_UNIT_SECOND;
}

char *
mt_option_value(List *options, const char *key)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		MtOption   *opt = lfirst(lc);

		if (strcmp(opt->key, key) == 0)
			return opt->value;
	}
	return NULL;
}

/* a JSON string value */
static void
push_string(JsonbParseState **state, JsonbIteratorToken token, const char *s)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) s;
	v.val.string.len = strlen(s);
	(void) pushJsonbValue(state, token, &v);
}

/* options as a flat JSON object of string values */
Jsonb *
mt_options_to_jsonb(List *options)
{
	JsonbParseState *state = NULL;
	JsonbValue *result;
	ListCell   *lc;

	(void) pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	foreach(lc, options)
	{
		MtOption   *opt = lfirst(lc);

		push_string(&state, WJB_KEY, opt->key);
		push_string(&state, WJB_VALUE, opt->value);
	}
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(result);
}

/* Parse a flat JSON object of strings back into MtOption, in key order. */
static List *
options_from_jsonb(Jsonb *jb)
{
	List	   *result = NIL;
	JsonbIterator *it = JsonbIteratorInit(&jb->root);
	JsonbValue	v;
	JsonbIteratorToken tok;
	MtOption   *opt = NULL;

	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			opt = palloc0(sizeof(MtOption));
			opt->key = pnstrdup(v.val.string.val, v.val.string.len);
		}
		else if (tok == WJB_VALUE && opt)
		{
			if (v.type == jbvString)
				opt->value = pnstrdup(v.val.string.val, v.val.string.len);
			else
				opt->value = JsonbToCString(NULL, &jb->root, 0);
			result = lappend(result, opt);
			opt = NULL;
		}
	}
	return result;
}

/* {"kind": ..., "buckets": n, "columns": [...], "bounds": [[...], ...]} */
static Jsonb *
distribution_to_jsonb(MtDistribution *d)
{
	JsonbParseState *state = NULL;
	JsonbValue	buckets;
	JsonbValue *result;
	ListCell   *lc;

	(void) pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
	push_string(&state, WJB_KEY, "kind");
	push_string(&state, WJB_VALUE,
				d->kind == MT_DISTRIBUTION_RANGE ? "RANGE" :
				d->kind == MT_DISTRIBUTION_HASH ? "HASH" : "DEFAULT");
	push_string(&state, WJB_KEY, "buckets");
	buckets.type = jbvNumeric;
	buckets.val.numeric = int64_to_numeric(d->buckets);
	(void) pushJsonbValue(&state, WJB_VALUE, &buckets);
	push_string(&state, WJB_KEY, "columns");
	(void) pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	foreach(lc, d->columns)
		push_string(&state, WJB_ELEM, strVal(lfirst(lc)));
	(void) pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	push_string(&state, WJB_KEY, "bounds");
	(void) pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
	foreach(lc, d->bounds)
	{
		ListCell   *lc2;

		(void) pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
		foreach(lc2, (List *) lfirst(lc))
			push_string(&state, WJB_ELEM, lfirst(lc2));
		(void) pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	}
	(void) pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	result = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(result);
}

static MtDistribution *
distribution_from_jsonb(Jsonb *jb)
{
	MtDistribution *d = palloc0(sizeof(MtDistribution));
	JsonbIterator *it = JsonbIteratorInit(&jb->root);
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;
	int			depth = 0;
	List	   *bound = NIL;

	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		switch (tok)
		{
			case WJB_BEGIN_OBJECT:
			case WJB_BEGIN_ARRAY:
				depth++;
				bound = NIL;
				break;
			case WJB_END_ARRAY:
				if (depth == 3 && key && strcmp(key, "bounds") == 0)
					d->bounds = lappend(d->bounds, bound);
				depth--;
				break;
			case WJB_END_OBJECT:
				depth--;
				break;
			case WJB_KEY:
				key = pnstrdup(v.val.string.val, v.val.string.len);
				break;
			case WJB_VALUE:
				if (strcmp(key, "kind") == 0)
				{
					char	   *kind = pnstrdup(v.val.string.val, v.val.string.len);

					d->kind = strcmp(kind, "RANGE") == 0 ? MT_DISTRIBUTION_RANGE :
						strcmp(kind, "HASH") == 0 ? MT_DISTRIBUTION_HASH : MT_DISTRIBUTION_DEFAULT;
				}
				else if (strcmp(key, "buckets") == 0)
					d->buckets = DatumGetInt32(DirectFunctionCall1(numeric_int4,
																   NumericGetDatum(v.val.numeric)));
				break;
			case WJB_ELEM:
				if (strcmp(key, "columns") == 0)
					d->columns = lappend(d->columns,
										 makeString(pnstrdup(v.val.string.val, v.val.string.len)));
				else if (strcmp(key, "bounds") == 0)
					bound = lappend(bound, pnstrdup(v.val.string.val, v.val.string.len));
				break;
			default:
				break;
		}
	}
	return d;
}

static Datum
string_list_to_array(List *strings)
{
	Datum	   *elems = palloc(sizeof(Datum) * (list_length(strings) + 1));
	ListCell   *lc;
	int			n = 0;

	foreach(lc, strings)
		elems[n++] = CStringGetTextDatum(strVal(lfirst(lc)));
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
}

static List *
array_to_string_list(Datum array)
{
	ArrayType  *arr = DatumGetArrayTypeP(array);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			i;
	List	   *result = NIL;

	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	for (i = 0; i < n; i++)
		result = lappend(result, makeString(TextDatumGetCString(elems[i])));
	return result;
}

/* ---------------------------------------------------------------------
 * Rows
 * ---------------------------------------------------------------------
 */

#define MT_TABLE_COLUMNS_1_0 \
"relid, query_view, definition_query, refresh_mode, freshness_value, " \
"freshness_unit, refresh_status, partition_keys, options, declared_columns, " \
"metadata_columns, watermark_column, watermark_expression, distribution, " \
"last_refresh_time, scheduler, cron_jobid, pipeline_options"

/*
 * The catalog's columns.  Version 1.0's has no restore_pending: the library
 * works on it until ALTER EXTENSION ... UPDATE, as if nothing was pending.
 */
static int
catalog_natts(void)
{
	Oid			catalog = get_relname_relid(MT_CATALOG_TABLE, mt_internal_namespace());

	if (OidIsValid(catalog) && get_attnum(catalog, "id") != InvalidAttrNumber)
		return Natts_mt_table;
	return Anum_mt_table_restore_pending - 1;
}

/* Is the catalog of a version that knows restores (1.1 or later)? */
bool
mt_catalog_has_restore(void)
{
	return catalog_natts() == Natts_mt_table;
}

/*
 * mt_catalog_new_id
 *		The id of a new table (the relid it will have in a 1.0 catalog,
 *		whose hidden objects are named after it: relid then).
 */
int64
mt_catalog_new_id(void)
{
	/* a DROP EXTENSION that commits first takes the sequence with it */
	if (!OidIsValid(lock_internal_relation("table_id_seq", RowExclusiveLock)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"%s\" is not installed", MT_EXTENSION_NAME)));
	return mt_spi_int8_as_extension_owner("SELECT pg_catalog.nextval('materialized_table_internal.table_id_seq')",
										  "could not number a new materialized table");
}

/* The id of table relid (see MtTable); 0 if it is not a materialized table. */
int64
mt_catalog_id(Oid relid)
{
	MtTable    *mt = mt_catalog_lookup(relid, true);

	return mt ? mt->id : 0;
}

/*
 * mt_catalog_id_exists
 *		Is id a table's id (its relid in a 1.0 catalog, which has none)?
 */
bool
mt_catalog_id_exists(int64 id)
{
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};
	MtSavedUser saved;
	bool		found;

	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (SPI_execute_with_args(mt_catalog_has_restore() ?
							  "SELECT 1 FROM materialized_table_internal.mt_table WHERE id OPERATOR(pg_catalog.=) $1" :
							  "SELECT 1 FROM materialized_table_internal.mt_table "
							  "WHERE relid::pg_catalog.oid::pg_catalog.int8 OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the materialized table catalog");
	found = SPI_processed > 0;
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	return found;
}

static const char *
catalog_columns(int natts)
{
	return natts == Natts_mt_table ? MT_TABLE_COLUMNS_1_0 ", restore_pending, id" : MT_TABLE_COLUMNS_1_0;
}

/* A NULL in the row's array of nulls, for SPI */
#define SET_NULL(nulls, anum)	((nulls)[(anum) - 1] = 'n')
#define SET_VALUE(values, anum, datum)	((values)[(anum) - 1] = (datum))

static void
row_to_datums(MtTable *mt, Datum *values, char *nulls)
{
	int			i;

	for (i = 0; i < Natts_mt_table; i++)
		nulls[i] = ' ';
	SET_VALUE(values, Anum_mt_table_relid, ObjectIdGetDatum(mt->relid));
	SET_VALUE(values, Anum_mt_table_query_view, ObjectIdGetDatum(mt->query_view));
	SET_VALUE(values, Anum_mt_table_definition_query, CStringGetTextDatum(mt->definition_query));
	SET_VALUE(values, Anum_mt_table_refresh_mode, CStringGetTextDatum(mt_mode_name(mt->refresh_mode)));
	SET_VALUE(values, Anum_mt_table_freshness_value, Int32GetDatum(mt->freshness_value));
	SET_VALUE(values, Anum_mt_table_freshness_unit,
			  CStringGetTextDatum(mt_freshness_unit_name(mt->freshness_unit)));
	SET_VALUE(values, Anum_mt_table_refresh_status, CStringGetTextDatum(mt_status_name(mt->status)));
	SET_VALUE(values, Anum_mt_table_partition_keys, string_list_to_array(mt->partition_keys));
	SET_VALUE(values, Anum_mt_table_options, JsonbPGetDatum(mt_options_to_jsonb(mt->options)));
	SET_VALUE(values, Anum_mt_table_declared_columns, BoolGetDatum(mt->declared_columns));
	SET_VALUE(values, Anum_mt_table_metadata_columns,
			  JsonbPGetDatum(mt_options_to_jsonb(mt->metadata_columns)));
	if (mt->watermark_column)
		SET_VALUE(values, Anum_mt_table_watermark_column, CStringGetTextDatum(mt->watermark_column));
	else
		SET_NULL(nulls, Anum_mt_table_watermark_column);
	if (mt->watermark_expression)
		SET_VALUE(values, Anum_mt_table_watermark_expression,
				  CStringGetTextDatum(mt->watermark_expression));
	else
		SET_NULL(nulls, Anum_mt_table_watermark_expression);
	if (mt->distribution)
		SET_VALUE(values, Anum_mt_table_distribution,
				  JsonbPGetDatum(distribution_to_jsonb(mt->distribution)));
	else
		SET_NULL(nulls, Anum_mt_table_distribution);
	if (mt->last_refresh_time != 0)
		SET_VALUE(values, Anum_mt_table_last_refresh_time, TimestampTzGetDatum(mt->last_refresh_time));
	else
		SET_NULL(nulls, Anum_mt_table_last_refresh_time);
	if (mt->scheduler)
		SET_VALUE(values, Anum_mt_table_scheduler, CStringGetTextDatum(mt->scheduler));
	else
		SET_NULL(nulls, Anum_mt_table_scheduler);
	if (mt->cron_jobid != 0)
		SET_VALUE(values, Anum_mt_table_cron_jobid, Int64GetDatum(mt->cron_jobid));
	else
		SET_NULL(nulls, Anum_mt_table_cron_jobid);
	SET_VALUE(values, Anum_mt_table_pipeline_options,
			  JsonbPGetDatum(mt_options_to_jsonb(mt->pipeline_options)));
	if (mt->restore_pending)
		SET_VALUE(values, Anum_mt_table_restore_pending, CStringGetTextDatum(mt->restore_pending));
	else
		SET_NULL(nulls, Anum_mt_table_restore_pending);
	SET_VALUE(values, Anum_mt_table_id, Int64GetDatum(mt->id));
}

static const Oid mt_table_types[Natts_mt_table] = {
	OIDOID, OIDOID, TEXTOID, TEXTOID, INT4OID, TEXTOID, TEXTOID, TEXTARRAYOID,
	JSONBOID, BOOLOID, JSONBOID, TEXTOID, TEXTOID, JSONBOID, TIMESTAMPTZOID,
	TEXTOID, INT8OID, JSONBOID, TEXTOID, INT8OID
};

void
mt_catalog_insert(MtTable *mt)
{
	Datum		values[Natts_mt_table];
	char		nulls[Natts_mt_table];
	StringInfoData sql;
	int			i;

	int			natts = catalog_natts();

	row_to_datums(mt, values, nulls);
	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s.%s (%s) VALUES (",
					 MT_INTERNAL_SCHEMA, MT_CATALOG_TABLE, catalog_columns(natts));
	for (i = 0; i < natts; i++)
		appendStringInfo(&sql, "%s$%d", i ? ", " : "", i + 1);
	appendStringInfoChar(&sql, ')');

	mt_spi_run_as_extension_owner(sql.data, false, natts, (Oid *) mt_table_types, values, nulls,
								  SPI_OK_INSERT, "could not insert into the materialized table catalog");
	CacheInvalidateRelcacheByRelid(mt->relid);
	if (natts == Natts_mt_table)
		mt_catalog_sync_marker(mt);
}

void
mt_catalog_update(MtTable *mt)
{
	Datum		values[Natts_mt_table];
	char		nulls[Natts_mt_table];
	StringInfoData sql;
	int			natts = catalog_natts();
	char	   *columns = pstrdup(catalog_columns(natts));
	char	   *col;
	char	   *save;
	int			i = 0;

	row_to_datums(mt, values, nulls);
	initStringInfo(&sql);
	appendStringInfo(&sql, "UPDATE %s.%s SET ", MT_INTERNAL_SCHEMA, MT_CATALOG_TABLE);
	for (col = strtok_r(columns, ", ", &save); col; col = strtok_r(NULL, ", ", &save))
	{
		i++;
		if (i == 1)
			continue;
		appendStringInfo(&sql, "%s%s = $%d", i > 2 ? ", " : "", col, i);
	}
	appendStringInfoString(&sql, " WHERE relid = $1");

	mt_spi_run_as_extension_owner(sql.data, false, natts, (Oid *) mt_table_types, values, nulls,
								  SPI_OK_UPDATE, "could not update the materialized table catalog");
	if (natts == Natts_mt_table)
		mt_catalog_sync_marker(mt);
}

void
mt_catalog_delete(Oid relid)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	char	   *sql = psprintf("DELETE FROM %s.%s WHERE relid = $1",
							   MT_INTERNAL_SCHEMA, MT_CATALOG_TABLE);

	mt_spi_run_as_extension_owner(sql, false, 1, argtypes, values, NULL, SPI_OK_DELETE,
								  "could not delete from the materialized table catalog");
	/* a table dropped already (sql_drop) has had its invalidation */
	if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		CacheInvalidateRelcacheByRelid(relid);
	if (mt_cache)
		hash_search(mt_cache, &relid, HASH_REMOVE, NULL);
}

void
mt_catalog_set_last_refresh(Oid relid, TimestampTz when)
{
	Oid			argtypes[2] = {OIDOID, TIMESTAMPTZOID};
	Datum		values[2] = {ObjectIdGetDatum(relid), TimestampTzGetDatum(when)};
	char	   *sql = psprintf("UPDATE %s.%s SET last_refresh_time = $2 WHERE relid = $1",
							   MT_INTERNAL_SCHEMA, MT_CATALOG_TABLE);

	mt_spi_run_as_extension_owner(sql, true, 2, argtypes, values, NULL, SPI_OK_UPDATE,
								  "could not update the materialized table catalog");
}

/*
 * catalog_read
 *		The catalog row of an MT, allocated in the caller's memory context;
 *		NULL if there is none.  With for_update, the row is locked FOR
 *		UPDATE: a transaction that changed it is waited for, and the row is
 *		then read as it left it (or found gone).
 */
static MtTable *
catalog_read(Oid relid, bool for_update)
{
	MtSavedUser saved;
	MemoryContext caller = CurrentMemoryContext;
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	char	   *sql;
	MtTable    *mt = NULL;
	int			natts = catalog_natts();

	sql = psprintf("SELECT %s FROM %s.%s WHERE relid = $1%s",
				   catalog_columns(natts), MT_INTERNAL_SCHEMA, MT_CATALOG_TABLE,
				   for_update ? " FOR UPDATE" : "");
	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (mt_spi_execute_saved(sql, 1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the materialized table catalog");
	if (SPI_processed == 1)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		Datum		d[Natts_mt_table];
		bool		n[Natts_mt_table];
		MemoryContext spi = MemoryContextSwitchTo(caller);

#define COL(name)		(d[Anum_mt_table_##name - 1])
#define ISNULL(name)	(n[Anum_mt_table_##name - 1])

		heap_deform_tuple(tup, desc, d, n);
		mt = palloc0(sizeof(MtTable));
		mt->relid = DatumGetObjectId(COL(relid));
		mt->query_view = DatumGetObjectId(COL(query_view));
		mt->definition_query = TextDatumGetCString(COL(definition_query));
		mt->refresh_mode = strcmp(TextDatumGetCString(COL(refresh_mode)), "FULL") == 0 ?
			MT_MODE_FULL : MT_MODE_CONTINUOUS;
		mt->freshness_value = DatumGetInt32(COL(freshness_value));
		mt->freshness_unit = unit_from_name(TextDatumGetCString(COL(freshness_unit)));
		mt->status = status_from_name(TextDatumGetCString(COL(refresh_status)));
		mt->partition_keys = array_to_string_list(COL(partition_keys));
		mt->options = options_from_jsonb(DatumGetJsonbP(COL(options)));
		mt->declared_columns = DatumGetBool(COL(declared_columns));
		mt->metadata_columns = options_from_jsonb(DatumGetJsonbP(COL(metadata_columns)));
		mt->watermark_column = ISNULL(watermark_column) ?
			NULL : TextDatumGetCString(COL(watermark_column));
		mt->watermark_expression = ISNULL(watermark_expression) ?
			NULL : TextDatumGetCString(COL(watermark_expression));
		mt->distribution = ISNULL(distribution) ?
			NULL : distribution_from_jsonb(DatumGetJsonbP(COL(distribution)));
		mt->last_refresh_time = ISNULL(last_refresh_time) ?
			0 : DatumGetTimestampTz(COL(last_refresh_time));
		mt->scheduler = ISNULL(scheduler) ? NULL : TextDatumGetCString(COL(scheduler));
		mt->cron_jobid = ISNULL(cron_jobid) ? 0 : DatumGetInt64(COL(cron_jobid));
		mt->pipeline_options = options_from_jsonb(DatumGetJsonbP(COL(pipeline_options)));
		mt->restore_pending = (natts < Natts_mt_table || ISNULL(restore_pending)) ?
			NULL : TextDatumGetCString(COL(restore_pending));
		mt->id = (natts < Natts_mt_table) ? (int64) mt->relid : DatumGetInt64(COL(id));
#undef COL
#undef ISNULL
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	return mt;
}

/*
 * mt_catalog_lookup
 *		The catalog row of an MT, allocated in the caller's memory context.
 */
MtTable *
mt_catalog_lookup(Oid relid, bool missing_ok)
{
	MtTable    *mt;
	char	   *name;

	if (!OidIsValid(mt_internal_namespace()))
	{
		if (missing_ok)
			return NULL;
		elog(ERROR, "extension \"%s\" is not installed", MT_EXTENSION_NAME);
	}

	mt = catalog_read(relid, false);
	if (mt != NULL || missing_ok)
		return mt;
	name = get_rel_name(relid);
	if (name == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("\"%s\" is not a materialized table", name)));
	return NULL;				/* keep compiler quiet */
}

/*
 * mt_catalog_lock
 *		Lock an MT's catalog row for a change of the row or of the table's
 *		pg_cron job, and read it; NULL if the table is no longer a
 *		materialized table (dropped by a transaction that committed while
 *		we waited, say).
 *
 * The caller holds a lock on the table itself, taken before this one (see
 * mt/catalog/catalog.h).  A transaction that changed the row (a DROP, an ALTER, a
 * rename that moved the table's job) is waited for; what it changed in
 * PostgreSQL's catalogs (a name, an owner) is then taken in too.
 */
MtTable *
mt_catalog_lock(Oid relid)
{
	MtTable    *mt;

	if (!OidIsValid(mt_internal_namespace()))
		return NULL;
	mt = catalog_read(relid, true);
	AcceptInvalidationMessages();
	return mt;
}

/* Every MT of this database, in OID order. */
List *
mt_catalog_all_relids(void)
{
	MtSavedUser saved;
	List	   *result;

	if (!OidIsValid(mt_internal_namespace()))
		return NIL;
	mt_as_extension_owner_begin(&saved);
	result = mt_spi_oids(psprintf("SELECT relid FROM %s.%s ORDER BY relid::oid",
								  MT_INTERNAL_SCHEMA, MT_CATALOG_TABLE), InvalidOid);
	mt_as_extension_owner_end(&saved);
	return result;
}

/* ---------------------------------------------------------------------
 * Definitions, for dumps (see lifecycle/restore.c)
 * ---------------------------------------------------------------------
 */

/*
 * Columns a definition leaves out: the table and its view, named by the
 * marker that carries the definition; and what the pipeline sets, which a
 * restored table gets anew.
 */
#define DEFINITION_EXCLUDED \
	"ARRAY['relid', 'query_view', 'last_refresh_time', 'scheduler', 'cron_jobid', 'restore_pending']"

/* The materialized table that owns the relation a name refers to, if any. */
Oid
mt_owning_materialized_table_rv(RangeVar *rv)
{
	Oid			relid = RangeVarGetRelid(rv, NoLock, true);

	return OidIsValid(relid) ? mt_owning_materialized_table(relid) : InvalidOid;
}

/*
 * mt_catalog_sync_marker
 *		The table's restore marker carries its definition as of now (a
 *		restored table not taken up yet keeps the marker it came with).
 */
void
mt_catalog_sync_marker(MtTable *mt)
{
	if (mt->restore_pending == NULL)
		mt_marker_sync(mt, mt_catalog_definition(mt->relid));
}

/*
 * mt_catalog_definition
 *		The catalog row of an MT but for DEFINITION_EXCLUDED, as JSON text.
 */
char *
mt_catalog_definition(Oid relid)
{
	MtSavedUser saved;
	MemoryContext caller = CurrentMemoryContext;
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	char	   *result = NULL;

	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (mt_spi_execute_saved("SELECT (pg_catalog.to_jsonb(t) OPERATOR(pg_catalog.-) " DEFINITION_EXCLUDED
							  ")::pg_catalog.text FROM materialized_table_internal.mt_table t "
							  "WHERE t.relid OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the materialized table catalog");
	if (SPI_processed == 1)
		result = MemoryContextStrdup(caller, SPI_getvalue(SPI_tuptable->vals[0],
														  SPI_tuptable->tupdesc, 1));
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	return result;
}

/*
 * mt_catalog_insert_definition
 *		A catalog row for table relid, its query in query_view, from a
 *		definition of mt_catalog_definition's; the pipeline's columns empty
 *		and restore_pending as given.
 */
void
mt_catalog_insert_definition(Oid relid, Oid query_view, const char *definition,
							 const char *restore_pending)
{
	MtSavedUser saved;
	Oid			argtypes[4] = {TEXTOID, OIDOID, OIDOID, TEXTOID};
	Datum		values[4] = {CStringGetTextDatum(definition), ObjectIdGetDatum(relid),
	ObjectIdGetDatum(query_view), CStringGetTextDatum(restore_pending)};

	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	/* tables created from now on get ids past the restored ones */
	if (SPI_execute_with_args("SELECT pg_catalog.setval('materialized_table_internal.table_id_seq', "
							  "GREATEST(pg_catalog.nextval('materialized_table_internal.table_id_seq'), "
							  "($1::pg_catalog.jsonb OPERATOR(pg_catalog.->>) 'id')::pg_catalog.int8))",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not number a restored materialized table");
	if (SPI_execute_with_args(psprintf("INSERT INTO materialized_table_internal.mt_table "
									   "SELECT * FROM pg_catalog.jsonb_populate_record("
									   "NULL::materialized_table_internal.mt_table, "
									   "($1::pg_catalog.jsonb OPERATOR(pg_catalog.-) %s) OPERATOR(pg_catalog.||) "
									   "pg_catalog.jsonb_build_object('relid', $2::pg_catalog.regclass, "
									   "'query_view', $3::pg_catalog.regclass, 'restore_pending', $4))",
									   DEFINITION_EXCLUDED),
							  4, argtypes, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not insert into the materialized table catalog");
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	CacheInvalidateRelcacheByRelid(relid);
}

/* A hidden object of table relid; InvalidOid if it has none. */
Oid
mt_hidden_relid(const char *prefix, Oid relid)
{
	int64		id = mt_catalog_id(relid);

	if (id == 0)
		return InvalidOid;
	return get_relname_relid(mt_hidden_name(prefix, id), mt_internal_namespace());
}
