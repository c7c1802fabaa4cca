/*-------------------------------------------------------------------------
 *
 * src/hooks/citus_guard.c
 *	  Citus distributing a table that a CONTINUOUS table reads.
 *
 * Once Citus distributes a table (create_distributed_table, a reference
 * table, a Citus local table, also one Citus converts by itself for a
 * foreign key), its rows are in shards whose changes this database's
 * replication slot never sees: a CONTINUOUS table reading it would go on
 * looking fresh while it no longer follows it.  That is refused.  Citus
 * gives every table it takes over a TRUNCATE trigger running
 * citus_truncate_trigger(), in the same transaction as its catalog entry;
 * the object access hook sees that trigger created.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_trigger.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "mt/continuous/chain.h"
#include "mt/hooks/citus_guard.h"
#include "mt/utils/extension.h"

static object_access_hook_type prev_object_access = NULL;

/*
 * The table a trigger created in this very command is on, if its function
 * is Citus's TRUNCATE trigger.  The new row is seen only by a scan of our
 * own changes (SnapshotSelf): the command has not ended yet.
 */
static Oid
citus_trigger_table(Oid trigger)
{
	Relation	rel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			result = InvalidOid;

	ScanKeyInit(&key, Anum_pg_trigger_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(trigger));
	scan = systable_beginscan(rel, TriggerOidIndexId, true, SnapshotSelf, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		Form_pg_trigger form = (Form_pg_trigger) GETSTRUCT(tup);
		char	   *func = get_func_name(form->tgfoid);

		if (func && strcmp(func, "citus_truncate_trigger") == 0)
			result = form->tgrelid;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

static void
mt_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access)
		prev_object_access(access, classId, objectId, subId, arg);
	if (access == OAT_POST_CREATE && classId == TriggerRelationId && mt_extension_ready())
	{
		Oid			relid = citus_trigger_table(objectId);

		if (OidIsValid(relid) && mt_chain_read_by_continuous(relid))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot distribute table \"%s\" while a CONTINUOUS materialized table reads it",
							get_rel_name(relid)),
					 errdetail("Its rows would be in shards, whose changes CONTINUOUS mode does not follow."),
					 errhint("Drop the CONTINUOUS materialized tables that read it, or create them again in FULL mode, first.")));
	}
}

void
mt_citus_guard_install(void)
{
	prev_object_access = object_access_hook;
	object_access_hook = mt_object_access;
}
