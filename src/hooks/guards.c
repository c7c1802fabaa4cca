/*-------------------------------------------------------------------------
 *
 * src/hooks/guards.c
 *	  Keeping materialized tables consistent with their queries.
 *
 * The content of a materialized table changes only through refreshes, and
 * its columns only through ALTER MATERIALIZED TABLE.  Two guards enforce
 * that:
 *
 *	  ExecutorStart_hook	refuses INSERT, UPDATE, DELETE and MERGE whose
 *							target is a materialized table or one of its
 *							partitions (including data-modifying CTEs);
 *							chained to the hook installed before it
 *	  mt_guard_utility		refuses TRUNCATE, COPY FROM, column changes,
 *							partition changes, inheritance, triggers, and
 *							hand-made DDL on hidden objects; called by the
 *							utility hook (hooks/utility_hook.c)
 *
 * The extension's own statements pass inside MT_INTERNAL_BEGIN/END.  Both
 * guards let everything through where the extension is not installed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "commands/extension.h"
#include "commands/tablecmds.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/dependents.h"
#include "mt/catalog/hidden_objects.h"
#include "mt/commands/commands.h"
#include "mt/continuous/continuous.h"
#include "mt/hooks/guards.h"
#include "mt/materialized_table.h"
#include "mt/hooks/native.h"
#include "mt/refresh/partitions.h"
#include "mt/lifecycle/pipeline.h"
#include "mt/lifecycle/restore.h"
#include "mt/utils/citus.h"

static ExecutorStart_hook_type prev_executor_start = NULL;

static void
refuse_write(Oid mt, const char *what)
{
	/* the restore of a dump writes its tables back */
	if (mt_restore_may_write(mt, true))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("cannot %s materialized table \"%s\"", what, get_rel_name(mt)),
			 errdetail("The content of a materialized table changes only when it is refreshed."),
			 errhint("Use ALTER MATERIALIZED TABLE ... REFRESH through materialized_table.execute().")));
}

static void
refuse_alter(Oid mt, const char *what)
{
	if (mt_restore_may_write(mt, false))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot %s materialized table \"%s\"", what, get_rel_name(mt)),
			 errdetail("The columns and partitions of a materialized table follow its query."),
			 errhint("Use ALTER MATERIALIZED TABLE through materialized_table.execute().")));
}

static void
mt_executor_start(QueryDesc *queryDesc, int eflags)
{
	PlannedStmt *stmt = queryDesc->plannedstmt;

	if (stmt->resultRelations != NIL && !MT_INTERNAL_ACTIVE() &&
		(eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0 && mt_extension_ready())
	{
		ListCell   *lc;

		foreach(lc, stmt->resultRelations)
		{
			RangeTblEntry *rte = rt_fetch(lfirst_int(lc), stmt->rtable);
			Oid			mt = mt_owning_materialized_table(rte->relid);

			if (OidIsValid(mt))
				refuse_write(mt, "change");
			/* a table's owner may write its hidden state only through it */
			if (get_rel_namespace(rte->relid) == mt_internal_namespace() && !superuser())
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("cannot change internal relation \"%s\" of extension \"%s\"",
								get_rel_name(rte->relid), MT_EXTENSION_NAME),
						 errdetail("The extension keeps it in step with the materialized table it belongs to.")));
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

/*
 * A column a materialized table's query reads cannot change type: the
 * hidden view holding the query forbids it, but PostgreSQL's message would
 * name that view.  Name the materialized table instead.
 */
static void
check_source_column_type(AlterTableStmt *alter, AlterTableCmd *cmd)
{
	Oid			relid = RangeVarGetRelid(alter->relation, NoLock, true);
	AttrNumber	attnum;
	Oid			user;

	if (!OidIsValid(relid) || cmd->name == NULL)
		return;
	attnum = get_attnum(relid, cmd->name);
	if (attnum == InvalidAttrNumber)
		return;
	user = mt_catalog_column_reader(relid, attnum);
	if (OidIsValid(user))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot alter type of column \"%s\" of table \"%s\"",
						cmd->name, get_rel_name(relid)),
				 errdetail("The query of materialized table \"%s\" reads the column.",
						   get_rel_name(user)),
				 errhint("Drop the materialized table first, and create it again afterwards.")));
}

/*
 * Refreshes write a materialized table directly, without the row triggers
 * that carry foreign keys: a key from or to it would not be kept.
 */
static void
check_foreign_key(Node *node, Oid table_mt)
{
	Constraint *con;
	Oid			mt;

	if (node == NULL || !IsA(node, Constraint))
		return;
	con = (Constraint *) node;
	if (con->contype != CONSTR_FOREIGN)
		return;
	if (OidIsValid(table_mt))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialized table \"%s\" cannot have foreign keys", get_rel_name(table_mt)),
				 errdetail("Refreshes replace rows without the checks a foreign key needs.")));
	if (con->pktable && OidIsValid(mt = mt_owning_materialized_table_rv(con->pktable)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("foreign keys cannot reference materialized table \"%s\"", get_rel_name(mt)),
				 errdetail("Refreshes replace rows without the checks a foreign key needs."),
				 errhint("Reference the sources of the materialized table instead.")));
}

static void
check_column_foreign_keys(ColumnDef *col, Oid table_mt)
{
	ListCell   *lc;

	foreach(lc, col->constraints)
		check_foreign_key(lfirst(lc), table_mt);
}

/*
 * The hidden objects of materialized tables (their query views, states,
 * derived views and restore markers, in the internal schema) change only
 * with their table, through the extension: renamed, moved, altered or
 * replaced by hand -- even by a superuser, whom their ownership does not
 * stop -- they would no longer be what the catalog says they are.  A
 * restore (which re-creates them as ordinary objects) and the extension's
 * own scripts may.
 */
static void
check_hidden(RangeVar *rv)
{
	Oid			relid;

	if (rv == NULL || creating_extension || mt_restore_session())
		return;
	relid = RangeVarGetRelid(rv, NoLock, true);
	if (!OidIsValid(relid) || get_rel_namespace(relid) != mt_internal_namespace() ||
		OidIsValid(getExtensionOfObject(RelationRelationId, relid)))
		return;
	/* Citus's copy, on a worker node, of a coordinator's query view */
	if (mt_citus_installed() && !mt_hidden_claimed(relid))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("cannot alter internal relation \"%s\" of extension \"%s\"",
					get_rel_name(relid), MT_EXTENSION_NAME),
			 errdetail("The extension keeps it in step with the materialized table it belongs to."),
			 errhint("Use ALTER MATERIALIZED TABLE through materialized_table.execute().")));
}

/* The relation a statement alters, renames, moves, puts a trigger or rule on, or replaces. */
static RangeVar *
altered_relation(Node *parsetree)
{
	switch (nodeTag(parsetree))
	{
		case T_AlterTableStmt:
			return ((AlterTableStmt *) parsetree)->relation;
		case T_RenameStmt:
			return ((RenameStmt *) parsetree)->relation;
		case T_AlterObjectSchemaStmt:
			return ((AlterObjectSchemaStmt *) parsetree)->relation;
		case T_CreateTrigStmt:
			return ((CreateTrigStmt *) parsetree)->relation;
		case T_RuleStmt:
			return ((RuleStmt *) parsetree)->relation;
		case T_ViewStmt:
			return ((ViewStmt *) parsetree)->replace ? ((ViewStmt *) parsetree)->view : NULL;
		default:
			return NULL;
	}
}

static void
guard_truncate(TruncateStmt *truncate)
{
	ListCell   *lc;
	Oid			mt;

	foreach(lc, truncate->relations)
		if (OidIsValid(mt = mt_owning_materialized_table_rv(lfirst(lc))))
			refuse_write(mt, "truncate");
}

static void
guard_copy(CopyStmt *copy)
{
	Oid			mt;

	if (copy->is_from && copy->relation &&
		OidIsValid(mt = mt_owning_materialized_table_rv(copy->relation)))
		refuse_write(mt, "copy into");
}

static void
guard_alter_table(AlterTableStmt *alter)
{
	ListCell   *lc;
	Oid			mt;

	if (alter->objtype != OBJECT_TABLE)
		return;
	mt = mt_owning_materialized_table_rv(alter->relation);
	foreach(lc, alter->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);

		if (cmd->subtype == AT_AddConstraint || cmd->subtype == AT_AddConstraintRecurse)
			check_foreign_key(cmd->def, mt);
		else if ((cmd->subtype == AT_AddColumn || cmd->subtype == AT_AddColumnRecurse) &&
				 cmd->def && IsA(cmd->def, ColumnDef))
			check_column_foreign_keys((ColumnDef *) cmd->def, mt);
	}
	if (!OidIsValid(mt))
	{
		foreach(lc, alter->cmds)
		{
			AlterTableCmd *cmd = lfirst(lc);

			if (cmd->subtype == AT_AlterColumnType)
				check_source_column_type(alter, cmd);
			/* a child's rows would show in the MT */
			else if (cmd->subtype == AT_AddInherit &&
					 OidIsValid(mt = mt_owning_materialized_table_rv((RangeVar *) cmd->def)))
				refuse_alter(mt, "inherit from");
		}
		return;
	}
	/*
	 * A shard on a Citus node: Citus changes its columns as those of its
	 * distributed table, which the coordinator's guards keep to what the
	 * extension does, and refuses anyone else (citus.enable_manual_changes_to_shards)
	 */
	if (mt_citus_installed() && mt_citus_is_shard(mt))
		return;
	foreach(lc, alter->cmds)
		if (!alter_keeps_shape(lfirst(lc)))
			refuse_alter(mt, "alter the columns or partitions of");
}

static void
guard_rename(RenameStmt *rename)
{
	Oid			mt;

	if (rename->renameType == OBJECT_COLUMN && rename->relation &&
		OidIsValid(mt = mt_owning_materialized_table_rv(rename->relation)))
		refuse_alter(mt, "rename a column of");
}

static void
guard_create(CreateStmt *create)
{
	ListCell   *lc;
	Oid			mt;

	foreach(lc, create->inhRelations)
		if (OidIsValid(mt = mt_owning_materialized_table_rv(lfirst(lc))))
			refuse_alter(mt, create->partbound ?
						 "add a partition to" : "inherit from");
	foreach(lc, create->constraints)
		check_foreign_key(lfirst(lc), InvalidOid);
	foreach(lc, create->tableElts)
	{
		if (IsA(lfirst(lc), ColumnDef))
			check_column_foreign_keys(lfirst(lc), InvalidOid);
		else
			check_foreign_key(lfirst(lc), InvalidOid);
	}
}

static void
guard_create_trigger(CreateTrigStmt *trig)
{
	Oid			mt;

	if (OidIsValid(mt = mt_owning_materialized_table_rv(trig->relation)))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("cannot create trigger on materialized table \"%s\"",
						get_rel_name(mt)),
				 errdetail("Refreshes write the table directly, so its triggers would not fire.")));
}

/* a partition alone: its rows would be gone until a refresh */
static void
guard_drop(DropStmt *drop)
{
	ListCell   *lc;
	Oid			mt;

	if (drop->removeType != OBJECT_TABLE)
		return;
	foreach(lc, drop->objects)
	{
		RangeVar   *rv = makeRangeVarFromNameList(lfirst(lc));
		Oid			relid = RangeVarGetRelid(rv, NoLock, true);

		/* (pg_restore --clean drops partitions before their table) */
		if (OidIsValid(relid) && OidIsValid(mt = mt_owning_materialized_table(relid)) &&
			mt != relid && !mt_restore_session())
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("cannot drop partition \"%s\" of materialized table \"%s\"",
							get_rel_name(relid), get_rel_name(mt)),
					 errdetail("The partitions of a materialized table follow its query."),
					 errhint("Drop the materialized table itself, or refresh the partition with ALTER MATERIALIZED TABLE ... REFRESH PARTITION.")));
	}
}

/*
 * mt_guard_utility
 *		Refuse a user's utility statement that would change a materialized
 *		table's rows or shape, or a hidden object, behind the extension's
 *		back (the utility hook, before PostgreSQL runs the statement).
 */
void
mt_guard_utility(Node *parsetree)
{
	check_hidden(altered_relation(parsetree));
	switch (nodeTag(parsetree))
	{
		case T_TruncateStmt:
			guard_truncate((TruncateStmt *) parsetree);
			break;
		case T_CopyStmt:
			guard_copy((CopyStmt *) parsetree);
			break;
		case T_AlterTableStmt:
			guard_alter_table((AlterTableStmt *) parsetree);
			break;
		case T_RenameStmt:
			guard_rename((RenameStmt *) parsetree);
			break;
		case T_CreateStmt:
			guard_create((CreateStmt *) parsetree);
			break;
		case T_CreateTrigStmt:
			guard_create_trigger((CreateTrigStmt *) parsetree);
			break;
		case T_DropStmt:
			guard_drop((DropStmt *) parsetree);
			break;
		default:
			break;
	}
}

void
mt_guards_install(void)
{
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = mt_executor_start;
}
