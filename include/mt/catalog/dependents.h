/*-------------------------------------------------------------------------
 *
 * mt/catalog/dependents.h
 *	  What materialized tables' queries read (src/catalog/dependents.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CATALOG_DEPENDENTS_H
#define MT_CATALOG_DEPENDENTS_H

#include "access/attnum.h"
#include "nodes/pg_list.h"

extern bool mt_catalog_query_reads(Oid viewid, Oid relid);
extern Oid	mt_catalog_column_reader(Oid relid, AttrNumber attnum);
extern List *mt_catalog_dropped_tables(void);

#endif							/* MT_CATALOG_DEPENDENTS_H */
