/*-------------------------------------------------------------------------
 *
 * mt/utils/citus.h
 *	  Citus in this database: is it installed, and what it makes of a
 *	  table (src/utils/citus.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_UTILS_CITUS_H
#define MT_UTILS_CITUS_H

#include "nodes/pg_list.h"
#include "utils/timestamp.h"

typedef enum MtCitusKind
{
	MT_CITUS_NONE,				/* an ordinary table, or no Citus here */
	MT_CITUS_DISTRIBUTED,		/* hash-distributed over shards */
	MT_CITUS_REFERENCE,			/* a reference table, or a Citus local
								 * table: one shard, or one per node */
	MT_CITUS_OTHER				/* append- or range-distributed */
} MtCitusKind;

/* is the citus extension installed in this database? */
extern bool mt_citus_installed(void);
/* what Citus makes of relid: its rows are in shards unless MT_CITUS_NONE */
extern MtCitusKind mt_citus_table_kind(Oid relid);
/* the distribution column of a hash-distributed table, and its shard count */
extern char *mt_citus_distribution_column(Oid relid, int *shard_count);
/* create_distributed_table(relid, column, shard_count or colocated with colocate_with) */
extern void mt_citus_distribute(Oid relid, const char *column, int shard_count,
								Oid colocate_with);
/* its co-location group (pg_dist_partition.colocationid), 0 if none */
extern int	mt_citus_colocation_id(Oid relid);
/* is relid a shard, on this node, of a distributed table? */
extern bool mt_citus_is_shard(Oid relid);
/* the shards of this node as this session's own tables; returns a GUC nest level */
extern int	mt_citus_local_shard_access(void);

/* how long a node that does not answer may hold a call to all nodes up */
#define MT_NODE_CONNECT_TIMEOUT_MS "2000"
/* run a command on every node as the extension's owner: the answers */
extern List *mt_citus_on_all_nodes(const char *command, char **problem);
/* a node's answer "<count> [<epoch fresh as of>]", the oldest kept in *as_of */
extern bool mt_citus_count_as_of(const char *answer, int *count, TimestampTz *as_of);

#endif							/* MT_UTILS_CITUS_H */
