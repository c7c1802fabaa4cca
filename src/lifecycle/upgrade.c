/*-------------------------------------------------------------------------
 *
 * src/lifecycle/upgrade.c
 *	  What ALTER EXTENSION materialized_table UPDATE does in C.
 *
 * The update scripts (extension/versions/) change the catalog; the tables
 * that exist then are brought to the new version's ways here.  Until the
 * update runs, the library works on the older catalog (catalog/catalog.c and
 * continuous/state.c ask which columns it has), so that tables stay
 * maintained between installing the new library and updating.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/extension.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/hidden_objects.h"
#include "mt/materialized_table.h"
#include "mt/lifecycle/pipeline.h"
#include "mt/scheduler/scheduler.h"
#include "mt/utils/spi_plans.h"

PG_FUNCTION_INFO_V1(mt_update_tables_1_1);

/*
 * mt_update_tables_1_1
 *		From 1.0: hidden objects to the extension's owner (their tables'
 *		owners keep what refreshes need), query views checking the reader's
 *		privileges, a restore marker per table (written by the catalog's
 *		update), pg_cron jobs naming their table rather than its OID.
 */
static void
update_tables(void)
{
	ListCell   *lc;

	foreach(lc, mt_catalog_all_relids())
	{
		Oid			relid = lfirst_oid(lc);
		MtTable    *mt = mt_catalog_lookup(relid, false);
		MtSavedUser saved;

		mt_sync_hidden_privileges(relid);
		mt_as_extension_owner_begin(&saved);
		SPI_connect();
		mt_spi_exec(psprintf("ALTER VIEW %s SET (security_invoker = true)",
							 quote_qualified_identifier(get_namespace_name(get_rel_namespace(mt->query_view)),
														get_rel_name(mt->query_view))),
					SPI_OK_UTILITY);
		SPI_finish();
		mt_as_extension_owner_end(&saved);
		if (mt->refresh_mode == MT_MODE_FULL)
			mt_scheduler_sync_job(mt);
		mt_catalog_update(mt);
	}
}

Datum
mt_update_tables_1_1(PG_FUNCTION_ARGS)
{
	bool		saved_creating = creating_extension;
	Oid			saved_extension = CurrentExtensionObject;

	/*
	 * What is created here (the markers) belongs to the tables, not to the
	 * extension: as an extension's member, pg_dump would leave it out.
	 */
	creating_extension = false;
	CurrentExtensionObject = InvalidOid;
	PG_TRY();
	{
		update_tables();
	}
	PG_FINALLY();
	{
		creating_extension = saved_creating;
		CurrentExtensionObject = saved_extension;
	}
	PG_END_TRY();
	PG_RETURN_VOID();
}
