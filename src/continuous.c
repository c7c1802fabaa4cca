/* TODO(issue 4): placeholder so the foundation builds; replaced by the real pipeline. */
#include "postgres.h"
#include "continuous.h"

void mt_continuous_table_created(MtTable *mt) {}
void mt_continuous_table_dropped(Oid relid) {}
void mt_continuous_query_changed(MtTable *mt) {}
void mt_continuous_worker_start(List *tables) {}
void mt_continuous_worker_tables_changed(List *tables) {}
long mt_continuous_worker_cycle(void) { return 1000; }
void mt_continuous_worker_stop(bool drop_slot) {}
