/*-------------------------------------------------------------------------
 *
 * src/hooks/utility_hook.c
 *	  The utility hook: a router from a utility statement to the concerns
 *	  that must see it before or after PostgreSQL runs it.
 *
 *	  before	pg_restore --clean's drops of hidden objects	lifecycle/restore.c
 *				MATERIALIZED VIEW statements on materialized
 *				tables, run as their commands instead		hooks/native.c
 *				DROP DATABASE: stop its worker				lifecycle/pipeline.c
 *				refusals (TRUNCATE, COPY, column changes ...)	hooks/guards.c
 *				DROP EXTENSION materialized_table			lifecycle/pipeline.c
 *				sources whose rows or reading change		continuous/source_ddl.c
 *	  after		the dropped database's origin				lifecycle/pipeline.c
 *				sources whose rows or reading changed		continuous/source_ddl.c
 *				a restore's marker and end of data			lifecycle/restore.c
 *				renames, owners, grants						lifecycle/ddl_followups.c
 *
 * The extension's own statements (inside MT_INTERNAL_BEGIN/END) pass the
 * "before" steps but for DROP DATABASE; a database without the extension
 * sees nothing but DROP DATABASE's.  Chained to the hook installed before.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "tcop/utility.h"

#include "mt/continuous/source_ddl.h"
#include "mt/hooks/guards.h"
#include "mt/hooks/native.h"
#include "mt/hooks/utility_hook.h"
#include "mt/lifecycle/ddl_followups.h"
#include "mt/lifecycle/pipeline.h"
#include "mt/lifecycle/restore.h"
#include "mt/materialized_table.h"

static ProcessUtility_hook_type prev_process_utility = NULL;

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

static void
mt_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				   ProcessUtilityContext context, ParamListInfo params,
				   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	bool		users = !MT_INTERNAL_ACTIVE() && mt_extension_ready();
	Oid			dropped_db = InvalidOid;
	MtSourceDdl source_ddl = {NIL, InvalidOid};

	if (users && !IsBinaryUpgrade)
	{
		/* pg_restore --clean drops hidden objects before their tables */
		mt_restore_before_drop(parsetree);

		/*
		 * MATERIALIZED VIEW statements on materialized tables are the
		 * commands of execute() in PostgreSQL's spelling; what else a DROP
		 * names passes on, as a statement of its own.
		 */
		if (mt_native_utility(&pstmt, queryString, qc))
			return;
		parsetree = pstmt->utilityStmt;
	}

	if (IsA(parsetree, DropdbStmt))
	{
		dropped_db = get_database_oid(((DropdbStmt *) parsetree)->dbname, true);
		mt_pipeline_database_dropped(((DropdbStmt *) parsetree)->dbname);
	}
	else if (users)
	{
		mt_guard_utility(parsetree);
		if (drops_this_extension(parsetree))
			mt_pipeline_extension_dropped();
	}
	/* (ours attach only new, empty partitions of materialized tables) */
	if (users)
		mt_source_ddl_before(parsetree, &source_ddl);

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params,
							 queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);

	/* DROP DATABASE took the slot with it, not the (cluster-wide) origin */
	if (OidIsValid(dropped_db))
		mt_pipeline_database_gone(dropped_db);

	mt_source_ddl_after(&source_ddl);

	/* a restore of a dump: a marker's definition, then the end of the data */
	if ((IsA(parsetree, CommentStmt) || IsA(parsetree, RefreshMatViewStmt)) &&
		!MT_INTERNAL_ACTIVE() && !IsBinaryUpgrade && mt_extension_ready())
		mt_restore_after_utility(parsetree);

	if (mt_extension_ready())
		mt_ddl_followups(parsetree);
}

void
mt_utility_hook_install(void)
{
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = mt_process_utility;
}
