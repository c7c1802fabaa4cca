/*-------------------------------------------------------------------------
 *
 * mt/utils/subxact.h
 *	  The internal-write depth and internal subtransactions
 *	  (src/utils/subxact.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_UTILS_SUBXACT_H
#define MT_UTILS_SUBXACT_H

#include "utils/resowner.h"

/*
 * The extension's own writes and DDL on MTs pass the guards only while
 * mt_internal_depth > 0: bracket them with MT_INTERNAL_BEGIN() and
 * MT_INTERNAL_END().  The depth is reset at transaction end and by
 * mt_subxact_rollback, so an error in between leaves nothing open.
 */
extern int	mt_internal_depth;
extern void mt_internal_reset(void);

#define MT_INTERNAL_BEGIN()		(mt_internal_depth++)
#define MT_INTERNAL_END()		(mt_internal_depth--)
#define MT_INTERNAL_ACTIVE()	(mt_internal_depth > 0)

/*
 * An internal subtransaction whose failure the caller records before
 * going on: begin, then commit in PG_TRY or rollback in PG_CATCH (which
 * returns the error, copied into the caller's memory context).
 */
typedef struct MtSubxact
{
	MemoryContext caller;
	ResourceOwner owner;
	int			internal_depth;
} MtSubxact;

extern void mt_subxact_begin(MtSubxact *sub);
extern void mt_subxact_commit(MtSubxact *sub);
extern struct ErrorData *mt_subxact_rollback(MtSubxact *sub);

#endif							/* MT_UTILS_SUBXACT_H */
