/*-------------------------------------------------------------------------
 *
 * mt/continuous/analysis_int.h
 *	  What the files of the analysis (mt/continuous/analysis.h) share.
 *
 *	  analysis_query.c	 what a query reads, whether its shape allows keys,
 *						 FULL, and the equalities between its columns
 *	  analysis_deltas.c	 whether DELTAS can maintain it, and their SQL
 *	  analysis_correlated.c	 the keys subqueries in expressions name
 *	  analysis.c		 the keys of each source, and the strategy chosen
 *
 * each using only those above it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_ANALYSIS_INT_H
#define MT_CONTINUOUS_ANALYSIS_INT_H

#include "mt/continuous/analysis.h"

/* A column of a range table entry of the query. */
typedef struct MtVarRef
{
	int			varno;
	int			attno;
} MtVarRef;

/* An equality between two columns: "var = var" in a join or WHERE. */
typedef struct MtEdge
{
	MtVarRef	from;
	MtVarRef	to;
	bool		directed;		/* from nullable side to preserved side */
} MtEdge;

/* The equality graph of a query (see analysis_query.c). */
typedef struct MtGraph
{
	Query	   *q;
	List	   *edges;			/* MtEdge */
	bool	   *nullable;		/* by range table index */
} MtGraph;

/* analysis_query.c */
extern bool mt_is_view_self(RangeTblEntry *rte, Oid viewid);
extern MtAnalysis *mt_full_analysis(Oid viewid, Query *q, const char *reason);
extern List *mt_sublink_relids(Query *q);
extern bool mt_is_lateral_subquery(RangeTblEntry *rte);
extern bool mt_has_lateral_subquery(Query *q);
extern const char *mt_unsupported_shape(Oid viewid, Query *q);
extern bool mt_has_row_security(Oid relid);
extern Var *mt_base_var(Query *q, Node *node);
extern bool mt_same_var(MtVarRef a, MtVarRef b);
extern void mt_relids_under(Query *q, Node *node, List **relids);
extern void mt_walk_jointree(MtGraph *g, Node *node, bool nullable);
extern List *mt_reachable(MtGraph *g, MtVarRef start);
extern bool mt_names_distinct(List *names);
extern bool mt_groups_by_shown_column(Query *q);

/* analysis_deltas.c */
extern bool mt_try_deltas(MtGraph *g, Query *q, MtAnalysis *a);
extern bool mt_may_fail(Node *node, void *context);
extern Node *mt_own_row_filter(Query *q, int rtindex);

/* analysis_correlated.c */
extern bool mt_deterministic_column(Oid relid, AttrNumber attno);
extern MtSourceUse *mt_keyed_use_at(MtAnalysis *a, int rtindex);
extern bool mt_identity_full(Oid relid, bool inh);
extern List *mt_correlated_uses(MtGraph *g, Query *q, List *candidates, List *candidate_names,
								MtAnalysis *a, bool top);

#endif							/* MT_CONTINUOUS_ANALYSIS_INT_H */
