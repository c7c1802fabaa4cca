/*-------------------------------------------------------------------------
 *
 * mt/continuous/deltas_int.h
 *	  What the files of the DELTAS strategy share (continuous/deltas.c,
 *	  continuous/deltas_state.c): the set of adjustments, and the SQL of
 *	  the state.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_DELTAS_INT_H
#define MT_CONTINUOUS_DELTAS_INT_H

#include "access/tupdesc.h"
#include "nodes/execnodes.h"
#include "utils/hsearch.h"

#include "mt/continuous/deltas.h"
#include "mt/utils/string_key.h"

/* one group's adjustments */
typedef struct DeltaGroup
{
	char	  **values;			/* group columns as text, NULL for NULL: as
								 * first seen, the value a new group shows */
	char	  **keys;			/* the same, numerics normalized: to match */
	int64		rows;
	Datum	   *sums;			/* numeric */
	int64	   *nn;
	int64	   *sc;				/* values per display scale (see
								 * continuous/aggregates.c), all aggregates' */
	/* per extremum (min or max): the most extreme value added, removed */
	Datum	   *added;
	bool	   *has_added;
	Datum	   *removed;
	bool	   *has_removed;
	bool		reread;			/* its extremum may be gone: re-read it */
} DeltaGroup;

/* How a set compares and carries the values of an extremum. */
typedef struct ExtremumType
{
	bool		is_extremum;	/* false for the other aggregates */
	int			dir;			/* 1: min, -1: max */
	FmgrInfo	cmp;			/* the B-tree comparison */
	Oid			collation;
	Oid			type;
	int16		typlen;
	bool		typbyval;
	FmgrInfo	in;				/* text, for change_deltas */
	Oid			ioparam;
	FmgrInfo	out;
} ExtremumType;

struct MtDeltaSet
{
	Oid			relid;
	Oid			owner;			/* the table's: its query's code runs as it */
	MtAnalysis *a;
	int			ngroup;			/* group columns of the state ... */
	int			nkey;			/* ... of which the first nkey are the
								 * table's; one more holds the grouping set */
	int			nsets;			/* grouping sets (MtAnalysis.grouping_sets) */
	char	  **set_masks;		/* ... and their GROUPING() masks, as text */
	Bitmapset **set_members;
	int			nagg;
	int			nsc;			/* scale counts, of all aggregates */
	int		   *sc_first;		/* per aggregate, its first one */
	bool	   *group_numeric;	/* group columns whose text is normalized */
	bool		inexact;		/* a NaN or an infinity was summed, or a
								 * value of an unforeseen scale; or a global
								 * aggregate's extremum may be gone */
	ExtremumType *ext;			/* per aggregate */
	int			next;			/* how many are extrema */
	MemoryContext context;
	MemoryContext scratch;		/* for one addition */
	/* evaluation over source rows */
	EState	   *estate;
	ExprContext *econtext;
	TupleTableSlot *slot;
	ExprState  *qual;
	ExprState **args;
	Oid		   *argtypes;
	ExprState **group_states;
	FmgrInfo   *group_out;
	/* the adjustments */
	HTAB	   *buckets;		/* the groups by their keys (deltas.c) */
	List	   *groups;			/* DeltaGroup, in arrival order */
	int64		nrows;
	bool		exact;			/* terms read with the active snapshot */
};

/* continuous/deltas.c */
extern TupleDesc mt_deltas_state_desc(Oid relid);
extern char *mt_deltas_state_aggregates(MtAnalysis *a, bool sums_as_numeric, bool adjustments,
										bool signed_rows);
extern char *mt_deltas_group_by(MtAnalysis *a);
extern char *mt_deltas_numeric_text(Datum n);
extern List *mt_deltas_touched_groups(MtDeltaSet *set);
extern List *mt_deltas_groups_filter(MtDeltaSet *set, List *groups);
extern DeltaGroup *mt_deltas_lookup_group(MtDeltaSet *set, char **values);
extern bool mt_deltas_beyond(MtDeltaSet *set, int agg, Datum value, Datum kept);

#endif							/* MT_CONTINUOUS_DELTAS_INT_H */
