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
 * decoded.  So the worker applies such terms only with a snapshot that
 * sees no transaction the batch did not decode: one taken after every
 * transaction of the batch is visible (the worker waits for that), and
 * checked against the row changes written since the batch's end to
 * what the table reads -- read from the WAL, not decoded.  Otherwise (writers committed in
 * between) the table is maintained as before this rule: the other
 * sources' changes name the groups to recompute.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam_xlog.h"
#include "access/rmgr.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogreader.h"
#include "access/xlogutils.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "storage/relfilenode.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"

#include "mt/continuous/snapshot.h"

static XLogReaderState *reader = NULL;
static XLogRecPtr scanned_to = InvalidXLogRecPtr;
static bool scan_failed = false;

/*
 * The row changes written since the batch's end, by (sub)transaction and
 * relation file (InvalidOid: any relation, as a TRUNCATE), in
 * TopMemoryContext.
 */
typedef struct WrittenRow
{
	TransactionId xid;
	Oid			relnode;
} WrittenRow;

static WrittenRow *written = NULL;
static int	nwritten = 0;
static int	maxwritten = 0;

/*
 * mt_batch_snapshot_reset
 *		A new batch was decoded up to batch_end.
 */
void
mt_batch_snapshot_reset(XLogRecPtr batch_end)
{
	scanned_to = batch_end;
	scan_failed = false;
	nwritten = 0;
}

static void scan_records(XLogRecPtr upto);

static void
note_written(TransactionId xid, Oid relnode)
{
	if (nwritten > 0 && written[nwritten - 1].xid == xid &&
		written[nwritten - 1].relnode == relnode)
		return;
	if (nwritten == maxwritten)
	{
		maxwritten = Max(256, 2 * maxwritten);
		written = written ?
			repalloc(written, sizeof(WrittenRow) * maxwritten) :
			MemoryContextAlloc(TopMemoryContext, sizeof(WrittenRow) * maxwritten);
	}
	written[nwritten].xid = xid;
	written[nwritten].relnode = relnode;
	nwritten++;
}

/*
 * Read the row changes from where the last scan stopped up to upto.  The
 * reader keeps its buffers from one scan to the next: in TopMemoryContext.
 */
static void
scan_changes(XLogRecPtr upto)
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

static void
scan_records(XLogRecPtr upto)
{
	XLogBeginRead(reader, scanned_to);
	while (reader->EndRecPtr < upto)
	{
		char	   *errm = NULL;
		XLogRecord *record = XLogReadRecord(reader, &errm);
		RmgrId		rmid;
		TransactionId xid;

		if (record == NULL)
		{
			scan_failed = true;
			return;
		}
		rmid = XLogRecGetRmid(reader);
		xid = XLogRecGetXid(reader);
		if ((rmid != RM_HEAP_ID && rmid != RM_HEAP2_ID) || !TransactionIdIsNormal(xid))
			continue;
		if (rmid == RM_HEAP_ID &&
			(XLogRecGetInfo(reader) & XLOG_HEAP_OPMASK) == XLOG_HEAP_TRUNCATE)
			note_written(xid, InvalidOid);
		for (int b = 0; b <= XLogRecMaxBlockId(reader); b++)
		{
			RelFileNode node;

			if (XLogRecGetBlockTagExtended(reader, b, &node, NULL, NULL, NULL) &&
				node.dbNode == MyDatabaseId)
				note_written(xid, node.relNode);
		}
	}
	scanned_to = reader->EndRecPtr;
}

/* The file of a relation's rows; InvalidOid if it has none (a view). */
static Oid
relation_file(Oid relid)
{
	Relation	rel = RelationIdGetRelation(relid);
	Oid			relnode = InvalidOid;

	if (!RelationIsValid(rel))
		return InvalidOid;
	if (RELKIND_HAS_STORAGE(rel->rd_rel->relkind))
		relnode = rel->rd_node.relNode;
	RelationClose(rel);
	return relnode;
}

/*
 * mt_batch_snapshot_push
 *		Push a snapshot that sees the batch, and no change committed after
 *		it to the relations relids (OIDs; those without storage are left
 *		out), and return true; false (nothing pushed) if every snapshot now
 *		sees more.  The caller has waited for the batch's transactions to
 *		be visible, and pops the snapshot.
 */
bool
mt_batch_snapshot_push(List *relids)
{
	Snapshot	snap;
	XLogRecPtr	upto;
	List	   *relnodes = NIL;
	ListCell   *lc;

	if (scan_failed || XLogRecPtrIsInvalid(scanned_to))
		return false;
	foreach(lc, relids)
	{
		Oid			relnode = relation_file(lfirst_oid(lc));

		if (OidIsValid(relnode))
			relnodes = lappend_oid(relnodes, relnode);
	}
	snap = GetLatestSnapshot();
	/* a transaction it sees wrote its changes before this */
	upto = GetXLogInsertRecPtr();
	/* (at the start of a page, past a header no record has written yet) */
	if (XLogSegmentOffset(upto, wal_segment_size) == SizeOfXLogLongPHD)
		upto -= SizeOfXLogLongPHD;
	else if (upto % XLOG_BLCKSZ == SizeOfXLogShortPHD)
		upto -= SizeOfXLogShortPHD;
	XLogFlush(upto);
	scan_changes(upto);
	if (scan_failed)
		return false;
	for (int i = 0; i < nwritten; i++)
	{
		if (OidIsValid(written[i].relnode) && !list_member_oid(relnodes, written[i].relnode))
			continue;
		/* committed after the batch, and visible */
		if (!XidInMVCCSnapshot(written[i].xid, snap) && TransactionIdDidCommit(written[i].xid))
			return false;
	}
	PushActiveSnapshot(snap);
	return true;
}
