/*-------------------------------------------------------------------------
 *
 * mt/lifecycle/pipeline.h
 *	  The refresh pipeline of a materialized table: what keeps it fresh.
 *
 * FULL tables are refreshed on a schedule (src/scheduler/scheduler.c: a pg_cron job,
 * or the per-database worker's timer); CONTINUOUS tables by the
 * per-database worker from logical decoding (src/continuous_*.c).  The
 * commands tell the pipeline what changed through these calls, always in
 * the command's transaction: pg_cron's jobs are rows of a table and follow
 * the transaction; the workers are told after commit.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_PIPELINE_H
#define MT_PIPELINE_H

#include "mt/catalog/catalog.h"

extern void mt_pipeline_table_created(MtTable *mt);
extern void mt_pipeline_table_dropped(Oid relid);
extern void mt_pipeline_suspend(MtTable *mt);
extern void mt_pipeline_resume(MtTable *mt, List *options);
extern void mt_pipeline_freshness_changed(MtTable *old_mt, MtTable *mt);
extern void mt_pipeline_query_changed(MtTable *mt);
extern void mt_pipeline_options_changed(MtTable *mt);
extern void mt_pipeline_owner_changed(Oid relid);
extern void mt_pipeline_recheck_schedules(void);
extern void mt_pipeline_extension_dropped(void);
extern void mt_pipeline_database_dropped(const char *dbname);
extern void mt_pipeline_database_gone(Oid dbid);

#endif							/* MT_PIPELINE_H */
