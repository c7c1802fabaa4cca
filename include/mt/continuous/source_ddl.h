/*-------------------------------------------------------------------------
 *
 * mt/continuous/source_ddl.h
 *	  DDL on sources that CONTINUOUS mode must hear of
 *	  (src/continuous/source_ddl.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_SOURCE_DDL_H
#define MT_CONTINUOUS_SOURCE_DDL_H

#include "nodes/pg_list.h"
#include "nodes/nodes.h"

typedef struct MtSourceDdl
{
	List	   *rows_replaced;	/* tables whose rows the statement replaces */
	Oid			reanalyze;		/* table whose changes must be looked at again */
} MtSourceDdl;

extern void mt_source_ddl_before(Node *parsetree, MtSourceDdl *ddl);
extern void mt_source_ddl_after(MtSourceDdl *ddl);

#endif							/* MT_CONTINUOUS_SOURCE_DDL_H */
