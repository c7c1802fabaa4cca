/*-------------------------------------------------------------------------
 *
 * mt/continuous/partial_log.h
 *	  On a node of a Citus cluster: the groups written into the tables of
 *	  partial aggregates, logged for the coordinator (see
 *	  continuous/partial_log.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_PARTIAL_LOG_H
#define MT_CONTINUOUS_PARTIAL_LOG_H

#include "access/htup.h"
#include "access/tupdesc.h"

#include "mt/catalog/catalog.h"

/* a table of partial aggregates is named <prefix><table id>_<shard index> */
#define MT_PARTIAL_PREFIX		"mt_partial_"

/* past this many groups, the coordinator is sent all of them instead */
#define MT_PARTIAL_MAX_KEYS		20000

extern void mt_partial_log_register(Oid relid, int64 table_id, int ngroups, bool forwards);
extern List *mt_partial_log_orphans(List *live);
extern void mt_partial_log_forget(Oid relid);
extern bool mt_partial_log_has(Oid relid);
extern bool mt_partial_log_forwards(Oid relid);
extern void mt_partial_log_named(Oid relid, List *keys, int ngroups, bool everything);

/* the writes of one refresh of a logged table */
typedef struct MtPartialFeed MtPartialFeed;

extern MtPartialFeed *mt_partial_log_begin(MtTable *mt, TupleDesc desc);
extern void mt_partial_log_row(MtPartialFeed *feed, HeapTuple tuple);
extern void mt_partial_log_everything(MtPartialFeed *feed);
extern void mt_partial_log_finish(MtPartialFeed *feed);
extern void mt_partial_log_rewritten(Oid relid);

extern int64 mt_partial_log_take(List *relids, int64 acked, List **keys);

#endif							/* MT_CONTINUOUS_PARTIAL_LOG_H */
