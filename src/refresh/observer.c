/*-------------------------------------------------------------------------
 *
 * src/refresh/observer.c
 *	  Telling the registered observer of the rows the refresh engine writes.
 *
 * See mt/refresh/observer.h.  The writers of the refresh layer call these
 * instead of the observer's functions, so that none of them needs to know
 * whether anyone listens.  A feed exists only where an observer began it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mt/refresh/observer.h"

/* registered once by the continuous layer (mt_continuous_init) */
const MtRowObserver *mt_row_observer = NULL;

bool
mt_observe_has_readers(Oid relid)
{
	return mt_row_observer != NULL && mt_row_observer->has_readers(relid);
}

MtRowFeed *
mt_observe_begin(MtTable *mt, TupleDesc desc)
{
	if (mt_row_observer == NULL)
		return NULL;
	return mt_row_observer->begin(mt, desc);
}

void
mt_observe_row(MtRowFeed *feed, HeapTuple tuple, int sign)
{
	mt_row_observer->row(feed, tuple, sign);
}

void
mt_observe_everything(MtRowFeed *feed)
{
	mt_row_observer->everything(feed);
}

/* (no feed: nothing began, nothing to finish) */
void
mt_observe_finish(MtRowFeed *feed)
{
	if (feed != NULL)
		mt_row_observer->finish(feed);
}

void
mt_observe_rewritten(Oid relid)
{
	if (mt_row_observer != NULL)
		mt_row_observer->rewritten(relid);
}
