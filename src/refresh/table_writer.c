/*-------------------------------------------------------------------------
 *
 * src/refresh/table_writer.c
 *	  Inserting a query's rows into a materialized table.
 *
 * The receiver gets the rows of the refresh query -- one column per
 * writable column of the table, in column order -- while the query may
 * still be running with parallel workers.  Inserting from the leader during
 * a parallel query is what CREATE TABLE AS and REFRESH MATERIALIZED VIEW
 * do too; nothing here may assign a transaction ID or a command ID, so the
 * refresh engine assigns both before the query starts.
 *
 * A row whose LIST partition does not exist yet is kept in a tuplestore;
 * when the query is done (and parallel mode is over), mt_writer_finish()
 * creates the missing partitions and inserts those rows.  So are all new
 * rows of a table with a unique index, which are inserted only after the
 * rows they replace are deleted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "catalog/pg_index.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/execPartition.h"
#include "executor/executor.h"
#include "executor/nodeModifyTable.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "catalog/pg_publication.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/tuplestore.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "storage/itemptr.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "mt/refresh/observer.h"
#include "mt/refresh/partitions.h"
#include "mt/refresh/table_writer.h"

struct MtWriter
{
	DestReceiver pub;			/* must be first */
	Oid			relid;
	Relation	rel;			/* open while the executor state is */
	MtTable    *mt;
	EState	   *estate;
	ResultRelInfo *rri;
	ModifyTableState *mtstate;
	PartitionTupleRouting *proute;
	BulkInsertState bistate;
	Oid			bistate_relid;	/* the partition its pinned buffer is of */
	CommandId	cid;
	TupleTableSlot *slot;		/* in the table's row type */
	TupleTableSlot *pending_slot;	/* same, for rows read back from pending */
	int			nwritable;
	AttrNumber *writable;		/* attnums of columns the query fills */
	bool		has_generated;
	MtPartitionMap *partitions;
	List	   *missing;		/* values lists of partitions to create */
	Tuplestorestate *pending;	/* rows waiting for those partitions */
	MemoryContext row_context;	/* reset for every row */
	MemoryContext long_context; /* lives as long as the writer */
	int			insert_options;

	/* replacing rows by difference (see load_old_rows) */
	bool		diff;
	int			ncompare;
	int		   *compare;		/* positions in writable[] that are compared */
	HTAB	   *old_rows;		/* OldRowBucket by hash */
	MemoryContext old_context;
	bool		defer;			/* new rows wait until the old ones are gone */

	MtRowFeed  *feed;			/* the rows' readers (observer.h), or NULL */
	TupleDesc	feed_desc;

	MtRefreshCounts counts;
};

/* A row of the table before the refresh, among those it replaces. */
typedef struct OldRow
{
	struct OldRow *next;		/* same hash */
	Oid			tableoid;
	ItemPointerData tid;
	bool		matched;		/* the query produced it again */
	Datum	   *values;			/* the compared columns */
	bool	   *isnull;
} OldRow;

typedef struct OldRowBucket
{
	uint32		hash;			/* key */
	OldRow	   *rows;
} OldRowBucket;

/* Hash of the compared columns; values/isnull indexed like writable[]. */
static uint32
row_hash(MtWriter *w, Datum *values, bool *isnull)
{
	TupleDesc	desc = RelationGetDescr(w->rel);
	uint32		hash = 0;
	int			i;

	for (i = 0; i < w->ncompare; i++)
	{
		int			k = w->compare[i];
		Form_pg_attribute att = TupleDescAttr(desc, w->writable[k] - 1);

		hash = hash_combine(hash, isnull[k] ? 0x9e3779b9 :
							datum_image_hash(values[k], att->attbyval, att->attlen));
	}
	return hash;
}

static bool
row_equal(MtWriter *w, OldRow *old, Datum *values, bool *isnull)
{
	TupleDesc	desc = RelationGetDescr(w->rel);
	int			i;

	for (i = 0; i < w->ncompare; i++)
	{
		int			k = w->compare[i];
		Form_pg_attribute att = TupleDescAttr(desc, w->writable[k] - 1);

		if (old->isnull[i] != isnull[k])
			return false;
		if (!isnull[k] && !datum_image_eq(old->values[i], values[k], att->attbyval, att->attlen))
			return false;
	}
	return true;
}

static void
insert_slot(MtWriter *w, TupleTableSlot *slot)
{
	ResultRelInfo *rri = w->rri;
	Relation	target = w->rel;

	if (w->feed)
		mt_observe_row(w->feed, ExecCopySlotHeapTuple(slot), 1);
	if (w->proute)
	{
		TupleConversionMap *map;

		rri = ExecFindPartition(w->mtstate, w->rri, w->proute, slot, w->estate);
		target = rri->ri_RelationDesc;
		map = rri->ri_RootToPartitionMap;
		if (map != NULL)
			slot = execute_attr_map_slot(map->attrMap, slot, rri->ri_PartitionTupleSlot);
	}

	if (w->has_generated)
		ExecComputeStoredGenerated(rri, w->estate, slot, CMD_INSERT);
	if (target->rd_att->constr)
		ExecConstraints(rri, slot, w->estate);

	/*
	 * The bulk-insert state keeps the last buffer pinned and heap_insert
	 * reuses it without checking whose it is: let go of it when the row
	 * goes to another partition (as COPY does), or the row lands in the
	 * previous partition's page.
	 */
	if (RelationGetRelid(target) != w->bistate_relid)
	{
		ReleaseBulkInsertStatePin(w->bistate);
		w->bistate_relid = RelationGetRelid(target);
	}
	table_tuple_insert(target, slot, w->cid, w->insert_options, w->bistate);
	if (rri->ri_NumIndices > 0)
		ExecInsertIndexTuples(rri, slot, w->estate, false, false, NULL, NIL);
	w->counts.inserted++;
}

/* Fill the table-shaped slot from a query row. */
static TupleTableSlot *
to_table_slot(MtWriter *w, TupleTableSlot *qslot)
{
	TupleTableSlot *slot = w->slot;
	int			natts = slot->tts_tupleDescriptor->natts;
	int			i;

	ExecClearTuple(slot);
	slot_getallattrs(qslot);
	for (i = 0; i < natts; i++)
	{
		slot->tts_values[i] = (Datum) 0;
		slot->tts_isnull[i] = true;
	}
	for (i = 0; i < w->nwritable; i++)
	{
		AttrNumber	att = w->writable[i];

		slot->tts_values[att - 1] = qslot->tts_values[i];
		slot->tts_isnull[att - 1] = qslot->tts_isnull[i];
	}
	return ExecStoreVirtualTuple(slot);
}

static bool
writer_receive(TupleTableSlot *qslot, DestReceiver *self)
{
	MtWriter   *w = (MtWriter *) self;
	MemoryContext oldctx = MemoryContextSwitchTo(w->row_context);
	TupleTableSlot *slot;
	List	   *values = NIL;

	MemoryContextReset(w->row_context);
	if (w->diff)
	{
		/* a row that is already there, unchanged, stays as it is */
		uint32		hash;
		OldRowBucket *bucket;

		slot_getallattrs(qslot);
		hash = row_hash(w, qslot->tts_values, qslot->tts_isnull);
		bucket = hash_search(w->old_rows, &hash, HASH_FIND, NULL);
		if (bucket)
		{
			OldRow	   *old;

			for (old = bucket->rows; old; old = old->next)
			{
				if (!old->matched && row_equal(w, old, qslot->tts_values, qslot->tts_isnull))
				{
					old->matched = true;
					w->counts.unchanged++;
					MemoryContextSwitchTo(oldctx);
					return true;
				}
			}
		}
	}
	slot = to_table_slot(w, qslot);
	if (w->partitions && !mt_partition_map_has_row(w->partitions, slot, &values))
	{
		ListCell   *lc;
		List	   *copy = NIL;

		MemoryContextSwitchTo(w->long_context);
		foreach(lc, values)
			copy = lappend(copy, lfirst(lc) ? pstrdup(lfirst(lc)) : NULL);
		w->missing = lappend(w->missing, copy);
		/* from the first missing partition on, every row waits */
		if (w->pending == NULL)
			w->pending = tuplestore_begin_heap(false, false, work_mem);
	}
	if (w->pending)
	{
		MemoryContextSwitchTo(w->long_context);
		tuplestore_puttupleslot(w->pending, slot);
	}
	else
		insert_slot(w, slot);
	MemoryContextSwitchTo(oldctx);
	return true;
}

static void
writer_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	MtWriter   *w = (MtWriter *) self;

	if (typeinfo->natts != w->nwritable)
		elog(ERROR, "refresh query returns %d columns, table \"%s\" expects %d",
			 typeinfo->natts, RelationGetRelationName(w->rel), w->nwritable);
	/* the query may run in parallel mode: take the command ID now */
	w->cid = GetCurrentCommandId(true);
}

static void
writer_shutdown(DestReceiver *self)
{
}

static void
writer_destroy(DestReceiver *self)
{
}

/* Executor state for inserting into w->rel, with routing if partitioned. */
static void
writer_open_executor(MtWriter *w)
{
	RangeTblEntry *rte;
	Relation	rel;

	w->estate = CreateExecutorState();
	rte = makeNode(RangeTblEntry);
	rte->rtekind = RTE_RELATION;
	rte->relid = w->relid;
	rte->relkind = get_rel_relkind(w->relid);
	rte->rellockmode = RowExclusiveLock;
	rte->requiredPerms = ACL_INSERT;
	ExecInitRangeTable(w->estate, list_make1(rte));
	w->rri = makeNode(ResultRelInfo);
	ExecInitResultRelation(w->estate, w->rri, 1);
	ExecOpenIndices(w->rri, false);
	rel = w->rel = w->rri->ri_RelationDesc;

	w->mtstate = makeNode(ModifyTableState);
	w->mtstate->ps.plan = NULL;
	w->mtstate->ps.state = w->estate;
	w->mtstate->operation = CMD_INSERT;
	w->mtstate->mt_nrels = 1;
	w->mtstate->resultRelInfo = w->rri;
	w->mtstate->rootResultRelInfo = w->rri;
	if (rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
		w->proute = ExecSetupPartitionTupleRouting(w->estate, rel);
	w->slot = ExecInitExtraTupleSlot(w->estate, RelationGetDescr(rel), &TTSOpsVirtual);
	w->pending_slot = ExecInitExtraTupleSlot(w->estate, RelationGetDescr(rel),
											 &TTSOpsMinimalTuple);
	w->bistate = GetBulkInsertState();
	w->bistate_relid = InvalidOid;
}

static void
writer_close_executor(MtWriter *w)
{
	FreeBulkInsertState(w->bistate);
	if (w->proute)
		ExecCleanupTupleRouting(w->mtstate, w->proute);
	w->proute = NULL;
	ExecResetTupleTable(w->estate->es_tupleTable, false);
	/* closes the result relation's indexes too: closing them twice breaks refcounts */
	ExecCloseResultRelations(w->estate);
	ExecCloseRangeTableRelations(w->estate);
	FreeExecutorState(w->estate);
	w->estate = NULL;
	w->rel = NULL;
}

/*
 * load_old_rows
 *		Read the rows the refresh replaces into a hash table of their
 *		compared columns (the query's; metadata columns are left out, so a
 *		row that did not change keeps the time it was written).  A row the
 *		query produces again is then left alone, and only rows that changed
 *		are written: a refresh that changes little writes little, which
 *		saves WAL, bloat and work for logical decoding.  When the rows would
 *		take more than maintenance_work_mem, give up: the caller deletes
 *		them all and every row is inserted again.
 */
static void
load_old_rows(MtWriter *w, const char *where, int nargs, Oid *argtypes, Datum *values)
{
	TupleDesc	desc = RelationGetDescr(w->rel);
	StringInfoData sql;
	HASHCTL		ctl;
	Portal		portal;
	Size		limit = (Size) maintenance_work_mem * 1024;
	int			i;

	w->compare = palloc(sizeof(int) * w->nwritable);
	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT tableoid, ctid");
	for (i = 0; i < w->nwritable; i++)
	{
		char	   *name = NameStr(TupleDescAttr(desc, w->writable[i] - 1)->attname);

		if (mt_option_value(w->mt->metadata_columns, name))
			continue;
		w->compare[w->ncompare++] = i;
		appendStringInfo(&sql, ", %s", quote_identifier(name));
	}
	appendStringInfo(&sql, " FROM %s%s",
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(w->rel)),
												RelationGetRelationName(w->rel)),
					 where);

	w->old_context = AllocSetContextCreate(w->long_context, "materialized_table old rows",
										   ALLOCSET_DEFAULT_SIZES);
	ctl.keysize = sizeof(uint32);
	ctl.entrysize = sizeof(OldRowBucket);
	ctl.hcxt = w->old_context;
	w->old_rows = hash_create("materialized_table old rows", 1024, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	w->diff = true;

	portal = SPI_cursor_open_with_args(NULL, sql.data, nargs, argtypes, values, NULL,
									   false, 0);
	for (;;)
	{
		uint64		n;

		SPI_cursor_fetch(portal, true, 10000);
		if (SPI_processed == 0)
			break;
		for (n = 0; n < SPI_processed; n++)
		{
			HeapTuple	tup = SPI_tuptable->vals[n];
			MemoryContext old = MemoryContextSwitchTo(w->old_context);
			OldRow	   *row = palloc(sizeof(OldRow));
			Datum	   *vals = palloc(sizeof(Datum) * w->nwritable);
			bool	   *nulls = palloc(sizeof(bool) * w->nwritable);
			OldRowBucket *bucket;
			uint32		hash;
			bool		found;
			bool		isnull;

			row->values = palloc(sizeof(Datum) * w->ncompare);
			row->isnull = palloc(sizeof(bool) * w->ncompare);
			row->matched = false;
			row->tableoid = DatumGetObjectId(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull));
			row->tid = *((ItemPointer) DatumGetPointer(SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull)));
			for (i = 0; i < w->ncompare; i++)
			{
				Form_pg_attribute att = TupleDescAttr(desc, w->writable[w->compare[i]] - 1);
				Datum		d = SPI_getbinval(tup, SPI_tuptable->tupdesc, i + 3, &row->isnull[i]);

				row->values[i] = row->isnull[i] ? (Datum) 0 :
					datumCopy(d, att->attbyval, att->attlen);
				vals[w->compare[i]] = row->values[i];
				nulls[w->compare[i]] = row->isnull[i];
			}
			hash = row_hash(w, vals, nulls);
			pfree(vals);
			pfree(nulls);
			bucket = hash_search(w->old_rows, &hash, HASH_ENTER, &found);
			row->next = found ? bucket->rows : NULL;
			bucket->rows = row;
			MemoryContextSwitchTo(old);
		}
		SPI_freetuptable(SPI_tuptable);
		if (MemoryContextMemAllocated(w->old_context, true) > limit)
		{
			w->diff = false;
			break;
		}
	}
	SPI_cursor_close(portal);
	if (!w->diff)
	{
		MemoryContextDelete(w->old_context);
		w->old_context = NULL;
		w->old_rows = NULL;
	}
}

/* An old row as a tuple of the table (columns not compared are NULL). */
static HeapTuple
old_row_tuple(MtWriter *w, OldRow *row)
{
	TupleDesc	desc = w->feed_desc;
	Datum	   *values = palloc0(sizeof(Datum) * desc->natts);
	bool	   *isnull = palloc(sizeof(bool) * desc->natts);
	int			i;

	for (i = 0; i < desc->natts; i++)
		isnull[i] = true;
	for (i = 0; i < w->ncompare; i++)
	{
		AttrNumber	att = w->writable[w->compare[i]];

		values[att - 1] = row->values[i];
		isnull[att - 1] = row->isnull[i];
	}
	return heap_form_tuple(desc, values, isnull);
}

/* Delete the old rows the query did not produce again. */
static void
delete_unmatched(MtWriter *w)
{
	HASH_SEQ_STATUS status;
	OldRowBucket *bucket;
	Relation	rel = NULL;
	CommandId	cid;

	CommandCounterIncrement();
	cid = GetCurrentCommandId(true);
	hash_seq_init(&status, w->old_rows);
	while ((bucket = hash_seq_search(&status)) != NULL)
	{
		OldRow	   *row;

		for (row = bucket->rows; row; row = row->next)
		{
			TM_FailureData tmfd;
			TM_Result	result;

			if (row->matched)
				continue;
			if (rel == NULL || RelationGetRelid(rel) != row->tableoid)
			{
				if (rel)
					table_close(rel, NoLock);
				rel = table_open(row->tableoid, RowExclusiveLock);
			}
			result = table_tuple_delete(rel, &row->tid, cid, GetActiveSnapshot(),
										InvalidSnapshot, true, &tmfd, false);
			if (result != TM_Ok)
				elog(ERROR, "could not delete an old row of \"%s\" (result %d)",
					 RelationGetRelationName(rel), (int) result);
			w->counts.deleted++;
			if (w->feed)
				mt_observe_row(w->feed, old_row_tuple(w, row), -1);
		}
	}
	if (rel)
		table_close(rel, NoLock);
}

/* Has the table (or, partitioned, its partitions) a unique index? */
static bool
has_unique_index(Relation rel)
{
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	bool		result = false;

	foreach(lc, indexes)
	{
		HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));

		if (HeapTupleIsValid(tup))
		{
			if (((Form_pg_index) GETSTRUCT(tup))->indisunique)
				result = true;
			ReleaseSysCache(tup);
		}
	}
	list_free(indexes);
	return result;
}

/*
 * mt_writer_begin
 *		Prepare to replace the rows of the table matching where (a WHERE
 *		clause with nargs text parameters, or "" for all of them).  The
 *		caller holds a lock on the table that keeps other writers out, has
 *		assigned a transaction ID, is connected to SPI, and runs the query
 *		next.  If mt_writer_diffs() is false afterwards, the caller deletes
 *		those rows itself before running the query.
 */
MtWriter *
mt_writer_begin(Oid relid, MtTable *mt, const char *where, int nargs, Oid *argtypes,
				Datum *values)
{
	MtWriter   *w = palloc0(sizeof(MtWriter));
	TupleDesc	desc;
	Relation	rel;
	PublicationDesc pubdesc;
	int			i;

	w->pub.receiveSlot = writer_receive;
	w->pub.rStartup = writer_startup;
	w->pub.rShutdown = writer_shutdown;
	w->pub.rDestroy = writer_destroy;
	w->pub.mydest = DestNone;
	w->relid = relid;
	w->mt = mt;
	w->long_context = CurrentMemoryContext;
	writer_open_executor(w);
	rel = w->rel;
	desc = RelationGetDescr(rel);

	w->writable = palloc(sizeof(AttrNumber) * desc->natts);
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		if (att->attgenerated)
		{
			w->has_generated = true;
			continue;
		}
		w->writable[w->nwritable++] = att->attnum;
	}

	/*
	 * Our own logical decoding never needs the rows a refresh writes (it
	 * hands changes to downstream tables itself), so keep them out of
	 * decoding unless a publication wants them.
	 */
	RelationBuildPublicationDesc(rel, &pubdesc);
	w->insert_options = pubdesc.pubactions.pubinsert ? 0 : TABLE_INSERT_NO_LOGICAL;
	w->cid = GetCurrentCommandId(true);
	w->partitions = mt_partition_map_load(rel, mt);
	w->row_context = AllocSetContextCreate(CurrentMemoryContext,
										   "materialized_table writer row",
										   ALLOCSET_DEFAULT_SIZES);
	load_old_rows(w, where, nargs, argtypes, values);

	/*
	 * Under a unique key (a primary key), the new version of a changed row
	 * would collide with the old one, which is only deleted once the query
	 * has run: such rows wait in the tuplestore until then (when there are
	 * old rows at all).
	 */
	if (w->diff && hash_get_num_entries(w->old_rows) > 0 && has_unique_index(rel))
	{
		w->defer = true;
		w->pending = tuplestore_begin_heap(false, false, work_mem);
	}
	w->feed_desc = CreateTupleDescCopy(desc);
	w->feed = mt_observe_begin(mt, w->feed_desc);
	if (w->feed && !w->diff)
		mt_observe_everything(w->feed);
	return w;
}

bool
mt_writer_diffs(MtWriter *w)
{
	return w->diff;
}

DestReceiver *
mt_writer_receiver(MtWriter *w)
{
	return &w->pub;
}

/*
 * mt_writer_finish
 *		Create missing partitions, insert the rows kept for them, delete
 *		the old rows the query did not produce again, close.
 */
MtRefreshCounts
mt_writer_finish(MtWriter *w)
{
	/* rows replaced under a unique key go before their new versions come */
	if (w->defer)
		delete_unmatched(w);
	if (w->pending)
	{
		ListCell   *lc;

		/* new partitions change the partition tree: route afresh */
		writer_close_executor(w);
		foreach(lc, w->missing)
			mt_partition_create(w->relid, w->mt, lfirst(lc));
		CommandCounterIncrement();
		writer_open_executor(w);
		w->cid = GetCurrentCommandId(true);

		tuplestore_rescan(w->pending);
		while (tuplestore_gettupleslot(w->pending, true, false, w->pending_slot))
		{
			MemoryContextReset(w->row_context);
			insert_slot(w, w->pending_slot);
		}
		tuplestore_end(w->pending);
		w->pending = NULL;
	}
	writer_close_executor(w);
	if (w->diff)
	{
		if (!w->defer)
			delete_unmatched(w);
		MemoryContextDelete(w->old_context);
	}
	mt_observe_finish(w->feed);
	MemoryContextDelete(w->row_context);
	return w->counts;
}
