/*-------------------------------------------------------------------------
 *
 * mt/commands/distribute.h
 *	  DISTRIBUTED BY on a database with Citus (src/commands/distribute.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_COMMANDS_DISTRIBUTE_H
#define MT_COMMANDS_DISTRIBUTE_H

#include "mt/commands/commands.h"
#include "nodes/parsenodes.h"

/* what Citus cannot distribute, refused before anything is created */
extern void mt_citus_check_distribution(MtStatement *st, MtCreateStmt *c);
/* the source the new table is co-located with (InvalidOid for none) */
extern Oid	mt_citus_colocation(MtDistribution *d, bool explicit_buckets, Query *query,
								List *planned);

#endif							/* MT_COMMANDS_DISTRIBUTE_H */
