/*-------------------------------------------------------------------------
 *
 * mt/continuous/state.h
 *	  The rows CONTINUOUS mode keeps of a table, as its commands create,
 *	  drop or change it (src/continuous/state.c; the worker's own use of
 *	  those tables is in mt/continuous/cycle_int.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_STATE_H
#define MT_CONTINUOUS_STATE_H

#include "nodes/pg_list.h"

#include "mt/continuous/analysis.h"

extern void mt_cont_state_insert(Oid relid, MtAnalysis *a);
extern void mt_cont_state_delete(Oid relid);
/* the worker recomputes these tables (DELTAS ones only if deltas_only) */
extern void mt_cont_state_need_full(List *relids, bool deltas_only);

#endif							/* MT_CONTINUOUS_STATE_H */
