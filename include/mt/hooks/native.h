/*-------------------------------------------------------------------------
 *
 * mt/hooks/native.h
 *	  The statements on materialized tables in PostgreSQL's own spelling
 *	  (CREATE / REFRESH / ALTER / DROP MATERIALIZED VIEW with
 *	  materialized_table options), routed by the utility hook to the
 *	  commands execute() runs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_NATIVE_H
#define MT_NATIVE_H

#include "nodes/plannodes.h"
#include "tcop/cmdtag.h"

extern bool mt_native_utility(PlannedStmt **pstmt, const char *queryString,
							  QueryCompletion *qc);

#endif							/* MT_NATIVE_H */
