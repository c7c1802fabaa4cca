/*-------------------------------------------------------------------------
 *
 * src/commands/describe.c
 *	  SHOW MATERIALIZED TABLES, SHOW CREATE MATERIALIZED TABLE and
 *	  DESCRIBE: the statements of Flink 2.x that return rows.
 *
 * execute() returns one text, so these run through
 * materialized_table.execute_query(), a set-returning function whose rows
 * psql shows as a table.  A set-returning function has one row type, so
 * every statement fills the same columns, modelled on Flink's DESCRIBE:
 *
 *	  name		the column (DESCRIBE), the property (DESCRIBE EXTENDED), or
 *				the table (SHOW)
 *	  type		the column's type; 'MATERIALIZED TABLE' for a table
 *	  null		whether the column may be NULL
 *	  key		PRI(cols) for the primary key's columns (and tables)
 *	  extras	a computed column's AS expr, a metadata column's METADATA
 *				FROM 'key'; a table's mode, freshness and status (SHOW
 *				MATERIALIZED TABLES) or statement (SHOW CREATE); a
 *				property's value (DESCRIBE EXTENDED)
 *	  watermark	the watermark of its column
 *	  comment	the column's or the table's comment
 *
 * What they show is what the lineage and show_create() show to anyone:
 * names, columns, states.  The maintenance of a table, like
 * materialized_tables, only to those who may read it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_class.h"
#include "commands/comment.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/commands/commands.h"
#include "mt/catalog/freshness.h"
#include "mt/materialized_table.h"
#include "mt/utils/relations.h"
#include "mt/utils/sql.h"

/* the columns of a row */
enum
{
	COL_NAME,
	COL_TYPE,
	COL_NULL,
	COL_KEY,
	COL_EXTRAS,
	COL_WATERMARK,
	COL_COMMENT
};

typedef struct RowSink
{
	Tuplestorestate *rows;
	TupleDesc	desc;
} RowSink;

/* One row; NULL strings are SQL NULLs, nullable < 0 leaves "null" NULL. */
static void
put_row(RowSink *sink, const char *name, const char *type, int nullable, const char *key,
		const char *extras, const char *watermark, const char *comment)
{
	Datum		values[MT_QUERY_NATTS];
	bool		nulls[MT_QUERY_NATTS];
	const char *texts[MT_QUERY_NATTS] = {name, type, NULL, key, extras, watermark, comment};
	int			i;

	for (i = 0; i < MT_QUERY_NATTS; i++)
	{
		nulls[i] = (texts[i] == NULL);
		values[i] = nulls[i] ? (Datum) 0 : CStringGetTextDatum(texts[i]);
	}
	nulls[COL_NULL] = (nullable < 0);
	values[COL_NULL] = BoolGetDatum(nullable > 0);
	tuplestore_putvalues(sink->rows, sink->desc, values, nulls);
}

/*
 * The materialized table a name refers to, locked for reading.  Unlike the
 * commands that change a table (mt_lookup_table), anyone may look at it.
 */
static Oid
lookup_for_reading(MtStatement *st, MtQualifiedName *name)
{
	Oid			relid;

	(void) mt_resolve_namespace(st, name);
	relid = RangeVarGetRelidExtended(makeRangeVar(name->schema, name->name, -1),
									 AccessShareLock, RVR_MISSING_OK, NULL, NULL);
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("materialized table \"%s\" does not exist",
						name->schema ? psprintf("%s.%s", name->schema, name->name) : name->name),
				 mt_errposition(st->source, name->location)));
	if (!mt_is_materialized_table(relid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a materialized table", name->name),
				 errhint("psql's \\d describes any relation."),
				 mt_errposition(st->source, name->location)));
	return relid;
}

/* PRI(a, b) */
static char *
key_text(List *key)
{
	StringInfoData buf;
	ListCell   *lc;

	if (key == NIL)
		return NULL;
	initStringInfo(&buf);
	appendStringInfoString(&buf, "PRI(");
	foreach(lc, key)
		appendStringInfo(&buf, "%s%s", lc == list_head(key) ? "" : ", ",
						 quote_identifier(lfirst(lc)));
	appendStringInfoChar(&buf, ')');
	return buf.data;
}

/* CONTINUOUS, INTERVAL '1' MINUTE, ACTIVATED */
static char *
state_text(MtTable *mt)
{
	return psprintf("%s, %s, %s", mt_mode_name(mt->refresh_mode),
					mt_freshness_text(mt->freshness_value, mt->freshness_unit),
					mt_status_name(mt->status));
}

static bool
in_name_list(List *names, const char *name)
{
	ListCell   *lc;

	foreach(lc, names)
		if (strcmp(lfirst(lc), name) == 0)
			return true;
	return false;
}

/* ---------------------------------------------------------------------
 * SHOW MATERIALIZED TABLES
 * ---------------------------------------------------------------------
 */

static int
compare_names(const ListCell *a, const ListCell *b)
{
	return strcmp(get_rel_name(lfirst_oid(a)), get_rel_name(lfirst_oid(b)));
}

static void
show_tables(MtStatement *st, RowSink *sink)
{
	MtShowStmt *s = st->show;
	Oid			nspid;
	List	   *tables = NIL;
	ListCell   *lc;

	if (s->schema)
	{
		/* [catalog.]db: the catalog is the database, db the schema */
		MtQualifiedName qn = {NULL, s->schema->schema, s->schema->name, s->schema->location};

		if (qn.schema)
		{
			qn.catalog = qn.schema;
			qn.schema = qn.name;
		}
		else
			qn.schema = qn.name;
		nspid = mt_resolve_namespace(st, &qn);
	}
	else
	{
		List	   *path = fetch_search_path(false);

		if (path == NIL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_SCHEMA),
					 errmsg("no schema has been selected"),
					 errhint("Name the database: SHOW MATERIALIZED TABLES FROM db.")));
		nspid = linitial_oid(path);
	}

	foreach(lc, mt_catalog_all_relids())
	{
		Oid			relid = lfirst_oid(lc);
		char	   *name = get_rel_name(relid);

		if (name == NULL || get_rel_namespace(relid) != nspid)
			continue;
		if (s->like)
		{
			bool		match = DatumGetBool(DirectFunctionCall2Coll(textlike, C_COLLATION_OID,
																	 CStringGetTextDatum(name),
																	 CStringGetTextDatum(s->like)));

			if (match == s->not_like)
				continue;
		}
		tables = lappend_oid(tables, relid);
	}
	list_sort(tables, compare_names);

	foreach(lc, tables)
	{
		Oid			relid = lfirst_oid(lc);
		MtTable    *mt = mt_catalog_lookup(relid, true);

		if (mt == NULL)
			continue;			/* dropped meanwhile */
		put_row(sink, get_rel_name(relid), "MATERIALIZED TABLE", -1,
				key_text(mt_primary_key_columns(relid)), state_text(mt),
				mt->watermark_column ?
				psprintf("%s AS %s", quote_identifier(mt->watermark_column),
						 mt->watermark_expression) : NULL,
				GetComment(relid, RelationRelationId, 0));
	}
}

/* ---------------------------------------------------------------------
 * DESCRIBE
 * ---------------------------------------------------------------------
 */

/* A computed column's expression, as pg_get_expr() shows it. */
static char *
generation_expression(Relation rel, AttrNumber attnum)
{
	TupleConstr *constr = RelationGetDescr(rel)->constr;

	for (int i = 0; constr && i < constr->num_defval; i++)
		if (constr->defval[i].adnum == attnum)
			return deparse_expression(stringToNode(constr->defval[i].adbin),
									  deparse_context_for(RelationGetRelationName(rel),
														  RelationGetRelid(rel)),
									  false, false);
	return NULL;
}

/*
 * What materialized_tables says of the table's maintenance, if the caller
 * may read it there: maintenance, maintenance_detail, current_lag,
 * freshness_met, definition_query.
 */
static void
maintenance_rows(Oid relid, RowSink *sink)
{
	static const char *const names[] = {
		"maintenance", "maintenance_detail", "current_lag", "freshness_met",
		"last_refresh_time", "next_refresh_time"
	};
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	MemoryContext caller = CurrentMemoryContext;
	int			nestlevel = mt_pin_search_path();
	char	   *found[lengthof(names)] = {0};
	bool		visible = false;
	int			i;

	SPI_connect();
	if (SPI_execute_with_args("SELECT maintenance, maintenance_detail, current_lag::pg_catalog.text,"
							  "       freshness_met::pg_catalog.text, last_refresh_time::pg_catalog.text,"
							  "       next_refresh_time::pg_catalog.text"
							  "  FROM materialized_table.materialized_tables"
							  " WHERE table_name OPERATOR(pg_catalog.=) $1::pg_catalog.regclass",
							  1, types, values, NULL, true, 1) == SPI_OK_SELECT &&
		SPI_processed == 1)
	{
		visible = true;
		for (i = 0; i < lengthof(names); i++)
		{
			char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1);

			found[i] = v ? MemoryContextStrdup(caller, v) : NULL;
		}
	}
	SPI_finish();
	mt_unpin_search_path(nestlevel);
	if (!visible)
		return;
	for (i = 0; i < lengthof(names); i++)
		if (found[i])
			put_row(sink, names[i], NULL, -1, NULL, found[i], NULL, NULL);
}

static void
describe(MtStatement *st, RowSink *sink)
{
	MtDescribeStmt *d = st->describe;
	Oid			relid = lookup_for_reading(st, d->name);
	MtTable    *mt = mt_catalog_lookup(relid, false);
	List	   *key = mt_primary_key_columns(relid);
	char	   *pri = key_text(key);
	Relation	rel = table_open(relid, AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		char	   *name = NameStr(att->attname);
		char	   *metadata = mt_option_value(mt->metadata_columns, name);
		char	   *extras = NULL;

		if (att->attisdropped)
			continue;
		if (att->attgenerated)
			extras = psprintf("AS %s", generation_expression(rel, att->attnum));
		else if (metadata)
			extras = psprintf("METADATA FROM %s", quote_literal_cstr(metadata));
		put_row(sink, name, format_type_with_typemod(att->atttypid, att->atttypmod),
				att->attnotnull ? 0 : 1, in_name_list(key, name) ? pri : NULL, extras,
				(mt->watermark_column && strcmp(mt->watermark_column, name) == 0) ?
				mt->watermark_expression : NULL,
				GetComment(relid, RelationRelationId, att->attnum));
	}
	table_close(rel, NoLock);

	if (!d->extended)
		return;

	/* the table's properties, one row each: what Flink's catalog keeps */
	put_row(sink, "refresh_mode", NULL, -1, NULL, mt_mode_name(mt->refresh_mode), NULL, NULL);
	put_row(sink, "freshness", NULL, -1, NULL,
			mt_freshness_text(mt->freshness_value, mt->freshness_unit), NULL, NULL);
	put_row(sink, "refresh_status", NULL, -1, NULL, mt_status_name(mt->status), NULL, NULL);
	put_row(sink, "scheduler", NULL, -1, NULL,
			mt->scheduler ? mt->scheduler :
			(mt->refresh_mode == MT_MODE_CONTINUOUS ? "worker" : NULL), NULL, NULL);
	if (mt->partition_keys)
	{
		StringInfoData buf;
		ListCell   *lc;

		initStringInfo(&buf);
		foreach(lc, mt->partition_keys)
			appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", quote_identifier(strVal(lfirst(lc))));
		put_row(sink, "partitioned_by", NULL, -1, NULL, buf.data, NULL, NULL);
	}
	if (mt->distribution)
	{
		StringInfoData buf;
		ListCell   *lc;

		initStringInfo(&buf);
		appendStringInfo(&buf, "%s (", mt->distribution->kind == MT_DISTRIBUTION_RANGE ? "RANGE" : "HASH");
		foreach(lc, mt->distribution->columns)
			appendStringInfo(&buf, "%s%s", lc == list_head(mt->distribution->columns) ? "" : ", ",
							 quote_identifier(strVal(lfirst(lc))));
		appendStringInfo(&buf, ") INTO %d BUCKETS", mt->distribution->buckets);
		put_row(sink, "distribution", NULL, -1, NULL, buf.data, NULL, NULL);
	}
	if (mt->options)
	{
		ListCell   *lc;

		foreach(lc, mt->options)
		{
			MtOption   *opt = lfirst(lc);

			put_row(sink, psprintf("option %s", opt->key), NULL, -1, NULL, opt->value,
					NULL, NULL);
		}
	}
	if (GetComment(relid, RelationRelationId, 0))
		put_row(sink, "comment", NULL, -1, NULL, GetComment(relid, RelationRelationId, 0),
				NULL, NULL);
	maintenance_rows(relid, sink);
}

/* ---------------------------------------------------------------------
 * Entry points
 * ---------------------------------------------------------------------
 */

/*
 * mt_show_create_command
 *		SHOW CREATE MATERIALIZED TABLE: the statement, as show_create()
 *		gives it.
 */
char *
mt_show_create_command(MtStatement *st)
{
	return mt_show_create_text(lookup_for_reading(st, st->show->name));
}

/*
 * mt_query_command
 *		The rows of a statement that returns rows, into a tuplestore of
 *		execute_query()'s row type.
 */
void
mt_query_command(MtStatement *st, Tuplestorestate *rows, TupleDesc desc)
{
	RowSink		sink = {rows, desc};

	switch (st->kind)
	{
		case MT_STMT_SHOW_TABLES:
			show_tables(st, &sink);
			break;
		case MT_STMT_DESCRIBE:
			describe(st, &sink);
			break;
		case MT_STMT_SHOW_CREATE:
			{
				Oid			relid = lookup_for_reading(st, st->show->name);

				put_row(&sink, mt_qualified_name(relid), "MATERIALIZED TABLE", -1, NULL,
						mt_show_create_text(relid), NULL, NULL);
				break;
			}
		default:
			elog(ERROR, "statement %d returns no rows", st->kind);
	}
}
