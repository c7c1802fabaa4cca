/*-------------------------------------------------------------------------
 *
 * src/continuous/partial_log.c
 *	  On a node of a Citus cluster: the groups written into the tables of
 *	  partial aggregates, logged so that the coordinator reads only those.
 *
 * A table of the coordinator kept from partial aggregates asks every node,
 * twice a second, for its rows (refresh/partials.c); reading and sending
 * all of them costs all the groups, however few changed.  So each write of
 * a table of partial aggregates logs the groups it wrote, in its own
 * transaction (partial_change: the group columns as text, NULL for "all
 * of them"), and the coordinator is sent the rows of the logged groups
 * only.
 *
 * The coordinator's calls do not commit with its transaction, and the
 * node's writers commit in any order: a call takes the log's rows that
 * have come in since into a new batch, and sends the groups of every batch
 * past the last the coordinator acknowledged; a batch acknowledged (the
 * coordinator committed what it was sent) is deleted at the next call.
 * Sending a group twice does no harm: its rows replace those it had.
 *
 * Keys are written and read under mt_portable_text_begin's settings: the
 * coordinator reads them back.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "mt/continuous/partial_log.h"
#include "mt/utils/extension.h"
#include "mt/utils/spi_plans.h"

struct MtPartialFeed
{
	Oid			relid;
	int			ngroups;		/* the first ngroups columns are the group's */
	TupleDesc	desc;
	List	   *rows;			/* HeapTuple: rows written, copied */
	bool		everything;
	MemoryContext context;
};

/*
 * relid keeps partial aggregates of the coordinator's table table_id; with
 * forwards, its applies log the keys its changes name instead
 * (mt_partial_log_named)
 */
void
mt_partial_log_register(Oid relid, int64 table_id, int ngroups, bool forwards)
{
	Oid			argtypes[4] = {OIDOID, INT8OID, INT4OID, BOOLOID};
	Datum		values[4] = {ObjectIdGetDatum(relid), Int64GetDatum(table_id), Int32GetDatum(ngroups),
	BoolGetDatum(forwards)};

	mt_spi_run_as_extension_owner("INSERT INTO materialized_table_internal.partial_table (relid, table_id, ngroups, forwards)"
								  " VALUES ($1, $2, $3, $4) ON CONFLICT (relid) DO UPDATE"
								  " SET table_id = EXCLUDED.table_id, ngroups = EXCLUDED.ngroups,"
								  "     forwards = EXCLUDED.forwards",
								  true, 4, argtypes, values, NULL, SPI_OK_INSERT,
								  "could not register a table of partial aggregates");
}

/* Is there a log here?  Not in a catalog of before version 1.4. */
static bool
log_exists(void)
{
	return OidIsValid(get_relname_relid("partial_table", mt_internal_namespace()));
}

/* A table of partial aggregates is dropped: its registration and log go. */
void
mt_partial_log_forget(Oid relid)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};

	if (!log_exists())
		return;

	mt_spi_run_as_extension_owner("DELETE FROM materialized_table_internal.partial_change"
								  " WHERE relid OPERATOR(pg_catalog.=) $1",
								  true, 1, argtypes, values, NULL, SPI_OK_DELETE,
								  "could not forget the log of a table of partial aggregates");
	mt_spi_run_as_extension_owner("DELETE FROM materialized_table_internal.partial_table"
								  " WHERE relid OPERATOR(pg_catalog.=) $1",
								  true, 1, argtypes, values, NULL, SPI_OK_DELETE,
								  "could not forget a table of partial aggregates");
}

/*
 * mt_partial_log_orphans
 *		The tables of partial aggregates of coordinator's tables not among
 *		live (int64 * ids): of one dropped while this node did not answer.
 */
List *
mt_partial_log_orphans(List *live)
{
	Datum	   *ids = palloc(sizeof(Datum) * (list_length(live) + 1));
	Oid			argtypes[1] = {INT8ARRAYOID};
	Datum		values[1];
	ListCell   *lc;
	List	   *orphans = NIL;
	MtSavedUser user;
	MemoryContext caller = CurrentMemoryContext;
	int			n = 0;

	if (!log_exists())
		return NIL;
	foreach(lc, live)
		ids[n++] = Int64GetDatum(*(int64 *) lfirst(lc));
	values[0] = PointerGetDatum(construct_array(ids, n, INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
												TYPALIGN_DOUBLE));
	mt_as_extension_owner_begin(&user);
	SPI_connect();
	if (mt_spi_execute_saved("SELECT relid FROM materialized_table_internal.partial_table"
							 " WHERE table_id OPERATOR(pg_catalog.<>) ALL ($1)",
							 1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the tables of partial aggregates");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Oid			relid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
														   SPI_tuptable->tupdesc, 1, &isnull));
		MemoryContext spi = MemoryContextSwitchTo(caller);

		orphans = lappend_oid(orphans, relid);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	mt_as_extension_owner_end(&user);
	return orphans;
}

/*
 * Its number of group columns, or -1 when its writes are not logged;
 * *forwards (unless NULL): whether it logs the keys named instead.
 */
static int
logged_groups(Oid relid, bool *forwards)
{
	char	   *name = get_rel_name(relid);
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	MtSavedUser user;
	int			ngroups = -1;

	/* (no lookup for the tables of other names: nearly all) */
	if (name == NULL || strncmp(name, MT_PARTIAL_PREFIX, strlen(MT_PARTIAL_PREFIX)) != 0 ||
		!log_exists())
		return -1;
	mt_as_extension_owner_begin(&user);
	SPI_connect();

	/*
	 * (not read-only: with a snapshot of its own, newer than the write's,
	 * which sees the table registered once it sees the table at all)
	 */
	if (forwards)
		*forwards = false;
	if (mt_spi_execute_saved("SELECT ngroups, forwards FROM materialized_table_internal.partial_table"
							 " WHERE relid OPERATOR(pg_catalog.=) $1",
							 1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the tables of partial aggregates");
	if (SPI_processed == 1)
	{
		bool		isnull;

		ngroups = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
											  &isnull));
		if (forwards)
			*forwards = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2,
												   &isnull));
	}
	SPI_finish();
	mt_as_extension_owner_end(&user);
	return ngroups;
}

bool
mt_partial_log_has(Oid relid)
{
	return logged_groups(relid, NULL) >= 0;
}

/* Does relid log the keys its changes name (follow_keys)? */
bool
mt_partial_log_forwards(Oid relid)
{
	bool		forwards;

	return logged_groups(relid, &forwards) >= 0 && forwards;
}

MtPartialFeed *
mt_partial_log_begin(MtTable *mt, TupleDesc desc)
{
	bool		forwards;
	int			ngroups = logged_groups(mt->relid, &forwards);
	MtPartialFeed *feed;

	/* (one that forwards keys logs them as it applies, not its rows) */
	if (ngroups < 0 || forwards)
		return NULL;
	feed = palloc0(sizeof(MtPartialFeed));
	feed->relid = mt->relid;
	feed->ngroups = ngroups;
	feed->context = AllocSetContextCreate(CurrentMemoryContext, "materialized_table partial log",
										  ALLOCSET_DEFAULT_SIZES);
	feed->desc = CreateTupleDescCopy(desc);
	/* without group columns, the one row is all of them */
	feed->everything = (ngroups == 0);
	return feed;
}

void
mt_partial_log_row(MtPartialFeed *feed, HeapTuple tuple)
{
	MemoryContext old;

	if (feed->everything)
		return;
	old = MemoryContextSwitchTo(feed->context);
	feed->rows = lappend(feed->rows, heap_copytuple(tuple));
	if (list_length(feed->rows) > 2 * MT_PARTIAL_MAX_KEYS)
	{
		/* the coordinator will be sent all groups anyway */
		feed->everything = true;
		feed->rows = NIL;
		MemoryContextSwitchTo(old);
		MemoryContextReset(feed->context);
		return;
	}
	MemoryContextSwitchTo(old);
}

void
mt_partial_log_everything(MtPartialFeed *feed)
{
	feed->everything = true;
}

static int
compare_keys(const ListCell *a, const ListCell *b)
{
	return strcmp(lfirst(a), lfirst(b));
}

/*
 * A row's group columns as the text of a text[] (the group's key), its
 * values written by their types' output functions (as the table's owner:
 * a type's code is its owner's business).
 */
static char *
row_key(MtPartialFeed *feed, HeapTuple tuple, Datum *values, bool *isnull, FmgrInfo *out,
		Datum *texts)
{
	int			dims[1] = {feed->ngroups};
	int			lbs[1] = {1};

	heap_deform_tuple(tuple, feed->desc, values, isnull);
	for (int i = 0; i < feed->ngroups; i++)
		texts[i] = isnull[i] ? (Datum) 0 :
			CStringGetTextDatum(OutputFunctionCall(&out[i], values[i]));
	return OidOutputFunctionCall(F_ARRAY_OUT,
								 PointerGetDatum(construct_md_array(texts, isnull, 1, dims, lbs,
																	TEXTOID, -1, false, TYPALIGN_INT)));
}

static void
log_keys(Oid relid, Datum keys, bool everything)
{
	Oid			argtypes[2] = {OIDOID, TEXTARRAYOID};
	Datum		values[2] = {ObjectIdGetDatum(relid), keys};

	if (everything)
		mt_spi_run_as_extension_owner("INSERT INTO materialized_table_internal.partial_change (relid, key)"
									  " VALUES ($1, NULL)",
									  true, 1, argtypes, values, NULL, SPI_OK_INSERT,
									  "could not log the groups written");
	else
		mt_spi_run_as_extension_owner("INSERT INTO materialized_table_internal.partial_change (relid, key)"
									  " SELECT $1, k::pg_catalog.text[] FROM pg_catalog.unnest($2) k",
									  true, 2, argtypes, values, NULL, SPI_OK_INSERT,
									  "could not log the groups written");
}

/* The write is done: its groups, each once, logged in its transaction. */
void
mt_partial_log_finish(MtPartialFeed *feed)
{
	MemoryContext old;
	List	   *keys = NIL;
	List	   *distinct = NIL;
	ListCell   *lc;
	Datum	   *elems;
	int			n = 0;

	if (feed == NULL)
		return;
	old = MemoryContextSwitchTo(feed->context);
	if (!feed->everything && feed->rows != NIL)
	{
		Datum	   *values = palloc(sizeof(Datum) * feed->desc->natts);
		bool	   *isnull = palloc(sizeof(bool) * feed->desc->natts);
		Datum	   *texts = palloc(sizeof(Datum) * feed->ngroups);
		FmgrInfo   *out = palloc(sizeof(FmgrInfo) * feed->ngroups);
		int			nestlevel;
		char	   *prev = NULL;

		for (int i = 0; i < feed->ngroups; i++)
		{
			Oid			typoutput;
			bool		varlena;

			getTypeOutputInfo(TupleDescAttr(feed->desc, i)->atttypid, &typoutput, &varlena);
			fmgr_info(typoutput, &out[i]);
		}
		nestlevel = mt_portable_text_begin();
		foreach(lc, feed->rows)
			keys = lappend(keys, row_key(feed, lfirst(lc), values, isnull, out, texts));
		mt_unpin_search_path(nestlevel);
		list_sort(keys, compare_keys);
		foreach(lc, keys)
		{
			if (prev == NULL || strcmp(prev, lfirst(lc)) != 0)
				distinct = lappend(distinct, lfirst(lc));
			prev = lfirst(lc);
		}
	}
	if (feed->everything || distinct != NIL)
	{
		elems = palloc(sizeof(Datum) * (list_length(distinct) + 1));
		foreach(lc, distinct)
			elems[n++] = CStringGetTextDatum(lfirst(lc));
		log_keys(feed->relid, PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false,
															  TYPALIGN_INT)),
				 feed->everything);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(feed->context);
}

/* The table's rows were written from its query, unnamed: all groups. */
void
mt_partial_log_rewritten(Oid relid)
{
	bool		forwards;

	if (logged_groups(relid, &forwards) >= 0 && !forwards)
		log_keys(relid, (Datum) 0, true);
}

/*
 * A table that forwards keys applied a batch: the key values its changes
 * named (char *[] of its ngroups key columns, in mt_portable_text_begin's
 * form; NULL for NULL), or all of them, logged in its transaction.
 */
void
mt_partial_log_named(Oid relid, List *keys, int ngroups, bool everything)
{
	Datum	   *elems = palloc(sizeof(Datum) * (list_length(keys) + 1));
	int			dims[1] = {ngroups};
	int			lbs[1] = {1};
	Datum	   *texts = palloc(sizeof(Datum) * (ngroups + 1));
	bool	   *nulls = palloc(sizeof(bool) * (ngroups + 1));
	ListCell   *lc;
	int			n = 0;

	if (everything || ngroups == 0 || list_length(keys) > MT_PARTIAL_MAX_KEYS)
	{
		log_keys(relid, (Datum) 0, true);
		return;
	}
	if (keys == NIL)
		return;
	foreach(lc, keys)
	{
		char	  **key = lfirst(lc);

		for (int i = 0; i < ngroups; i++)
		{
			nulls[i] = (key[i] == NULL);
			texts[i] = nulls[i] ? (Datum) 0 : CStringGetTextDatum(key[i]);
		}
		elems[n++] = CStringGetTextDatum(OidOutputFunctionCall(F_ARRAY_OUT,
															   PointerGetDatum(construct_md_array(texts, nulls, 1, dims, lbs,
																								  TEXTOID, -1, false,
																								  TYPALIGN_INT))));
	}
	log_keys(relid, PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT)),
			 false);
}

/*
 * mt_partial_log_take
 *		For a call of the coordinator that acknowledged the batches up to
 *		acked (-1: none, it is to be sent all rows): delete those, take
 *		the rows logged since into a new batch, and return the newest
 *		batch of the tables (acked, or 0, when there is none).  *keys (unless
 *		keys is NULL): the groups of the batches past acked, each a char
 *		*[] of the group columns' text (NULL for NULL); NIL when there are
 *		none, and a list of one NULL when all groups are to be sent.
 */
int64
mt_partial_log_take(List *relids, int64 acked, List **keys)
{
	Datum	   *oids = palloc(sizeof(Datum) * (list_length(relids) + 1));
	Oid			argtypes[3] = {OIDARRAYOID, INT8OID, INT8OID};
	Datum		values[3];
	Datum		max;
	ListCell   *lc;
	MtSavedUser user;
	MemoryContext caller = CurrentMemoryContext;
	int64		newest = Max(acked, 0);
	int			n = 0;
	bool		isnull;

	foreach(lc, relids)
		oids[n++] = ObjectIdGetDatum(lfirst_oid(lc));
	values[0] = PointerGetDatum(construct_array(oids, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	values[1] = Int64GetDatum(acked);
	values[2] = Int64GetDatum(mt_spi_int8_as_extension_owner("SELECT pg_catalog.nextval('materialized_table_internal.partial_batch')",
															 "could not number a batch of logged groups"));
	if (keys)
		*keys = NIL;
	mt_as_extension_owner_begin(&user);
	SPI_connect();
	/* (none read-only: each sees what the one before it did) */
	if (mt_spi_execute_saved("DELETE FROM materialized_table_internal.partial_change"
							 " WHERE relid OPERATOR(pg_catalog.=) ANY ($1) AND batch OPERATOR(pg_catalog.<=) $2",
							 2, argtypes, values, NULL, false, 0) != SPI_OK_DELETE ||
		mt_spi_execute_saved("UPDATE materialized_table_internal.partial_change SET batch = $3"
							 " WHERE relid OPERATOR(pg_catalog.=) ANY ($1) AND batch IS NULL",
							 3, argtypes, values, NULL, false, 0) != SPI_OK_UPDATE ||
		mt_spi_execute_saved("SELECT pg_catalog.max(batch) FROM materialized_table_internal.partial_change"
							 " WHERE relid OPERATOR(pg_catalog.=) ANY ($1)",
							 1, argtypes, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not take the logged groups of the tables of partial aggregates");
	max = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull && DatumGetInt64(max) > newest)
		newest = DatumGetInt64(max);
	if (keys && acked >= 0)
	{
		uint64		i;

		if (mt_spi_execute_saved("SELECT DISTINCT key FROM materialized_table_internal.partial_change"
								 " WHERE relid OPERATOR(pg_catalog.=) ANY ($1) AND batch OPERATOR(pg_catalog.>) $2"
								 " ORDER BY key NULLS FIRST",
								 2, argtypes, values, NULL, false, MT_PARTIAL_MAX_KEYS + 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the logged groups of the tables of partial aggregates");
		for (i = 0; i < SPI_processed; i++)
		{
			Datum		key = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
			MemoryContext spi = MemoryContextSwitchTo(caller);

			if (isnull || SPI_processed > MT_PARTIAL_MAX_KEYS)
			{
				/* all groups */
				*keys = list_make1(NULL);
				MemoryContextSwitchTo(spi);
				break;
			}
			else
			{
				Datum	   *elems;
				bool	   *nulls;
				int			nelems;
				char	  **columns;

				deconstruct_array(DatumGetArrayTypeP(key), TEXTOID, -1, false, TYPALIGN_INT,
								  &elems, &nulls, &nelems);
				columns = palloc(sizeof(char *) * (nelems + 1));
				for (int c = 0; c < nelems; c++)
					columns[c] = nulls[c] ? NULL : TextDatumGetCString(elems[c]);
				*keys = lappend(*keys, columns);
			}
			MemoryContextSwitchTo(spi);
		}

		/*
		 * Too many to name (the coordinator long away): they become one
		 * "all groups" row each in the newest batch, so that the next
		 * calls do not read them all again
		 */
		if (SPI_processed > MT_PARTIAL_MAX_KEYS)
		{
			values[2] = Int64GetDatum(newest);
			if (mt_spi_execute_saved("DELETE FROM materialized_table_internal.partial_change"
									 " WHERE relid OPERATOR(pg_catalog.=) ANY ($1) AND batch OPERATOR(pg_catalog.>) $2",
									 2, argtypes, values, NULL, false, 0) != SPI_OK_DELETE ||
				mt_spi_execute_saved("INSERT INTO materialized_table_internal.partial_change (relid, batch, key)"
									 " SELECT r, $3, NULL FROM pg_catalog.unnest($1) r",
									 3, argtypes, values, NULL, false, 0) != SPI_OK_INSERT)
				elog(ERROR, "could not fold the logged groups of the tables of partial aggregates");
		}
	}
	SPI_finish();
	mt_as_extension_owner_end(&user);
	return newest;
}
