/*-------------------------------------------------------------------------
 *
 * mt/continuous/analysis.h
 *	  How the continuous pipeline maintains a table, decided from its query.
 *
 * Strategies (materialized_tables.maintenance shows INCREMENTAL for the
 * first two, FULL_RECOMPUTE for the last):
 *
 *	  KEYS		a changed source row names the values of some key columns
 *				of the result (grouping columns, DISTINCT columns, or plain
 *				columns of a select-project-join query, reached through
 *				equi-join conditions); the rows with those values are
 *				recomputed from the query.  Idempotent.
 *	  DELTAS	aggregates over one table or inner joins, grouped by result
 *				columns (plain or expressions) or global, whose aggregates
 *				are count, sum and avg of exact types, min and max (a group
 *				whose extremum is removed is re-read), with FILTER, read
 *				anywhere in the result's expressions and HAVING (see
 *				continuous/aggregates.c): per-group counters kept in a
 *				hidden state table are adjusted by the changed rows of
 *				one source (through the join: joined with the other
 *				sources' current rows), which are never read again;
 *				changes of the other sources name groups to recompute,
 *				as KEYS does.  Applied exactly once (see
 *				continuous/cycle.c).
 *	  FULL		anything else: the whole query is recomputed when a source
 *				changed (or every freshness period when the result may
 *				change without any source changing).
 *
 * A "use" is one occurrence of a source relation in the query.  Its family
 * number identifies the key columns a change of that source names.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_ANALYSIS_H
#define MT_CONTINUOUS_ANALYSIS_H

#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"

typedef enum MtStrategy
{
	MT_STRATEGY_KEYS,
	MT_STRATEGY_DELTAS,
	MT_STRATEGY_FULL
} MtStrategy;

typedef struct MtSourceUse
{
	Oid			relid;			/* source relation (a table, never a partition) */
	bool		inh;			/* read with its partitions or inheritance
								 * children, whose changes count too */
	bool		full;			/* any change: recompute everything */
	int			family;			/* change-log family of its keys */
	List	   *attnums;		/* int: source columns ... */
	List	   *key_columns;	/* String: ... and the result columns they give */
	bool		in_subquery;	/* read in a subquery correlated on the keys */
	int			rtindex;		/* its place in the query's range table, 0
								 * for one read in a subquery or a branch */
	/*
	 * A use whose column attnums (one) names no key but equals, by a join,
	 * a column of another source that a keyed use reads: a changed row
	 * names the keys of that source's rows with its value.  lookup_sql
	 * reads them ($1: text[] of the values), in the columns of the keyed
	 * use of family lookup_family.
	 */
	char	   *lookup_sql;
	int			lookup_family;
	/*
	 * Key columns that are expressions over the use's relation (see
	 * mt/continuous/expression_keys.h): attnums are the columns they read,
	 * and key_sql computes the key columns' values from theirs ($1, $2,
	 * ...: text[] of each).  NULL: the key columns are attnums themselves.
	 */
	char	   *key_sql;
	bool		strict;			/* a key with a NULL names nothing (an
								 * equality of a join's ON is never true) */
	/*
	 * Of a use in the query's FROM: what its WHERE and inner joins' ON say
	 * of the relation's rows alone, over Var(1, attnum), where it cannot
	 * fail (mt_own_row_filter); a changed row that fails it in both its
	 * versions changes nothing the query shows.  NULL: none.
	 */
	Node	   *filter;
} MtSourceUse;

typedef enum MtAggKind
{
	MT_AGG_COUNT_STAR,
	MT_AGG_COUNT,
	MT_AGG_SUM,
	MT_AGG_AVG,
	MT_AGG_MIN,
	MT_AGG_MAX
} MtAggKind;

/*
 * An aggregate maintained by deltas: count(*), count(x), sum(x), avg(x),
 * min(x) or max(x), its FILTER folded into its argument (count(*) FILTER
 * (WHERE c) is count(CASE WHEN c THEN true END)).  Of min and max (the
 * extrema) the state keeps the value itself in place of a sum: see
 * continuous/aggregates.c.
 */
typedef struct MtDeltaAgg
{
	MtAggKind	kind;
	Expr	   *arg;			/* NULL for count(*); over the source row
								 * unless delta_join */
	Oid			sum_type;		/* type of the kept sum (of an extremum: the
								 * argument's) */
	Oid			agg_type;		/* the aggregate's result type */
	List	   *scales;			/* int: for a numeric argument of no
								 * declared scale, the display scales its
								 * values can have (see continuous/aggregates.c) */
	char	   *output;			/* result column it is alone, or NULL */
	Oid			output_type;
	Oid			arg_relid;		/* the argument is this table's column ... */
	AttrNumber	arg_attnum;		/* ... or InvalidAttrNumber */
	Oid			cmp_proc;		/* of an extremum: the B-tree comparison of
								 * its ordering ... */
	Oid			collation;		/* ... under this collation */
} MtDeltaAgg;

/* A result column of a DELTAS table, computed from its group's state. */
typedef struct MtDeltaOutput
{
	char	   *name;
	Expr	   *expr;			/* over Var(1, n): the n-th group column,
								 * then the aggregates' values, in order */
	bool		junk;			/* only sorted by (ORDER BY ... LIMIT) */
	Index		sortref;		/* its place in the ORDER BY, or 0 */
} MtDeltaOutput;

/*
 * Another source of a DELTAS join whose changed rows adjust the groups
 * too, joined with the sources as a batch leaves them (see
 * continuous/snapshot.c): the standard delta rule, the terms of each set
 * of changed sources (mt_analysis_term_sql).
 */
typedef struct MtDeltaSide
{
	Oid			relid;
	int			rtindex;		/* in rows_query */
} MtDeltaSide;

/* A key carried into the IN subqueries that test it (MtAnalysis.pushed_keys) */
typedef struct MtPushedKey
{
	char	   *column;			/* the result column */
	char	   *sql;			/* the query, its values the parameter $1 ... */
	Oid			arraytype;		/* ... of this type */
} MtPushedKey;

typedef struct MtAnalysis
{
	Oid			owner;			/* the table's owner when it was analyzed:
								 * the query's code runs as this role */
	MtStrategy	strategy;
	char	   *reason;			/* a sentence: how, or why not incremental */
	bool		poll;			/* recompute every freshness period */
	bool		from_nodes;		/* a coordinator's table whose sources' shards
								 * are on Citus's nodes, which send the keys
								 * their changes name (continuous/forwarded.c) */
	List	   *uses;			/* MtSourceUse */
	List	   *keys;			/* String: result columns used as keys */
	List	   *identity_wanted;	/* Oid: sources read in a correlated
									 * subquery whose changes would name keys
									 * with REPLICA IDENTITY FULL */

	/* DELTAS */
	Oid			delta_source;	/* the source whose changed rows adjust */
	bool		delta_join;		/* ... joined with other sources' rows */
	Node	   *delta_quals;	/* WHERE, over the source row; or NULL */
	List	   *group_exprs;	/* Expr over the source row, in group order */
	List	   *group_outputs;	/* char *: their result columns */
	/*
	 * GROUPING SETS, ROLLUP and CUBE: the sets (Bitmapset of positions in
	 * group_exprs, from 0), each a group of its own for a changed row.  The
	 * state tells them apart by one more group column, MT_GROUPING_SET_COLUMN,
	 * the GROUPING() of all group expressions
	 * (mt_grouping_mask, continuous/aggregates.c).
	 */
	List	   *grouping_sets;
	List	   *aggs;			/* MtDeltaAgg */
	List	   *outputs;		/* MtDeltaOutput, in the result's order */
	Node	   *having;			/* HAVING, over the same Vars; or NULL */
	bool		topk;			/* ORDER BY ... LIMIT / OFFSET: the first
								 * rows of the state, the table is refreshed
								 * whole when a group changed */
	List	   *sort_clause;	/* with topk: SortGroupClause of the outputs */
	Node	   *limit_count;	/* with topk: LIMIT, OFFSET, as the query's */
	Node	   *limit_offset;
	LimitOption limit_option;
	bool		plain_outputs;	/* each output is a group column or one
								 * aggregate alone, and no HAVING */
	char	   *rows_sql;		/* the rows before aggregation: group
								 * columns, then __mt_arg_<n> */
	char	   *changes_sql;	/* with delta_join: the same rows for the
								 * changed rows of delta_source, $1 */
	List	   *sides;			/* with delta_join: MtDeltaSide */
	Query	   *rows_query;		/* with delta_join: rows_sql's query */
	int			delta_rtindex;	/* ... and delta_source's place in it */
	List	   *term_sqls;		/* cache of mt_analysis_term_sql */
	Bitmapset  *sum_only_columns;	/* with delta_join: delta_source's
									 * columns read only as sum()s (see
									 * mt_deltas_add_joined) */
	bool		fold_while_decoding;	/* changed rows are folded into the
										 * adjustments as they are decoded */
	bool		in_place;		/* a new pipeline makes the table's own rows
								 * its state (mt/continuous/deltas.h) */
	bool		extrema;		/* a min or a max among aggs: a group whose
								 * extremum a change removes is re-read */

	/*
	 * KEYS over rows kept in a hidden state (mt/continuous/kept_rows.h): of
	 * the query without its LIMIT, or of its subquery in FROM
	 */
	bool		rows_kept;
	Query	   *body_query;		/* the state's rows: the query without LIMIT
								 * and OFFSET, or the subquery */
	char	   *body_sql;		/* ... as text */
	char	   *top_columns;	/* LIMIT: the derived view's result columns, */
	char	   *top_clauses;	/* ... its ORDER BY, OFFSET and LIMIT, */
	char	   *top_index;		/* ... and the state's index in that order
								 * (NULL: no index serves it) */
	Query	   *outer_query;	/* subquery: the query, which the derived
								 * view is with the state in its place */
	int			outer_rtindex;	/* ... at this range table entry, */
	char	   *outer_cte;		/* ... or wherever it reads this WITH query */
	List	   *group_columns;	/* grouped over its input rows: the state's
								 * columns it groups by and shows (char *), */
	List	   *group_results;	/* ... its result columns of them: a cycle
								 * rewrites the groups of the rows it
								 * replaced, */
	bool		group_is_key;	/* ... which are all it groups by */

	/*
	 * KEYS: the keys that IN subqueries test, each with the query (the
	 * state's, of kept rows) with its values carried into them
	 * (MtPushedKey, mt/continuous/key_columns.h)
	 */
	List	   *pushed_keys;
} MtAnalysis;

#define MT_GROUPING_SET_COLUMN	"__mt_set"
#define MT_SIGN_COLUMN			"__mt_sign"	/* of a term's signed rows */

extern MtAnalysis *mt_analyze_query_view(Oid viewid, Oid relid);
extern const char *mt_strategy_name(MtStrategy strategy);
extern List *mt_analysis_sources(MtAnalysis *analysis);
extern bool mt_analysis_is_side(MtAnalysis *a, Oid relid);
extern const char *mt_analysis_term_sql(MtAnalysis *a, List *members, bool signed_rows);
extern bool mt_relation_is_decodable(Oid relid);
extern bool mt_deltas_in_place_possible(MtAnalysis *a, Oid relid, Oid viewid);

#endif							/* MT_CONTINUOUS_ANALYSIS_H */
