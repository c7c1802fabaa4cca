/*-------------------------------------------------------------------------
 *
 * mt/refresh/partial_rows.h
 *	  The nodes' rows of a table kept from partial aggregates, in its
 *	  hidden table (src/refresh/partial_rows.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_REFRESH_PARTIAL_ROWS_H
#define MT_REFRESH_PARTIAL_ROWS_H

#include "nodes/pg_list.h"

/*
 * a node's answer: its marker, and its rows unless they are known, or
 * the keys of the groups that changed and their rows
 */
typedef struct NodeRows
{
	int			group;			/* its group id */
	char	   *marker;
	char	   *rows;			/* NULL: as combined last time */
	char	   *keys;			/* NULL: rows are all of the node's */
	List	   *groups;			/* keys read: char *[], each once */
} NodeRows;

/* what the nodes' rows changed in the hidden table */
typedef struct StagedChange
{
	bool		changed;
	bool		all;			/* any group may have: not only keys */
	List	   *keys;			/* char *[] of the group columns (portable
								 * text, NULL for NULL), each once */
} StagedChange;

extern char *mt_partials_hidden_name(Oid relid, const char *prefix);
extern List *mt_partials_staging_groups(int ngroups);
extern StagedChange mt_partials_stage_rows(Oid relid, List *nodes, int ngroups,
											 bool other_nodes);
extern List *mt_partials_table_filter(Oid relid, List *columns, List *keys);

#endif							/* MT_REFRESH_PARTIAL_ROWS_H */
