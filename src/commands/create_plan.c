/*-------------------------------------------------------------------------
 *
 * src/commands/create_plan.c
 *	  The plan of a materialized table to create, or of one that exists:
 *	  its columns (from the query, declared, computed, metadata), primary
 *	  key, partition keys, distribution and WITH options, each checked
 *	  against the others; and the comments on its columns.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "access/table.h"
#include "executor/spi.h"
#include "nodes/makefuncs.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"

#include "mt/commands/commands.h"
#include "mt/commands/create_plan.h"
#include "mt/utils/date_format.h"
#include "mt/catalog/freshness.h"
#include "mt/materialized_table.h"
#include "mt/refresh/partitions.h"
#include "mt/utils/relations.h"
#include "mt/utils/sql.h"

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

PlannedColumn *
mt_find_planned(List *planned, const char *name)
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
 * mt_plan_columns
 *		The table's columns: the query's (in the column list's order when it
 *		names them), then computed and metadata columns where listed.
 */
List *
mt_plan_columns(MtStatement *st, MtCreateStmt *c, List *qcols)
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

		if (mt_find_planned(planned, def->name))
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
MtPrimaryKey *
mt_plan_primary_key(MtStatement *st, MtCreateStmt *c)
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

void
mt_check_primary_key(MtStatement *st, MtPrimaryKey *pk, List *planned)
{
	ListCell   *lc;

	if (pk == NULL)
		return;
	foreach(lc, pk->columns)
	{
		char	   *name = strVal(lfirst(lc));
		PlannedColumn *pc = mt_find_planned(planned, name);

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

void
mt_check_partition_keys(MtStatement *st, MtCreateStmt *c, List *planned, List *qcols)
{
	ListCell   *lc;

	foreach(lc, c->partition_keys)
	{
		char	   *name = strVal(lfirst(lc));
		PlannedColumn *pc = mt_find_planned(planned, name);
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
	MtErrorAt	at;
	DefElem    *def;
	Datum		reloptions;

	if (dot)
		def = makeDefElemExtended(pnstrdup(opt->key, dot - opt->key), pstrdup(dot + 1),
								  (Node *) makeString(pstrdup(opt->value)), DEFELEM_UNSPEC, -1);
	else
		def = makeDefElem(pstrdup(opt->key), (Node *) makeString(pstrdup(opt->value)), -1);

	mt_error_at_push(&at, st->source, opt->location, false);
	reloptions = transformRelOptions((Datum) 0, list_make1(def), dot ? "toast" : NULL,
									 (char **) validnsps, false, false);
	(void) heap_reloptions(dot ? RELKIND_TOASTVALUE : RELKIND_RELATION, reloptions, true);
	mt_error_at_pop(&at);
}

/*
 * mt_check_options
 *		WITH options: date formatters must name a string partition column
 *		and be valid patterns; storage parameters are applied (and checked
 *		by PostgreSQL when the table is created); anything else is kept
 *		and shown, with a notice that PostgreSQL gives it no meaning.
 */
void
mt_check_options(MtStatement *st, List *options, List *partition_keys, List *planned,
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
			PlannedColumn *pc = mt_find_planned(planned, col);
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
 * mt_check_distribution
 *		Columns must be the table's; INTO n BUCKETS alone distributes by the
 *		primary key.
 */
void
mt_check_distribution(MtStatement *st, MtDistribution *d, MtPrimaryKey *pk, List *planned)
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
		PlannedColumn *pc = mt_find_planned(planned, strVal(lfirst(lc)));

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
void
mt_resolve_computed_types(MtStatement *st, List *planned)
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

char *
mt_identifier_list(List *names)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, names)
		appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", quote_identifier(strVal(lfirst(lc))));
	return buf.data;
}

void
mt_comment_columns(Oid relid, const char *comment, List *planned)
{
	ListCell   *lc;

	if (comment)
		mt_comment_on(relid, 0, comment);
	foreach(lc, planned)
	{
		PlannedColumn *pc = lfirst(lc);

		if (pc->comment)
			mt_comment_on(relid, get_attnum(relid, pc->name), pc->comment);
	}
}

/* Column comments of CREATE OR ALTER. */
void
mt_apply_column_comments(Oid relid, List *columns)
{
	ListCell   *lc;

	foreach(lc, columns)
	{
		MtColumn   *def = lfirst(lc);

		if (def->comment)
			mt_comment_on(relid, get_attnum(relid, def->name), def->comment);
	}
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

/* The table's columns as mt_check_options() wants them. */
List *
mt_planned_from_table(Oid relid)
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
