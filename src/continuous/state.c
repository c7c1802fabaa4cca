/*-------------------------------------------------------------------------
 *
 * src/continuous/state.c
 *	  CONTINUOUS refresh mode: the worker's own tables.
 *
 * continuous_state (a table's row: taken up or not, its baseline, how far
 * its work is applied), continuous_baseline (groups recomputed as of a
 * snapshot), change_keys and change_deltas (work kept for later), read and
 * written here; and what a snapshot kept as a baseline saw (see Baselines
 * in cycle.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"

#include "mt/continuous/cycle_int.h"
#include "mt/continuous/state.h"
#include "mt/materialized_table.h"
#include "mt/utils/spi_plans.h"

/* ---------------------------------------------------------------------
 * Baselines
 * ---------------------------------------------------------------------
 */

/* What a snapshot recorded as xmin, xmax and xip saw, in the current context. */
static Seen
seen_from(HeapTuple tup, TupleDesc desc, int first)
{
	Seen		seen;
	bool		isnull;
	Datum	   *elems;
	int			i;

	seen.xmin = DatumGetTransactionId(SPI_getbinval(tup, desc, first, &isnull));
	seen.xmax = DatumGetTransactionId(SPI_getbinval(tup, desc, first + 1, &isnull));
	deconstruct_array(DatumGetArrayTypeP(SPI_getbinval(tup, desc, first + 2, &isnull)),
					  XIDOID, sizeof(TransactionId), true, TYPALIGN_INT, &elems, NULL,
					  &seen.nxip);
	seen.xip = palloc(sizeof(TransactionId) * (seen.nxip + 1));
	for (i = 0; i < seen.nxip; i++)
		seen.xip[i] = DatumGetTransactionId(elems[i]);
	return seen;
}

/* A snapshot's xmin, xmax and xip as parameters values[0..2]. */
void
mt_cont_seen_datums(Snapshot snap, Oid *types, Datum *values)
{
	Datum	   *xip = palloc(sizeof(Datum) * (snap->xcnt + 1));
	uint32		i;

	for (i = 0; i < snap->xcnt; i++)
		xip[i] = TransactionIdGetDatum(snap->xip[i]);
	types[0] = XIDOID;
	types[1] = XIDOID;
	types[2] = XIDARRAYOID;
	values[0] = TransactionIdGetDatum(snap->xmin);
	values[1] = TransactionIdGetDatum(snap->xmax);
	values[2] = PointerGetDatum(construct_array(xip, snap->xcnt, XIDOID, sizeof(TransactionId),
												true, TYPALIGN_INT));
}

/* Did the snapshot see transaction xid (committed: it was decoded)? */
bool
mt_cont_saw(Seen *seen, TransactionId xid)
{
	int			i;

	if (TransactionIdPrecedes(xid, seen->xmin))
		return true;
	if (TransactionIdFollowsOrEquals(xid, seen->xmax))
		return false;
	for (i = 0; i < seen->nxip; i++)
		if (TransactionIdEquals(xid, seen->xip[i]))
			return false;
	return true;
}

/* Does continuous_state have applied_lsn (see ContWorker.applied_lsn_kept)? */
bool
mt_cont_catalog_keeps_applied_lsn(void)
{
	Oid			state = get_relname_relid("continuous_state", mt_internal_namespace());

	return OidIsValid(state) && get_attnum(state, "applied_lsn") != InvalidAttrNumber;
}

/* What continuous_state says of a table: synced, baseline, applied_lsn. */
void
mt_cont_load_baseline(ContWorker *w, ContTable *t)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(t->relid)};

	t->has_baseline = false;
	t->synced = false;
	SPI_connect();
	if (mt_spi_execute_saved(w->applied_lsn_kept ?
							 "SELECT synced, baseline_xmin IS NOT NULL, baseline_xmin, baseline_xmax, "
							 "baseline_xip, applied_lsn FROM materialized_table_internal.continuous_state "
							 "WHERE relid = $1" :
							 "SELECT synced, baseline_xmin IS NOT NULL, baseline_xmin, baseline_xmax, "
							 "baseline_xip, NULL::pg_catalog.pg_lsn FROM materialized_table_internal.continuous_state "
							 "WHERE relid = $1",
							 1, types, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the continuous state of \"%s\"", get_rel_name(t->relid));
	if (SPI_processed == 1)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Datum		applied;

		t->synced = DatumGetBool(SPI_getbinval(tup, desc, 1, &isnull));
		applied = SPI_getbinval(tup, desc, 6, &isnull);
		t->applied_lsn = isnull ? InvalidXLogRecPtr : DatumGetLSN(applied);
		if (DatumGetBool(SPI_getbinval(tup, desc, 2, &isnull)))
		{
			MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(t));

			t->has_baseline = true;
			t->baseline = seen_from(tup, desc, 3);
			MemoryContextSwitchTo(old);
		}
	}
	SPI_finish();
}

/*
 * Did the table's baseline snapshot already see transaction xid, or is
 * the transaction (committed at commit_lsn) in a batch whose work for the
 * table was already written (applied_lsn; see apply_batch)?
 */
bool
mt_cont_in_baseline(ContTable *t, TransactionId xid, XLogRecPtr commit_lsn)
{
	return (t->has_baseline && mt_cont_saw(&t->baseline, xid)) || commit_lsn < t->applied_lsn;
}

/* The group baselines of a DELTAS table, oldest first. */
List *
mt_cont_group_baselines(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	MemoryContext caller = CurrentMemoryContext;
	List	   *result = NIL;
	GroupBaseline *b = NULL;
	MtFilterFamily *family = NULL;
	XLogRecPtr	lsn = InvalidXLogRecPtr;
	int			family_no = -1;
	uint64		r;

	SPI_connect();
	if (mt_spi_execute_saved("SELECT lsn, family, column_name, vals, has_null, snapshot_xmin, snapshot_xmax, snapshot_xip "
							 "FROM materialized_table_internal.continuous_baseline "
							 "WHERE relid = $1 ORDER BY lsn, family, position",
							 1, types, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the baselines of \"%s\"", get_rel_name(relid));
	for (r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		MemoryContext spi = MemoryContextSwitchTo(caller);
		MtFilterColumn *col = palloc0(sizeof(MtFilterColumn));
		XLogRecPtr	row_lsn;
		int			row_family;
		Datum	   *elems;
		bool	   *nulls;
		bool		isnull;
		int			n;
		int			i;

		row_lsn = DatumGetLSN(SPI_getbinval(tup, desc, 1, &isnull));
		row_family = DatumGetInt32(SPI_getbinval(tup, desc, 2, &isnull));
		if (b == NULL || row_lsn != lsn)
		{
			b = palloc0(sizeof(GroupBaseline));
			b->seen = seen_from(tup, desc, 6);
			result = lappend(result, b);
			lsn = row_lsn;
			family = NULL;
		}
		if (family == NULL || row_family != family_no)
		{
			family = palloc0(sizeof(MtFilterFamily));
			family->rowwise = (row_family < 0);
			b->groups = lappend(b->groups, family);
			family_no = row_family;
		}
		col->name = TextDatumGetCString(SPI_getbinval(tup, desc, 3, &isnull));
		deconstruct_array(DatumGetArrayTypeP(SPI_getbinval(tup, desc, 4, &isnull)),
						  TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
		for (i = 0; i < n; i++)
			col->values = lappend(col->values, TextDatumGetCString(elems[i]));
		col->has_null = DatumGetBool(SPI_getbinval(tup, desc, 5, &isnull));
		family->columns = lappend(family->columns, col);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	return result;
}

/*
 * Record that the groups were recomputed as of snap; every transaction it
 * saw had committed before lsn.  A family whose columns are matched row by
 * row (MtFilterFamily.rowwise: the groups of a DELTAS table re-read for
 * their min or max, by two or more columns) is numbered below zero: read
 * back column by column, it would name every combination of its values,
 * and a change the snapshot saw would then add nothing to groups that
 * were not recomputed.
 */
void
mt_cont_record_group_baseline(Oid relid, List *groups, Snapshot snap, XLogRecPtr lsn)
{
	Oid			types[10] = {OIDOID, PG_LSNOID, INT4OID, INT4OID, TEXTOID, TEXTARRAYOID, BOOLOID};
	Datum		values[10];
	SPIPlanPtr	plan;
	ListCell   *lf;

	values[0] = ObjectIdGetDatum(relid);
	values[1] = LSNGetDatum(lsn);
	mt_cont_seen_datums(snap, types + 7, values + 7);
	SPI_connect();
	plan = SPI_prepare("INSERT INTO materialized_table_internal.continuous_baseline "
					   "(relid, lsn, family, position, column_name, vals, has_null, snapshot_xmin, snapshot_xmax, snapshot_xip) "
					   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)", 10, types);
	foreach(lf, groups)
	{
		MtFilterFamily *family = lfirst(lf);
		int			family_no = foreach_current_index(lf);
		ListCell   *lc;

		values[2] = Int32GetDatum(family->rowwise ? -1 - family_no : family_no);
		foreach(lc, family->columns)
		{
			MtFilterColumn *col = lfirst(lc);
			Datum	   *elems = palloc(sizeof(Datum) * (list_length(col->values) + 1));
			ListCell   *lv;

			foreach(lv, col->values)
				elems[foreach_current_index(lv)] = CStringGetTextDatum(lfirst(lv));
			values[3] = Int32GetDatum(foreach_current_index(lc));
			values[4] = CStringGetTextDatum(col->name);
			values[5] = PointerGetDatum(construct_array(elems, list_length(col->values), TEXTOID,
														-1, false, TYPALIGN_INT));
			values[6] = BoolGetDatum(col->has_null);
			if (SPI_execute_plan(plan, values, NULL, false, 0) != SPI_OK_INSERT)
				elog(ERROR, "could not record the baseline of \"%s\"", get_rel_name(relid));
		}
	}
	SPI_finish();
}

/* Baselines whose transactions have all been decoded are done with. */
void
mt_cont_forget_old_baselines(XLogRecPtr batch_end)
{
	Oid			types[1] = {PG_LSNOID};
	Datum		values[1] = {LSNGetDatum(batch_end)};

	SPI_connect();
	if (mt_spi_execute_saved("UPDATE materialized_table_internal.continuous_state "
							 "SET baseline_xmin = NULL, baseline_xmax = NULL, baseline_xip = NULL, "
							 "baseline_lsn = NULL WHERE baseline_lsn < $1",
							 1, types, values, NULL, false, 0) < 0 ||
		mt_spi_execute_saved("DELETE FROM materialized_table_internal.continuous_baseline "
							 "WHERE lsn < $1", 1, types, values, NULL, false, 0) < 0)
		elog(ERROR, "could not update the continuous state");
	SPI_finish();
}

/* ---------------------------------------------------------------------
 * continuous_state, and the work kept for later
 * ---------------------------------------------------------------------
 */

/* A table's row of continuous_state, as applying needs it. */
TableState
mt_cont_read_state(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	TableState	st = {0};

	SPI_connect();
	if (mt_spi_execute_saved("SELECT t.refresh_status = 'SUSPENDED', c.synced, c.needs_full, "
							 "c.pending_since, c.last_apply, c.poll, c.strategy = 'DELTAS' "
							 "FROM materialized_table_internal.continuous_state c "
							 "JOIN materialized_table_internal.mt_table t ON t.relid::pg_catalog.oid OPERATOR(pg_catalog.=) c.relid "
							 "WHERE c.relid = $1",
							 1, types, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the continuous state of a table");
	if (SPI_processed == 1)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Datum		d;

		st.exists = true;
		st.suspended = DatumGetBool(SPI_getbinval(tup, desc, 1, &isnull));
		st.synced = DatumGetBool(SPI_getbinval(tup, desc, 2, &isnull));
		st.needs_full = DatumGetBool(SPI_getbinval(tup, desc, 3, &isnull));
		d = SPI_getbinval(tup, desc, 4, &isnull);
		st.pending_since = isnull ? 0 : DatumGetTimestampTz(d);
		d = SPI_getbinval(tup, desc, 5, &isnull);
		st.last_apply = isnull ? 0 : DatumGetTimestampTz(d);
		st.poll = DatumGetBool(SPI_getbinval(tup, desc, 6, &isnull));
		st.deltas = DatumGetBool(SPI_getbinval(tup, desc, 7, &isnull));
	}
	SPI_finish();
	return st;
}

/* Run one statement about a table's state with its OID as $1 (and $2). */
void
mt_cont_state_exec(const char *sql, Oid relid, Oid type2, Datum value2, bool null2)
{
	Oid			types[2] = {OIDOID, type2};
	Datum		values[2] = {ObjectIdGetDatum(relid), value2};
	char		nulls[2] = {' ', null2 ? 'n' : ' '};

	SPI_connect();
	if (mt_spi_execute_saved(sql, OidIsValid(type2) ? 2 : 1, types, values, nulls, false, 0) < 0)
		elog(ERROR, "could not update the continuous state of \"%s\"", get_rel_name(relid));
	SPI_finish();
}

/* The keys kept for a table in change_keys. */
List *
mt_cont_logged_keys(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	List	   *result = NIL;
	MemoryContext caller = CurrentMemoryContext;
	uint64		r;

	SPI_connect();
	if (SPI_execute_with_args("SELECT family, keys FROM materialized_table_internal.change_keys "
							  "WHERE relid = $1", 1, types, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the kept keys of \"%s\"", get_rel_name(relid));
	for (r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		bool		isnull;
		ArrayType  *arr;
		Datum	   *elems;
		bool	   *nulls;
		int			n;
		int			i;
		MemoryContext spi = MemoryContextSwitchTo(caller);
		KeyEntry   *e = palloc0(sizeof(KeyEntry));

		e->key.tag = DatumGetInt32(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull));
		arr = DatumGetArrayTypePCopy(SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull));
		deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
		e->key.n = n;
		e->key.values = palloc(sizeof(char *) * (n + 1));
		for (i = 0; i < n; i++)
			e->key.values[i] = nulls[i] ? NULL : TextDatumGetCString(elems[i]);
		result = lappend(result, e);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	return result;
}

/* Keep the batch's keys of a table in change_keys. */
void
mt_cont_log_keys(ContTable *t)
{
	Oid			types[3] = {OIDOID, INT4OID, TEXTARRAYOID};
	HASH_SEQ_STATUS status;
	KeyEntry   *e;
	SPIPlanPtr	plan;

	if (t->keys == NULL)
		return;
	SPI_connect();
	plan = SPI_prepare("INSERT INTO materialized_table_internal.change_keys (relid, family, keys) "
					   "VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", 3, types);
	hash_seq_init(&status, t->keys);
	while ((e = hash_seq_search(&status)) != NULL)
	{
		Datum	   *elems = palloc(sizeof(Datum) * (e->key.n + 1));
		bool	   *nulls = palloc(sizeof(bool) * (e->key.n + 1));
		int			dims[1] = {e->key.n};
		int			lbs[1] = {1};
		Datum		values[3];
		int			i;

		for (i = 0; i < e->key.n; i++)
		{
			nulls[i] = (e->key.values[i] == NULL);
			elems[i] = nulls[i] ? (Datum) 0 : CStringGetTextDatum(e->key.values[i]);
		}
		values[0] = ObjectIdGetDatum(t->relid);
		values[1] = Int32GetDatum(e->key.tag);
		values[2] = PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, TEXTOID,
													   -1, false, TYPALIGN_INT));
		if (SPI_execute_plan(plan, values, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not keep the changed keys of \"%s\"", get_rel_name(t->relid));
	}
	SPI_finish();
}

/*
 * The batch's work of these tables is being written in this transaction:
 * applied_lsn says so, for decoding after a crash (mt_cont_in_baseline).
 */
void
mt_cont_note_applied(ContWorker *w, List *done, XLogRecPtr batch_end)
{
	Oid			types[2] = {OIDARRAYOID, PG_LSNOID};
	Datum		values[2];
	Datum	   *oids;
	ListCell   *lc;

	if (done == NIL || !w->applied_lsn_kept)
		return;
	oids = palloc(sizeof(Datum) * list_length(done));
	foreach(lc, done)
		oids[foreach_current_index(lc)] = ObjectIdGetDatum(((ContTable *) lfirst(lc))->relid);
	values[0] = PointerGetDatum(construct_array(oids, list_length(done), OIDOID,
												sizeof(Oid), true, TYPALIGN_INT));
	values[1] = LSNGetDatum(batch_end);
	SPI_connect();
	if (mt_spi_execute_saved("UPDATE materialized_table_internal.continuous_state SET applied_lsn = $2 "
							 "WHERE relid OPERATOR(pg_catalog.=) ANY ($1)",
							 2, types, values, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not update the continuous state");
	SPI_finish();
}

/* ---------------------------------------------------------------------
 * The other statements of the worker on continuous_state, change_keys,
 * change_deltas and continuous_baseline, each named for what it records
 * ---------------------------------------------------------------------
 */

/* The table's kept adjustments were applied (or are recomputed). */
void
mt_cont_forget_logged_deltas(Oid relid)
{
	mt_cont_state_exec("DELETE FROM materialized_table_internal.change_deltas WHERE relid = $1",
					   relid, InvalidOid, 0, false);
}

/* The table's kept keys were applied (or are recomputed). */
void
mt_cont_forget_logged_keys(Oid relid)
{
	mt_cont_state_exec("DELETE FROM materialized_table_internal.change_keys WHERE relid = $1",
					   relid, InvalidOid, 0, false);
}

/* The table is up to date as of the batch, applied at when. */
void
mt_cont_note_applied_now(Oid relid, TimestampTz when)
{
	mt_cont_state_exec("UPDATE materialized_table_internal.continuous_state "
					   "SET synced = true, needs_full = false, pending_since = NULL, last_apply = $2 "
					   "WHERE relid = $1", relid, TIMESTAMPTZOID,
					   TimestampTzGetDatum(when), false);
}

/* The table's next apply recomputes it in full. */
void
mt_cont_need_full(Oid relid)
{
	mt_cont_state_exec("UPDATE materialized_table_internal.continuous_state SET needs_full = true "
					   "WHERE relid = $1", relid, InvalidOid, 0, false);
}

/* The same, for a table that could not be followed since started. */
void
mt_cont_need_full_since(Oid relid, TimestampTz started)
{
	mt_cont_state_exec("UPDATE materialized_table_internal.continuous_state "
					   "SET needs_full = true, pending_since = pg_catalog.coalesce(pending_since, $2) "
					   "WHERE relid = $1", relid, TIMESTAMPTZOID,
					   TimestampTzGetDatum(started), false);
}

/*
 * Work of the table is kept, the oldest of it from oldest.  Past this many
 * kept keys one full recompute will do instead.
 */
#define MAX_LOGGED_KEYS			100000

void
mt_cont_note_pending(Oid relid, TimestampTz oldest)
{
	mt_cont_state_exec("UPDATE materialized_table_internal.continuous_state "
					   "SET pending_since = LEAST(pending_since, $2) WHERE relid = $1",
					   relid, TIMESTAMPTZOID, TimestampTzGetDatum(oldest), false);
	mt_cont_state_exec("UPDATE materialized_table_internal.continuous_state SET pending_since = $2 "
					   "WHERE relid = $1 AND pending_since IS NULL",
					   relid, TIMESTAMPTZOID, TimestampTzGetDatum(oldest), false);
	mt_cont_state_exec("UPDATE materialized_table_internal.continuous_state SET needs_full = true "
					   "WHERE relid = $1 AND (SELECT pg_catalog.count(*) FROM materialized_table_internal.change_keys k "
					   "WHERE k.relid = $1) > " CppAsString2(MAX_LOGGED_KEYS),
					   relid, InvalidOid, 0, false);
}

/* The table keeps a hidden state after all (DELTAS), for reason. */
void
mt_cont_note_deltas_kept(Oid relid, const char *reason)
{
	mt_cont_state_exec("UPDATE materialized_table_internal.continuous_state "
					   "SET strategy = 'DELTAS', reason = $2 WHERE relid = $1",
					   relid, TEXTOID, CStringGetTextDatum(reason), false);
}

/*
 * A full recompute of a DELTAS table read its sources with snap: that is
 * the table's baseline, every transaction of which committed before lsn.
 * It saw all that any group baseline saw.
 */
void
mt_cont_record_baseline(Oid relid, Snapshot snap, XLogRecPtr lsn)
{
	Oid			types[5] = {OIDOID};
	Datum		values[5];

	values[0] = ObjectIdGetDatum(relid);
	mt_cont_seen_datums(snap, types + 1, values + 1);
	types[4] = PG_LSNOID;
	values[4] = LSNGetDatum(lsn);
	SPI_connect();
	if (SPI_execute_with_args("UPDATE materialized_table_internal.continuous_state "
							  "SET baseline_xmin = $2, baseline_xmax = $3, baseline_xip = $4, "
							  "baseline_lsn = $5 WHERE relid = $1",
							  5, types, values, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not record the baseline of \"%s\"", get_rel_name(relid));
	SPI_finish();
	mt_cont_state_exec("DELETE FROM materialized_table_internal.continuous_baseline WHERE relid = $1",
					   relid, InvalidOid, 0, false);
}

/* The slot starts afresh: every table is taken up again, no baseline holds. */
void
mt_cont_unsync_all(void)
{
	SPI_connect();
	mt_spi_exec("UPDATE materialized_table_internal.continuous_state "
				"SET synced = false, baseline_xmin = NULL, baseline_xmax = NULL, baseline_xip = NULL",
				SPI_OK_UPDATE);
	mt_spi_exec("DELETE FROM materialized_table_internal.continuous_baseline", SPI_OK_DELETE);
	SPI_finish();
}

/* ---------------------------------------------------------------------
 * The rows of a table as its commands create, drop or change it (run in
 * the command's backend, as the extension's owner)
 * ---------------------------------------------------------------------
 */

void
mt_cont_state_insert(Oid relid, MtAnalysis *a)
{
	Oid			types[4] = {OIDOID, TEXTOID, TEXTOID, BOOLOID};
	Datum		values[4];
	MtSavedUser saved;

	values[0] = ObjectIdGetDatum(relid);
	values[1] = CStringGetTextDatum(mt_strategy_name(a->strategy));
	values[2] = CStringGetTextDatum(a->reason);
	values[3] = BoolGetDatum(a->poll);
	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (SPI_execute_with_args("INSERT INTO materialized_table_internal.continuous_state "
							  "(relid, strategy, reason, poll) VALUES ($1, $2, $3, $4)",
							  4, types, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the continuous pipeline of \"%s\"", get_rel_name(relid));
	/* (only when so: a catalog of before version 1.4 has no such table) */
	if (a->from_nodes &&
		SPI_execute_with_args("INSERT INTO materialized_table_internal.forwarded_table (relid) VALUES ($1)"
							  " ON CONFLICT (relid) DO NOTHING",
							  1, types, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the continuous pipeline of \"%s\"", get_rel_name(relid));
	/* work kept for a dropped table that had this OID is not ours */
	if (SPI_execute_with_args("DELETE FROM materialized_table_internal.change_keys WHERE relid = $1",
							  1, types, values, NULL, false, 0) < 0 ||
		SPI_execute_with_args("DELETE FROM materialized_table_internal.change_deltas WHERE relid = $1",
							  1, types, values, NULL, false, 0) < 0 ||
		SPI_execute_with_args("DELETE FROM materialized_table_internal.continuous_baseline WHERE relid = $1",
							  1, types, values, NULL, false, 0) < 0)
		elog(ERROR, "could not record the continuous pipeline of \"%s\"", get_rel_name(relid));
	SPI_finish();
	mt_as_extension_owner_end(&saved);
}

/*
 * Forget the pipeline's rows of a table (state, kept keys and adjustments).
 *
 * A worker cycle that was keeping work for the table as it was being
 * dropped may commit its rows after ours, where this DELETE could not see
 * them; such rows of tables no longer followed are removed here too, at
 * the next DROP (and a new table whose OID they carry ignores them).
 */
void
mt_cont_state_delete(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	MtSavedUser saved;

	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (SPI_execute_with_args("DELETE FROM materialized_table_internal.continuous_state WHERE relid = $1",
							  1, types, values, NULL, false, 0) < 0 ||
		SPI_execute_with_args("DELETE FROM materialized_table_internal.change_keys k "
							  "WHERE k.relid = $1 OR k.relid IN "
							  "(SELECT relid FROM materialized_table_internal.change_keys "
							  " EXCEPT SELECT relid FROM materialized_table_internal.continuous_state)",
							  1, types, values, NULL, false, 0) < 0 ||
		SPI_execute_with_args("DELETE FROM materialized_table_internal.change_deltas d "
							  "WHERE d.relid = $1 OR d.relid IN "
							  "(SELECT relid FROM materialized_table_internal.change_deltas "
							  " EXCEPT SELECT relid FROM materialized_table_internal.continuous_state)",
							  1, types, values, NULL, false, 0) < 0 ||
		SPI_execute_with_args("DELETE FROM materialized_table_internal.continuous_baseline b "
							  "WHERE b.relid = $1 OR b.relid IN "
							  "(SELECT relid FROM materialized_table_internal.continuous_baseline "
							  " EXCEPT SELECT relid FROM materialized_table_internal.continuous_state)",
							  1, types, values, NULL, false, 0) < 0)
		elog(ERROR, "could not forget the continuous pipeline of a table");
	if (OidIsValid(get_relname_relid("forwarded_table", mt_internal_namespace())) &&
		SPI_execute_with_args("DELETE FROM materialized_table_internal.forwarded_table WHERE relid = $1",
							  1, types, values, NULL, false, 0) < 0)
		elog(ERROR, "could not forget the continuous pipeline of a table");
	SPI_finish();
	mt_as_extension_owner_end(&saved);
}

/*
 * Have the worker recompute these tables at its next cycle (only DELTAS
 * ones if deltas_only), in this transaction.
 */
void
mt_cont_state_need_full(List *relids, bool deltas_only)
{
	Oid			types[1] = {OIDARRAYOID};
	Datum		values[1];
	Datum	   *oids = palloc(sizeof(Datum) * list_length(relids));
	ListCell   *lc;
	MtSavedUser saved;

	foreach(lc, relids)
		oids[foreach_current_index(lc)] = ObjectIdGetDatum(lfirst_oid(lc));
	values[0] = PointerGetDatum(construct_array(oids, list_length(relids), OIDOID,
												sizeof(Oid), true, TYPALIGN_INT));
	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (SPI_execute_with_args(deltas_only ?
							  "UPDATE materialized_table_internal.continuous_state SET needs_full = true "
							  "WHERE relid = ANY ($1) AND strategy = 'DELTAS'" :
							  "UPDATE materialized_table_internal.continuous_state SET needs_full = true "
							  "WHERE relid = ANY ($1)",
							  1, types, values, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not mark materialized tables for a recompute");
	SPI_finish();
	mt_as_extension_owner_end(&saved);
}
