/*-------------------------------------------------------------------------
 *
 * src/scheduler/scheduler.c
 *	  FULL refresh mode: pg_cron jobs and scheduled refreshes.
 *
 * Schedules come from freshness (catalog/freshness.c): N MINUTE is '*\/N * * * *',
 * N HOUR '0 *\/N * * *', 1 DAY '0 0 * * *'.  pg_cron reads them in GMT, so
 * trigger times are aligned to the epoch in UTC.
 *
 * Who drives a FULL table (materialized_tables.scheduler says which):
 *
 *	  pg_cron	a job in cron.job, when the freshness is a cron schedule,
 *				pg_cron is installed in the table's database and the
 *				table's owner may run jobs (pg_cron wants LOGIN);
 *	  worker	the database's materialized_table worker otherwise.
 *
 * Sub-minute freshness (1-30 SECOND) is allowed in FULL mode, but pg_cron
 * 1.4.2 (Debian 12) has only 5-field, minute-level schedules, and its
 * '[1-59] seconds' interval jobs only arrived in 1.5 (and are not aligned
 * to the clock).  Rather than depend on a newer pg_cron, the per-database
 * worker (bgw/worker.c) keeps a timer per such table, on the same epoch-aligned
 * boundaries, and calls mt_scheduled_refresh() with each boundary as the
 * trigger time.  The same worker drives every FULL table of a database
 * without pg_cron (pg_cron can live in only one database of a cluster,
 * cron.database_name), so CREATE never fails for want of pg_cron, and of
 * tables whose owner cannot log in.  Moving between the two follows every
 * change of freshness, owner, or pg_cron's presence at the next command
 * that touches the table.
 *
 * pg_cron's jobs are rows in cron.job: creating, changing and removing
 * them happens in the caller's transaction and is undone by its ROLLBACK.
 * They are managed with the rights of the extension's owner (pg_cron lets
 * only a superuser create a job for another role), only through pg_cron's
 * functions (cron.schedule_in_database, cron.alter_job, cron.unschedule),
 * and run as the table's owner.  The caller holds the table and its
 * catalog row locked (see mt/catalog/catalog.h): pg_cron changes and removes a job
 * row in place, and fails on a row another transaction is changing.
 *
 * A scheduled run computes its schedule time, trigger time minus
 * freshness, formats it with each 'partition.fields.<col>.date-formatter'
 * to name the partition it refreshes (or refreshes the whole table when
 * there is none), and skips -- recording SKIPPED -- when another refresh of
 * the table is still running, so runs never overlap.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "mt/utils/date_format.h"
#include "mt/catalog/freshness.h"
#include "mt/catalog/history.h"
#include "mt/materialized_table.h"
#include "mt/refresh/refresh.h"
#include "mt/scheduler/scheduler.h"
#include "mt/utils/sql.h"

PG_FUNCTION_INFO_V1(mt_scheduled_refresh_sql);

#define DATE_FORMATTER_PREFIX "partition.fields."
#define DATE_FORMATTER_SUFFIX ".date-formatter"

bool
mt_pg_cron_available(void)
{
	return OidIsValid(get_extension_oid("pg_cron", true));
}

/*
 * Run SQL on pg_cron's tables with the extension owner's rights (pg_cron
 * lets only a superuser schedule a job for another role) and a search_path
 * of pg_catalog, so that no operator of the caller's can sneak in.
 */
static Datum
cron_call(const char *sql, int nargs, Oid *types, Datum *values, const char *nulls,
		  bool *isnull)
{
	MtSavedUser saved;
	Datum		result = (Datum) 0;

	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (SPI_execute_with_args(sql, nargs, types, values, nulls, false, 0) < 0)
		elog(ERROR, "pg_cron call failed: %s", sql);
	*isnull = true;
	if (SPI_processed == 1 && SPI_tuptable)
		result = SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
												 1, isnull), true, 8);
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	return result;
}

/*
 * The job's name: which table it refreshes, for people reading cron.job.
 * cron.job.jobname is a name (63 bytes), and pg_cron merges a new job into
 * an existing one with the same name and user, so a name that must be
 * clipped gets the table's OID to stay unique.
 */
static char *
job_name(Oid relid)
{
	char	   *name = psprintf("materialized_table refresh %s", mt_qualified_name(relid));
	char	   *suffix;
	int			len;

	if (strlen(name) < NAMEDATALEN)
		return name;
	suffix = psprintf("... (%u)", relid);
	/* room for the longest OID: the clipped part does not depend on it */
	len = pg_mbcliplen(name, strlen(name), NAMEDATALEN - 1 - strlen("... ()") - 10);
	return psprintf("%.*s%s", len, name, suffix);
}

/*
 * The job's command names the table, not its OID: the job of a table
 * restored from a dump (with pg_cron's own table) finds the new table.
 */
static char *
job_command(Oid relid)
{
	return psprintf("SELECT materialized_table.scheduled_refresh(%s::pg_catalog.regclass)",
					quote_literal_cstr(mt_qualified_name(relid)));
}

static char *
owner_name(Oid relid)
{
	return GetUserNameFromId(mt_table_owner(relid), false);
}

/*
 * Can pg_cron run jobs as the table's owner?  It refuses roles without
 * LOGIN (group roles often own tables); the worker drives those tables.
 */
static bool
owner_can_run_jobs(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(mt_table_owner(relid)));
	bool		result = false;

	if (HeapTupleIsValid(tup))
	{
		result = ((Form_pg_authid) GETSTRUCT(tup))->rolcanlogin;
		ReleaseSysCache(tup);
	}
	return result;
}

/* Does pg_cron drive this table, or the database's worker? */
static bool
pg_cron_can_drive(MtTable *mt, const char *schedule)
{
	return schedule != NULL && mt_pg_cron_available() && owner_can_run_jobs(mt->relid);
}

/*
 * mt_scheduler_start
 *		Give a FULL table its schedule; sets mt->scheduler and
 *		mt->cron_jobid (the caller stores them).
 */
void
mt_scheduler_start(MtTable *mt)
{
	char	   *schedule = mt_freshness_cron(mt->freshness_value, mt->freshness_unit);

	mt->cron_jobid = 0;
	if (!pg_cron_can_drive(mt, schedule))
	{
		/* the database's worker drives it (see bgw/worker.c) */
		mt->scheduler = MT_SCHEDULER_WORKER;
		return;
	}
	{
		Oid			types[5] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, BOOLOID};
		Datum		values[5];
		bool		isnull;

		values[0] = CStringGetTextDatum(job_name(mt->relid));
		values[1] = CStringGetTextDatum(schedule);
		values[2] = CStringGetTextDatum(job_command(mt->relid));
		values[3] = CStringGetTextDatum(owner_name(mt->relid));
		values[4] = BoolGetDatum(mt->status != MT_STATUS_SUSPENDED);
		mt->cron_jobid = DatumGetInt64(cron_call("SELECT cron.schedule_in_database($1, $2, $3, "
												 "pg_catalog.current_database(), $4, $5)",
												 5, types, values, NULL, &isnull));
		mt->scheduler = MT_SCHEDULER_PG_CRON;

		/*
		 * pg_cron merges the job into one of the same name and user, whose
		 * database it keeps: that of a job restored from a dump of another
		 * database, say.
		 */
		types[0] = INT8OID;
		values[0] = Int64GetDatum(mt->cron_jobid);
		(void) cron_call("SELECT cron.alter_job(job_id := j.jobid, database := pg_catalog.current_database()) "
						 "FROM cron.job j WHERE j.jobid OPERATOR(pg_catalog.=) $1 "
						 "AND j.database OPERATOR(pg_catalog.<>) pg_catalog.current_database()",
						 1, types, values, NULL, &isnull);
	}
}

/* Is the table's job still there (pg_cron may have been dropped since)? */
static bool
job_exists(MtTable *mt)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1];
	bool		isnull;

	if (mt->cron_jobid == 0 || !mt_pg_cron_available())
		return false;
	values[0] = Int64GetDatum(mt->cron_jobid);
	return DatumGetBool(cron_call("SELECT EXISTS (SELECT FROM cron.job WHERE jobid = $1)",
								  1, types, values, NULL, &isnull));
}

void
mt_scheduler_stop(MtTable *mt)
{
	if (job_exists(mt))
	{
		Oid			types[1] = {INT8OID};
		Datum		values[1];
		bool		isnull;

		values[0] = Int64GetDatum(mt->cron_jobid);
		(void) cron_call("SELECT cron.unschedule($1)", 1, types, values, NULL, &isnull);
	}
	mt->cron_jobid = 0;
	mt->scheduler = NULL;
}

void
mt_scheduler_set_active(MtTable *mt, bool active)
{
	if (job_exists(mt))
	{
		Oid			types[2] = {INT8OID, BOOLOID};
		Datum		values[2];
		bool		isnull;

		values[0] = Int64GetDatum(mt->cron_jobid);
		values[1] = BoolGetDatum(active);
		(void) cron_call("SELECT cron.alter_job(job_id := $1, active := $2)",
						 2, types, values, NULL, &isnull);
	}
}

/*
 * The job's settings as pg_cron has them now (a new snapshot, after what
 * the caller waited for); false if there is no such job.
 */
static bool
job_read(int64 jobid, char **schedule, char **username, bool *active, char **jobname,
		 char **command)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(jobid)};
	MtSavedUser saved;
	MemoryContext caller = CurrentMemoryContext;
	bool		found = false;

	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (SPI_execute_with_args("SELECT schedule, username, active, jobname, command FROM cron.job "
							  "WHERE jobid = $1",
							  1, types, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_cron's job " INT64_FORMAT, jobid);
	if (SPI_processed == 1)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *a;

		*schedule = SPI_getvalue(tup, desc, 1);
		*username = SPI_getvalue(tup, desc, 2);
		a = SPI_getvalue(tup, desc, 3);
		*active = a != NULL && strcmp(a, "t") == 0;
		*jobname = SPI_getvalue(tup, desc, 4);
		*command = SPI_getvalue(tup, desc, 5);
		/* SPI_getvalue's copies go with SPI_finish */
		*schedule = *schedule ? MemoryContextStrdup(caller, *schedule) : NULL;
		*username = *username ? MemoryContextStrdup(caller, *username) : NULL;
		*jobname = *jobname ? MemoryContextStrdup(caller, *jobname) : NULL;
		*command = *command ? MemoryContextStrdup(caller, *command) : NULL;
		found = true;
	}
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	return found;
}

static bool
same_text(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/*
 * mt_scheduler_in_sync
 *		Is the table driven as mt_scheduler_sync_job would leave it: by a
 *		job of pg_cron's that has its name, schedule, owner and activity,
 *		or by the worker when pg_cron cannot drive it?  Reads only.
 */
bool
mt_scheduler_in_sync(MtTable *mt)
{
	char	   *schedule = mt_freshness_cron(mt->freshness_value, mt->freshness_unit);
	char	   *cur_schedule;
	char	   *cur_username;
	char	   *cur_jobname;
	char	   *cur_command;
	bool		cur_active;

	if (mt->refresh_mode != MT_MODE_FULL)
		return mt->cron_jobid == 0;
	if (!pg_cron_can_drive(mt, schedule))
		return mt->cron_jobid == 0 && same_text(mt->scheduler, MT_SCHEDULER_WORKER);
	if (mt->cron_jobid == 0 ||
		!job_read(mt->cron_jobid, &cur_schedule, &cur_username, &cur_active, &cur_jobname,
				  &cur_command))
		return false;
	return same_text(cur_jobname, job_name(mt->relid)) &&
		same_text(cur_command, job_command(mt->relid)) &&
		same_text(cur_schedule, schedule) &&
		same_text(cur_username, owner_name(mt->relid)) &&
		cur_active == (mt->status != MT_STATUS_SUSPENDED);
}

/*
 * mt_scheduler_sync_job
 *		After a change of freshness, name, schema or owner: make the job
 *		match, or move the table between pg_cron and the worker.  A job
 *		that matches already is left as it is.
 */
void
mt_scheduler_sync_job(MtTable *mt)
{
	char	   *schedule = mt_freshness_cron(mt->freshness_value, mt->freshness_unit);
	char	   *cur_schedule = NULL;
	char	   *cur_username = NULL;
	char	   *cur_jobname = NULL;
	char	   *cur_command = NULL;
	bool		cur_active = false;
	char	   *username;
	bool		active = mt->status != MT_STATUS_SUSPENDED;

	if (mt->refresh_mode != MT_MODE_FULL)
	{
		mt_scheduler_stop(mt);
		return;
	}
	if (mt_scheduler_in_sync(mt))
		return;
	if (!pg_cron_can_drive(mt, schedule) || mt->cron_jobid == 0 ||
		!job_read(mt->cron_jobid, &cur_schedule, &cur_username, &cur_active, &cur_jobname,
				  &cur_command))
	{
		mt_scheduler_stop(mt);
		mt_scheduler_start(mt);
		return;
	}

	/*
	 * pg_cron has no function that renames a job (cron.alter_job leaves the
	 * name): a job for the table's new name replaces the old one.
	 */
	if (!same_text(cur_jobname, job_name(mt->relid)))
	{
		int64		old_jobid = mt->cron_jobid;
		Oid			types[1] = {INT8OID};
		Datum		values[1] = {Int64GetDatum(old_jobid)};
		bool		isnull;

		mt_scheduler_start(mt);
		if (mt->cron_jobid != old_jobid)
			(void) cron_call("SELECT cron.unschedule($1)", 1, types, values, NULL, &isnull);
		return;
	}

	username = owner_name(mt->relid);
	{
		Oid			types[5] = {INT8OID, TEXTOID, TEXTOID, BOOLOID, TEXTOID};
		Datum		values[5];
		bool		isnull;

		values[0] = Int64GetDatum(mt->cron_jobid);
		values[1] = CStringGetTextDatum(schedule);
		values[2] = CStringGetTextDatum(username);
		values[3] = BoolGetDatum(active);
		values[4] = CStringGetTextDatum(job_command(mt->relid));
		(void) cron_call("SELECT cron.alter_job(job_id := $1, schedule := $2, username := $3, "
						 "active := $4, command := $5)",
						 5, types, values, NULL, &isnull);
	}
}

/* The latest schedule boundary at or before t (epoch-aligned, as pg_cron's GMT). */
TimestampTz
mt_schedule_floor(MtTable *mt, TimestampTz t)
{
	int64		step = mt_freshness_seconds(mt->freshness_value, mt->freshness_unit) * USECS_PER_SEC;
	int64		since_epoch = t - SetEpochTimestamp();
	int64		floored = since_epoch - (since_epoch % step + step) % step;

	return SetEpochTimestamp() + floored;
}

static bool
is_date_formatter(const char *key, char **column)
{
	size_t		len = strlen(key);
	size_t		plen = strlen(DATE_FORMATTER_PREFIX);
	size_t		slen = strlen(DATE_FORMATTER_SUFFIX);

	if (len <= plen + slen || strncmp(key, DATE_FORMATTER_PREFIX, plen) != 0 ||
		strcmp(key + len - slen, DATE_FORMATTER_SUFFIX) != 0)
		return false;
	*column = pnstrdup(key + plen, len - plen - slen);
	return true;
}

/*
 * Is this run of the table still to be made?  Says why not when it has
 * outlived its table, or the table's FULL mode.
 */
static bool
run_still_due(Oid relid, MtTable *mt, bool from_worker)
{
	/* (a reader's snapshot may still see the row of a dropped table) */
	if (mt == NULL || !SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
	{
		/* a run that outlived its table does nothing */
		ereport(NOTICE,
				(errmsg("relation with OID %u is no longer a materialized table, skipping", relid)));
		return false;
	}
	if (mt->refresh_mode != MT_MODE_FULL)
	{
		/* a run that outlived the table's switch to CONTINUOUS mode */
		ereport(NOTICE,
				(errmsg("materialized table \"%s\" is refreshed continuously, skipping its scheduled run",
						get_rel_name(relid))));
		return false;
	}
	return !(mt->status == MT_STATUS_SUSPENDED && from_worker);
}

/*
 * The holder of the table's refresh lock may be a DROP, or an ALTER that
 * does not go on to refresh it: wait for such (this lock waits only for
 * ACCESS EXCLUSIVE, not for a refresh), so that a run neither skips a
 * table that is still there to refresh nor writes a note about one that
 * is gone with its history.  Then try the refresh lock once more.
 */
static bool
wait_for_drop_then_lock(Oid relid)
{
	LockRelationOid(relid, AccessShareLock);
	return ConditionalLockRelationOid(relid, MT_REFRESH_LOCKMODE);
}

/*
 * mt_scheduled_refresh
 *		One scheduled run of a FULL table.
 *
 * The catalog row is read again once the table is locked: a drop or a
 * change of the table that committed in between is then seen.
 */
void
mt_scheduled_refresh(Oid relid, TimestampTz trigger_time, bool from_worker)
{
	MtTable    *mt = mt_catalog_lookup(relid, true);
	TimestampTz schedule_time;
	List	   *filter = NIL;
	ListCell   *lc;

	if (!run_still_due(relid, mt, from_worker))
		return;
	mt_check_owner(relid);

	/*
	 * A refresh of this table is still running (the previous run, or a
	 * manual one): this run is not doubled.
	 */
	if (!ConditionalLockRelationOid(relid, MT_REFRESH_LOCKMODE) &&
		!wait_for_drop_then_lock(relid))
	{
		if (!run_still_due(relid, mt_catalog_lookup(relid, true), from_worker))
			return;
		mt_history_note(relid, mt_trigger_name(MT_TRIGGER_SCHEDULED), NULL, "SKIPPED",
						"another refresh of the table was still running", true);
		return;
	}
	mt = mt_catalog_lookup(relid, true);
	if (!run_still_due(relid, mt, from_worker))
	{
		UnlockRelationOid(relid, MT_REFRESH_LOCKMODE);
		return;
	}

	schedule_time = trigger_time -
		mt_freshness_seconds(mt->freshness_value, mt->freshness_unit) * USECS_PER_SEC;
	foreach(lc, mt->options)
	{
		MtOption   *opt = lfirst(lc);
		char	   *column;

		if (is_date_formatter(opt->key, &column))
		{
			MtOption   *f = palloc0(sizeof(MtOption));

			f->key = column;
			f->value = mt_date_format(opt->value, schedule_time);
			filter = lappend(filter, f);
		}
	}
	(void) mt_refresh(relid, filter, MT_TRIGGER_SCHEDULED);
}

/*
 * materialized_table.scheduled_refresh(table regclass, trigger_time timestamptz)
 *
 * What a table's job runs.  Without a trigger time, the latest schedule
 * boundary at or before now is used; tests pass any time they like.  A
 * job's run (no trigger time) does nothing while
 * materialized_table.scheduled_refreshes is off.
 */
Datum
mt_scheduled_refresh_sql(PG_FUNCTION_ARGS)
{
	Oid			relid;
	MtTable    *mt;
	TimestampTz trigger_time;

	mt_require_preload();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("table must not be null")));
	relid = PG_GETARG_OID(0);

	if (PG_ARGISNULL(1))
	{
		if (!mt_scheduled_refreshes)
			PG_RETURN_VOID();
		mt = mt_catalog_lookup(relid, true);
		trigger_time = mt ? mt_schedule_floor(mt, GetCurrentTransactionStartTimestamp()) :
			GetCurrentTransactionStartTimestamp();
	}
	else
		trigger_time = PG_GETARG_TIMESTAMPTZ(1);
	mt_scheduled_refresh(relid, trigger_time, false);
	PG_RETURN_VOID();
}
