/*-------------------------------------------------------------------------
 *
 * mt/refresh/observer.h
 *	  Who is told of the rows the refresh engine writes (a hook).
 *
 * The refresh engine writes every row of a materialized table: a refresh
 * through its writer, or adjustments added to the table's own rows (see
 * mt/refresh/in_place.h).  Another layer may want those rows -- CONTINUOUS
 * tables that read the table are fed them (continuous/chain.c), as logical
 * decoding cannot -- but the refresh engine does not call up into it: the
 * other layer registers an observer here once, at load time, as
 * PostgreSQL's hooks are registered.  mt_row_observer is NULL when nobody
 * listens; the mt_observe_* functions below then do nothing.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_REFRESH_OBSERVER_H
#define MT_REFRESH_OBSERVER_H

#include "access/htup.h"
#include "access/tupdesc.h"

#include "mt/catalog/catalog.h"

/* what the observer keeps for one write of one table: its own type */
typedef struct MtRowFeed MtRowFeed;

typedef struct MtRowObserver
{
	/* is anyone to be fed the rows written into table relid? */
	bool		(*has_readers) (Oid relid);
	/* a write of table mt (rows in layout desc) begins: NULL, nobody reads */
	MtRowFeed  *(*begin) (MtTable *mt, TupleDesc desc);
	/* a row written: inserted (sign 1) or deleted (sign -1) */
	void		(*row) (MtRowFeed *feed, HeapTuple tuple, int sign);
	/* rows were rewritten that cannot be named: every reader recomputes */
	void		(*everything) (MtRowFeed *feed);
	/* the write is done, in its transaction */
	void		(*finish) (MtRowFeed *feed);
	/* mt_refresh wrote the table's rows from its query */
	void		(*rewritten) (Oid relid);
} MtRowObserver;

extern const MtRowObserver *mt_row_observer;

extern bool mt_observe_has_readers(Oid relid);
extern MtRowFeed *mt_observe_begin(MtTable *mt, TupleDesc desc);
extern void mt_observe_row(MtRowFeed *feed, HeapTuple tuple, int sign);
extern void mt_observe_everything(MtRowFeed *feed);
extern void mt_observe_finish(MtRowFeed *feed);
extern void mt_observe_rewritten(Oid relid);

#endif							/* MT_REFRESH_OBSERVER_H */
