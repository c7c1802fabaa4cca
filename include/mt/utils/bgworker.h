/*-------------------------------------------------------------------------
 *
 * mt/utils/bgworker.h
 *	  The set-up of the extension's background processes
 *	  (src/utils/bgworker.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_UTILS_BGWORKER_H
#define MT_UTILS_BGWORKER_H

#include "postmaster/bgworker.h"

extern void mt_bgworker_describe(BackgroundWorker *worker, const char *type, const char *name,
								 const char *function, int restart_time);
extern void mt_bgworker_signals(void);
extern void mt_bgworker_connect(Oid dbid, Oid userid, const char *appname);

#endif							/* MT_UTILS_BGWORKER_H */
