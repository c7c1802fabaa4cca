/*-------------------------------------------------------------------------
 *
 * src/commands/command_common.c
 *	  What the MATERIALIZED TABLE statements share: resolving Flink names,
 *	  ownership checks, analyzing the query and keeping it as a view, and
 *	  running work with the privileges of a table's owner.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "commands/dbcommands.h"
#include "commands/tablecmds.h"
#include "commands/view.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_relation.h"
#include "parser/parse_type.h"
#include "utils/acl.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "mt/catalog/hidden_objects.h"
#include "mt/commands/commands.h"
#include "mt/catalog/marker.h"
#include "mt/materialized_table.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/sql.h"

/*
 * mt_resolve_namespace
 *		The schema a Flink name refers to; the catalog must be this database.
 */
Oid
mt_resolve_namespace(MtStatement *st, MtQualifiedName *name)
{
	if (name->catalog != NULL &&
		strcmp(name->catalog, get_database_name(MyDatabaseId)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cross-database references are not implemented: %s.%s.%s",
						name->catalog, name->schema, name->name),
				 errhint("The catalog of a materialized table is the current database, \"%s\".",
						 get_database_name(MyDatabaseId)),
				 mt_errposition(st->source, name->location)));
	if (name->schema != NULL)
	{
		Oid			nspid = get_namespace_oid(name->schema, true);

		if (!OidIsValid(nspid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_SCHEMA),
					 errmsg("schema \"%s\" does not exist", name->schema),
					 mt_errposition(st->source, name->location)));
		return nspid;
	}
	return RangeVarGetCreationNamespace(makeRangeVar(NULL, name->name, -1));
}

typedef struct LookupArg
{
	MtStatement *st;
	MtQualifiedName *name;
} LookupArg;

/*
 * lookup_callback
 *		Called by RangeVarGetRelidExtended between finding the name and
 *		locking the relation (and again if the name leads elsewhere after
 *		the lock), as RangeVarCallbackForDropRelation is: a relation that is
 *		not a materialized table, or not the user's, is refused before its
 *		lock is waited for.
 */
static void
lookup_callback(const RangeVar *relation, Oid relid, Oid oldrelid, void *arg)
{
	LookupArg  *a = (LookupArg *) arg;

	if (!OidIsValid(relid))
		return;
	if (!mt_is_materialized_table(relid))
	{
		/* a relation dropped since we found its name: the lock will tell */
		AcceptInvalidationMessages();
		if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
			return;
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a materialized table", a->name->name),
				 errhint("Use the ordinary SQL statement for this kind of relation."),
				 mt_errposition(a->st->source, a->name->location)));
	}
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		return;
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(relid));
}

/*
 * mt_lookup_table
 *		The OID of the materialized table a Flink name refers to, locked in
 *		lockmode, and owned by the user.
 *
 * A relation of that name that is not a materialized table is always an
 * error; a missing one is InvalidOid when missing_ok.  The name is looked
 * up again after the lock, so a table dropped or renamed by a transaction
 * that committed while we waited is missing, as for PostgreSQL's own
 * commands.  The caller locks the catalog row next (mt_catalog_lock), and
 * must expect it to be gone: DROP EXTENSION may have come in between.
 */
Oid
mt_lookup_table(MtStatement *st, MtQualifiedName *name, LOCKMODE lockmode, bool missing_ok)
{
	LookupArg	arg = {st, name};
	Oid			relid;

	(void) mt_resolve_namespace(st, name);
	relid = RangeVarGetRelidExtended(makeRangeVar(name->schema, name->name, -1), lockmode,
									 RVR_MISSING_OK, lookup_callback, &arg);
	if (!OidIsValid(relid) && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("materialized table \"%s\" does not exist",
						name->schema ? psprintf("%s.%s", name->schema, name->name) : name->name),
				 mt_errposition(st->source, name->location)));
	return relid;
}

/*
 * mt_lock_catalog_row
 *		After mt_lookup_table: lock and read the table's catalog row.  The
 *		table is locked, so only the catalog can have changed meanwhile
 *		(DROP EXTENSION): the table is then not a materialized table.
 */
MtTable *
mt_lock_catalog_row(MtStatement *st, MtQualifiedName *name, Oid relid)
{
	MtTable    *mt = mt_catalog_lock(relid);

	if (mt == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a materialized table", name->name),
				 mt_errposition(st->source, name->location)));
	return mt;
}

/*
 * mt_analyze_query
 *		Parse analysis of the query after AS, with the checks Flink makes.
 */
Query *
mt_analyze_query(MtStatement *st, MtQuery *q)
{
	RawStmt    *rs = makeNode(RawStmt);
	Query	   *query;

	rs->stmt = (Node *) copyObject(q->stmt);
	rs->stmt_location = q->location;
	rs->stmt_len = q->length;
	query = parse_analyze_fixedparams(rs, q->parse_source, NULL, 0, NULL);

	if (query->commandType != CMD_SELECT || query->utilityStmt != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("the query of a materialized table must be a SELECT statement"),
				 mt_errposition(st->source, q->location)));
	if (query->hasModifyingCTE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the query of a materialized table must not contain data-modifying statements in WITH"),
				 mt_errposition(st->source, q->location)));
	if (query->rowMarks != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the query of a materialized table cannot lock rows"),
				 errdetail("FOR UPDATE and FOR SHARE are not allowed here."),
				 mt_errposition(st->source, q->location)));
	if (isQueryUsingTempRelation(query))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the query of a materialized table cannot reference temporary tables or views"),
				 errdetail("A materialized table outlives the session that owns its temporary objects."),
				 mt_errposition(st->source, q->location)));
	return query;
}

/* The columns of a query's result, in order. */
List *
mt_query_columns(Query *query)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, query->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		MtQueryColumn *qc;

		if (tle->resjunk)
			continue;
		qc = palloc0(sizeof(MtQueryColumn));
		qc->name = pstrdup(tle->resname ? tle->resname : "?column?");
		qc->typid = exprType((Node *) tle->expr);
		qc->typmod = exprTypmod((Node *) tle->expr);
		qc->collid = exprCollation((Node *) tle->expr);
		result = lappend(result, qc);
	}
	return result;
}

/*
 * Refuse a query view that depends on a temporary object (a function in
 * pg_temp, say): at the end of the session its drop would take the view,
 * and with it the table.
 */
static void
check_no_temporary_objects(MtStatement *st, MtQuery *q, Oid viewid)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(viewid)};
	const char *sql =
	"SELECT pg_catalog.replace(pg_catalog.pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid), "
	"                          pg_catalog.pg_my_temp_schema()::pg_catalog.regnamespace::pg_catalog.text || '.', "
	"                          'pg_temp.') "
	"  FROM pg_catalog.pg_depend d "
	"  JOIN pg_catalog.pg_rewrite r ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass "
	"       AND d.objid = r.oid "
	" WHERE r.ev_class = $1 "
	"   AND pg_catalog.pg_my_temp_schema() <> 0 "
	"   AND CASE d.refclassid "
	"       WHEN 'pg_catalog.pg_class'::pg_catalog.regclass THEN "
	"         (SELECT relnamespace FROM pg_catalog.pg_class WHERE oid = d.refobjid) "
	"       WHEN 'pg_catalog.pg_proc'::pg_catalog.regclass THEN "
	"         (SELECT pronamespace FROM pg_catalog.pg_proc WHERE oid = d.refobjid) "
	"       WHEN 'pg_catalog.pg_type'::pg_catalog.regclass THEN "
	"         (SELECT typnamespace FROM pg_catalog.pg_type WHERE oid = d.refobjid) "
	"       WHEN 'pg_catalog.pg_operator'::pg_catalog.regclass THEN "
	"         (SELECT oprnamespace FROM pg_catalog.pg_operator WHERE oid = d.refobjid) "
	"       END = pg_catalog.pg_my_temp_schema() "
	" LIMIT 1";
	char	   *found = NULL;
	int			nestlevel = mt_pin_search_path();

	SPI_connect();
	if (SPI_execute_with_args(sql, 1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not check the dependencies of a query view");
	if (SPI_processed > 0)
		found = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (found)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the query of a materialized table cannot reference temporary objects"),
				 errdetail("The query uses %s.", found),
				 mt_errposition(st->source, q->location)));
	SPI_finish();
	mt_unpin_search_path(nestlevel);
}

/*
 * mt_define_query_view
 *		Create (or replace) the hidden view holding an MT's query.
 *
 * The view lives in the internal schema and belongs to the extension's
 * owner (see mt_hidden_grant_to_owner); it is a security_invoker view, so that
 * refreshes, which read it as the table's owner, check the owner's
 * privileges on what the query reads.  It is an internal part of the
 * table: dropping the table drops it, and dropping a source that it reads
 * needs CASCADE (which then drops the table).
 */
Oid
mt_define_query_view(MtStatement *st, MtQuery *q, Oid relid, int64 id, Oid owner, bool replace)
{
	ViewStmt   *vs = makeNode(ViewStmt);
	ObjectAddress address;
	Oid			save_userid;
	int			save_sec;

	vs->view = makeRangeVar(MT_INTERNAL_SCHEMA, mt_hidden_name("query_", id), -1);
	vs->query = (Node *) copyObject(q->stmt);
	vs->replace = replace;
	/* what the query reads is checked as the one who reads the view */
	vs->options = list_make1(makeDefElem("security_invoker", (Node *) makeString("true"), -1));
	vs->withCheckOption = NO_CHECK_OPTION;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(mt_extension_owner(), save_sec | SECURITY_LOCAL_USERID_CHANGE);
	address = DefineView(vs, q->parse_source, q->location, q->length);
	CommandCounterIncrement();
	if (!replace)
	{
		ObjectAddress table;

		ObjectAddressSet(table, RelationRelationId, relid);
		recordDependencyOn(&address, &table, DEPENDENCY_INTERNAL);
		mt_hidden_grant_to_owner(address.objectId, owner, false);
	}
	SetUserIdAndSecContext(save_userid, save_sec);
	CommandCounterIncrement();

	check_no_temporary_objects(st, q, address.objectId);
	return address.objectId;
}

/*
 * Error positions of an expression checked through generated SQL: an error
 * inside the expression points at the same spot of the statement, any
 * other error of that SQL at the expression's start.  The generated SQL is
 * not shown: the user did not write it.
 */
typedef struct MtExpressionErrorArg
{
	const char *source;			/* the statement text of execute() */
	int			location;		/* byte offset of the expression there */
	const char *sql;			/* the generated SQL */
	int			sql_offset;		/* byte offset of the expression there */
	int			expr_len;		/* its length in bytes */
} MtExpressionErrorArg;

static void
expression_error_callback(void *arg)
{
	MtExpressionErrorArg *e = (MtExpressionErrorArg *) arg;
	int			pos = getinternalerrposition();
	int			start = pg_mbstrlen_with_len(e->sql, e->sql_offset);
	int			len = pg_mbstrlen_with_len(e->sql + e->sql_offset, e->expr_len);
	int			offset = 0;

	if (e->source == NULL)
		return;
	if (pos > 0 && pos - 1 >= start && pos - 1 <= start + len)
		offset = pos - 1 - start;
	/* a position in the statement (execute() makes it an internal one) */
	internalerrposition(0);
	internalerrquery(NULL);
	errposition(pg_mbstrlen_with_len(e->source, e->location) + offset + 1);
}

/*
 * mt_expression_type
 *		Check a computed column's or watermark's expression over the
 *		columns that from_sql (a FROM item) provides, and give its type.
 *
 * The expression must be a scalar expression over the row, without
 * aggregates, window functions, set-returning functions or subqueries;
 * a computed column's (a generated column here) must also be immutable.  Errors point into
 * the statement at location, where the expression was written.
 */
static void
expression_check(MtStatement *st, int location, const char *expr_text,
				 const char *from_sql, const char *what, bool immutable,
				 Oid *typid, int32 *typmod, Oid *collid,
				 Oid deparse_relid, char **deparsed)
{
	MtExpressionErrorArg arg;
	ErrorContextCallback callback;
	StringInfoData sql;
	SPIPlanPtr	plan;
	CachedPlanSource *source;
	Query	   *query;
	TargetEntry *tle;
	const char *problem = NULL;
	MemoryContext caller = CurrentMemoryContext;

	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT (\n");
	arg.sql_offset = sql.len;
	appendStringInfo(&sql, "%s\n) FROM %s LIMIT 0", expr_text, from_sql);
	arg.source = st ? st->source : NULL;
	arg.location = location;
	arg.sql = sql.data;
	arg.expr_len = strlen(expr_text);

	callback.callback = expression_error_callback;
	callback.arg = &arg;
	callback.previous = error_context_stack;
	error_context_stack = &callback;

	SPI_connect();
	plan = SPI_prepare(sql.data, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	source = linitial(SPI_plan_get_plan_sources(plan));
	query = linitial_node(Query, source->query_list);
	tle = linitial_node(TargetEntry, query->targetList);
	if (query->hasAggs)
		problem = "aggregate functions";
	else if (query->hasWindowFuncs)
		problem = "window functions";
	else if (query->hasTargetSRFs)
		problem = "set-returning functions";
	else if (query->hasSubLinks)
		problem = "subqueries";
	if (problem)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s are not allowed in %s", problem, what)));
	if (immutable && contain_mutable_functions_after_planning(tle->expr))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("computed column expression is not immutable"),
				 errdetail("PostgreSQL stores computed columns, so their expressions may only use immutable functions.")));
	if (typid)
		*typid = exprType((Node *) tle->expr);
	if (typmod)
		*typmod = exprTypmod((Node *) tle->expr);
	if (collid)
		*collid = exprCollation((Node *) tle->expr);
	if (deparsed)
	{
		/* the table is the query's only range table entry, as in pg_get_expr */
		char	   *text = deparse_expression((Node *) tle->expr,
											  deparse_context_for(get_rel_name(deparse_relid),
																  deparse_relid),
											  false, false);

		*deparsed = MemoryContextStrdup(caller, text);
	}
	SPI_finish();

	error_context_stack = callback.previous;
}

void
mt_expression_type(MtStatement *st, int location, const char *expr_text,
				   const char *from_sql, const char *what, bool immutable,
				   Oid *typid, int32 *typmod, Oid *collid)
{
	expression_check(st, location, expr_text, from_sql, what, immutable,
					 typid, typmod, collid, InvalidOid, NULL);
}

/*
 * mt_expression_deparse
 *		A computed column's expression over the table's columns as
 *		pg_get_expr() would show it, to compare with an existing one.
 */
char *
mt_expression_deparse(MtStatement *st, int location, const char *expr_text, Oid relid)
{
	char	   *deparsed;

	expression_check(st, location, expr_text, mt_qualified_name(relid),
					 "computed column expressions", true, NULL, NULL, NULL,
					 relid, &deparsed);
	return deparsed;
}

/*
 * mt_type_id_and_mod
 *		typenameTypeIdAndMod() for a type of a column list: errors point at
 *		the type in the statement (the parser set its location there).
 */
void
mt_type_id_and_mod(MtStatement *st, TypeName *type_name, Oid *typid, int32 *typmod)
{
	ParseState *pstate = make_parsestate(NULL);

	pstate->p_sourcetext = st ? st->source : NULL;
	typenameTypeIdAndMod(pstate, type_name, typid, typmod);
	free_parsestate(pstate);
}

/*
 * mt_check_key_covers
 *		PostgreSQL enforces a key per partition, so a partitioned table's
 *		key must contain the columns it is partitioned by: the PARTITIONED
 *		BY columns, or else the distribution's.
 */
void
mt_check_key_covers(MtStatement *st, MtPrimaryKey *pk, List *columns, const char *clause)
{
	ListCell   *lc;

	foreach(lc, columns)
	{
		char	   *name = strVal(lfirst(lc));
		ListCell   *lc2;
		bool		found = false;

		foreach(lc2, pk->columns)
			if (strcmp(strVal(lfirst(lc2)), name) == 0)
				found = true;
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("primary key of a materialized table with %s must include column \"%s\"",
							clause, name),
					 errdetail("PostgreSQL checks the key within each partition, so the key must contain the columns the table is partitioned by."),
					 errhint("Add \"%s\" to the primary key.", name),
					 mt_errposition(st->source, pk->location)));
	}
}

static bool
collect_relations(Node *node, List **rtes)
{
	if (node == NULL)
		return false;
	if (IsA(node, RangeTblEntry))
	{
		RangeTblEntry *rte = (RangeTblEntry *) node;

		if (rte->rtekind == RTE_RELATION)
			*rtes = lappend(*rtes, rte);
		return false;
	}
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, collect_relations, rtes,
								 QTW_EXAMINE_RTES_BEFORE);
	return expression_tree_walker(node, collect_relations, rtes);
}

/*
 * mt_check_query_privileges
 *		The owner of a materialized table must be able to read what its
 *		query reads, as CREATE TABLE AS checks; say so now rather than at
 *		the first refresh.
 */
void
mt_check_query_privileges(MtStatement *st, MtQuery *q, Query *query, Oid owner)
{
	List	   *rtes = NIL;
	MtErrorAt	at;
	Oid			save_userid;
	int			save_sec;

	(void) query_tree_walker(query, collect_relations, &rtes, QTW_EXAMINE_RTES_BEFORE);
	if (rtes == NIL)
		return;
	mt_error_at_push(&at, st->source, q->location, false);
	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	(void) ExecCheckRTPerms(rtes, true);
	SetUserIdAndSecContext(save_userid, save_sec);
	mt_error_at_pop(&at);
}
