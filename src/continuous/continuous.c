/*-------------------------------------------------------------------------
 *
 * src/continuous/continuous.c
 *	  CONTINUOUS refresh mode, the side of the commands.
 *
 * Creating a CONTINUOUS table decides its strategy, prepares what the
 * strategy needs (REPLICA IDENTITY FULL on the sources whose old rows it
 * reads, the hidden state of DELTAS tables) and records it in
 * continuous_state as not yet taken up ("synced" false): when the worker
 * takes it up, it recomputes the table once from a snapshot of its own, so
 * that no change committed between this CREATE and then is missed (the
 * worker may well decode such changes before it knows the table).  Those
 * changes are the reason why the pick-up is a recompute and not a
 * continuation: see continuous/cycle.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/syscache.h"
#include "utils/varlena.h"

#include "mt/catalog/catalog.h"
#include "mt/continuous/continuous.h"
#include "mt/continuous/state.h"
#include "mt/continuous/analysis.h"
#include "mt/continuous/chain.h"
#include "mt/continuous/deltas.h"
#include "mt/continuous/decoder.h"
#include "mt/continuous/kept_rows.h"
#include "mt/bgw/launcher.h"
#include "mt/materialized_table.h"
#include "mt/continuous/partial_log.h"
#include "mt/refresh/observer.h"
#include "mt/refresh/refresh.h"
#include "mt/continuous/forwarded.h"
#include "mt/refresh/partials.h"
#include "mt/refresh/shards.h"
#include "mt/utils/citus.h"
#include "mt/utils/relations.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/sql.h"

/* Logical decoding with our plugin must be possible here. */
static void
check_decoding_prerequisites(void)
{
	if (wal_level < WAL_LEVEL_LOGICAL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("CONTINUOUS refresh mode requires wal_level = logical"),
				 errdetail("CONTINUOUS tables follow their sources through logical decoding."),
				 errhint("Set wal_level = logical in postgresql.conf and restart the server, or use REFRESH_MODE = FULL.")));

	if (!mt_output_plugin_allowed())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("logical decoding output plugin \"%s\" is not allowed on this server",
						MT_OUTPUT_PLUGIN),
				 errdetail("CONTINUOUS tables follow their sources through logical decoding with the extension's output plugin."),
				 errhint("Add %s to output_plugin_libraries in postgresql.conf and reload the configuration.",
						 MT_OUTPUT_PLUGIN)));
}

/*
 * Citus keeps a distributed or reference table's rows in shards, and the
 * changes of a shard are decoded on the node that holds it: this
 * database's slot never sees them.  A table Citus distributes has its
 * shards kept on their nodes (refresh/shards.c), when its query can be
 * computed shard by shard; a table of the coordinator's own that
 * aggregates shards is kept from partial aggregates its sources' nodes
 * keep per shard (refresh/partials.c), when they combine; true then.
 * Else its rows of the keys that changes of the shards name, which their
 * nodes send, are recomputed (continuous/forwarded.c): its pipeline is
 * that of a KEYS table whose worker is the nodes'.
 */
static bool
check_citus_tables(MtTable *mt, MtAnalysis *a)
{
	ListCell   *lc;

	if (!mt_citus_installed())
		return false;
	if (mt_citus_table_kind(mt->relid) != MT_CITUS_NONE)
	{
		mt_shards_check(mt->relid, mt->query_view);
		a->reason = psprintf("each shard is kept on its worker node from the co-located shards of its sources; on each: %s",
							 a->reason);
		return true;
	}
	foreach(lc, mt_analysis_sources(a))
	{
		if (mt_citus_table_kind(lfirst_oid(lc)) != MT_CITUS_NONE)
		{
			char	   *reason;

			/* else kept from the keys the nodes send (see start_pipeline) */
			if (mt_partials_unfit(mt) != NULL)
				return false;
			/* kept from partial aggregates of each shard, or refused */
			reason = mt_partials_prepare(mt);
			CommandCounterIncrement();
			*a = *mt_analyze_query_view(mt->query_view, mt->relid);
			a->reason = reason;
			return true;
		}
	}
	return false;
}

/*
 * Old rows must be decoded whole to know which keys a row left, or what
 * to subtract: sources read for keys or deltas need REPLICA IDENTITY FULL.
 */
static void
ensure_replica_identity(MtAnalysis *a)
{
	ListCell   *lc;

	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);
		List	   *leaves;
		ListCell   *ll;
		bool		side = mt_analysis_is_side(a, use->relid);

		/*
		 * A source whose any change recomputes needs no old values, unless
		 * its changed rows adjust by the delta rule: then they help, where
		 * the table's owner may set it (else such changes recompute).
		 */
		if (use->full && !side)
			continue;
		/* ONLY: the table alone (a partitioned one holds no rows) */
		if (use->inh)
			leaves = mt_leaf_relations(use->relid);
		else if (get_rel_relkind(use->relid) == RELKIND_RELATION)
			leaves = list_make1_oid(use->relid);
		else
			leaves = NIL;

		foreach(ll, leaves)
		{
			Oid			leaf = lfirst_oid(ll);

			/* a materialized table feeds its readers itself, not by decoding */
			if (mt_replica_identity(leaf) == REPLICA_IDENTITY_FULL ||
				OidIsValid(mt_owning_materialized_table(leaf)) ||
				(use->full && !pg_class_ownercheck(leaf, GetUserId())))
				continue;
			if (!pg_class_ownercheck(leaf, GetUserId()))
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("table \"%s\" needs REPLICA IDENTITY FULL to be followed continuously",
								get_rel_name(leaf)),
						 errdetail("Without it, the old values of updated and deleted rows are not decoded."),
						 errhint("Ask the owner of \"%s\" to run ALTER TABLE %s REPLICA IDENTITY FULL, or use REFRESH_MODE = FULL.",
								 get_rel_name(leaf), mt_qualified_name(leaf))));
			mt_set_replica_identity_full(leaf);
		}
	}
}

/*
 * The sources of correlated subqueries whose changes would name keys with
 * REPLICA IDENTITY FULL get it, where the table's owner may set it; true
 * if any did (the query is then analyzed again).
 */
static bool
grant_identity_wanted(MtAnalysis *a)
{
	ListCell   *lc;
	bool		any = false;

	foreach(lc, a->identity_wanted)
	{
		List	   *leaves = mt_leaf_relations(lfirst_oid(lc));
		ListCell   *ll;

		foreach(ll, leaves)
			if (!pg_class_ownercheck(lfirst_oid(ll), GetUserId()) ||
				OidIsValid(mt_owning_materialized_table(lfirst_oid(ll))))
				break;
		if (leaves == NIL || ll != NULL)
			continue;
		foreach(ll, leaves)
			if (mt_replica_identity(lfirst_oid(ll)) != REPLICA_IDENTITY_FULL)
				mt_set_replica_identity_full(lfirst_oid(ll));
		any = true;
	}
	return any;
}

/*
 * An incremental table's rows are read and replaced by the values of its
 * key columns every cycle: give it an index on them (as TimescaleDB does
 * for the grouping columns of continuous aggregates, and pg_ivm for its
 * views), unless an index already starts with the first of them.  Of a
 * table kept by keys, the key columns of each source's changes: a cycle
 * replaces the rows that match any of them.
 */
static void
ensure_key_index(MtTable *mt, MtAnalysis *a)
{
	ListCell   *lc;

	if (a->strategy == MT_STRATEGY_DELTAS && a->group_outputs != NIL)
		mt_ensure_index_on(mt->relid, a->group_outputs);
	/* (the rows of a TopK by keys are replaced by their keys in its state) */
	if (a->strategy != MT_STRATEGY_KEYS || a->rows_kept)
		return;
	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);
		List	   *keys = NIL;
		ListCell   *lk;

		if (use->full || use->lookup_sql)
			continue;
		foreach(lk, use->key_columns)
			keys = lappend(keys, strVal(lfirst(lk)));
		mt_ensure_index_on(mt->relid, keys);
	}
}

/*
 * A table that is its own state has each cycle update its touched groups'
 * rows.  Packed full, as its creation leaves it, a page has no room for a
 * row's new version: the update moves the row to another page, with a lock
 * record, new index entries and full-page images, WAL that the sources'
 * writers wait behind.  Room on each page lets the updates stay on their
 * page (HOT), as the hidden state tables have.  The pick-up recompute
 * writes the rows again, so the room is there from the first cycle.  A
 * fillfactor of the user's (WITH) is kept.
 */
#define MT_IN_PLACE_FILLFACTOR 90

static void
ensure_update_room(MtTable *mt, MtAnalysis *a)
{
	ListCell   *lc;
	List	   *leaves;

	if (!a->in_place)
		return;
	foreach(lc, mt->options)
		if (strcmp(((MtOption *) lfirst(lc))->key, "fillfactor") == 0)
			return;
	leaves = mt_leaf_relations(mt->relid);
	MT_INTERNAL_BEGIN();
	SPI_connect();
	foreach(lc, leaves)
		mt_spi_exec(psprintf("ALTER TABLE %s SET (fillfactor = %d)",
							 mt_qualified_name(lfirst_oid(lc)), MT_IN_PLACE_FILLFACTOR),
					SPI_OK_UTILITY);
	SPI_finish();
	MT_INTERNAL_END();
}

static void
start_pipeline(MtTable *mt)
{
	MtAnalysis *a;

	check_decoding_prerequisites();
	a = mt_analyze_query_view(mt->query_view, mt->relid);
	if (check_citus_tables(mt, a))
	{
		/* the coordinator keeps only what it shows of the table */
		ensure_replica_identity(a);
		mt_cont_state_insert(mt->relid, a);
		return;
	}
	if (grant_identity_wanted(a))
	{
		CommandCounterIncrement();
		a = mt_analyze_query_view(mt->query_view, mt->relid);
	}
	/* kept from the keys the nodes send, or refused */
	if (a->from_nodes)
		a->reason = mt_forwarded_prepare(mt, a);
	ensure_replica_identity(a);
	mt_cont_state_insert(mt->relid, a);
	if (a->strategy == MT_STRATEGY_DELTAS && !a->in_place)
		mt_deltas_create_objects(mt->relid, a);
	if (a->rows_kept)
		mt_kept_rows_create_objects(mt->relid, a);
	ensure_key_index(mt, a);
	ensure_update_room(mt, a);
}

/*
 * mt_continuous_table_rewritten
 *		A refresh from outside the worker (ALTER ... REFRESH, a cascade)
 *		wrote a table's rows from its query.  A DELTAS table that is its own
 *		state now holds changes the worker has yet to add (decoded but not
 *		applied, or kept while it was not due): the worker recomputes it
 *		instead, at its next cycle.  Other tables' rows are not their state.
 */
void
mt_continuous_table_rewritten(Oid relid)
{
	if (!mt_deltas_has_state(relid))
		mt_cont_state_need_full(list_make1_oid(relid), true);
}

/*
 * What the refresh engine tells of the rows it writes: CONTINUOUS tables
 * downstream are fed them (continuous/chain.c), the groups written into a
 * node's table of partial aggregates are logged for the coordinator
 * (continuous/partial_log.c), and a DELTAS table rewritten from its query
 * is recomputed.
 */
struct MtRowFeed
{
	MtChainFeed *chain;
	MtPartialFeed *partial;
};

static bool
observer_has_readers(Oid relid)
{
	return mt_chain_has_downstream(relid) || mt_partial_log_has(relid);
}

static MtRowFeed *
observer_begin(MtTable *mt, TupleDesc desc)
{
	MtChainFeed *chain = mt_chain_begin(mt, desc);
	MtPartialFeed *partial = mt_partial_log_begin(mt, desc);
	MtRowFeed  *feed;

	if (chain == NULL && partial == NULL)
		return NULL;
	feed = palloc(sizeof(MtRowFeed));
	feed->chain = chain;
	feed->partial = partial;
	return feed;
}

static void
observer_row(MtRowFeed *feed, HeapTuple tuple, int sign)
{
	if (feed->chain)
		mt_chain_row(feed->chain, tuple, sign);
	if (feed->partial)
		mt_partial_log_row(feed->partial, tuple);
}

static void
observer_everything(MtRowFeed *feed)
{
	if (feed->chain)
		mt_chain_everything(feed->chain);
	if (feed->partial)
		mt_partial_log_everything(feed->partial);
}

static void
observer_finish(MtRowFeed *feed)
{
	mt_chain_finish(feed->chain);
	mt_partial_log_finish(feed->partial);
}

static void
observer_rewritten(Oid relid)
{
	mt_continuous_table_rewritten(relid);
	mt_partial_log_rewritten(relid);
}

static const MtRowObserver continuous_observer = {
	.has_readers = observer_has_readers,
	.begin = observer_begin,
	.row = observer_row,
	.everything = observer_everything,
	.finish = observer_finish,
	.rewritten = observer_rewritten,
};

/*
 * mt_continuous_init
 *		At load time (_PG_init): listen to the refresh engine's writes.
 */
void
mt_continuous_init(void)
{
	mt_row_observer = &continuous_observer;
}

/*
 * mt_continuous_source_rows_replaced
 *		Rows of the relations came or went without changes to decode: a
 *		partition was attached, detached or dropped.  The CONTINUOUS tables
 *		reading them are recomputed at the worker's next cycle, and the
 *		worker reads its tables again (which partitions it follows), once
 *		this transaction commits.
 */
void
mt_continuous_source_rows_replaced(List *relids)
{
	List	   *readers = NIL;
	ListCell   *lc;

	foreach(lc, relids)
		readers = list_concat_unique_oid(readers, mt_chain_readers(lfirst_oid(lc)));
	if (readers == NIL)
		return;
	mt_cont_state_need_full(readers, false);
	mt_wake_worker_at_commit();
}

/*
 * mt_continuous_source_reanalyze
 *		A relation was set UNLOGGED or LOGGED, or its row level security was
 *		turned on or off.  An unlogged source's changes are not in the WAL,
 *		and decoded rows know nothing of policies: the CONTINUOUS tables
 *		reading it take the pipeline their query calls for now and are
 *		recomputed, in this transaction, as ALTER ... AS does.
 */
void
mt_continuous_source_reanalyze(Oid relid)
{
	ListCell   *lc;
	List	   *readers = mt_chain_readers(relid);

	/* each table, then its catalog row (see mt/catalog/catalog.h), in OID order */
	list_sort(readers, list_oid_cmp);
	foreach(lc, readers)
	{
		Oid			reader = lfirst_oid(lc);
		MtTable    *mt;

		LockRelationOid(reader, MT_REFRESH_LOCKMODE);
		/* a table dropped while we waited is not switched */
		if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(reader)))
		{
			UnlockRelationOid(reader, MT_REFRESH_LOCKMODE);
			continue;
		}
		mt = mt_catalog_lock(reader);
		if (mt != NULL && mt->refresh_mode == MT_MODE_CONTINUOUS)
			mt_continuous_query_changed(mt);
	}
	if (readers != NIL)
		mt_wake_worker_at_commit();
}

void
mt_continuous_table_created(MtTable *mt)
{
	start_pipeline(mt);
}

/*
 * mt_continuous_options_changed
 *		New WITH options reset the table's storage parameters: a table that
 *		is its own state gets its room back unless they set a fillfactor.
 */
void
mt_continuous_options_changed(MtTable *mt)
{
	ensure_update_room(mt, mt_analyze_query_view(mt->query_view, mt->relid));
}

void
mt_continuous_table_dropped(Oid relid)
{
	mt_deltas_drop_objects(relid);
	mt_partials_drop(relid);
	mt_forwarded_drop(relid);
	mt_cont_state_delete(relid);
}

/*
 * mt_continuous_query_changed
 *		ALTER ... AS on a CONTINUOUS table: the new query's pipeline replaces
 *		the old one and the table is recomputed, all in this transaction:
 *		readers see the old content until it commits and the new content
 *		after, never a mix or a gap.
 */
void
mt_continuous_query_changed(MtTable *mt)
{
	mt_continuous_table_dropped(mt->relid);
	start_pipeline(mt);
	(void) mt_refresh(mt->relid, NIL, MT_TRIGGER_ALTER);
}

/*
 * mt_continuous_slot_name
 *		The name of a database's replication slot and origin.
 */
char *
mt_continuous_slot_name(Oid dbid)
{
	return psprintf("materialized_table_%u", dbid);
}
