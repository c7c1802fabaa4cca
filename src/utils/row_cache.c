/*-------------------------------------------------------------------------
 *
 * src/utils/row_cache.c
 *	  Where the rows of a table that is its own state were last seen.
 *
 * A maintenance cycle adjusts the rows of a few thousand groups of a table
 * whose rows are its state.  Finding each through the table's key index
 * costs a descent of the index per group, and finding many by reading the
 * whole table costs the whole table; but the worker wrote each of these
 * rows itself, and PostgreSQL told it where (the new version's TID).  This
 * remembers that place, by the hash of the row's group values, for the
 * next cycle.
 *
 * A remembered place is only a hint: the caller fetches the row there with
 * its snapshot and compares its group values with the group's.  A row
 * that is no longer there (updated by a refresh, the table vacuumed, the
 * transaction that wrote it rolled back) or another group of the same hash
 * fails that test, and the caller forgets the hint and looks the group up
 * as before.  Places past the table's end (a VACUUM truncated it) are
 * never returned; a new relfilenode (TRUNCATE, a rewrite) forgets all.
 *
 * The caches live in the process (the database's worker) until it exits,
 * one per table, bounded by the table's size and by maintenance_work_mem
 * (past which new places are not remembered: their rows are looked up).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_am.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "mt/utils/row_cache.h"

/*
 * A table's cache is started anew past this many places per row of it (it
 * keeps those of groups others deleted until then); rows are counted as
 * at least ROWS_PER_PAGE per page, as reltuples lags a growing table.
 */
#define MAX_PLACES_PER_ROW	2
#define MIN_PLACES			10000
#define ROWS_PER_PAGE		100

/* memory of one place: the entry, its hash element and bucket */
#define PLACE_BYTES			40

typedef struct RowPlace
{
	uint32		hash;			/* of the row's group values */
	ItemPointerData tid;
} RowPlace;

struct MtRowCache
{
	Oid			relid;			/* key */
	RelFileNode node;			/* of the places */
	HTAB	   *places;
	BlockNumber nblocks;		/* the table's, when opened */
	long		max_places;		/* in maintenance_work_mem */
};

/* the process's caches, by table; in TopMemoryContext */
static HTAB *row_caches = NULL;

static void
reset_places(MtRowCache *cache, Relation rel)
{
	HASHCTL		ctl;

	if (cache->places)
		hash_destroy(cache->places);
	cache->places = NULL;		/* if hash_create fails, the next open starts again */
	ctl.keysize = sizeof(uint32);
	ctl.entrysize = sizeof(RowPlace);
	ctl.hcxt = TopMemoryContext;
	cache->places = hash_create("materialized_table row places", 1024, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	cache->node = rel->rd_node;
}

/*
 * Drop the caches of tables that no longer exist (when a new one starts:
 * a worker that outlives many tables does not keep their places).
 */
static void
forget_dropped_tables(void)
{
	HASH_SEQ_STATUS status;
	MtRowCache *cache;

	hash_seq_init(&status, row_caches);
	while ((cache = hash_seq_search(&status)) != NULL)
	{
		if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(cache->relid)))
			continue;
		if (cache->places)
			hash_destroy(cache->places);
		hash_search(row_caches, &cache->relid, HASH_REMOVE, NULL);
	}
}

/*
 * mt_row_cache_open
 *		The cache of rel's row places, emptied if rel's storage changed or
 *		the cache grew past what the table's rows need; NULL if rel is not
 *		a heap (the places are heap TIDs, and the caller prunes their pages).
 *		The other functions take NULL for a cache that knows nothing.
 */
MtRowCache *
mt_row_cache_open(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	MtRowCache *cache;
	bool		found;
	BlockNumber nblocks;
	double		rows;

	if (rel->rd_rel->relam != HEAP_TABLE_AM_OID)
		return NULL;
	nblocks = RelationGetNumberOfBlocks(rel);
	rows = Max(rel->rd_rel->reltuples, (double) nblocks * ROWS_PER_PAGE);
	if (row_caches == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(MtRowCache);
		ctl.hcxt = TopMemoryContext;
		row_caches = hash_create("materialized_table row caches", 16, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	if (hash_search(row_caches, &relid, HASH_FIND, NULL) == NULL)
		forget_dropped_tables();
	cache = hash_search(row_caches, &relid, HASH_ENTER, &found);
	if (!found)
		cache->places = NULL;
	if (!found || cache->places == NULL || !RelFileNodeEquals(cache->node, rel->rd_node) ||
		hash_get_num_entries(cache->places) > Max(rows * MAX_PLACES_PER_ROW, MIN_PLACES))
		reset_places(cache, rel);
	cache->nblocks = nblocks;
	cache->max_places = (long) maintenance_work_mem * 1024L / PLACE_BYTES;
	return cache;
}

/* Where a row of this hash was last seen, if in the table as it is. */
bool
mt_row_cache_get(MtRowCache *cache, uint32 hash, ItemPointer tid)
{
	RowPlace   *p = cache ? hash_search(cache->places, &hash, HASH_FIND, NULL) : NULL;

	if (p == NULL || ItemPointerGetBlockNumber(&p->tid) >= cache->nblocks)
		return false;
	*tid = p->tid;
	return true;
}

/* A row of this hash is at tid (replace: even if another place is known). */
void
mt_row_cache_set(MtRowCache *cache, uint32 hash, ItemPointer tid, bool replace)
{
	bool		found;
	RowPlace   *p;

	if (cache == NULL)
		return;
	if (hash_get_num_entries(cache->places) >= cache->max_places)
	{
		/* full: only places already remembered are moved */
		p = hash_search(cache->places, &hash, HASH_FIND, NULL);
		if (p && replace)
			p->tid = *tid;
		return;
	}
	p = hash_search(cache->places, &hash, HASH_ENTER, &found);
	if (!found || replace)
		p->tid = *tid;
}

void
mt_row_cache_forget(MtRowCache *cache, uint32 hash)
{
	if (cache)
		hash_search(cache->places, &hash, HASH_REMOVE, NULL);
}
