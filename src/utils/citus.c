/*-------------------------------------------------------------------------
 *
 * src/utils/citus.c
 *	  Citus in this database.  A table Citus distributes keeps its rows in
 *	  shards on the worker nodes: the coordinator's table of that name is
 *	  a shell that only Citus's planner and executor read and write, and
 *	  its own logical decoding sees none of the shards' changes.  What
 *	  Citus knows of a table is in its catalog, pg_dist_partition, which
 *	  exists only where the extension is installed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "mt/utils/citus.h"
#include "mt/utils/extension.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/sql.h"

bool
mt_citus_installed(void)
{
	return OidIsValid(get_extension_oid("citus", true));
}

/*
 * One row of pg_dist_partition: the method ('h' hash, 'n' none: reference
 * and Citus local tables, 'a' append, 'r' range), the distribution
 * column's name and the table's shard count.  False if Citus does not
 * know the table.
 */
static bool
dist_partition(Oid relid, char *method, char **column, int *shards)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	bool		found = false;
	bool		isnull;

	if (!mt_citus_installed())
		return false;
	/* not read-only: a table distributed earlier in this transaction counts */
	SPI_connect();
	if (mt_spi_execute_saved("SELECT p.partmethod::pg_catalog.text, "
							 "pg_catalog.column_to_column_name(p.logicalrelid, p.partkey), "
							 "(SELECT pg_catalog.count(*) FROM pg_catalog.pg_dist_shard s "
							 "WHERE s.logicalrelid OPERATOR(pg_catalog.=) p.logicalrelid)::pg_catalog.int4 "
							 "FROM pg_catalog.pg_dist_partition p "
							 "WHERE p.logicalrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass",
							 1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_partition");
	if (SPI_processed == 1)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *m = SPI_getvalue(tup, desc, 1);
		char	   *c = SPI_getvalue(tup, desc, 2);

		found = true;
		*method = m ? m[0] : 'n';
		*column = c ? SPI_palloc(strlen(c) + 1) : NULL;
		if (c)
			strcpy(*column, c);
		*shards = DatumGetInt32(SPI_getbinval(tup, desc, 3, &isnull));
	}
	SPI_finish();
	return found;
}

MtCitusKind
mt_citus_table_kind(Oid relid)
{
	char		method;
	char	   *column;
	int			shards;

	if (!dist_partition(relid, &method, &column, &shards))
		return MT_CITUS_NONE;
	switch (method)
	{
		case 'h':
			return MT_CITUS_DISTRIBUTED;
		case 'n':
			return MT_CITUS_REFERENCE;
		default:
			return MT_CITUS_OTHER;
	}
}

/*
 * mt_citus_distribution_column
 *		NULL unless relid is hash-distributed.
 */
char *
mt_citus_distribution_column(Oid relid, int *shard_count)
{
	char		method;
	char	   *column;

	if (!dist_partition(relid, &method, &column, shard_count) || method != 'h')
		return NULL;
	return column;
}

/*
 * mt_citus_distribute
 *		Make relid (empty) a hash-distributed table: co-located with
 *		colocate_with when it is valid (Citus then takes that table's
 *		shard count, which the caller has checked), else in shard_count
 *		shards.  Citus creates the shards on the workers under two-phase
 *		commit, so the transaction that creates the table still decides.
 */
void
mt_citus_distribute(Oid relid, const char *column, int shard_count, Oid colocate_with)
{
	Oid			argtypes[4] = {OIDOID, TEXTOID, TEXTOID, INT4OID};
	Datum		values[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};

	values[0] = ObjectIdGetDatum(relid);
	/* Citus takes the column's name as it is, not an identifier to parse */
	values[1] = CStringGetTextDatum(column);
	if (OidIsValid(colocate_with))
	{
		values[2] = CStringGetTextDatum(mt_qualified_name(colocate_with));
		nulls[3] = 'n';
		values[3] = (Datum) 0;
	}
	else
	{
		values[2] = CStringGetTextDatum("default");
		values[3] = Int32GetDatum(shard_count);
	}
	SPI_connect();
	if (SPI_execute_with_args("SELECT pg_catalog.create_distributed_table($1::pg_catalog.regclass, "
							  "$2, 'hash', $3, $4)",
							  4, argtypes, values, nulls, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not distribute \"%s\"", get_rel_name(relid));
	SPI_finish();
}

/* The co-location group of a distributed table, 0 if none. */
int
mt_citus_colocation_id(Oid relid)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	int			id = 0;

	if (!mt_citus_installed())
		return 0;
	SPI_connect();
	if (mt_spi_execute_saved("SELECT colocationid FROM pg_catalog.pg_dist_partition"
							 " WHERE logicalrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass",
							 1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_dist_partition");
	if (SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			id = DatumGetInt32(d);
	}
	SPI_finish();
	return id;
}

/*
 * mt_citus_local_shard_access
 *		Until AtEOXact_GUC(true, the level returned): this session works on
 *		the shards of this node as on its own tables.  Citus otherwise
 *		hides them from catalog queries, refuses to change them by hand,
 *		and sends the DDL run here on to the other nodes.
 */
int
mt_citus_local_shard_access(void)
{
	int			nestlevel = NewGUCNestLevel();

	(void) set_config_option("citus.override_table_visibility", "off", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("citus.enable_manual_changes_to_shards", "on", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("citus.enable_ddl_propagation", "off", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	return nestlevel;
}

/* Is relid, on this node, a shard of a table Citus distributes? */
bool
mt_citus_is_shard(Oid relid)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	bool		shard = false;

	if (!mt_citus_installed())
		return false;
	SPI_connect();
	if (mt_spi_execute_saved("SELECT pg_catalog.relation_is_a_known_shard($1::pg_catalog.regclass)",
							 1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not ask Citus whether \"%s\" is a shard", get_rel_name(relid));
	if (SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		shard = !isnull && DatumGetBool(d);
	}
	SPI_finish();
	return shard;
}

/*
 * mt_citus_count_as_of
 *		Read a node's answer "<count> [<epoch>]" (the epoch of the time its
 *		tables are fresh as of, when it has any): *count, and *as_of moved
 *		back to that time if it is older (0 is none yet).  False when the
 *		answer is not one.
 */
bool
mt_citus_count_as_of(const char *answer, int *count, TimestampTz *as_of)
{
	double		epoch;
	int			fields = sscanf(answer, "%d %lf", count, &epoch);

	if (fields < 1)
		return false;
	if (fields == 2)
	{
		TimestampTz t = (TimestampTz) ((epoch - ((POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY)) * USECS_PER_SEC);

		if (*as_of == 0 || t < *as_of)
			*as_of = t;
	}
	return true;
}
