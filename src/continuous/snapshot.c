/*-------------------------------------------------------------------------
 *
 * src/continuous/snapshot.c
 *	  A snapshot that sees exactly the transactions a batch decoded.
 *
 * Deltas through a join read the sources other than the changed one as
 * they are when the worker applies.  With the changes of two sources of
 * one join in a batch, the standard rule
 *
 *	  Q(R', S') - Q(R, S) = dR join S' + R' join dS - dR join dS
 *
 * holds only if R' and S' are the sources as the batch leaves them: a
 * transaction committed after the batch's end, but already visible when
 * applying, would be counted now through the join and again when it is
 * decoded.  So the worker applies such terms with a snapshot that sees no
 * transaction the batch did not decode: one taken once every transaction
 * of the batch is visible (the worker waits for that), in which the
 * transactions whose commit records follow the batch's end -- read from
 * the WAL, not decoded -- count as still running (added to its xip, their
 * committed subtransactions, which the commit records list, to its subxip).
 *
 * That snapshot needs the row versions those transactions deleted or
 * updated, which pruning and VACUUM remove once no snapshot needs them.
 * So before decoding a batch the worker holds, through its slot's xmin,
 * the oldest transaction still running (mt_batch_hold), until the batch is
 * applied: every transaction that commits after that point is no older,
 * and its old row versions stay.  Its own xmin cannot do it: the horizons
 * leave a process out while it decodes (it holds a logical slot), and its
 * transactions end between decoding and applying.  A commit record past
 * the batch's end belongs to a transaction that committed after the hold
 * began if the batch's end is past the WAL position the hold was set at;
 * else (a batch cut at its size limit) the snapshot is made only if no
 * such transaction is visible.
 *
 * The catalog is not read with that snapshot: a transaction counted as
 * running that changed a relation the table reads (its commit carries an
 * invalidation of the relation: TRUNCATE, a rewrite, an index, a
 * constraint) makes the snapshot impossible, as do more such transactions
 * than MAX_LATER_XIDS, or a lock on what the table reads the worker cannot
 * take at once.  Otherwise (and without the hold) the table is maintained
 * as before this rule: the other sources' changes name the groups to
 * recompute.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/rmgr.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "storage/sinval.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "mt/continuous/snapshot.h"

/*
 * More transaction ids than this committed after a batch (with their
 * subtransactions) are not made running: every visibility check of a
 * recent row would go through them.
 */
#define MAX_LATER_XIDS		10000

static XLogReaderState *reader = NULL;
static XLogRecPtr batch_end = InvalidXLogRecPtr;
static XLogRecPtr scanned_to = InvalidXLogRecPtr;
static bool scan_failed = false;

/* the slot's xmin the worker holds (mt_batch_hold), and since where */
static TransactionId hold_xmin = InvalidTransactionId;
static XLogRecPtr hold_lsn = InvalidXLogRecPtr;
static ReplicationSlot *held_slot = NULL;
static NameData held_slot_name;

/*
 * The transactions committed after the batch's end, in TopMemoryContext:
 * each with its committed subtransactions and the relations whose
 * definitions it changed (InvalidOid: every relation).
 */
typedef struct LaterCommit
{
	TransactionId xid;
	int			first_sub;		/* in later_subxids */
	int			nsubs;
	int			first_rel;		/* in later_rels */
	int			nrels;
} LaterCommit;

static LaterCommit *later = NULL;
static int	nlater = 0;
static int	maxlater = 0;
static TransactionId *later_subxids = NULL;
static int	nsubxids = 0;
static int	maxsubxids = 0;
static Oid *later_rels = NULL;
static int	nrels = 0;
static int	maxrels = 0;

/* Room for one more element of an array in TopMemoryContext. */
static void *
grow(void *array, int n, int *max, Size size)
{
	if (n < *max)
		return array;
	*max = Max(256, 2 * *max);
	return array ? repalloc(array, size * *max) :
		MemoryContextAlloc(TopMemoryContext, size * *max);
}

/*
 * The WAL position after every record inserted so far (a transaction
 * visible now wrote its commit record before it), flushed.
 */
static XLogRecPtr
wal_position(void)
{
	XLogRecPtr	pos = GetXLogInsertRecPtr();

	/* (at the start of a page, past a header no record has written yet) */
	if (XLogSegmentOffset(pos, wal_segment_size) == SizeOfXLogLongPHD)
		pos -= SizeOfXLogLongPHD;
	else if (pos % XLOG_BLCKSZ == SizeOfXLogShortPHD)
		pos -= SizeOfXLogShortPHD;
	XLogFlush(pos);
	return pos;
}

/*
 * The worker exits holding an xmin (an error, a shutdown): release it,
 * which the shutdown checkpoint would otherwise save with the slot.  The
 * slot is held by no one between decoding and applying.
 */
static void
release_at_exit(int code, Datum arg)
{
	ReplicationSlot *slot = held_slot;

	if (!TransactionIdIsValid(hold_xmin) || slot == NULL)
		return;
	LWLockReleaseAll();			/* (an error may have left some held) */
	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	SpinLockAcquire(&slot->mutex);
	if (slot->in_use && strcmp(NameStr(slot->data.name), NameStr(held_slot_name)) == 0 &&
		(slot->active_pid == 0 || slot->active_pid == MyProcPid) &&
		slot->data.xmin == hold_xmin)
	{
		slot->data.xmin = InvalidTransactionId;
		slot->effective_xmin = InvalidTransactionId;
		/* (for the shutdown checkpoint) */
		slot->just_dirtied = true;
		slot->dirty = true;
	}
	SpinLockRelease(&slot->mutex);
	LWLockRelease(ReplicationSlotControlLock);
	hold_xmin = InvalidTransactionId;
	ReplicationSlotsComputeRequiredXmin(false);
}

/*
 * mt_batch_hold
 *		With hold, make the slot (held by this process) hold back the
 *		removal of the row versions any transaction running now deletes,
 *		until the next call; without, release that.  Called before a batch
 *		is decoded, and once it is applied.
 */
void
mt_batch_hold(bool hold)
{
	ReplicationSlot *slot = MyReplicationSlot;
	TransactionId xmin = InvalidTransactionId;
	bool		changed;
	bool		left;
	bool		released;

	hold_lsn = InvalidXLogRecPtr;
	if (slot == NULL)
	{
		hold_xmin = InvalidTransactionId;	/* the slot is gone */
		return;
	}
	if (hold)
		xmin = GetOldestActiveTransactionId();
	SpinLockAcquire(&slot->mutex);
	changed = slot->data.xmin != xmin || slot->effective_xmin != xmin;
	/* left by a worker that stopped while holding it */
	left = TransactionIdIsValid(slot->data.xmin) && !TransactionIdIsValid(hold_xmin);
	released = TransactionIdIsValid(slot->data.xmin) && !hold;
	slot->data.xmin = xmin;
	slot->effective_xmin = xmin;
	SpinLockRelease(&slot->mutex);
	hold_xmin = xmin;
	if (held_slot == NULL)
		before_shmem_exit(release_at_exit, 0);
	held_slot = slot;
	namestrcpy(&held_slot_name, NameStr(slot->data.name));
	if (changed)
		ReplicationSlotsComputeRequiredXmin(false);

	/*
	 * Decoding saves the slot, with the hold, when it confirms a position:
	 * the next save (this one, for a hold left) leaves it out.
	 */
	if (released)
		ReplicationSlotMarkDirty();
	if (left)
		ReplicationSlotSave();
	/* a transaction that commits after this is no older than xmin */
	if (hold)
		hold_lsn = wal_position();
}

/*
 * mt_batch_holding
 *		Does the worker hold an xmin (to release once the batch is applied)?
 */
bool
mt_batch_holding(void)
{
	return TransactionIdIsValid(hold_xmin);
}

/*
 * mt_batch_snapshot_reset
 *		A new batch was decoded up to end.
 */
void
mt_batch_snapshot_reset(XLogRecPtr end)
{
	batch_end = end;
	scanned_to = end;
	scan_failed = false;
	nlater = nsubxids = nrels = 0;
}

/* A commit record read after the batch's end. */
static void
note_commit(TransactionId xid, xl_xact_parsed_commit *parsed)
{
	LaterCommit *c;

	if (nlater + nsubxids + parsed->nsubxacts >= MAX_LATER_XIDS)
	{
		scan_failed = true;
		return;
	}
	later = grow(later, nlater, &maxlater, sizeof(LaterCommit));
	c = &later[nlater++];
	c->xid = xid;
	c->first_sub = nsubxids;
	c->nsubs = parsed->nsubxacts;
	c->first_rel = nrels;
	c->nrels = 0;
	for (int i = 0; i < parsed->nsubxacts; i++)
	{
		later_subxids = grow(later_subxids, nsubxids, &maxsubxids, sizeof(TransactionId));
		later_subxids[nsubxids++] = parsed->subxacts[i];
	}
	for (int i = 0; i < parsed->nmsgs; i++)
	{
		SharedInvalidationMessage *msg = &parsed->msgs[i];

		if (msg->id != SHAREDINVALRELCACHE_ID ||
			(msg->rc.dbId != MyDatabaseId && OidIsValid(msg->rc.dbId)))
			continue;
		later_rels = grow(later_rels, nrels, &maxrels, sizeof(Oid));
		later_rels[nrels++] = msg->rc.relId;
		c->nrels++;
	}
}

/* The commit records from where the last scan stopped up to upto. */
static void
scan_records(XLogRecPtr upto)
{
	XLogBeginRead(reader, scanned_to);
	while (reader->EndRecPtr < upto && !scan_failed)
	{
		char	   *errm = NULL;
		XLogRecord *record = XLogReadRecord(reader, &errm);
		uint8		info;
		xl_xact_parsed_commit parsed;

		if (record == NULL)
		{
			scan_failed = true;
			return;
		}
		info = XLogRecGetInfo(reader) & XLOG_XACT_OPMASK;
		if (XLogRecGetRmid(reader) != RM_XACT_ID ||
			(info != XLOG_XACT_COMMIT && info != XLOG_XACT_COMMIT_PREPARED))
			continue;
		ParseCommitRecord(XLogRecGetInfo(reader), (xl_xact_commit *) XLogRecGetData(reader),
						  &parsed);
		note_commit(info == XLOG_XACT_COMMIT_PREPARED ? parsed.twophase_xid : XLogRecGetXid(reader),
					&parsed);
	}
	scanned_to = reader->EndRecPtr;
}

/*
 * Read the commit records up to upto.  The reader keeps its buffers from
 * one scan to the next: in TopMemoryContext.
 */
static void
scan_commits(XLogRecPtr upto)
{
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	if (reader == NULL)
		reader = XLogReaderAllocate(wal_segment_size, NULL,
									XL_ROUTINE(.page_read = read_local_xlog_page,
											   .segment_open = wal_segment_open,
											   .segment_close = wal_segment_close),
									NULL);
	if (reader == NULL)
		scan_failed = true;
	else
		scan_records(upto);
	MemoryContextSwitchTo(old);
}

/* Did the commit change the definition of one of relids? */
static bool
redefines(LaterCommit *c, List *relids)
{
	for (int i = c->first_rel; i < c->first_rel + c->nrels; i++)
		if (!OidIsValid(later_rels[i]) || list_member_oid(relids, later_rels[i]))
			return true;
	return false;
}

/*
 * The snapshot snap with the transactions of the commits visible in it
 * (visible, nvisible of them) counted as running; NULL if it cannot be made
 * (see the file's header).
 */
static Snapshot
without_later_commits(Snapshot snap, LaterCommit **visible, int nvisible)
{
	Snapshot	result;
	TransactionId xmin = snap->xmin;
	int			nsubs = 0;

	if (!TransactionIdIsValid(hold_xmin) || XLogRecPtrIsInvalid(hold_lsn) || hold_lsn > batch_end)
		return NULL;
	for (int i = 0; i < nvisible; i++)
	{
		LaterCommit *c = visible[i];

		/* (no older than the hold, as the hold's position says) */
		if (TransactionIdPrecedes(c->xid, hold_xmin))
			return NULL;
		if (TransactionIdPrecedes(c->xid, xmin))
			xmin = c->xid;
		for (int s = c->first_sub; s < c->first_sub + c->nsubs; s++)
			if (TransactionIdPrecedes(later_subxids[s], hold_xmin))
				return NULL;
		nsubs += c->nsubs;
	}

	/*
	 * Past its subxip, a snapshot finds a transaction's subtransactions in
	 * pg_subtrans, which keeps those of transactions from its xmin only.
	 */
	if (snap->suboverflowed && TransactionIdPrecedes(xmin, snap->xmin))
		return NULL;

	result = palloc(sizeof(SnapshotData));
	memcpy(result, snap, sizeof(SnapshotData));
	result->xmin = xmin;
	result->xip = palloc(sizeof(TransactionId) * (snap->xcnt + nvisible));
	memcpy(result->xip, snap->xip, sizeof(TransactionId) * snap->xcnt);
	if (!snap->suboverflowed)
	{
		result->subxip = palloc(sizeof(TransactionId) * (snap->subxcnt + nsubs + 1));
		memcpy(result->subxip, snap->subxip, sizeof(TransactionId) * snap->subxcnt);
	}
	for (int i = 0; i < nvisible; i++)
	{
		LaterCommit *c = visible[i];

		result->xip[result->xcnt++] = c->xid;
		if (!snap->suboverflowed)
			for (int s = c->first_sub; s < c->first_sub + c->nsubs; s++)
				result->subxip[result->subxcnt++] = later_subxids[s];
	}
	result->copied = false;		/* PushActiveSnapshot copies it */
	result->active_count = 0;
	result->regd_count = 0;
	return result;
}

/*
 * mt_batch_snapshot_push
 *		Push a snapshot that sees the batch, and nothing committed after it,
 *		for reading the relations relids (OIDs), and return true; false
 *		(nothing pushed) if it cannot be made.  The caller has waited for
 *		the batch's transactions to be visible, and pops the snapshot.
 */
bool
mt_batch_snapshot_push(List *relids)
{
	Snapshot	snap;
	LaterCommit **visible;
	int			nvisible = 0;
	ListCell   *lc;

	if (scan_failed || XLogRecPtrIsInvalid(batch_end))
		return false;
	/* no DDL on them until the terms are read (applying has them already) */
	foreach(lc, relids)
		if (!ConditionalLockRelationOid(lfirst_oid(lc), AccessShareLock))
			return false;
	snap = GetLatestSnapshot();
	/* every transaction it sees wrote its commit record before this */
	scan_commits(wal_position());
	if (scan_failed)
		return false;
	visible = palloc(sizeof(LaterCommit *) * (nlater + 1));
	for (int i = 0; i < nlater; i++)
	{
		if (XidInMVCCSnapshot(later[i].xid, snap))
			continue;			/* running when it was taken */
		if (redefines(&later[i], relids))
			return false;
		visible[nvisible++] = &later[i];
	}
	if (nvisible > 0)
	{
		snap = without_later_commits(snap, visible, nvisible);
		if (snap == NULL)
			return false;
	}
	PushActiveSnapshot(snap);
	return true;
}
