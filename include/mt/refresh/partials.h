/*-------------------------------------------------------------------------
 *
 * mt/refresh/partials.h
 *	  A CONTINUOUS table of the coordinator over distributed sources, kept
 *	  from partial aggregates the nodes keep per shard
 *	  (src/refresh/partials.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_REFRESH_PARTIALS_H
#define MT_REFRESH_PARTIALS_H

#include "mt/catalog/catalog.h"

/* is mt a CONTINUOUS table kept from its shards' partial aggregates? */
extern bool mt_partials_on_nodes(MtTable *mt);
/* why mt cannot be kept so (NULL: it can) */
extern char *mt_partials_unfit(MtTable *mt);
/* "<id>;<id>...": the tables whose nodes keep tables for them, as committed */
extern char *mt_partials_live_tables(void);
/* make mt so kept (its hidden table and view), or refuse; says how */
extern char *mt_partials_prepare(MtTable *mt);
/*
 * tell every node, combine their partials into the table; NULL, or the
 * problem; *known: what was combined already, kept by the caller
 */
extern char *mt_partials_follow(MtTable *mt, List **known);
/* the nodes drop their partial tables, and the hidden objects go */
extern void mt_partials_drop(Oid relid);

#endif							/* MT_REFRESH_PARTIALS_H */
