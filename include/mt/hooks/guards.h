/*-------------------------------------------------------------------------
 *
 * mt/hooks/guards.h
 *	  Hooks that keep materialized tables written only by refreshes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_GUARDS_H
#define MT_GUARDS_H

extern void mt_guards_install(void);

#endif							/* MT_GUARDS_H */
