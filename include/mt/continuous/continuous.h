/*-------------------------------------------------------------------------
 *
 * mt/continuous/continuous.h
 *	  CONTINUOUS refresh mode: the pipeline fed by logical decoding.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_H
#define MT_CONTINUOUS_H

#include "mt/catalog/catalog.h"

/* at load time: registers the observer of the refresh engine's writes */
extern void mt_continuous_init(void);

/* backend side, in the command's transaction */
extern void mt_continuous_table_created(MtTable *mt);
extern void mt_continuous_table_dropped(Oid relid);
extern void mt_continuous_options_changed(MtTable *mt);
extern void mt_continuous_query_changed(MtTable *mt);
extern void mt_continuous_table_rewritten(Oid relid);
extern void mt_continuous_source_rows_replaced(List *relids);
extern void mt_continuous_source_reanalyze(Oid relid);

/* worker side */
extern char *mt_continuous_slot_name(Oid dbid);
extern bool mt_continuous_worker_start(List *tables);
extern bool mt_continuous_worker_tables_changed(List *tables);
extern bool mt_continuous_worker_reread_wanted(void);
extern long mt_continuous_worker_cycle(void);
extern void mt_continuous_worker_stop(bool drop_slot);
extern void mt_worker_gives_way_in_deadlocks(void);

#endif							/* MT_CONTINUOUS_H */
