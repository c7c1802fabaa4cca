/*-------------------------------------------------------------------------
 *
 * src/bgw/worker.c
 *	  The per-database worker: FULL schedules pg_cron cannot drive, and the
 *	  continuous pipeline.
 *
 * Started by the launcher.  Each turn of its loop it reads the catalog if
 * a backend asked it to (or every few seconds), runs the scheduled
 * refreshes that are due -- each in its own transaction, so one failing
 * table does not stop the others -- runs a cycle of the continuous
 * pipeline, and sleeps on its latch until the next thing is due.  It
 * exits, and is not restarted, when its database has nothing for it.
 * What it is doing shows in pg_stat_activity.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/pg_namespace.h"
#include "executor/spi.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "mt/catalog/catalog.h"
#include "mt/continuous/continuous.h"
#include "mt/catalog/freshness.h"
#include "mt/bgw/launcher.h"
#include "mt/utils/bgworker.h"
#include "mt/materialized_table.h"
#include "mt/lifecycle/restore.h"
#include "mt/continuous/forwarded.h"
#include "mt/refresh/partials.h"
#include "mt/refresh/shards.h"
#include "mt/scheduler/scheduler.h"
#include "mt/utils/sql.h"

PGDLLEXPORT void mt_worker_main(Datum arg);

#define RELOAD_INTERVAL_MS	10000

/* A FULL table this worker schedules. */
typedef struct ScheduledTable
{
	Oid			relid;
	int64		step;			/* freshness in microseconds */
	TimestampTz next_run;
} ScheduledTable;

static MemoryContext worker_context;
static List *scheduled = NIL;	/* ScheduledTable, in tables_context */
static List *continuous = NIL;	/* MtTable, in tables_context */
static List *sharded = NIL;		/* ShardedTable, in tables_context */

/*
 * A CONTINUOUS table whose shards Citus's nodes keep (refresh/shards.c),
 * or kept from the partial aggregates they keep per shard
 * (refresh/partials.c).
 */
typedef struct ShardedTable
{
	Oid			relid;
	bool		partials;		/* kept from partial aggregates */
	bool		forwarded;		/* kept from the keys the nodes send */
	List	   *known;			/* char *: of those, what was combined or
								 * recomputed already */
	char	   *problem;		/* what the last pass could not do; NULL */
} ShardedTable;

/*
 * Each reading of the catalog gets a memory context of its own; the one
 * before it is kept until the next reading, so that whoever was handed the
 * previous lists may still compare them with the new ones, and then freed:
 * the worker reads the catalog every few seconds for as long as it runs.
 */
static MemoryContext tables_context = NULL;
static MemoryContext previous_tables_context = NULL;

/*
 * Finish the restores of dumps whose end the hooks did not see (see
 * lifecycle/restore.c), each time the worker reads its tables: each table in a
 * transaction of its own, so that no lock on one is held while another is
 * waited for, and the worker, not a session, gives way in a deadlock.  A
 * failure is logged and leaves that table pending, tried again at the next
 * reading.  Returns whether tables are left waiting.
 */
static bool
finish_restores(bool at_start)
{
	List	   *markers = NIL;
	bool		pending = false;
	ListCell   *lc;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (mt_extension_ready())
	{
		MemoryContext old = MemoryContextSwitchTo(worker_context);

		markers = list_copy(mt_restore_markers());
		MemoryContextSwitchTo(old);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(worker_context);

	foreach(lc, markers)
	{
		MtSubxact	sub;

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		mt_worker_gives_way_in_deadlocks();
		PushActiveSnapshot(GetTransactionSnapshot());
		mt_subxact_begin(&sub);
		PG_TRY();
		{
			if (mt_extension_ready() && mt_restore_reconcile(lfirst_oid(lc), at_start))
				pending = true;
			mt_subxact_commit(&sub);
		}
		PG_CATCH();
		{
			ErrorData  *edata = mt_subxact_rollback(&sub);

			ereport(LOG,
					(errmsg("materialized_table worker could not finish the restore of a materialized table: %s",
							edata->message),
					 errdetail("It is tried again shortly.")));
			pending = true;
		}
		PG_END_TRY();
		PopActiveSnapshot();
		CommitTransactionCommand();
		MemoryContextSwitchTo(worker_context);
	}
	list_free(markers);
	return pending;
}

/* A copy of a list of strings, in context. */
static List *
strings_copy(MemoryContext context, List *strings)
{
	MemoryContext old = MemoryContextSwitchTo(context);
	List	   *copy = NIL;
	ListCell   *lc;

	foreach(lc, strings)
		copy = lappend(copy, pstrdup(lfirst(lc)));
	MemoryContextSwitchTo(old);
	return copy;
}

/* Read which tables this worker serves; false if the extension is gone. */
static bool
load_tables(void)
{
	List	   *old_scheduled = scheduled;
	List	   *old_sharded = sharded;
	List	   *relids;
	ListCell   *lc;
	bool		installed;
	TimestampTz now = GetCurrentTimestamp();

	if (previous_tables_context)
		MemoryContextDelete(previous_tables_context);
	previous_tables_context = tables_context;
	tables_context = AllocSetContextCreate(worker_context, "materialized_table worker tables",
										   ALLOCSET_DEFAULT_SIZES);

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	installed = mt_extension_ready();
	relids = installed ? mt_catalog_all_relids() : NIL;

	MemoryContextSwitchTo(tables_context);
	scheduled = NIL;
	continuous = NIL;
	sharded = NIL;
	foreach(lc, relids)
	{
		MtTable    *mt = mt_catalog_lookup(lfirst_oid(lc), true);

		/* (a table restored from a dump waits for the end of its restore) */
		if (mt == NULL || mt->restore_pending != NULL)
			continue;
		if (mt->refresh_mode == MT_MODE_CONTINUOUS &&
			(mt_shards_on_nodes(mt) || mt_partials_on_nodes(mt) || mt_forwarded_on_nodes(mt)))
		{
			ShardedTable *t = palloc0(sizeof(ShardedTable));
			ListCell   *lc2;

			t->relid = mt->relid;
			t->partials = mt_partials_on_nodes(mt);
			t->forwarded = !t->partials && mt_forwarded_on_nodes(mt);
			/* a problem already logged is not logged again */
			foreach(lc2, old_sharded)
			{
				ShardedTable *old = lfirst(lc2);

				if (old->relid == t->relid && old->problem)
					t->problem = pstrdup(old->problem);
				if (old->relid == t->relid)
					t->known = strings_copy(tables_context, old->known);
			}
			sharded = lappend(sharded, t);
		}
		else if (mt->refresh_mode == MT_MODE_CONTINUOUS)
			continuous = lappend(continuous, mt);
		else if (mt->scheduler && strcmp(mt->scheduler, MT_SCHEDULER_WORKER) == 0 &&
				 mt->status == MT_STATUS_ACTIVATED)
		{
			ScheduledTable *t = palloc0(sizeof(ScheduledTable));
			ListCell   *lc2;

			t->relid = mt->relid;
			t->step = mt_freshness_seconds(mt->freshness_value, mt->freshness_unit) * USECS_PER_SEC;
			t->next_run = mt_schedule_floor(mt, now) + t->step;
			/* keep the schedule of a table we already served */
			foreach(lc2, old_scheduled)
			{
				ScheduledTable *old = lfirst(lc2);

				if (old->relid == t->relid && old->step == t->step)
					t->next_run = old->next_run;
			}
			scheduled = lappend(scheduled, t);
		}
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	MemoryContextSwitchTo(worker_context);
	return installed;
}

/* One scheduled refresh, in a transaction of its own. */
static void
run_scheduled(ScheduledTable *t, TimestampTz trigger_time)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	char	   *name;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	/* DDL colliding with the refresh wins; the next run tries again */
	mt_worker_gives_way_in_deadlocks();
	PushActiveSnapshot(GetTransactionSnapshot());
	name = get_rel_name(t->relid);
	pgstat_report_activity(STATE_RUNNING,
						   psprintf("materialized_table: scheduled refresh of %s",
									name ? quote_identifier(name) : "a dropped table"));
	PG_TRY();
	{
		mt_scheduled_refresh(t->relid, trigger_time, true);
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		/* the refresh recorded its failure; the next run tries again */
		MemoryContextSwitchTo(oldcontext);
		EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcontext);
	pgstat_report_activity(STATE_IDLE, NULL);
}

/* Run what is due; return milliseconds until the next run. */
static long
run_due_schedules(void)
{
	TimestampTz now = GetCurrentTimestamp();
	long		wait = RELOAD_INTERVAL_MS;
	ListCell   *lc;

	foreach(lc, scheduled)
	{
		ScheduledTable *t = lfirst(lc);

		if (t->next_run <= now)
		{
			TimestampTz trigger_time = t->next_run;

			run_scheduled(t, trigger_time);
			now = GetCurrentTimestamp();
			/* a run that took longer than the period skips the missed ones */
			t->next_run = trigger_time + t->step;
			while (t->next_run <= now)
				t->next_run += t->step;
		}
		wait = Min(wait, TimestampDifferenceMilliseconds(now, t->next_run));
	}
	return wait;
}

/*
 * The tables whose shards Citus's nodes keep: every node is told what each
 * is, each table in a transaction of its own.  A node that does not answer
 * leaves the table's freshness behind; the server log says so when the
 * problem starts and when it changes, not at every pass.
 */
#define SHARDS_INTERVAL_MS	500

static TimestampTz shards_last_pass = 0;

static long
follow_shards(void)
{
	ListCell   *lc;

	if (sharded == NIL)
		return RELOAD_INTERVAL_MS;
	if (!TimestampDifferenceExceeds(shards_last_pass, GetCurrentTimestamp(), SHARDS_INTERVAL_MS))
		return SHARDS_INTERVAL_MS;
	shards_last_pass = GetCurrentTimestamp();
	pgstat_report_activity(STATE_RUNNING, "materialized_table: following the shards of distributed tables");
	foreach(lc, sharded)
	{
		ShardedTable *t = lfirst(lc);
		MemoryContext oldcontext = CurrentMemoryContext;
		char	   *volatile problem = NULL;
		char	   *volatile name = NULL;
		List	   *volatile combined = NIL;

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		mt_worker_gives_way_in_deadlocks();
		PushActiveSnapshot(GetTransactionSnapshot());
		PG_TRY();
		{
			MtTable    *mt = mt_catalog_lookup(t->relid, true);

			if (mt != NULL && mt->refresh_mode == MT_MODE_CONTINUOUS)
			{
				List	   *known = t->known;

				name = MemoryContextStrdup(tables_context, mt_qualified_name(mt->relid));
				if (t->partials)
					problem = mt_partials_follow(mt, &known);
				else if (t->forwarded)
					problem = mt_forwarded_follow(mt, &known);
				else
					problem = mt_shards_follow(mt, false);
				if (problem)
					problem = MemoryContextStrdup(tables_context, problem);
				else if (t->partials || t->forwarded)
					combined = strings_copy(tables_context, known);
			}
			PopActiveSnapshot();
			CommitTransactionCommand();
			/* what the nodes sent is combined once committed */
			if ((t->partials || t->forwarded) && problem == NULL)
				t->known = combined;
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			MemoryContextSwitchTo(oldcontext);
			edata = CopyErrorData();
			FlushErrorState();
			AbortCurrentTransaction();
			problem = MemoryContextStrdup(tables_context, edata->message);
		}
		PG_END_TRY();
		MemoryContextSwitchTo(oldcontext);
		if (name == NULL && problem == NULL)
			continue;			/* dropped meanwhile */
		if (name == NULL)
			name = psprintf("the table of OID %u", t->relid);
		if (problem && (t->problem == NULL || strcmp(problem, t->problem) != 0))
			ereport(LOG,
					(errmsg("materialized_table worker could not follow every shard of %s: %s",
							name, problem),
					 errdetail("Its freshness is not met until every node keeps its shards again.")));
		else if (problem == NULL && t->problem)
			ereport(LOG,
					(errmsg("materialized_table worker follows every shard of %s again", name)));
		t->problem = problem;
	}
	pgstat_report_activity(STATE_IDLE, NULL);
	return SHARDS_INTERVAL_MS;
}

/* the worker's loop state */
static uint32 loop_generation = 0;
static TimestampTz loop_last_load = 0;
static bool loop_installed = true;
static bool loop_restores_pending = false;
static bool loop_started = false;

/*
 * worker_turn
 *		One turn of the loop: read the catalog if asked (or every few
 *		seconds), run what is due.  Returns how long to sleep (ms), or -1
 *		when this database has nothing left for the worker.
 */
static long
worker_turn(Oid dbid)
{
	uint32		current;
	long		wait;
	long		cycle_wait;

	/* the generation first: a request made while reading is not missed */
	current = mt_worker_generation(dbid);
	if (loop_last_load == 0 || current != loop_generation ||
		mt_continuous_worker_reread_wanted() ||
		TimestampDifferenceExceeds(loop_last_load, GetCurrentTimestamp(), RELOAD_INTERVAL_MS))
	{
		loop_generation = current;
		loop_restores_pending = finish_restores(!loop_started);
		loop_started = true;
		loop_installed = load_tables();
		loop_last_load = GetCurrentTimestamp();
		/* a table locked by DDL: read everything again at the next turn */
		if (!mt_continuous_worker_tables_changed(continuous))
			loop_last_load = 0;
	}
	if (scheduled == NIL && continuous == NIL && sharded == NIL)
	{
		/* the end of a restore to wait for: look again shortly */
		if (loop_restores_pending)
		{
			loop_last_load = 0;
			return 1000;
		}
		return -1;
	}

	wait = run_due_schedules();
	cycle_wait = mt_continuous_worker_cycle();
	wait = Min(wait, cycle_wait);
	wait = Min(wait, follow_shards());
	if (loop_last_load == 0)
		wait = Min(wait, 200);	/* tables to read again soon */
	return wait;
}

/*
 * Is the extension's internal schema in pg_namespace, as a snapshot taken
 * now sees it?  The caches may not know yet: DROP EXTENSION wakes the
 * worker as it commits, before it sends the invalidations of its catalog
 * changes, and a lookup that missed the cache then finds its tables gone
 * while the cache still has its schema.
 */
static bool
internal_schema_in_catalog(void)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	bool		found;

	rel = table_open(NamespaceRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_namespace_nspname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum(MT_INTERNAL_SCHEMA));
	scan = systable_beginscan(rel, NamespaceNameIndexId, true, NULL, 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * extension_dropped_meanwhile
 *		After an error: was it that the extension went away under us?
 *
 * DROP EXTENSION wakes the worker as it commits, before its catalog
 * changes reach the worker's caches, and a cycle may be waiting for one of
 * the tables it drops: either way the worker then reads a catalog that is
 * no longer there.  That is no failure, just the end of the work here.
 * Any other error ends the worker as it would have (the launcher starts it
 * again after a pause).
 */
static bool
extension_dropped_meanwhile(void)
{
	bool		gone;

	AbortOutOfAnyTransaction();
	MemoryContextSwitchTo(worker_context);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	gone = !mt_extension_ready() || !internal_schema_in_catalog();
	CommitTransactionCommand();
	MemoryContextSwitchTo(worker_context);
	return gone;
}

void
mt_worker_main(Datum arg)
{
	Oid			dbid = DatumGetObjectId(arg);

	mt_bgworker_signals();
	/* (the pinned search_path: for the worker's own SQL, the pipeline's, the timer's) */
	mt_bgworker_connect(dbid, InvalidOid, "materialized_table worker");
	mt_worker_attach(dbid);

	worker_context = AllocSetContextCreate(TopMemoryContext, "materialized_table worker",
										   ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(worker_context);
	(void) mt_continuous_worker_start(NIL);

	for (;;)
	{
		long		wait = 0;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		PG_TRY();
		{
			wait = worker_turn(dbid);
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			MemoryContextSwitchTo(worker_context);
			edata = CopyErrorData();
			FlushErrorState();
			if (!extension_dropped_meanwhile())
				ReThrowError(edata);
			ereport(LOG,
					(errmsg("materialized_table worker stops: the extension was dropped"),
					 errdetail("The worker was interrupted by: %s", edata->message)));
			loop_installed = false;
			continuous = NIL;
			wait = -1;
		}
		PG_END_TRY();
		if (wait < 0)
			break;

		/*
		 * What the turn's transactions did to tables goes to the cumulative
		 * statistics, as a backend's does between queries (a background
		 * worker must send it itself): autovacuum learns of the rows the
		 * cycles update, which would otherwise go unvacuumed until the
		 * worker exits.  At most once a second: what is left is sent when
		 * that second is over, as an idle backend does, not at the next
		 * cycle, which may be far.
		 */
		if (!IsTransactionOrTransactionBlock())
		{
			long		pending = pgstat_report_stat(false);

			if (pending > 0 && pending < wait)
				wait = pending;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(wait, 1), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}

	/* nothing left to do here: leave no slot or origin behind */
	mt_continuous_worker_stop(!loop_installed || continuous == NIL);
	mt_worker_detach(true);
	proc_exit(0);
}
