/*-------------------------------------------------------------------------
 *
 * src/lifecycle/pipeline.c
 *	  Telling a table's refresh pipeline what its commands changed.
 *
 * FULL tables have a schedule (scheduler/scheduler.c); CONTINUOUS tables, and FULL
 * tables the pg_cron cannot drive, have the database's worker (bgw/worker.c),
 * which is told to look again after the command's transaction commits.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "replication/origin.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/continuous/continuous.h"
#include "mt/bgw/launcher.h"
#include "mt/materialized_table.h"
#include "mt/lifecycle/pipeline.h"
#include "mt/scheduler/scheduler.h"

/* Does the database's worker have anything to do for this table? */
static bool
needs_worker(MtTable *mt)
{
	return mt->refresh_mode == MT_MODE_CONTINUOUS ||
		(mt->scheduler && strcmp(mt->scheduler, MT_SCHEDULER_WORKER) == 0);
}

void
mt_pipeline_table_created(MtTable *mt)
{
	if (mt->refresh_mode == MT_MODE_FULL)
		mt_scheduler_start(mt);
	else
	{
		mt->scheduler = MT_SCHEDULER_WORKER;
		mt_continuous_table_created(mt);
	}
	mt_catalog_update(mt);
	if (needs_worker(mt))
		mt_wake_worker_at_commit();
}

void
mt_pipeline_table_dropped(Oid relid)
{
	MtTable    *mt = mt_catalog_lookup(relid, true);

	if (mt == NULL)
		return;
	mt_scheduler_stop(mt);
	if (mt->refresh_mode == MT_MODE_CONTINUOUS)
		mt_continuous_table_dropped(relid);
	mt_wake_worker_at_commit();
}

void
mt_pipeline_suspend(MtTable *mt)
{
	mt->pipeline_options = NIL;
	mt_scheduler_set_active(mt, false);
	mt_catalog_update(mt);
	mt_wake_worker_at_commit();
}

void
mt_pipeline_resume(MtTable *mt, List *options)
{
	mt->pipeline_options = options;
	mt_scheduler_set_active(mt, true);
	mt_catalog_update(mt);
	mt_wake_worker_at_commit();
}

/*
 * The freshness changed, and with it maybe the refresh mode: reschedule,
 * or move the table between its schedule and the continuous pipeline.
 */
void
mt_pipeline_freshness_changed(MtTable *old_mt, MtTable *mt)
{
	if (old_mt->refresh_mode == MT_MODE_CONTINUOUS && mt->refresh_mode == MT_MODE_FULL)
		mt_continuous_table_dropped(mt->relid);
	if (mt->refresh_mode == MT_MODE_FULL)
		mt_scheduler_sync_job(mt);
	else
	{
		mt_scheduler_stop(mt);
		mt->scheduler = MT_SCHEDULER_WORKER;
		if (old_mt->refresh_mode == MT_MODE_FULL)
			mt_continuous_table_created(mt);
	}
	mt_catalog_update(mt);
	mt_wake_worker_at_commit();
}

void
mt_pipeline_options_changed(MtTable *mt)
{
	if (mt->refresh_mode == MT_MODE_CONTINUOUS)
		mt_continuous_options_changed(mt);
}

void
mt_pipeline_query_changed(MtTable *mt)
{
	if (mt->refresh_mode == MT_MODE_CONTINUOUS)
		mt_continuous_query_changed(mt);
	mt_wake_worker_at_commit();
}

/*
 * Owner, name or schema changed: pg_cron's job follows (its name and user),
 * or the table moves to the worker when its new owner cannot run jobs.
 *
 * The table is locked first (ACCESS SHARE: a drop is waited for, a refresh
 * is not); a table dropped while we waited took its job with it, and is
 * left alone.  A job that matches its table is left alone too (a rename
 * of a source changes no job), and the table let go: its catalog row is
 * not locked, so a command changing that table, which may be waiting for
 * the table this command renamed, is not waited for, and a drop of the
 * table need not wait for this command.  Otherwise the row is locked (see
 * mt/catalog/catalog.h) and read again before the job changes.
 */
void
mt_pipeline_owner_changed(Oid relid)
{
	MtTable    *mt;
	int64		jobid;
	char	   *scheduler;

	LockRelationOid(relid, AccessShareLock);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
	{
		UnlockRelationOid(relid, AccessShareLock);
		return;
	}
	mt = mt_catalog_lookup(relid, true);
	if (mt == NULL || mt->refresh_mode != MT_MODE_FULL || mt_scheduler_in_sync(mt))
	{
		/* nothing done that a drop of the table must wait for */
		UnlockRelationOid(relid, AccessShareLock);
		return;
	}
	mt = mt_catalog_lock(relid);
	if (mt == NULL || mt->refresh_mode != MT_MODE_FULL)
		return;
	jobid = mt->cron_jobid;
	scheduler = mt->scheduler;
	mt_scheduler_sync_job(mt);
	if (mt->cron_jobid != jobid ||
		(mt->scheduler == NULL) != (scheduler == NULL) ||
		(mt->scheduler && strcmp(mt->scheduler, scheduler) != 0))
	{
		mt_catalog_update(mt);
	}
	/* a CONTINUOUS table's worker runs its query's code as the new owner */
	if (mt)
		mt_wake_worker_at_commit();
}

/*
 * A table, schema or role was renamed, moved or reassigned, or pg_cron
 * came or went: every FULL table's job follows (tables move between
 * pg_cron and the worker as need be).  Such commands are rare, and do not
 * say which tables they touch.  The tables are taken in OID order, as
 * every command that goes over all of them does.
 */
void
mt_pipeline_recheck_schedules(void)
{
	ListCell   *lc;

	foreach(lc, mt_catalog_all_relids())
		mt_pipeline_owner_changed(lfirst_oid(lc));
}

/*
 * DROP EXTENSION: remove every job now (in the dropping transaction); the
 * worker finds the extension gone after commit and cleans up after itself.
 *
 * The tables are locked first, in the ACCESS EXCLUSIVE mode their drop
 * takes anyway (a table being dropped or changed is waited for; one dropped
 * meanwhile took its job with it), then the whole catalog: a CREATE that
 * was under way has committed or rolled back when the catalog is read
 * again, so its job is removed too, and no new table can come.
 */
void
mt_pipeline_extension_dropped(void)
{
	ListCell   *lc;
	Oid			catalog;

	foreach(lc, mt_catalog_all_relids())
		LockRelationOid(lfirst_oid(lc), AccessExclusiveLock);
	catalog = get_relname_relid(MT_CATALOG_TABLE, mt_internal_namespace());
	if (OidIsValid(catalog))
		LockRelationOid(catalog, AccessExclusiveLock);

	foreach(lc, mt_catalog_all_relids())
	{
		Oid			relid = lfirst_oid(lc);
		MtTable    *mt;

		if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
			continue;
		mt = mt_catalog_lookup(relid, true);
		if (mt)
			mt_scheduler_stop(mt);
	}
	mt_wake_worker_at_commit();
}

void
mt_pipeline_database_dropped(const char *dbname)
{
	Oid			dbid = get_database_oid(dbname, true);

	if (OidIsValid(dbid))
		mt_stop_database_worker(dbid);
}

/*
 * mt_pipeline_database_gone
 *		After DROP DATABASE: remove the replication origin its CONTINUOUS
 *		tables used, if any (origins are not per database).
 */
void
mt_pipeline_database_gone(Oid dbid)
{
	replorigin_drop_by_name(mt_continuous_slot_name(dbid), true, false);
}
