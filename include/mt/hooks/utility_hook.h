/*-------------------------------------------------------------------------
 *
 * mt/hooks/utility_hook.h
 *	  The utility hook (src/hooks/utility_hook.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_HOOKS_UTILITY_HOOK_H
#define MT_HOOKS_UTILITY_HOOK_H

extern void mt_utility_hook_install(void);

#endif							/* MT_HOOKS_UTILITY_HOOK_H */
