/*-------------------------------------------------------------------------
 *
 * src/lifecycle/restore.c
 *	  Materialized tables across pg_dump and pg_restore.
 *
 * pg_dump dumps a materialized table as the ordinary table it is, with its
 * partitions, keys, comments and grants, and the objects of the internal
 * schema as ordinary objects: its query view, the state of a DELTAS table
 * and its restore marker (catalog/marker.c), which carries its definition.  It
 * dumps neither the extension's catalog nor the state of the pipeline (a
 * pg_cron job, continuous_state, the replication slot).
 *
 * Every format pg_dump writes replays it in three steps:
 *	  1. CREATE MATERIALIZED VIEW ... WITH NO DATA, then COMMENT ON it:
 *		 the utility hook inserts the catalog row, pending
 *		 (restore_pending says what it waits for);
 *	  2. the data: a pending table may be written by a restore -- a session
 *		 with check_function_bodies off, as every script of pg_dump's sets
 *		 it, the flag PostgreSQL itself reads as "restoring" -- and by
 *		 nobody else (mt_restore_may_write);
 *	  3. REFRESH MATERIALIZED VIEW of the marker, which pg_dump puts after
 *		 all the data and every other object: the hook takes the table up
 *		 (mt_restore_take_up) -- its hidden objects renamed after its new
 *		 OID and made parts of it again, its pipeline started as CREATE
 *		 starts it, a RESTORE entry in its history.  A CONTINUOUS table is
 *		 then recomputed by the worker: what changed between the dump and
 *		 the restore is not known.
 * A --data-only restore issues no REFRESH: the table is taken up once the
 * process that restored its data has ended.  A --schema-only restore
 * leaves pending tables that wait for their data.  A restore made without
 * the hook (the library not preloaded) leaves markers without catalog
 * rows, populated or not.  The database's worker finishes all those
 * (mt_restore_reconcile), and any MATERIALIZED TABLE statement on a
 * pending table takes it up first.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "commands/dbcommands.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "commands/comment.h"
#include "commands/tablecmds.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "rewrite/rewriteHandler.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/hidden_objects.h"
#include "mt/catalog/history.h"
#include "mt/bgw/launcher.h"
#include "mt/materialized_table.h"
#include "mt/lifecycle/pipeline.h"
#include "mt/scheduler/scheduler.h"
#include "mt/catalog/marker.h"
#include "mt/lifecycle/restore.h"
#include "mt/utils/spi_plans.h"

#define WAITING_FOR_DATA		"restored from a dump: waiting for its data"
#define DATA_FROM				"restored from a dump: its data is being restored by process "
#define NOT_TAKEN_UP			"restored from a dump; not maintained yet: "

/* Has this session asked to be noticed when it ends? */
static bool restorer_registered = false;

/* A restore session ends: its database's worker finishes what it restored. */
static void
restorer_exit(int code, Datum arg)
{
	mt_wake_worker_now();
}

/*
 * The process that restores the table's data, when a session of its does
 * (restore_pending says so), or 0.
 */
static int
restoring_process(MtTable *mt)
{
	if (mt->restore_pending == NULL ||
		strncmp(mt->restore_pending, DATA_FROM, strlen(DATA_FROM)) != 0)
		return 0;
	return atoi(mt->restore_pending + strlen(DATA_FROM));
}

/* A statement of the extension's on its hidden objects. */
static void
run_internal_sql(const char *sql)
{
	MtSavedUser saved;

	mt_as_extension_owner_begin(&saved);
	mt_spi_exec_internal(sql, SPI_OK_UTILITY);
	mt_as_extension_owner_end(&saved);
	CommandCounterIncrement();
}

/*
 * A marker's comment was set by a restore: the table it names gets its
 * catalog row, pending.  (The extension sets comments without the hook.)
 */
static void
adopt(Oid marker)
{
	Oid			relid;
	Oid			query_view;
	char	   *definition = GetComment(marker, RelationRelationId, 0);

	if (definition == NULL || !mt_marker_targets(marker, &relid, &query_view) ||
		mt_catalog_lookup(relid, true) != NULL)
		return;
	LockRelationOid(relid, AccessExclusiveLock);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)) ||
		mt_catalog_lookup(relid, true) != NULL)
		return;
	mt_catalog_insert_definition(relid, query_view, definition, WAITING_FOR_DATA);
	CommandCounterIncrement();
}

/* Drop a hidden object of table relid that a restore brought, if any. */
static void
drop_restored(const char *prefix, Oid relid)
{
	Oid			rel = mt_hidden_relid(prefix, relid);
	ObjectAddress address;

	if (!OidIsValid(rel))
		return;
	deleteDependencyRecordsForClass(RelationRelationId, rel, RelationRelationId,
									DEPENDENCY_INTERNAL);
	CommandCounterIncrement();
	ObjectAddressSet(address, RelationRelationId, rel);
	performDeletion(&address, DROP_CASCADE, PERFORM_DELETION_INTERNAL | PERFORM_DELETION_QUIETLY);
	CommandCounterIncrement();
}

/*
 * Errors that say nothing of the table, but of the moment: the caller's
 * transaction gives way to another (a deadlock, a lock timeout, a
 * serialization failure) or is canceled.
 */
static bool
transient_error(ErrorData *edata)
{
	return edata->sqlerrcode == ERRCODE_T_R_DEADLOCK_DETECTED ||
		edata->sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE ||
		edata->sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE ||
		edata->sqlerrcode == ERRCODE_QUERY_CANCELED;
}

/*
 * mt_restore_take_up
 *		A restored table's data is in: make it a materialized table of this
 *		database again.  Its pipeline is started in a subtransaction: if it
 *		cannot be (CONTINUOUS mode without wal_level = logical, say), the
 *		table stays pending, readable, with the reason in restore_pending
 *		and a WARNING, and is taken up once that is fixed.
 */
void
mt_restore_take_up(Oid relid)
{
	MtTable    *mt;
	Oid			marker;
	MtSubxact	sub;
	MemoryContext caller = CurrentMemoryContext;

	LockRelationOid(relid, AccessExclusiveLock);
	mt = mt_catalog_lookup(relid, true);
	if (mt == NULL || mt->restore_pending == NULL ||
		!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(mt->query_view)))
		return;
	marker = mt_hidden_relid(MT_MARKER_PREFIX, relid);

	mt_subxact_begin(&sub);
	PG_TRY();
	{
		MtSavedUser saved;

		/* the dump's objects are parts of the table again */
		mt_as_extension_owner_begin(&saved);
		mt_hidden_part_of(mt->query_view, relid);
		if (OidIsValid(marker))
			mt_hidden_part_of(marker, relid);
		/* the pipeline builds the state of a DELTAS table afresh */
		drop_restored("derived_", relid);
		drop_restored("state_", relid);
		mt_as_extension_owner_end(&saved);
		run_internal_sql(psprintf("ALTER VIEW %s SET (security_invoker = true)",
								  quote_qualified_identifier(MT_INTERNAL_SCHEMA,
															 get_rel_name(mt->query_view))));
		mt_sync_hidden_privileges(relid);

		mt->restore_pending = NULL;
		mt->scheduler = NULL;
		mt->cron_jobid = 0;
		mt_catalog_update(mt);
		CommandCounterIncrement();
		mt_pipeline_table_created(mt);
		/* a WARNING: restores show no NOTICE (client_min_messages) */
		if (mt->refresh_mode == MT_MODE_FULL && !mt_pg_cron_available())
			ereport(WARNING,
					(errmsg("restored materialized table \"%s\" is refreshed on its schedule by the database's worker",
							get_rel_name(relid)),
					 errdetail("pg_cron is not installed in database \"%s\".",
							   get_database_name(MyDatabaseId)),
					 errhint("To schedule it with pg_cron, create extension pg_cron in the database named by cron.database_name.")));
		mt_catalog_sync_marker(mt);
		mt_history_note(relid, "RESTORE", NULL, "SUCCEEDED", NULL, false);
		mt_subxact_commit(&sub);
	}
	PG_CATCH();
	{
		ErrorData  *edata = mt_subxact_rollback(&sub);

		MemoryContextSwitchTo(caller);
		/* a lock or a conflict of the moment: tried again as it is, later */
		if (transient_error(edata))
			ReThrowError(edata);
		ereport(WARNING,
				(errmsg("restored materialized table \"%s\" is not maintained yet: %s",
						get_rel_name(relid), edata->message),
				 edata->hint ? errhint("%s", edata->hint) : 0,
				 errdetail("Its rows are as they were dumped; it is taken up when its database's worker next starts, or by ALTER MATERIALIZED TABLE ... REFRESH.")));
		mt = mt_catalog_lookup(relid, false);
		mt->restore_pending = psprintf("%s%s", NOT_TAKEN_UP, edata->message);
		mt_catalog_update(mt);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	CommandCounterIncrement();
	mt_wake_worker_at_commit();
}

/*
 * mt_restore_after_utility
 *		After COMMENT ON or REFRESH MATERIALIZED VIEW of a marker: the two
 *		steps of a restore the extension takes part in (see above).
 */
void
mt_restore_after_utility(Node *parsetree)
{
	Oid			marker = InvalidOid;
	Oid			relid;
	Oid			query_view;

	if (IsA(parsetree, CommentStmt) && ((CommentStmt *) parsetree)->objtype == OBJECT_MATVIEW)
	{
		RangeVar   *rv = makeRangeVarFromNameList(castNode(List, ((CommentStmt *) parsetree)->object));

		marker = RangeVarGetRelid(rv, NoLock, true);
		if (OidIsValid(marker) && mt_marker_is(marker))
			adopt(marker);
	}
	else if (IsA(parsetree, RefreshMatViewStmt))
	{
		marker = RangeVarGetRelid(((RefreshMatViewStmt *) parsetree)->relation, NoLock, true);
		if (OidIsValid(marker) && mt_marker_is(marker) && mt_marker_targets(marker, &relid, &query_view))
			mt_restore_take_up(relid);
	}
}

/*
 * mt_restore_session
 *		Does this session restore a dump?  pg_dump's scripts, and pg_restore,
 *		turn check_function_bodies off, as PostgreSQL's own restores need.
 */
bool
mt_restore_session(void)
{
	return !check_function_bodies;
}

/*
 * mt_restore_may_write
 *		May this session write table relid (its rows with data, else its
 *		partitions or keys), which the guards would refuse?  Only a restore
 *		of it: the table is pending, and the session runs a script of
 *		pg_dump's (check_function_bodies off).
 */
bool
mt_restore_may_write(Oid relid, bool data)
{
	MtTable    *mt;

	if (!mt_restore_session())
		return false;
	mt = mt_catalog_lookup(relid, true);
	if (mt == NULL || mt->restore_pending == NULL)
		return false;
	if (!data)
		return true;			/* partitions attached, keys added */

	/*
	 * A restore of data alone (--data-only) issues no marker's REFRESH at
	 * its end: the table is taken up by the worker once the process that
	 * restores its data is gone.  The processes of one pg_restore -j all
	 * end with it.
	 */
	if (restoring_process(mt) != MyProcPid)
	{
		mt->restore_pending = psprintf("%s%d", DATA_FROM, MyProcPid);
		mt_catalog_update(mt);
	}
	if (!restorer_registered)
	{
		before_shmem_exit(restorer_exit, (Datum) 0);
		restorer_registered = true;
	}
	return true;
}

/*
 * mt_restore_markers
 *		The markers of restores the hook may not have seen: of tables that
 *		are not materialized tables of this database yet (no catalog row,
 *		or a pending one), in OID order.  The worker finishes each with
 *		mt_restore_reconcile, in a transaction of its own, each time it
 *		reads its tables.
 */
List *
mt_restore_markers(void)
{
	if (!OidIsValid(mt_internal_namespace()) || !mt_catalog_has_restore())
		return NIL;
	return mt_spi_oids("SELECT c.oid FROM pg_catalog.pg_class c "
					   "WHERE c.relnamespace OPERATOR(pg_catalog.=) $1 "
					   "AND c.relkind OPERATOR(pg_catalog.=) 'm' "
					   "AND c.relname OPERATOR(pg_catalog.~~) 'restore\\_%' "
					   "AND NOT EXISTS (SELECT FROM materialized_table_internal.mt_table t "
					   "  WHERE t.restore_pending IS NULL "
					   "    AND c.relname OPERATOR(pg_catalog.=) ('restore_' OPERATOR(pg_catalog.||) t.id)::pg_catalog.name) "
					   "ORDER BY c.oid",
					   mt_internal_namespace());
}

/*
 * mt_restore_reconcile
 *		Finish a restore the hook did not see: a marker without a catalog
 *		row gets one, and a pending table whose marker is populated (its
 *		restore issued the marker's REFRESH), or whose data was restored by
 *		a process that has ended, is taken up.  One that could not be taken
 *		up (for want of wal_level = logical, say) is tried again only with
 *		retry_failed (the worker retries them when it starts).  Returns
 *		whether the table is left waiting for a restore to end.
 */
bool
mt_restore_reconcile(Oid marker, bool retry_failed)
{
	Oid			relid;
	Oid			query_view;
	MtTable    *mt;
	Relation	rel;
	bool		populated;
	int			pid;

	if (!mt_marker_targets(marker, &relid, &query_view))
		return false;
	adopt(marker);
	mt = mt_catalog_lookup(relid, true);
	if (mt == NULL || mt->restore_pending == NULL)
		return false;
	rel = try_relation_open(marker, AccessShareLock);
	if (rel == NULL)
		return false;			/* dropped meanwhile */
	populated = RelationIsPopulated(rel);
	relation_close(rel, AccessShareLock);
	if (!retry_failed && strncmp(mt->restore_pending, NOT_TAKEN_UP, strlen(NOT_TAKEN_UP)) == 0)
		return false;			/* what it waits for needs a restart */
	pid = restoring_process(mt);
	/* its restore has ended, or the process restoring its data has */
	if (populated || (pid != 0 && BackendPidGetProc(pid) == NULL))
	{
		mt_restore_take_up(relid);
		return false;
	}
	return true;
}

/* The table a relation is an internal part of; InvalidOid if none. */
static Oid
part_owner(Oid rel)
{
	List	   *owners = mt_spi_oids("SELECT d.refobjid FROM pg_catalog.pg_depend d "
									 "WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass "
									 "AND d.objid = $1 AND d.deptype = 'i' "
									 "AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass",
									 rel);

	return owners != NIL ? linitial_oid(owners) : InvalidOid;
}

/*
 * mt_restore_before_drop
 *		pg_restore --clean drops a table's hidden objects before the table
 *		(as the dump named them), and what they read in between: in a
 *		restore session, they are let go of their table for that.
 */
void
mt_restore_before_drop(Node *parsetree)
{
	DropStmt   *drop;
	ListCell   *lc;

	if (!IsA(parsetree, DropStmt) || !mt_restore_session())
		return;
	drop = (DropStmt *) parsetree;
	if (drop->removeType != OBJECT_TABLE && drop->removeType != OBJECT_VIEW &&
		drop->removeType != OBJECT_MATVIEW)
		return;
	foreach(lc, drop->objects)
	{
		Oid			rel = RangeVarGetRelid(makeRangeVarFromNameList(lfirst(lc)), NoLock, true);
		Oid			table;

		if (OidIsValid(rel) && get_rel_namespace(rel) == mt_internal_namespace() &&
			OidIsValid(table = part_owner(rel)) && mt_is_materialized_table(table))
			deleteDependencyRecordsForClass(RelationRelationId, rel, RelationRelationId,
											DEPENDENCY_INTERNAL);
	}
	CommandCounterIncrement();
}
