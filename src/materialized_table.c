/*-------------------------------------------------------------------------
 *
 * src/materialized_table.c
 *	  Entry point: settings, hooks and background workers are set up here.
 *
 * The library must be loaded through shared_preload_libraries: its hooks
 * guard materialized tables in every backend, and its launcher starts the
 * per-database workers.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "miscadmin.h"

#include "mt/continuous/continuous.h"
#include "mt/hooks/citus_guard.h"
#include "mt/hooks/guards.h"
#include "mt/hooks/utility_hook.h"
#include "mt/bgw/launcher.h"
#include "mt/materialized_table.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static void
mt_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			mt_internal_reset();
			mt_launcher_at_xact_end(true);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			mt_internal_reset();
			mt_launcher_at_xact_end(false);
			break;
		default:
			break;
	}
}

void
_PG_init(void)
{
	/* the continuous layer hears of the refresh engine's writes, preloaded or not */
	mt_continuous_init();

	/*
	 * Loaded later (by CREATE EXTENSION, or a restore's), the library
	 * leaves materialized tables alone: readable, neither guarded nor
	 * maintained.  A restore still brings their rows; the worker takes them
	 * up once the server runs with the library.
	 */
	if (!process_shared_preload_libraries_in_progress)
	{
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("materialized_table is not in shared_preload_libraries: materialized tables are neither guarded nor maintained"),
				 errhint("Add materialized_table to shared_preload_libraries in postgresql.conf and restart the server.")));
		return;
	}
	mt_extension_set_preloaded();
	mt_settings_define();
	mt_guards_install();
	mt_citus_guard_install();
	mt_utility_hook_install();
	mt_launcher_init();
	RegisterXactCallback(mt_xact_callback, NULL);
}
