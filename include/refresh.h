/*-------------------------------------------------------------------------
 *
 * refresh.h
 *	  The refresh engine: the one place that writes materialized tables.
 *
 * Every refresh -- at CREATE, manual, scheduled, continuous, cascaded --
 * replaces some rows of the table with the query's current result for
 * them, in the caller's transaction, so a concurrent reader sees the old
 * rows or the new ones and is never blocked: the table is locked in SHARE
 * ROW EXCLUSIVE mode, which keeps other refreshes and writers out but not
 * readers.  A refresh runs with the privileges of the table's owner.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_REFRESH_H
#define MT_REFRESH_H

#include "nodes/pg_list.h"

#include "catalog.h"

/* What started a refresh; the names are those of refresh_history.trigger. */
typedef enum MtRefreshTrigger
{
	MT_TRIGGER_CREATE,
	MT_TRIGGER_MANUAL,
	MT_TRIGGER_SCHEDULED,
	MT_TRIGGER_CONTINUOUS,
	MT_TRIGGER_ALTER,
	MT_TRIGGER_CASCADE
} MtRefreshTrigger;

#define MT_REFRESH_LOCKMODE		ShareRowExclusiveLock

extern const char *mt_trigger_name(MtRefreshTrigger trigger);

/*
 * Replace the whole content (filter NIL) or the rows whose partition
 * columns equal the given values (filter: MtOption column = text value).
 * Returns the number of rows written (inserted plus deleted).
 */
extern uint64 mt_refresh_rows(Oid relid, List *filter);

/* mt_refresh_rows() recorded in refresh_history, with its failure kept */
extern uint64 mt_refresh(Oid relid, List *filter, MtRefreshTrigger trigger);

/* check a PARTITION (k = 'v', ...) spec against the table's partition keys */
extern void mt_check_partition_spec(MtTable *mt, List *spec, const char *source);
extern char *mt_partition_spec_text(List *spec);

#endif							/* MT_REFRESH_H */
