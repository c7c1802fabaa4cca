/*-------------------------------------------------------------------------
 *
 * src/commands/create.c
 *	  CREATE [OR ALTER] MATERIALIZED TABLE.
 *
 * A new table is built in this order, all in the caller's transaction:
 * validate everything (so a rejected statement leaves nothing behind),
 * create the table, keep its query as a hidden view, record it in the
 * catalog, fill it, and hand it to its refresh pipeline.  The pipeline
 * (a pg_cron job, or the background worker) only takes effect when the
 * transaction commits.
 *
 * CREATE OR ALTER on an existing materialized table behaves like ALTER
 * ... AS plus any other changed property; an identical statement changes
 * nothing.  On a table that is not a materialized table, it converts the
 * table in place when materialized_table.conversion_from_table is on.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_namespace.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "mt/commands/commands.h"
#include "mt/commands/create_plan.h"
#include "mt/commands/distribute.h"
#include "mt/utils/date_format.h"
#include "mt/catalog/freshness.h"
#include "mt/catalog/lineage.h"
#include "mt/materialized_table.h"
#include "mt/refresh/partitions.h"
#include "mt/lifecycle/pipeline.h"
#include "mt/refresh/refresh.h"
#include "mt/utils/relations.h"
#include "mt/utils/spi_plans.h"
#include "mt/refresh/shards.h"
#include "mt/utils/citus.h"
#include "mt/utils/sql.h"

static bool
equal_bound(List *a, List *b)
{
	ListCell   *la;
	ListCell   *lb;

	forboth(la, a, lb, b)
		if (strcmp(lfirst(la), lfirst(lb)) != 0)
			return false;
	return true;
}

/* Same options, in any order? */
static bool
equal_options(List *a, List *b)
{
	ListCell   *lc;

	if (list_length(a) != list_length(b))
		return false;
	foreach(lc, a)
	{
		MtOption   *opt = lfirst(lc);
		char	   *other = mt_option_value(b, opt->key);

		if (other == NULL || strcmp(other, opt->value) != 0)
			return false;
	}
	return true;
}

static char *
create_table_sql(const char *qualified, List *planned, MtPrimaryKey *pk,
				 MtCreateStmt *c, MtDistribution *d, List *options)
{
	StringInfoData sql;
	ListCell   *lc;
	bool		first = true;

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s (", qualified);
	foreach(lc, planned)
	{
		PlannedColumn *pc = lfirst(lc);

		appendStringInfo(&sql, "%s\n  %s %s", first ? "" : ",",
						 quote_identifier(pc->name),
						 mt_type_sql(pc->typid, pc->typmod));
		first = false;
		if (OidIsValid(pc->collid) && pc->collid != get_typcollation(pc->typid))
		{
			HeapTuple	tup = SearchSysCache1(COLLOID, ObjectIdGetDatum(pc->collid));
			Form_pg_collation coll;

			if (!HeapTupleIsValid(tup))
				elog(ERROR, "cache lookup failed for collation %u", pc->collid);
			coll = (Form_pg_collation) GETSTRUCT(tup);
			appendStringInfo(&sql, " COLLATE %s",
							 quote_qualified_identifier(get_namespace_name(coll->collnamespace),
														NameStr(coll->collname)));
			ReleaseSysCache(tup);
		}
		if (pc->kind == MT_COLUMN_COMPUTED)
			appendStringInfo(&sql, " GENERATED ALWAYS AS (\n%s\n) STORED", pc->expr_text);
		if (pc->not_null)
			appendStringInfoString(&sql, " NOT NULL");
	}
	if (pk)
	{
		appendStringInfoString(&sql, ",\n  ");
		if (pk->constraint_name)
			appendStringInfo(&sql, "CONSTRAINT %s ", quote_identifier(pk->constraint_name));
		appendStringInfo(&sql, "PRIMARY KEY (%s)", mt_identifier_list(pk->columns));
	}
	appendStringInfoString(&sql, "\n)");
	if (c->partition_keys)
		appendStringInfo(&sql, " PARTITION BY LIST (%s)",
						 quote_identifier(strVal(linitial(c->partition_keys))));
	else if (d)
		appendStringInfo(&sql, " PARTITION BY %s (%s)",
						 d->kind == MT_DISTRIBUTION_RANGE ? "RANGE" : "HASH",
						 mt_identifier_list(d->columns));
	else
		appendStringInfoString(&sql, mt_storage_options_sql(options));
	return sql.data;
}

/*
 * RANGE buckets split the query's rows into n groups of equal size, as
 * the rows are when the table is created; their bounds never change.
 */
static void
compute_range_bounds(MtDistribution *d, Oid viewid, Oid owner)
{
	StringInfoData sql;
	StringInfoData cols;
	StringInfoData notnull;
	ListCell   *lc;
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;
	uint64		i;

	if (d == NULL || d->kind != MT_DISTRIBUTION_RANGE)
		return;
	initStringInfo(&cols);
	initStringInfo(&notnull);
	foreach(lc, d->columns)
	{
		const char *col = quote_identifier(strVal(lfirst(lc)));

		appendStringInfo(&cols, "%s%s", cols.len ? ", " : "", col);
		appendStringInfo(&notnull, "%s%s IS NOT NULL", notnull.len ? " AND " : "", col);
	}
	initStringInfo(&sql);
	appendStringInfo(&sql,
					 "SELECT DISTINCT ON (b) %s FROM ("
					 "SELECT %s, pg_catalog.ntile(%d) OVER (ORDER BY %s) AS b FROM %s WHERE %s"
					 ") s WHERE b > 1 ORDER BY b, %s",
					 cols.data, cols.data, d->buckets, cols.data,
					 mt_qualified_name(viewid), notnull.data, cols.data);

	mt_run_as_owner_begin(owner, &save_userid, &save_sec, &save_nestlevel);
	SPI_connect();
	mt_spi_exec(sql.data, SPI_OK_SELECT);
	d->bounds = NIL;
	for (i = 0; i < SPI_processed; i++)
	{
		List	   *bound = NIL;
		int			c;
		MemoryContext spi = MemoryContextSwitchTo(TopTransactionContext);

		for (c = 1; c <= list_length(d->columns); c++)
			bound = lappend(bound, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, c));
		/* equal bounds would make an empty range */
		if (d->bounds == NIL || !equal_bound(llast(d->bounds), bound))
			d->bounds = lappend(d->bounds, bound);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
}

/*
 * create_new
 *		CREATE MATERIALIZED TABLE of a table that does not exist yet.
 */
static void
create_new(MtStatement *st, Oid nspid)
{
	MtCreateStmt *c = st->create;
	MtTable    *mt = palloc0(sizeof(MtTable));
	Query	   *query;
	List	   *qcols;
	List	   *planned;
	MtPrimaryKey *pk;
	char	   *qualified;
	int			value;
	MtFreshnessUnit unit;
	MtRefreshMode mode;
	bool		explicit_buckets;
	bool		citus;
	Oid			colocate_with = InvalidOid;
	ListCell   *lc;

	/* everything that can be checked before anything is created */
	mt_freshness_resolve(c->freshness, c->refresh_mode, st->source,
						 c->refresh_mode_location, &value, &unit, &mode);
	query = mt_analyze_query(st, c->query);
	mt_check_query_privileges(st, c->query, query, GetUserId());
	qcols = mt_query_columns(query);
	planned = mt_plan_columns(st, c, qcols);
	pk = mt_plan_primary_key(st, c);
	mt_check_primary_key(st, pk, planned);
	mt_check_partition_keys(st, c, planned, qcols);
	mt_check_options(st, c->options, c->partition_keys, planned, mode);
	explicit_buckets = c->distribution && c->distribution->buckets != 0;
	mt_check_distribution(st, c->distribution, pk, planned);
	citus = c->distribution && mt_citus_installed();
	if (citus)
	{
		mt_citus_check_distribution(st, c);
		colocate_with = mt_citus_colocation(c->distribution, explicit_buckets, query, planned);
	}
	if (pk && c->partition_keys)
		mt_check_key_covers(st, pk, c->partition_keys, "PARTITIONED BY");
	if (pk && c->distribution)
		mt_check_key_covers(st, pk, c->distribution->columns, "DISTRIBUTED BY");
	mt_resolve_computed_types(st, planned);

	/* the table */
	qualified = quote_qualified_identifier(get_namespace_name(nspid), c->name->name);
	mt_spi_exec_internal(create_table_sql(qualified, planned, pk, c,
										  citus ? NULL : c->distribution, c->options),
						 SPI_OK_UTILITY);
	CommandCounterIncrement();
	mt->relid = get_relname_relid(c->name->name, nspid);
	if (citus)
	{
		/*
		 * CONTINUOUS: the sources' shards are decoded whole from now on,
		 * set by Citus before this transaction reads them (after, Citus
		 * would refuse DDL on a reference table it read over several
		 * connections; the nodes would need to lock the shards for it)
		 */
		if (mode == MT_MODE_CONTINUOUS)
			mt_shards_prepare_sources(query);
		/* its shards, while it is still empty; Citus's DDL on it is ours */
		MT_INTERNAL_BEGIN();
		mt_citus_distribute(mt->relid, strVal(linitial(c->distribution->columns)),
							c->distribution->buckets, colocate_with);
		MT_INTERNAL_END();
		CommandCounterIncrement();
	}
	/* kept from its sources' partial aggregates: the same, for the nodes' tables */
	else if (mode == MT_MODE_CONTINUOUS && mt_citus_installed())
		mt_shards_prepare_sources(query);
	mt_comment_columns(mt->relid, c->comment, planned);
	if (c->watermark)
		mt_check_watermark(st, c->watermark, mt->relid);

	/* its query, as a view that is part of the table */
	mt->id = mt_catalog_has_restore() ? mt_catalog_new_id() : (int64) mt->relid;
	mt->query_view = mt_define_query_view(st, c->query, mt->relid, mt->id, GetUserId(), false);
	/* the materialized tables it reads must fit its freshness */
	mt_lineage_check_freshness(mt->relid, mt->query_view, value, unit, st->source,
							   c->freshness ? c->freshness->location : c->name->location);

	mt->definition_query = c->query->text;
	mt->refresh_mode = mode;
	mt->freshness_value = value;
	mt->freshness_unit = unit;
	mt->status = MT_STATUS_INITIALIZING;
	mt->partition_keys = c->partition_keys;
	mt->options = c->options;
	mt->declared_columns = c->has_column_list && c->columns != NIL;
	foreach(lc, planned)
	{
		PlannedColumn *pc = lfirst(lc);

		if (pc->kind == MT_COLUMN_METADATA)
		{
			MtOption   *m = palloc0(sizeof(MtOption));

			m->key = pc->name;
			m->value = pc->metadata_key;
			mt->metadata_columns = lappend(mt->metadata_columns, m);
		}
	}
	if (c->watermark)
	{
		mt->watermark_column = c->watermark->column;
		mt->watermark_expression = c->watermark->expr_text;
	}
	mt->distribution = c->distribution;
	compute_range_bounds(mt->distribution, mt->query_view, GetUserId());
	mt_catalog_insert(mt);
	CommandCounterIncrement();

	/* buckets of a distributed table without PARTITIONED BY (Citus's are its shards) */
	if (!citus)
	{
		MT_INTERNAL_BEGIN();
		mt_partition_create_buckets(mt->relid, mt);
		MT_INTERNAL_END();
		CommandCounterIncrement();
	}

	/* filled in this transaction, as CREATE TABLE AS would */
	(void) mt_refresh(mt->relid, NIL, MT_TRIGGER_CREATE);

	mt->status = MT_STATUS_ACTIVATED;
	mt = mt_catalog_lookup(mt->relid, false);
	mt->status = MT_STATUS_ACTIVATED;
	mt_catalog_update(mt);
	mt_pipeline_table_created(mt);
}

static void
no_element_change(MtStatement *st, Oid relid, const char *what, int location, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("CREATE OR ALTER cannot change the %s of materialized table \"%s\"",
					what, get_rel_name(relid)),
			 errdetail("CREATE OR ALTER changes the query, freshness, options and comments of an existing table."),
			 errhint("%s", hint),
			 mt_errposition(st->source, location)));
}

/*
 * check_same_elements
 *		CREATE OR ALTER on an existing table: the column list, primary key,
 *		computed and metadata columns, watermark and distribution it
 *		declares must be what the table has (an identical statement changes
 *		nothing); ALTER MATERIALIZED TABLE ... ADD, MODIFY and DROP change
 *		them.  Column comments are applied.
 */
static void
check_same_elements(MtStatement *st, Oid relid, MtTable *mt)
{
	MtCreateStmt *c = st->create;
	const char *hint = "Use ALTER MATERIALIZED TABLE ... ADD, MODIFY or DROP.";
	MtPrimaryKey *pk = mt_plan_primary_key(st, c);
	List	   *old_key = mt_primary_key_columns(relid);
	List	   *table_cols = mt_planned_from_table(relid);
	List	   *physical = NIL;
	ListCell   *lc;
	ListCell   *lc2;
	int			n = 0;
	bool		same_key;

	/* the primary key */
	same_key = list_length(old_key) == (pk ? list_length(pk->columns) : 0);
	if (same_key && pk)
		forboth(lc, old_key, lc2, pk->columns)
			if (strcmp(lfirst(lc), strVal(lfirst(lc2))) != 0)
				same_key = false;
	if (!same_key)
		no_element_change(st, relid, "primary key", pk ? pk->location : c->name->location,
						  "Use ALTER MATERIALIZED TABLE ... ADD, MODIFY or DROP PRIMARY KEY.");

	/* the table's physical columns, in order */
	foreach(lc, table_cols)
	{
		PlannedColumn *pc = lfirst(lc);

		if (pc->kind == MT_COLUMN_PHYSICAL &&
			mt_option_value(mt->metadata_columns, pc->name) == NULL)
			physical = lappend(physical, pc);
	}

	foreach(lc, c->columns)
	{
		MtColumn   *def = lfirst(lc);
		PlannedColumn *pc = mt_find_planned(table_cols, def->name);

		if (def->kind == MT_COLUMN_PHYSICAL)
		{
			/* existing columns in the table's order; new ones follow */
			if (n < list_length(physical))
			{
				PlannedColumn *old = list_nth(physical, n);

				if (strcmp(old->name, def->name) != 0)
					no_element_change(st, relid, "column list", def->location,
									  "List the table's columns in its order; a new query may only append columns.");
				if (def->type_name)
				{
					Oid			typid;
					int32		typmod;

					mt_type_id_and_mod(st, def->type_name, &typid, &typmod);
					if (typid != old->typid || typmod != old->typmod)
						no_element_change(st, relid, psprintf("type of column \"%s\"", def->name),
										  def->location,
										  "The type of a column cannot change; drop the table and create it again.");
				}
			}
			n++;
		}
		else if (def->kind == MT_COLUMN_COMPUTED)
		{
			char	   *expr;

			if (pc == NULL || pc->kind != MT_COLUMN_COMPUTED)
				no_element_change(st, relid, psprintf("computed column \"%s\"", def->name),
								  def->location, "Use ALTER MATERIALIZED TABLE ... ADD or MODIFY.");
			expr = mt_expression_deparse(st, def->expr_location, def->expr_text, relid);
			if (strcmp(expr, pc->expr_text) != 0)
				no_element_change(st, relid, psprintf("computed column \"%s\"", def->name),
								  def->expr_location, "Use ALTER MATERIALIZED TABLE ... MODIFY.");
		}
		else
		{
			const char *key = def->metadata_key ? def->metadata_key : def->name;
			const char *old_key_name = mt_option_value(mt->metadata_columns, def->name);
			Oid			typid;
			int32		typmod;

			mt_type_id_and_mod(st, def->type_name, &typid, &typmod);
			if (old_key_name == NULL || strcmp(old_key_name, key) != 0 ||
				pc == NULL || typid != pc->typid || typmod != pc->typmod)
				no_element_change(st, relid, psprintf("metadata column \"%s\"", def->name),
								  def->location, "Use ALTER MATERIALIZED TABLE ... ADD or MODIFY.");
		}
	}

	/* computed and metadata columns the statement leaves out */
	foreach(lc, table_cols)
	{
		PlannedColumn *pc = lfirst(lc);
		bool		listed = false;

		if (pc->kind != MT_COLUMN_COMPUTED &&
			mt_option_value(mt->metadata_columns, pc->name) == NULL)
			continue;
		foreach(lc2, c->columns)
			if (strcmp(((MtColumn *) lfirst(lc2))->name, pc->name) == 0)
				listed = true;
		if (!listed)
			no_element_change(st, relid,
							  psprintf("%s column \"%s\"",
									   pc->kind == MT_COLUMN_COMPUTED ? "computed" : "metadata",
									   pc->name),
							  c->name->location, "Use ALTER MATERIALIZED TABLE ... DROP.");
	}

	/* the watermark */
	if ((c->watermark == NULL) != (mt->watermark_column == NULL) ||
		(c->watermark &&
		 (strcmp(c->watermark->column, mt->watermark_column) != 0 ||
		  strcmp(c->watermark->expr_text, mt->watermark_expression) != 0)))
		no_element_change(st, relid, "watermark",
						  c->watermark ? c->watermark->location : c->name->location,
						  "Use ALTER MATERIALIZED TABLE ... ADD, MODIFY or DROP WATERMARK.");

	/* the distribution */
	if ((c->distribution == NULL) != (mt->distribution == NULL) ||
		(c->distribution &&
		 ((c->distribution->columns != NIL &&
		   !equal(c->distribution->columns, mt->distribution->columns)) ||
		  (c->distribution->kind != MT_DISTRIBUTION_DEFAULT &&
		   c->distribution->kind != mt->distribution->kind) ||
		  (c->distribution->buckets != 0 &&
		   c->distribution->buckets != mt->distribution->buckets))))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the distribution of materialized table \"%s\"",
						get_rel_name(relid)),
				 errdetail("The distribution decides how the table is partitioned, which PostgreSQL fixes when a table is created."),
				 errhint("Drop the materialized table and create it again with the distribution you want."),
				 mt_errposition(st->source,
								c->distribution ? c->distribution->location : c->name->location)));
	(void) hint;
}

/*
 * The schema of a table to create, locked until we commit as CREATE TABLE
 * locks it: a DROP or RENAME of the schema waits, and one that committed
 * while we waited is seen (the name is resolved again once locked).
 */
static Oid
lock_creation_namespace(MtStatement *st, MtQualifiedName *name)
{
	for (;;)
	{
		Oid			nspid = mt_resolve_namespace(st, name);

		LockDatabaseObject(NamespaceRelationId, nspid, 0, AccessShareLock);
		if (mt_resolve_namespace(st, name) == nspid)
			return nspid;
		UnlockDatabaseObject(NamespaceRelationId, nspid, 0, AccessShareLock);
	}
}

/*
 * alter_existing
 *		CREATE OR ALTER on a materialized table that exists.
 */
static void
alter_existing(MtStatement *st, Oid relid)
{
	MtCreateStmt *c = st->create;
	MtTable    *mt;
	bool		changed = false;
	bool		lineage_changed = false;

	mt_check_owner(relid);
	LockRelationOid(relid, ShareUpdateExclusiveLock);
	mt = mt_lock_catalog_row(st, c->name, relid);

	if (c->refresh_mode != MT_MODE_UNSET && c->refresh_mode != mt->refresh_mode)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the refresh mode of materialized table \"%s\" from %s to %s",
						get_rel_name(relid), mt_mode_name(mt->refresh_mode),
						mt_mode_name(c->refresh_mode)),
				 errhint("Drop the table and create it again with the new refresh mode."),
				 mt_errposition(st->source, c->refresh_mode_location)));
	if (!equal(c->partition_keys, mt->partition_keys))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the partition columns of materialized table \"%s\"",
						get_rel_name(relid)),
				 errhint("Drop the table and create it again with the new PARTITIONED BY clause."),
				 mt_errposition(st->source, c->partition_keys ? c->partition_location : st->location)));
	check_same_elements(st, relid, mt);

	if (c->freshness &&
		(c->freshness->value != mt->freshness_value || c->freshness->unit != mt->freshness_unit))
	{
		MtTable    *now;

		mt_set_freshness(st, relid, c->freshness, false);
		now = mt_catalog_lookup(relid, false);
		/* crossing the threshold switched the mode the statement names */
		if (c->refresh_mode != MT_MODE_UNSET && now->refresh_mode != c->refresh_mode)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("freshness %s would switch materialized table \"%s\" to %s refresh mode",
							mt_freshness_text(now->freshness_value, now->freshness_unit),
							get_rel_name(relid), mt_mode_name(now->refresh_mode)),
					 errdetail("The statement says REFRESH_MODE = %s, and crossing materialized_table.freshness_threshold (%d seconds) changes the refresh mode.",
							   mt_mode_name(c->refresh_mode), mt_freshness_threshold),
					 errhint("Leave REFRESH_MODE out to let the freshness switch the mode, or keep the freshness on the same side of the threshold."),
					 mt_errposition(st->source, c->freshness->location)));
		changed = true;
		lineage_changed = true;
	}
	if (strcmp(c->query->text, mt->definition_query) != 0)
	{
		mt_alter_query(st, relid, c->query, false);
		changed = true;
		lineage_changed = true;
	}
	/* the freshness rule holds for the new freshness and the new query */
	if (lineage_changed)
	{
		MtTable    *now = mt_catalog_lookup(relid, false);

		mt_lineage_check_freshness(relid, now->query_view, now->freshness_value,
								   now->freshness_unit, st->source,
								   c->freshness ? c->freshness->location : c->query->location);
	}
	if (c->options && !equal_options(c->options, mt->options))
	{
		mt_set_options(st, relid, c->options);
		changed = true;
	}
	if (c->comment)
		mt_comment_on(relid, 0, c->comment);
	mt_apply_column_comments(relid, c->columns);
	(void) changed;
}

/* ---------------------------------------------------------------------
 * CREATE OR ALTER over a table: conversion in place
 * ---------------------------------------------------------------------
 */

const char *
mt_create_command(MtStatement *st)
{
	MtCreateStmt *c = st->create;
	Oid			relid;
	Oid			nspid;

	nspid = lock_creation_namespace(st, c->name);
	/* as CREATE OR REPLACE VIEW: a table dropped while we waited is created anew */
	relid = RangeVarGetRelidExtended(makeRangeVar(c->name->schema, c->name->name, -1),
									 c->or_alter ? ShareUpdateExclusiveLock : NoLock,
									 RVR_MISSING_OK, NULL, NULL);
	if (OidIsValid(relid) && c->name->schema == NULL && get_rel_namespace(relid) != nspid &&
		!c->or_alter)
		relid = InvalidOid;		/* found further down search_path: create in the first */
	if (!OidIsValid(relid))
		relid = get_relname_relid(c->name->name, nspid);

	if (OidIsValid(relid))
	{
		if (!mt_is_materialized_table(relid))
		{
			bool		table = get_rel_relkind(relid) == RELKIND_RELATION ||
				get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE;

			if (c->or_alter && table && mt_conversion_from_table)
			{
				mt_convert_table(st, relid);
				return "CREATE MATERIALIZED TABLE";
			}
			ereport(ERROR,
					(errcode(c->or_alter ? ERRCODE_WRONG_OBJECT_TYPE : ERRCODE_DUPLICATE_TABLE),
					 c->or_alter ?
					 errmsg("\"%s\" is not a materialized table", c->name->name) :
					 errmsg("relation \"%s\" already exists", c->name->name),
					 (c->or_alter && table) ?
					 errhint("CREATE OR ALTER converts a table into a materialized table in place when materialized_table.conversion_from_table is on.") : 0,
					 mt_errposition(st->source, c->name->location)));
		}
		if (!c->or_alter)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_TABLE),
					 errmsg("materialized table \"%s\" already exists", c->name->name),
					 errhint("Use CREATE OR ALTER MATERIALIZED TABLE to change it."),
					 mt_errposition(st->source, c->name->location)));
		alter_existing(st, relid);
		return "ALTER MATERIALIZED TABLE";
	}
	create_new(st, nspid);
	return "CREATE MATERIALIZED TABLE";
}
