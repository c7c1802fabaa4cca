/*-------------------------------------------------------------------------
 *
 * src/hooks/guards.c
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
 *							database they work in is dropped; routes
 *							MATERIALIZED VIEW statements on materialized
 *							tables to their commands (hooks/native.c)
 *
 * The extension's own statements pass while mt_internal_depth > 0.  Both
 * hooks let everything through where the extension is not installed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "nodes/makefuncs.h"
#include "catalog/pg_class.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "commands/tablecmds.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parsetree.h"
#include "storage/lmgr.h"
#include "tcop/utility.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/commands/commands.h"
#include "mt/continuous/continuous.h"
#include "mt/hooks/guards.h"
#include "mt/materialized_table.h"
#include "mt/hooks/native.h"
#include "mt/refresh/partitions.h"
#include "mt/lifecycle/pipeline.h"
#include "mt/lifecycle/restore.h"

static ProcessUtility_hook_type prev_process_utility = NULL;
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
	Oid			types[2] = {OIDOID, INT2OID};
	Datum		values[2];
	Oid			user = InvalidOid;
	MtSavedUser saved;

	if (!OidIsValid(relid) || cmd->name == NULL)
		return;
	attnum = get_attnum(relid, cmd->name);
	if (attnum == InvalidAttrNumber)
		return;
	values[0] = ObjectIdGetDatum(relid);
	values[1] = Int16GetDatum(attnum);
	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (SPI_execute_with_args("SELECT t.relid::pg_catalog.oid"
							  "  FROM pg_catalog.pg_depend d"
							  "  JOIN pg_catalog.pg_rewrite r ON r.oid = d.objid"
							  "  JOIN materialized_table_internal.mt_table t"
							  "    ON t.query_view::pg_catalog.oid = r.ev_class"
							  " WHERE d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass"
							  "   AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass"
							  "   AND d.refobjid = $1 AND d.refobjsubid = $2"
							  " ORDER BY 1 LIMIT 1",
							  2, types, values, NULL, false, 1) == SPI_OK_SELECT &&
		SPI_processed == 1)
	{
		bool		isnull;

		user = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											  1, &isnull));
	}
	if (OidIsValid(user))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot alter type of column \"%s\" of table \"%s\"",
						cmd->name, get_rel_name(relid)),
				 errdetail("The query of materialized table \"%s\" reads the column.",
						   get_rel_name(user)),
				 errhint("Drop the materialized table first, and create it again afterwards.")));
	SPI_finish();
	mt_as_extension_owner_end(&saved);
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
	if (con->pktable && OidIsValid(mt = owning_mt(con->pktable)))
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
check_utility(Node *parsetree)
{
	ListCell   *lc;
	Oid			mt;

	check_hidden(altered_relation(parsetree));
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

				if (alter->objtype != OBJECT_TABLE)
					break;
				mt = owning_mt(alter->relation);
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
								 OidIsValid(mt = owning_mt((RangeVar *) cmd->def)))
							refuse_alter(mt, "inherit from");
					}
					break;
				}
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
				foreach(lc, create->constraints)
					check_foreign_key(lfirst(lc), InvalidOid);
				foreach(lc, create->tableElts)
				{
					if (IsA(lfirst(lc), ColumnDef))
						check_column_foreign_keys(lfirst(lc), InvalidOid);
					else
						check_foreign_key(lfirst(lc), InvalidOid);
				}
				break;
			}

		case T_CreateTrigStmt:
			{
				CreateTrigStmt *trig = (CreateTrigStmt *) parsetree;

				if (OidIsValid(mt = owning_mt(trig->relation)))
					ereport(ERROR,
							(errcode(ERRCODE_WRONG_OBJECT_TYPE),
							 errmsg("cannot create trigger on materialized table \"%s\"",
									get_rel_name(mt)),
							 errdetail("Refreshes write the table directly, so its triggers would not fire.")));
				break;
			}

		case T_DropStmt:
			{
				DropStmt   *drop = (DropStmt *) parsetree;

				if (drop->removeType != OBJECT_TABLE)
					break;
				/* a partition alone: its rows would be gone until a refresh */
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
 * The tables whose rows the statement adds or takes away without changes
 * to decode: ATTACH or DETACH PARTITION (the table and its ancestors),
 * INHERIT or NO INHERIT (the parent and its ancestors), DROP TABLE of a
 * partition or an inheritance child (its ancestors).  Read before the
 * statement runs, while the children are still attached.
 */
static List *
parents_changing(Node *parsetree)
{
	List	   *result = NIL;
	ListCell   *lc;

	if (IsA(parsetree, AlterTableStmt))
	{
		AlterTableStmt *alter = (AlterTableStmt *) parsetree;

		foreach(lc, alter->cmds)
		{
			AlterTableType type = ((AlterTableCmd *) lfirst(lc))->subtype;
			Oid			relid;

			if (type == AT_AddInherit || type == AT_DropInherit)
			{
				/* the child's rows join or leave its new or old parent's */
				relid = RangeVarGetRelid((RangeVar *) ((AlterTableCmd *) lfirst(lc))->def,
										 NoLock, true);
				if (OidIsValid(relid))
					result = list_concat(result,
										 lcons_oid(relid, mt_ancestor_relations(relid)));
				continue;
			}
			if (type != AT_AttachPartition && type != AT_DetachPartition &&
				type != AT_DetachPartitionFinalize)
				continue;
			relid = RangeVarGetRelid(alter->relation, NoLock, true);
			if (OidIsValid(relid))
				result = list_concat(result, lcons_oid(relid, mt_ancestor_relations(relid)));
			break;
		}
	}
	else if (IsA(parsetree, DropStmt) && ((DropStmt *) parsetree)->removeType == OBJECT_TABLE)
	{
		foreach(lc, ((DropStmt *) parsetree)->objects)
		{
			Oid			relid = RangeVarGetRelid(makeRangeVarFromNameList(lfirst(lc)), NoLock, true);

			if (OidIsValid(relid))
				result = list_concat(result, mt_ancestor_relations(relid));
		}
	}
	return result;
}

/*
 * The table whose changes decoding can no longer (or can again) apply as
 * they are: ALTER TABLE ... SET LOGGED / UNLOGGED, or ... ENABLE / DISABLE
 * / FORCE / NO FORCE ROW LEVEL SECURITY.
 */
static Oid
persistence_changing(Node *parsetree)
{
	ListCell   *lc;

	if (!IsA(parsetree, AlterTableStmt))
		return InvalidOid;
	foreach(lc, ((AlterTableStmt *) parsetree)->cmds)
	{
		AlterTableType type = ((AlterTableCmd *) lfirst(lc))->subtype;

		if (type == AT_SetLogged || type == AT_SetUnLogged ||
			type == AT_EnableRowSecurity || type == AT_DisableRowSecurity ||
			type == AT_ForceRowSecurity || type == AT_NoForceRowSecurity)
			return RangeVarGetRelid(((AlterTableStmt *) parsetree)->relation, NoLock, true);
	}
	return InvalidOid;
}

/*
 * The table whose policies CREATE / ALTER / DROP POLICY changes: the rows
 * its readers may see change without changes to decode.
 */
static List *
policy_changing(Node *parsetree)
{
	RangeVar   *table = NULL;

	if (IsA(parsetree, CreatePolicyStmt))
		table = ((CreatePolicyStmt *) parsetree)->table;
	else if (IsA(parsetree, AlterPolicyStmt))
		table = ((AlterPolicyStmt *) parsetree)->table;
	else if (IsA(parsetree, DropStmt) && ((DropStmt *) parsetree)->removeType == OBJECT_POLICY)
	{
		List	   *names = linitial(((DropStmt *) parsetree)->objects);

		/* the policy's name comes last, after its table's */
		table = makeRangeVarFromNameList(list_truncate(list_copy(names), list_length(names) - 1));
	}
	if (table == NULL)
		return NIL;
	return list_make1_oid(RangeVarGetRelid(table, NoLock, true));
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

static void
mt_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				   ProcessUtilityContext context, ParamListInfo params,
				   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	Oid			dropped_db = InvalidOid;
	List	   *partitioned = NIL;
	Oid			persistence_changed = InvalidOid;

	/* pg_restore --clean drops hidden objects before their tables */
	if (mt_internal_depth == 0 && !IsBinaryUpgrade && mt_extension_ready())
		mt_restore_before_drop(parsetree);

	/*
	 * MATERIALIZED VIEW statements on materialized tables are the commands
	 * of execute() in PostgreSQL's spelling; what else a DROP names passes
	 * on, as a statement of its own.
	 */
	if (mt_internal_depth == 0 && !IsBinaryUpgrade && mt_extension_ready())
	{
		if (mt_native_utility(&pstmt, queryString, qc))
			return;
		parsetree = pstmt->utilityStmt;
	}

	if (IsA(parsetree, DropdbStmt))
	{
		dropped_db = get_database_oid(((DropdbStmt *) parsetree)->dbname, true);
		mt_pipeline_database_dropped(((DropdbStmt *) parsetree)->dbname);
	}
	else if (mt_internal_depth == 0 && mt_extension_ready())
	{
		check_utility(parsetree);
		if (drops_this_extension(parsetree))
			mt_pipeline_extension_dropped();
	}
	/* (ours attach only new, empty partitions of materialized tables) */
	if (mt_internal_depth == 0 && mt_extension_ready())
	{
		partitioned = list_concat(parents_changing(parsetree), policy_changing(parsetree));
		persistence_changed = persistence_changing(parsetree);
	}

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params,
							 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);

	/* DROP DATABASE took the slot with it, not the (cluster-wide) origin */
	if (OidIsValid(dropped_db))
		mt_pipeline_database_gone(dropped_db);

	if (partitioned != NIL)
		mt_continuous_source_rows_replaced(partitioned);
	if (OidIsValid(persistence_changed))
		mt_continuous_source_reanalyze(persistence_changed);

	/* pg_cron's jobs are named after their table and run as its owner */
	if (schedules_may_change(parsetree) && mt_extension_ready())
		mt_pipeline_recheck_schedules();

	/* a restore of a dump: a marker's definition, then the end of the data */
	if ((IsA(parsetree, CommentStmt) || IsA(parsetree, RefreshMatViewStmt)) &&
		mt_internal_depth == 0 && !IsBinaryUpgrade && mt_extension_ready())
		mt_restore_after_utility(parsetree);

	/* a table's pipeline runs as its owner: follow owner changes */
	if (IsA(parsetree, ReassignOwnedStmt) && mt_extension_ready())
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
	/* the partitions of a materialized table carry its privileges */
	if (IsA(parsetree, GrantStmt) && ((GrantStmt *) parsetree)->objtype == OBJECT_TABLE &&
		mt_extension_ready())
		grant_reaches_partitions((GrantStmt *) parsetree);

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
				mt_sync_hidden_privileges(mt);
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
