/*-------------------------------------------------------------------------
 *
 * mt/refresh/in_place.h
 *	  Adding group adjustments to the rows of a table that is its own state.
 *
 * A DELTAS table whose result columns are all counts and sums that are
 * never NULL keeps no hidden state (see mt/continuous/deltas.h): the
 * adjustments of a batch of changes are added to its own rows.  That is a
 * write into a materialized table, so it is the refresh engine's: the
 * continuous layer hands the adjustments over in an MtInPlaceRequest, and
 * the rows written are told to the row observer (mt/refresh/observer.h),
 * as those of any refresh.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_REFRESH_IN_PLACE_H
#define MT_REFRESH_IN_PLACE_H

#include "nodes/pg_list.h"

/* What adjusts an aggregate's result column. */
typedef enum MtInPlaceKind
{
	MT_IN_PLACE_ROWS,			/* count(*): the group's row count */
	MT_IN_PLACE_COUNT,			/* count(x): its non-NULL count */
	MT_IN_PLACE_SUM				/* sum(x): its sum */
} MtInPlaceKind;

typedef struct MtInPlaceColumn
{
	const char *name;			/* the result column */
	Oid			type;			/* its type in the query's result */
	MtInPlaceKind kind;
} MtInPlaceColumn;

/* One group's adjustments (the arrays are the caller's, not copied). */
typedef struct MtInPlaceGroup
{
	char	  **values;			/* group columns as text, NULL for NULL */
	int64		rows;
	Datum	   *sums;			/* numeric, per aggregate */
	int64	   *nn;				/* non-NULL counts, per aggregate */
} MtInPlaceGroup;

typedef struct MtInPlaceRequest
{
	Oid			relid;
	Oid			owner;			/* the table's: the casts to its column types
								 * are its code */
	int			ngroup;
	List	   *group_columns;	/* char *, the ngroup group columns */
	int			nagg;
	MtInPlaceColumn *aggs;		/* the nagg aggregates' columns */
	List	   *groups;			/* MtInPlaceGroup: those that change something */
	List	   *touched;		/* MtFilterFamily: all groups of the batch,
								 * whose rows the observer is fed */
} MtInPlaceRequest;

extern int64 mt_in_place_apply(MtInPlaceRequest *req);

#endif							/* MT_REFRESH_IN_PLACE_H */
