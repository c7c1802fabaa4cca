/*-------------------------------------------------------------------------
 *
 * src/commands/drop.c
 *	  DROP MATERIALIZED TABLE, and forgetting a table however it is dropped.
 *
 * A materialized table may also go away through DROP TABLE, DROP SCHEMA
 * ... CASCADE, DROP OWNED or a cascade from one of its sources; the
 * sql_drop event trigger catches all of them, so that no catalog row,
 * history, job or worker is left behind.  DROP EXTENSION is handled by the
 * utility hook before the extension's own objects go (see hooks/guards.c).
 *
 * Locking: the table first (the ACCESS EXCLUSIVE lock its drop takes
 * anyway), then its catalog row; a drop that waited for another one finds
 * the table gone, as DROP TABLE does.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "fmgr.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/dependents.h"
#include "mt/commands/commands.h"
#include "mt/catalog/history.h"
#include "mt/materialized_table.h"
#include "mt/lifecycle/pipeline.h"
#include "mt/continuous/partial_log.h"
#include "mt/utils/citus.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/sql.h"

PG_FUNCTION_INFO_V1(mt_on_sql_drop);

/*
 * mt_forget_table
 *		Remove every trace of an MT but the table itself: its pipeline
 *		first, then its history and catalog row.  Does nothing for a table
 *		the catalog does not know (any more).  The caller holds the table.
 */
void
mt_forget_table(Oid relid)
{
	if (mt_catalog_lock(relid) == NULL)
		return;
	mt_pipeline_table_dropped(relid);
	/* (a node's table of partial aggregates: its log) */
	mt_partial_log_forget(relid);
	mt_history_forget_table(relid);
	mt_catalog_delete(relid);
}

const char *
mt_drop_command(MtStatement *st)
{
	MtDropStmt *d = st->drop;
	Oid			relid = mt_lookup_table(st, d->name, AccessExclusiveLock, d->if_exists);
	ObjectAddress address;

	if (!OidIsValid(relid))
	{
		ereport(NOTICE,
				(errmsg("materialized table \"%s\" does not exist, skipping", d->name->name)));
		return "DROP MATERIALIZED TABLE";
	}
	(void) mt_lock_catalog_row(st, d->name, relid);

	mt_forget_table(relid);
	if (d->behavior == DROP_CASCADE)
	{
		/*
		 * What depends on the table goes too, materialized tables reading
		 * it among them: as a DROP TABLE of its own, so that the sql_drop
		 * event trigger forgets each of them.
		 */
		mt_spi_exec_internal(psprintf("DROP TABLE %s CASCADE", mt_qualified_name(relid)), SPI_OK_UTILITY);
		return "DROP MATERIALIZED TABLE";
	}
	if (mt_citus_table_kind(relid) != MT_CITUS_NONE)
	{
		/* a DROP TABLE that Citus sees, so that it drops the shards too */
		mt_spi_exec_internal(psprintf("DROP TABLE %s", mt_qualified_name(relid)), SPI_OK_UTILITY);
		return "DROP MATERIALIZED TABLE";
	}
	ObjectAddressSet(address, RelationRelationId, relid);
	performDeletion(&address, DROP_RESTRICT, 0);
	return "DROP MATERIALIZED TABLE";
}

/*
 * mt_on_sql_drop
 *		Event trigger: forget the materialized tables a command dropped.
 */
Datum
mt_on_sql_drop(PG_FUNCTION_ARGS)
{
	ListCell   *lc;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		elog(ERROR, "mt_on_sql_drop: not fired by event trigger manager");
	if (!mt_extension_ready())
		PG_RETURN_NULL();

	foreach(lc, mt_catalog_dropped_tables())
		mt_forget_table(lfirst_oid(lc));
	PG_RETURN_NULL();
}
