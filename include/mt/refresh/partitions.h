/*-------------------------------------------------------------------------
 *
 * mt/refresh/partitions.h
 *	  The partitions of a materialized table.
 *
 * PARTITIONED BY (a, b) becomes LIST partitioning on a, each partition LIST
 * partitioned on b, and so on; DISTRIBUTED BY adds one HASH (or RANGE)
 * level of n buckets below the last LIST level (or directly under the table
 * when it has no PARTITIONED BY).  LIST partitions are created when a
 * refresh first produces their values; buckets are created with their
 * parent.  New partitions are built apart and then attached, which takes a
 * lock that lets readers of the table go on.
 *
 * A "key" below is the text form of a row's LIST values, one per level
 * (NULL for SQL NULL), as the column types' output functions print them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_PARTITIONS_H
#define MT_PARTITIONS_H

#include "executor/tuptable.h"
#include "utils/relcache.h"

#include "mt/catalog/catalog.h"

typedef struct MtPartitionMap MtPartitionMap;

extern MtPartitionMap *mt_partition_map_load(Relation rel, MtTable *mt);
extern bool mt_partition_map_has_row(MtPartitionMap *map, TupleTableSlot *slot,
									 List **values);
extern void mt_partition_create(Oid relid, MtTable *mt, List *values);
extern void mt_partition_create_buckets(Oid relid, MtTable *mt);
extern void mt_partition_sync_privileges(Oid relid);

/* WITH options that are storage parameters, as " WITH (...)" or "" */
extern bool mt_is_storage_option(const char *key);
extern char *mt_storage_options_sql(List *options);

#endif							/* MT_PARTITIONS_H */
