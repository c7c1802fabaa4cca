/*-------------------------------------------------------------------------
 *
 * src/refresh/refresh.c
 *	  The refresh engine.
 *
 * A refresh deletes the rows it replaces and inserts the query's result
 * for them, in one transaction.  The delete is an ordinary DELETE; the
 * query is an ordinary SELECT from the table's query view, planned so that
 * it may use parallel workers, and its rows go straight into the table
 * through refresh/table_writer.c.  Readers keep seeing the old rows (MVCC) until
 * the refresh commits.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/params.h"
#include "optimizer/optimizer.h"
#include "port/pg_bitutils.h"
#include "rewrite/rewriteHandler.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

#include "mt/bgw/launcher.h"
#include "mt/catalog/history.h"
#include "mt/materialized_table.h"
#include "mt/refresh/observer.h"
#include "mt/refresh/partitions.h"
#include "mt/refresh/refresh.h"
#include "mt/refresh/table_writer.h"
#include "mt/refresh/shards.h"
#include "mt/utils/citus.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/sql.h"

const char *
mt_trigger_name(MtRefreshTrigger trigger)
{
	switch (trigger)
	{
		case MT_TRIGGER_CREATE:
			return "CREATE";
		case MT_TRIGGER_MANUAL:
			return "MANUAL";
		case MT_TRIGGER_SCHEDULED:
			return "SCHEDULED";
		case MT_TRIGGER_CONTINUOUS:
			return "CONTINUOUS";
		case MT_TRIGGER_ALTER:
			return "ALTER";
		case MT_TRIGGER_CASCADE:
			return "CASCADE";
	}
	return NULL;
}

/*
 * mt_check_partition_spec
 *		Every key of PARTITION (k = 'v', ...) must be a partition column.
 */
void
mt_check_partition_spec(MtTable *mt, List *spec, const char *source)
{
	StringInfoData unknown;
	StringInfoData known;
	ListCell   *lc;
	int			location = -1;

	if (mt->partition_keys == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("materialized table \"%s\" is not partitioned", get_rel_name(mt->relid)),
				 errhint("Refresh the whole table with ALTER MATERIALIZED TABLE ... REFRESH.")));

	initStringInfo(&unknown);
	initStringInfo(&known);
	foreach(lc, mt->partition_keys)
		appendStringInfo(&known, "%s%s", known.len ? ", " : "", strVal(lfirst(lc)));
	foreach(lc, spec)
	{
		MtOption   *opt = lfirst(lc);
		ListCell   *lc2;
		bool		found = false;

		foreach(lc2, mt->partition_keys)
			if (strcmp(strVal(lfirst(lc2)), opt->key) == 0)
				found = true;
		if (!found)
		{
			appendStringInfo(&unknown, "%s%s", unknown.len ? ", " : "", opt->key);
			if (location < 0)
				location = opt->location;
		}
		foreach(lc2, spec)
		{
			MtOption   *other = lfirst(lc2);

			if (other != opt && strcmp(other->key, opt->key) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("partition column \"%s\" specified more than once", opt->key),
						 mt_errposition(source, other->location)));
		}
	}
	if (unknown.len)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("partition spec contains unknown partition keys: %s", unknown.data),
				 errdetail("The partition keys of materialized table \"%s\" are: %s.",
						   get_rel_name(mt->relid), known.data),
				 mt_errposition(source, location)));
}

char *
mt_partition_spec_text(List *spec)
{
	StringInfoData buf;
	ListCell   *lc;

	if (spec == NIL)
		return NULL;
	initStringInfo(&buf);
	foreach(lc, spec)
	{
		MtOption   *opt = lfirst(lc);

		appendStringInfo(&buf, "%s%s=%s", buf.len ? ", " : "",
						 quote_identifier(opt->key), quote_literal_cstr(opt->value));
	}
	return buf.data;
}

/* The column of desc named name (not a dropped one); an error if none. */
Form_pg_attribute
mt_find_attribute(TupleDesc desc, const char *name)
{
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (!a->attisdropped && strcmp(NameStr(a->attname), name) == 0)
			return a;
	}
	elog(ERROR, "column \"%s\" not found", name);
	return NULL;				/* keep compiler quiet */
}

/* A column of a rowwise family matched by IS NULL alone (MtFilterFamily) */
static bool
null_only(MtFilterColumn *col)
{
	return col->values == NIL && col->has_null;
}

/*
 * "pg_catalog.unnest($n), ..." over a family's array parameters (ptypes,
 * numbered from $first_param + 1), cast to the columns' types in desc
 * where they are not their arrays: the family's value tuples as rows.
 */
static char *
family_rows(MtFilterFamily *family, TupleDesc desc, Oid *ptypes, int first_param)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, family->columns)
	{
		Form_pg_attribute att = mt_find_attribute(desc, ((MtFilterColumn *) lfirst(lc))->name);
		int			i = foreach_current_index(lc);

		if (null_only(lfirst(lc)))
			continue;
		appendStringInfo(&buf, "%spg_catalog.unnest($%d", buf.len > 0 ? ", " : "", first_param + i + 1);
		if (ptypes[i] != get_array_type(att->atttypid))
			appendStringInfo(&buf, "::%s[]", mt_type_sql(att->atttypid, att->atttypmod));
		appendStringInfoChar(&buf, ')');
	}
	return buf.data;
}

/*
 * The filter as a condition: each column of each family is one array
 * parameter (see mt_filter_params), "column = ANY ($n)", so that the
 * planner can push the condition into the query view and use indexes and
 * partition pruning.  ptypes are the parameters' types, numbered from
 * $first_param + 1: where one is not the array type of the column in
 * desc, the parameter is cast to it.  Columns are qualified with alias
 * when one is given.
 */
static char *
filter_condition(List *filter, const char *alias, TupleDesc desc, Oid *ptypes,
				 int first_param, bool joined)
{
	StringInfoData buf;
	ListCell   *lf;
	int			param = 0;

	initStringInfo(&buf);
	foreach(lf, filter)
	{
		MtFilterFamily *family = lfirst(lf);
		ListCell   *lc;

		appendStringInfoString(&buf, buf.len ? " OR (" : "(");
		if (family->rowwise)
		{
			StringInfoData refs;
			StringInfoData names;
			StringInfoData match;
			StringInfoData nulls;
			bool		builtin = true;
			int			k = 0;

			initStringInfo(&refs);
			initStringInfo(&names);
			initStringInfo(&match);
			initStringInfo(&nulls);
			foreach(lc, family->columns)
			{
				MtFilterColumn *col = lfirst(lc);
				Form_pg_attribute att = mt_find_attribute(desc, col->name);
				char	   *ref = psprintf("%s%s", alias ? psprintf("%s.", alias) : "",
										   quote_identifier(col->name));

				if (null_only(col))
				{
					appendStringInfo(&nulls, " AND %s IS NULL", ref);
					continue;
				}
				appendStringInfo(&refs, "%s%s", k > 0 ? ", " : "", ref);
				appendStringInfo(&names, "%s__mt_k%d", k > 0 ? ", " : "", k + 1);
				appendStringInfo(&match, "%s%s %s __mt_k.__mt_k%d", k > 0 ? " AND " : "", ref,
								 mt_equality_sql(att->atttypid), k + 1);
				builtin = builtin && mt_equality_is_builtin(att->atttypid);
				k++;
			}
			/* a row comparison takes one operator name for all the columns */
			if (builtin)
				appendStringInfo(&buf, "(%s) OPERATOR(pg_catalog.=) ANY (SELECT * FROM ROWS FROM (%s))%s)",
								 refs.data,
								 family_rows(family, desc, ptypes + param, first_param + param),
								 nulls.data);
			else
				appendStringInfo(&buf, "EXISTS (SELECT FROM ROWS FROM (%s) AS __mt_k(%s) WHERE %s)%s)",
								 family_rows(family, desc, ptypes + param, first_param + param),
								 names.data, match.data, nulls.data);
			param += list_length(family->columns);
			continue;
		}
		foreach(lc, family->columns)
		{
			MtFilterColumn *col = lfirst(lc);
			Form_pg_attribute att = mt_find_attribute(desc, col->name);
			char	   *ref = psprintf("%s%s", alias ? psprintf("%s.", alias) : "",
									   quote_identifier(col->name));
			int			n = first_param + param + 1;

			if (lc != list_head(family->columns))
				appendStringInfoString(&buf, " AND ");
			appendStringInfoChar(&buf, '(');
			if (col->values == NIL)
				appendStringInfo(&buf, "$%d IS NULL", n);
			else if (joined)
				appendStringInfo(&buf, "%s %s ANY (SELECT pg_catalog.unnest($%d%s))", ref,
								 mt_equality_sql(att->atttypid), n,
								 ptypes[param] == get_array_type(att->atttypid) ? "" :
								 psprintf("::%s[]", mt_type_sql(att->atttypid, att->atttypmod)));
			else if (ptypes[param] == get_array_type(att->atttypid))
				appendStringInfo(&buf, "%s %s ANY ($%d)", ref, mt_equality_sql(att->atttypid), n);
			else
				appendStringInfo(&buf, "%s %s ANY ($%d::%s[])", ref, mt_equality_sql(att->atttypid),
								 n, mt_type_sql(att->atttypid, att->atttypmod));
			if (col->has_null)
				appendStringInfo(&buf, " OR %s IS NULL", ref);
			appendStringInfoChar(&buf, ')');
			param++;
		}
		appendStringInfoChar(&buf, ')');
	}
	return buf.data;
}

char *
mt_filter_condition(List *filter, const char *alias, TupleDesc desc, Oid *ptypes,
					int first_param)
{
	return filter_condition(filter, alias, desc, ptypes, first_param, false);
}

/* " WHERE ..." for the filter, or nothing for no filter. */
static char *
filter_sql(List *filter, const char *alias, TupleDesc desc, Oid *ptypes)
{
	if (filter == NIL)
		return "";
	return psprintf(" WHERE %s", mt_filter_condition(filter, alias, desc, ptypes, 0));
}

static int
compare_strings(const ListCell *a, const ListCell *b)
{
	return strcmp(lfirst(a), lfirst(b));
}

/* A filter column's values, each once. */
List *
mt_filter_values_once(MtFilterColumn *col)
{
	List	   *sorted = list_copy(col->values);
	List	   *distinct = NIL;
	char	   *prev = NULL;
	ListCell   *lv;

	list_sort(sorted, compare_strings);
	foreach(lv, sorted)
	{
		if (prev == NULL || strcmp(prev, lfirst(lv)) != 0)
			distinct = lappend(distinct, lfirst(lv));
		prev = lfirst(lv);
	}
	list_free(sorted);
	return distinct;
}

/*
 * The filter's parameters: one array per column of each family, of the
 * column's type in desc (text[] for a type without an array type), its
 * elements read once here by the type's input function.  Casting a text[]
 * parameter in the statement instead costs the cast for every row the
 * statement reads when the input function is not immutable (date and
 * timestamps): the planner cannot fold it.
 */
int
mt_filter_params(List *filter, TupleDesc desc, Oid **argtypes, Datum **values,
				 ParamListInfo *params)
{
	int			n = 0;
	ListCell   *lf;
	ListCell   *lc;
	int			i = 0;

	foreach(lf, filter)
		n += list_length(((MtFilterFamily *) lfirst(lf))->columns);
	/*
	 * No parameters: no list, as SPI's callers without parameters pass
	 * (Citus's executor takes a list for one with parameters).
	 */
	*params = n > 0 ? makeParamList(n) : NULL;
	*argtypes = palloc(sizeof(Oid) * (n + 1));
	*values = palloc(sizeof(Datum) * (n + 1));
	foreach(lf, filter)
	{
		MtFilterFamily *family = lfirst(lf);

		foreach(lc, family->columns)
		{
			MtFilterColumn *col = lfirst(lc);
			Form_pg_attribute att = mt_find_attribute(desc, col->name);
			Oid			elemtype = att->atttypid;
			Oid			arraytype = get_array_type(elemtype);
			List	   *distinct = family->rowwise ? col->values : mt_filter_values_once(col);
			Datum	   *elems = palloc(sizeof(Datum) * (list_length(distinct) + 1));
			ListCell   *lv;
			int			k = 0;
			int16		typlen;
			bool		typbyval;
			char		typalign;

			if (!OidIsValid(arraytype))
			{
				elemtype = TEXTOID;
				arraytype = TEXTARRAYOID;
			}
			get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
			if (elemtype == TEXTOID)
			{
				foreach(lv, distinct)
					elems[k++] = CStringGetTextDatum(lfirst(lv));
			}
			else
			{
				Oid			typinput;
				Oid			typioparam;
				FmgrInfo	finfo;

				getTypeInputInfo(elemtype, &typinput, &typioparam);
				fmgr_info(typinput, &finfo);
				/* no typmod: a value too long for the column matches no row */
				foreach(lv, distinct)
					elems[k++] = InputFunctionCall(&finfo, lfirst(lv), typioparam, -1);
			}
			(*argtypes)[i] = arraytype;
			(*values)[i] = PointerGetDatum(construct_array(elems, k, elemtype, typlen,
														   typbyval, typalign));
			(*params)->params[i].value = (*values)[i];
			(*params)->params[i].isnull = false;
			(*params)->params[i].pflags = PARAM_FLAG_CONST;
			(*params)->params[i].ptype = arraytype;
			i++;
		}
	}
	return n;
}

/* A partition spec (MtOption column = value) as a filter of one family. */
List *
mt_filter_from_spec(List *spec)
{
	MtFilterFamily *family;
	ListCell   *lc;

	if (spec == NIL)
		return NIL;
	family = palloc0(sizeof(MtFilterFamily));
	foreach(lc, spec)
	{
		MtOption   *opt = lfirst(lc);
		MtFilterColumn *col = palloc0(sizeof(MtFilterColumn));

		col->name = opt->key;
		col->values = list_make1(opt->value);
		family->columns = lappend(family->columns, col);
	}
	return list_make1(family);
}

/*
 * mt_filter_of_keys
 *		Rows of values of the columns (char *names; each key a char *[]
 *		with NULL for NULL) as a filter.  With several columns, the keys
 *		are matched row by row: matching each column's values alone would
 *		take in every combination of them.  Row matching has no NULLs: a
 *		family per pattern of NULL columns, those matched by IS NULL.
 */
List *
mt_filter_of_keys(List *columns, List *keys)
{
	List	   *filter = NIL;
	List	   *patterns = NIL; /* int: the non-NULL columns of each family */
	int			ncols = list_length(columns);
	ListCell   *lk;

	Assert(ncols <= 31);
	foreach(lk, keys)
	{
		char	  **key = lfirst(lk);
		MtFilterFamily *family = NULL;
		int			pattern = 0;
		ListCell   *lp;

		for (int i = 0; i < ncols; i++)
			if (key[i] != NULL)
				pattern |= 1 << i;
		foreach(lp, patterns)
			if (lfirst_int(lp) == pattern)
				family = list_nth(filter, foreach_current_index(lp));
		if (family == NULL)
		{
			ListCell   *lc;

			family = palloc0(sizeof(MtFilterFamily));
			family->rowwise = pg_popcount32(pattern) > 1;
			foreach(lc, columns)
			{
				MtFilterColumn *col = palloc0(sizeof(MtFilterColumn));

				col->name = lfirst(lc);
				family->columns = lappend(family->columns, col);
			}
			filter = lappend(filter, family);
			patterns = lappend_int(patterns, pattern);
		}
		for (int i = 0; i < ncols; i++)
		{
			MtFilterColumn *col = list_nth(family->columns, i);

			if (key[i] == NULL)
				col->has_null = true;
			else
				col->values = lappend(col->values, key[i]);
		}
	}
	return filter;
}

/* no more families than this are read one by one (mt_filter_select) */
#define MAX_SEPARATE_FAMILIES	8

/*
 * mt_filter_select
 *		The rows of query select (... FROM x alias) that the filter names
 *		(parameters as mt_filter_condition's, from $1), or all of them.  Of
 * several families, the rows of each family in turn, less those of the
 * families before it, in one UNION ALL: a condition on the columns of
 * several sources ("o.id = ANY ($1) OR c.id = ANY ($2)") reaches none of
 * their scans, and the whole join would be read, where each family's alone
 * is pushed down to its source's index.
 */
static char *
filter_select(const char *select, List *filter, const char *alias, TupleDesc desc, Oid *ptypes,
			  bool joined)
{
	StringInfoData buf;
	ListCell   *lf;
	int			param = 0;

	if (filter == NIL)
		return pstrdup(select);
	if (list_length(filter) < 2 || list_length(filter) > MAX_SEPARATE_FAMILIES)
		return psprintf("%s WHERE %s", select,
						filter_condition(filter, alias, desc, ptypes, 0, joined));
	initStringInfo(&buf);
	foreach(lf, filter)
	{
		int			k = foreach_current_index(lf);

		if (k > 0)
			appendStringInfoString(&buf, " UNION ALL ");
		appendStringInfo(&buf, "%s WHERE %s", select,
						 filter_condition(list_make1(lfirst(lf)), alias, desc, ptypes + param,
										  param, joined));
		if (k > 0)
			appendStringInfo(&buf, " AND (%s) IS NOT TRUE",
							 mt_filter_condition(list_copy_head(filter, k), alias, desc, ptypes, 0));
		param += list_length(((MtFilterFamily *) lfirst(lf))->columns);
	}
	return buf.data;
}

char *
mt_filter_select(const char *select, List *filter, const char *alias, TupleDesc desc, Oid *ptypes)
{
	return filter_select(select, filter, alias, desc, ptypes, false);
}

/*
 * mt_filter_select_joined
 *		The same, each column's values a set the query is semi-joined with
 *		("col = ANY (SELECT unnest ($1))"): the planner may then take the
 *		keys to any table of a join that the key column equals, where a
 *		"col = ANY ($1)" of many values is one probe of an index per value
 *		on the column's own table (TPC-H Q17: 5,000 parts of lines probed,
 *		where 20 parts pass the query's own conditions).
 */
char *
mt_filter_select_joined(const char *select, List *filter, const char *alias, TupleDesc desc,
						Oid *ptypes)
{
	return filter_select(select, filter, alias, desc, ptypes, true);
}

/*
 * The refresh query: the source view's columns (of source_sql's rows, if
 * not NULL) in the table's column order, cast to the table's types where
 * they differ, and the values of metadata columns.
 */
static char *
select_sql(Relation rel, MtTable *mt, Relation view, const char *source_sql, List *filter,
		   Oid *ptypes)
{
	TupleDesc	desc = RelationGetDescr(rel);
	TupleDesc	vdesc = RelationGetDescr(view);
	StringInfoData buf;
	int			i;
	bool		first = true;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "SELECT ");
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		char	   *name = NameStr(att->attname);
		char	   *type;
		int			j;
		Form_pg_attribute vatt = NULL;

		/* (a dropped column has no type) */
		if (att->attisdropped || att->attgenerated)
			continue;
		type = mt_type_sql(att->atttypid, att->atttypmod);
		if (!first)
			appendStringInfoString(&buf, ", ");
		first = false;

		if (mt_option_value(mt->metadata_columns, name))
		{
			/* the only metadata key: the time of the refresh that wrote the row */
			appendStringInfo(&buf, "CAST(pg_catalog.now() AS %s)", type);
			continue;
		}
		for (j = 0; j < vdesc->natts; j++)
		{
			Form_pg_attribute a = TupleDescAttr(vdesc, j);

			if (!a->attisdropped && strcmp(NameStr(a->attname), name) == 0)
				vatt = a;
		}
		if (vatt == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of materialized table \"%s\" is not produced by its query",
							name, RelationGetRelationName(rel))));
		if (vatt->atttypid == att->atttypid && vatt->atttypmod == att->atttypmod)
			appendStringInfo(&buf, "v.%s", quote_identifier(name));
		else
			appendStringInfo(&buf, "CAST(v.%s AS %s)", quote_identifier(name), type);
	}
	appendStringInfo(&buf, " FROM %s v",
					 source_sql ? psprintf("(%s)", source_sql) :
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(view)),
												RelationGetRelationName(view)));
	return mt_filter_select(buf.data, filter, "v", vdesc, ptypes);
}


/*
 * The LIST values of one partition, if the filter names exactly one value
 * for every partition column (a partition spec does): that partition is
 * created even if the query gives it no rows.
 */
static List *
filter_partition_values(MtTable *mt, List *filter)
{
	List	   *values = NIL;
	MtFilterFamily *family;
	ListCell   *lc;

	if (list_length(filter) != 1 || mt->partition_keys == NIL)
		return NIL;
	family = linitial(filter);
	foreach(lc, mt->partition_keys)
	{
		ListCell   *lc2;
		char	   *v = NULL;

		foreach(lc2, family->columns)
		{
			MtFilterColumn *col = lfirst(lc2);

			if (strcmp(col->name, strVal(lfirst(lc))) == 0 &&
				list_length(col->values) == 1 && !col->has_null)
				v = linitial(col->values);
		}
		if (v == NULL)
			return NIL;
		values = lappend(values, v);
	}
	return values;
}

/*
 * 'sink.parallelism' (a table option, or a RESUME option of the running
 * pipeline) is the number of processes that compute the refresh query: the
 * leader and n - 1 parallel workers.  Set within the caller's GUC nest level.
 */
static void
apply_refresh_options(MtTable *mt)
{
	char	   *value = mt_option_value(mt->pipeline_options, "sink.parallelism");

	if (value == NULL)
		value = mt_option_value(mt->options, "sink.parallelism");
	if (value)
		(void) set_config_option("max_parallel_workers_per_gather",
								 psprintf("%d", Max(atoi(value) - 1, 0)),
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
								 true, 0, false);
}

/*
 * mt_favour_index_lookups
 *		For the rest of the caller's GUC nest level, price a random page
 *		read at MT_LOOKUP_PAGE_COST (unless it is already lower).  A
 *		maintenance cycle looks up a few thousand rows of tables mostly in
 *		memory -- a changed order's customer, a touched group's row -- and
 *		priced as disk reads (random_page_cost 4), those lookups seem dearer
 *		to the planner than hashing the whole table, which they are not.
 */
void
mt_favour_index_lookups(void)
{
	if (random_page_cost > MT_LOOKUP_PAGE_COST)
		(void) set_config_option("random_page_cost", CppAsString2(MT_LOOKUP_PAGE_COST),
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
}

/*
 * Can the rows the filter names be replaced by one MERGE, matching the
 * table's rows to the query's by the filter's columns (a key of the
 * result) and updating them in place?  A row updated in place is one new
 * version, often on its page and without new index entries (HOT), where
 * the writer deletes it and inserts it again.  Not when the writer is
 * needed: partitions to create, metadata columns, readers of the table's
 * rows (CONTINUOUS tables downstream, fed the rows the writer replaces:
 * see mt/refresh/observer.h), filters of several families or with NULLs
 * (= matches no NULL), or a unique index on other columns (rows updated
 * one by one could collide on the way).
 */
static bool
merge_by_key(MtRefreshRequest *req, Relation rel, MtTable *mt, Relation view)
{
	MtFilterFamily *family;
	List	   *keys = NIL;
	ListCell   *lc;

	if (!req->by_key || list_length(req->filter) != 1 ||
		rel->rd_rel->relkind != RELKIND_RELATION || mt->metadata_columns != NIL ||
		mt_observe_has_readers(req->relid))
		return false;
	family = linitial(req->filter);
	if (!family->rowwise && list_length(family->columns) != 1)
		return false;
	foreach(lc, family->columns)
	{
		MtFilterColumn *col = lfirst(lc);
		Form_pg_attribute att = mt_find_attribute(RelationGetDescr(rel), col->name);

		if (col->has_null || att->attgenerated ||
			att->atttypid != mt_find_attribute(RelationGetDescr(view), col->name)->atttypid)
			return false;
		keys = lappend_int(keys, att->attnum);
	}
	return !mt_unique_beyond_keys(rel, keys);
}

/*
 * mt_unique_beyond_keys
 *		Has rel a unique or exclusion constraint on columns beyond keys
 *		(attnums)?  Rows matched by their keys and updated one by one could
 *		then collide on the way to a result that has no collision.
 */
bool
mt_unique_beyond_keys(Relation rel, List *keys)
{
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	bool		beyond = false;

	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index form = index->rd_index;

		if (form->indisunique || form->indisexclusion)
			for (int i = 0; i < form->indnatts; i++)
				if (!list_member_int(keys, form->indkey.values[i]))
					beyond = true;
		index_close(index, AccessShareLock);
	}
	list_free(indexes);
	return beyond;
}

/*
 * The MERGE of merge_by_key: the family's key tuples (its array
 * parameters) left-joined with the source view; a key the view lacks
 * deletes its row, one it has updates the row unless it is identical (by
 * binary image, as REFRESH MATERIALIZED VIEW CONCURRENTLY compares: 1.0 is
 * not 1.00) or inserts it.  With per_key, the view is read once per key,
 * through a LATERAL subquery: of a view the planner computes whole
 * (mt_query_computed_whole), a join condition would not reach its input,
 * where a restriction of a subquery planned per key does.
 */
static char *
merge_sql(Relation rel, Relation view, MtFilterFamily *family, Oid *ptypes, bool per_key)
{
	TupleDesc	desc = RelationGetDescr(rel);
	TupleDesc	vdesc = RelationGetDescr(view);
	StringInfoData knames;
	StringInfoData join;
	StringInfoData on;
	StringInfoData select;
	StringInfoData mcols;
	StringInfoData scols;
	StringInfoData sets;
	StringInfoData icols;
	StringInfoData ivals;
	const char *vname;
	ListCell   *lc;
	int			i;

	vname = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(view)),
									   RelationGetRelationName(view));
	initStringInfo(&knames);
	initStringInfo(&join);
	initStringInfo(&on);
	initStringInfo(&select);
	initStringInfo(&mcols);
	initStringInfo(&scols);
	initStringInfo(&sets);
	initStringInfo(&icols);
	initStringInfo(&ivals);
	foreach(lc, family->columns)
	{
		MtFilterColumn *col = lfirst(lc);
		const char *name = quote_identifier(col->name);
		const char *eq = mt_equality_sql(mt_find_attribute(desc, col->name)->atttypid);
		const char *sep = foreach_current_index(lc) > 0 ? ", " : "";
		const char *and = foreach_current_index(lc) > 0 ? " AND " : "";
		int			k = foreach_current_index(lc) + 1;

		appendStringInfo(&knames, "%s__mt_k%d", sep, k);
		appendStringInfo(&select, "%sk.__mt_k%d", sep, k);
		appendStringInfo(&join, "%sv.%s %s k.__mt_k%d", and, name, eq, k);
		appendStringInfo(&on, "%sm.%s %s s.__mt_k%d", and, name, eq, k);
		appendStringInfo(&icols, "%s%s", sep, name);
		appendStringInfo(&ivals, "%ss.__mt_k%d", sep, k);
	}
	appendStringInfo(&select, ", v.%s IS NOT NULL AS __mt_present",
					 quote_identifier(((MtFilterColumn *) linitial(family->columns))->name));
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		char	   *name = NameStr(att->attname);
		const char *qname = quote_identifier(name);
		Form_pg_attribute vatt;
		bool		key = false;

		if (att->attisdropped || att->attgenerated)
			continue;
		foreach(lc, family->columns)
			key = key || strcmp(((MtFilterColumn *) lfirst(lc))->name, name) == 0;
		if (key)
			continue;
		vatt = mt_find_attribute(vdesc, name);
		if (vatt->atttypid == att->atttypid && vatt->atttypmod == att->atttypmod)
			appendStringInfo(&select, ", v.%s", qname);
		else
			appendStringInfo(&select, ", CAST(v.%s AS %s) AS %s", qname,
							 mt_type_sql(att->atttypid, att->atttypmod), qname);
		appendStringInfo(&mcols, "%sm.%s", mcols.len ? ", " : "", qname);
		appendStringInfo(&scols, "%ss.%s", scols.len ? ", " : "", qname);
		appendStringInfo(&sets, "%s%s = s.%s", sets.len ? ", " : "", qname, qname);
		appendStringInfo(&icols, ", %s", qname);
		appendStringInfo(&ivals, ", s.%s", qname);
	}
	return psprintf("MERGE INTO %s m USING (SELECT %s FROM ROWS FROM (%s) AS k(%s) "
					"%s) s ON %s "
					"WHEN MATCHED AND NOT s.__mt_present THEN DELETE "
					"%s"
					"WHEN NOT MATCHED AND s.__mt_present THEN INSERT (%s) VALUES (%s)",
					quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
											   RelationGetRelationName(rel)),
					select.data, family_rows(family, desc, ptypes, 0), knames.data,
					per_key ?
					psprintf("LEFT JOIN LATERAL (SELECT * FROM %s v WHERE %s OFFSET 0) v ON true",
							 vname, join.data) :
					psprintf("LEFT JOIN %s v ON %s", vname, join.data),
					on.data,
					sets.len ? psprintf("WHEN MATCHED AND NOT pg_catalog.record_image_eq(ROW(%s), ROW(%s)) "
										"THEN UPDATE SET %s ", mcols.data, scols.data, sets.data) : "",
					icols.data, ivals.data);
}

/* The column list of an INSERT of select_sql's rows: the same columns, in order. */
static char *
insert_columns(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped || att->attgenerated)
			continue;
		appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", quote_identifier(NameStr(att->attname)));
	}
	return buf.data;
}

/*
 * A table Citus distributes: its rows are in shards on the workers, which
 * only Citus's executor writes.  The refresh is then a DELETE and an
 * INSERT ... SELECT that Citus runs shard by shard on the nodes where it
 * can (the table co-located with its sources), else through the
 * coordinator; the transaction commits on every node or on none
 * (two-phase commit), and readers keep seeing the old rows until then.
 */
static MtRefreshCounts
refresh_distributed(Oid relid, MtTable *mt, List *filter, const char *delete_sql,
					const char *insert_sql, int nparams, Oid *argtypes, Datum *values)
{
	MtRefreshCounts counts = {0};
	List	   *partition_values = filter_partition_values(mt, filter);

	SPI_connect();
	MT_INTERNAL_BEGIN();
	if (partition_values != NIL)
		mt_partition_create(relid, mt, partition_values);
	if (SPI_execute_with_args(delete_sql, nparams, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete the old rows of \"%s\"", get_rel_name(relid));
	counts.deleted = SPI_processed;
	if (SPI_execute_with_args(insert_sql, nparams, argtypes, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not insert the rows of \"%s\"", get_rel_name(relid));
	counts.inserted = SPI_processed;
	MT_INTERNAL_END();
	SPI_finish();
	return counts;
}

/*
 * mt_refresh_rows
 *		Replace rows of an MT with its query's result; see mt/refresh/refresh.h.
 */
MtRefreshCounts
mt_refresh_rows(MtRefreshRequest *req)
{
	Oid			relid = req->relid;
	MtTable    *mt = mt_catalog_lookup(relid, false);
	Relation	rel;
	Relation	view;
	Oid			owner;
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;
	Oid		   *argtypes;
	Datum	   *values;
	ParamListInfo params;
	int			nparams;
	SPIPlanPtr	plan;
	SPIExecuteOptions options;
	MtWriter   *writer;
	MtRefreshCounts wcounts;
	MtRefreshCounts counts = {0};
	List	   *partition_values;
	char	   *delete_sql;
	char	   *where_sql;
	char	   *select_query;
	char	   *merge_query = NULL;
	char	   *merge_per_key = NULL;
	char	   *insert_query = NULL;
	bool		distributed;
	int			rc;

	/*
	 * Build the statements, then let go of the relations (keeping the
	 * lock): creating a partition attaches it, which PostgreSQL refuses
	 * for a table this session still has open.
	 */
	rel = table_open(relid, MT_REFRESH_LOCKMODE);
	view = table_open(OidIsValid(req->source_view) ? req->source_view : mt->query_view,
					  AccessShareLock);
	owner = rel->rd_rel->relowner;
	/* from here on as the owner: reading the filter's values runs a domain's checks */
	mt_run_as_owner_begin(owner, &save_userid, &save_sec, &save_nestlevel);
	nparams = mt_filter_params(req->filter, RelationGetDescr(rel), &argtypes, &values, &params);
	where_sql = filter_sql(req->filter, NULL, RelationGetDescr(rel), argtypes);
	delete_sql = psprintf("DELETE FROM %s%s", mt_qualified_name(relid), where_sql);
	select_query = select_sql(rel, mt, view, req->source_sql, req->filter, argtypes);
	distributed = mt_citus_table_kind(relid) != MT_CITUS_NONE;
	if (distributed)
		insert_query = psprintf("INSERT INTO %s (%s) %s", mt_qualified_name(relid),
								insert_columns(rel), select_query);
	else if (req->source_sql == NULL && merge_by_key(req, rel, mt, view))
	{
		merge_query = merge_sql(rel, view, linitial(req->filter), argtypes, false);
		if (mt_query_computed_whole(get_view_query(view)))
			merge_per_key = merge_sql(rel, view, linitial(req->filter), argtypes, true);
	}
	table_close(view, NoLock);
	table_close(rel, NoLock);

	apply_refresh_options(mt);

	if (distributed)
	{
		counts = refresh_distributed(relid, mt, req->filter, delete_sql, insert_query,
									 nparams, argtypes, values);
		mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
		return counts;
	}

	if (merge_query)
	{
		mt_favour_index_lookups();

		/*
		 * a grouped view read per key (its input's rows of the changed
		 * groups: the partial aggregates of a table on Citus, a table
		 * grouped over kept rows) or whole, as the planner estimates
		 * cheaper with the keys' values: whole when most groups changed
		 */
		if (merge_per_key &&
			mt_estimated_cost(merge_per_key, nparams, argtypes, params) <
			mt_estimated_cost(merge_query, nparams, argtypes, params))
			merge_query = merge_per_key;
		SPI_connect();
		MT_INTERNAL_BEGIN();
		rc = SPI_execute_with_args(merge_query, nparams, argtypes, values, NULL, false, 0);
		MT_INTERNAL_END();
		if (rc != SPI_OK_MERGE)
			elog(ERROR, "could not replace the rows of \"%s\"", get_rel_name(relid));
		/* rows written: each inserted, updated or deleted once */
		counts.inserted = SPI_processed;
		SPI_finish();
		mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
		return counts;
	}

	/* rows are written while the query may run in parallel mode */
	(void) GetCurrentTransactionId();

	SPI_connect();

	/*
	 * The guards let the engine's own statements through inside
	 * MT_INTERNAL_BEGIN/END; after an error, whoever catches it (the end
	 * of the transaction, or mt_refresh) puts it back.
	 */
	partition_values = filter_partition_values(mt, req->filter);
	MT_INTERNAL_BEGIN();
	if (partition_values != NIL)
		mt_partition_create(relid, mt, partition_values);
	writer = mt_writer_begin(relid, mt, where_sql, nparams, argtypes, values);
	if (!mt_writer_diffs(writer))
	{
		rc = SPI_execute_with_args(delete_sql, nparams, argtypes, values, NULL, false, 0);
		if (rc != SPI_OK_DELETE)
			elog(ERROR, "could not delete the old rows of \"%s\"", get_rel_name(relid));
		counts.deleted = SPI_processed;
	}
	MT_INTERNAL_END();

	plan = SPI_prepare_cursor(select_query, nparams, argtypes, CURSOR_OPT_PARALLEL_OK);
	if (plan == NULL)
		elog(ERROR, "could not prepare the refresh query of \"%s\": %s",
			 get_rel_name(relid), SPI_result_code_string(SPI_result));

	memset(&options, 0, sizeof(options));
	options.params = params;
	/* read_only: run with the caller's active snapshot, as is */
	options.read_only = req->use_snapshot;
	options.dest = mt_writer_receiver(writer);
	rc = SPI_execute_plan_extended(plan, &options);
	/* SPI reports a SELECT whose rows went elsewhere as a utility */
	if (rc != SPI_OK_SELECT && rc != SPI_OK_UTILITY)
		elog(ERROR, "could not run the refresh query of \"%s\"", get_rel_name(relid));
	MT_INTERNAL_BEGIN();
	wcounts = mt_writer_finish(writer);
	MT_INTERNAL_END();

	SPI_finish();
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);

	counts.inserted = wcounts.inserted;
	counts.deleted += wcounts.deleted;
	counts.unchanged = wcounts.unchanged;
	return counts;
}

/*
 * mt_refresh
 *		A refresh as users and schedulers ask for it: recorded in the
 *		refresh history and in the table's last_refresh_time.  It runs in a
 *		subtransaction so that a failure can be recorded, with its error,
 *		before the error goes on to the caller.
 */
uint64
mt_refresh(Oid relid, List *spec, MtRefreshTrigger trigger)
{
	TimestampTz started = GetCurrentTimestamp();
	MtSubxact	sub;
	MtHistoryRun *run;
	uint64		rows = 0;

	run = mt_history_start(relid, mt_trigger_name(trigger),
						   mt_partition_spec_text(spec), started,
						   trigger != MT_TRIGGER_CREATE);

	mt_subxact_begin(&sub);
	PG_TRY();
	{
		MtRefreshRequest req = {0};
		MtRefreshCounts counts;
		MtTable    *mt = mt_catalog_lookup(relid, false);

		/*
		 * A table whose shards their nodes keep: a new one is filled here,
		 * then its shards are taken up by their nodes.  A new query is
		 * taken up by the nodes once this transaction commits: Citus has
		 * changed the shards' columns in it, which the nodes' own
		 * transactions would wait for.  Other refreshes are the nodes'.
		 */
		if (trigger != MT_TRIGGER_CREATE && mt_shards_on_nodes(mt))
		{
			if (trigger == MT_TRIGGER_ALTER)
				mt_wake_worker_at_commit();
			else
				mt_shards_refresh(mt);
		}
		else
		{
			req.relid = relid;
			req.filter = mt_filter_from_spec(spec);
			counts = mt_refresh_rows(&req);
			rows = counts.inserted + counts.deleted;
			mt_observe_rewritten(relid);
			mt_catalog_set_last_refresh(relid, started);
		}
		mt_history_succeeded(run, rows, "FULL");
		mt_subxact_commit(&sub);
	}
	PG_CATCH();
	{
		ErrorData  *edata = mt_subxact_rollback(&sub);

		mt_history_failed(run, edata->message);
		ReThrowError(edata);
	}
	PG_END_TRY();
	return rows;
}

/*
 * mt_refresh_stamp_column
 *		A metadata column added to a table: every row gets the time of the
 *		refresh that wrote it (the last one), cast to the column's type.
 */
void
mt_refresh_stamp_column(Oid relid, const char *column, Oid typid, int32 typmod, TimestampTz when)
{
	mt_spi_exec_internal(psprintf("UPDATE %s SET %s = CAST(%s::pg_catalog.timestamptz AS %s)",
								  mt_qualified_name(relid), quote_identifier(column),
								  quote_literal_cstr(timestamptz_to_str(when)),
								  mt_type_sql(typid, typmod)), SPI_OK_UPDATE);
}
