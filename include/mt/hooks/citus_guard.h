/*-------------------------------------------------------------------------
 *
 * mt/hooks/citus_guard.h
 *	  Citus distributing a table that CONTINUOUS mode follows
 *	  (src/hooks/citus_guard.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_HOOKS_CITUS_GUARD_H
#define MT_HOOKS_CITUS_GUARD_H

extern void mt_citus_guard_install(void);

#endif							/* MT_HOOKS_CITUS_GUARD_H */
