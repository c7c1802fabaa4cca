/*-------------------------------------------------------------------------
 *
 * src/continuous/source_ddl.c
 *	  DDL on a source that changes its rows, or how they may be read,
 *	  without changes to decode: the CONTINUOUS tables that read it are
 *	  recomputed or analyzed again once the statement has run.
 *
 * Which tables a statement concerns is read before it runs (while the
 * children are still attached), what it means is told after.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "nodes/parsenodes.h"

#include "mt/continuous/continuous.h"
#include "mt/continuous/source_ddl.h"
#include "mt/materialized_table.h"
#include "mt/utils/relations.h"

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
 * mt_source_ddl_before
 *		Before the statement runs: the sources whose rows it replaces, and
 *		the one whose changes decoding must look at again.
 */
void
mt_source_ddl_before(Node *parsetree, MtSourceDdl *ddl)
{
	ddl->rows_replaced = list_concat(parents_changing(parsetree), policy_changing(parsetree));
	ddl->reanalyze = persistence_changing(parsetree);
}

/*
 * mt_source_ddl_after
 *		After it ran: tell CONTINUOUS mode.
 */
void
mt_source_ddl_after(MtSourceDdl *ddl)
{
	if (ddl->rows_replaced != NIL)
		mt_continuous_source_rows_replaced(ddl->rows_replaced);
	if (OidIsValid(ddl->reanalyze))
		mt_continuous_source_reanalyze(ddl->reanalyze);
}
