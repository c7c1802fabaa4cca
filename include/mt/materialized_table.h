/*-------------------------------------------------------------------------
 *
 * mt/materialized_table.h
 *	  Names, settings and small helpers shared by every module.
 *
 * Vocabulary used throughout the sources:
 *	  MT			a materialized table: an ordinary heap table (or a
 *					partitioned table) whose content is its query's result
 *	  query view	the hidden view in MT_INTERNAL_SCHEMA holding the MT's
 *					defining query; PostgreSQL tracks the MT's sources
 *					through it and refreshes read from it
 *	  refresh		any write of an MT's content; only the refresh engine
 *					(src/refresh/refresh.c) performs one
 *
 *-------------------------------------------------------------------------
 */
#ifndef MATERIALIZED_TABLE_H
#define MATERIALIZED_TABLE_H

#include "postgres.h"

#include "utils/resowner.h"

#define MT_EXTENSION_NAME		"materialized_table"
#define MT_SCHEMA				"materialized_table"
#define MT_INTERNAL_SCHEMA		"materialized_table_internal"

/* settings (src/materialized_table.c) */
extern int	mt_freshness_threshold;			/* seconds */
extern int	mt_default_freshness_continuous;	/* seconds */
extern int	mt_default_freshness_full;		/* seconds */
extern int	mt_history_retention;			/* seconds; 0 keeps everything */
extern bool mt_conversion_from_table;		/* CREATE OR ALTER converts a table */

/* statements on materialized tables need the library preloaded */
extern void mt_require_preload(void);

/* error position into the statement text handed to execute() */
extern int	mt_errposition(const char *source, int location);

/* is the extension installed (and not being created or dropped) here? */
extern bool mt_extension_ready(void);
extern Oid	mt_internal_namespace(void);
extern Oid	mt_extension_owner(void);

/*
 * The extension's own statements on its private tables (the catalog, the
 * refresh history) and on pg_cron's run with the rights of the extension's
 * owner and search_path = pg_catalog, whoever calls: users of materialized
 * tables may not touch those tables directly.  Only fixed, schema-qualified
 * SQL runs this way.  An error in between is undone by the (sub)transaction.
 */
typedef struct MtSavedUser
{
	Oid			userid;
	int			sec_context;
	int			nestlevel;
} MtSavedUser;

extern void mt_as_extension_owner_begin(MtSavedUser *saved);
extern void mt_as_extension_owner_end(MtSavedUser *saved);

/* search_path = pg_catalog, pg_temp for the extension's own SQL */
extern int	mt_pin_search_path(void);
extern void mt_unpin_search_path(int nestlevel);

/*
 * The extension's own writes and DDL on MTs pass the guards only while
 * mt_internal_depth > 0.  Use MT_INTERNAL_BEGIN/END around them; the depth
 * is reset at transaction end, so an error in between leaves nothing open.
 */
extern int	mt_internal_depth;
extern void mt_internal_reset(void);

/*
 * An internal subtransaction whose failure the caller records before
 * going on: begin, then commit in PG_TRY or rollback in PG_CATCH (which
 * returns the error, copied into the caller's memory context).
 */
typedef struct MtSubxact
{
	MemoryContext caller;
	ResourceOwner owner;
	int			internal_depth;
} MtSubxact;

extern void mt_subxact_begin(MtSubxact *sub);
extern void mt_subxact_commit(MtSubxact *sub);
extern struct ErrorData *mt_subxact_rollback(MtSubxact *sub);

#endif							/* MATERIALIZED_TABLE_H */
