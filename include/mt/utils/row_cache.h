/*-------------------------------------------------------------------------
 *
 * mt/utils/row_cache.h
 *	  Where the rows of a table that is its own state were last seen, by
 *	  the hash of their group values (see utils/row_cache.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_ROW_CACHE_H
#define MT_ROW_CACHE_H

#include "storage/itemptr.h"
#include "utils/relcache.h"

typedef struct MtRowCache MtRowCache;

extern MtRowCache *mt_row_cache_open(Relation rel);
extern bool mt_row_cache_get(MtRowCache *cache, uint32 hash, ItemPointer tid);
extern void mt_row_cache_set(MtRowCache *cache, uint32 hash, ItemPointer tid, bool replace);
extern void mt_row_cache_forget(MtRowCache *cache, uint32 hash);

#endif							/* MT_ROW_CACHE_H */
