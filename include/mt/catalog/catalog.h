/*-------------------------------------------------------------------------
 *
 * mt/catalog/catalog.h
 *	  The extension's catalog of materialized tables.
 *
 * One row of materialized_table_internal.mt_table per MT, keyed by the
 * MT's OID (stored as regclass so that dumps restore it by name).  MtTable
 * mirrors the row; Anum_mt_table_* number its columns for direct reads.
 *
 * Locking, in this order:
 *	  1. the MT itself (the relation), in the mode of the command: readers
 *		 AccessShareLock, ALTER MT_REFRESH_LOCKMODE, DROP AccessExclusiveLock;
 *	  2. its catalog row, FOR UPDATE (mt_catalog_lock), by every command that
 *		 changes the row or the table's pg_cron job.
 * Each checks again after its lock that the table is still there: a drop
 * that committed meanwhile makes the table "not exist" (undefined_table)
 * for commands that name it, and makes commands that go over all tables
 * (renames, DROP EXTENSION) leave it out.  DROP EXTENSION locks every MT,
 * then the whole catalog, before it reads the catalog to remove the jobs.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CATALOG_H
#define MT_CATALOG_H

#include "datatype/timestamp.h"
#include "nodes/pg_list.h"
#include "nodes/primnodes.h"
#include "utils/jsonb.h"

#include "mt/catalog/definition.h"

#define MT_CATALOG_TABLE		"mt_table"

#define Anum_mt_table_relid					1
#define Anum_mt_table_query_view			2
#define Anum_mt_table_definition_query		3
#define Anum_mt_table_refresh_mode			4
#define Anum_mt_table_freshness_value		5
#define Anum_mt_table_freshness_unit		6
#define Anum_mt_table_refresh_status		7
#define Anum_mt_table_partition_keys		8
#define Anum_mt_table_options				9
#define Anum_mt_table_declared_columns		10
#define Anum_mt_table_metadata_columns		11
#define Anum_mt_table_watermark_column		12
#define Anum_mt_table_watermark_expression	13
#define Anum_mt_table_distribution			14
#define Anum_mt_table_last_refresh_time		15
#define Anum_mt_table_scheduler				16
#define Anum_mt_table_cron_jobid			17
#define Anum_mt_table_pipeline_options		18
#define Anum_mt_table_restore_pending		19
#define Anum_mt_table_id					20
#define Natts_mt_table						20

typedef enum MtStatus
{
	MT_STATUS_INITIALIZING,
	MT_STATUS_ACTIVATED,
	MT_STATUS_SUSPENDED
} MtStatus;

typedef struct MtTable
{
	Oid			relid;
	Oid			query_view;
	char	   *definition_query;
	MtRefreshMode refresh_mode;
	int			freshness_value;
	MtFreshnessUnit freshness_unit;
	MtStatus	status;
	List	   *partition_keys;	/* String */
	List	   *options;		/* MtOption, in key order */
	bool		declared_columns;	/* CREATE gave a column list */
	List	   *metadata_columns;	/* MtOption: column name -> metadata key */
	char	   *watermark_column;
	char	   *watermark_expression;
	MtDistribution *distribution;
	TimestampTz last_refresh_time;	/* 0 when never refreshed */
	char	   *scheduler;		/* 'pg_cron' or 'worker'; NULL if none */
	int64		cron_jobid;		/* 0 when none */
	List	   *pipeline_options;	/* RESUME WITH (...): until the next
									 * SUSPEND or RESUME */
	char	   *restore_pending;	/* restored, not taken up yet: why;
									 * NULL otherwise (lifecycle/restore.c) */
	int64		id;				/* names its hidden objects; kept by dumps
								 * (the relid in a catalog of version 1.0) */
} MtTable;

extern bool mt_is_materialized_table(Oid relid);
extern Oid	mt_owning_materialized_table(Oid relid);
extern Oid	mt_owning_materialized_table_rv(RangeVar *rv);
extern MtTable *mt_catalog_lookup(Oid relid, bool missing_ok);
extern MtTable *mt_catalog_lock(Oid relid);
extern List *mt_catalog_all_relids(void);
extern void mt_catalog_insert(MtTable *mt);
extern void mt_catalog_update(MtTable *mt);
extern void mt_catalog_delete(Oid relid);
extern void mt_catalog_set_last_refresh(Oid relid, TimestampTz when);
extern void mt_catalog_cache_reset(void);

extern const char *mt_status_name(MtStatus status);
extern const char *mt_mode_name(MtRefreshMode mode);
extern const char *mt_freshness_unit_name(MtFreshnessUnit unit);
extern char *mt_option_value(List *options, const char *key);
extern Jsonb *mt_options_to_jsonb(List *options);

/* the definition of a table (its row but for what the pipeline sets), as JSON */
extern bool mt_catalog_has_restore(void);
extern int64 mt_catalog_new_id(void);
extern int64 mt_catalog_id(Oid relid);
/* is id the id of a materialized table of the catalog? */
extern bool mt_catalog_id_exists(int64 id);
extern char *mt_catalog_definition(Oid relid);
extern void mt_catalog_sync_marker(MtTable *mt);
/* a hidden object of table relid by its prefix (marker.h); InvalidOid if none */
extern Oid	mt_hidden_relid(const char *prefix, Oid relid);
extern void mt_catalog_insert_definition(Oid relid, Oid query_view, const char *definition,
										 const char *restore_pending);

#endif							/* MT_CATALOG_H */
