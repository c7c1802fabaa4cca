/*-------------------------------------------------------------------------
 *
 * mt/commands/commands.h
 *	  The MATERIALIZED TABLE statements, one file per statement family.
 *
 *	  commands/create.c	CREATE [OR ALTER] MATERIALIZED TABLE
 *	  commands/alter.c	ALTER MATERIALIZED TABLE ...
 *	  commands/drop.c	DROP MATERIALIZED TABLE, and the cleanup after any drop
 *	  commands/describe.c	SHOW MATERIALIZED TABLES, SHOW CREATE, DESCRIBE
 *	  hooks/native.c	the same statements spelt as PostgreSQL's MATERIALIZED VIEW
 *	  commands/command_common.c	what they share: names, ownership, the query view
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_COMMANDS_H
#define MT_COMMANDS_H

#include "access/tupdesc.h"
#include "nodes/parsenodes.h"
#include "utils/tuplestore.h"
#include "storage/lockdefs.h"

#include "mt/catalog/catalog.h"
#include "mt/parser/ddl_parser.h"

/* a column of a query's result */
typedef struct MtQueryColumn
{
	char	   *name;
	Oid			typid;
	int32		typmod;
	Oid			collid;
} MtQueryColumn;

/* statements; each returns its command tag */
extern const char *mt_create_command(MtStatement *st);
extern const char *mt_alter_command(MtStatement *st);
extern const char *mt_drop_command(MtStatement *st);

/*
 * commands/describe.c: SHOW MATERIALIZED TABLES, SHOW CREATE MATERIALIZED TABLE and
 * DESCRIBE, whose rows execute_query() returns (MT_QUERY_NATTS columns:
 * name, type, null, key, extras, watermark, comment)
 */
#define MT_QUERY_NATTS 7
extern void mt_query_command(MtStatement *st, Tuplestorestate *rows, TupleDesc desc);
extern char *mt_show_create_command(MtStatement *st);

/* commands/show_create.c */
extern char *mt_show_create_text(Oid relid);

/* ALTER ... AS, also reached by CREATE OR ALTER on an existing table */
extern void mt_alter_query(MtStatement *st, Oid relid, MtQuery *query, bool check_lineage);

/* SET FRESHNESS, also reached by CREATE OR ALTER with a new freshness */
extern void mt_set_freshness(MtStatement *st, Oid relid, MtFreshness *freshness,
							 bool check_lineage);

/* new WITH options through CREATE OR ALTER */
extern void mt_set_options(MtStatement *st, Oid relid, List *options);

/* a watermark's column and expression must fit the table */
extern void mt_check_watermark(MtStatement *st, MtWatermark *wm, Oid relid);

/* a new query may not read its own table, directly or not */
extern void mt_check_no_cycle(MtStatement *st, MtQuery *q, Oid relid, Oid viewid);

/* cleanup of every trace of a dropped MT (catalog, jobs, history, worker) */
extern void mt_forget_table(Oid relid);

/* commands/command_common.c */
extern Oid	mt_resolve_namespace(MtStatement *st, MtQualifiedName *name);
extern Oid	mt_lookup_table(MtStatement *st, MtQualifiedName *name, LOCKMODE lockmode,
							bool missing_ok);
extern MtTable *mt_lock_catalog_row(MtStatement *st, MtQualifiedName *name, Oid relid);
extern Query *mt_analyze_query(MtStatement *st, MtQuery *query);
extern List *mt_query_columns(Query *query);
extern Oid	mt_define_query_view(MtStatement *st, MtQuery *query, Oid relid, int64 id,
								 Oid owner, bool replace);
extern char *mt_expression_deparse(MtStatement *st, int location, const char *expr_text,
								   Oid relid);
extern void mt_check_query_privileges(MtStatement *st, MtQuery *q, Query *query, Oid owner);
extern void mt_check_key_covers(MtStatement *st, MtPrimaryKey *pk, List *columns,
								const char *clause);
extern void mt_type_id_and_mod(MtStatement *st, TypeName *type_name, Oid *typid, int32 *typmod);
extern void mt_expression_type(MtStatement *st, int location, const char *expr_text,
							   const char *from_sql, const char *what, bool immutable,
							   Oid *typid, int32 *typmod, Oid *collid);

#endif							/* MT_COMMANDS_H */
