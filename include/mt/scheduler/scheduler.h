/*-------------------------------------------------------------------------
 *
 * mt/scheduler/scheduler.h
 *	  FULL refresh mode: scheduled recomputes.
 *
 * A FULL table whose freshness a cron schedule can express, in a database
 * where pg_cron is installed, gets a pg_cron job; every other FULL table
 * (sub-minute freshness, or no pg_cron here) is driven by the database's
 * materialized_table worker, on the same schedule.  Either way each run
 * calls mt_scheduled_refresh() with its trigger time.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_SCHEDULER_H
#define MT_SCHEDULER_H

#include "datatype/timestamp.h"

#include "mt/catalog/catalog.h"

#define MT_SCHEDULER_PG_CRON	"pg_cron"
#define MT_SCHEDULER_WORKER		"worker"

extern void mt_scheduler_start(MtTable *mt);
extern void mt_scheduler_stop(MtTable *mt);
extern void mt_scheduler_set_active(MtTable *mt, bool active);
extern void mt_scheduler_sync_job(MtTable *mt);
extern bool mt_scheduler_in_sync(MtTable *mt);
extern bool mt_pg_cron_available(void);

extern TimestampTz mt_schedule_floor(MtTable *mt, TimestampTz t);
extern void mt_scheduled_refresh(Oid relid, TimestampTz trigger_time, bool from_worker);

#endif							/* MT_SCHEDULER_H */
