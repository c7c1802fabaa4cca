/*-------------------------------------------------------------------------
 *
 * src/catalog/marker.c
 *	  The restore marker of a materialized table: what a dump carries of it
 *	  beyond the table itself.
 *
 * pg_dump does not dump the extension's catalog (its rows would name the
 * OIDs of the database dumped).  Each table has instead, in the internal
 * schema, a marker that pg_dump dumps as the ordinary object it is:
 *
 *	  restore_<id>		a materialized view of one row, the table and its
 *						query view as regclass constants -- dumped by name,
 *						restored as the new OIDs, and ordering the marker
 *						after both -- whose comment is the table's
 *						definition (mt_catalog_definition), kept up to date
 *						by the catalog, which hands it to mt_marker_sync
 *						after every change of its row.
 *
 * It is a part of the table (dropped with it), belongs to the extension's
 * owner and is readable by nobody else.  lifecycle/restore.c reads it back.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/dependency.h"
#include "commands/comment.h"
#include "executor/spi.h"
#include "rewrite/rewriteHandler.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/marker.h"
#include "mt/materialized_table.h"
#include "mt/utils/spi_plans.h"

/*
 * The name of a hidden object of a table: <prefix><id> (query_, state_,
 * derived_, restore_), after the table's id, which a dump keeps: the
 * objects a dump restores keep their names, and the statements of a later
 * restore of the same dump (pg_restore --clean) name them right.
 */
char *
mt_hidden_name(const char *prefix, int64 id)
{
	return psprintf("%s" INT64_FORMAT, prefix, id);
}

/* Is rel a restore marker? */
bool
mt_marker_is(Oid rel)
{
	char	   *name = get_rel_name(rel);

	return name != NULL && get_rel_namespace(rel) == mt_internal_namespace() &&
		get_rel_relkind(rel) == RELKIND_MATVIEW &&
		strncmp(name, MT_MARKER_PREFIX, strlen(MT_MARKER_PREFIX)) == 0;
}

/*
 * mt_marker_targets
 *		The table and query view a marker names (the constants of its
 *		query); false if it does not read as a marker does, or names a
 *		relation that is gone.
 */
bool
mt_marker_targets(Oid marker, Oid *table, Oid *query_view)
{
	Relation	rel = try_relation_open(marker, AccessShareLock);
	Query	   *q;
	Oid			found[2];
	bool		ok;

	if (rel == NULL)
		return false;			/* dropped meanwhile */
	q = get_view_query(rel);
	ok = (q != NULL && list_length(q->targetList) == 2);

	for (int i = 0; ok && i < 2; i++)
	{
		Node	   *expr = (Node *) ((TargetEntry *) list_nth(q->targetList, i))->expr;

		ok = IsA(expr, Const) && ((Const *) expr)->consttype == REGCLASSOID &&
			!((Const *) expr)->constisnull;
		if (ok)
			found[i] = DatumGetObjectId(((Const *) expr)->constvalue);
	}
	relation_close(rel, AccessShareLock);
	if (!ok)
		return false;
	*table = found[0];
	*query_view = found[1];
	return SearchSysCacheExists1(RELOID, ObjectIdGetDatum(*table)) &&
		SearchSysCacheExists1(RELOID, ObjectIdGetDatum(*query_view));
}

/*
 * mt_hidden_part_of
 *		Make a hidden object an internal part of table relid: dropped with
 *		it, never alone.
 */
void
mt_hidden_part_of(Oid part, Oid relid)
{
	ObjectAddress table;
	ObjectAddress address;

	ObjectAddressSet(table, RelationRelationId, relid);
	ObjectAddressSet(address, RelationRelationId, part);
	deleteDependencyRecordsForClass(RelationRelationId, part, RelationRelationId,
									DEPENDENCY_INTERNAL);
	recordDependencyOn(&address, &table, DEPENDENCY_INTERNAL);
	CommandCounterIncrement();
}

/*
 * mt_marker_sync
 *		Create the marker of table relid if it has none, and give it the
 *		table's definition as it is now.  Not for a table whose restore is
 *		not finished: its marker is the dump's until then.
 */
void
mt_marker_sync(MtTable *mt, const char *definition)
{
	char	   *name = mt_hidden_name(MT_MARKER_PREFIX, mt->id);
	Oid			marker;

	if (mt->restore_pending != NULL)
		return;
	marker = get_relname_relid(name, mt_internal_namespace());
	if (!OidIsValid(marker))
	{
		MtSavedUser saved;

		mt_as_extension_owner_begin(&saved);
		mt_spi_exec_internal(psprintf("CREATE MATERIALIZED VIEW %s AS SELECT %s::pg_catalog.regclass AS table_name, "
									  "%s::pg_catalog.regclass AS query_view",
									  quote_qualified_identifier(MT_INTERNAL_SCHEMA, name),
									  quote_literal_cstr(psprintf("%u", mt->relid)),
									  quote_literal_cstr(psprintf("%u", mt->query_view))),
							 SPI_OK_UTILITY);
		mt_as_extension_owner_end(&saved);
		CommandCounterIncrement();
		marker = get_relname_relid(name, mt_internal_namespace());
		mt_hidden_part_of(marker, mt->relid);
	}
	CreateComments(marker, RelationRelationId, 0, definition);
}
