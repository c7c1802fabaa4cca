/*-------------------------------------------------------------------------
 *
 * src/utils/relations.c
 *	  Relations around a table: its leaf partitions, the tables it inherits
 *	  from, its primary key.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "commands/comment.h"
#include "executor/spi.h"
#include "catalog/indexing.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "rewrite/rewriteHandler.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "mt/utils/relations.h"
#include "mt/utils/subxact.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/sql.h"

/*
 * mt_leaf_relations
 *		The tables that hold relid's rows: itself, the leaves of its
 *		partition tree, or it and its inheritance children, in OID order.
 */
List *
mt_leaf_relations(Oid relid)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, find_all_inheritors(relid, NoLock, NULL))
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_RELATION)
			result = lappend_oid(result, lfirst_oid(lc));
	list_sort(result, list_oid_cmp);
	return result;
}

/*
 * mt_ancestor_relations
 *		The tables relid's rows are also rows of: its parents in a partition
 *		tree or by inheritance, up to the roots.
 */
List *
mt_ancestor_relations(Oid relid)
{
	List	   *result = NIL;
	Relation	inherits = table_open(InheritsRelationId, AccessShareLock);

	for (int i = -1; i < list_length(result); i++)
	{
		Oid			child = (i < 0) ? relid : list_nth_oid(result, i);
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tup;

		ScanKeyInit(&key, Anum_pg_inherits_inhrelid, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(child));
		scan = systable_beginscan(inherits, InheritsRelidSeqnoIndexId, true, NULL, 1, &key);
		while (HeapTupleIsValid(tup = systable_getnext(scan)))
			result = list_append_unique_oid(result,
											((Form_pg_inherits) GETSTRUCT(tup))->inhparent);
		systable_endscan(scan);
	}
	table_close(inherits, AccessShareLock);
	return result;
}

/* The names of the primary key's columns. */
List *
mt_primary_key_columns(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	Oid			index = RelationGetPrimaryKeyIndex(rel);
	List	   *result = NIL;

	if (OidIsValid(index))
	{
		Relation	irel = index_open(index, AccessShareLock);
		int			i;

		for (i = 0; i < irel->rd_index->indnkeyatts; i++)
			result = lappend(result, get_attname(relid, irel->rd_index->indkey.values[i], false));
		index_close(irel, AccessShareLock);
	}
	table_close(rel, AccessShareLock);
	return result;
}

/*
 * mt_comment_on
 *		COMMENT ON the relation (attnum 0) or one of its columns, which the
 *		command has checked the user may change; NULL or "" removes it.
 */
void
mt_comment_on(Oid relid, AttrNumber attnum, const char *comment)
{
	CreateComments(relid, RelationRelationId, attnum, comment);
	CommandCounterIncrement();
}

/*
 * mt_set_replica_identity_full
 *		From now on relid's changes are decoded with their old rows whole,
 *		and the user is told so.  (Through Citus, on a distributed table's
 *		shards too.)
 */
void
mt_set_replica_identity_full(Oid relid)
{
	SPI_connect();
	mt_spi_exec(psprintf("ALTER TABLE %s REPLICA IDENTITY FULL", mt_qualified_name(relid)),
				SPI_OK_UTILITY);
	SPI_finish();
	ereport(NOTICE,
			(errmsg("replica identity of table \"%s\" set to FULL", get_rel_name(relid)),
			 errdetail("Its changes are decoded with their old values to maintain materialized tables incrementally.")));
}

/* A relation's replica identity (REPLICA_IDENTITY_FULL, ...). */
char
mt_replica_identity(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	char		ident;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	ident = ((Form_pg_class) GETSTRUCT(tup))->relreplident;
	ReleaseSysCache(tup);
	return ident;
}

/*
 * mt_view_query
 *		A copy of a view's query, as its rule keeps it (its OLD and NEW
 *		included).
 */
Query *
mt_view_query(Oid view)
{
	Relation	rel = relation_open(view, AccessShareLock);
	Query	   *q = copyObject(get_view_query(rel));

	relation_close(rel, AccessShareLock);
	return q;
}

/* Has the table an index whose first column is this one? */
static bool
index_starts_with(Oid relid, AttrNumber first)
{
	Relation	rel = table_open(relid, AccessShareLock);
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	bool		covered = false;

	table_close(rel, AccessShareLock);
	foreach(lc, indexes)
	{
		HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));

		if (!HeapTupleIsValid(tup))
			continue;
		if (((Form_pg_index) GETSTRUCT(tup))->indnkeyatts > 0 &&
			((Form_pg_index) GETSTRUCT(tup))->indkey.values[0] == first)
			covered = true;
		ReleaseSysCache(tup);
	}
	return covered;
}

/*
 * mt_ensure_index_on
 *		An index on these columns (char *) of the table, unless one starts
 *		with the first, or one of them is not a column of it.
 */
void
mt_ensure_index_on(Oid relid, List *keys)
{
	StringInfoData cols;
	ListCell   *lc;
	AttrNumber	first = get_attnum(relid, linitial(keys));

	if (first == InvalidAttrNumber || index_starts_with(relid, first))
		return;
	initStringInfo(&cols);
	foreach(lc, keys)
	{
		if (get_attnum(relid, lfirst(lc)) == InvalidAttrNumber)
			return;				/* not a column of the table as it is */
		appendStringInfo(&cols, "%s%s", cols.len ? ", " : "", quote_identifier(lfirst(lc)));
	}
	MT_INTERNAL_BEGIN();
	SPI_connect();
	mt_spi_exec(psprintf("CREATE INDEX ON %s (%s)", mt_qualified_name(relid), cols.data),
				SPI_OK_UTILITY);
	SPI_finish();
	MT_INTERNAL_END();
	CommandCounterIncrement();
}
