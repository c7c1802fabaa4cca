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
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_namespace.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "mt/continuous/continuous.h"
#include "mt/hooks/guards.h"
#include "mt/bgw/launcher.h"
#include "mt/materialized_table.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

int			mt_freshness_threshold = 30 * 60;
int			mt_default_freshness_continuous = 3 * 60;
int			mt_default_freshness_full = 60 * 60;
int			mt_history_retention = 7 * 24 * 60 * 60;
bool		mt_conversion_from_table = false;

int			mt_internal_depth = 0;

static void
define_settings(void)
{
	DefineCustomIntVariable("materialized_table.freshness_threshold",
							"Freshness below which a table without REFRESH_MODE is refreshed continuously.",
							"At or above it the table is refreshed in FULL mode on a schedule.",
							&mt_freshness_threshold,
							30 * 60, 1, 24 * 60 * 60,
							PGC_USERSET, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("materialized_table.default_freshness_continuous",
							"Freshness of a CONTINUOUS table created without FRESHNESS.",
							NULL,
							&mt_default_freshness_continuous,
							3 * 60, 1, 24 * 60 * 60,
							PGC_USERSET, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("materialized_table.default_freshness_full",
							"Freshness of a FULL table created without FRESHNESS.",
							NULL,
							&mt_default_freshness_full,
							60 * 60, 1, 24 * 60 * 60,
							PGC_USERSET, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("materialized_table.history_retention",
							"How long refresh history is kept.",
							"0 keeps it forever.",
							&mt_history_retention,
							7 * 24 * 60 * 60, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);
	/* one way, and a change of what a table is: the administrator's choice */
	DefineCustomBoolVariable("materialized_table.conversion_from_table",
							 "Lets CREATE OR ALTER MATERIALIZED TABLE convert an existing table into a materialized table in place.",
							 "As Flink's table.materialized-table.conversion-from-table.enabled.",
							 &mt_conversion_from_table,
							 false,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	MarkGUCPrefixReserved("materialized_table");
}

static void
mt_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			mt_internal_depth = 0;
			mt_launcher_at_xact_end(true);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			mt_internal_depth = 0;
			mt_launcher_at_xact_end(false);
			break;
		default:
			break;
	}
}

/* Was the library loaded at server start, with its hooks and workers? */
static bool mt_preloaded = false;

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
	mt_preloaded = true;
	define_settings();
	mt_guards_install();
	mt_launcher_init();
	RegisterXactCallback(mt_xact_callback, NULL);
}

/*
 * mt_require_preload
 *		The statements on materialized tables need the library's hooks.
 */
void
mt_require_preload(void)
{
	if (!mt_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("materialized_table can only be used when loaded through shared_preload_libraries"),
				 errhint("Add materialized_table to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/*
 * mt_errposition
 *		errposition() for a byte offset into the statement text of execute().
 *
 * execute()'s error callback turns it into an internal position into that
 * text, which psql shows with a cursor under the offending token.
 */
int
mt_errposition(const char *source, int location)
{
	if (source == NULL || location < 0)
		return 0;
	return errposition(pg_mbstrlen_with_len(source, location) + 1);
}

Oid
mt_internal_namespace(void)
{
	return get_namespace_oid(MT_INTERNAL_SCHEMA, true);
}

/*
 * mt_extension_ready
 *		Is the extension installed in this database and not being created?
 *
 * Hooks run in every database of the cluster; they must pass everything
 * through untouched where the extension is absent or half-installed.
 */
bool
mt_extension_ready(void)
{
	if (!IsTransactionState())
		return false;
	if (!OidIsValid(mt_internal_namespace()))
		return false;
	if (creating_extension &&
		CurrentExtensionObject == get_extension_oid(MT_EXTENSION_NAME, true))
		return false;
	return true;
}

Oid
mt_extension_owner(void)
{
	Oid			nsp = mt_internal_namespace();
	HeapTuple	tup;
	Oid			owner = BOOTSTRAP_SUPERUSERID;

	/* the extension's script created this schema, as the extension's owner */
	tup = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(nsp));
	if (HeapTupleIsValid(tup))
	{
		owner = ((Form_pg_namespace) GETSTRUCT(tup))->nspowner;
		ReleaseSysCache(tup);
	}
	return owner;
}

/*
 * mt_as_extension_owner_begin
 *		The extension's internal tables are private to its owner: read and
 *		write them with that role's rights, whoever runs the statement.
 *		An error restores the caller's user with the (sub)transaction.
 */
void
mt_as_extension_owner_begin(MtSavedUser *saved)
{
	GetUserIdAndSecContext(&saved->userid, &saved->sec_context);
	SetUserIdAndSecContext(mt_extension_owner(),
						   saved->sec_context | SECURITY_LOCAL_USERID_CHANGE);
	saved->nestlevel = mt_pin_search_path();
}

void
mt_as_extension_owner_end(MtSavedUser *saved)
{
	mt_unpin_search_path(saved->nestlevel);
	SetUserIdAndSecContext(saved->userid, saved->sec_context);
}

/*
 * mt_pin_search_path
 *		search_path = pg_catalog, pg_temp until mt_unpin_search_path (or
 *		the end of the (sub)transaction): the extension's own SQL, run in a
 *		session whose search_path a user chose, must not find that user's
 *		operators, functions or types before PostgreSQL's (pg_temp is never
 *		searched for those).  Returns the GUC nest level to pass back.
 */
int
mt_pin_search_path(void)
{
	int			nestlevel = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	return nestlevel;
}

void
mt_unpin_search_path(int nestlevel)
{
	AtEOXact_GUC(false, nestlevel);
}

void
mt_internal_reset(void)
{
	mt_internal_depth = 0;
}

void
mt_subxact_begin(MtSubxact *sub)
{
	sub->caller = CurrentMemoryContext;
	sub->owner = CurrentResourceOwner;
	sub->internal_depth = mt_internal_depth;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(sub->caller);
}

void
mt_subxact_commit(MtSubxact *sub)
{
	ReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(sub->caller);
	CurrentResourceOwner = sub->owner;
}

ErrorData *
mt_subxact_rollback(MtSubxact *sub)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(sub->caller);
	edata = CopyErrorData();
	FlushErrorState();
	RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(sub->caller);
	CurrentResourceOwner = sub->owner;
	mt_internal_depth = sub->internal_depth;
	return edata;
}
