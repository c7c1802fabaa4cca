/*-------------------------------------------------------------------------
 *
 * src/continuous/chain.c
 *	  CONTINUOUS tables that read other materialized tables.
 *
 * Logical decoding cannot carry a materialized table's changes to the
 * CONTINUOUS tables downstream of it: the continuous worker's own writes
 * are filtered out by their origin, and refreshes insert without logical
 * information.  So the refresh engine hands them over itself: its writers
 * tell this module each row they insert or delete (this module is their
 * observer, see mt/refresh/observer.h), and at the end of the refresh the
 * key values or adjustments for every downstream CONTINUOUS table are
 * added to change_keys / change_deltas, in the refresh's transaction, as
 * decoding would have done; the worker applies them when the downstream
 * table is due.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "mt/catalog/catalog.h"
#include "mt/continuous/analysis.h"
#include "mt/continuous/chain.h"
#include "mt/continuous/deltas.h"
#include "mt/bgw/launcher.h"
#include "mt/materialized_table.h"
#include "mt/utils/spi_plans.h"

/*
 * Past this many changed rows for one downstream DELTAS table, it is
 * recomputed instead: its rows are kept until the refresh ends.
 */
#define MAX_CHAIN_ROWS		250000

/* One downstream table and what it needs. */
typedef struct Downstream
{
	Oid			relid;
	MtAnalysis *analysis;
	bool		full;
	List	   *uses;			/* MtSourceUse of the upstream table */
	List	   *keys;			/* (family, text[] Datum) pairs as KeyRow */
	bool		deltas;			/* adjusted by the changed rows: */
	List	   *rows;			/* ... copies of them, as ChainRow */
	int64		nrows;
	FmgrInfo  **out;			/* per use, per key column */
} Downstream;

typedef struct ChainRow
{
	HeapTuple	tuple;
	int			sign;
} ChainRow;

typedef struct KeyRow
{
	int			family;
	Datum		keys;			/* text[] */
} KeyRow;

struct MtChainFeed
{
	Oid			relid;
	TupleDesc	desc;
	List	   *downstream;		/* Downstream */
	MemoryContext context;
	bool		any;
};

#define MT_CHAIN_READERS_SQL \
	"WITH RECURSIVE readers(relid) AS (" \
	"  SELECT $1 " \
	"  UNION " \
	"  SELECT r.ev_class FROM pg_catalog.pg_depend d " \
	"    JOIN pg_catalog.pg_rewrite r ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass " \
	"         AND d.objid = r.oid " \
	"    JOIN readers ON d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass " \
	"         AND d.refobjid = readers.relid " \
	"   WHERE r.ev_class <> readers.relid) " \
	"SELECT t.relid::pg_catalog.oid FROM materialized_table_internal.mt_table t " \
	"  JOIN materialized_table_internal.continuous_state c ON c.relid = t.relid::pg_catalog.oid"

/*
 * The CONTINUOUS tables whose query reads relid (directly or through
 * views): those the worker has taken up, or all.
 */
static List *
readers(Oid relid, bool taken_up)
{
	List	   *result;
	MtSavedUser saved;

	mt_as_extension_owner_begin(&saved);
	result = mt_spi_oids(taken_up ?
						 MT_CHAIN_READERS_SQL " WHERE c.synced AND t.query_view::pg_catalog.oid IN (SELECT relid FROM readers)" :
						 MT_CHAIN_READERS_SQL " WHERE t.query_view::pg_catalog.oid IN (SELECT relid FROM readers)",
						 relid);
	mt_as_extension_owner_end(&saved);
	return result;
}

/*
 * mt_chain_readers
 *		The CONTINUOUS tables whose query reads relid (directly or through
 *		views), once the worker has taken them up.
 */
List *
mt_chain_readers(Oid relid)
{
	return readers(relid, true);
}

/* Does a CONTINUOUS table, taken up or not yet, read relid? */
bool
mt_chain_read_by_continuous(Oid relid)
{
	return readers(relid, false) != NIL;
}

/* Does a CONTINUOUS table read table relid? */
bool
mt_chain_has_downstream(Oid relid)
{
	return mt_chain_readers(relid) != NIL;
}

/*
 * mt_chain_begin
 *		Prepare to hand the changes of table relid (with descriptor desc)
 *		downstream; NULL when no CONTINUOUS table reads it.
 */
MtChainFeed *
mt_chain_begin(MtTable *upstream, TupleDesc desc)
{
	Oid			relid = upstream->relid;
	List	   *tables = mt_chain_readers(relid);
	MtChainFeed *feed;
	ListCell   *lc;

	if (tables == NIL)
		return NULL;
	feed = palloc0(sizeof(MtChainFeed));
	feed->relid = relid;
	feed->desc = CreateTupleDescCopy(desc);
	feed->context = AllocSetContextCreate(CurrentMemoryContext, "materialized_table chain",
										  ALLOCSET_DEFAULT_SIZES);
	foreach(lc, tables)
	{
		Downstream *d = palloc0(sizeof(Downstream));
		MtTable    *mt = mt_catalog_lookup(lfirst_oid(lc), false);
		ListCell   *lu;

		d->relid = mt->relid;
		d->analysis = mt_analyze_query_view(mt->query_view, mt->relid);
		foreach(lu, d->analysis->uses)
		{
			MtSourceUse *use = lfirst(lu);

			ListCell   *la;

			if (use->relid != relid)
				continue;
			if (use->full)
				d->full = true;

			/*
			 * Deleted rows are known by the upstream query's columns only:
			 * computed and metadata columns cannot name keys.
			 */
			foreach(la, use->attnums)
			{
				Form_pg_attribute att = TupleDescAttr(desc, lfirst_int(la) - 1);

				if (att->attgenerated ||
					mt_option_value(upstream->metadata_columns, NameStr(att->attname)))
					d->full = true;
			}
			d->uses = lappend(d->uses, use);
		}
		if (d->uses == NIL || d->analysis->strategy == MT_STRATEGY_FULL)
			d->full = true;
		if (d->analysis->strategy == MT_STRATEGY_DELTAS &&
			((desc->constr && desc->constr->has_generated_stored) || upstream->metadata_columns))
			d->full = true;
		/* through a join, rows of the upstream table would need joining here */
		if (d->analysis->delta_join && d->analysis->delta_source == relid)
			d->full = true;
		if (!d->full && d->analysis->strategy == MT_STRATEGY_DELTAS && !d->analysis->delta_join)
			d->deltas = true;
		else if (!d->full)
		{
			/* keys: of a KEYS table, or of a source a DELTAS table joins */
			int			u = 0;

			d->out = palloc(sizeof(FmgrInfo *) * (list_length(d->uses) + 1));
			foreach(lu, d->uses)
			{
				MtSourceUse *use = lfirst(lu);
				ListCell   *la;
				int			k = 0;

				d->out[u] = palloc(sizeof(FmgrInfo) * (list_length(use->attnums) + 1));
				foreach(la, use->attnums)
				{
					Oid			typoutput;
					bool		varlena;

					getTypeOutputInfo(TupleDescAttr(desc, lfirst_int(la) - 1)->atttypid,
									  &typoutput, &varlena);
					fmgr_info(typoutput, &d->out[u][k++]);
				}
				u++;
			}
		}
		feed->downstream = lappend(feed->downstream, d);
	}
	return feed;
}

/* A row the refresh inserted (sign 1) or deleted (sign -1). */
void
mt_chain_row(MtChainFeed *feed, HeapTuple tuple, int sign)
{
	MemoryContext old = MemoryContextSwitchTo(feed->context);
	ListCell   *lc;

	feed->any = true;
	foreach(lc, feed->downstream)
	{
		Downstream *d = lfirst(lc);
		ListCell   *lu;
		int			u = 0;

		if (d->full)
			continue;
		if (d->deltas)
		{
			ChainRow   *row = palloc(sizeof(ChainRow));

			/* evaluated as the downstream table's owner, at the end */
			row->tuple = heap_copytuple(tuple);
			row->sign = sign;
			d->rows = lappend(d->rows, row);
			if (++d->nrows > MAX_CHAIN_ROWS)
			{
				d->full = true;
				list_free_deep(d->rows);
				d->rows = NIL;
			}
			continue;
		}
		foreach(lu, d->uses)
		{
			MtSourceUse *use = lfirst(lu);
			int			n = list_length(use->attnums);
			Datum	   *elems = palloc(sizeof(Datum) * (n + 1));
			bool	   *nulls = palloc(sizeof(bool) * (n + 1));
			int			dims[1] = {n};
			int			lbs[1] = {1};
			KeyRow	   *row = palloc(sizeof(KeyRow));
			ListCell   *la;
			int			k = 0;

			foreach(la, use->attnums)
			{
				Datum		v = heap_getattr(tuple, lfirst_int(la), feed->desc, &nulls[k]);

				elems[k] = nulls[k] ? (Datum) 0 :
					CStringGetTextDatum(OutputFunctionCall(&d->out[u][k], v));
				k++;
			}
			row->family = use->family;
			row->keys = PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, TEXTOID,
														   -1, false, TYPALIGN_INT));
			d->keys = lappend(d->keys, row);
			u++;
		}
	}
	MemoryContextSwitchTo(old);
}

/* The refresh rewrote rows it cannot name: everything downstream recomputes. */
void
mt_chain_everything(MtChainFeed *feed)
{
	ListCell   *lc;

	feed->any = true;
	foreach(lc, feed->downstream)
		((Downstream *) lfirst(lc))->full = true;
}

static void
exec_for(const char *sql, int nargs, Oid *types, Datum *values)
{
	if (SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0) < 0)
		elog(ERROR, "could not hand changes to the tables downstream");
}

/*
 * The adjustments the changed rows make to a downstream DELTAS table:
 * its WHERE clause and aggregates' arguments evaluated on them, as its
 * owner (mt_deltas_add_row), in a subtransaction.  Its query's code is
 * not the upstream table's owner's: if it fails, the downstream table is
 * recomputed by the worker, as its owner, and the upstream refresh goes
 * on.  NULL in that case.
 */
static MtDeltaSet *
downstream_deltas(Downstream *d)
{
	MtDeltaSet *volatile set = NULL;
	MtSubxact	sub;

	mt_subxact_begin(&sub);
	PG_TRY();
	{
		ListCell   *lr;

		set = mt_deltas_begin(d->relid, d->analysis);
		foreach(lr, d->rows)
		{
			ChainRow   *row = lfirst(lr);

			mt_deltas_add_row(set, row->tuple, row->sign);
		}
		mt_subxact_commit(&sub);
	}
	PG_CATCH();
	{
		ErrorData  *edata = mt_subxact_rollback(&sub);

		ereport(LOG,
				(errmsg("materialized table \"%s\" will be recomputed: its query failed on the changes of a table it reads",
						get_rel_name(d->relid)),
				 errdetail_internal("%s", edata->message)));
		FreeErrorData(edata);
		set = NULL;
	}
	PG_END_TRY();
	return set;
}

/*
 * mt_chain_finish
 *		Record the work of each downstream table, in this transaction, with
 *		the extension owner's rights (the refresh runs as the upstream
 *		table's owner, who cannot write the extension's catalog).
 */
void
mt_chain_finish(MtChainFeed *feed)
{
	MtSavedUser saved;
	ListCell   *lc;
	Datum		now = TimestampTzGetDatum(GetCurrentTimestamp());
	List	   *sets = NIL;		/* MtDeltaSet of the DELTAS tables, in order */

	if (feed == NULL || !feed->any)
		return;
	foreach(lc, feed->downstream)
	{
		Downstream *d = lfirst(lc);
		MtDeltaSet *set = NULL;

		if (!d->full && d->deltas)
		{
			set = downstream_deltas(d);
			d->full = (set == NULL);
		}
		sets = lappend(sets, set);
	}
	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	foreach(lc, feed->downstream)
	{
		Downstream *d = lfirst(lc);
		Oid			types[3] = {OIDOID, TIMESTAMPTZOID, TEXTARRAYOID};
		Datum		values[3] = {ObjectIdGetDatum(d->relid), now, 0};
		ListCell   *lk;

		if (d->full)
			exec_for("UPDATE materialized_table_internal.continuous_state SET needs_full = true "
					 "WHERE relid = $1", 1, types, values);
		else if (d->deltas)
			mt_deltas_log(list_nth(sets, foreach_current_index(lc)));
		else
		{
			foreach(lk, d->keys)
			{
				KeyRow	   *row = lfirst(lk);
				Oid			ktypes[3] = {OIDOID, INT4OID, TEXTARRAYOID};
				Datum		kvalues[3] = {ObjectIdGetDatum(d->relid), Int32GetDatum(row->family),
				row->keys};

				exec_for("INSERT INTO materialized_table_internal.change_keys (relid, family, keys) "
						 "VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", 3, ktypes, kvalues);
			}
		}
		exec_for("UPDATE materialized_table_internal.continuous_state "
				 "SET pending_since = COALESCE(pending_since, $2) WHERE relid = $1",
				 2, types, values);
	}
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	mt_wake_worker_at_commit();
	MemoryContextDelete(feed->context);
}
