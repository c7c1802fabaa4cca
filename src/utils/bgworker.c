/*-------------------------------------------------------------------------
 *
 * src/utils/bgworker.c
 *	  What the extension's background processes (the launcher, the
 *	  per-database workers, the history writer) share: how they are
 *	  described to the postmaster, their signals, their connection.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "tcop/tcopprot.h"

#include "mt/utils/bgworker.h"
#include "mt/utils/extension.h"

/*
 * mt_bgworker_describe
 *		A background process of this library, connected to shared memory
 *		and able to connect to a database, started once recovery finished.
 */
void
mt_bgworker_describe(BackgroundWorker *worker, const char *type, const char *name,
					 const char *function, int restart_time)
{
	memset(worker, 0, sizeof(*worker));
	snprintf(worker->bgw_name, BGW_MAXLEN, "%s", name);
	snprintf(worker->bgw_type, BGW_MAXLEN, "%s", type);
	worker->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker->bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker->bgw_restart_time = restart_time;
	snprintf(worker->bgw_library_name, BGW_MAXLEN, "%s", MT_EXTENSION_NAME);
	snprintf(worker->bgw_function_name, BGW_MAXLEN, "%s", function);
}

/*
 * mt_bgworker_signals
 *		SIGTERM ends the process (at the next CHECK_FOR_INTERRUPTS), SIGHUP
 *		asks it to reload the configuration; then signals are let in.
 */
void
mt_bgworker_signals(void)
{
	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
}

/*
 * mt_bgworker_connect
 *		Connect to database dbid as userid (the bootstrap superuser when
 *		invalid; to no database when dbid is invalid), with the pinned
 *		search_path for the process's whole life, and say what the process
 *		is in pg_stat_activity (when appname is not NULL).
 */
void
mt_bgworker_connect(Oid dbid, Oid userid, const char *appname)
{
	if (OidIsValid(dbid))
		BackgroundWorkerInitializeConnectionByOid(dbid, userid, 0);
	else
		BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	mt_pin_session_search_path();
	if (appname != NULL)
		pgstat_report_appname(appname);
}
