/*-------------------------------------------------------------------------
 *
 * src/continuous/table_set.c
 *	  CONTINUOUS refresh mode: the tables the worker follows.
 *
 * When the worker reads the catalog again, each CONTINUOUS table is
 * analyzed (what it reads, how its changes are applied) and what
 * continuous_state says of it loaded.  A table whose query cannot be
 * analyzed is left out and tried again after a back-off; the others are
 * followed all the same.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "mt/catalog/freshness.h"
#include "mt/catalog/history.h"
#include "mt/continuous/cycle_int.h"
#include "mt/continuous/partial_log.h"
#include "mt/utils/citus.h"
#include "mt/materialized_table.h"
#include "mt/utils/relations.h"
#include "mt/utils/spi_plans.h"

/*
 * Tables the worker could not read (their query could not be analyzed):
 * not followed, and tried again after a back-off.  In TopMemoryContext
 * (ContWorker.unreadable).
 */
typedef struct Unreadable
{
	Oid			relid;
	int			failures;
	TimestampTz retry_after;
} Unreadable;

/*
 * The relations a query view reads: through the views it reads, down to
 * the partitions of the tables, in OID order.  Its operators are named
 * with their schema: an exact match for oid = regclass elsewhere on a
 * search_path would be taken over pg_catalog's oid = oid.
 */
static List *
relations_read(Oid query_view)
{
	return mt_spi_oids("WITH RECURSIVE reads(relid) AS ("
					   "  SELECT $1 "
					   "  UNION "
					   "  SELECT d.refobjid FROM pg_catalog.pg_rewrite r "
					   "    JOIN reads ON r.ev_class OPERATOR(pg_catalog.=) reads.relid "
					   "    JOIN pg_catalog.pg_depend d "
					   "      ON d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass::pg_catalog.oid "
					   "         AND d.objid OPERATOR(pg_catalog.=) r.oid "
					   "         AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid "
					   "   WHERE d.refobjid OPERATOR(pg_catalog.<>) reads.relid) "
					   "SELECT relid FROM reads "
					   "UNION "
					   "SELECT p.relid FROM reads, "
					   "  LATERAL pg_catalog.pg_partition_tree(reads.relid::pg_catalog.regclass) p "
					   "ORDER BY 1", query_view);
}

static Unreadable *
unreadable_entry(ContWorker *w, Oid relid)
{
	ListCell   *lc;

	foreach(lc, w->unreadable)
		if (((Unreadable *) lfirst(lc))->relid == relid)
			return lfirst(lc);
	return NULL;
}

/*
 * A table could not be read: say so in its history, and have it wait for a
 * full recompute, its changes unread from now on.  Its freshness shows as
 * not met (pending_since) until it is maintained again.
 */
static void
table_unreadable(ContWorker *w, MtTable *mt, ErrorData *edata, TimestampTz started)
{
	Unreadable *u = unreadable_entry(w, mt->relid);
	int64		freshness = mt_freshness_seconds(mt->freshness_value, mt->freshness_unit) * USECS_PER_SEC;
	MtHistoryRun *run;

	if (u == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		u = palloc0(sizeof(Unreadable));
		u->relid = mt->relid;
		w->unreadable = lappend(w->unreadable, u);
		MemoryContextSwitchTo(old);
	}
	u->failures++;
	u->retry_after = mt_cont_retry_time(GetCurrentTimestamp(), freshness, u->failures);
	ereport(LOG,
			(errmsg("materialized_table could not follow \"%s\": %s",
					get_rel_name(mt->relid), edata->message),
			 errdetail("The table is recomputed once it can be followed again.")));
	mt_cont_need_full_since(mt->relid, started);
	run = mt_history_start(mt->relid, mt_trigger_name(MT_TRIGGER_CONTINUOUS), NULL, started, false);
	mt_history_failed(run, edata->message);
}

/* Analyze one table to follow, into context. */
static ContTable *
read_table(MtTable *mt, MemoryContext context)
{
	MemoryContext old = MemoryContextSwitchTo(context);
	ContTable  *t;

	t = palloc0(sizeof(ContTable));
	t->relid = mt->relid;
	t->query_view = mt->query_view;
	t->freshness = mt_freshness_seconds(mt->freshness_value, mt->freshness_unit) * USECS_PER_SEC;
	t->analysis = mt_analyze_query_view(mt->query_view, mt->relid);
	/* what an earlier process kept for it may have been read so */
	t->inexact_lsn = GetXLogInsertRecPtr();
	t->reads = relations_read(mt->query_view);
	t->writes = mt_leaf_relations(mt->relid);
	/* a node's table whose applies log keys for the coordinator (follow_keys) */
	t->forwards = mt_citus_installed() && mt_partial_log_forwards(mt->relid);
	MemoryContextSwitchTo(old);
	return t;
}

/*
 * The tables to follow, analyzed, into context; false if one is locked.
 * What the analysis locks beyond them is waited for briefly at most.  A
 * table whose analysis fails is left out (table_unreadable), and the
 * others are followed all the same.
 */
static bool
read_tables(ContWorker *w, List *mts, MemoryContext context, List **result)
{
	ListCell   *lc;
	TimestampTz now = GetCurrentTimestamp();
	List	   *still_unreadable = NIL;

	*result = NIL;
	w->applied_lsn_kept = mt_cont_catalog_keeps_applied_lsn();
	foreach(lc, mts)
	{
		MtTable    *mt = lfirst(lc);
		Unreadable *u = unreadable_entry(w, mt->relid);
		MtSubxact	sub;
		ContTable  *volatile t = NULL;
		ErrorData  *volatile edata = NULL;

		if (u && now < u->retry_after)
		{
			still_unreadable = lappend(still_unreadable, u);
			continue;			/* failed a moment ago */
		}
		/* the lock keeps a DROP out while the query is analyzed */
		if (!ConditionalLockRelationOid(mt->relid, AccessShareLock))
			return false;
		if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(mt->relid)) ||
			!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(mt->query_view)))
			continue;			/* dropped since the list was read */
		mt_subxact_begin(&sub);
		PG_TRY();
		{
			t = read_table(mt, context);
			mt_subxact_commit(&sub);
		}
		PG_CATCH();
		{
			edata = mt_subxact_rollback(&sub);
		}
		PG_END_TRY();
		if (edata && mt_cont_gave_way(edata))
			return false;
		if (edata)
		{
			if (mt_cont_dropped_meanwhile(mt->relid))
				continue;
			table_unreadable(w, mt, edata, now);
			still_unreadable = lappend(still_unreadable, unreadable_entry(w, mt->relid));
			continue;
		}
		if (u)
			ereport(LOG,
					(errmsg("materialized_table follows \"%s\" again", get_rel_name(mt->relid))));
		{
			MemoryContext old = MemoryContextSwitchTo(context);

			*result = lappend(*result, t);
			MemoryContextSwitchTo(old);
		}
	}
	/* tables read again, or gone, are forgotten here */
	foreach(lc, w->unreadable)
		if (!list_member_ptr(still_unreadable, lfirst(lc)))
			pfree(lfirst(lc));
	list_free(w->unreadable);
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		w->unreadable = list_copy(still_unreadable);
		MemoryContextSwitchTo(old);
	}
	foreach(lc, *result)
		mt_cont_load_baseline(w, lfirst(lc));
	return true;
}

/* What the worker learnt of a table it keeps following. */
static void
carry_over(ContWorker *w, List *new_tables)
{
	ListCell   *ln;
	ListCell   *lo;

	foreach(ln, new_tables)
	{
		ContTable  *t = lfirst(ln);

		foreach(lo, w->tables)
		{
			ContTable  *old = lfirst(lo);

			if (old->relid == t->relid && old->query_view == t->query_view)
			{
				t->full_ms = old->full_ms;
				t->key_ms = old->key_ms;
				t->retry_after = old->retry_after;
				t->failures = old->failures;
				t->inexact_lsn = old->inexact_lsn;
				break;
			}
		}
	}
}

/* See mt_continuous_worker_tables_changed. */
bool
mt_cont_tables_changed(ContWorker *w, List *mts)
{
	MemoryContext context;
	List	   *new_tables = NIL;
	volatile bool busy = false;

	/* the batch waiting to be applied refers to the tables as they are */
	if (w->batch_pending)
		return false;
	context = AllocSetContextCreate(TopMemoryContext, "materialized_table continuous",
									ALLOCSET_DEFAULT_SIZES);
	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		mt_cont_set_lock_timeout();
		PushActiveSnapshot(GetTransactionSnapshot());
		busy = !read_tables(w, mts, context, &new_tables);
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		mt_cont_catch_lock_timeout(context);
		busy = true;
	}
	PG_END_TRY();
	MemoryContextSwitchTo(TopMemoryContext);

	if (busy)
	{
		MemoryContextDelete(context);
		return false;
	}
	carry_over(w, new_tables);
	w->reread_wanted = false;
	if (w->tables_context)
		MemoryContextDelete(w->tables_context);
	w->tables_context = context;
	w->tables = new_tables;
	mt_cont_interests_reset(w);
	return true;
}
