/*-------------------------------------------------------------------------
 *
 * mt/continuous/deltas.h
 *	  The DELTAS strategy: per-group counters adjusted by changed rows.
 *
 * A table maintained by deltas has two hidden objects in the internal
 * schema, both part of the table (dropped with it), owned by the extension's
 * owner and usable by the table's (see grant_to_owner in commands/command_common.c):
 *
 *	  state_<oid>	one row per group: the group's columns, its row count
 *					(__mt_rows) and, per aggregate, the sum of its argument
 *					(__mt_sum_<n>, 0 when all are NULL; of a min or max, the
 *					extremum, NULL when all are) and the number of
 *					non-NULL arguments (__mt_nn_<n>)
 *	  derived_<oid>	the table's query computed from the state: the refresh
 *					engine reads it instead of the query view
 *
 * Changed source rows become per-group adjustments (MtDeltaSet); adding
 * them to the state and refreshing the groups they touch from the derived
 * view reads nothing but those groups.
 *
 * A table whose result columns are all counts and sums that are never NULL
 * (MtAnalysis.in_place) has neither object: its own rows are the state,
 * and the adjustments are added to them.  Which kind a table is was decided
 * when its pipeline was created, and is recorded by whether its state
 * table exists (mt_deltas_has_state).
 *
 * continuous/deltas.c computes the sets and keeps them for later,
 * continuous/deltas_state.c has the hidden objects and adds sets to the
 * state; the refresh engine adds them to a table's own rows
 * (refresh/in_place.c), as it does every write into a materialized table.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_DELTAS_H
#define MT_CONTINUOUS_DELTAS_H

#include "access/htup.h"
#include "utils/snapshot.h"

#include "mt/continuous/analysis.h"
#include "mt/refresh/refresh.h"

typedef struct MtDeltaSet MtDeltaSet;

extern void mt_deltas_create_objects(Oid relid, MtAnalysis *a);
extern void mt_deltas_drop_objects(Oid relid);
extern Oid	mt_deltas_derived_view(Oid relid);
extern void mt_deltas_rebuild_state(Oid relid, MtAnalysis *a, Snapshot snapshot, List *filter);

extern MtDeltaSet *mt_deltas_begin(Oid relid, MtAnalysis *a);
extern void mt_deltas_add_row(MtDeltaSet *set, HeapTuple tuple, int sign);
extern void mt_deltas_add_joined(MtDeltaSet *set, List *tuples, int sign, List *exclude);
extern void mt_deltas_add_term(MtDeltaSet *set, const char *term_sql, int nsets, Oid *relids,
							   List **tuples, List **signs, int factor, bool adjustments,
							   List *exclude);
extern void mt_deltas_set_exact(MtDeltaSet *set, bool exact);
extern void mt_deltas_add_logged(MtDeltaSet *set, List *keys, List *deltas);
extern void mt_deltas_merge(MtDeltaSet *set, MtDeltaSet *src);
extern int64 mt_deltas_ngroups(MtDeltaSet *set);
extern void mt_deltas_log(MtDeltaSet *set);
extern List *mt_deltas_apply(MtDeltaSet *set, bool *whole, List **reread, int64 *nreread);
extern bool mt_deltas_inexact(MtDeltaSet *set);
extern bool mt_deltas_has_state(Oid relid);
extern bool mt_deltas_saw_null_sum(MtDeltaSet *set);
extern int64 mt_deltas_apply_in_place(MtDeltaSet *set);

#endif							/* MT_CONTINUOUS_DELTAS_H */
