/*-------------------------------------------------------------------------
 *
 * src/utils/sql.c
 *	  Pieces of generated SQL: qualified names, types and equality
 *	  operators spelled so that no search_path can change their meaning,
 *	  and a query's text deparsed under the pinned search_path.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_operator.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "mt/utils/sql.h"

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

	if (!OidIsValid(tc->eq_opr))
		return "OPERATOR(pg_catalog.=)";
	return mt_operator_sql(tc->eq_opr);
}

/*
 * mt_operator_sql
 *		An operator as generated SQL names it: OPERATOR(schema.name).
 */
char *
mt_operator_sql(Oid opno)
{
	HeapTuple	tup;
	Form_pg_operator op;
	char	   *result;

	tup = SearchSysCache1(OPEROID, ObjectIdGetDatum(opno));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator %u", opno);
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

/*
 * mt_expression_text
 *		An expression that reads no column (a LIMIT, say) as generated SQL
 *		writes it, every name not in pg_catalog qualified.
 */
char *
mt_expression_text(Node *expr)
{
	int			nestlevel = NewGUCNestLevel();
	char	   *text;

	(void) set_config_option("search_path", "pg_catalog", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	text = deparse_expression(expr, NIL, false, false);
	AtEOXact_GUC(false, nestlevel);
	return text;
}

/*
 * mt_collate_sql
 *		" COLLATE schema.name" of a collation, for a column or an
 *		expression; "" for none.
 */
char *
mt_collate_sql(Oid collid)
{
	HeapTuple	tup;
	Form_pg_collation coll;
	char	   *sql;

	if (!OidIsValid(collid))
		return "";
	tup = SearchSysCache1(COLLOID, ObjectIdGetDatum(collid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for collation %u", collid);
	coll = (Form_pg_collation) GETSTRUCT(tup);
	sql = psprintf(" COLLATE %s",
				   quote_qualified_identifier(get_namespace_name(coll->collnamespace),
											  NameStr(coll->collname)));
	ReleaseSysCache(tup);
	return sql;
}

/*
 * mt_query_computed_whole
 *		Does the planner compute q whole before a query that reads it joins
 *		it (aggregates, GROUP BY, DISTINCT, windows, set operations, LIMIT,
 *		set-returning functions in its result: it is not pulled up)?  Then
 *		a join condition on its columns does not reach its input.
 */
bool
mt_query_computed_whole(Query *q)
{
	return q->hasAggs || q->groupClause != NIL || q->groupingSets != NIL ||
		q->distinctClause != NIL || q->hasWindowFuncs || q->setOperations != NULL ||
		q->limitCount != NULL || q->limitOffset != NULL || q->hasTargetSRFs ||
		q->havingQual != NULL;
}
