/*-------------------------------------------------------------------------
 *
 * src/commands/convert.c
 *	  CREATE OR ALTER MATERIALIZED TABLE on a table that is not one:
 *	  converting it in place, when materialized_table.conversion_from_table
 *	  is on and the table qualifies.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "mt/commands/commands.h"
#include "mt/commands/create_plan.h"
#include "mt/utils/date_format.h"
#include "mt/catalog/freshness.h"
#include "mt/catalog/lineage.h"
#include "mt/materialized_table.h"
#include "mt/refresh/partitions.h"
#include "mt/lifecycle/pipeline.h"
#include "mt/refresh/refresh.h"
#include "mt/utils/relations.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/sql.h"

static void
not_convertible(MtStatement *st, Oid relid, const char *detail, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("table \"%s\" cannot be converted into a materialized table",
					get_rel_name(relid)),
			 errdetail("%s", detail),
			 hint ? errhint("%s", hint) : 0,
			 mt_errposition(st->source, st->create->name->location)));
}

/* Does a query of the catalog about relid return a row? */
static bool
catalog_has_row(const char *sql, Oid relid)
{
	return mt_spi_oids(sql, relid) != NIL;
}

/*
 * check_convertible
 *		What a materialized table cannot be and a table may be: a partition
 *		or a partitioned table (the partitions of a materialized table
 *		follow its PARTITIONED BY), part of an inheritance tree, temporary
 *		or unlogged, with triggers (refreshes write the table directly),
 *		foreign keys either way or identity columns (refreshes write every
 *		column).
 */
static void
check_convertible(MtStatement *st, Oid relid)
{
	char		relkind = get_rel_relkind(relid);
	char		persistence = get_rel_persistence(relid);

	if (relkind != RELKIND_RELATION)
	{
		if (relkind == RELKIND_PARTITIONED_TABLE)
			not_convertible(st, relid, "It is partitioned; the partitions of a materialized table are made by its PARTITIONED BY clause.",
							"Create a new materialized table instead.");
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", get_rel_name(relid)),
				 errdetail("CREATE OR ALTER converts only a table into a materialized table."),
				 mt_errposition(st->source, st->create->name->location)));
	}
	if (get_rel_relispartition(relid))
		not_convertible(st, relid, "It is a partition of another table.", NULL);
	if (persistence == RELPERSISTENCE_TEMP)
		not_convertible(st, relid, "It is a temporary table.", NULL);
	if (persistence == RELPERSISTENCE_UNLOGGED)
		not_convertible(st, relid, "It is unlogged; the changes of a materialized table are logged, for the tables that read it.",
						"Use ALTER TABLE ... SET LOGGED first.");
	if (catalog_has_row("SELECT inhrelid FROM pg_catalog.pg_inherits"
						" WHERE inhrelid OPERATOR(pg_catalog.=) $1 OR inhparent OPERATOR(pg_catalog.=) $1",
						relid))
		not_convertible(st, relid, "It is part of an inheritance tree.", NULL);
	if (catalog_has_row("SELECT oid FROM pg_catalog.pg_trigger"
						" WHERE tgrelid OPERATOR(pg_catalog.=) $1 AND NOT tgisinternal", relid))
		not_convertible(st, relid, "It has triggers; refreshes write a materialized table directly, so its triggers would not fire.",
						"Drop the triggers first.");
	if (catalog_has_row("SELECT oid FROM pg_catalog.pg_constraint"
						" WHERE contype OPERATOR(pg_catalog.=) 'f'"
						" AND (conrelid OPERATOR(pg_catalog.=) $1 OR confrelid OPERATOR(pg_catalog.=) $1)",
						relid))
		not_convertible(st, relid, "It has foreign keys, or is referenced by one; refreshes replace rows without the checks a foreign key needs.",
						"Drop the foreign keys first.");
	if (catalog_has_row("SELECT attrelid FROM pg_catalog.pg_attribute"
						" WHERE attrelid OPERATOR(pg_catalog.=) $1"
						" AND attidentity OPERATOR(pg_catalog.<>) '' AND NOT attisdropped", relid))
		not_convertible(st, relid, "It has identity columns; refreshes write the values of every column.",
						"Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY first.");
}

/*
 * mt_convert_table
 *		CREATE OR ALTER MATERIALIZED TABLE over a table that is not a
 *		materialized table, with materialized_table.conversion_from_table
 *		on: the table becomes one in place, as Flink's conversion does.
 *
 * Its columns are the old query's, by the rule of ALTER ... AS: the new
 * query produces them first, with their names and types, and may append
 * columns (added, nullable); generated columns stay as computed columns.
 * Its rows become the query's by a refresh, which writes only the rows
 * that differ; its privileges, indexes, constraints, comments and storage
 * stay, as does everything that reads it.
 */
void
mt_convert_table(MtStatement *st, Oid relid)
{
	MtCreateStmt *c = st->create;
	MtTable    *mt = palloc0(sizeof(MtTable));
	char	   *qualified = mt_qualified_name(relid);
	Query	   *query;
	List	   *qcols;
	List	   *table_cols;
	List	   *old_key;
	MtPrimaryKey *pk;
	int			value;
	MtFreshnessUnit unit;
	MtRefreshMode mode;
	Oid			owner = mt_table_owner(relid);
	int			n = 0;
	int			i;
	ListCell   *lc;

	mt_check_owner(relid);
	LockRelationOid(relid, MT_REFRESH_LOCKMODE);
	check_convertible(st, relid);
	if (c->partition_keys)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot convert table \"%s\" into a partitioned materialized table",
						get_rel_name(relid)),
				 errdetail("PostgreSQL cannot partition a table that exists."),
				 errhint("Leave PARTITIONED BY out, or create a new materialized table."),
				 mt_errposition(st->source, c->partition_location)));
	if (c->distribution)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot convert table \"%s\" into a distributed materialized table",
						get_rel_name(relid)),
				 errdetail("The distribution decides how the table is partitioned, which PostgreSQL fixes when a table is created."),
				 errhint("Leave DISTRIBUTED BY out, or create a new materialized table."),
				 mt_errposition(st->source, c->distribution->location)));
	foreach(lc, c->columns)
	{
		MtColumn   *def = lfirst(lc);

		if (def->kind != MT_COLUMN_PHYSICAL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("cannot add %s column \"%s\" while converting table \"%s\"",
							def->kind == MT_COLUMN_COMPUTED ? "computed" : "metadata",
							def->name, get_rel_name(relid)),
					 errhint("Convert the table first, then use ALTER MATERIALIZED TABLE ... ADD."),
					 mt_errposition(st->source, def->location)));
	}

	mt_freshness_resolve(c->freshness, c->refresh_mode, st->source,
						 c->refresh_mode_location, &value, &unit, &mode);
	query = mt_analyze_query(st, c->query);
	/* the table's owner, who refreshes it, must be able to run the query */
	mt_check_query_privileges(st, c->query, query, owner);
	qcols = mt_query_columns(query);

	/* the table's columns come first in the query, as they are */
	table_cols = mt_planned_from_table(relid);
	foreach(lc, table_cols)
	{
		PlannedColumn *pc = lfirst(lc);
		MtQueryColumn *qc;

		if (pc->kind != MT_COLUMN_PHYSICAL)
			continue;
		n++;
		if (n > list_length(qcols))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the query does not produce column \"%s\" of table \"%s\"",
							pc->name, get_rel_name(relid)),
					 errdetail("Column %d of the table is \"%s\" %s, but the query produces only %d columns.",
							   n, pc->name, format_type_with_typemod(pc->typid, pc->typmod),
							   list_length(qcols)),
					 errhint("The query must produce the table's columns first, in their order and with their types; it may append columns."),
					 mt_errposition(st->source, c->query->location)));
		qc = list_nth(qcols, n - 1);
		if (strcmp(qc->name, pc->name) != 0 || qc->typid != pc->typid || qc->typmod != pc->typmod)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("the query does not fit column %d of table \"%s\"",
							n, get_rel_name(relid)),
					 errdetail("Column %d is \"%s\" %s in the table but \"%s\" %s in the query.",
							   n, pc->name, format_type_with_typemod(pc->typid, pc->typmod),
							   qc->name, format_type_with_typemod(qc->typid, qc->typmod)),
					 errhint("The query must produce the table's columns first, in their order and with their types; it may append columns."),
					 mt_errposition(st->source, c->query->location)));
	}
	for (i = n; i < list_length(qcols); i++)
	{
		MtQueryColumn *qc = list_nth(qcols, i);

		if (mt_find_planned(table_cols, qc->name))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("column \"%s\" of the query already exists in table \"%s\"",
							qc->name, get_rel_name(relid)),
					 mt_errposition(st->source, c->query->location)));
	}
	/* a column list names the columns in their order, with their types */
	i = 0;
	foreach(lc, c->columns)
	{
		MtColumn   *def = lfirst(lc);
		MtQueryColumn *qc = i < list_length(qcols) ? list_nth(qcols, i) : NULL;

		if (qc == NULL || strcmp(qc->name, def->name) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("column \"%s\" of the column list is not column %d of the query",
							def->name, i + 1),
					 errhint("List the columns in the query's order."),
					 mt_errposition(st->source, def->location)));
		if (def->type_name)
		{
			Oid			typid;
			int32		typmod;

			mt_type_id_and_mod(st, def->type_name, &typid, &typmod);
			if (typid != qc->typid || typmod != qc->typmod)
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("column \"%s\" is declared as %s but the query produces %s",
								def->name, format_type_with_typemod(typid, typmod),
								format_type_with_typemod(qc->typid, qc->typmod)),
						 errdetail("A table converted in place keeps the types of its columns."),
						 mt_errposition(st->source, def->location)));
		}
		i++;
	}

	/* the primary key: the table's, or the one declared if it has none */
	pk = mt_plan_primary_key(st, c);
	old_key = mt_primary_key_columns(relid);
	if (pk && old_key != NIL)
	{
		bool		same = list_length(old_key) == list_length(pk->columns);
		ListCell   *lc2;

		if (same)
			forboth(lc, old_key, lc2, pk->columns)
				if (strcmp(lfirst(lc), strVal(lfirst(lc2))) != 0)
					same = false;
		if (!same)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("table \"%s\" already has another primary key", get_rel_name(relid)),
					 errhint("Leave the primary key out: the table keeps its own."),
					 mt_errposition(st->source, pk->location)));
		pk = NULL;
	}

	/* the query's new columns, then the rest of what the statement says */
	SPI_connect();
	for (i = n; i < list_length(qcols); i++)
	{
		MtQueryColumn *qc = list_nth(qcols, i);

		mt_spi_exec(psprintf("ALTER TABLE %s ADD COLUMN %s %s", qualified,
							 quote_identifier(qc->name), mt_type_sql(qc->typid, qc->typmod)),
					SPI_OK_UTILITY);
	}
	SPI_finish();
	CommandCounterIncrement();
	table_cols = mt_planned_from_table(relid);
	mt_check_primary_key(st, pk, table_cols);
	if (pk)
	{
		SPI_connect();
		mt_spi_exec(psprintf("ALTER TABLE %s ADD %sPRIMARY KEY (%s)", qualified,
							 pk->constraint_name ?
							 psprintf("CONSTRAINT %s ", quote_identifier(pk->constraint_name)) : "",
							 mt_identifier_list(pk->columns)), SPI_OK_UTILITY);
		SPI_finish();
		CommandCounterIncrement();
	}
	mt_check_options(st, c->options, NIL, table_cols, mode);
	if (*mt_storage_options_sql(c->options))
	{
		SPI_connect();
		mt_spi_exec(psprintf("ALTER TABLE %s SET %s", qualified,
							 mt_storage_options_sql(c->options) + strlen(" WITH ")),
					SPI_OK_UTILITY);
		SPI_finish();
	}
	if (c->watermark)
		mt_check_watermark(st, c->watermark, relid);
	mt_apply_column_comments(relid, c->columns);
	if (c->comment)
		mt_comment_columns(relid, c->comment, NIL);

	/* its query, as for a new table, and never the table itself */
	mt->relid = relid;
	mt->id = mt_catalog_has_restore() ? mt_catalog_new_id() : (int64) relid;
	mt->query_view = mt_define_query_view(st, c->query, relid, mt->id, owner, false);
	mt_check_no_cycle(st, c->query, relid, mt->query_view);
	mt_lineage_check_freshness(relid, mt->query_view, value, unit, st->source,
							   c->freshness ? c->freshness->location : c->name->location);

	mt->definition_query = c->query->text;
	mt->refresh_mode = mode;
	mt->freshness_value = value;
	mt->freshness_unit = unit;
	mt->status = MT_STATUS_INITIALIZING;
	mt->options = c->options;
	mt->declared_columns = c->has_column_list && c->columns != NIL;
	if (c->watermark)
	{
		mt->watermark_column = c->watermark->column;
		mt->watermark_expression = c->watermark->expr_text;
	}
	mt_catalog_insert(mt);
	CommandCounterIncrement();

	/* its rows become the query's, in this transaction */
	(void) mt_refresh(relid, NIL, MT_TRIGGER_CREATE);

	mt = mt_catalog_lookup(relid, false);
	mt->status = MT_STATUS_ACTIVATED;
	mt_catalog_update(mt);
	mt_pipeline_table_created(mt);
}
