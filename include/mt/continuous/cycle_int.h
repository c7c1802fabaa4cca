/*-------------------------------------------------------------------------
 *
 * mt/continuous/cycle_int.h
 *	  CONTINUOUS refresh mode, the side of the per-database worker: what
 *	  its files share.  Private to them; the worker calls the functions of
 *	  mt/continuous/continuous.h.
 *
 * The files, each calling only those below it (src/continuous/cycle.c
 * says what a cycle does):
 *
 *	cycle.c			the cycle: decode, apply the batch, confirm; the state
 *					below, and the worker's entry points
 *	table_set.c		the tables followed, read from the catalog
 *	decoding.c		the slot, the origin and the decoding context
 *	apply.c			one table's work of the batch: done, or kept for later
 *	join_terms.c	the adjustments of a DELTAS table's batch; through a
 *					join, the delta rule's terms
 *	recompute.c		recomputing a table or some of its groups, and which
 *					costs less
 *	collect.c		the change sink: what decoding hands over, per table
 *	state.c			the worker's own tables (continuous_state, the
 *					baselines, the work kept for later)
 *	give_way.c		locks: giving way to DDL; backing off after failures
 *
 * forwarded.c, beside them, keeps a coordinator's table from the keys
 * Citus's nodes send, with recompute.c's filter.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_CYCLE_INT_H
#define MT_CONTINUOUS_CYCLE_INT_H

#include "access/xlogdefs.h"
#include "nodes/pg_list.h"
#include "replication/logical.h"
#include "replication/origin.h"
#include "utils/hsearch.h"
#include "utils/snapshot.h"
#include "utils/timestamp.h"

#include "mt/catalog/catalog.h"
#include "mt/continuous/analysis.h"
#include "mt/continuous/decoder.h"
#include "mt/continuous/deltas.h"
#include "mt/refresh/refresh.h"
#include "mt/utils/string_key.h"

/* A key value tuple of one family, kept once. */
typedef struct KeyEntry
{
	MtStringKey key;			/* tag: the key's family (MtSourceUse) */
} KeyEntry;

/* A row change kept for DELTAS. */
typedef struct RowChange
{
	HeapTuple	tuple;			/* in the source table's layout */
	int			sign;			/* -1 old, 1 new, 0 an update's sums
								 * (fold_update) */
	TransactionId xid;
	int			side;			/* 0: delta_source's; n: of analysis->sides'
								 * n-th */
} RowChange;

/* A key tuple a changed row of a join's side names (mt_cont_sides_decide). */
typedef struct SideKey
{
	int			family;
	char	  **values;
	int			nvalues;
} SideKey;

/* The transactions a snapshot saw (see Baselines in cycle.c). */
typedef struct Seen
{
	TransactionId xmin;
	TransactionId xmax;
	TransactionId *xip;
	int			nxip;
} Seen;

/* Groups of a DELTAS table recomputed as of a snapshot. */
typedef struct GroupBaseline
{
	Seen		seen;
	List	   *groups;			/* MtFilterFamily */
} GroupBaseline;

/* A CONTINUOUS table this worker maintains. */
typedef struct ContTable
{
	Oid			relid;
	Oid			query_view;
	List	   *reads;			/* OIDs of the relations applying reads */
	List	   *writes;			/* OIDs of the table and its partitions */
	MtAnalysis *analysis;
	int64		freshness;		/* microseconds */
	bool		synced;			/* taken up: its changes are followed */
	bool		has_baseline;
	Seen		baseline;
	XLogRecPtr	applied_lsn;	/* continuous_state.applied_lsn */
	bool		forwards;		/* a node's: logs the keys its changes name
								 * for the coordinator, holds no rows
								 * (commands/shard_partials.c) */

	/* this batch, in batch_context */
	bool		full;
	HTAB	   *keys;			/* KeyEntry */
	int64		nkeys;
	List	   *changes;		/* RowChange */
	TupleDesc	changes_layout; /* the layout of their tuples */
	int64		nchanges;
	MtDeltaSet *folded;			/* the changes, folded as they came */
	TimestampTz oldest;			/* commit time of its oldest change */
	/* changed rows of the join's other sources (MtAnalysis.sides) */
	List	   *side_changes;	/* RowChange */
	TupleDesc  *side_layouts;	/* per side, the layout of its tuples */
	List	   *side_keys;		/* SideKey: what they name, ... */
	bool		side_full;		/* ... or everything, if not adjusted by */

	/*
	 * Joined deltas read with a snapshot that may have seen transactions
	 * committed before this WAL position and not decoded then: the delta
	 * rule waits until the batches start past it (see mt_cont_sides_decide).
	 */
	XLogRecPtr	inexact_lsn;

	TimestampTz retry_after;	/* after a failure, wait before trying again */
	MtStrategy	cycle_strategy; /* how the last apply computed the rows */
	int			failures;		/* in a row, for the back-off */

	/* measured costs, to choose between keys and a full recompute */
	double		full_ms;		/* of a full recompute; 0: not measured */
	double		key_ms;			/* per key, of a large enough keys pass */
} ContTable;

/* A table's row of continuous_state, as applying reads it. */
typedef struct TableState
{
	bool		exists;
	bool		suspended;
	bool		synced;
	bool		needs_full;
	TimestampTz pending_since;	/* 0: nothing kept */
	TimestampTz last_apply;
	bool		poll;
	bool		deltas;			/* its pipeline was created for DELTAS */
} TableState;

/*
 * All the worker keeps from one cycle to the next: one of these, in
 * cycle.c, handed to the functions below.
 */
typedef struct ContWorker
{
	/* the tables followed (table_set.c) */
	MemoryContext tables_context;
	List	   *tables;			/* ContTable */
	HTAB	   *interests;		/* InterestEntry (collect.c) */
	bool		interests_callback_registered;
	bool		reread_wanted;	/* a source's row layout changed */
	List	   *unreadable;		/* Unreadable (table_set.c), in
								 * TopMemoryContext */

	/*
	 * Does continuous_state have applied_lsn (version 1.1)?  Until ALTER
	 * EXTENSION ... UPDATE, a 1.0 catalog has not: the worker then applies a
	 * batch in one transaction with the origin's progress, as 1.0 did.
	 */
	bool		applied_lsn_kept;

	/* decoding (decoding.c) */
	LogicalDecodingContext *decoding;
	RepOriginId origin;
	bool		origin_session;
	char		slot_name[NAMEDATALEN];
	XLogRecPtr	confirm_lsn;	/* applied, not yet confirmed */
	bool		plugin_warned;	/* that the output plugin is not allowed */

	/* the sink decoding feeds (collect.c); installed only while decoding */
	MtDecodeSink sink;

	/*
	 * SharedInvalidMessageCounter at the end of the last decoding (see
	 * mt_cont_decode_batch); caches_fit_for_decoding: nothing in the caches
	 * was built from today's catalogs (false until the first decoding).
	 */
	uint64		decoding_inval_count;
	bool		caches_fit_for_decoding;

	/* the batch (collect.c, cycle.c) */
	MemoryContext batch_context;
	int64		batch_changes;
	bool		batch_full;
	List	   *batch_xids;
	bool		batch_pending;	/* decoded, not applied yet */
	XLogRecPtr	pending_end;	/* where its decoding stopped */
	XLogRecPtr	batch_start;	/* where it started */
	TimestampTz batch_horizon;	/* commits before this are in it */
} ContWorker;

/* table_set.c */
extern bool mt_cont_tables_changed(ContWorker *w, List *mts);

/* decoding.c */
extern bool mt_cont_ensure_decoding(ContWorker *w);
extern bool mt_cont_acquire_slot(ContWorker *w);
extern void mt_cont_decode_batch(ContWorker *w);
extern void mt_cont_stop_decoding(ContWorker *w, bool drop);

/* apply.c */
extern bool mt_cont_process_table(ContWorker *w, ContTable *t, TimestampTz now,
								  bool quick_only);

/* join_terms.c */
extern bool mt_cont_sides_decide(ContWorker *w, ContTable *t);
extern MtDeltaSet *mt_cont_batch_deltas(ContTable *t, bool with_logged, bool sides);

/* recompute.c */
extern bool mt_cont_own_rows(ContTable *t);
extern void mt_cont_keep_state(ContTable *t);
extern MtRefreshCounts mt_cont_recompute_full(ContTable *t);
extern MtRefreshCounts mt_cont_recompute_groups(ContTable *t, List *groups);
extern double mt_cont_elapsed_ms(TimestampTz start);
extern double mt_cont_measured(double before, double now);
extern bool mt_cont_full_is_cheaper(ContTable *t, List *filter, int64 nkeys);
extern List *mt_cont_named_keys(ContTable *t, TableState *st, int64 *nkeys,
								bool *had_logged);
extern void mt_cont_measure_keys(ContTable *t, int64 nkeys, TimestampTz start);
extern List *mt_cont_keys_filter(ContTable *t, List *keys);

/* collect.c */
extern void mt_cont_interests_reset(ContWorker *w);
extern void mt_cont_sink_change(void *arg, ReorderBufferTXN *txn, Relation rel, char action,
								HeapTuple oldtup, HeapTuple newtup);
extern void mt_cont_sink_truncate(void *arg, ReorderBufferTXN *txn, Relation rel);
extern void mt_cont_note_batch_xid(ContWorker *w, TransactionId xid);
extern void mt_cont_sink_commit(void *arg, ReorderBufferTXN *txn, XLogRecPtr commit_lsn);
extern void mt_cont_batch_reset(ContWorker *w);
extern void mt_cont_forget_batch_work(ContTable *t);
extern void mt_cont_table_gives_up(ContTable *t);
extern bool mt_cont_has_batch_work(ContTable *t);
extern void mt_cont_add_key(ContWorker *w, ContTable *t, int family, char **values, int n);
extern bool mt_cont_same_layout(TupleDesc a, TupleDesc b);
extern bool mt_cont_changes_layout_current(ContTable *t);

/* state.c */
extern void mt_cont_seen_datums(Snapshot snap, Oid *types, Datum *values);
extern bool mt_cont_saw(Seen *seen, TransactionId xid);
extern bool mt_cont_catalog_keeps_applied_lsn(void);
extern void mt_cont_load_baseline(ContWorker *w, ContTable *t);
extern bool mt_cont_in_baseline(ContTable *t, TransactionId xid, XLogRecPtr commit_lsn);
extern List *mt_cont_group_baselines(Oid relid);
extern void mt_cont_record_group_baseline(Oid relid, List *groups, Snapshot snap,
										  XLogRecPtr lsn);
extern void mt_cont_forget_old_baselines(XLogRecPtr batch_end);
extern TableState mt_cont_read_state(Oid relid);
extern void mt_cont_state_exec(const char *sql, Oid relid, Oid type2, Datum value2,
							   bool null2);
extern void mt_cont_forget_logged_deltas(Oid relid);
extern void mt_cont_forget_logged_keys(Oid relid);
extern void mt_cont_note_applied_now(Oid relid, TimestampTz when);
extern void mt_cont_need_full(Oid relid);
extern void mt_cont_need_full_since(Oid relid, TimestampTz started);
extern void mt_cont_note_pending(Oid relid, TimestampTz oldest);
extern void mt_cont_note_deltas_kept(Oid relid, const char *reason);
extern void mt_cont_record_baseline(Oid relid, Snapshot snap, XLogRecPtr lsn);
extern void mt_cont_unsync_all(void);
extern List *mt_cont_logged_keys(Oid relid);
extern void mt_cont_log_keys(ContTable *t);
extern void mt_cont_note_applied(ContWorker *w, List *done, XLogRecPtr batch_end);

/* give_way.c */
extern void mt_cont_set_lock_timeout(void);
extern bool mt_cont_lock_for_apply(ContTable *t);
extern bool mt_cont_gave_way(ErrorData *edata);
extern void mt_cont_catch_lock_timeout(MemoryContext caller);
extern bool mt_cont_dropped_meanwhile(Oid relid);
extern TimestampTz mt_cont_retry_time(TimestampTz now, int64 freshness, int failures);

#endif							/* MT_CONTINUOUS_CYCLE_INT_H */
