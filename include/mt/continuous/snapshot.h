/*-------------------------------------------------------------------------
 *
 * mt/continuous/snapshot.h
 *	  A snapshot that sees exactly what a batch decoded (see
 *	  continuous/snapshot.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_SNAPSHOT_H
#define MT_CONTINUOUS_SNAPSHOT_H

#include "access/xlogdefs.h"
#include "nodes/pg_list.h"

extern void mt_batch_hold(bool hold);
extern bool mt_batch_holding(void);
extern void mt_batch_snapshot_reset(XLogRecPtr end);
extern bool mt_batch_snapshot_push(List *relids);

#endif							/* MT_CONTINUOUS_SNAPSHOT_H */
