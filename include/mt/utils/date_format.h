/*-------------------------------------------------------------------------
 *
 * mt/utils/date_format.h
 *	  Java DateTimeFormatter patterns of partition.fields.<col>.date-formatter.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_DATE_FORMAT_H
#define MT_DATE_FORMAT_H

#include "datatype/timestamp.h"

extern void mt_date_format_check(const char *pattern, const char *option);
extern char *mt_date_format(const char *pattern, TimestampTz t);

#endif							/* MT_DATE_FORMAT_H */
