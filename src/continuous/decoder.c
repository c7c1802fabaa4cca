/*-------------------------------------------------------------------------
 *
 * src/continuous/decoder.c
 *	  Logical decoding output plugin: changes straight to the worker.
 *
 * See mt/continuous/decoder.h.  The callbacks run while the reorder buffer replays a
 * committed transaction, with a historic catalog snapshot; they only
 * pass tuples on.  Changes made by the worker itself carry its replication
 * origin and are filtered out before they are even replayed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "replication/logical.h"
#include "replication/output_plugin.h"
#include "utils/guc.h"
#include "utils/varlena.h"

#include "mt/continuous/decoder.h"

PGDLLEXPORT void _PG_output_plugin_init(OutputPluginCallbacks *cb);

MtDecodeSink *mt_decode_sink = NULL;

static void
plugin_startup(LogicalDecodingContext *ctx, OutputPluginOptions *opt, bool is_init)
{
	opt->output_type = OUTPUT_PLUGIN_BINARY_OUTPUT;
	opt->receive_rewrites = false;
	if (mt_decode_sink == NULL && !is_init)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("output plugin \"%s\" is only for the materialized_table worker",
						MT_OUTPUT_PLUGIN),
				 errhint("Use pgoutput or test_decoding to read changes yourself.")));
}

static void
plugin_begin(LogicalDecodingContext *ctx, ReorderBufferTXN *txn)
{
}

static HeapTuple
tuple_of(ReorderBufferTupleBuf *buf)
{
	return buf ? &buf->tuple : NULL;
}

static void
plugin_change(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, Relation rel,
			  ReorderBufferChange *change)
{
	if (mt_decode_sink == NULL)
		return;
	switch (change->action)
	{
		case REORDER_BUFFER_CHANGE_INSERT:
		case REORDER_BUFFER_CHANGE_UPDATE:
		case REORDER_BUFFER_CHANGE_DELETE:
			mt_decode_sink->change(mt_decode_sink->arg, txn, rel,
								   change->action == REORDER_BUFFER_CHANGE_INSERT ? 'I' :
								   change->action == REORDER_BUFFER_CHANGE_UPDATE ? 'U' : 'D',
								   tuple_of(change->data.tp.oldtuple),
								   tuple_of(change->data.tp.newtuple));
			break;
		default:
			break;
	}
}

static void
plugin_truncate(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, int nrelations,
				Relation relations[], ReorderBufferChange *change)
{
	int			i;

	if (mt_decode_sink == NULL)
		return;
	for (i = 0; i < nrelations; i++)
		mt_decode_sink->truncate(mt_decode_sink->arg, txn, relations[i]);
}

static void
plugin_commit(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr commit_lsn)
{
	if (mt_decode_sink)
		mt_decode_sink->commit(mt_decode_sink->arg, txn, commit_lsn);
}

static bool
plugin_filter_by_origin(LogicalDecodingContext *ctx, RepOriginId origin_id)
{
	return mt_decode_sink != NULL && origin_id != InvalidRepOriginId &&
		origin_id == mt_decode_sink->own_origin;
}

static void
plugin_shutdown(LogicalDecodingContext *ctx)
{
}

void
_PG_output_plugin_init(OutputPluginCallbacks *cb)
{
	cb->startup_cb = plugin_startup;
	cb->begin_cb = plugin_begin;
	cb->change_cb = plugin_change;
	cb->truncate_cb = plugin_truncate;
	cb->commit_cb = plugin_commit;
	cb->filter_by_origin_cb = plugin_filter_by_origin;
	cb->shutdown_cb = plugin_shutdown;
}

/*
 * mt_output_plugin_allowed
 *		Does the server let logical decoding load this plugin?  PostgreSQL
 *		15.19 and later list the allowed output plugins in
 *		output_plugin_libraries; earlier releases allow any.
 */
bool
mt_output_plugin_allowed(void)
{
	const char *allowed = GetConfigOption("output_plugin_libraries", true, false);
	List	   *names;
	ListCell   *lc;

	if (allowed == NULL)
		return true;
	if (!SplitIdentifierString(pstrdup(allowed), ',', &names))
		return false;
	foreach(lc, names)
		if (strcmp(lfirst(lc), MT_OUTPUT_PLUGIN) == 0)
			return true;
	return false;
}
