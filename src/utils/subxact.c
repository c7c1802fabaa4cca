/*-------------------------------------------------------------------------
 *
 * src/utils/subxact.c
 *	  The internal-write depth that lets the extension's own writes and DDL
 *	  pass its guards, and internal subtransactions that restore it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"

#include "mt/utils/subxact.h"

int			mt_internal_depth = 0;

void
mt_internal_reset(void)
{
	mt_internal_depth = 0;
}

void
mt_subxact_begin(MtSubxact *sub)
{
	sub->caller = CurrentMemoryContext;
	sub->owner = CurrentResourceOwner;
	sub->internal_depth = mt_internal_depth;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(sub->caller);
}

void
mt_subxact_commit(MtSubxact *sub)
{
	ReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(sub->caller);
	CurrentResourceOwner = sub->owner;
}

ErrorData *
mt_subxact_rollback(MtSubxact *sub)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(sub->caller);
	edata = CopyErrorData();
	FlushErrorState();
	RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(sub->caller);
	CurrentResourceOwner = sub->owner;
	mt_internal_depth = sub->internal_depth;
	return edata;
}
