/*-------------------------------------------------------------------------
 *
 * mt/continuous/aggregates.h
 *	  The aggregates a DELTAS table keeps, and its result computed from
 *	  them (see mt/continuous/analysis.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_AGGREGATES_H
#define MT_CONTINUOUS_AGGREGATES_H

#include "nodes/parsenodes.h"

#include "mt/continuous/analysis.h"

/* the most display scales a numeric argument's values may have */
#define MT_MAX_SCALES	8

extern bool mt_delta_agg(Aggref *agg, MtDeltaAgg *d);
extern bool mt_delta_outputs(Query *q, List *group_tles, MtAnalysis *a);
extern bool mt_group_prints_alike(Node *expr, bool normalized_numeric);
extern int	mt_grouping_mask(MtAnalysis *a, Bitmapset *set);

extern char *mt_sum_column(int agg);
extern char *mt_nn_column(int agg);
extern char *mt_scale_column(int agg, int scale);
extern int	mt_delta_nscales(MtDeltaAgg *d);
extern char *mt_delta_collate_sql(MtDeltaAgg *d);
extern char *mt_delta_derived_sql(MtAnalysis *a, const char *state);

#endif							/* MT_CONTINUOUS_AGGREGATES_H */
