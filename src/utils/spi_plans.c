/*-------------------------------------------------------------------------
 *
 * src/utils/spi_plans.c
 *	  Statements the extension runs over and over -- reading and writing
 *	  its own catalog, state and history each maintenance cycle -- planned
 *	  once per backend.
 *
 * Parsing and planning such a statement costs more than running it: a
 * cycle that applies a few changes spent most of its time there.  A
 * statement whose text never changes is prepared the first time and kept
 * with SPI_keepplan; PostgreSQL's plan cache checks it against the
 * catalogs at each use and plans it again after a relevant change, so a
 * kept plan is never stale.  Statements built per table or per batch are
 * not kept: their texts vary, and plans of batches depend on their size.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "mt/utils/spi_plans.h"
#include "mt/utils/extension.h"
#include "mt/utils/subxact.h"

#define MAX_SAVED_ARGS 16

typedef struct SavedPlan
{
	uint32		hash;			/* key: hash of the text and argument types */
	char	   *sql;
	int			nargs;
	Oid			argtypes[MAX_SAVED_ARGS];
	SPIPlanPtr	plan;
} SavedPlan;

/* This backend's kept plans, by SavedPlan.hash */
static HTAB *saved_plans = NULL;

static uint32
statement_hash(const char *sql, int nargs, Oid *argtypes)
{
	uint32		h = string_hash(sql, strlen(sql) + 1);

	if (nargs > 0)
		h = hash_combine(h, hash_bytes((const unsigned char *) argtypes, sizeof(Oid) * nargs));
	return h;
}

/*
 * mt_spi_execute_saved
 *		SPI_execute_with_args for a statement whose text is a constant: the
 *		same arguments and result, from a plan kept for the backend's life.
 *		The caller is connected to SPI.
 */
int
mt_spi_execute_saved(const char *sql, int nargs, Oid *argtypes, Datum *values,
					 const char *nulls, bool read_only, long count)
{
	uint32		hash = statement_hash(sql, nargs, argtypes);
	SavedPlan  *entry;
	bool		found;

	if (nargs > MAX_SAVED_ARGS)
		return SPI_execute_with_args(sql, nargs, argtypes, values, nulls, read_only, count);
	if (saved_plans == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(uint32);
		ctl.entrysize = sizeof(SavedPlan);
		ctl.hcxt = TopMemoryContext;
		saved_plans = hash_create("materialized_table saved plans", 32, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	entry = hash_search(saved_plans, &hash, HASH_ENTER, &found);
	if (found && entry->plan == NULL)
		found = false;			/* preparing it failed last time */
	if (found && (strcmp(entry->sql, sql) != 0 || entry->nargs != nargs ||
				  (nargs > 0 && memcmp(entry->argtypes, argtypes, sizeof(Oid) * nargs) != 0)))
	{
		/* another statement with the same hash: this one goes unkept */
		return SPI_execute_with_args(sql, nargs, argtypes, values, nulls, read_only, count);
	}
	if (!found)
	{
		SPIPlanPtr	plan;

		entry->plan = NULL;
		entry->sql = NULL;
		plan = SPI_prepare(sql, nargs, argtypes);
		if (plan == NULL)
			elog(ERROR, "could not prepare a statement of the extension: %s",
				 SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "could not keep the plan of a statement of the extension");
		entry->sql = MemoryContextStrdup(TopMemoryContext, sql);
		entry->nargs = nargs;
		if (nargs > 0)
			memcpy(entry->argtypes, argtypes, sizeof(Oid) * nargs);
		entry->plan = plan;
	}
	return SPI_execute_plan(entry->plan, values, nulls, read_only, count);
}

/* Run generated SQL that must succeed with the given SPI result code. */
void
mt_spi_exec(const char *sql, int expected)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != expected)
		elog(ERROR, "unexpected result %d from generated statement: %s", rc, sql);
}

/*
 * mt_spi_oids
 *		The OIDs in the first column of a query's rows, with arg as $1 (an
 *		OID, unless invalid: then the query takes no argument), in the
 *		caller's memory context.
 */
List *
mt_spi_oids(const char *sql, Oid arg)
{
	MemoryContext caller = CurrentMemoryContext;
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(arg)};
	List	   *result = NIL;
	uint64		i;
	int			nestlevel = mt_pin_search_path();

	SPI_connect();
	if (mt_spi_execute_saved(sql, OidIsValid(arg) ? 1 : 0, types, values, NULL, false, 0)
		!= SPI_OK_SELECT)
		elog(ERROR, "unexpected result from generated query: %s", sql);
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext spi = MemoryContextSwitchTo(caller);

		result = lappend_oid(result, DatumGetObjectId(d));
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	mt_unpin_search_path(nestlevel);
	return result;
}

/*
 * mt_spi_exec_internal
 *		Run generated SQL (DDL or a write on a materialized table) in an SPI
 *		connection of its own, past the guards.
 */
void
mt_spi_exec_internal(const char *sql, int expected)
{
	SPI_connect();
	MT_INTERNAL_BEGIN();
	mt_spi_exec(sql, expected);
	MT_INTERNAL_END();
	SPI_finish();
}

/*
 * mt_spi_run_as_extension_owner
 *		One statement on the extension's private tables, as the extension's
 *		owner under the pinned search_path, in an SPI connection of its own
 *		(its text a constant when saved: see mt_spi_execute_saved).  A
 *		result code other than expected is an error saying failure.
 */
void
mt_spi_run_as_extension_owner(const char *sql, bool saved, int nargs, Oid *argtypes,
							  Datum *values, const char *nulls, int expected,
							  const char *failure)
{
	MtSavedUser user;
	int			rc;

	mt_as_extension_owner_begin(&user);
	SPI_connect();
	rc = saved ?
		mt_spi_execute_saved(sql, nargs, argtypes, values, nulls, false, 0) :
		SPI_execute_with_args(sql, nargs, argtypes, values, nulls, false, 0);
	if (rc != expected)
		elog(ERROR, "%s", failure);
	SPI_finish();
	mt_as_extension_owner_end(&user);
}

/*
 * mt_spi_int8_as_extension_owner
 *		The int8 that a one-row query of the extension's private objects
 *		returns (a sequence's next value), run as the extension's owner.
 */
int64
mt_spi_int8_as_extension_owner(const char *sql, const char *failure)
{
	MtSavedUser user;
	bool		isnull;
	int64		result;

	mt_as_extension_owner_begin(&user);
	SPI_connect();
	if (SPI_execute(sql, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "%s", failure);
	result = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	mt_as_extension_owner_end(&user);
	return result;
}

/*
 * mt_spi_insert_result
 *		Insert the rows of the last SPI result into table (its qualified,
 *		quoted name), one array parameter per column: a query that may run
 *		in parallel, as an INSERT ... SELECT may not, then its rows.  Each
 *		column's type must have an array type.
 */
void
mt_spi_insert_result(const char *table)
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
									   table, unnest.data),
							  desc->natts, types, arrays, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not insert the rows of %s", table);
}

/*
 * mt_estimated_cost
 *		The planner's estimate of the cost of statement sql with these
 *		parameters (their values known to it, as in a one-shot plan), to
 *		choose between two forms of one statement.
 */
Cost
mt_estimated_cost(const char *sql, int nparams, Oid *argtypes, ParamListInfo params)
{
	RawStmt    *raw = linitial_node(RawStmt, pg_parse_query(sql));
	List	   *queries = pg_analyze_and_rewrite_fixedparams(raw, sql, argtypes, nparams, NULL);

	return pg_plan_query(linitial_node(Query, queries), sql, CURSOR_OPT_PARALLEL_OK,
						 params)->planTree->total_cost;
}
