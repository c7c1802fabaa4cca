/*-------------------------------------------------------------------------
 *
 * mt/utils/spi_plans.h
 *	  Statements the extension runs over and over, planned once per backend.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_SPI_PLANS_H
#define MT_SPI_PLANS_H

extern int	mt_spi_execute_saved(const char *sql, int nargs, Oid *argtypes, Datum *values,
								 const char *nulls, bool read_only, long count);

#endif							/* MT_SPI_PLANS_H */
