/*-------------------------------------------------------------------------
 *
 * src/refresh/partial_rows.c
 *	  The nodes' rows of a table kept from partial aggregates, in its
 *	  hidden table on the coordinator (see refresh/partials.c).
 *
 * A node sends either all of its partial rows combined by group, or the
 * keys of the groups that changed on it since the coordinator's last pass
 * and the rows of those of them that still have rows (see
 * continuous/partial_log.c).  The rows replace, in the hidden table, that
 * node's rows of the same groups (or all of its rows); the groups named
 * become the filter of the table's refresh.
 *
 * Keys and rows come as text in mt_portable_text_begin's form, and are
 * read under it; the filter of the refresh is written back under the
 * session's settings, as mt_refresh_rows reads it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/hidden_objects.h"
#include "mt/catalog/marker.h"
#include "mt/refresh/partial_rows.h"
#include "mt/refresh/refresh.h"
#include "mt/utils/extension.h"
#include "mt/utils/subxact.h"

/*
 * mt_partials_hidden_name
 *		The quoted name of the table's hidden object of this prefix
 *		(partials_, combined_).
 */
char *
mt_partials_hidden_name(Oid relid, const char *prefix)
{
	return quote_qualified_identifier(MT_INTERNAL_SCHEMA,
									  mt_hidden_name(prefix, mt_catalog_id(relid)));
}

static int
compare_joined(const ListCell *a, const ListCell *b)
{
	return strcmp(*(char **) lfirst(a), *(char **) lfirst(b));
}

/*
 * Add a node's changed groups (sent: a text[][] of ngroups columns) to the
 * change's, each once: the first element of each kept key is its columns
 * joined, to sort by (the key itself follows it).
 */
static void
add_keys(StagedChange *change, const char *sent, int ngroups)
{
	ArrayType  *array = DatumGetArrayTypeP(OidInputFunctionCall(F_ARRAY_IN, (char *) sent,
																 TEXTOID, -1));
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (ARR_NDIM(array) != 2 || ARR_DIMS(array)[1] != ngroups)
		elog(ERROR, "a node sent keys of %d columns where the table groups by %d",
			 ARR_NDIM(array) == 2 ? ARR_DIMS(array)[1] : 0, ngroups);
	for (int k = 0; k < n; k += ngroups)
	{
		char	  **entry = palloc(sizeof(char *) * (ngroups + 1));
		StringInfoData joined;

		initStringInfo(&joined);
		for (int i = 0; i < ngroups; i++)
		{
			entry[i + 1] = nulls[k + i] ? NULL : TextDatumGetCString(elems[k + i]);
			/* (a NULL sorts apart from every value: \x01 is in none) */
			appendStringInfo(&joined, "%s\x02", entry[i + 1] ? entry[i + 1] : "\x01");
		}
		entry[0] = joined.data;
		change->keys = lappend(change->keys, entry);
	}
}

/* The change's keys, each once, without their sort element. */
static List *
distinct_keys(List *entries)
{
	List	   *keys = NIL;
	char	   *prev = NULL;
	ListCell   *lc;

	list_sort(entries, compare_joined);
	foreach(lc, entries)
	{
		char	  **entry = lfirst(lc);

		if (prev == NULL || strcmp(prev, entry[0]) != 0)
			keys = lappend(keys, entry + 1);
		prev = entry[0];
	}
	return keys;
}

/*
 * mt_partials_staging_groups
 *		The group columns of the hidden table (g1, g2, ...).
 */
List *
mt_partials_staging_groups(int ngroups)
{
	List	   *columns = NIL;

	for (int i = 1; i <= ngroups; i++)
		columns = lappend(columns, psprintf("g%d", i));
	return columns;
}

/* Delete the node's rows of the groups the node named. */
static void
delete_node_groups(const char *staging, TupleDesc desc, NodeRows *node, int ngroups)
{
	List	   *filter = mt_filter_of_keys(mt_partials_staging_groups(ngroups), node->groups);
	Oid		   *argtypes;
	Datum	   *values;
	ParamListInfo params;
	int			n;

	n = mt_filter_params(filter, desc, &argtypes, &values, &params);
	/* (room for one more parameter: see mt_filter_params) */
	argtypes[n] = INT4OID;
	values[n] = Int32GetDatum(node->group);
	if (SPI_execute_with_args(psprintf("DELETE FROM %s s WHERE s.__mt_node OPERATOR(pg_catalog.=) $%d AND (%s)",
									   staging, n + 1, mt_filter_condition(filter, "s", desc, argtypes, 0)),
							  n + 1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not replace the partial aggregates of a node");
}

/*
 * The rows the nodes sent, in the hidden table in place of their last
 * ones of the same groups, or all their last ones (each row says its
 * node's group); with other_nodes (the nodes that hold shards are not
 * those of the last pass), those of nodes that hold no shard now go.
 */
StagedChange
mt_partials_stage_rows(Oid relid, List *nodes, int ngroups, bool other_nodes)
{
	char	   *staging = mt_partials_hidden_name(relid, "partials_");
	Oid			argtypes[2] = {TEXTOID, INT4OID};
	Datum	   *groups = palloc(sizeof(Datum) * (list_length(nodes) + 1));
	Oid			arraytype = INT4ARRAYOID;
	Datum		groups_array;
	ListCell   *lc;
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;
	int			portable;
	Relation	rel;
	TupleDesc	desc;
	StagedChange change = {0};
	int			n = 0;

	rel = relation_open(mt_hidden_relid("partials_", relid), AccessShareLock);
	desc = CreateTupleDescCopy(RelationGetDescr(rel));
	relation_close(rel, AccessShareLock);
	foreach(lc, nodes)
	{
		NodeRows   *node = lfirst(lc);

		groups[n++] = Int32GetDatum(node->group);
		if (node->rows && node->keys)
		{
			StagedChange one = {0};

			add_keys(&one, node->keys, ngroups);
			change.keys = list_concat(change.keys, one.keys);
			node->groups = distinct_keys(list_copy(one.keys));
		}
	}
	groups_array = PointerGetDatum(construct_array(groups, n, INT4OID, sizeof(int32), true, TYPALIGN_INT));
	/* as the owner: the rows' input runs the checks of its domains */
	mt_run_as_owner_begin(mt_table_owner(relid), &save_userid, &save_sec, &save_nestlevel);
	portable = mt_portable_text_begin();
	SPI_connect();
	MT_INTERNAL_BEGIN();
	/* (a scan of the whole hidden table: not at every pass) */
	if (other_nodes)
	{
		if (SPI_execute_with_args(psprintf("DELETE FROM %s WHERE __mt_node OPERATOR(pg_catalog.<>) ALL ($1)", staging),
								  1, &arraytype, &groups_array, NULL, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "could not keep the partial aggregates of \"%s\"", get_rel_name(relid));
		change.changed = change.all = SPI_processed > 0;
	}
	foreach(lc, nodes)
	{
		NodeRows   *node = lfirst(lc);
		Datum		values[2] = {CStringGetTextDatum(node->rows ? node->rows : "{}"),
		Int32GetDatum(node->group)};

		if (node->rows == NULL)
			continue;
		change.changed = true;
		if (node->keys)
			delete_node_groups(staging, desc, node, ngroups);
		else
		{
			change.all = true;
			if (SPI_execute_with_args(psprintf("DELETE FROM %s WHERE __mt_node OPERATOR(pg_catalog.=) $2", staging),
									  2, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
				elog(ERROR, "could not keep the partial aggregates of \"%s\"", get_rel_name(relid));
		}
		if (SPI_execute_with_args(psprintf("INSERT INTO %s SELECT (s.r).* FROM"
										   " (SELECT u.t::%s AS r FROM pg_catalog.unnest($1::pg_catalog.text[]) u(t)"
										   "  OFFSET 0) s", staging, staging),
								  2, argtypes, values, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not keep the partial aggregates of \"%s\"", get_rel_name(relid));
	}
	MT_INTERNAL_END();
	SPI_finish();
	mt_unpin_search_path(portable);
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
	CommandCounterIncrement();
	if (!change.all)
		change.keys = distinct_keys(change.keys);
	return change;
}

/*
 * The changed groups as a filter of the table's rows: the keys, read
 * under the portable settings by the types of the hidden table's group
 * columns, written back as text under the session's (as the filter is
 * read by mt_refresh_rows).
 */
List *
mt_partials_table_filter(Oid relid, List *columns, List *keys)
{
	Relation	rel = relation_open(mt_hidden_relid("partials_", relid), AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	int			ngroups = list_length(columns);
	List	   *datums = NIL;
	List	   *session = NIL;
	ListCell   *lc;
	Oid			save_userid;
	int			save_sec;
	int			save_nestlevel;
	int			portable;

	/* as the owner: a domain's input checks are its code */
	mt_run_as_owner_begin(mt_table_owner(relid), &save_userid, &save_sec, &save_nestlevel);
	portable = mt_portable_text_begin();
	foreach(lc, keys)
	{
		char	  **key = lfirst(lc);
		Datum	   *values = palloc(sizeof(Datum) * ngroups);

		for (int i = 0; i < ngroups; i++)
		{
			Oid			typinput;
			Oid			typioparam;

			if (key[i] == NULL)
				continue;
			getTypeInputInfo(TupleDescAttr(desc, i)->atttypid, &typinput, &typioparam);
			values[i] = OidInputFunctionCall(typinput, key[i], typioparam, -1);
		}
		datums = lappend(datums, values);
	}
	mt_unpin_search_path(portable);
	foreach(lc, keys)
	{
		char	  **key = lfirst(lc);
		Datum	   *values = list_nth(datums, foreach_current_index(lc));
		char	  **shown = palloc(sizeof(char *) * ngroups);

		for (int i = 0; i < ngroups; i++)
		{
			Oid			typoutput;
			bool		varlena;

			if (key[i] == NULL)
			{
				shown[i] = NULL;
				continue;
			}
			getTypeOutputInfo(TupleDescAttr(desc, i)->atttypid, &typoutput, &varlena);
			shown[i] = OidOutputFunctionCall(typoutput, values[i]);
		}
		session = lappend(session, shown);
	}
	mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
	relation_close(rel, AccessShareLock);
	return mt_filter_of_keys(columns, session);
}
