/*-------------------------------------------------------------------------
 *
 * mt/utils/relations.h
 *	  Relations around a table (src/utils/relations.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_UTILS_RELATIONS_H
#define MT_UTILS_RELATIONS_H

#include "access/attnum.h"
#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"

/* the plain tables of relid's inheritance tree (relid itself if plain), by OID */
extern List *mt_leaf_relations(Oid relid);
/* every table relid inherits from, directly or not */
extern List *mt_ancestor_relations(Oid relid);
/* the names (char *) of relid's primary key columns, NIL without one */
extern List *mt_primary_key_columns(Oid relid);
/* REPLICA_IDENTITY_FULL, ... */
extern char mt_replica_identity(Oid relid);
extern void mt_set_replica_identity_full(Oid relid);
/* COMMENT ON the relation (attnum 0) or a column of it */
extern void mt_comment_on(Oid relid, AttrNumber attnum, const char *comment);
/* a copy of a view's query */
extern Query *mt_view_query(Oid view);
/* an index on the columns (char *), unless one starts with the first */
extern void mt_ensure_index_on(Oid relid, List *columns);

#endif							/* MT_UTILS_RELATIONS_H */
