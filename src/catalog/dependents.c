/*-------------------------------------------------------------------------
 *
 * src/catalog/dependents.c
 *	  Questions about materialized tables that join their catalog with
 *	  PostgreSQL's dependencies: what a query reads through views and other
 *	  materialized tables, which table's query reads a column, which
 *	  materialized tables a DROP took.  One statement each, run as the
 *	  extension's owner (the catalog is private to it).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"

#include "mt/catalog/dependents.h"
#include "mt/materialized_table.h"
#include "mt/utils/spi_plans.h"

/* the first column of the one row of a query with two parameters, or 0 */
static Datum
first_value(const char *sql, Oid type1, Datum value1, Oid type2, Datum value2)
{
	Oid			types[2] = {type1, type2};
	Datum		values[2] = {value1, value2};
	Datum		result = (Datum) 0;
	MtSavedUser saved;

	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (SPI_execute_with_args(sql, 2, types, values, NULL, false, 1) == SPI_OK_SELECT &&
		SPI_processed == 1)
	{
		bool		isnull;

		result = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (isnull)
			result = (Datum) 0;
	}
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	return result;
}

/*
 * mt_catalog_query_reads
 *		Does the query view viewid read relid (or one of its partitions),
 *		directly or through views and the queries of materialized tables?
 */
bool
mt_catalog_query_reads(Oid viewid, Oid relid)
{
	return DatumGetBool(first_value("WITH RECURSIVE reads(rel) AS ("
									"  SELECT $1::pg_catalog.oid"
									"  UNION"
									"  SELECT d.refobjid"
									"    FROM reads"
									"    JOIN pg_catalog.pg_rewrite r"
									"      ON r.ev_class = reads.rel"
									"      OR r.ev_class = (SELECT t.query_view::pg_catalog.oid"
									"                         FROM materialized_table_internal.mt_table t"
									"                        WHERE t.relid::pg_catalog.oid = reads.rel)"
									"    JOIN pg_catalog.pg_depend d"
									"      ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass"
									"     AND d.objid = r.oid"
									"     AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass"
									"     AND d.refobjid <> r.ev_class"
									") "
									"SELECT EXISTS (SELECT FROM reads WHERE rel = $2"
									"   OR rel IN (SELECT relid FROM pg_catalog.pg_partition_tree($2)))",
									OIDOID, ObjectIdGetDatum(viewid),
									OIDOID, ObjectIdGetDatum(relid)));
}

/*
 * mt_catalog_column_reader
 *		A materialized table whose query reads column attnum of relid (the
 *		lowest OID of them), or InvalidOid.
 */
Oid
mt_catalog_column_reader(Oid relid, AttrNumber attnum)
{
	return DatumGetObjectId(first_value("SELECT t.relid::pg_catalog.oid"
										"  FROM pg_catalog.pg_depend d"
										"  JOIN pg_catalog.pg_rewrite r ON r.oid = d.objid"
										"  JOIN materialized_table_internal.mt_table t"
										"    ON t.query_view::pg_catalog.oid = r.ev_class"
										" WHERE d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass"
										"   AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass"
										"   AND d.refobjid = $1 AND d.refobjsubid = $2"
										" ORDER BY 1 LIMIT 1",
										OIDOID, ObjectIdGetDatum(relid),
										INT2OID, Int16GetDatum(attnum)));
}

/*
 * mt_catalog_dropped_tables
 *		In an sql_drop event trigger: the materialized tables among the
 *		dropped objects, in OID order.
 */
List *
mt_catalog_dropped_tables(void)
{
	MtSavedUser saved;
	List	   *result;

	mt_as_extension_owner_begin(&saved);
	result = mt_spi_oids("SELECT t.relid::pg_catalog.oid"
						 "  FROM materialized_table_internal.mt_table t"
						 "  JOIN pg_catalog.pg_event_trigger_dropped_objects() d"
						 "    ON d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass"
						 "   AND d.objid = t.relid::pg_catalog.oid AND d.objsubid = 0"
						 " ORDER BY 1",
						 InvalidOid);
	mt_as_extension_owner_end(&saved);
	return result;
}
