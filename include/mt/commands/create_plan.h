/*-------------------------------------------------------------------------
 *
 * mt/commands/create_plan.h
 *	  The plan of a materialized table's columns, keys and options
 *	  (src/commands/create_plan.c), shared by CREATE, CREATE OR ALTER, the
 *	  conversion of a table and ALTER.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_COMMANDS_CREATE_PLAN_H
#define MT_COMMANDS_CREATE_PLAN_H

#include "mt/commands/commands.h"

#define DEFAULT_BUCKETS 4
#define DATE_FORMATTER_PREFIX "partition.fields."
#define DATE_FORMATTER_SUFFIX ".date-formatter"

/* The only metadata a materialized table's rows carry. */
#define METADATA_REFRESH_TIME "refresh_time"

/* A column of the table to create. */
typedef struct PlannedColumn
{
	char	   *name;
	MtColumnKind kind;
	Oid			typid;
	int32		typmod;
	Oid			collid;
	bool		not_null;
	char	   *comment;
	char	   *expr_text;		/* computed */
	int			expr_location;
	char	   *metadata_key;	/* metadata */
} PlannedColumn;

extern PlannedColumn *mt_find_planned(List *planned, const char *name);
extern List *mt_plan_columns(MtStatement *st, MtCreateStmt *c, List *qcols);
extern MtPrimaryKey *mt_plan_primary_key(MtStatement *st, MtCreateStmt *c);
extern void mt_check_primary_key(MtStatement *st, MtPrimaryKey *pk, List *planned);
extern void mt_check_partition_keys(MtStatement *st, MtCreateStmt *c, List *planned, List *qcols);
extern void mt_check_options(MtStatement *st, List *options, List *partition_keys,
							 List *planned, MtRefreshMode mode);
extern void mt_check_distribution(MtStatement *st, MtDistribution *d, MtPrimaryKey *pk,
								  List *planned);
extern void mt_resolve_computed_types(MtStatement *st, List *planned);
/* the table as it is, as planned columns (CREATE OR ALTER, conversion) */
extern List *mt_planned_from_table(Oid relid);
/* quoted, comma-separated */
extern char *mt_identifier_list(List *names);
extern void mt_comment_columns(Oid relid, const char *comment, List *planned);
extern void mt_apply_column_comments(Oid relid, List *columns);

/* convert.c: CREATE OR ALTER on a table that is not a materialized table */
extern void mt_convert_table(MtStatement *st, Oid relid);

#endif							/* MT_COMMANDS_CREATE_PLAN_H */
