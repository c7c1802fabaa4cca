/*-------------------------------------------------------------------------
 *
 * mt/lifecycle/restore.h
 *	  Materialized tables brought back by pg_restore (see lifecycle/restore.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_RESTORE_H
#define MT_RESTORE_H

#include "nodes/pg_list.h"

extern void mt_restore_after_utility(Node *parsetree);
extern bool mt_restore_may_write(Oid relid, bool data);
extern void mt_restore_take_up(Oid relid);
extern List *mt_restore_markers(void);
extern bool mt_restore_reconcile(Oid marker, bool retry_failed);
extern void mt_restore_before_drop(Node *parsetree);
extern bool mt_restore_session(void);

#endif							/* MT_RESTORE_H */
