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

#include "access/reloptions.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_coerce.h"
#include "parser/parse_type.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "mt/commands/commands.h"
#include "mt/utils/date_format.h"
#include "mt/catalog/freshness.h"
#include "mt/catalog/lineage.h"
#include "mt/materialized_table.h"
#include "mt/refresh/partitions.h"
#include "mt/lifecycle/pipeline.h"
#include "mt/refresh/refresh.h"

#define DEFAULT_BUCKETS 4
#define DATE_FORMATTER_PREFIX "partition.fields."
#define DATE_FORMATTER_SUFFIX ".date-formatter"

/* The only metadata a materialized table's rows carry. */
#define METADATA_REFRESH_TIME "refresh_time"

/* A column of the table to create. */
typedef struct PlannedColumn
{
	char	   *name;
	MtColumnKind kind;
	Oid			typid;
	int32		typmod;
	Oid			collid;
	bool		not_null;
	char	   *comment;
	char	   *expr_text;		/* computed */
	int			expr_location;
	char	   *metadata_key;	/* metadata */
} PlannedColumn;

static List *planned_from_table(Oid relid);

static MtQueryColumn *
find_query_column(List *qcols, const char *name)
{
	ListCell   *lc;

	foreach(lc, qcols)
	{
		MtQueryColumn *qc = lfirst(lc);

		if (strcmp(qc->name, name) == 0)
			return qc;
	}
	return NULL;
}

static PlannedColumn *
find_planned(List *planned, const char *name)
{
	ListCell   *lc;

	foreach(lc, planned)
	{
		PlannedColumn *pc = lfirst(lc);

		if (strcmp(pc->name, name) == 0)
			return pc;
	}
	return NULL;
}

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
column_names_text(List *qcols)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, qcols)
		appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", ((MtQueryColumn *) lfirst(lc))->name);
	return buf.data;
}

/* A planned column from the query, with the declared type if any. */
static PlannedColumn *
plan_physical(MtStatement *st, MtQueryColumn *qc, MtColumn *def)
{
	PlannedColumn *pc = palloc0(sizeof(PlannedColumn));

	pc->name = qc->name;
	pc->kind = MT_COLUMN_PHYSICAL;
	pc->typid = qc->typid;
	pc->typmod = qc->typmod;
	pc->collid = qc->collid;
	if (def)
	{
		pc->not_null = def->not_null;
		pc->comment = def->comment;
	}
	if (def && def->type_name)
	{
		Oid			typid;
		int32		typmod;

		mt_type_id_and_mod(st, def->type_name, &typid, &typmod);
		if (!can_coerce_type(1, &qc->typid, &typid, COERCION_ASSIGNMENT))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" is declared as %s but the query produces %s",
							def->name, format_type_with_typemod(typid, typmod),
							format_type_with_typemod(qc->typid, qc->typmod)),
					 errdetail("There is no implicit or assignment cast from %s to %s.",
							   format_type_be(qc->typid), format_type_be(typid)),
					 errhint("Cast the value in the query, or declare a type it can be assigned to."),
					 mt_errposition(st->source, def->location)));
		if (typid != qc->typid)
			pc->collid = get_typcollation(typid);
		pc->typid = typid;
		pc->typmod = typmod;
	}
	return pc;
}

/*
 * plan_columns
 *		The table's columns: the query's (in the column list's order when it
 *		names them), then computed and metadata columns where listed.
 */
static List *
plan_columns(MtStatement *st, MtCreateStmt *c, List *qcols)
{
	List	   *planned = NIL;
	List	   *physical = NIL;
	ListCell   *lc;

	foreach(lc, c->columns)
	{
		MtColumn   *def = lfirst(lc);

		if (def->kind == MT_COLUMN_PHYSICAL)
			physical = lappend(physical, def);
	}

	/* a table cannot have two columns of one name, as CREATE TABLE AS says */
	foreach(lc, qcols)
	{
		MtQueryColumn *qc = lfirst(lc);
		ListCell   *lc2;

		for_each_cell(lc2, qcols, lnext(qcols, lc))
			if (strcmp(((MtQueryColumn *) lfirst(lc2))->name, qc->name) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("column \"%s\" specified more than once", qc->name),
						 errdetail("The query produces more than one column named \"%s\".", qc->name),
						 errhint("Give the query's columns distinct names with AS."),
						 mt_errposition(st->source, c->query->location)));
	}

	if (physical != NIL && list_length(physical) != list_length(qcols))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
				 errmsg("the number of columns in the column list must match the number of columns in the query"),
				 errdetail("The column list has %d columns and the query produces %d: %s.",
						   list_length(physical), list_length(qcols), column_names_text(qcols)),
				 mt_errposition(st->source, ((MtColumn *) linitial(physical))->location)));

	if (physical == NIL)
	{
		foreach(lc, qcols)
			planned = lappend(planned, plan_physical(st, lfirst(lc), NULL));
	}

	foreach(lc, c->columns)
	{
		MtColumn   *def = lfirst(lc);
		PlannedColumn *pc;

		if (find_planned(planned, def->name))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("column \"%s\" specified more than once", def->name),
					 mt_errposition(st->source, def->location)));

		if (def->kind == MT_COLUMN_PHYSICAL)
		{
			MtQueryColumn *qc = find_query_column(qcols, def->name);

			if (qc == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_COLUMN),
						 errmsg("column \"%s\" is not produced by the query", def->name),
						 errdetail("The query produces: %s.", column_names_text(qcols)),
						 errhint("The column list may reorder the query's columns but not rename them."),
						 mt_errposition(st->source, def->location)));
			planned = lappend(planned, plan_physical(st, qc, def));
			continue;
		}

		if (physical == NIL && find_query_column(qcols, def->name))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("column \"%s\" specified more than once", def->name),
					 errdetail("The query already produces a column of that name."),
					 mt_errposition(st->source, def->location)));

		pc = palloc0(sizeof(PlannedColumn));
		pc->name = def->name;
		pc->kind = def->kind;
		pc->comment = def->comment;
		pc->not_null = def->not_null;
		if (def->kind == MT_COLUMN_COMPUTED)
		{
			pc->expr_text = def->expr_text;
			pc->expr_location = def->expr_location;
		}
		else
		{
			Oid			from = TIMESTAMPTZOID;

			pc->metadata_key = def->metadata_key ? def->metadata_key : def->name;
			if (strcmp(pc->metadata_key, METADATA_REFRESH_TIME) != 0)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("metadata key \"%s\" is not supported", pc->metadata_key),
						 errdetail("The only metadata a materialized table's rows carry is \"%s\", the time of the refresh that wrote the row.",
								   METADATA_REFRESH_TIME),
						 mt_errposition(st->source, def->location)));
			mt_type_id_and_mod(st, def->type_name, &pc->typid, &pc->typmod);
			pc->collid = get_typcollation(pc->typid);
			if (!can_coerce_type(1, &from, &pc->typid, COERCION_EXPLICIT))
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("metadata column \"%s\" cannot be of type %s", def->name,
								format_type_be(pc->typid)),
						 errdetail("Metadata key \"%s\" is a timestamp with time zone.",
								   pc->metadata_key),
						 mt_errposition(st->source, def->location)));
		}
		planned = lappend(planned, pc);
	}
	return planned;
}

/* The primary key's columns, from column constraints or the table constraint. */
static MtPrimaryKey *
primary_key_of(MtStatement *st, MtCreateStmt *c)
{
	MtPrimaryKey *pk = c->primary_key;
	ListCell   *lc;

	foreach(lc, c->columns)
	{
		MtColumn   *def = lfirst(lc);

		if (!def->primary_key)
			continue;
		if (pk)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("multiple primary keys are not allowed"),
					 mt_errposition(st->source, def->location)));
		pk = palloc0(sizeof(MtPrimaryKey));
		pk->constraint_name = def->constraint_name;
		pk->columns = list_make1(makeString(def->name));
		pk->location = def->location;
	}
	return pk;
}

static void
check_primary_key(MtStatement *st, MtPrimaryKey *pk, List *planned)
{
	ListCell   *lc;

	if (pk == NULL)
		return;
	foreach(lc, pk->columns)
	{
		char	   *name = strVal(lfirst(lc));
		PlannedColumn *pc = find_planned(planned, name);

		if (pc == NULL || pc->kind == MT_COLUMN_METADATA)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("primary key column \"%s\" is not produced by the query", name),
					 mt_errposition(st->source, pk->location)));
		if (pc->kind == MT_COLUMN_COMPUTED)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("computed column \"%s\" cannot be part of the primary key", name),
					 mt_errposition(st->source, pk->location)));
	}
}

static void
check_partition_keys(MtStatement *st, MtCreateStmt *c, List *planned, List *qcols)
{
	ListCell   *lc;

	foreach(lc, c->partition_keys)
	{
		char	   *name = strVal(lfirst(lc));
		PlannedColumn *pc = find_planned(planned, name);
		ListCell   *lc2;

		if (pc == NULL || pc->kind != MT_COLUMN_PHYSICAL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("partition column \"%s\" is not produced by the query", name),
					 errdetail("The query produces: %s.", column_names_text(qcols)),
					 mt_errposition(st->source, c->partition_location)));
		for_each_cell(lc2, c->partition_keys, lnext(c->partition_keys, lc))
			if (strcmp(strVal(lfirst(lc2)), name) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("partition column \"%s\" specified more than once", name),
						 mt_errposition(st->source, c->partition_location)));
	}
}

typedef struct OptionLocation
{
	const char *source;
	int			location;
} OptionLocation;

static void
option_error_callback(void *arg)
{
	OptionLocation *where = (OptionLocation *) arg;

	(void) mt_errposition(where->source, where->location);
}

/*
 * check_storage_option
 *		Let PostgreSQL validate a storage parameter now, so that a bad value
 *		is reported at the option rather than from generated DDL.
 */
static void
check_storage_option(MtStatement *st, MtOption *opt)
{
	static const char *const validnsps[] = HEAP_RELOPT_NAMESPACES;
	const char *dot = strchr(opt->key, '.');
	OptionLocation where = {st->source, opt->location};
	ErrorContextCallback callback;
	DefElem    *def;
	Datum		reloptions;

	if (dot)
		def = makeDefElemExtended(pnstrdup(opt->key, dot - opt->key), pstrdup(dot + 1),
								  (Node *) makeString(pstrdup(opt->value)), DEFELEM_UNSPEC, -1);
	else
		def = makeDefElem(pstrdup(opt->key), (Node *) makeString(pstrdup(opt->value)), -1);

	callback.callback = option_error_callback;
	callback.arg = &where;
	callback.previous = error_context_stack;
	error_context_stack = &callback;
	reloptions = transformRelOptions((Datum) 0, list_make1(def), dot ? "toast" : NULL,
									 (char **) validnsps, false, false);
	(void) heap_reloptions(dot ? RELKIND_TOASTVALUE : RELKIND_RELATION, reloptions, true);
	error_context_stack = callback.previous;
}

/*
 * check_options
 *		WITH options: date formatters must name a string partition column
 *		and be valid patterns; storage parameters are applied (and checked
 *		by PostgreSQL when the table is created); anything else is kept
 *		and shown, with a notice that PostgreSQL gives it no meaning.
 */
static void
check_options(MtStatement *st, List *options, List *partition_keys, List *planned,
			  MtRefreshMode mode)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		MtOption   *opt = lfirst(lc);
		size_t		len = strlen(opt->key);
		size_t		plen = strlen(DATE_FORMATTER_PREFIX);
		size_t		slen = strlen(DATE_FORMATTER_SUFFIX);

		if (len > plen + slen &&
			strncmp(opt->key, DATE_FORMATTER_PREFIX, plen) == 0 &&
			strcmp(opt->key + len - slen, DATE_FORMATTER_SUFFIX) == 0)
		{
			char	   *col = pnstrdup(opt->key + plen, len - plen - slen);
			PlannedColumn *pc = find_planned(planned, col);
			bool		is_key = false;
			ListCell   *lc2;

			foreach(lc2, partition_keys)
				if (strcmp(strVal(lfirst(lc2)), col) == 0)
					is_key = true;
			if (!is_key || pc == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("column \"%s\" referenced by option \"%s\" is not a partition column",
								col, opt->key),
						 partition_keys ?
						 errdetail("The partition columns are: %s.", mt_name_list_text(partition_keys)) :
						 errdetail("The table has no PARTITIONED BY clause."),
						 mt_errposition(st->source, opt->location)));
			if (pc->typid != TEXTOID && pc->typid != VARCHAROID && pc->typid != BPCHAROID)
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("option \"%s\" needs a partition column of a string type", opt->key),
						 errdetail("Column \"%s\" is of type %s; char, varchar and text are allowed.",
								   col, format_type_be(pc->typid)),
						 mt_errposition(st->source, opt->location)));
			mt_date_format_check(opt->value, opt->key);
			if (mode == MT_MODE_CONTINUOUS)
				ereport(NOTICE,
						(errmsg("option \"%s\" only has an effect in FULL refresh mode", opt->key)));
		}
		else if (strcmp(opt->key, "sink.parallelism") == 0)
		{
			char	   *end;
			long		n = strtol(opt->value, &end, 10);

			if (*end != '\0' || n <= 0 || n > 1024)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("option \"sink.parallelism\" must be a positive integer"),
						 mt_errposition(st->source, opt->location)));
		}
		else if (mt_is_storage_option(opt->key))
			check_storage_option(st, opt);
		else
			ereport(NOTICE,
					(errmsg("option \"%s\" is kept but has no effect in PostgreSQL", opt->key)));
	}
}

/*
 * check_distribution
 *		Columns must be the table's; INTO n BUCKETS alone distributes by the
 *		primary key.
 */
static void
check_distribution(MtStatement *st, MtDistribution *d, MtPrimaryKey *pk, List *planned)
{
	ListCell   *lc;

	if (d == NULL)
		return;
	if (d->columns == NIL)
	{
		if (pk == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("DISTRIBUTED INTO n BUCKETS needs a primary key to distribute by"),
					 errhint("Name the columns: DISTRIBUTED BY (column) INTO n BUCKETS."),
					 mt_errposition(st->source, d->location)));
		d->columns = list_copy(pk->columns);
	}
	foreach(lc, d->columns)
	{
		PlannedColumn *pc = find_planned(planned, strVal(lfirst(lc)));

		if (pc == NULL || pc->kind == MT_COLUMN_COMPUTED)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("distribution column \"%s\" is not produced by the query",
							strVal(lfirst(lc))),
					 mt_errposition(st->source, d->location)));
	}
	if (d->kind == MT_DISTRIBUTION_DEFAULT)
		d->kind = MT_DISTRIBUTION_HASH;
	if (d->buckets == 0)
		d->buckets = DEFAULT_BUCKETS;
}

/* The type of a computed column's expression over the planned columns. */
static void
resolve_computed_types(MtStatement *st, List *planned)
{
	ListCell   *lc;

	foreach(lc, planned)
	{
		PlannedColumn *pc = lfirst(lc);
		StringInfoData from;
		ListCell   *lc2;

		if (pc->kind != MT_COLUMN_COMPUTED)
			continue;
		initStringInfo(&from);
		appendStringInfoString(&from, "(SELECT ");
		foreach(lc2, planned)
		{
			PlannedColumn *other = lfirst(lc2);

			if (other->kind == MT_COLUMN_COMPUTED)
				continue;
			appendStringInfo(&from, "%sCAST(NULL AS %s) AS %s", from.len > 8 ? ", " : "",
							 mt_type_sql(other->typid, other->typmod),
							 quote_identifier(other->name));
		}
		appendStringInfo(&from, ") AS %s", quote_identifier(st->create->name->name));
		mt_expression_type(st, pc->expr_location, pc->expr_text, from.data,
						   "computed column expressions", true,
						   &pc->typid, &pc->typmod, &pc->collid);
	}
}

static char *
identifier_list(List *names)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, names)
		appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", quote_identifier(strVal(lfirst(lc))));
	return buf.data;
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
		appendStringInfo(&sql, "PRIMARY KEY (%s)", identifier_list(pk->columns));
	}
	appendStringInfoString(&sql, "\n)");
	if (c->partition_keys)
		appendStringInfo(&sql, " PARTITION BY LIST (%s)",
						 quote_identifier(strVal(linitial(c->partition_keys))));
	else if (d)
		appendStringInfo(&sql, " PARTITION BY %s (%s)",
						 d->kind == MT_DISTRIBUTION_RANGE ? "RANGE" : "HASH",
						 identifier_list(d->columns));
	else
		appendStringInfoString(&sql, mt_storage_options_sql(options));
	return sql.data;
}

static void
add_comments(const char *qualified, const char *comment, List *planned)
{
	ListCell   *lc;

	SPI_connect();
	if (comment)
		mt_spi_exec(psprintf("COMMENT ON TABLE %s IS %s", qualified,
							 quote_literal_cstr(comment)), SPI_OK_UTILITY);
	foreach(lc, planned)
	{
		PlannedColumn *pc = lfirst(lc);

		if (pc->comment)
			mt_spi_exec(psprintf("COMMENT ON COLUMN %s.%s IS %s", qualified,
								 quote_identifier(pc->name),
								 quote_literal_cstr(pc->comment)), SPI_OK_UTILITY);
	}
	SPI_finish();
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
	ListCell   *lc;

	/* everything that can be checked before anything is created */
	mt_freshness_resolve(c->freshness, c->refresh_mode, st->source,
						 c->refresh_mode_location, &value, &unit, &mode);
	query = mt_analyze_query(st, c->query);
	mt_check_query_privileges(st, c->query, query, GetUserId());
	qcols = mt_query_columns(query);
	planned = plan_columns(st, c, qcols);
	pk = primary_key_of(st, c);
	check_primary_key(st, pk, planned);
	check_partition_keys(st, c, planned, qcols);
	check_options(st, c->options, c->partition_keys, planned, mode);
	check_distribution(st, c->distribution, pk, planned);
	if (pk && c->partition_keys)
		mt_check_key_covers(st, pk, c->partition_keys, "PARTITIONED BY");
	if (pk && c->distribution)
		mt_check_key_covers(st, pk, c->distribution->columns, "DISTRIBUTED BY");
	resolve_computed_types(st, planned);

	/* the table */
	qualified = quote_qualified_identifier(get_namespace_name(nspid), c->name->name);
	SPI_connect();
	mt_internal_depth++;
	mt_spi_exec(create_table_sql(qualified, planned, pk, c, c->distribution, c->options),
				SPI_OK_UTILITY);
	mt_internal_depth--;
	SPI_finish();
	CommandCounterIncrement();
	mt->relid = get_relname_relid(c->name->name, nspid);
	add_comments(qualified, c->comment, planned);
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

	/* buckets of a distributed table without PARTITIONED BY */
	mt_internal_depth++;
	mt_partition_create_buckets(mt->relid, mt);
	mt_internal_depth--;
	CommandCounterIncrement();

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
	MtPrimaryKey *pk = primary_key_of(st, c);
	List	   *old_key = mt_primary_key_columns(relid);
	List	   *table_cols = planned_from_table(relid);
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
		PlannedColumn *pc = find_planned(table_cols, def->name);

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

/* Column comments of CREATE OR ALTER. */
static void
apply_column_comments(Oid relid, List *columns)
{
	ListCell   *lc;

	SPI_connect();
	foreach(lc, columns)
	{
		MtColumn   *def = lfirst(lc);

		if (def->comment)
			mt_spi_exec(psprintf("COMMENT ON COLUMN %s.%s IS %s", mt_qualified_name(relid),
								 quote_identifier(def->name),
								 quote_literal_cstr(def->comment)), SPI_OK_UTILITY);
	}
	SPI_finish();
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
	{
		SPI_connect();
		mt_spi_exec(psprintf("COMMENT ON TABLE %s IS %s", mt_qualified_name(relid),
							 quote_literal_cstr(c->comment)), SPI_OK_UTILITY);
		SPI_finish();
	}
	apply_column_comments(relid, c->columns);
	(void) changed;
}

/* ---------------------------------------------------------------------
 * CREATE OR ALTER over a table: conversion in place
 * ---------------------------------------------------------------------
 */

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
 * convert_table
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
static void
convert_table(MtStatement *st, Oid relid)
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
	table_cols = planned_from_table(relid);
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

		if (find_planned(table_cols, qc->name))
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
	pk = primary_key_of(st, c);
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
	table_cols = planned_from_table(relid);
	check_primary_key(st, pk, table_cols);
	if (pk)
	{
		SPI_connect();
		mt_spi_exec(psprintf("ALTER TABLE %s ADD %sPRIMARY KEY (%s)", qualified,
							 pk->constraint_name ?
							 psprintf("CONSTRAINT %s ", quote_identifier(pk->constraint_name)) : "",
							 identifier_list(pk->columns)), SPI_OK_UTILITY);
		SPI_finish();
		CommandCounterIncrement();
	}
	check_options(st, c->options, NIL, table_cols, mode);
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
	apply_column_comments(relid, c->columns);
	if (c->comment)
		add_comments(qualified, c->comment, NIL);

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
				convert_table(st, relid);
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

/* A generated column's expression, as pg_get_expr() shows it. */
static char *
generation_expression(Relation rel, AttrNumber attnum)
{
	TupleConstr *constr = RelationGetDescr(rel)->constr;
	int			i;

	for (i = 0; constr && i < constr->num_defval; i++)
		if (constr->defval[i].adnum == attnum)
			return deparse_expression(stringToNode(constr->defval[i].adbin),
									  deparse_context_for(RelationGetRelationName(rel),
														  RelationGetRelid(rel)),
									  false, false);
	return NULL;
}

/* The table's columns as check_options() wants them. */
static List *
planned_from_table(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *planned = NIL;
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		PlannedColumn *pc;

		if (att->attisdropped)
			continue;
		pc = palloc0(sizeof(PlannedColumn));
		pc->name = pstrdup(NameStr(att->attname));
		pc->kind = att->attgenerated ? MT_COLUMN_COMPUTED : MT_COLUMN_PHYSICAL;
		pc->typid = att->atttypid;
		pc->typmod = att->atttypmod;
		if (att->attgenerated)
			pc->expr_text = generation_expression(rel, att->attnum);
		planned = lappend(planned, pc);
	}
	table_close(rel, AccessShareLock);
	return planned;
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

	check_options(st, options, mt->partition_keys, planned_from_table(relid), mt->refresh_mode);

	initStringInfo(&reset);
	foreach(lc, mt->options)
	{
		MtOption   *opt = lfirst(lc);

		if (mt_is_storage_option(opt->key))
			appendStringInfo(&reset, "%s%s", reset.len ? ", " : "", quote_identifier(opt->key));
	}

	leaves = mt_leaf_relations(relid);
	SPI_connect();
	mt_internal_depth++;
	foreach(lc, leaves)
	{
		char	   *leaf = mt_qualified_name(lfirst_oid(lc));

		if (reset.len)
			mt_spi_exec(psprintf("ALTER TABLE %s RESET (%s)", leaf, reset.data), SPI_OK_UTILITY);
		if (*set)
			mt_spi_exec(psprintf("ALTER TABLE %s SET %s", leaf, set + strlen(" WITH ")),
						SPI_OK_UTILITY);
	}
	mt_internal_depth--;
	SPI_finish();

	mt->options = options;
	mt_catalog_update(mt);
	mt_pipeline_options_changed(mt);
}
