/*-------------------------------------------------------------------------
 *
 * mt/continuous/kept_rows.h
 *	  The KEYS strategy over rows kept in a hidden state.
 *
 * Some queries are kept by keys one level down: the rows a change names
 * are those of a query below the table's, and the table is computed from
 * all of them.
 *	- ORDER BY ... LIMIT / OFFSET: a LIMIT keeps some rows of a result whose
 *	  other rows are not in the table; when one of the first rows goes, the
 *	  next must come from somewhere.  The state is the query without its
 *	  LIMIT and OFFSET, with the ORDER BY expressions it does not show
 *	  (__mt_sort_<n>); the table, its first rows.
 *	- a WITH query the query reads more than once (TPC-H Q15), kept by
 *	  keys: the state is its rows; the table, the query reading the state
 *	  wherever it read the WITH query.  A change of a source the query
 *	  reads beside it recomputes both.
 *	- a global aggregate that deltas cannot keep (TPC-H Q17): the state
 *	  is the rows it aggregates, with each column of the query's level it
 *	  reads; the table, the query's aggregates over the state.
 *	- a subquery in FROM that cannot be merged into the query (it
 *	  aggregates, as TPC-H Q13's), and reads all its sources: the state is
 *	  the subquery's rows, named as the query names them; the table, the
 *	  query over the state instead of the subquery.
 *	- window functions whose partitions no result column names (a window
 *	  over the whole result, TPC-H-style ranks of groups): the state is
 *	  the rows they are computed over (the query's groups, or its rows,
 *	  with the columns and aggregates its result reads); the table, the
 *	  window functions over the state.
 * The state (MtAnalysis.rows_kept) is maintained by the keys a change
 * names, as any KEYS table's rows are.  Two hidden objects of the internal
 * schema hold it, named and owned as a DELTAS table's are
 * (mt/continuous/deltas.h):
 *
 *	  state_<id>	the rows below
 *	  derived_<id>	the table's query over them: the table is refreshed
 *					from it, and only the rows that differ are written
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_KEPT_ROWS_H
#define MT_CONTINUOUS_KEPT_ROWS_H

#include "nodes/parsenodes.h"

#include "mt/continuous/analysis.h"
#include "mt/refresh/refresh.h"

extern const char *mt_kept_rows_unfit(Query *q);
extern void mt_kept_rows_prepare(MtAnalysis *a, Query *q);
extern void mt_kept_rows_prepare_subquery(MtAnalysis *a, Query *q, int rtindex, Query *sub);
extern void mt_kept_rows_prepare_cte(MtAnalysis *a, Query *q, Query *sub);
extern Query *mt_kept_rows_input_query(Query *q, List **vars);
extern void mt_kept_rows_prepare_input(MtAnalysis *a, Query *q, Query *body, List *vars);
extern Query *mt_kept_rows_window_query(Query *q, Query **outer);
extern void mt_kept_rows_create_objects(Oid relid, MtAnalysis *a);
extern MtRefreshCounts mt_kept_rows_refresh(Oid relid, MtAnalysis *a, List *filter);

#endif							/* MT_CONTINUOUS_KEPT_ROWS_H */
