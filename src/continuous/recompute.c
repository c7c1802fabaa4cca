/*-------------------------------------------------------------------------
 *
 * src/continuous/recompute.c
 *	  CONTINUOUS refresh mode: recomputing a table, or some of its groups.
 *
 * A full recompute of a DELTAS table reads the sources with a snapshot
 * that becomes the table's baseline; groups recomputed through a join get
 * one of their own (see Baselines in cycle.c).  Recomputing the rows a set
 * of keys names costs per key, a full recompute per table: the costs
 * measured, or else the statistics, say which is cheaper.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/pg_lsn.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/continuous/cycle_int.h"
#include "mt/continuous/key_columns.h"
#include "mt/continuous/kept_rows.h"
#include "mt/utils/extension.h"

/* a keys pass over fewer keys is not a measure of the cost per key ... */
#define MIN_MEASURED_KEYS		200
/* ... unless it took this long, and twice a full recompute */
#define SLOW_KEYS_PASS_MS		20

/*
 * Is the DELTAS table its own state (MtAnalysis.in_place)?  What its
 * pipeline was created as, which the constraints may no longer say, and
 * which a cycle may have changed (mt_cont_keep_state): asked of the catalog.
 */
bool
mt_cont_own_rows(ContTable *t)
{
	return !mt_deltas_has_state(t->relid);
}

/*
 * A DELTAS table without hidden counts needs them after all: a changed row
 * brought a NULL to a sum, or the table can no longer be its own state
 * (mt_deltas_in_place_possible: a NOT NULL constraint a sum rested on was
 * dropped, a metadata column added), or never was: its query became one
 * for deltas after its pipeline was created for another strategy (a
 * source set LOGGED), and its rows hold no known baseline.  Create them,
 * for the full recompute the caller does next, which fills them.  The
 * table is maintained that way from now on, and says so.
 */
void
mt_cont_keep_state(ContTable *t)
{
	MtTable    *mt = mt_catalog_lookup(t->relid, false);
	MtAnalysis *now = mt_analyze_query_view(mt->query_view, mt->relid);

	mt_deltas_create_objects(t->relid, t->analysis);
	CommandCounterIncrement();
	mt_cont_note_deltas_kept(t->relid, now->reason);
}

/*
 * Recompute the whole table.  For DELTAS, the state first (unless the
 * table is its own state), then the table from it, both as of one snapshot
 * that becomes the table's baseline.
 */
MtRefreshCounts
mt_cont_recompute_full(ContTable *t)
{
	MtRefreshRequest req = {0};
	MtRefreshCounts counts;

	req.relid = t->relid;
	if (t->analysis->strategy == MT_STRATEGY_DELTAS)
	{
		Snapshot	snap;

		snap = RegisterSnapshot(GetTransactionSnapshot());
		if (!mt_cont_own_rows(t))
		{
			mt_deltas_rebuild_state(t->relid, t->analysis, snap, NIL);
			CommandCounterIncrement();
			snap->curcid = GetCurrentCommandId(false);
			req.source_view = mt_deltas_derived_view(t->relid);
		}
		PushActiveSnapshot(snap);
		req.use_snapshot = true;
		counts = mt_refresh_rows(&req);
		PopActiveSnapshot();

		/* every transaction the snapshot saw had committed before this point */
		mt_cont_record_baseline(t->relid, snap, GetXLogInsertRecPtr());
		UnregisterSnapshot(snap);
	}
	else if (t->analysis->rows_kept)
		counts = mt_kept_rows_refresh(t->relid, t->analysis, NIL);
	else
		counts = mt_refresh_rows(&req);
	mt_cont_forget_logged_keys(t->relid);
	mt_cont_forget_logged_deltas(t->relid);
	return counts;
}

/*
 * Recompute the groups of a DELTAS table that changes of the sources it
 * joins name, in the state as of a snapshot that becomes the groups'
 * baseline.  Adjustments of changes that snapshot saw must already be in
 * the state: they are applied first.
 */
MtRefreshCounts
mt_cont_recompute_groups(ContTable *t, List *groups)
{
	MtRefreshCounts counts = {0};
	Snapshot	snap;

	CommandCounterIncrement();
	snap = RegisterSnapshot(GetTransactionSnapshot());
	if (mt_cont_own_rows(t))
	{
		/* the table's rows of those groups, from the query */
		MtRefreshRequest req = {0};

		req.relid = t->relid;
		req.filter = groups;
		req.use_snapshot = true;
		PushActiveSnapshot(snap);
		counts = mt_refresh_rows(&req);
		PopActiveSnapshot();
	}
	else
		mt_deltas_rebuild_state(t->relid, t->analysis, snap, groups);
	/* every transaction the snapshot saw had committed before this point */
	mt_cont_record_group_baseline(t->relid, groups, snap, GetXLogInsertRecPtr());
	UnregisterSnapshot(snap);
	CommandCounterIncrement();
	return counts;
}

/* ---------------------------------------------------------------------
 * The keys named, and the cost of each way
 * ---------------------------------------------------------------------
 */

/* a lookup use's value of a key tuple, for values (NULL joins nothing) */
static List *
lookup_value(List *values, MtStringKey *key, MtSourceUse *use)
{
	if (key->tag == use->family && key->n == 1 && key->values[0] != NULL)
		values = lappend(values, key->values[0]);
	return values;
}

/*
 * The keys that the values of lookup uses name (see MtSourceUse): the
 * keyed use's columns of the rows the lookup finds, as key tuples of that
 * use's family.  Read now, as the table's owner.
 */
static List *
looked_up_keys(ContTable *t, List *logged)
{
	List	   *result = NIL;
	MemoryContext caller = CurrentMemoryContext;
	ListCell   *lu;

	foreach(lu, t->analysis->uses)
	{
		MtSourceUse *use = lfirst(lu);
		List	   *values = NIL;
		HASH_SEQ_STATUS status;
		KeyEntry   *e;
		ListCell   *lc;
		Datum	   *elems;
		int			n = 0;
		Oid			argtypes[1] = {TEXTARRAYOID};
		Datum		args[1];
		Oid			save_userid;
		int			save_sec;
		int			save_nestlevel;

		if (use->lookup_sql == NULL)
			continue;
		if (t->keys)
		{
			hash_seq_init(&status, t->keys);
			while ((e = hash_seq_search(&status)) != NULL)
				values = lookup_value(values, &e->key, use);
		}
		foreach(lc, logged)
			values = lookup_value(values, &((KeyEntry *) lfirst(lc))->key, use);
		if (values == NIL)
			continue;
		elems = palloc(sizeof(Datum) * list_length(values));
		foreach(lc, values)
			elems[n++] = CStringGetTextDatum(lfirst(lc));
		args[0] = PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));

		mt_run_as_owner_begin(t->analysis->owner, &save_userid, &save_sec, &save_nestlevel);
		SPI_connect();
		if (SPI_execute_with_args(use->lookup_sql, 1, argtypes, args, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not look up the keys of \"%s\"", get_rel_name(t->relid));
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			TupleDesc	desc = SPI_tuptable->tupdesc;
			MemoryContext spi = MemoryContextSwitchTo(caller);

			e = palloc0(sizeof(KeyEntry));
			e->key.tag = use->lookup_family;
			e->key.n = desc->natts;
			e->key.values = palloc(sizeof(char *) * (desc->natts + 1));
			for (int i = 0; i < desc->natts; i++)
			{
				char	   *v = SPI_getvalue(SPI_tuptable->vals[r], desc, i + 1);

				e->key.values[i] = v ? pstrdup(v) : NULL;
			}
			result = lappend(result, e);
			MemoryContextSwitchTo(spi);
		}
		SPI_finish();
		mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
	}
	return result;
}

/* Is one of the n values of a key NULL? */
static bool
any_null(char **values, int n)
{
	for (int i = 0; i < n; i++)
		if (values[i] == NULL)
			return true;
	return false;
}

/*
 * Families of one and the same column are one (mt_coarsen_key_uses makes
 * them): their values together, a single condition an index serves.
 */
static List *
add_family(List *families, MtFilterFamily *family)
{
	MtFilterColumn *col = linitial(family->columns);
	ListCell   *lf;

	if (list_length(family->columns) == 1)
		foreach(lf, families)
		{
			MtFilterFamily *f = lfirst(lf);
			MtFilterColumn *c = linitial(f->columns);

			if (list_length(f->columns) != 1 || f->rowwise || family->rowwise ||
				strcmp(c->name, col->name) != 0)
				continue;
			c->values = list_concat(c->values, col->values);
			c->has_null |= col->has_null;
			c->values = mt_filter_values_once(c);
			return families;
		}
	return lappend(families, family);
}

/* Keys written by the batch or kept earlier, as the engine's filter. */
static List *
keys_filter(ContTable *t, List *logged)
{
	List	   *families = NIL;
	ListCell   *lu;

	logged = list_concat(list_copy(logged), looked_up_keys(t, logged));
	foreach(lu, t->analysis->uses)
	{
		MtSourceUse *use = lfirst(lu);
		MtFilterFamily *family;
		HASH_SEQ_STATUS status;
		KeyEntry   *e;
		ListCell   *lc;
		int			n = list_length(use->key_columns);
		int			i;
		bool		any = false;
		bool		stale = false;

		/* (a lookup use's values became its keyed use's keys) */
		if (use->full || use->lookup_sql)
			continue;
		family = palloc0(sizeof(MtFilterFamily));
		i = 0;
		foreach(lc, use->key_columns)
		{
			MtFilterColumn *col = palloc0(sizeof(MtFilterColumn));

			col->name = strVal(lfirst(lc));
			family->columns = lappend(family->columns, col);
			i++;
		}
		/* each key's values, column by column (each once, below) */
#define ADD_VALUES(vals) \
		do { \
			if (use->strict && any_null((vals), n)) \
				break; \
			for (i = 0; i < n; i++) \
			{ \
				MtFilterColumn *col = list_nth(family->columns, i); \
				if ((vals)[i] == NULL) \
					col->has_null = true; \
				else \
					col->values = lappend(col->values, (vals)[i]); \
			} \
			any = true; \
		} while (0)

		if (use->key_sql)
		{
			/* the columns the key expressions read, then their values */
			List	   *read = NIL;
			bool		failed;
			int			ncols = list_length(use->attnums);

			if (t->keys)
			{
				hash_seq_init(&status, t->keys);
				while ((e = hash_seq_search(&status)) != NULL)
					if (e->key.tag == use->family)
						read = lappend(read, e->key.values);
			}
			foreach(lc, logged)
			{
				e = lfirst(lc);
				if (e->key.tag == use->family && e->key.n == ncols)
					read = lappend(read, e->key.values);
			}
			foreach(lc, mt_expression_key_values(use, t->analysis->owner, read, &failed))
				ADD_VALUES((char **) lfirst(lc));
			if (failed)
				mt_cont_table_gives_up(t);
		}
		else
		{
			if (t->keys)
			{
				hash_seq_init(&status, t->keys);
				while ((e = hash_seq_search(&status)) != NULL)
					if (e->key.tag == use->family)
						ADD_VALUES(e->key.values);
			}
			foreach(lc, logged)
			{
				e = lfirst(lc);
				if (e->key.tag == use->family && e->key.n == n)
					ADD_VALUES(e->key.values);
				else if (e->key.tag == use->family)
					stale = true;
			}
		}
#undef ADD_VALUES
		/* kept by a worker that read the query otherwise (an older version) */
		if (stale)
			mt_cont_table_gives_up(t);
		if (!any)
			continue;
		foreach(lc, family->columns)
		{
			MtFilterColumn *col = lfirst(lc);

			col->values = mt_filter_values_once(col);
		}
		families = add_family(families, family);
	}
	return families;
}

/* Key tuples (KeyEntry), as the engine's filter of the table's rows. */
List *
mt_cont_keys_filter(ContTable *t, List *keys)
{
	return keys_filter(t, keys);
}

/*
 * The number of distinct values of a column of the table by its statistics
 * (ANALYZE, autovacuum), or 0 when there are none.
 */
static double
column_ndistinct(Oid relid, const char *column, double rows)
{
	AttrNumber	attnum = get_attnum(relid, column);
	bool		inherited = get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE;
	double		ndistinct = 0;
	HeapTuple	tup;

	if (attnum == InvalidAttrNumber)
		return 0;
	tup = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(relid),
						  Int16GetDatum(attnum), BoolGetDatum(inherited));
	if (HeapTupleIsValid(tup))
	{
		float4		stadistinct = ((Form_pg_statistic) GETSTRUCT(tup))->stadistinct;

		/* negative: a fraction of the rows */
		ndistinct = stadistinct > 0 ? stadistinct : -stadistinct * rows;
		ReleaseSysCache(tup);
	}
	return ndistinct;
}

/* The rows of the largest source whose changes name keys. */
static double
sources_rows(ContTable *t)
{
	double		rows = 0;
	ListCell   *lc;

	foreach(lc, t->analysis->uses)
	{
		MtSourceUse *use = lfirst(lc);
		HeapTuple	tup;

		if (use->full || !OidIsValid(use->relid) ||
			!HeapTupleIsValid(tup = SearchSysCache1(RELOID, ObjectIdGetDatum(use->relid))))
			continue;
		rows = Max(rows, ((Form_pg_class) GETSTRUCT(tup))->reltuples);
		ReleaseSysCache(tup);
	}
	return rows;
}

/*
 * Is recomputing everything cheaper than recomputing the rows the filter
 * names?  Each key value rereads the rows it names: past a tenth of the
 * table a full pass wins.  A value names rows / ndistinct rows of its
 * column -- with GROUP BY o.ds, c.region, a changed order's day names every
 * region of that day -- so a family names the product, over its columns,
 * of the share of each column's values it holds.  Without statistics a key
 * is taken to name one row.  But keys fewer than a tenth of the rows of
 * the largest source that names them are tried first whatever the table
 * holds: a full pass reads that source, where each key rereads the few
 * rows it names there, and the values may mostly name no row of the table
 * (TPC-H Q2b: 800 changed supplies name 800 parts, of which its 460 rows
 * have a few; Q4 keeps the orders of one quarter, and a changed line names
 * its order anyway).  The first keys pass is measured, and from then on
 * the costs measured decide (mt_cont_full_is_cheaper).
 */
static bool
too_many_keys(ContTable *t, List *filter, int64 nkeys)
{
	double		rows = 0;
	double		untouched = 1;
	/* a TopK's keys name rows of all the query's, which its state holds */
	Oid			relid = t->analysis->rows_kept ? mt_hidden_relid("state_", t->relid) : t->relid;
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	ListCell   *lf;

	if (HeapTupleIsValid(tup))
	{
		rows = ((Form_pg_class) GETSTRUCT(tup))->reltuples;
		ReleaseSysCache(tup);
	}
	if (nkeys <= sources_rows(t) / 10)
		return false;
	foreach(lf, filter)
	{
		double		share = 1;
		ListCell   *lc;

		foreach(lc, ((MtFilterFamily *) lfirst(lf))->columns)
		{
			MtFilterColumn *col = lfirst(lc);
			double		ndistinct = column_ndistinct(relid, col->name, rows);
			double		nvalues = list_length(col->values) + (col->has_null ? 1 : 0);

			if (ndistinct <= 0)
				return nkeys > 1000 && nkeys > rows / 10;
			share *= Min(1.0, nvalues / ndistinct);
		}
		untouched *= 1 - share;
	}
	nkeys = Max(nkeys, (int64) (rows * (1 - untouched)));
	return nkeys > 1000 && nkeys > rows / 10;
}

double
mt_cont_elapsed_ms(TimestampTz start)
{
	return (GetCurrentTimestamp() - start) / 1000.0;
}

/* A cost measured again: the new figure weighs as much as all before. */
double
mt_cont_measured(double before, double now)
{
	return before > 0 ? (before + now) / 2 : now;
}

/*
 * Take the cheaper way: recompute everything rather than the rows of these
 * keys?  Once both ways have been measured on this table (a keys pass of
 * MIN_MEASURED_KEYS keys or more, and a full recompute -- its first sync is
 * one), their costs decide; before that, the estimate from statistics.
 */
bool
mt_cont_full_is_cheaper(ContTable *t, List *filter, int64 nkeys)
{
	if (t->full_ms > 0 && t->key_ms > 0)
		return nkeys * t->key_ms > t->full_ms;
	return too_many_keys(t, filter, nkeys);
}

/*
 * The keys the batch and the work kept for the table name (kept ones are
 * read only when there are some), as a filter; NIL when none.
 */
List *
mt_cont_named_keys(ContTable *t, TableState *st, int64 *nkeys, bool *had_logged)
{
	List	   *logged = st->pending_since ? mt_cont_logged_keys(t->relid) : NIL;

	*nkeys = t->nkeys + list_length(logged);
	*had_logged = (logged != NIL);
	return keys_filter(t, logged);
}

/* A keys pass over nkeys keys took this long since start. */
void
mt_cont_measure_keys(ContTable *t, int64 nkeys, TimestampTz start)
{
	double		ms = mt_cont_elapsed_ms(start);

	/*
	 * A pass over few keys is mostly fixed costs: not a measure -- unless
	 * it took well over a recompute of everything (each key rereads many
	 * rows of the sources: the changed suppliers of TPC-H Q15, whose state
	 * holds one row each), which the next as large should be instead.
	 */
	if (nkeys > 0 && (nkeys >= MIN_MEASURED_KEYS ||
					  (t->full_ms > 0 && ms > 2 * t->full_ms && ms > SLOW_KEYS_PASS_MS)))
		t->key_ms = mt_cont_measured(t->key_ms, ms / nkeys);
}
