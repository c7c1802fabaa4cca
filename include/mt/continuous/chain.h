/*-------------------------------------------------------------------------
 *
 * mt/continuous/chain.h
 *	  Handing a materialized table's changes to the CONTINUOUS tables that
 *	  read it (see continuous/chain.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_CHAIN_H
#define MT_CONTINUOUS_CHAIN_H

#include "access/htup.h"
#include "access/tupdesc.h"

#include "mt/catalog/catalog.h"
#include "mt/refresh/observer.h"

/*
 * What one write of an upstream table hands downstream; these functions
 * are part of the observer of the refresh engine's writes
 * (mt_continuous_init registers it).
 */
typedef struct MtChainFeed MtChainFeed;

extern List *mt_chain_readers(Oid relid);
extern bool mt_chain_has_downstream(Oid relid);
extern bool mt_chain_read_by_continuous(Oid relid);
extern MtChainFeed *mt_chain_begin(MtTable *mt, TupleDesc desc);
extern void mt_chain_row(MtChainFeed *feed, HeapTuple tuple, int sign);
extern void mt_chain_everything(MtChainFeed *feed);
extern void mt_chain_finish(MtChainFeed *feed);

#endif							/* MT_CONTINUOUS_CHAIN_H */
