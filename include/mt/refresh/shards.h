/*-------------------------------------------------------------------------
 *
 * mt/refresh/shards.h
 *	  A CONTINUOUS table that Citus distributes: each shard kept on its
 *	  node, the coordinator's side (src/refresh/shards.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_REFRESH_SHARDS_H
#define MT_REFRESH_SHARDS_H

#include "nodes/parsenodes.h"

#include "mt/catalog/catalog.h"

/* is mt a CONTINUOUS table whose shards their nodes keep? */
extern bool mt_shards_on_nodes(MtTable *mt);
/* refuse a query that cannot be computed shard by shard on the nodes */
extern void mt_shards_check(Oid relid, Oid query_view);
/* before such a table is made: its sources decoded whole on every shard */
extern void mt_shards_prepare_sources(Query *query);
/* tell every node; NULL when all the shards are followed, else the problem */
extern char *mt_shards_follow(MtTable *mt, bool refresh);
/* every node recomputes its shards now, or an error */
extern void mt_shards_refresh(MtTable *mt);

#endif							/* MT_REFRESH_SHARDS_H */
