/*-------------------------------------------------------------------------
 *
 * mt/parser/ddl_parser.h
 *	  Parse trees for Flink's MATERIALIZED TABLE statements.
 *
 * The parser (src/parser/ddl_parser.c and the files it uses, see
 * mt/parser/parser_int.h) turns the text handed to
 * materialized_table.execute() into a list of MtStatement.  It tokenizes
 * with PostgreSQL's core scanner and hands every embedded SQL fragment (the
 * query after AS, computed-column and watermark expressions) to PostgreSQL's
 * own raw parser, so each node below carries raw parse trees, never text we
 * would have to parse again.
 *
 * Every "location" is a byte offset into the statement source (the whole
 * argument of execute()); mt_errposition() turns it into a cursor position.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_DDL_PARSER_H
#define MT_DDL_PARSER_H

#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"

#include "mt/catalog/definition.h"

typedef struct MtQualifiedName
{
	char	   *catalog;		/* database name, or NULL */
	char	   *schema;			/* schema name, or NULL */
	char	   *name;
	int			location;
} MtQualifiedName;

typedef enum MtColumnKind
{
	MT_COLUMN_PHYSICAL,			/* produced by the query */
	MT_COLUMN_COMPUTED,			/* name AS expr */
	MT_COLUMN_METADATA			/* name type METADATA [FROM key] [VIRTUAL] */
} MtColumnKind;

typedef enum MtColumnPlace
{
	MT_PLACE_DEFAULT,
	MT_PLACE_FIRST,
	MT_PLACE_AFTER
} MtColumnPlace;

typedef struct MtColumn
{
	char	   *name;
	MtColumnKind kind;
	TypeName   *type_name;		/* declared type (PostgreSQL spelling), or NULL */
	char	   *type_text;		/* the declared type as PostgreSQL text */
	Node	   *expr;			/* computed column: raw expression */
	char	   *expr_text;		/* computed column: expression as written */
	int			expr_location;	/* computed column: where it was written */
	char	   *metadata_key;	/* metadata column: FROM key, or NULL */
	bool		is_virtual;		/* metadata column: VIRTUAL */
	bool		not_null;		/* type carried NOT NULL */
	bool		primary_key;	/* column constraint PRIMARY KEY NOT ENFORCED */
	char	   *constraint_name;	/* CONSTRAINT name of that primary key */
	char	   *comment;
	MtColumnPlace place;		/* ALTER ... ADD/MODIFY: FIRST | AFTER col */
	char	   *place_after;
	int			location;
} MtColumn;

typedef struct MtPrimaryKey
{
	char	   *constraint_name;
	List	   *columns;		/* list of String */
	int			location;
} MtPrimaryKey;

typedef struct MtWatermark
{
	char	   *column;
	Node	   *expr;			/* raw expression */
	char	   *expr_text;
	int			expr_location;
	int			location;
} MtWatermark;

/* The query after AS. */
typedef struct MtQuery
{
	SelectStmt *stmt;			/* raw parse tree */
	char	   *text;			/* the query as written */
	char	   *parse_source;	/* source with everything else blanked */
	int			location;
	int			length;
} MtQuery;

/*
 * START_MODE = FROM_BEGINNING (Flink 2.x).  The other modes name offsets of
 * a stream and are refused by the parser; the clause is only remembered
 * where it was written.
 */
typedef struct MtStartMode
{
	char	   *mode;			/* upper-case mode word */
	int			location;
} MtStartMode;

typedef struct MtCreateStmt
{
	MtQualifiedName *name;
	bool		or_alter;
	bool		has_column_list;
	List	   *columns;		/* MtColumn */
	MtPrimaryKey *primary_key;	/* table constraint, or NULL */
	MtWatermark *watermark;
	char	   *comment;
	MtDistribution *distribution;
	List	   *partition_keys; /* String */
	int			partition_location;
	List	   *options;		/* MtOption */
	MtFreshness *freshness;		/* NULL when omitted */
	MtRefreshMode refresh_mode;
	int			refresh_mode_location;
	MtStartMode *start_mode;	/* NULL when omitted */
	MtQuery    *query;
} MtCreateStmt;

typedef enum MtAlterAction
{
	MT_ALTER_SUSPEND,
	MT_ALTER_RESUME,
	MT_ALTER_REFRESH,
	MT_ALTER_AS,
	MT_ALTER_SET_FRESHNESS,
	MT_ALTER_ADD,
	MT_ALTER_MODIFY,
	MT_ALTER_DROP,
	MT_ALTER_RENAME,
	MT_ALTER_SET_OPTIONS		/* new WITH options: only from ALTER
								 * MATERIALIZED VIEW ... SET / RESET (...) */
} MtAlterAction;

typedef enum MtDropTarget
{
	MT_DROP_COLUMNS,
	MT_DROP_PRIMARY_KEY,
	MT_DROP_CONSTRAINT,
	MT_DROP_WATERMARK,
	MT_DROP_DISTRIBUTION
} MtDropTarget;

typedef struct MtAlterStmt
{
	MtQualifiedName *name;
	MtAlterAction action;
	List	   *options;		/* RESUME WITH (...), SET_OPTIONS: MtOption */
	List	   *partition_spec; /* REFRESH PARTITION (...): MtOption */
	MtQuery    *query;			/* AS */
	MtFreshness *freshness;		/* SET FRESHNESS */
	/* ADD / MODIFY */
	List	   *columns;		/* MtColumn */
	MtPrimaryKey *primary_key;
	MtWatermark *watermark;
	MtDistribution *distribution;
	/* DROP */
	MtDropTarget drop_target;
	List	   *drop_columns;	/* String */
	char	   *drop_constraint;
	/* RENAME TO */
	MtQualifiedName *new_name;
	MtStartMode *start_mode;	/* [START_MODE = ...] AS */
	int			action_location;
} MtAlterStmt;

typedef struct MtDropStmt
{
	MtQualifiedName *name;
	bool		if_exists;
	DropBehavior behavior;		/* CASCADE only from DROP MATERIALIZED VIEW */
} MtDropStmt;

/* SHOW MATERIALIZED TABLES, SHOW CREATE MATERIALIZED TABLE */
typedef struct MtShowStmt
{
	MtQualifiedName *schema;	/* FROM | IN [catalog.]db: name is the
								 * schema, schema the catalog; NULL for the
								 * current schema */
	char	   *like;			/* [NOT] LIKE 'pattern', or NULL */
	bool		not_like;
	MtQualifiedName *name;		/* SHOW CREATE: the table */
} MtShowStmt;

/* DESCRIBE | DESC [EXTENDED] name */
typedef struct MtDescribeStmt
{
	MtQualifiedName *name;
	bool		extended;
} MtDescribeStmt;

typedef enum MtStatementKind
{
	MT_STMT_CREATE,
	MT_STMT_ALTER,
	MT_STMT_DROP,
	MT_STMT_SHOW_TABLES,
	MT_STMT_SHOW_CREATE,
	MT_STMT_DESCRIBE
} MtStatementKind;

typedef struct MtStatement
{
	MtStatementKind kind;
	const char *source;			/* the whole text given to execute() */
	int			location;		/* of this statement within source */
	int			length;
	MtCreateStmt *create;
	MtAlterStmt *alter;
	MtDropStmt *drop;
	MtShowStmt *show;			/* SHOW MATERIALIZED TABLES, SHOW CREATE */
	MtDescribeStmt *describe;
} MtStatement;

/* Does the statement return rows (execute_query) rather than a tag? */
#define MT_STATEMENT_RETURNS_ROWS(st) \
	((st)->kind == MT_STMT_SHOW_TABLES || (st)->kind == MT_STMT_DESCRIBE)

/* Clauses of CREATE written as option values of native statements */
typedef enum MtFragmentKind
{
	MT_FRAGMENT_ELEMENTS,		/* a column list: columns, key, watermark */
	MT_FRAGMENT_NAMES,			/* column names, with or without ( ) */
	MT_FRAGMENT_DISTRIBUTION,	/* [BY] [HASH | RANGE] (cols) [INTO n
								 * BUCKETS] | INTO n BUCKETS */
	MT_FRAGMENT_START_MODE		/* a START_MODE */
} MtFragmentKind;

typedef struct MtFragment
{
	List	   *columns;		/* MtColumn */
	MtPrimaryKey *primary_key;
	MtWatermark *watermark;
	List	   *names;			/* String */
	MtDistribution *distribution;
	MtStartMode *start_mode;
} MtFragment;

extern List *mt_parse(const char *source);
extern MtFragment *mt_parse_fragment(MtFragmentKind kind, const char *text, int start, int end);
extern MtQuery *mt_parse_query_text(const char *source, int start, int end);

#endif							/* MT_DDL_PARSER_H */
