/*-------------------------------------------------------------------------
 *
 * mt/utils/spi_plans.h
 *	  Statements the extension runs over and over, planned once per backend.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_SPI_PLANS_H
#define MT_SPI_PLANS_H

#include "nodes/nodes.h"
#include "nodes/params.h"

extern int	mt_spi_execute_saved(const char *sql, int nargs, Oid *argtypes, Datum *values,
								 const char *nulls, bool read_only, long count);

/* run generated SQL expecting result code expected; any other is an error */
extern void mt_spi_exec(const char *sql, int expected);
/* the OIDs in the first column of a query's rows; arg is $1 when valid */
extern List *mt_spi_oids(const char *sql, Oid arg);
/* the same as mt_spi_exec, connected, and past the guards */
extern void mt_spi_exec_internal(const char *sql, int expected);
/* one statement on the extension's private tables, as its owner */
extern void mt_spi_run_as_extension_owner(const char *sql, bool saved, int nargs, Oid *argtypes,
										  Datum *values, const char *nulls, int expected,
										  const char *failure);
extern int64 mt_spi_int8_as_extension_owner(const char *sql, const char *failure);
/* insert the last SPI result's rows into a table (a qualified, quoted name) */
extern void mt_spi_insert_result(const char *table);

/* the planner's estimate of a statement's cost, with its parameters' values */
extern Cost mt_estimated_cost(const char *sql, int nparams, Oid *argtypes, ParamListInfo params);

#endif							/* MT_SPI_PLANS_H */
