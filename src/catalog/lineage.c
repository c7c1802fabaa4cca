/*-------------------------------------------------------------------------
 *
 * src/catalog/lineage.c
 *	  The lineage of materialized tables, the freshness rule it carries,
 *	  and its picture.
 *
 * See mt/catalog/lineage.h for what an edge is.  The edges are computed in SQL from
 * pg_depend (relations_read() in extension/95_lineage.sql, which the view
 * materialized_table.lineage uses too); this file asks for them through
 * SPI, with the rights of the extension's owner since they join the
 * private catalog, and turns them into:
 *
 *	  - the freshness rule: a downstream table's freshness is a positive
 *		integer multiple of each upstream table's, checked whenever either
 *		side changes (CREATE, SET FRESHNESS, CREATE OR ALTER, ALTER ... AS);
 *	  - NOTICEs when SUSPEND or RESUME touches a table whose upstream is
 *		suspended;
 *	  - materialized_table.lineage_dot(), the Graphviz picture.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_collation.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/freshness.h"
#include "mt/catalog/lineage.h"
#include "mt/materialized_table.h"

PG_FUNCTION_INFO_V1(mt_lineage_dot);

/* The edges, as the materialized_table.lineage view computes them. */
#define EDGES_CTE \
	"WITH edges AS MATERIALIZED (" \
	"  SELECT r.upstream, t.relid::pg_catalog.oid AS downstream " \
	"    FROM materialized_table_internal.mt_table t " \
	"   CROSS JOIN LATERAL materialized_table_internal.relations_read(t.query_view::pg_catalog.oid) " \
	"         AS r(upstream) " \
	"   WHERE r.upstream <> t.relid::pg_catalog.oid) "

/*
 * The lineage's queries run as the extension's owner (they join the
 * private catalog), without JIT: their row estimates are guesses (a
 * recursive walk of pg_depend per table) that can make a few milliseconds
 * of work look worth a second of compiling.
 */
static void
lineage_query_begin(MtSavedUser *saved)
{
	mt_as_extension_owner_begin(saved);
	(void) set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
}

/* The OIDs a one-column query returns, in its order. */
static List *
oid_query(const char *sql, int nargs, Oid *types, Datum *values)
{
	MemoryContext caller = CurrentMemoryContext;
	MtSavedUser saved;
	List	   *result = NIL;
	uint64		i;

	lineage_query_begin(&saved);
	SPI_connect();
	/* not read-only: see the catalog changes of this transaction so far */
	if (SPI_execute_with_args(sql, nargs, types, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the lineage of materialized tables");
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext spi = MemoryContextSwitchTo(caller);

		if (!isnull)
			result = lappend_oid(result, DatumGetObjectId(d));
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	return result;
}

/*
 * mt_lineage_upstream_tables
 *		The materialized tables a query view reads (but self), ordered by
 *		name so that errors about them are repeatable.
 */
List *
mt_lineage_upstream_tables(Oid query_view, Oid self)
{
	Oid			types[2] = {OIDOID, OIDOID};
	Datum		values[2] = {ObjectIdGetDatum(query_view), ObjectIdGetDatum(self)};

	return oid_query("SELECT u FROM materialized_table_internal.relations_read($1) u "
					 " WHERE u <> $2 AND u IN (SELECT relid::pg_catalog.oid "
					 "                           FROM materialized_table_internal.mt_table) "
					 " ORDER BY u::pg_catalog.regclass::pg_catalog.text COLLATE \"C\"",
					 2, types, values);
}

/* The materialized tables that read relid, ordered by name. */
List *
mt_lineage_downstream_tables(Oid relid)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};

	return oid_query(EDGES_CTE
					 "SELECT downstream FROM edges WHERE upstream = $1 "
					 " ORDER BY downstream::pg_catalog.regclass::pg_catalog.text COLLATE \"C\"",
					 1, types, values);
}

/* Every edge between two materialized tables (MtLineageEdge). */
List *
mt_lineage_table_edges(void)
{
	MemoryContext caller = CurrentMemoryContext;
	MtSavedUser saved;
	List	   *result = NIL;
	uint64		i;

	lineage_query_begin(&saved);
	SPI_connect();
	if (SPI_execute(EDGES_CTE
					"SELECT upstream, downstream FROM edges "
					" WHERE upstream IN (SELECT relid::pg_catalog.oid "
					"                      FROM materialized_table_internal.mt_table) "
					" ORDER BY upstream, downstream", false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the lineage of materialized tables");
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		bool		isnull;
		MemoryContext spi = MemoryContextSwitchTo(caller);
		MtLineageEdge *e = palloc(sizeof(MtLineageEdge));

		e->upstream = DatumGetObjectId(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull));
		e->downstream = DatumGetObjectId(SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull));
		result = lappend(result, e);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	return result;
}

/*
 * mt_lineage_check_freshness
 *		Would relid, reading what query_view reads, with the freshness
 *		value/unit, keep the freshness rule of the lineage?  Every
 *		materialized table it reads must have a freshness that divides its
 *		own; every one that reads it, a freshness that its own divides.
 */
void
mt_lineage_check_freshness(Oid relid, Oid query_view, int value, MtFreshnessUnit unit,
						   const char *source, int location)
{
	int64		seconds = mt_freshness_seconds(value, unit);
	ListCell   *lc;

	foreach(lc, mt_lineage_upstream_tables(query_view, relid))
	{
		MtTable    *up = mt_catalog_lookup(lfirst_oid(lc), true);
		int64		up_seconds;

		if (up == NULL)
			continue;
		up_seconds = mt_freshness_seconds(up->freshness_value, up->freshness_unit);
		if (seconds % up_seconds != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("freshness %s of materialized table \"%s\" is not a multiple of the freshness %s of its upstream materialized table \"%s\"",
							mt_freshness_text(value, unit), get_rel_name(relid),
							mt_freshness_text(up->freshness_value, up->freshness_unit),
							get_rel_name(up->relid)),
					 errdetail("The freshness of a materialized table must be a positive integer multiple of the freshness of each materialized table it reads."),
					 errhint("Use a multiple of %s, or change the freshness of \"%s\" first.",
							 mt_freshness_text(up->freshness_value, up->freshness_unit),
							 get_rel_name(up->relid)),
					 mt_errposition(source, location)));
	}

	foreach(lc, mt_lineage_downstream_tables(relid))
	{
		MtTable    *down = mt_catalog_lookup(lfirst_oid(lc), true);
		int64		down_seconds;

		if (down == NULL)
			continue;
		down_seconds = mt_freshness_seconds(down->freshness_value, down->freshness_unit);
		if (down_seconds % seconds != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("freshness %s of materialized table \"%s\" does not divide the freshness %s of its downstream materialized table \"%s\"",
							mt_freshness_text(value, unit), get_rel_name(relid),
							mt_freshness_text(down->freshness_value, down->freshness_unit),
							get_rel_name(down->relid)),
					 errdetail("The freshness of a materialized table must be a positive integer multiple of the freshness of each materialized table it reads."),
					 errhint("Use a freshness that divides %s, or change the freshness of \"%s\" first.",
							 mt_freshness_text(down->freshness_value, down->freshness_unit),
							 get_rel_name(down->relid)),
					 mt_errposition(source, location)));
	}
}

/*
 * mt_lineage_notice_suspended_upstream
 *		SUSPEND and RESUME work whatever the upstream tables do, but a table
 *		whose upstream is suspended only sees that table's content as it
 *		was when it was suspended: say so.
 */
void
mt_lineage_notice_suspended_upstream(Oid relid)
{
	MtTable    *mt = mt_catalog_lookup(relid, false);
	ListCell   *lc;

	foreach(lc, mt_lineage_upstream_tables(mt->query_view, relid))
	{
		MtTable    *up = mt_catalog_lookup(lfirst_oid(lc), true);

		if (up && up->status == MT_STATUS_SUSPENDED)
			ereport(NOTICE,
					(errmsg("upstream materialized table \"%s\" of \"%s\" is suspended",
							get_rel_name(up->relid), get_rel_name(relid)),
					 errdetail("Until \"%s\" is resumed, \"%s\" reads the content it had when it was suspended.",
							   get_rel_name(up->relid), get_rel_name(relid))));
	}
}

/* ---------------------------------------------------------------------
 * materialized_table.lineage_dot()
 * ---------------------------------------------------------------------
 */

/* s as the inside of a DOT double-quoted string */
static void
append_dot_escaped(StringInfo buf, const char *s)
{
	for (; *s; s++)
	{
		if (*s == '"' || *s == '\\')
			appendStringInfoChar(buf, '\\');
		appendStringInfoChar(buf, *s);
	}
}

static char *
spi_text(HeapTuple tup, TupleDesc desc, int col)
{
	return SPI_getvalue(tup, desc, col);
}

static bool
spi_bool(HeapTuple tup, TupleDesc desc, int col, bool *isnull)
{
	Datum		d = SPI_getbinval(tup, desc, col, isnull);

	return *isnull ? false : DatumGetBool(d);
}

/*
 * The nodes: every materialized table and every relation one reads, by
 * name; then the edges, by upstream and downstream name.  Names are
 * schema-qualified and compared bytewise, so the text does not depend on
 * search_path or collation.
 */
static const char *dot_nodes_sql =
EDGES_CTE
"SELECT pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(c.relname), "
"       CASE c.relkind WHEN 'f' THEN 'foreign table' WHEN 'm' THEN 'materialized view' "
"                      WHEN 'p' THEN 'partitioned table' ELSE 'table' END, "
"       t.relid IS NOT NULL, t.refresh_mode, "
"       t.freshness_value::pg_catalog.text || ' ' || t.freshness_unit, t.refresh_status, "
"       pg_catalog.to_char(t.last_refresh_time, 'YYYY-MM-DD HH24:MI:SS TZ'), "
"       (SELECT h.status FROM materialized_table_internal.history h "
"         WHERE h.table_name = t.relid AND h.status IN ('SUCCEEDED', 'FAILED') "
"         ORDER BY h.started_at DESC, h.run_id DESC LIMIT 1), "
"       m.freshness_met "
"  FROM (SELECT relid::pg_catalog.oid AS oid FROM materialized_table_internal.mt_table "
"        UNION SELECT upstream FROM edges) r "
"  JOIN pg_catalog.pg_class c ON c.oid = r.oid "
"  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
"  LEFT JOIN materialized_table_internal.mt_table t ON t.relid::pg_catalog.oid = c.oid "
"  LEFT JOIN materialized_table_internal.tables m ON m.table_name = t.relid "
" ORDER BY (pg_catalog.quote_ident(n.nspname) || '.' || pg_catalog.quote_ident(c.relname)) COLLATE \"C\"";

static const char *dot_edges_sql =
EDGES_CTE
"SELECT pg_catalog.quote_ident(un.nspname) || '.' || pg_catalog.quote_ident(uc.relname), "
"       pg_catalog.quote_ident(dn.nspname) || '.' || pg_catalog.quote_ident(dc.relname), "
"       t.refresh_status = 'SUSPENDED', "
"       COALESCE(s.status = 'FAILED', false) "
"  FROM edges e "
"  JOIN pg_catalog.pg_class uc ON uc.oid = e.upstream "
"  JOIN pg_catalog.pg_namespace un ON un.oid = uc.relnamespace "
"  JOIN pg_catalog.pg_class dc ON dc.oid = e.downstream "
"  JOIN pg_catalog.pg_namespace dn ON dn.oid = dc.relnamespace "
"  LEFT JOIN materialized_table_internal.mt_table t ON t.relid::pg_catalog.oid = e.upstream "
"  LEFT JOIN LATERAL (SELECT h.status FROM materialized_table_internal.history h "
"                      WHERE t.relid IS NOT NULL AND h.table_name = t.relid "
"                        AND h.status IN ('SUCCEEDED', 'FAILED') "
"                      ORDER BY h.started_at DESC, h.run_id DESC LIMIT 1) s ON true "
" ORDER BY (pg_catalog.quote_ident(un.nspname) || '.' || pg_catalog.quote_ident(uc.relname)) COLLATE \"C\", "
"          (pg_catalog.quote_ident(dn.nspname) || '.' || pg_catalog.quote_ident(dc.relname)) COLLATE \"C\"";

/*
 * A query of the views above as a catalog of version 1.0 has them (until
 * ALTER EXTENSION ... UPDATE): without the internal views of every
 * table's state and every run, the public ones.
 */
static const char *
for_catalog(const char *sql)
{
	if (OidIsValid(get_relname_relid("tables", mt_internal_namespace())))
		return sql;
	return text_to_cstring(DatumGetTextPP(
		DirectFunctionCall3Coll(replace_text, C_COLLATION_OID,
								DirectFunctionCall3Coll(replace_text, C_COLLATION_OID, CStringGetTextDatum(sql),
														CStringGetTextDatum("materialized_table_internal.history"),
														CStringGetTextDatum("materialized_table.refresh_history")),
								CStringGetTextDatum("materialized_table_internal.tables"),
								CStringGetTextDatum("materialized_table.materialized_tables"))));
}

static void
append_node(StringInfo buf, HeapTuple tup, TupleDesc desc)
{
	char	   *name = spi_text(tup, desc, 1);
	bool		isnull;
	bool		is_mt = spi_bool(tup, desc, 3, &isnull);

	appendStringInfoString(buf, "\t\"");
	append_dot_escaped(buf, name);
	appendStringInfoString(buf, "\" [label=\"");
	append_dot_escaped(buf, name);
	if (!is_mt)
	{
		appendStringInfoString(buf, "\\n");
		append_dot_escaped(buf, spi_text(tup, desc, 2));
		appendStringInfoString(buf, "\", shape=cylinder, style=filled, fillcolor=\"#ffffff\", color=\"#666666\"];\n");
		return;
	}
	else
	{
		char	   *mode = spi_text(tup, desc, 4);
		char	   *freshness = spi_text(tup, desc, 5);
		char	   *status = spi_text(tup, desc, 6);
		char	   *last = spi_text(tup, desc, 7);
		char	   *last_status = spi_text(tup, desc, 8);
		bool		met_null;
		bool		met = spi_bool(tup, desc, 9, &met_null);
		bool		suspended = strcmp(status, "SUSPENDED") == 0;
		bool		failing = last_status && strcmp(last_status, "FAILED") == 0;
		bool		late = !met_null && !met;
		const char *fill;
		const char *color;

		appendStringInfo(buf, "\\n%s, freshness %s\\n%s", mode, freshness, status);
		if (failing)
			appendStringInfoString(buf, ", LAST REFRESH FAILED");
		if (last)
			appendStringInfo(buf, "\\nlast refresh %s", last);
		else
			appendStringInfoString(buf, "\\nnever refreshed");
		if (late)
			appendStringInfoString(buf, "\\nfreshness not met");

		/* failing wins over suspended, which wins over late */
		if (failing)
			fill = "#f4cccc", color = "#cc0000";
		else if (suspended)
			fill = "#eeeeee", color = "#999999";
		else if (late)
			fill = "#fff2cc", color = "#bf9000";
		else
			fill = "#d9ead3", color = "#38761d";
		appendStringInfo(buf, "\", shape=box, style=\"rounded,filled%s\", fillcolor=\"%s\", color=\"%s\"%s%s];\n",
						 suspended ? ",dashed" : "", fill, color,
						 failing ? ", penwidth=2" : "",
						 suspended ? ", fontcolor=\"#666666\"" : "");
	}
}

/*
 * materialized_table.lineage_dot()
 *
 * Sources are cylinders; materialized tables are boxes with their mode,
 * freshness, status and last refresh: green when fine, yellow when their
 * freshness is not met, grey and dashed when suspended, red when their
 * last refresh failed.  Edges out of a suspended table are dashed, out of
 * a failing one red.
 */
Datum
mt_lineage_dot(PG_FUNCTION_ARGS)
{
	StringInfoData buf;
	MtSavedUser saved;
	MemoryContext caller = CurrentMemoryContext;
	uint64		i;
	text	   *result;

	initStringInfo(&buf);
	appendStringInfoString(&buf,
						   "digraph lineage {\n"
						   "\trankdir=LR;\n"
						   "\tnode [fontname=\"Helvetica\", fontsize=10];\n"
						   "\tedge [color=\"#555555\"];\n");

	lineage_query_begin(&saved);
	SPI_connect();
	if (SPI_execute(for_catalog(dot_nodes_sql), true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the lineage of materialized tables");
	for (i = 0; i < SPI_processed; i++)
	{
		MemoryContext spi = MemoryContextSwitchTo(caller);

		append_node(&buf, SPI_tuptable->vals[i], SPI_tuptable->tupdesc);
		MemoryContextSwitchTo(spi);
	}
	if (SPI_execute(for_catalog(dot_edges_sql), true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the lineage of materialized tables");
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		bool		suspended = spi_bool(tup, desc, 3, &isnull);
		bool		failing = spi_bool(tup, desc, 4, &isnull);
		MemoryContext spi = MemoryContextSwitchTo(caller);

		appendStringInfoString(&buf, "\t\"");
		append_dot_escaped(&buf, spi_text(tup, desc, 1));
		appendStringInfoString(&buf, "\" -> \"");
		append_dot_escaped(&buf, spi_text(tup, desc, 2));
		appendStringInfoChar(&buf, '"');
		if (failing)
			appendStringInfoString(&buf, " [color=\"#cc0000\"]");
		else if (suspended)
			appendStringInfoString(&buf, " [style=dashed, color=\"#999999\"]");
		appendStringInfoString(&buf, ";\n");
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	mt_as_extension_owner_end(&saved);

	appendStringInfoString(&buf, "}\n");
	result = cstring_to_text_with_len(buf.data, buf.len);
	PG_RETURN_TEXT_P(result);
}
