/*-------------------------------------------------------------------------
 *
 * mt/bgw/launcher.h
 *	  The launcher and the per-database workers: who runs, and telling them.
 *
 * The launcher (started through shared_preload_libraries) connects to no
 * database.  It keeps one worker running in each database that needs one:
 * at server start it starts a worker in every connectable, non-template
 * database, and a worker that finds nothing to do in its database exits
 * and is not started again until a backend asks for it.  Backends ask
 * after their transaction commits, so a ROLLBACK changes nothing.
 *
 * States of a database's slot in shared memory:
 *
 *	  free --(request / server start)--> wanted --(launcher)--> running
 *	  running --(nothing to do)--> free
 *	  running --(crash)--> wanted, retried after a pause
 *	  any --(DROP DATABASE)--> dropping: the worker is stopped and not
 *	  restarted until the DROP ends
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_LAUNCHER_H
#define MT_LAUNCHER_H

#include "datatype/timestamp.h"
#include "storage/latch.h"

extern void mt_launcher_init(void);
extern void mt_wake_worker_at_commit(void);
extern void mt_wake_worker_now(void);
extern void mt_launcher_at_xact_end(bool commit);
extern void mt_stop_database_worker(Oid dbid);

/* for the worker */
extern void mt_worker_attach(Oid dbid);
extern void mt_worker_detach(bool finished);
/* the slot's generation; the worker reads the catalog after calling it */
extern uint32 mt_worker_generation(Oid dbid);

/* how far the continuous pipeline has come (see mt_worker_set_horizon) */
extern void mt_worker_set_horizon(TimestampTz horizon);
extern TimestampTz mt_worker_horizon(Oid dbid);

#endif							/* MT_LAUNCHER_H */
