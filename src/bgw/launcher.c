/*-------------------------------------------------------------------------
 *
 * src/bgw/launcher.c
 *	  The launcher of per-database workers, and the shared state they use.
 *
 * See mt/bgw/launcher.h for the life of a database's slot.  All slot fields are
 * protected by the one LWLock of the "materialized_table" tranche.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <unistd.h>

#include "access/heapam.h"
#include "catalog/pg_database.h"
#include "fmgr.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "mt/bgw/launcher.h"
#include "mt/utils/bgworker.h"
#include "mt/materialized_table.h"

PGDLLEXPORT void mt_launcher_main(Datum arg);

PG_FUNCTION_INFO_V1(mt_continuous_horizon_sql);

#define MT_MAX_DATABASES		64
#define MT_RESTART_DELAY_MS		5000

typedef struct MtDatabaseSlot
{
	Oid			dbid;			/* InvalidOid: free */
	bool		wanted;			/* a worker should run there */
	bool		dropping;		/* DROP DATABASE under way: do not start */
	pid_t		pid;			/* running worker, or 0 */
	Latch	   *latch;			/* its latch */
	uint32		generation;		/* bumped when the worker must look again */
	TimestampTz not_before;		/* do not (re)start before this */
	TimestampTz horizon;		/* changes committed before this are applied
								 * or kept by the continuous pipeline */
} MtDatabaseSlot;

typedef struct MtLauncherState
{
	LWLock	   *lock;
	Latch	   *launcher_latch;
	MtDatabaseSlot slots[MT_MAX_DATABASES];
} MtLauncherState;

static MtLauncherState *state = NULL;
static shmem_request_hook_type prev_shmem_request = NULL;
static shmem_startup_hook_type prev_shmem_startup = NULL;

/* backend-local: what to do when the transaction ends */
static bool wake_at_commit = false;
static Oid	dropping_dbid = InvalidOid;

/* worker-local */
static int	my_slot = -1;
static uint32 my_generation = 0;	/* the last one the worker acted on */

static void
launcher_shmem_request(void)
{
	if (prev_shmem_request)
		prev_shmem_request();
	RequestAddinShmemSpace(MAXALIGN(sizeof(MtLauncherState)));
	RequestNamedLWLockTranche(MT_EXTENSION_NAME, 1);
}

static void
launcher_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup)
		prev_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	state = ShmemInitStruct("materialized_table launcher", sizeof(MtLauncherState), &found);
	if (!found)
	{
		memset(state, 0, sizeof(MtLauncherState));
		state->lock = &(GetNamedLWLockTranche(MT_EXTENSION_NAME))->lock;
	}
	LWLockRelease(AddinShmemInitLock);
}

/* The slot of dbid; with create, a free one is taken.  Lock held. */
static MtDatabaseSlot *
find_slot(Oid dbid, bool create)
{
	int			i;
	MtDatabaseSlot *free_slot = NULL;

	for (i = 0; i < MT_MAX_DATABASES; i++)
	{
		if (state->slots[i].dbid == dbid)
			return &state->slots[i];
		if (free_slot == NULL && !OidIsValid(state->slots[i].dbid))
			free_slot = &state->slots[i];
	}
	if (!create)
		return NULL;
	if (free_slot == NULL)
	{
		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("materialized_table cannot run workers in more than %d databases",
						MT_MAX_DATABASES)));
		return NULL;
	}
	memset(free_slot, 0, sizeof(MtDatabaseSlot));
	free_slot->dbid = dbid;
	return free_slot;
}

/* Ask for a worker in dbid (and tell a running one to look again). */
static void
request_worker(Oid dbid)
{
	MtDatabaseSlot *slot;

	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	slot = find_slot(dbid, true);
	if (slot)
	{
		slot->wanted = true;
		slot->generation++;
		if (slot->latch)
			SetLatch(slot->latch);
	}
	if (state->launcher_latch)
		SetLatch(state->launcher_latch);
	LWLockRelease(state->lock);
}

/* The database's worker (started if need be) reads the catalog again now. */
void
mt_wake_worker_now(void)
{
	if (state != NULL)
		request_worker(MyDatabaseId);
}

/*
 * mt_wake_worker_at_commit
 *		When this transaction commits, the database's worker (started if
 *		need be) reads the catalog again.
 */
void
mt_wake_worker_at_commit(void)
{
	wake_at_commit = true;
}

void
mt_launcher_at_xact_end(bool commit)
{
	if (state == NULL)
		return;
	if (commit && wake_at_commit)
		request_worker(MyDatabaseId);
	wake_at_commit = false;

	if (OidIsValid(dropping_dbid))
	{
		MtDatabaseSlot *slot;

		LWLockAcquire(state->lock, LW_EXCLUSIVE);
		slot = find_slot(dropping_dbid, false);
		if (slot && commit)
			slot->dbid = InvalidOid;	/* the database is gone */
		else if (slot)
			slot->dropping = false;
		if (state->launcher_latch)
			SetLatch(state->launcher_latch);
		LWLockRelease(state->lock);
		dropping_dbid = InvalidOid;
	}
}

/*
 * mt_stop_database_worker
 *		Before DROP DATABASE: stop the database's worker and keep it
 *		stopped until the DROP ends, so that it does not hold the database.
 */
void
mt_stop_database_worker(Oid dbid)
{
	MtDatabaseSlot *slot;
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), 10000);

	if (state == NULL)
		return;
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	slot = find_slot(dbid, false);
	if (slot)
		slot->dropping = true;
	LWLockRelease(state->lock);
	if (slot == NULL)
		return;
	dropping_dbid = dbid;

	for (;;)
	{
		pid_t		pid;

		LWLockAcquire(state->lock, LW_SHARED);
		pid = (slot->dbid == dbid) ? slot->pid : 0;
		LWLockRelease(state->lock);
		if (pid == 0 || GetCurrentTimestamp() > deadline)
			break;
		kill(pid, SIGTERM);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 50,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* ---------------------------------------------------------------------
 * Worker side
 * ---------------------------------------------------------------------
 */

static void
worker_shmem_exit(int code, Datum arg)
{
	mt_worker_detach(false);
}

/* Called by a worker once connected: this database's slot is ours. */
void
mt_worker_attach(Oid dbid)
{
	MtDatabaseSlot *slot;

	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	slot = find_slot(dbid, true);
	if (slot == NULL || (slot->pid != 0 && slot->pid != MyProcPid) || slot->dropping)
	{
		LWLockRelease(state->lock);
		/* another worker already serves this database, or it is being dropped */
		proc_exit(0);
	}
	slot->pid = MyProcPid;
	slot->latch = MyLatch;
	my_slot = slot - state->slots;
	LWLockRelease(state->lock);
	before_shmem_exit(worker_shmem_exit, (Datum) 0);
}

/*
 * mt_worker_detach
 *		The worker leaves.  finished: it had nothing to do, so it is not
 *		wanted any more; otherwise (an error, a signal) the launcher starts
 *		it again after a pause.
 */
void
mt_worker_detach(bool finished)
{
	MtDatabaseSlot *slot;

	if (my_slot < 0)
		return;
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	slot = &state->slots[my_slot];
	if (slot->pid == MyProcPid)
	{
		slot->pid = 0;
		slot->latch = NULL;
		slot->not_before = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), MT_RESTART_DELAY_MS);
		/*
		 * A backend that asked again after the worker last read the
		 * catalog (it committed a new table while the worker was leaving)
		 * keeps the slot wanted, and the launcher starts a new worker.
		 */
		if (finished && slot->generation == my_generation)
		{
			slot->wanted = false;
			if (!slot->dropping)
				slot->dbid = InvalidOid;
		}
		else if (finished)
			slot->not_before = 0;
	}
	if (state->launcher_latch)
		SetLatch(state->launcher_latch);
	LWLockRelease(state->lock);
	my_slot = -1;
}

uint32
mt_worker_generation(Oid dbid)
{
	MtDatabaseSlot *slot;
	uint32		generation = 0;

	LWLockAcquire(state->lock, LW_SHARED);
	slot = find_slot(dbid, false);
	if (slot)
		generation = slot->generation;
	LWLockRelease(state->lock);
	my_generation = generation;
	return generation;
}

/*
 * mt_worker_set_horizon
 *		The continuous pipeline finished a pass over the WAL that began at
 *		horizon: every change committed before then is applied, or kept for
 *		its table (continuous_state.pending_since).  Kept in shared memory,
 *		not in a table: the worker passes every second or so, and a write
 *		each time would be WAL of its own to decode.
 */
void
mt_worker_set_horizon(TimestampTz horizon)
{
	if (my_slot < 0)
		return;
	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	state->slots[my_slot].horizon = horizon;
	LWLockRelease(state->lock);
}

/* The horizon of dbid's continuous pipeline; 0 if none since server start. */
TimestampTz
mt_worker_horizon(Oid dbid)
{
	MtDatabaseSlot *slot;
	TimestampTz horizon = 0;

	if (state == NULL)
		return 0;
	LWLockAcquire(state->lock, LW_SHARED);
	slot = find_slot(dbid, false);
	if (slot)
		horizon = slot->horizon;
	LWLockRelease(state->lock);
	return horizon;
}

/*
 * materialized_table_internal.continuous_horizon()
 *
 * mt_worker_horizon() of this database, NULL when unknown; the
 * materialized_tables view derives current_lag of CONTINUOUS tables from it.
 */
Datum
mt_continuous_horizon_sql(PG_FUNCTION_ARGS)
{
	TimestampTz horizon = mt_worker_horizon(MyDatabaseId);

	if (horizon == 0)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(horizon);
}

/* ---------------------------------------------------------------------
 * The launcher
 * ---------------------------------------------------------------------
 */

/* At start: every database that may hold materialized tables gets a look. */
static void
request_all_databases(void)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	List	   *dbids = NIL;
	ListCell   *lc;

	StartTransactionCommand();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		/* templates are skipped: a connection to one blocks CREATE DATABASE */
		if (db->datallowconn && !db->datistemplate)
			dbids = lappend_oid(dbids, db->oid);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();

	foreach(lc, dbids)
		request_worker(lfirst_oid(lc));
}

static bool
database_exists(Oid dbid)
{
	bool		exists;

	StartTransactionCommand();
	exists = SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(dbid));
	CommitTransactionCommand();
	return exists;
}

static void
start_worker(MtDatabaseSlot *slot, BackgroundWorkerHandle **handle)
{
	BackgroundWorker worker;

	mt_bgworker_describe(&worker, "materialized_table worker",
						 psprintf("materialized_table worker for database %u", slot->dbid),
						 "mt_worker_main", BGW_NEVER_RESTART);
	worker.bgw_main_arg = ObjectIdGetDatum(slot->dbid);
	worker.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&worker, handle))
	{
		*handle = NULL;
		ereport(LOG,
				(errmsg("materialized_table launcher could not start a worker for database %u",
						slot->dbid),
				 errhint("Raise max_worker_processes.")));
	}
}

void
mt_launcher_main(Datum arg)
{
	BackgroundWorkerHandle *handles[MT_MAX_DATABASES] = {0};
	MemoryContext loop_context;

	mt_bgworker_signals();
	mt_bgworker_connect(InvalidOid, InvalidOid, "materialized_table launcher");

	LWLockAcquire(state->lock, LW_EXCLUSIVE);
	state->launcher_latch = MyLatch;
	LWLockRelease(state->lock);
	request_all_databases();

	loop_context = AllocSetContextCreate(TopMemoryContext, "materialized_table launcher",
										 ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		int			i;
		long		timeout = 1000;
		TimestampTz now = GetCurrentTimestamp();

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		MemoryContextReset(loop_context);
		MemoryContextSwitchTo(loop_context);

		for (i = 0; i < MT_MAX_DATABASES; i++)
		{
			MtDatabaseSlot *slot = &state->slots[i];
			bool		start = false;
			pid_t		pid;

			/* forget workers that have exited */
			if (handles[i] &&
				GetBackgroundWorkerPid(handles[i], &pid) == BGWH_STOPPED)
			{
				pfree(handles[i]);
				handles[i] = NULL;
			}

			LWLockAcquire(state->lock, LW_SHARED);
			if (OidIsValid(slot->dbid) && slot->wanted && !slot->dropping &&
				slot->pid == 0 && handles[i] == NULL)
			{
				if (slot->not_before <= now)
					start = true;
				else
					timeout = Min(timeout, TimestampDifferenceMilliseconds(now, slot->not_before));
			}
			LWLockRelease(state->lock);
			if (!start)
				continue;

			if (!database_exists(slot->dbid))
			{
				LWLockAcquire(state->lock, LW_EXCLUSIVE);
				slot->dbid = InvalidOid;
				LWLockRelease(state->lock);
				continue;
			}
			MemoryContextSwitchTo(TopMemoryContext);
			start_worker(slot, &handles[i]);
			MemoryContextSwitchTo(loop_context);
			LWLockAcquire(state->lock, LW_EXCLUSIVE);
			slot->not_before = TimestampTzPlusMilliseconds(now, MT_RESTART_DELAY_MS);
			LWLockRelease(state->lock);
		}

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(timeout, 10), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/*
 * mt_launcher_init
 *		From _PG_init: shared memory, and the launcher itself.
 */
void
mt_launcher_init(void)
{
	BackgroundWorker worker;

	prev_shmem_request = shmem_request_hook;
	shmem_request_hook = launcher_shmem_request;
	prev_shmem_startup = shmem_startup_hook;
	shmem_startup_hook = launcher_shmem_startup;

	mt_bgworker_describe(&worker, "materialized_table launcher", "materialized_table launcher",
						 "mt_launcher_main", 5);
	RegisterBackgroundWorker(&worker);
}
