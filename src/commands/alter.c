/*-------------------------------------------------------------------------
 *
 * src/commands/alter.c
 *	  ALTER MATERIALIZED TABLE.
 *
 *	  SUSPEND / RESUME [WITH (...)]		pause and restart the pipeline
 *	  REFRESH [PARTITION (...)]			synchronous refresh
 *	  AS select							schema evolution and a new query
 *	  SET FRESHNESS = INTERVAL ...		a new freshness
 *	  ADD / MODIFY / DROP ...			columns, primary key, watermark,
 *										distribution
 *	  RENAME TO new_name				a new name, in its schema
 *
 * Columns of a materialized table come from its query, so ADD, MODIFY and
 * DROP act only on what is not: computed and metadata columns, the primary
 * key and the watermark, as in Flink.  Every form either changes the
 * PostgreSQL table or says why it cannot.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_constraint.h"
#include "executor/spi.h"
#include "parser/parse_coerce.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "mt/commands/commands.h"
#include "mt/commands/create_plan.h"
#include "mt/catalog/dependents.h"
#include "mt/catalog/freshness.h"
#include "mt/catalog/lineage.h"
#include "mt/materialized_table.h"
#include "mt/lifecycle/pipeline.h"
#include "mt/refresh/partitions.h"
#include "mt/refresh/refresh.h"
#include "mt/lifecycle/restore.h"
#include "mt/utils/relations.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/citus.h"
#include "mt/utils/sql.h"

/* Options RESUME understands; they last until the next SUSPEND or RESUME. */
static const char *const resume_options[] = {"sink.parallelism", NULL};

/* Run generated DDL on the table, past the guards. */
static void
table_ddl(const char *sql)
{
	mt_spi_exec_internal(sql, SPI_OK_UTILITY);
	CommandCounterIncrement();
}

/*
 * A copy of the column's attribute, or NULL.  The relation is not kept
 * open: ALTER TABLE refuses a table this session still has open.
 */
static Form_pg_attribute
find_column(Oid relid, const char *name)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	Form_pg_attribute result = NULL;
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
		{
			result = palloc(sizeof(FormData_pg_attribute));
			memcpy(result, att, sizeof(FormData_pg_attribute));
			break;
		}
	}
	table_close(rel, AccessShareLock);
	return result;
}

/* ---------------------------------------------------------------------
 * SUSPEND, RESUME, REFRESH
 * ---------------------------------------------------------------------
 */

static void
alter_suspend(MtStatement *st, Oid relid)
{
	MtTable    *mt = mt_catalog_lookup(relid, false);

	if (mt->status == MT_STATUS_SUSPENDED)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("materialized table \"%s\" is already suspended", get_rel_name(relid)),
				 errhint("Use ALTER MATERIALIZED TABLE ... RESUME to restart its refresh pipeline."),
				 mt_errposition(st->source, st->alter->action_location)));
	mt->status = MT_STATUS_SUSPENDED;
	mt_catalog_update(mt);
	mt_pipeline_suspend(mt);
	mt_lineage_notice_suspended_upstream(relid);
}

static void
alter_resume(MtStatement *st, Oid relid)
{
	MtTable    *mt = mt_catalog_lookup(relid, false);
	ListCell   *lc;

	if (mt->status != MT_STATUS_SUSPENDED)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("materialized table \"%s\" is not suspended", get_rel_name(relid)),
				 errdetail("Its refresh pipeline is %s.", mt_status_name(mt->status)),
				 mt_errposition(st->source, st->alter->action_location)));
	foreach(lc, st->alter->options)
	{
		MtOption   *opt = lfirst(lc);
		const char *const *known;
		StringInfoData list;
		bool		found = false;

		initStringInfo(&list);
		for (known = resume_options; *known; known++)
		{
			appendStringInfo(&list, "%s%s", list.len ? ", " : "", *known);
			if (strcmp(opt->key, *known) == 0)
				found = true;
		}
		if (!found)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unrecognized RESUME option \"%s\"", opt->key),
					 errdetail("Known options are: %s.", list.data),
					 mt_errposition(st->source, opt->location)));
		if (strcmp(opt->key, "sink.parallelism") == 0)
		{
			char	   *end;
			long		n = strtol(opt->value, &end, 10);

			if (*end != '\0' || n <= 0 || n > 1024)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("option \"sink.parallelism\" must be a positive integer"),
						 mt_errposition(st->source, opt->location)));
		}
	}
	mt->status = MT_STATUS_ACTIVATED;
	mt_catalog_update(mt);
	mt_pipeline_resume(mt, st->alter->options);
	mt_lineage_notice_suspended_upstream(relid);
}

static void
alter_refresh(MtStatement *st, Oid relid)
{
	MtTable    *mt = mt_catalog_lookup(relid, false);

	if (st->alter->partition_spec)
		mt_check_partition_spec(mt, st->alter->partition_spec, st->source);
	(void) mt_refresh(relid, st->alter->partition_spec, MT_TRIGGER_MANUAL);
}

/* ---------------------------------------------------------------------
 * AS select
 * ---------------------------------------------------------------------
 */

/*
 * mt_check_no_cycle
 *		A new query may not read the table itself, directly or through
 *		views and other materialized tables: its content would depend on
 *		itself, and a continuous pipeline would refresh it forever.
 */
void
mt_check_no_cycle(MtStatement *st, MtQuery *q, Oid relid, Oid viewid)
{
	bool		cycle = mt_catalog_query_reads(viewid, relid);

	if (cycle)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("the new query of materialized table \"%s\" reads the table itself",
						get_rel_name(relid)),
				 errdetail("A materialized table cannot depend on its own content, directly or through views and other materialized tables."),
				 mt_errposition(st->source, q->location)));
}

/*
 * mt_alter_query
 *		Give an MT a new query.  Its result may only append columns to the
 *		old one's; they are added to the table, nullable.  FULL tables use
 *		the new query from their next refresh on; CONTINUOUS tables switch
 *		in this transaction (see mt_pipeline_query_changed).  The tables it
 *		now reads must fit its freshness, unless the caller checks that
 *		itself (check_lineage false: CREATE OR ALTER, which may change the
 *		freshness too).
 */
void
mt_alter_query(MtStatement *st, Oid relid, MtQuery *q, bool check_lineage)
{
	MtTable    *mt;
	Relation	view;
	Query	   *query;
	TupleDesc	old;
	List	   *new_cols;
	int			i;
	int			nold = 0;
	bool		shard;
	Bitmapset  *adopted = NULL;

	LockRelationOid(relid, MT_REFRESH_LOCKMODE);
	mt = mt_catalog_lookup(relid, false);
	query = mt_analyze_query(st, q);
	mt_check_query_privileges(st, q, query, mt_table_owner(relid));
	new_cols = mt_query_columns(query);

	view = table_open(mt->query_view, AccessShareLock);
	old = CreateTupleDescCopy(RelationGetDescr(view));
	table_close(view, AccessShareLock);

	for (i = 0; i < old->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(old, i);
		MtQueryColumn *nc;

		if (att->attisdropped)
			continue;
		nold++;
		if (nold > list_length(new_cols))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the new query of materialized table \"%s\" drops column \"%s\"",
							get_rel_name(relid), NameStr(att->attname)),
					 errdetail("Column %d is \"%s\" %s in the current query, but the new query produces only %d columns.",
							   nold, NameStr(att->attname),
							   format_type_with_typemod(att->atttypid, att->atttypmod),
							   list_length(new_cols)),
					 errhint("A new query may only append columns at the end."),
					 mt_errposition(st->source, q->location)));
		nc = list_nth(new_cols, nold - 1);
		if (strcmp(nc->name, NameStr(att->attname)) != 0 ||
			nc->typid != att->atttypid || nc->typmod != att->atttypmod)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the new query of materialized table \"%s\" changes column %d",
							get_rel_name(relid), nold),
					 errdetail("Column %d is \"%s\" %s in the current query but \"%s\" %s in the new query.",
							   nold, NameStr(att->attname),
							   format_type_with_typemod(att->atttypid, att->atttypmod),
							   nc->name, format_type_with_typemod(nc->typid, nc->typmod)),
					 errhint("A new query may only append columns at the end; dropping, renaming, reordering or retyping a column needs the table to be created again."),
					 mt_errposition(st->source, q->location)));
	}

	/*
	 * new columns: refuse names the table already uses -- but a shard on
	 * a Citus node, to which Citus has already added the column it added
	 * to its distributed table, adopts it
	 */
	shard = mt_citus_is_shard(relid);
	for (i = nold; i < list_length(new_cols); i++)
	{
		MtQueryColumn *nc = list_nth(new_cols, i);
		Form_pg_attribute att = find_column(relid, nc->name);

		if (att && shard && att->atttypid == nc->typid && att->atttypmod == nc->typmod &&
			!att->attgenerated)
			adopted = bms_add_member(adopted, i);
		else if (att)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("column \"%s\" of the new query already exists in materialized table \"%s\"",
							nc->name, get_rel_name(relid)),
					 mt_errposition(st->source, q->location)));
	}

	(void) mt_define_query_view(st, q, relid, mt_catalog_id(relid), InvalidOid, true);
	mt_check_no_cycle(st, q, relid, mt->query_view);
	if (check_lineage)
		mt_lineage_check_freshness(relid, mt->query_view, mt->freshness_value,
								   mt->freshness_unit, st->source, q->location);
	for (i = nold; i < list_length(new_cols); i++)
	{
		MtQueryColumn *nc = list_nth(new_cols, i);

		if (bms_is_member(i, adopted))
			continue;
		table_ddl(psprintf("ALTER TABLE %s ADD COLUMN %s %s", mt_qualified_name(relid),
						   quote_identifier(nc->name), mt_type_sql(nc->typid, nc->typmod)));
	}

	mt->definition_query = q->text;
	mt_catalog_update(mt);
	mt_pipeline_query_changed(mt);
}

/* ---------------------------------------------------------------------
 * SET FRESHNESS
 * ---------------------------------------------------------------------
 */

/*
 * mt_set_freshness
 *		A new freshness, by Realtime Compute's rules (see
 *		mt_freshness_apply_rules), maybe with a new refresh mode.  The
 *		catalog, pg_cron's job and the continuous pipeline's registration
 *		all change in this transaction; the worker takes the change up
 *		when it commits.  check_lineage as for mt_alter_query.
 */
void
mt_set_freshness(MtStatement *st, Oid relid, MtFreshness *freshness, bool check_lineage)
{
	MtTable    *old = mt_catalog_lookup(relid, false);
	MtTable    *mt = mt_catalog_lookup(relid, false);

	mt->freshness_value = (int) freshness->value;
	mt->freshness_unit = freshness->unit;
	mt_freshness_apply_rules(st->source, old, mt, freshness->location);
	if (check_lineage)
		mt_lineage_check_freshness(relid, mt->query_view, mt->freshness_value,
								   mt->freshness_unit, st->source, freshness->location);
	mt_catalog_update(mt);
	mt_pipeline_freshness_changed(old, mt);
}

/* ---------------------------------------------------------------------
 * ADD, MODIFY, DROP
 * ---------------------------------------------------------------------
 */

static void
position_not_supported(MtStatement *st, MtColumn *col)
{
	if (col->place != MT_PLACE_DEFAULT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("column positions (FIRST, AFTER) are not supported"),
				 errdetail("PostgreSQL cannot place a column of an existing table; new columns go at the end."),
				 mt_errposition(st->source, col->location)));
}

static void
forget_metadata(MtTable *mt, const char *name)
{
	ListCell   *lc;

	foreach(lc, mt->metadata_columns)
	{
		if (strcmp(((MtOption *) lfirst(lc))->key, name) == 0)
		{
			mt->metadata_columns = foreach_delete_current(mt->metadata_columns, lc);
			return;
		}
	}
}

static void
remember_metadata(MtTable *mt, const char *name, const char *key)
{
	MtOption   *m = palloc0(sizeof(MtOption));

	m->key = pstrdup(name);
	m->value = pstrdup(key);
	mt->metadata_columns = lappend(mt->metadata_columns, m);
}

static bool
is_query_column(MtTable *mt, Oid relid, const char *name)
{
	Form_pg_attribute att = find_column(relid, name);

	return att && !att->attgenerated && mt_option_value(mt->metadata_columns, name) == NULL;
}

static void
check_metadata_column(MtStatement *st, MtColumn *col, Oid *typid, int32 *typmod)
{
	const char *key = col->metadata_key ? col->metadata_key : col->name;
	Oid			from = TIMESTAMPTZOID;

	if (strcmp(key, METADATA_REFRESH_TIME) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("metadata key \"%s\" is not supported", key),
				 errdetail("The only metadata a materialized table's rows carry is \"%s\", the time of the refresh that wrote the row.",
						   METADATA_REFRESH_TIME),
				 mt_errposition(st->source, col->location)));
	mt_type_id_and_mod(st, col->type_name, typid, typmod);
	if (!can_coerce_type(1, &from, typid, COERCION_EXPLICIT))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("metadata column \"%s\" cannot be of type %s", col->name,
						format_type_be(*typid)),
				 mt_errposition(st->source, col->location)));
}

static void
add_column(MtStatement *st, MtTable *mt, Oid relid, MtColumn *col)
{
	char	   *table = mt_qualified_name(mt->relid);
	Oid			typid;
	int32		typmod;

	position_not_supported(st, col);
	if (find_column(relid, col->name))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_COLUMN),
				 errmsg("column \"%s\" of materialized table \"%s\" already exists",
						col->name, get_rel_name(relid)),
				 errhint("Use MODIFY to change it."),
				 mt_errposition(st->source, col->location)));
	switch (col->kind)
	{
		case MT_COLUMN_PHYSICAL:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot add physical column \"%s\" to a materialized table", col->name),
					 errdetail("Physical columns come from the query."),
					 errhint("Use ALTER MATERIALIZED TABLE ... AS with a query that appends the column."),
					 mt_errposition(st->source, col->location)));
			break;
		case MT_COLUMN_COMPUTED:
			mt_expression_type(st, col->expr_location, col->expr_text, table,
							   "computed column expressions", true, &typid, &typmod, NULL);
			table_ddl(psprintf("ALTER TABLE %s ADD COLUMN %s %s GENERATED ALWAYS AS (\n%s\n) STORED",
							   table, quote_identifier(col->name), mt_type_sql(typid, typmod),
							   col->expr_text));
			break;
		case MT_COLUMN_METADATA:
			{
				check_metadata_column(st, col, &typid, &typmod);
				table_ddl(psprintf("ALTER TABLE %s ADD COLUMN %s %s", table,
								   quote_identifier(col->name), mt_type_sql(typid, typmod)));
				/* the rows there were written by the last refresh */
				if (mt->last_refresh_time != 0)
					mt_refresh_stamp_column(relid, col->name, typid, typmod,
											mt->last_refresh_time);
				remember_metadata(mt, col->name, col->metadata_key ? col->metadata_key : col->name);
				break;
			}
	}
	if (col->comment)
		mt_comment_on(relid, get_attnum(relid, col->name), col->comment);
}

static void
modify_column(MtStatement *st, MtTable *mt, Oid relid, MtColumn *col)
{
	char	   *table = mt_qualified_name(mt->relid);
	Form_pg_attribute att = find_column(relid, col->name);

	position_not_supported(st, col);
	if (att == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of materialized table \"%s\" does not exist",
						col->name, get_rel_name(relid)),
				 errhint("Use ADD to add it."),
				 mt_errposition(st->source, col->location)));

	if (is_query_column(mt, relid, col->name))
	{
		if (col->kind != MT_COLUMN_PHYSICAL || col->type_name)
		{
			Oid			typid = InvalidOid;
			int32		typmod = -1;

			if (col->type_name)
				mt_type_id_and_mod(st, col->type_name, &typid, &typmod);
			if (col->kind != MT_COLUMN_PHYSICAL || typid != att->atttypid ||
				typmod != att->atttypmod)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot change column \"%s\" of materialized table \"%s\"",
								col->name, get_rel_name(relid)),
						 errdetail("The column comes from the query; only its comment can be modified."),
						 errhint("Change the query with ALTER MATERIALIZED TABLE ... AS."),
						 mt_errposition(st->source, col->location)));
		}
	}
	else if (col->kind == MT_COLUMN_PHYSICAL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot turn column \"%s\" into a physical column", col->name),
				 errdetail("Physical columns come from the query."),
				 mt_errposition(st->source, col->location)));
	else if (col->kind == MT_COLUMN_COMPUTED)
	{
		Oid			typid;
		int32		typmod;

		/* PostgreSQL 15 cannot change a generation expression in place */
		mt_expression_type(st, col->expr_location, col->expr_text, table,
						   "computed column expressions", true, &typid, &typmod, NULL);
		table_ddl(psprintf("ALTER TABLE %s DROP COLUMN %s", table, quote_identifier(col->name)));
		table_ddl(psprintf("ALTER TABLE %s ADD COLUMN %s %s GENERATED ALWAYS AS (\n%s\n) STORED",
						   table, quote_identifier(col->name), mt_type_sql(typid, typmod),
						   col->expr_text));
		ereport(NOTICE,
				(errmsg("computed column \"%s\" is now the last column of \"%s\"",
						col->name, get_rel_name(relid))));
		forget_metadata(mt, col->name);
	}
	else
	{
		Oid			typid;
		int32		typmod;

		check_metadata_column(st, col, &typid, &typmod);
		if (att->attgenerated)
		{
			table_ddl(psprintf("ALTER TABLE %s DROP COLUMN %s", table, quote_identifier(col->name)));
			table_ddl(psprintf("ALTER TABLE %s ADD COLUMN %s %s", table,
							   quote_identifier(col->name), mt_type_sql(typid, typmod)));
			ereport(NOTICE,
					(errmsg("metadata column \"%s\" is now the last column of \"%s\"",
							col->name, get_rel_name(relid))));
		}
		else if (typid != att->atttypid || typmod != att->atttypmod)
			table_ddl(psprintf("ALTER TABLE %s ALTER COLUMN %s TYPE %s USING CAST(%s AS %s)",
							   table, quote_identifier(col->name), mt_type_sql(typid, typmod),
							   quote_identifier(col->name), mt_type_sql(typid, typmod)));
		forget_metadata(mt, col->name);
		remember_metadata(mt, col->name, col->metadata_key ? col->metadata_key : col->name);
	}
	if (col->comment)
		mt_comment_on(relid, get_attnum(relid, col->name), col->comment);
}

static void
drop_column(MtStatement *st, MtTable *mt, Oid relid, const char *name)
{
	ListCell   *lc;

	if (find_column(relid, name) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of materialized table \"%s\" does not exist",
						name, get_rel_name(relid)),
				 mt_errposition(st->source, st->alter->action_location)));
	foreach(lc, mt->partition_keys)
		if (strcmp(strVal(lfirst(lc)), name) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot drop partition column \"%s\" of materialized table \"%s\"",
							name, get_rel_name(relid)),
					 mt_errposition(st->source, st->alter->action_location)));
	if (is_query_column(mt, relid, name))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot drop column \"%s\" of materialized table \"%s\"",
						name, get_rel_name(relid)),
				 errdetail("The query produces the column."),
				 errhint("Only computed and metadata columns can be dropped."),
				 mt_errposition(st->source, st->alter->action_location)));
	table_ddl(psprintf("ALTER TABLE %s DROP COLUMN %s", mt_qualified_name(mt->relid),
					   quote_identifier(name)));
	forget_metadata(mt, name);
}

/* The name of the table's primary key constraint, or NULL. */
static char *
primary_key_name(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	Oid			index = RelationGetPrimaryKeyIndex(rel);

	table_close(rel, AccessShareLock);

	if (!OidIsValid(index))
		return NULL;
	return get_constraint_name(get_index_constraint(index));
}

static void
add_primary_key(MtStatement *st, MtTable *mt, Oid relid, MtPrimaryKey *pk)
{
	StringInfoData cols;
	ListCell   *lc;

	initStringInfo(&cols);
	foreach(lc, pk->columns)
	{
		char	   *name = strVal(lfirst(lc));

		if (!is_query_column(mt, relid, name))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("primary key column \"%s\" is not produced by the query", name),
					 mt_errposition(st->source, pk->location)));
		appendStringInfo(&cols, "%s%s", cols.len ? ", " : "", quote_identifier(name));
	}
	if (mt->partition_keys)
		mt_check_key_covers(st, pk, mt->partition_keys, "PARTITIONED BY");
	if (mt->distribution)
		mt_check_key_covers(st, pk, mt->distribution->columns, "DISTRIBUTED BY");
	table_ddl(psprintf("ALTER TABLE %s ADD %sPRIMARY KEY (%s)", mt_qualified_name(mt->relid),
					   pk->constraint_name ?
					   psprintf("CONSTRAINT %s ", quote_identifier(pk->constraint_name)) : "",
					   cols.data));
}

static void
drop_primary_key(MtStatement *st, MtTable *mt, Oid relid, const char *constraint)
{
	char	   *name = primary_key_name(relid);
	List	   *key_columns;
	ListCell   *lc;

	if (name == NULL || (constraint && strcmp(name, constraint) != 0))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 constraint ?
				 errmsg("constraint \"%s\" of materialized table \"%s\" does not exist",
						constraint, get_rel_name(relid)) :
				 errmsg("materialized table \"%s\" has no primary key",
						get_rel_name(relid)),
				 mt_errposition(st->source, st->alter->action_location)));
	key_columns = mt_primary_key_columns(relid);
	table_ddl(psprintf("ALTER TABLE %s DROP CONSTRAINT %s",
					   mt_qualified_name(relid), quote_identifier(name)));

	/*
	 * The key made its columns NOT NULL; without it, NULLs from the query
	 * must fit again (a new key, if one follows, sets NOT NULL anew).
	 */
	foreach(lc, key_columns)
	{
		ListCell   *lc2;
		bool		range_key = false;

		/* RANGE partitioning needs its columns NOT NULL */
		if (mt->distribution && mt->distribution->kind == MT_DISTRIBUTION_RANGE)
			foreach(lc2, mt->distribution->columns)
				if (strcmp(strVal(lfirst(lc2)), lfirst(lc)) == 0)
					range_key = true;
		if (range_key)
			continue;
		table_ddl(psprintf("ALTER TABLE %s ALTER COLUMN %s DROP NOT NULL",
						   mt_qualified_name(relid), quote_identifier(lfirst(lc))));
	}
}

/*
 * mt_check_watermark
 *		WATERMARK FOR col AS expr: col must be a timestamp column of the
 *		table, expr a timestamp expression over its columns.  PostgreSQL has
 *		no event time, so the watermark is kept, shown, and reported by
 *		materialized_table.watermark(), which evaluates it.
 */
void
mt_check_watermark(MtStatement *st, MtWatermark *wm, Oid relid)
{
	Form_pg_attribute att = find_column(relid, wm->column);
	Oid			typid;
	int32		typmod;

	if (att == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("watermark column \"%s\" does not exist", wm->column),
				 mt_errposition(st->source, wm->location)));
	if (att->atttypid != TIMESTAMPOID && att->atttypid != TIMESTAMPTZOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("watermark column \"%s\" must be of a timestamp type", wm->column),
				 errdetail("Its type is %s.", format_type_be(att->atttypid)),
				 mt_errposition(st->source, wm->location)));
	mt_expression_type(st, wm->expr_location, wm->expr_text, mt_qualified_name(relid),
					   "watermark expressions", false, &typid, &typmod, NULL);
	if (typid != TIMESTAMPOID && typid != TIMESTAMPTZOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("watermark expression must return a timestamp"),
				 errdetail("It returns %s.", format_type_be(typid)),
				 mt_errposition(st->source, wm->location)));
}

static void
no_distribution_change(MtStatement *st, Oid relid, bool add)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 add ?
			 errmsg("cannot add a distribution to materialized table \"%s\"",
					get_rel_name(relid)) :
			 errmsg("cannot drop the distribution of materialized table \"%s\"",
					get_rel_name(relid)),
			 errdetail("The distribution decides how the table is partitioned, which PostgreSQL fixes when a table is created."),
			 errhint("Drop the materialized table and create it again with the distribution you want."),
			 mt_errposition(st->source, st->alter->action_location)));
}

static void
alter_elements(MtStatement *st, Oid relid)
{
	MtAlterStmt *a = st->alter;
	MtTable    *mt = mt_catalog_lookup(relid, false);
	ListCell   *lc;

	LockRelationOid(relid, MT_REFRESH_LOCKMODE);

	switch (a->action)
	{
		case MT_ALTER_ADD:
			if (a->distribution)
				no_distribution_change(st, relid, true);
			foreach(lc, a->columns)
			{
				add_column(st, mt, relid, lfirst(lc));
			}
			if (a->primary_key)
			{
				if (primary_key_name(relid))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
							 errmsg("materialized table \"%s\" already has a primary key",
									get_rel_name(relid)),
							 errhint("Use MODIFY PRIMARY KEY to change it."),
							 mt_errposition(st->source, a->primary_key->location)));
				add_primary_key(st, mt, relid, a->primary_key);
			}
			if (a->watermark)
			{
				if (mt->watermark_column)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
							 errmsg("materialized table \"%s\" already has a watermark",
									get_rel_name(relid)),
							 errhint("Use MODIFY WATERMARK to change it."),
							 mt_errposition(st->source, a->watermark->location)));
				mt_check_watermark(st, a->watermark, relid);
				mt->watermark_column = a->watermark->column;
				mt->watermark_expression = a->watermark->expr_text;
			}
			break;

		case MT_ALTER_MODIFY:
			foreach(lc, a->columns)
			{
				modify_column(st, mt, relid, lfirst(lc));
			}
			if (a->primary_key)
			{
				if (primary_key_name(relid) == NULL)
					ereport(ERROR,
							(errcode(ERRCODE_UNDEFINED_OBJECT),
							 errmsg("materialized table \"%s\" has no primary key",
									get_rel_name(relid)),
							 errhint("Use ADD PRIMARY KEY to add one."),
							 mt_errposition(st->source, a->primary_key->location)));
				drop_primary_key(st, mt, relid, NULL);
				add_primary_key(st, mt, relid, a->primary_key);
			}
			if (a->watermark)
			{
				if (mt->watermark_column == NULL)
					ereport(ERROR,
							(errcode(ERRCODE_UNDEFINED_OBJECT),
							 errmsg("materialized table \"%s\" has no watermark",
									get_rel_name(relid)),
							 errhint("Use ADD WATERMARK to add one."),
							 mt_errposition(st->source, a->watermark->location)));
				mt_check_watermark(st, a->watermark, relid);
				mt->watermark_column = a->watermark->column;
				mt->watermark_expression = a->watermark->expr_text;
			}
			break;

		case MT_ALTER_DROP:
			switch (a->drop_target)
			{
				case MT_DROP_COLUMNS:
					foreach(lc, a->drop_columns)
					{
						drop_column(st, mt, relid, strVal(lfirst(lc)));
					}
					break;
				case MT_DROP_PRIMARY_KEY:
					drop_primary_key(st, mt, relid, NULL);
					break;
				case MT_DROP_CONSTRAINT:
					drop_primary_key(st, mt, relid, a->drop_constraint);
					break;
				case MT_DROP_WATERMARK:
					if (mt->watermark_column == NULL)
						ereport(ERROR,
								(errcode(ERRCODE_UNDEFINED_OBJECT),
								 errmsg("materialized table \"%s\" has no watermark",
										get_rel_name(relid)),
								 mt_errposition(st->source, a->action_location)));
					mt->watermark_column = NULL;
					mt->watermark_expression = NULL;
					break;
				case MT_DROP_DISTRIBUTION:
					if (mt->distribution == NULL)
						ereport(ERROR,
								(errcode(ERRCODE_UNDEFINED_OBJECT),
								 errmsg("materialized table \"%s\" has no distribution",
										get_rel_name(relid)),
								 mt_errposition(st->source, a->action_location)));
					no_distribution_change(st, relid, false);
					break;
			}
			break;

		default:
			elog(ERROR, "unexpected ALTER MATERIALIZED TABLE action %d", a->action);
	}
	mt_catalog_update(mt);
}

/* ---------------------------------------------------------------------
 * RENAME TO
 * ---------------------------------------------------------------------
 */

/*
 * alter_rename
 *		ALTER TABLE ... RENAME TO, which the guards follow as for any
 *		rename of a materialized table: its pg_cron job takes the new name;
 *		the catalog, the lineage, the history and the worker know the table
 *		by its OID, and its hidden objects by its id.  Its partitions keep
 *		their names, as PostgreSQL's own rename leaves them.
 */
static void
alter_rename(MtStatement *st, Oid relid)
{
	MtQualifiedName *new_name = st->alter->new_name;
	Oid			nspid = get_rel_namespace(relid);

	if ((new_name->schema || new_name->catalog) &&
		mt_resolve_namespace(st, new_name) != nspid)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rename materialized table \"%s\" into another schema",
						get_rel_name(relid)),
				 errdetail("RENAME TO gives the table a new name in its schema, \"%s\".",
						   get_namespace_name(nspid)),
				 mt_errposition(st->source, new_name->location)));
	if (OidIsValid(get_relname_relid(new_name->name, nspid)))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("relation \"%s\" already exists", new_name->name),
				 mt_errposition(st->source, new_name->location)));
	table_ddl(psprintf("ALTER TABLE %s RENAME TO %s", mt_qualified_name(relid),
					   quote_identifier(new_name->name)));
}

const char *
mt_alter_command(MtStatement *st)
{
	MtAlterStmt *a = st->alter;
	Oid			relid;

	/*
	 * Changes of one table are serialized with its refreshes, readers go
	 * on (a rename waits for them, as ALTER TABLE RENAME does); then the
	 * catalog row, which the actions below read and change.
	 */
	relid = mt_lookup_table(st, a->name,
							a->action == MT_ALTER_RENAME ? AccessExclusiveLock : MT_REFRESH_LOCKMODE,
							false);
	/* a table restored from a dump whose restore did not end is taken up first */
	if (mt_lock_catalog_row(st, a->name, relid)->restore_pending != NULL)
		mt_restore_take_up(relid);

	switch (a->action)
	{
		case MT_ALTER_SUSPEND:
			alter_suspend(st, relid);
			break;
		case MT_ALTER_RESUME:
			alter_resume(st, relid);
			break;
		case MT_ALTER_REFRESH:
			alter_refresh(st, relid);
			break;
		case MT_ALTER_AS:
			mt_alter_query(st, relid, a->query, true);
			break;
		case MT_ALTER_SET_FRESHNESS:
			mt_set_freshness(st, relid, a->freshness, true);
			break;
		case MT_ALTER_ADD:
		case MT_ALTER_MODIFY:
		case MT_ALTER_DROP:
			alter_elements(st, relid);
			break;
		case MT_ALTER_RENAME:
			alter_rename(st, relid);
			break;
		case MT_ALTER_SET_OPTIONS:
			mt_set_options(st, relid, a->options);
			break;
	}
	return "ALTER MATERIALIZED TABLE";
}

/*
 * mt_set_options
 *		New WITH options for an existing table (CREATE OR ALTER).  Storage
 *		parameters are reset and set again on the table, or on each of its
 *		leaf partitions.
 */
void
mt_set_options(MtStatement *st, Oid relid, List *options)
{
	MtTable    *mt = mt_catalog_lookup(relid, false);
	StringInfoData reset;
	ListCell   *lc;
	char	   *set = mt_storage_options_sql(options);
	List	   *leaves;

	mt_check_options(st, options, mt->partition_keys, mt_planned_from_table(relid), mt->refresh_mode);

	initStringInfo(&reset);
	foreach(lc, mt->options)
	{
		MtOption   *opt = lfirst(lc);

		if (mt_is_storage_option(opt->key))
			appendStringInfo(&reset, "%s%s", reset.len ? ", " : "", quote_identifier(opt->key));
	}

	leaves = mt_leaf_relations(relid);
	SPI_connect();
	MT_INTERNAL_BEGIN();
	foreach(lc, leaves)
	{
		char	   *leaf = mt_qualified_name(lfirst_oid(lc));

		if (reset.len)
			mt_spi_exec(psprintf("ALTER TABLE %s RESET (%s)", leaf, reset.data), SPI_OK_UTILITY);
		if (*set)
			mt_spi_exec(psprintf("ALTER TABLE %s SET %s", leaf, set + strlen(" WITH ")),
						SPI_OK_UTILITY);
	}
	MT_INTERNAL_END();
	SPI_finish();

	mt->options = options;
	mt_catalog_update(mt);
	mt_pipeline_options_changed(mt);
}
