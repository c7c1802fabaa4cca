/*-------------------------------------------------------------------------
 *
 * mt/continuous/topk_rows.h
 *	  The KEYS strategy under ORDER BY ... LIMIT: all the query's rows kept.
 *
 * A LIMIT or OFFSET keeps some rows of a result whose other rows are not
 * in the table: when one of the first rows goes, the next must come from
 * somewhere.  A KEYS table whose query has one (MtAnalysis.topk_rows) keeps
 * every row of its query without them in two hidden objects of the
 * internal schema, named and owned as a DELTAS table's are
 * (mt/continuous/deltas.h):
 *
 *	  state_<id>	the query's rows without its LIMIT and OFFSET, with the
 *					ORDER BY expressions it does not show (__mt_sort_<n>);
 *					maintained by the keys a change names, as any KEYS
 *					table's rows are
 *	  derived_<id>	its first rows by the query's ORDER BY, LIMIT and
 *					OFFSET: the table is refreshed from it, and only the
 *					rows that differ are written
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_TOPK_ROWS_H
#define MT_CONTINUOUS_TOPK_ROWS_H

#include "nodes/parsenodes.h"

#include "mt/continuous/analysis.h"
#include "mt/refresh/refresh.h"

extern const char *mt_topk_rows_unfit(Query *q);
extern void mt_topk_rows_prepare(MtAnalysis *a, Query *q);
extern void mt_topk_rows_create_objects(Oid relid, MtAnalysis *a);
extern MtRefreshCounts mt_topk_rows_refresh(Oid relid, MtAnalysis *a, List *filter);

#endif							/* MT_CONTINUOUS_TOPK_ROWS_H */
