/*-------------------------------------------------------------------------
 *
 * mt/catalog/history.h
 *	  The refresh history: one run per refresh, with how it ended.
 *
 * A run is written when the refresh starts and its result when it ends.
 * For a refresh inside a user's (or pg_cron's) transaction both would be
 * invisible until that transaction commits, and lost if it fails, so the
 * start and a failure are written by a short-lived background worker in a
 * transaction of their own ("autonomous"); a success is written in the
 * refresh's own transaction, so it exists exactly when the new content
 * does.  A run whose transaction ended without a result -- rolled back, or
 * cut short by a crash -- shows as FAILED (derived in the view from the
 * run's transaction ID, so nothing needs repairing after a restart).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_HISTORY_H
#define MT_HISTORY_H

#include "postgres.h"
#include "datatype/timestamp.h"

typedef struct MtHistoryRun
{
	int64		run_id;
	Oid			relid;
	bool		autonomous;
} MtHistoryRun;

/* the cascade a run belongs to (0: none); set by materialized_table.refresh() */
extern int64 mt_history_cascade_id;

extern MtHistoryRun *mt_history_start(Oid relid, const char *trigger,
									  const char *partition, TimestampTz started,
									  bool autonomous);
/* strategy: how the refresh computed the rows (FULL, KEYS, DELTAS) */
extern void mt_history_succeeded(MtHistoryRun *run, int64 rows, const char *strategy);
extern void mt_history_failed(MtHistoryRun *run, const char *error);
extern void mt_history_note(Oid relid, const char *trigger, const char *partition,
							const char *status, const char *error, bool autonomous);
extern void mt_history_forget_table(Oid relid);

#endif							/* MT_HISTORY_H */
