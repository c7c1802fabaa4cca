/*-------------------------------------------------------------------------
 *
 * mt/lifecycle/ddl_followups.h
 *	  What PostgreSQL's own DDL means for materialized tables once it has
 *	  run (src/lifecycle/ddl_followups.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_LIFECYCLE_DDL_FOLLOWUPS_H
#define MT_LIFECYCLE_DDL_FOLLOWUPS_H

#include "nodes/nodes.h"

extern void mt_ddl_followups(Node *parsetree);

#endif							/* MT_LIFECYCLE_DDL_FOLLOWUPS_H */
