/*-------------------------------------------------------------------------
 *
 * mt/catalog/lineage.h
 *	  The lineage of materialized tables: which relations each one reads.
 *
 * An edge goes from a relation (a source table, or another materialized
 * table) to a materialized table whose query reads it, directly or through
 * plain views; a partition of a materialized table stands for the table.
 * PostgreSQL's dependency records of the hidden query views are the truth
 * (materialized_table_internal.relations_read, extension/95_lineage.sql),
 * so the lineage follows renames, ALTER ... AS and drops by itself.
 *
 * Rules on the lineage (Realtime Compute's):
 *	  - a materialized table's freshness is a positive integer multiple of
 *		the freshness of every materialized table it reads;
 *	  - a cascading refresh (commands/cascade.c) reaches at most MT_CASCADE_MAX_DEPTH
 *		levels below the table it starts from.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_LINEAGE_H
#define MT_LINEAGE_H

#include "nodes/pg_list.h"

#include "mt/catalog/definition.h"

#define MT_CASCADE_MAX_DEPTH	6

/* An edge between two materialized tables. */
typedef struct MtLineageEdge
{
	Oid			upstream;
	Oid			downstream;
} MtLineageEdge;

extern List *mt_lineage_upstream_tables(Oid query_view, Oid self);
extern List *mt_lineage_downstream_tables(Oid relid);
extern List *mt_lineage_table_edges(void);
extern void mt_lineage_check_freshness(Oid relid, Oid query_view, int value,
									   MtFreshnessUnit unit, const char *source,
									   int location);
extern void mt_lineage_notice_suspended_upstream(Oid relid);

#endif							/* MT_LINEAGE_H */
