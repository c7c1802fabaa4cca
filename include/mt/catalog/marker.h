/*-------------------------------------------------------------------------
 *
 * mt/catalog/marker.h
 *	  The restore marker of a materialized table (see catalog/marker.c) and the
 *	  names of hidden objects.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_MARKER_H
#define MT_MARKER_H

#include "mt/catalog/catalog.h"

#define MT_MARKER_PREFIX	"restore_"

extern char *mt_hidden_name(const char *prefix, int64 id);
extern void mt_hidden_part_of(Oid part, Oid relid);
extern bool mt_marker_is(Oid rel);
extern bool mt_marker_targets(Oid marker, Oid *table, Oid *query_view);
extern void mt_marker_sync(MtTable *mt, const char *definition);

#endif							/* MT_MARKER_H */
