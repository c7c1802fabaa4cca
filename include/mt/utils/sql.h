/*-------------------------------------------------------------------------
 *
 * mt/utils/sql.h
 *	  Pieces of generated SQL (src/utils/sql.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_UTILS_SQL_H
#define MT_UTILS_SQL_H

#include "nodes/parsenodes.h"

/* schema-qualified, quoted name of a relation */
extern char *mt_qualified_name(Oid relid);
/* a type with its modifier, schema-qualified */
extern char *mt_type_sql(Oid typid, int32 typmod);
/* OPERATOR(schema.=) of a type's default equality */
extern char *mt_equality_sql(Oid typid);
extern bool mt_equality_is_builtin(Oid typid);
/* OPERATOR(schema.name) of any operator */
extern char *mt_operator_sql(Oid opno);
/* names (String) as a quoted, comma-separated list */
extern char *mt_name_list_text(List *names);
/* a query's text, deparsed with search_path = pg_catalog */
extern char *mt_query_text(Query *q);
/* is q computed whole before what reads it joins it (not pulled up)? */
extern bool mt_query_computed_whole(Query *q);
/* an expression without columns, deparsed the same way */
extern char *mt_expression_text(Node *expr);
/* " COLLATE schema.name", or "" */
extern char *mt_collate_sql(Oid collid);

#endif							/* MT_UTILS_SQL_H */
