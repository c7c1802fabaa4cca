/*-------------------------------------------------------------------------
 *
 * src/commands/show_create.c
 *	  materialized_table.show_create(regclass): the Flink statement that
 *	  recreates a materialized table as it is now.
 *
 * Everything comes from where it lives now -- columns, types, comments and
 * the primary key from PostgreSQL's catalogs, the query from its view
 * (deparsed, so renamed sources show their new names), the rest from the
 * extension's catalog -- so the statement stays true after renames and
 * ALTERs.  Identifiers are double-quoted where needed; execute() accepts
 * that as well as Flink's backticks.
 *
 * Also materialized_table_internal.query_definition(), the query as the
 * view materialized_tables shows it.
 *
 * Both read the table's hidden view under a lock, as pg_get_viewdef()
 * does: a drop of the table, or a new query, holds it.  They take the lock
 * first, and look again after it: a table dropped while they waited does
 * not exist (show_create) or has no row (query_definition).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "catalog/dependency.h"
#include "utils/memutils.h"
#include "access/table.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_class.h"
#include "commands/comment.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "storage/lmgr.h"
#include "rewrite/rewriteHandler.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/syscache.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "mt/catalog/catalog.h"
#include "mt/commands/commands.h"
#include "mt/catalog/freshness.h"
#include "mt/materialized_table.h"
#include "mt/utils/sql.h"

PG_FUNCTION_INFO_V1(mt_show_create);
PG_FUNCTION_INFO_V1(mt_query_definition);

static void
append_string_literal(StringInfo buf, const char *s)
{
	appendStringInfoString(buf, quote_literal_cstr(s));
}

/* A computed column's expression as pg_get_expr() shows it. */
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
	elog(ERROR, "no expression for column %d of \"%s\"", attnum, RelationGetRelationName(rel));
	return NULL;				/* keep compiler quiet */
}

/* The primary key: constraint name and columns, or NULL. */
static List *
primary_key(Relation rel, char **name)
{
	Oid			index = RelationGetPrimaryKeyIndex(rel);
	Relation	irel;
	List	   *cols = NIL;
	int			i;

	*name = NULL;
	if (!OidIsValid(index))
		return NIL;
	*name = get_constraint_name(get_index_constraint(index));
	irel = index_open(index, AccessShareLock);
	for (i = 0; i < irel->rd_index->indnkeyatts; i++)
		cols = lappend(cols, get_attname(RelationGetRelid(rel),
										 irel->rd_index->indkey.values[i], false));
	index_close(irel, AccessShareLock);
	return cols;
}

static void
append_name_list(StringInfo buf, List *names, bool strings)
{
	ListCell   *lc;

	foreach(lc, names)
	{
		const char *name = strings ? strVal(lfirst(lc)) : (const char *) lfirst(lc);

		if (lc != list_head(names))
			appendStringInfoString(buf, ", ");
		appendStringInfoString(buf, quote_identifier(name));
	}
}

/*
 * Does a column the query produces have a comment?  Then the statement
 * needs the whole column list to carry it.
 */
static bool
query_column_commented(MtTable *mt, Oid relid, TupleDesc desc)
{
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && !att->attgenerated &&
			mt_option_value(mt->metadata_columns, NameStr(att->attname)) == NULL &&
			GetComment(relid, RelationRelationId, att->attnum) != NULL)
			return true;
	}
	return false;
}

/*
 * What pg_get_viewdef(view, true) gives, from the view's query in the
 * relcache: pg_get_viewdef() finds the view's rule with SQL of its own,
 * which runs under the caller's search_path (an operator = earlier in it
 * would run).  The caller holds the view, or its table.
 */
static char *
view_definition(Oid view)
{
	Relation	rel = relation_open(view, NoLock);
	char	   *text = pg_get_querydef(copyObject(get_view_query(rel)), true);

	relation_close(rel, NoLock);
	return text;
}

Datum
mt_show_create(PG_FUNCTION_ARGS)
{
	PG_RETURN_TEXT_P(cstring_to_text(mt_show_create_text(PG_GETARG_OID(0))));
}

/*
 * mt_show_create_text
 *		show_create() and SHOW CREATE MATERIALIZED TABLE: the statement
 *		that recreates table relid.
 */
char *
mt_show_create_text(Oid relid)
{
	char	   *relname;
	MtTable    *mt;
	Relation	rel;
	TupleDesc	desc;
	StringInfoData buf;
	StringInfoData elements;
	char	   *pk_name;
	List	   *pk;
	char	   *comment;
	char	   *query;
	bool		all_columns;
	int			nestlevel;
	int			i;

	/* the table first, then what the catalogs say about it */
	relname = get_rel_name(relid);
	LockRelationOid(relid, AccessShareLock);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
	{
		/* dropped while we waited: by the name it had, as a lookup would say */
		if (relname)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("relation \"%s\" does not exist", relname)));
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	}
	mt = mt_catalog_lookup(relid, false);
	rel = table_open(relid, AccessShareLock);
	desc = RelationGetDescr(rel);
	pk = primary_key(rel, &pk_name);
	all_columns = mt->declared_columns || query_column_commented(mt, relid, desc);

	/*
	 * Qualify every name that is not in pg_catalog, so that the statement
	 * means the same under any search_path (as pg_dump does).
	 */
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);

	initStringInfo(&buf);
	initStringInfo(&elements);
	appendStringInfo(&buf, "CREATE MATERIALIZED TABLE %s", mt_qualified_name(relid));

	/* columns: all of them if a list was declared, else only what the query does not give */
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		char	   *name = NameStr(att->attname);
		char	   *metadata = mt_option_value(mt->metadata_columns, name);
		char	   *col_comment = GetComment(relid, RelationRelationId, att->attnum);

		if (att->attisdropped)
			continue;
		if (!all_columns && !att->attgenerated && metadata == NULL)
			continue;
		appendStringInfo(&elements, "%s\n    %s", elements.len ? "," : "", quote_identifier(name));
		if (att->attgenerated)
			appendStringInfo(&elements, " AS %s", generation_expression(rel, att->attnum));
		else
		{
			appendStringInfo(&elements, " %s", format_type_with_typemod(att->atttypid, att->atttypmod));
			if (metadata)
			{
				appendStringInfoString(&elements, " METADATA");
				if (strcmp(metadata, name) != 0)
				{
					appendStringInfoString(&elements, " FROM ");
					append_string_literal(&elements, metadata);
				}
			}
		}
		if (col_comment)
		{
			appendStringInfoString(&elements, " COMMENT ");
			append_string_literal(&elements, col_comment);
		}
	}
	if (pk)
	{
		appendStringInfo(&elements, "%s\n    ", elements.len ? "," : "");
		if (pk_name)
			appendStringInfo(&elements, "CONSTRAINT %s ", quote_identifier(pk_name));
		appendStringInfoString(&elements, "PRIMARY KEY (");
		append_name_list(&elements, pk, false);
		appendStringInfoString(&elements, ") NOT ENFORCED");
	}
	if (mt->watermark_column)
		appendStringInfo(&elements, "%s\n    WATERMARK FOR %s AS %s", elements.len ? "," : "",
						 quote_identifier(mt->watermark_column), mt->watermark_expression);
	if (elements.len)
		appendStringInfo(&buf, " (%s\n)", elements.data);

	comment = GetComment(relid, RelationRelationId, 0);
	if (comment)
	{
		appendStringInfoString(&buf, "\nCOMMENT ");
		append_string_literal(&buf, comment);
	}
	if (mt->distribution)
	{
		appendStringInfo(&buf, "\nDISTRIBUTED BY %s (",
						 mt->distribution->kind == MT_DISTRIBUTION_RANGE ? "RANGE" : "HASH");
		append_name_list(&buf, mt->distribution->columns, true);
		appendStringInfo(&buf, ") INTO %d BUCKETS", mt->distribution->buckets);
	}
	if (mt->partition_keys)
	{
		appendStringInfoString(&buf, "\nPARTITIONED BY (");
		append_name_list(&buf, mt->partition_keys, true);
		appendStringInfoChar(&buf, ')');
	}
	if (mt->options)
	{
		ListCell   *lc;

		appendStringInfoString(&buf, "\nWITH (");
		foreach(lc, mt->options)
		{
			MtOption   *opt = lfirst(lc);

			if (lc != list_head(mt->options))
				appendStringInfoString(&buf, ", ");
			append_string_literal(&buf, opt->key);
			appendStringInfoString(&buf, " = ");
			append_string_literal(&buf, opt->value);
		}
		appendStringInfoChar(&buf, ')');
	}
	appendStringInfo(&buf, "\nFRESHNESS = %s\nREFRESH_MODE = %s\nAS",
					 mt_freshness_text(mt->freshness_value, mt->freshness_unit),
					 mt_mode_name(mt->refresh_mode));

	query = view_definition(mt->query_view);
	/* pg_get_viewdef ends the query with a semicolon */
	i = strlen(query);
	while (i > 0 && (query[i - 1] == ';' || query[i - 1] == '\n' || query[i - 1] == ' '))
		query[--i] = '\0';
	appendStringInfo(&buf, "%s%s", query[0] == ' ' ? "" : " ", query);

	AtEOXact_GUC(true, nestlevel);
	table_close(rel, AccessShareLock);
	return buf.data;
}

/*
 * materialized_table_internal.query_definition(query_view regclass)
 *
 * The query of a materialized table as the view materialized_tables shows
 * it: its hidden view deparsed, as pg_get_viewdef(view, true) gives it
 * without the spaces, newlines and semicolon around it.  One row, or none
 * when the view is gone: a reader that waited for a drop of the table
 * leaves the table out, where pg_get_viewdef() would fail on the relation
 * it can no longer open.  Readers wait as they do for pg_matviews: the
 * query of a table being dropped or given a new query is only known once
 * that has committed or rolled back.
 */
Datum
mt_query_definition(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;

	if (SRF_IS_FIRSTCALL())
	{
		Oid			view = PG_GETARG_OID(0);
		MemoryContext old;
		char	   *query = NULL;

		funcctx = SRF_FIRSTCALL_INIT();
		LockRelationOid(view, AccessShareLock);
		if (get_rel_relkind(view) == RELKIND_VIEW)
		{
			char	   *start;
			char	   *end;

			old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
			query = view_definition(view);
			MemoryContextSwitchTo(old);
			for (start = query; *start == ' ' || *start == '\n' || *start == ';'; start++)
				;
			end = start + strlen(start);
			while (end > start && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == ';'))
				*--end = '\0';
			query = start;
		}
		else
			UnlockRelationOid(view, AccessShareLock);
		funcctx->user_fctx = query;
	}
	funcctx = SRF_PERCALL_SETUP();
	if (funcctx->user_fctx != NULL)
	{
		text	   *result = cstring_to_text((char *) funcctx->user_fctx);

		funcctx->user_fctx = NULL;
		SRF_RETURN_NEXT(funcctx, PointerGetDatum(result));
	}
	SRF_RETURN_DONE(funcctx);
}
