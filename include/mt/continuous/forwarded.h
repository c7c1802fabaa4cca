/*-------------------------------------------------------------------------
 *
 * mt/continuous/forwarded.h
 *	  A CONTINUOUS table of the coordinator over distributed sources, kept
 *	  from the keys their shards' nodes send (src/continuous/forwarded.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_FORWARDED_H
#define MT_CONTINUOUS_FORWARDED_H

#include "mt/catalog/catalog.h"
#include "mt/continuous/analysis.h"

/* is mt a CONTINUOUS table kept from the keys the nodes send? */
extern bool mt_forwarded_on_nodes(MtTable *mt);
/* can it be (its sources distributed or reference tables)?  Says how, or refuses */
extern char *mt_forwarded_prepare(MtTable *mt, MtAnalysis *a);
/*
 * tell every node, recompute the keys they sent; NULL, or the problem;
 * *known: what was applied already, kept by the caller
 */
extern char *mt_forwarded_follow(MtTable *mt, List **known);
/* the nodes drop their tables for it */
extern void mt_forwarded_drop(Oid relid);

#endif							/* MT_CONTINUOUS_FORWARDED_H */
