/*-------------------------------------------------------------------------
 *
 * src/refresh/in_place.c
 *	  Adding group adjustments to the rows of a table that is its own state.
 *
 * See mt/refresh/in_place.h.  The continuous layer computes, from a batch
 * of changes, what each group of a DELTAS table without hidden state adds
 * to its row (its row count, and per aggregate a non-NULL count or a sum);
 * this adds it.  Rows are adjusted one by one through the executor's
 * routines where the table allows it (found where they were last written,
 * through the table's key index, or by one scan of it), else by a MERGE
 * per pattern of NULL group columns.  Readers of the table's rows (the
 * row observer, mt/refresh/observer.h) are fed the touched groups' rows
 * as they were before and as they are after.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "nodes/makefuncs.h"
#include "parser/parse_coerce.h"
#include "parser/parse_oper.h"
#include "storage/bufmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "mt/catalog/catalog.h"
#include "mt/materialized_table.h"
#include "mt/refresh/in_place.h"
#include "mt/refresh/observer.h"
#include "mt/refresh/refresh.h"
#include "mt/utils/row_cache.h"
#include "mt/utils/sql.h"

/*
 * A lookup of a group's row through the table's key index costs about as
 * much as reading this many rows in a scan of the table (about 8 and 0.15
 * microseconds on the benchmark's machine): groups more than the table's
 * rows over this are found by one scan instead.
 */
#define SCAN_ROWS_PER_LOOKUP	50

/* A text[] of one group column of the groups. */
static Datum
key_array(List *groups, int col)
{
	int			n = list_length(groups);
	Datum	   *elems = palloc(sizeof(Datum) * (n + 1));
	bool	   *nulls = palloc0(sizeof(bool) * (n + 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};
	ListCell   *lc;

	foreach(lc, groups)
	{
		MtInPlaceGroup *g = lfirst(lc);
		int			i = foreach_current_index(lc);

		nulls[i] = (g->values[col] == NULL);
		elems[i] = nulls[i] ? (Datum) 0 : CStringGetTextDatum(g->values[col]);
	}
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, TEXTOID, -1, false,
											  TYPALIGN_INT));
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
		MtInPlaceGroup *g = lfirst(lc);

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
in_place_merge(MtInPlaceRequest *req, Relation rel, List *groups, Bitmapset *nulls,
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
	foreach(lc, req->group_columns)
	{
		int			i = foreach_current_index(lc);
		const char *name = quote_identifier(lfirst(lc));
		Form_pg_attribute att = mt_find_attribute(desc, lfirst(lc));

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
		values[p++] = key_array(groups, i);
	}
	appendStringInfoString(&cols, "u.r AS __mt_r");
	appendStringInfo(&unnest, "pg_catalog.unnest($%d::pg_catalog.int8[])", p + 1);
	appendStringInfoString(&names, "r");
	types[p] = INT8ARRAYOID;
	values[p++] = adjustment_array(groups, -1, false);
	for (int i = 0; i < req->nagg; i++)
	{
		MtInPlaceColumn *agg = &req->aggs[i];
		const char *name = quote_identifier(agg->name);
		char	   *adjustment;

		if (agg->kind == MT_IN_PLACE_ROWS)
		{
			adjustment = "d.__mt_r";
			rows_column = rows_column ? rows_column : name;
		}
		else
		{
			bool		sums = (agg->kind == MT_IN_PLACE_SUM);

			adjustment = psprintf("d.__mt_a%d", i);
			appendStringInfo(&cols, ", u.a%d::%s AS __mt_a%d", i,
							 format_type_be_qualified(agg->type), i);
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
					mt_qualified_name(req->relid), cols.data, unnest.data, names.data, on.data,
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
group_adjustment(MtInPlaceRequest *req, MtInPlaceGroup *g, int agg)
{
	MtInPlaceKind kind = req->aggs[agg].kind;

	return kind == MT_IN_PLACE_ROWS ? Int64GetDatum(g->rows) :
		kind == MT_IN_PLACE_SUM ? g->sums[agg] : Int64GetDatum(g->nn[agg]);
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
	MtInPlaceRequest *req;
	TupleDesc	desc;
	AttrNumber *group_attno;	/* group column -> the table's column */
	AttrNumber	last_group_attno;	/* the last of them in the table */
	AggColumn  *aggs;			/* aggregate -> how its column is adjusted */
	AttrNumber	rows_attno;		/* a count(*) column */
	MtInPlaceGroup **groups;
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
	MtInPlaceGroup *g = d->groups[gi];
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
	for (int i = 0; i < d->req->nagg; i++)
	{
		int			c = d->aggs[i].attno - 1;

		if (!newslot->tts_isnull[c])	/* NULL + x is NULL */
			newslot->tts_values[c] =
				FunctionCall2Coll(&d->aggs[i].plus, InvalidOid, newslot->tts_values[c],
								  converted(&d->aggs[i], group_adjustment(d->req, g, i),
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
	MtInPlaceGroup *g = d->groups[gi];
	TupleTableSlot *newslot = d->newslot;

	if (g->rows <= 0)
		return;
	ExecClearTuple(newslot);
	memset(newslot->tts_isnull, true, sizeof(bool) * d->desc->natts);
	for (int i = 0; i < d->req->ngroup; i++)
	{
		newslot->tts_values[d->group_attno[i] - 1] = d->keyvals[gi][i];
		newslot->tts_isnull[d->group_attno[i] - 1] = (g->values[i] == NULL);
	}
	for (int i = 0; i < d->req->nagg; i++)
	{
		int			c = d->aggs[i].attno - 1;

		newslot->tts_values[c] = converted(&d->aggs[i], group_adjustment(d->req, g, i),
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
	MtInPlaceRequest *req = d->req;
	Relation	index = index_open(indexid, AccessShareLock);
	ScanKeyData *skeys = palloc(sizeof(ScanKeyData) * req->ngroup);
	int		   *key_group = palloc(sizeof(int) * req->ngroup);	/* index column -> group column */
	RegProcedure *key_eq = palloc(sizeof(RegProcedure) * req->ngroup);
	IndexScanDesc scan;

	for (int k = 0; k < req->ngroup; k++)
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
	scan = index_beginscan(rel, index, d->estate->es_snapshot, req->ngroup, 0);
	for (int p = 0; p < npending; p++)
	{
		int			gi = pending[p];

		for (int k = 0; k < req->ngroup; k++)
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
		index_rescan(scan, skeys, req->ngroup, NULL, 0);
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

	for (int i = 0; i < d->req->ngroup; i++)
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
	for (int i = 0; i < d->req->ngroup; i++)
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
	MtInPlaceRequest *req = d->req;
	int		   *next = palloc(sizeof(int) * (npending + 1));
	bool	   *tnulls = palloc(sizeof(bool) * (req->ngroup + 1));
	Datum	   *tvalues = palloc(sizeof(Datum) * (req->ngroup + 1));
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
		for (int i = 0; i < req->ngroup; i++)
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
adjust_rows_directly(MtInPlaceRequest *req, Relation rel, List *keys, List *groups)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Oid			indexid = key_index(rel, keys);
	int			ncols = 0;
	int			ngroups = list_length(groups);
	double		tuples = rel->rd_rel->reltuples >= 0 ? rel->rd_rel->reltuples :
		(double) RelationGetNumberOfBlocks(rel) * 100;
	FmgrInfo   *group_in = palloc(sizeof(FmgrInfo) * (req->ngroup + 1));
	Oid		   *group_ioparam = palloc(sizeof(Oid) * (req->ngroup + 1));
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
	if (ncols != req->ngroup + req->nagg)
		return -1;
	d.req = req;
	d.desc = desc;
	d.group_attno = palloc(sizeof(AttrNumber) * (req->ngroup + 1));
	d.aggs = palloc0(sizeof(AggColumn) * (req->nagg + 1));
	foreach(lc, req->group_columns)
	{
		int			i = foreach_current_index(lc);
		Form_pg_attribute att = mt_find_attribute(desc, lfirst(lc));
		Oid			infunc;

		d.group_attno[i] = att->attnum;
		d.last_group_attno = Max(d.last_group_attno, att->attnum);
		getTypeInputInfo(att->atttypid, &infunc, &group_ioparam[i]);
		fmgr_info(infunc, &group_in[i]);
	}
	for (int i = 0; i < req->nagg; i++)
	{
		MtInPlaceColumn *agg = &req->aggs[i];
		Form_pg_attribute att = mt_find_attribute(desc, agg->name);

		if (att->atttypid != agg->type ||
			!agg_column(&d.aggs[i], att->attnum, att->atttypid,
						agg->kind == MT_IN_PLACE_SUM ? NUMERICOID : INT8OID))
			return -1;
		if (agg->kind == MT_IN_PLACE_ROWS && d.rows_attno == InvalidAttrNumber)
			d.rows_attno = att->attnum;
	}

	/* what lives until the groups are applied; freed at the end */
	work = AllocSetContextCreate(CurrentMemoryContext, "materialized_table in-place apply",
								 ALLOCSET_DEFAULT_SIZES);
	outer = MemoryContextSwitchTo(work);
	d.groups = palloc(sizeof(MtInPlaceGroup *) * (ngroups + 1));
	d.keyvals = palloc(sizeof(Datum *) * (ngroups + 1));
	d.keynulls = palloc(sizeof(bool *) * (ngroups + 1));
	d.hashes = palloc(sizeof(uint32) * (ngroups + 1));
	d.matched = palloc0(sizeof(bool) * (ngroups + 1));
	pending = palloc(sizeof(int) * (ngroups + 1));
	foreach(lc, groups)
	{
		MtInPlaceGroup *g = lfirst(lc);
		int			gi = foreach_current_index(lc);

		d.groups[gi] = g;
		d.keyvals[gi] = palloc(sizeof(Datum) * req->ngroup);
		d.keynulls[gi] = palloc(sizeof(bool) * req->ngroup);
		for (int i = 0; i < req->ngroup; i++)
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
merge_groups(MtInPlaceRequest *req, Relation rel, List *groups)
{
	int			nparams = req->ngroup + 1 + req->nagg;
	Oid		   *types = palloc(sizeof(Oid) * nparams);
	Datum	   *values = palloc(sizeof(Datum) * nparams);
	List	   *patterns = NIL; /* Bitmapset of NULL group columns */
	List	   *members = NIL;	/* List of MtInPlaceGroup, per pattern */
	ListCell   *lc;
	ListCell   *lp;
	ListCell   *lm;
	int64		written = 0;

	foreach(lc, groups)
	{
		MtInPlaceGroup *g = lfirst(lc);
		Bitmapset  *nulls = NULL;
		bool		placed = false;

		for (int i = 0; i < req->ngroup; i++)
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
		char	   *sql = in_place_merge(req, rel, lfirst(lm), lfirst(lp), &nparams, types, values);

		if (SPI_execute_with_args(sql, nparams, types, values, NULL, false, 0) != SPI_OK_MERGE)
			elog(ERROR, "could not adjust the rows of \"%s\"", get_rel_name(req->relid));
		written += SPI_processed;
	}
	return written;
}

/*
 * Hand the table's rows of the touched groups to the CONTINUOUS tables
 * downstream: as they are before the adjustments (sign -1) or after (1).
 */
static void
feed_groups(MtRowFeed *feed, MtInPlaceRequest *req, Relation rel, int sign)
{
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *filter = req->touched;
	Oid		   *types;
	Datum	   *values;
	ParamListInfo params;
	int			nparams = mt_filter_params(filter, desc, &types, &values, &params);
	Datum	   *row = palloc(sizeof(Datum) * (desc->natts + 1));
	bool	   *isnull = palloc(sizeof(bool) * (desc->natts + 1));

	if (filter == NIL)
		return;
	if (SPI_execute_with_args(psprintf("SELECT * FROM %s WHERE %s", mt_qualified_name(req->relid),
									   mt_filter_condition(filter, NULL, desc, types, 0)),
							  nparams, types, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the rows of \"%s\"", get_rel_name(req->relid));
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
		mt_observe_row(feed, heap_form_tuple(desc, row, isnull), sign);
	}
}

/*
 * mt_in_place_apply
 *		Add the adjustments to the table's own rows: one by one, found
 *		through its key index or by one scan of it (adjust_rows_directly),
 *		or else by MERGEs (merge_groups).
 *		Returns the number of rows written, or -1 if they cannot be
 *		adjusted one by one (see mt_unique_beyond_keys): the caller
 *		recomputes instead.
 */
int64
mt_in_place_apply(MtInPlaceRequest *req)
{
	MtTable    *mt = mt_catalog_lookup(req->relid, false);
	Relation	rel = table_open(req->relid, MT_REFRESH_LOCKMODE);
	List	   *keys = NIL;
	MtRowFeed  *feed;
	ListCell   *lc;
	int64		written;
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;

	foreach(lc, req->group_columns)
		keys = lappend_int(keys, get_attnum(req->relid, lfirst(lc)));
	if (mt_unique_beyond_keys(rel, keys))
	{
		table_close(rel, NoLock);
		return -1;
	}

	mt_run_as_owner_begin(req->owner, &save_userid, &save_sec, &save_nestlevel);
	mt_favour_index_lookups();
	SPI_connect();
	feed = mt_observe_begin(mt, CreateTupleDescCopy(RelationGetDescr(rel)));
	if (feed)
		feed_groups(feed, req, rel, -1);
	MT_INTERNAL_BEGIN();
	written = adjust_rows_directly(req, rel, keys, req->groups);
	if (written < 0)
		written = merge_groups(req, rel, req->groups);
	MT_INTERNAL_END();
	if (feed)
	{
		CommandCounterIncrement();
		feed_groups(feed, req, rel, 1);
		mt_observe_finish(feed);
	}
	SPI_finish();
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
	table_close(rel, NoLock);
	return written;
}
