/*-------------------------------------------------------------------------
 *
 * src/continuous/give_way.c
 *	  CONTINUOUS refresh mode: the worker's locks, and how it gives way.
 *
 * The worker must never hold up a session's DDL, nor wait on it in a way
 * that could deadlock with it: it takes the locks applying needs without
 * waiting, waits briefly for the others, and gives way to a lock holder
 * (the work is then done at a later cycle).  A table the worker failed on
 * is tried again after a back-off.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "storage/lmgr.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/syscache.h"

#include "mt/continuous/continuous.h"
#include "mt/continuous/cycle_int.h"
#include "mt/refresh/refresh.h"

/* the worker waits no longer than this for a lock (see below) */
#define APPLY_LOCK_TIMEOUT		"100ms"
#define APPLY_DEADLOCK_TIMEOUT	"10ms"

/*
 * The worker's transactions wait for a lock no longer than this: DDL (DROP
 * SCHEMA ... CASCADE, say) holding one while it waits for a lock the worker
 * took would otherwise deadlock with it, and the deadlock detector might
 * pick the DDL.  The worker gives up first and tries again shortly.
 */
void
mt_cont_set_lock_timeout(void)
{
	(void) set_config_option("lock_timeout", APPLY_LOCK_TIMEOUT, PGC_SUSET,
							 PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
	mt_worker_gives_way_in_deadlocks();
}

/*
 * mt_worker_gives_way_in_deadlocks
 *		For the rest of the transaction, a deadlock between the worker and
 *		a session (DROP of a table a refresh reads) is found by the worker,
 *		which then gives up, first.
 */
void
mt_worker_gives_way_in_deadlocks(void)
{
	(void) set_config_option("deadlock_timeout", APPLY_DEADLOCK_TIMEOUT, PGC_SUSET,
							 PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
}

/*
 * Take the locks applying needs without waiting: the table's (a manual
 * refresh holding it makes us wait for the next cycle), its partitions',
 * and those of what its query reads (DDL holding one, such as DROP SCHEMA
 * ... CASCADE, would wait for the table while we wait for the source).
 * What else is locked on the way is waited for briefly
 * (mt_cont_set_lock_timeout).
 */
bool
mt_cont_lock_for_apply(ContTable *t)
{
	ListCell   *lc;

	if (!ConditionalLockRelationOid(t->relid, MT_REFRESH_LOCKMODE))
		return false;
	foreach(lc, t->writes)
		if (lfirst_oid(lc) != t->relid &&
			!ConditionalLockRelationOid(lfirst_oid(lc), RowExclusiveLock))
			return false;
	foreach(lc, t->reads)
		if (!ConditionalLockRelationOid(lfirst_oid(lc), AccessShareLock))
			return false;
	return true;
}

/* Did the worker give way to a lock holder (timeout or deadlock)? */
bool
mt_cont_gave_way(ErrorData *edata)
{
	return edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE ||
		edata->sqlerrcode == ERRCODE_T_R_DEADLOCK_DETECTED;
}

/* In a PG_CATCH: abort the transaction after giving way, rethrow others. */
void
mt_cont_catch_lock_timeout(MemoryContext caller)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(caller);
	edata = CopyErrorData();
	if (!mt_cont_gave_way(edata))
		PG_RE_THROW();
	FlushErrorState();
	AbortCurrentTransaction();
	MemoryContextSwitchTo(caller);
	ereport(DEBUG1,
			(errmsg("materialized_table worker gives way to a lock holder: %s", edata->message)));
}

/*
 * Was the table dropped while the worker waited for it (or analyzed it)?  A DROP holding
 * the table (or what its query reads) makes the worker wait, and the
 * relation is gone once the lock is granted: that is no failure of the
 * table, and nothing of it is to be kept.
 */
bool
mt_cont_dropped_meanwhile(Oid relid)
{
	AcceptInvalidationMessages();
	return !SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid));
}

/*
 * After the failures-th failure in a row of a table, how long to wait
 * before trying it again: its freshness (a second at least), doubled with
 * each failure after the first, up to a minute.
 */
TimestampTz
mt_cont_retry_time(TimestampTz now, int64 freshness, int failures)
{
	int64		delay = Max(freshness, USECS_PER_SEC);

	delay <<= Min(Max(failures - 1, 0), 6);
	return now + Min(delay, 60 * USECS_PER_SEC);
}
