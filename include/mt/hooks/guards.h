/*-------------------------------------------------------------------------
 *
 * mt/hooks/guards.h
 *	  Hooks that keep materialized tables written only by refreshes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_GUARDS_H
#define MT_GUARDS_H

#include "nodes/nodes.h"

/* the ExecutorStart hook */
extern void mt_guards_install(void);
/* the utility hook's refusals */
extern void mt_guard_utility(Node *parsetree);

#endif							/* MT_GUARDS_H */
