/*-------------------------------------------------------------------------
 *
 * src/lifecycle/ddl_followups.c
 *	  What PostgreSQL's own DDL means for materialized tables once it has
 *	  run: renames and pg_cron's arrival or departure recheck the tables'
 *	  jobs, owner changes reach their hidden objects and pipelines, and
 *	  GRANT / REVOKE reach their partitions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/hidden_objects.h"
#include "mt/lifecycle/ddl_followups.h"
#include "mt/lifecycle/pipeline.h"
#include "mt/materialized_table.h"
#include "mt/refresh/partitions.h"

/*
 * Can this statement rename a table or its schema, change its owner's
 * name, or add or remove pg_cron?  Then the schedules are checked again.
 */
static bool
schedules_may_change(Node *parsetree)
{
	if (IsA(parsetree, CreateExtensionStmt))
		return strcmp(((CreateExtensionStmt *) parsetree)->extname, "pg_cron") == 0;
	if (IsA(parsetree, DropStmt))
		return ((DropStmt *) parsetree)->removeType == OBJECT_EXTENSION;
	if (IsA(parsetree, RenameStmt))
	{
		RenameStmt *rename = (RenameStmt *) parsetree;

		return rename->renameType == OBJECT_TABLE || rename->renameType == OBJECT_SCHEMA ||
			rename->renameType == OBJECT_ROLE;
	}
	if (IsA(parsetree, AlterObjectSchemaStmt))
		return ((AlterObjectSchemaStmt *) parsetree)->objectType == OBJECT_TABLE;
	return IsA(parsetree, ReassignOwnedStmt);
}

/*
 * After GRANT or REVOKE on tables: the partitions of the materialized
 * tables it named (or of every one in the schemas of ... ALL TABLES IN
 * SCHEMA) get the privileges their table now has.
 */
static void
grant_reaches_partitions(GrantStmt *grant)
{
	ListCell   *lc;

	if (grant->targtype == ACL_TARGET_OBJECT)
	{
		foreach(lc, grant->objects)
		{
			Oid			relid = RangeVarGetRelid(lfirst(lc), NoLock, true);

			if (OidIsValid(relid) && mt_is_materialized_table(relid))
				mt_partition_sync_privileges(relid);
		}
	}
	else if (grant->targtype == ACL_TARGET_ALL_IN_SCHEMA)
	{
		List	   *schemas = NIL;

		foreach(lc, grant->objects)
			schemas = lappend_oid(schemas, get_namespace_oid(strVal(lfirst(lc)), false));
		foreach(lc, mt_catalog_all_relids())
		{
			Oid			relid = lfirst_oid(lc);

			/* (a table dropped meanwhile has no schema) */
			if (list_member_oid(schemas, get_rel_namespace(relid)))
				mt_partition_sync_privileges(relid);
		}
	}
}

/* REASSIGN OWNED: every table's hidden objects follow its (new) owner */
static void
reassign_owned_followup(void)
{
	ListCell   *lc;

	foreach(lc, mt_catalog_all_relids())
	{
		Oid			relid = lfirst_oid(lc);

		/* a table dropped meanwhile is waited for, then left out */
		LockRelationOid(relid, AccessShareLock);
		if (SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
			mt_sync_hidden_privileges(relid);
	}
}

/* ALTER TABLE ... OWNER TO on a materialized table: its pipeline runs as its owner */
static void
change_owner_followup(AlterTableStmt *alter)
{
	ListCell   *lc;

	foreach(lc, alter->cmds)
	{
		Oid			mt;

		if (((AlterTableCmd *) lfirst(lc))->subtype == AT_ChangeOwner &&
			OidIsValid(mt = mt_owning_materialized_table_rv(alter->relation)) &&
			mt_is_materialized_table(mt))
		{
			mt_sync_hidden_privileges(mt);
			mt_pipeline_owner_changed(mt);
		}
	}
}

/*
 * mt_ddl_followups
 *		After PostgreSQL ran a utility statement, in a database where the
 *		extension is ready.
 */
void
mt_ddl_followups(Node *parsetree)
{
	/* pg_cron's jobs are named after their table and run as its owner */
	if (schedules_may_change(parsetree))
		mt_pipeline_recheck_schedules();

	switch (nodeTag(parsetree))
	{
		case T_ReassignOwnedStmt:
			reassign_owned_followup();
			break;
		case T_GrantStmt:
			/* the partitions of a materialized table carry its privileges */
			if (((GrantStmt *) parsetree)->objtype == OBJECT_TABLE)
				grant_reaches_partitions((GrantStmt *) parsetree);
			break;
		case T_AlterTableStmt:
			change_owner_followup((AlterTableStmt *) parsetree);
			break;
		default:
			break;
	}
}
