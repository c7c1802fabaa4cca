/*-------------------------------------------------------------------------
 *
 * guards.c
 *	  Keeping materialized tables consistent with their queries.
 *
 * The content of a materialized table changes only through refreshes, and
 * its columns only through ALTER MATERIALIZED TABLE.  Two hooks enforce
 * that, each chained to the hook installed before it:
 *
 *	  ExecutorStart_hook	refuses INSERT, UPDATE, DELETE and MERGE whose
 *							target is a materialized table or one of its
 *							partitions (including data-modifying CTEs)
 *	  ProcessUtility_hook	refuses TRUNCATE, COPY FROM, column changes,
 *							partition changes and inheritance; stops the
 *							pipelines before DROP EXTENSION and before a
 *							database they work in is dropped
 *
 * The extension's own statements pass while mt_internal_depth > 0.  Both
 * hooks let everything through where the extension is not installed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/extension.h"
#include "commands/tablecmds.h"
#include "executor/executor.h"
#include "nodes/parsenodes.h"
#include "parser/parsetree.h"
#include "tcop/utility.h"
#include "utils/lsyscache.h"

#include "catalog.h"
#include "commands.h"
#include "guards.h"
#include "materialized_table.h"
#include "pipeline.h"

static ProcessUtility_hook_type prev_process_utility = NULL;
static ExecutorStart_hook_type prev_executor_start = NULL;

static void
refuse_write(Oid mt, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("cannot %s materialized table \"%s\"", what, get_rel_name(mt)),
			 errdetail("The content of a materialized table changes only when it is refreshed."),
			 errhint("Use ALTER MATERIALIZED TABLE ... REFRESH through materialized_table.execute().")));
}

static void
refuse_alter(Oid mt, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot %s materialized table \"%s\"", what, get_rel_name(mt)),
			 errdetail("The columns and partitions of a materialized table follow its query."),
			 errhint("Use ALTER MATERIALIZED TABLE through materialized_table.execute().")));
}

static Oid
owning_mt(RangeVar *rv)
{
	Oid			relid = RangeVarGetRelid(rv, NoLock, true);

	return OidIsValid(relid) ? mt_owning_materialized_table(relid) : InvalidOid;
}

static void
mt_executor_start(QueryDesc *queryDesc, int eflags)
{
	PlannedStmt *stmt = queryDesc->plannedstmt;

	if (stmt->resultRelations != NIL && mt_internal_depth == 0 &&
		(eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0 && mt_extension_ready())
	{
		ListCell   *lc;

		foreach(lc, stmt->resultRelations)
		{
			RangeTblEntry *rte = rt_fetch(lfirst_int(lc), stmt->rtable);
			Oid			mt = mt_owning_materialized_table(rte->relid);

			if (OidIsValid(mt))
				refuse_write(mt, "change");
		}
	}
	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/* ALTER TABLE subcommands that keep a table's columns and partitions. */
static bool
alter_keeps_shape(AlterTableCmd *cmd)
{
	switch (cmd->subtype)
	{
		case AT_AddColumn:
		case AT_AddColumnRecurse:
		case AT_AddColumnToView:
		case AT_DropColumn:
		case AT_DropColumnRecurse:
		case AT_AlterColumnType:
		case AT_AlterColumnGenericOptions:
		case AT_DropExpression:
		case AT_AddIdentity:
		case AT_SetIdentity:
		case AT_DropIdentity:
		case AT_AttachPartition:
		case AT_DetachPartition:
		case AT_DetachPartitionFinalize:
		case AT_AddInherit:
		case AT_DropInherit:
		case AT_AddOf:
		case AT_DropOf:
		case AT_ColumnDefault:
		case AT_CookedColumnDefault:
			return false;
		default:
			return true;
	}
}

static void
check_utility(Node *parsetree)
{
	ListCell   *lc;
	Oid			mt;

	switch (nodeTag(parsetree))
	{
		case T_TruncateStmt:
			foreach(lc, ((TruncateStmt *) parsetree)->relations)
				if (OidIsValid(mt = owning_mt(lfirst(lc))))
					refuse_write(mt, "truncate");
			break;

		case T_CopyStmt:
			{
				CopyStmt   *copy = (CopyStmt *) parsetree;

				if (copy->is_from && copy->relation &&
					OidIsValid(mt = owning_mt(copy->relation)))
					refuse_write(mt, "copy into");
				break;
			}

		case T_AlterTableStmt:
			{
				AlterTableStmt *alter = (AlterTableStmt *) parsetree;

				if (alter->objtype != OBJECT_TABLE ||
					!OidIsValid(mt = owning_mt(alter->relation)))
					break;
				foreach(lc, alter->cmds)
					if (!alter_keeps_shape(lfirst(lc)))
						refuse_alter(mt, "alter the columns or partitions of");
				break;
			}

		case T_RenameStmt:
			{
				RenameStmt *rename = (RenameStmt *) parsetree;

				if (rename->renameType == OBJECT_COLUMN && rename->relation &&
					OidIsValid(mt = owning_mt(rename->relation)))
					refuse_alter(mt, "rename a column of");
				break;
			}

		case T_CreateStmt:
			{
				CreateStmt *create = (CreateStmt *) parsetree;

				foreach(lc, create->inhRelations)
					if (OidIsValid(mt = owning_mt(lfirst(lc))))
						refuse_alter(mt, create->partbound ?
									 "add a partition to" : "inherit from");
				break;
			}

		default:
			break;
	}
}

/* Is this DROP EXTENSION materialized_table? */
static bool
drops_this_extension(Node *parsetree)
{
	DropStmt   *drop;
	ListCell   *lc;

	if (!IsA(parsetree, DropStmt))
		return false;
	drop = (DropStmt *) parsetree;
	if (drop->removeType != OBJECT_EXTENSION)
		return false;
	foreach(lc, drop->objects)
		if (strcmp(strVal(lfirst(lc)), MT_EXTENSION_NAME) == 0)
			return true;
	return false;
}

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
 * The hidden query view must belong to the table's owner: refreshes read
 * it as the owner, and its permission checks on the sources are the
 * owner's.  It lives in the internal schema, where the new owner may not
 * create objects, hence the extension owner's rights.
 */
static void
query_view_follow_owner(Oid relid)
{
	MtTable    *mt = mt_catalog_lookup(relid, false);
	MtSavedUser saved;

	mt_as_extension_owner_begin(&saved);
	ATExecChangeOwner(mt->query_view, mt_table_owner(relid), false, AccessExclusiveLock);
	mt_as_extension_owner_end(&saved);
	CommandCounterIncrement();
}

static void
mt_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				   ProcessUtilityContext context, ParamListInfo params,
				   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;

	if (IsA(parsetree, DropdbStmt))
		mt_pipeline_database_dropped(((DropdbStmt *) parsetree)->dbname);
	else if (mt_internal_depth == 0 && mt_extension_ready())
	{
		check_utility(parsetree);
		if (drops_this_extension(parsetree))
			mt_pipeline_extension_dropped();
	}

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params,
							 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);

	/* pg_cron's jobs are named after their table and run as its owner */
	if (schedules_may_change(parsetree) && mt_extension_ready())
		mt_pipeline_recheck_schedules();

	/* a table's pipeline runs as its owner: follow owner changes */
	if (IsA(parsetree, AlterTableStmt) && mt_extension_ready())
	{
		AlterTableStmt *alter = (AlterTableStmt *) parsetree;
		ListCell   *lc;

		foreach(lc, alter->cmds)
		{
			Oid			mt;

			if (((AlterTableCmd *) lfirst(lc))->subtype == AT_ChangeOwner &&
				OidIsValid(mt = owning_mt(alter->relation)) &&
				mt_is_materialized_table(mt))
			{
				query_view_follow_owner(mt);
				mt_pipeline_owner_changed(mt);
			}
		}
	}
}

void
mt_guards_install(void)
{
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = mt_process_utility;
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = mt_executor_start;
}
