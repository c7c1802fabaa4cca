/*-------------------------------------------------------------------------
 *
 * mt/refresh/refresh.h
 *	  The refresh engine: the one place that writes materialized tables.
 *
 * Every refresh -- at CREATE, manual, scheduled, continuous, cascaded --
 * replaces some rows of the table with the query's current result for
 * them, in the caller's transaction, so a concurrent reader sees the old
 * rows or the new ones and is never blocked: the table is locked in SHARE
 * ROW EXCLUSIVE mode, which keeps other refreshes and writers out but not
 * readers.  A refresh runs with the privileges of the table's owner.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_REFRESH_H
#define MT_REFRESH_H

#include "access/tupdesc.h"
#include "nodes/params.h"
#include "nodes/pg_list.h"
#include "utils/relcache.h"

#include "mt/catalog/catalog.h"
#include "mt/refresh/table_writer.h"

/* What started a refresh; the names are those of refresh_history.trigger. */
typedef enum MtRefreshTrigger
{
	MT_TRIGGER_CREATE,
	MT_TRIGGER_MANUAL,
	MT_TRIGGER_SCHEDULED,
	MT_TRIGGER_CONTINUOUS,
	MT_TRIGGER_ALTER,
	MT_TRIGGER_CASCADE
} MtRefreshTrigger;

#define MT_REFRESH_LOCKMODE		ShareRowExclusiveLock

extern const char *mt_trigger_name(MtRefreshTrigger trigger);

/*
 * Which rows a refresh replaces: those matching any family; a family
 * matches when each of its columns holds one of the column's values (text,
 * read by the input function of the column's type) or, with has_null, is
 * NULL.  No family: all
 * rows.  A partition spec is one family of single values; the continuous
 * pipeline's changed keys are one family per source.
 */
typedef struct MtFilterColumn
{
	char	   *name;
	List	   *values;			/* char *, not NULL; repeats allowed */
	bool		has_null;
} MtFilterColumn;

typedef struct MtFilterFamily
{
	List	   *columns;		/* MtFilterColumn */
	bool		rowwise;		/* the columns' values go together: a row
								 * matches the i-th value of every column
								 * (no NULLs, no repeats removed); a column
								 * of no values but has_null is matched by
								 * IS NULL alone */
} MtFilterFamily;

typedef struct MtRefreshRequest
{
	Oid			relid;
	List	   *filter;			/* MtFilterFamily; NIL for the whole table */
	Oid			source_view;	/* where rows come from; InvalidOid: the
								 * table's query view */
	const char *source_sql;		/* or rows of this query (with the filter's
								 * parameters, the query view's columns) */
	bool		use_snapshot;	/* read with the caller's active snapshot */
	bool		by_key;			/* the filter's columns are a key of the
								 * query's result: rows may be matched by
								 * them and updated in place */
} MtRefreshRequest;

extern MtRefreshCounts mt_refresh_rows(MtRefreshRequest *req);

/* random_page_cost for a cycle's lookups (see mt_favour_index_lookups) */
#define MT_LOOKUP_PAGE_COST		1.1
extern void mt_favour_index_lookups(void);
extern bool mt_unique_beyond_keys(Relation rel, List *keys);

/*
 * Replace the whole content (spec NIL) or the rows of one partition
 * (spec: MtOption column = text value), recorded in refresh_history with
 * its failure kept.  Returns the number of rows written (inserted plus
 * deleted).
 */
extern uint64 mt_refresh(Oid relid, List *spec, MtRefreshTrigger trigger);
/* a new metadata column: the time of the refresh that wrote the rows */
extern void mt_refresh_stamp_column(Oid relid, const char *column, Oid typid, int32 typmod,
									TimestampTz when);

extern Form_pg_attribute mt_find_attribute(TupleDesc desc, const char *name);

extern List *mt_filter_from_spec(List *spec);
extern List *mt_filter_of_keys(List *columns, List *keys);
extern List *mt_filter_values_once(MtFilterColumn *col);
extern int	mt_filter_params(List *filter, TupleDesc desc, Oid **argtypes, Datum **values,
							 ParamListInfo *params);
extern char *mt_filter_select(const char *select, List *filter, const char *alias, TupleDesc desc,
							  Oid *ptypes);
extern char *mt_filter_select_joined(const char *select, List *filter, const char *alias,
									 TupleDesc desc, Oid *ptypes);
extern char *mt_filter_condition(List *filter, const char *alias, TupleDesc desc, Oid *ptypes,
								 int first_param);

/* check a PARTITION (k = 'v', ...) spec against the table's partition keys */
extern void mt_check_partition_spec(MtTable *mt, List *spec, const char *source);
extern char *mt_partition_spec_text(List *spec);

#endif							/* MT_REFRESH_H */
