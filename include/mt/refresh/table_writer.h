/*-------------------------------------------------------------------------
 *
 * mt/refresh/table_writer.h
 *	  A DestReceiver that inserts a query's rows into a materialized table.
 *
 * The refresh engine runs the defining query as a parallel-capable SELECT
 * and sends its rows here, which is what lets a refresh run at the speed of
 * REFRESH MATERIALIZED VIEW while still writing into a live table (an
 * INSERT ... SELECT would never use parallel workers).  Rows the table
 * already holds unchanged are left alone; the others are inserted
 * with index maintenance, constraint checks, stored generated columns and
 * partition routing; LIST partitions that do not exist yet are created
 * after the query finishes, for the rows that need them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_TABLE_WRITER_H
#define MT_TABLE_WRITER_H

#include "tcop/dest.h"
#include "utils/relcache.h"

#include "mt/catalog/catalog.h"

typedef struct MtWriter MtWriter;

/* the rows a refresh wrote */
typedef struct MtRefreshCounts
{
	uint64		inserted;
	uint64		deleted;
	uint64		unchanged;
} MtRefreshCounts;

extern MtWriter *mt_writer_begin(Oid relid, MtTable *mt, const char *where,
								 int nargs, Oid *argtypes, Datum *values);
extern bool mt_writer_diffs(MtWriter *writer);
extern DestReceiver *mt_writer_receiver(MtWriter *writer);
extern MtRefreshCounts mt_writer_finish(MtWriter *writer);

#endif							/* MT_TABLE_WRITER_H */
