/*-------------------------------------------------------------------------
 *
 * mt/continuous/decoder.h
 *	  The logical decoding output plugin of the extension's library.
 *
 * The plugin produces no output: the worker that decodes (in its own
 * process) installs a sink, and the plugin hands it each change of a
 * committed transaction as PostgreSQL decoded it -- tuples, not text.  The
 * plugin is only for that worker: used through the SQL functions or
 * replication protocol, it refuses to start.
 *
 * Since PostgreSQL 15.19 a slot may only use an output plugin listed in
 * output_plugin_libraries; it must include materialized_table.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_DECODER_H
#define MT_DECODER_H

#include "access/htup.h"
#include "replication/origin.h"
#include "replication/reorderbuffer.h"
#include "utils/relcache.h"

typedef struct MtDecodeSink
{
	/* one row change ('I', 'U' or 'D'); oldtup/newtup may be NULL */
	void		(*change) (void *arg, ReorderBufferTXN *txn, Relation rel, char action,
						   HeapTuple oldtup, HeapTuple newtup);
	void		(*truncate) (void *arg, ReorderBufferTXN *txn, Relation rel);
	void		(*commit) (void *arg, ReorderBufferTXN *txn, XLogRecPtr commit_lsn);
	void	   *arg;
	RepOriginId own_origin;		/* changes of this origin are skipped */
} MtDecodeSink;

/* set by the worker around its decoding; NULL otherwise */
extern MtDecodeSink *mt_decode_sink;

#define MT_OUTPUT_PLUGIN	"materialized_table"

/* may decoding load it (output_plugin_libraries)? */
extern bool mt_output_plugin_allowed(void);

#endif							/* MT_DECODER_H */
