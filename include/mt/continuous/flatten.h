/*-------------------------------------------------------------------------
 *
 * mt/continuous/flatten.h
 *	  Subqueries in FROM merged into the query that reads them, before the
 *	  query is analysed (see mt/continuous/analysis.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_FLATTEN_H
#define MT_CONTINUOUS_FLATTEN_H

#include "nodes/parsenodes.h"

extern Query *mt_flatten_from_subqueries(Query *q);

#endif							/* MT_CONTINUOUS_FLATTEN_H */
