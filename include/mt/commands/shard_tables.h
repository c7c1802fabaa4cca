/*-------------------------------------------------------------------------
 *
 * mt/commands/shard_tables.h
 *	  A Citus node's side of CONTINUOUS tables over distributed sources:
 *	  the shards of a distributed table kept as this node's materialized
 *	  tables (src/commands/shard_tables.c), and the partial aggregates of a
 *	  coordinator's table kept per shard (src/commands/shard_partials.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_COMMANDS_SHARD_TABLES_H
#define MT_COMMANDS_SHARD_TABLES_H

#include "nodes/pg_list.h"

#include "mt/catalog/catalog.h"

/* a shard of a distributed table that this node holds */
typedef struct MtLocalShard
{
	Oid			relid;
	int			index;			/* among the table's shards, by hash range */
} MtLocalShard;

/* the table's shards placed on this node (MtLocalShard), by index */
extern List *mt_local_shards(Oid table);
/* a query over distributed tables as their shards of this index read it */
extern char *mt_shard_query(const char *definition, int index);
/* text without the white space around it */
extern char *mt_trimmed(const char *text);
/* run a statement of the extension on this node */
extern void mt_shard_execute(const char *statement);
/* give a node's materialized table the coordinator's freshness and state */
extern void mt_shard_align(MtTable *mt, const char *name, const char *freshness, bool suspended);
/* the time the content of these tables is fresh as of (the oldest) */
extern Datum mt_shards_fresh_as_of(List *relids, bool *isnull);

#endif							/* MT_COMMANDS_SHARD_TABLES_H */
