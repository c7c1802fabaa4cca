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

#include "access/genam.h"
#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/tablecmds.h"
#include "commands/view.h"
#include "nodes/parsenodes.h"
#include "utils/acl.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "mb/pg_wchar.h"
#include "parser/analyze.h"
#include "parser/parse_relation.h"
#include "parser/parse_type.h"
#include "utils/plancache.h"
#include "utils/ruleutils.h"
#include "utils/memutils.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/typcache.h"
#include "catalog/pg_operator.h"

#include "mt/commands/commands.h"
#include "mt/catalog/marker.h"
#include "mt/materialized_table.h"
#include "mt/utils/spi_plans.h"

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

/* Only the owner (or a superuser) may alter, refresh or drop an MT. */
void
mt_check_owner(Oid relid)
{
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(relid));
}

Oid
mt_table_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * mt_type_sql
 *		A type (with its modifier) as generated SQL names it: schema-
 *		qualified, so that it means the same under any search_path.
 */
char *
mt_type_sql(Oid typid, int32 typmod)
{
	return format_type_extended(typid, typmod,
								FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY);
}

/*
 * mt_equality_sql
 *		The equality operator of a type's default btree or hash operator
 *		class -- the one GROUP BY and DISTINCT use -- as generated SQL
 *		names it: OPERATOR(schema.name), found under any search_path.
 */
char *
mt_equality_sql(Oid typid)
{
	TypeCacheEntry *tc = lookup_type_cache(typid, TYPECACHE_EQ_OPR);
	HeapTuple	tup;
	Form_pg_operator op;
	char	   *result;

	if (!OidIsValid(tc->eq_opr))
		return "OPERATOR(pg_catalog.=)";
	tup = SearchSysCache1(OPEROID, ObjectIdGetDatum(tc->eq_opr));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator %u", tc->eq_opr);
	op = (Form_pg_operator) GETSTRUCT(tup);
	result = psprintf("OPERATOR(%s.%s)", quote_identifier(get_namespace_name(op->oprnamespace)),
					  NameStr(op->oprname));
	ReleaseSysCache(tup);
	return result;
}

/* Is that operator PostgreSQL's own? */
bool
mt_equality_is_builtin(Oid typid)
{
	return strncmp(mt_equality_sql(typid), "OPERATOR(pg_catalog.", 20) == 0;
}

/* Names (a List of String) as "a, b, c", for messages. */
char *
mt_name_list_text(List *names)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, names)
		appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", strVal(lfirst(lc)));
	return buf.data;
}

char *
mt_qualified_name(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
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
 * The roles other than the extension's owner that hold privileges on rel.
 */
static List *
other_grantees(Oid rel)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(rel));
	Oid			extowner = mt_extension_owner();
	List	   *result = NIL;
	Datum		datum;
	bool		isnull;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", rel);
	datum = SysCacheGetAttr(RELOID, tup, Anum_pg_class_relacl, &isnull);
	if (!isnull)
	{
		Acl		   *acl = DatumGetAclP(datum);
		AclItem    *items = ACL_DAT(acl);

		for (int i = 0; i < ACL_NUM(acl); i++)
			if (items[i].ai_grantee != extowner)
				result = list_append_unique_oid(result, items[i].ai_grantee);
	}
	ReleaseSysCache(tup);
	return result;
}

static RoleSpec *
role_spec(Oid role)
{
	RoleSpec   *spec = makeNode(RoleSpec);

	spec->location = -1;
	if (role == ACL_ID_PUBLIC)
		spec->roletype = ROLESPEC_PUBLIC;
	else
	{
		spec->roletype = ROLESPEC_CSTRING;
		spec->rolename = GetUserNameFromId(role, false);
	}
	return spec;
}

static void
grant_privileges(Oid rel, bool is_grant, List *privileges, List *grantees)
{
	GrantStmt  *grant = makeNode(GrantStmt);

	grant->is_grant = is_grant;
	grant->targtype = ACL_TARGET_OBJECT;
	grant->objtype = OBJECT_TABLE;
	grant->objects = list_make1(makeRangeVar(get_namespace_name(get_rel_namespace(rel)),
											 get_rel_name(rel), -1));
	grant->privileges = privileges;
	grant->grantees = grantees;
	grant->behavior = DROP_RESTRICT;
	ExecuteGrantStmt(grant);
}

/*
 * grant_to_owner
 *		A hidden object of a materialized table belongs to the extension's
 *		owner, so that no user may alter it, move it, or add columns,
 *		triggers or rules to it.  The table's owner, as whom its refreshes
 *		run, may read it (SELECT), and with write also adjust it (a state
 *		table); nobody else has any privilege on it.  Run as the extension's
 *		owner.
 */
static void
grant_to_owner(Oid rel, Oid owner, bool write)
{
	List	   *others = other_grantees(rel);
	List	   *privileges = NIL;
	const char *const names[] = {"select", "insert", "update", "delete"};
	ListCell   *lc;
	List	   *specs = NIL;

	foreach(lc, others)
		specs = lappend(specs, role_spec(lfirst_oid(lc)));
	if (specs != NIL)
		grant_privileges(rel, false, NIL, specs);
	if (owner == mt_extension_owner())
		return;
	for (int i = 0; i < (write ? lengthof(names) : 1); i++)
	{
		AccessPriv *priv = makeNode(AccessPriv);

		priv->priv_name = pstrdup(names[i]);
		privileges = lappend(privileges, priv);
	}
	grant_privileges(rel, true, privileges, list_make1(role_spec(owner)));
	CommandCounterIncrement();
}

/*
 * mt_define_query_view
 *		Create (or replace) the hidden view holding an MT's query.
 *
 * The view lives in the internal schema and belongs to the extension's
 * owner (see grant_to_owner); it is a security_invoker view, so that
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
		grant_to_owner(address.objectId, owner, false);
	}
	SetUserIdAndSecContext(save_userid, save_sec);
	CommandCounterIncrement();

	check_no_temporary_objects(st, q, address.objectId);
	return address.objectId;
}

/*
 * mt_run_as_owner_begin
 *		Run what follows with the privileges of owner, as REFRESH
 *		MATERIALIZED VIEW does: a security-restricted operation with a safe
 *		search_path.  Errors undo all of it with the (sub)transaction.
 */
void
mt_run_as_owner_begin(Oid owner, Oid *save_userid, int *save_sec, int *save_nestlevel)
{
	GetUserIdAndSecContext(save_userid, save_sec);
	SetUserIdAndSecContext(owner, *save_sec | SECURITY_RESTRICTED_OPERATION);
	*save_nestlevel = mt_pin_search_path();
}

void
mt_run_as_owner_end(Oid save_userid, int save_sec, int save_nestlevel)
{
	mt_unpin_search_path(save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec);
}

/*
 * mt_leaf_relations
 *		The tables that hold relid's rows: itself, the leaves of its
 *		partition tree, or it and its inheritance children, in OID order.
 */
List *
mt_leaf_relations(Oid relid)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, find_all_inheritors(relid, NoLock, NULL))
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_RELATION)
			result = lappend_oid(result, lfirst_oid(lc));
	list_sort(result, list_oid_cmp);
	return result;
}

/*
 * mt_ancestor_relations
 *		The tables relid's rows are also rows of: its parents in a partition
 *		tree or by inheritance, up to the roots.
 */
List *
mt_ancestor_relations(Oid relid)
{
	List	   *result = NIL;
	Relation	inherits = table_open(InheritsRelationId, AccessShareLock);

	for (int i = -1; i < list_length(result); i++)
	{
		Oid			child = (i < 0) ? relid : list_nth_oid(result, i);
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tup;

		ScanKeyInit(&key, Anum_pg_inherits_inhrelid, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(child));
		scan = systable_beginscan(inherits, InheritsRelidSeqnoIndexId, true, NULL, 1, &key);
		while (HeapTupleIsValid(tup = systable_getnext(scan)))
			result = list_append_unique_oid(result,
											((Form_pg_inherits) GETSTRUCT(tup))->inhparent);
		systable_endscan(scan);
	}
	table_close(inherits, AccessShareLock);
	return result;
}

/*
 * mt_query_text
 *		A query's text with every name not in pg_catalog qualified.
 */
char *
mt_query_text(Query *q)
{
	int			nestlevel = NewGUCNestLevel();
	char	   *text;

	(void) set_config_option("search_path", "pg_catalog", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	text = pg_get_querydef(q, false);
	AtEOXact_GUC(false, nestlevel);
	return text;
}

/* Run generated SQL that must succeed with the given SPI result code. */
void
mt_spi_exec(const char *sql, int expected)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != expected)
		elog(ERROR, "unexpected result %d from generated statement: %s", rc, sql);
}

/*
 * mt_spi_oids
 *		The OIDs in the first column of a query's rows, with arg as $1 (an
 *		OID, unless invalid: then the query takes no argument), in the
 *		caller's memory context.
 */
List *
mt_spi_oids(const char *sql, Oid arg)
{
	MemoryContext caller = CurrentMemoryContext;
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(arg)};
	List	   *result = NIL;
	uint64		i;
	int			nestlevel = mt_pin_search_path();

	SPI_connect();
	if (mt_spi_execute_saved(sql, OidIsValid(arg) ? 1 : 0, types, values, NULL, false, 0)
		!= SPI_OK_SELECT)
		elog(ERROR, "unexpected result from generated query: %s", sql);
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext spi = MemoryContextSwitchTo(caller);

		result = lappend_oid(result, DatumGetObjectId(d));
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	mt_unpin_search_path(nestlevel);
	return result;
}

/*
 * Table options that are PostgreSQL storage parameters: they are applied
 * to the table (or, for a partitioned table, to its partitions).
 */
static const char *const storage_options[] = {
	"fillfactor", "toast_tuple_target", "parallel_workers",
	"autovacuum_", "toast.", "vacuum_index_cleanup", "vacuum_truncate",
	"log_autovacuum_min_duration", "user_catalog_table", NULL
};

bool
mt_is_storage_option(const char *key)
{
	const char *const *o;

	for (o = storage_options; *o; o++)
	{
		size_t		len = strlen(*o);

		if ((*o)[len - 1] == '_' || (*o)[len - 1] == '.')
		{
			if (strncmp(key, *o, len) == 0)
				return true;
		}
		else if (strcmp(key, *o) == 0)
			return true;
	}
	return false;
}

/* " WITH (k = 'v', ...)" for the storage parameters among options, or "". */
char *
mt_storage_options_sql(List *options)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, options)
	{
		MtOption   *opt = lfirst(lc);
		char	   *dot;

		if (!mt_is_storage_option(opt->key))
			continue;
		appendStringInfoString(&buf, buf.len ? ", " : " WITH (");
		dot = strchr(opt->key, '.');
		if (dot)
			appendStringInfo(&buf, "%s.%s", quote_identifier(pnstrdup(opt->key, dot - opt->key)),
							 quote_identifier(dot + 1));
		else
			appendStringInfoString(&buf, quote_identifier(opt->key));
		appendStringInfo(&buf, " = %s", quote_literal_cstr(opt->value));
	}
	if (buf.len)
		appendStringInfoChar(&buf, ')');
	return buf.data;
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

/*
 * mt_sync_hidden_privileges
 *		After ALTER TABLE ... OWNER TO or REASSIGN OWNED: the privileges on
 *		the table's hidden objects (its query view, and the state and
 *		derived view of a DELTAS table) are its new owner's.
 */
void
mt_sync_hidden_privileges(Oid relid)
{
	MtTable    *mt = mt_catalog_lookup(relid, true);
	Oid			nsp = mt_internal_namespace();
	Oid			parts[3];
	Oid			owner;
	MtSavedUser saved;
	int			i;

	if (mt == NULL || !OidIsValid(mt->query_view))
		return;
	owner = mt_table_owner(relid);
	parts[0] = mt->query_view;
	parts[1] = get_relname_relid(mt_hidden_name("state_", mt->id), nsp);
	parts[2] = get_relname_relid(mt_hidden_name("derived_", mt->id), nsp);
	mt_as_extension_owner_begin(&saved);
	for (i = 0; i < lengthof(parts); i++)
		if (OidIsValid(parts[i]))
		{
			/* (hidden objects of version 1.0 belonged to the table's owner) */
			if (mt_table_owner(parts[i]) != mt_extension_owner())
				ATExecChangeOwner(parts[i], mt_extension_owner(), false, AccessExclusiveLock);
			grant_to_owner(parts[i], owner, i == 1);
		}
	mt_as_extension_owner_end(&saved);
	CommandCounterIncrement();
}

/*
 * mt_grant_hidden_object
 *		Give a new hidden object of table relid to the extension's owner,
 *		with the privileges its refreshes need (see grant_to_owner).
 */
void
mt_grant_hidden_object(Oid relid, Oid hidden, bool write)
{
	MtSavedUser saved;

	mt_as_extension_owner_begin(&saved);
	grant_to_owner(hidden, mt_table_owner(relid), write);
	mt_as_extension_owner_end(&saved);
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

typedef struct QueryLocation
{
	const char *source;
	int			location;
} QueryLocation;

static void
query_error_callback(void *arg)
{
	QueryLocation *where = (QueryLocation *) arg;

	(void) mt_errposition(where->source, where->location);
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
	QueryLocation where = {st->source, q->location};
	ErrorContextCallback callback;
	Oid			save_userid;
	int			save_sec;

	(void) query_tree_walker(query, collect_relations, &rtes, QTW_EXAMINE_RTES_BEFORE);
	if (rtes == NIL)
		return;
	callback.callback = query_error_callback;
	callback.arg = &where;
	callback.previous = error_context_stack;
	error_context_stack = &callback;
	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	(void) ExecCheckRTPerms(rtes, true);
	SetUserIdAndSecContext(save_userid, save_sec);
	error_context_stack = callback.previous;
}
