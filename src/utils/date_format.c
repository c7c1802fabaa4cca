/*-------------------------------------------------------------------------
 *
 * src/utils/date_format.c
 *	  Formatting a schedule time with a Java DateTimeFormatter pattern.
 *
 * Flink names the partition a scheduled run refreshes by formatting the
 * run's schedule time with 'partition.fields.<col>.date-formatter'.  The
 * letters supported are those that make sense for a partition value:
 * yyyy (or yy, uuuu), MM (or M), dd (or d), HH (or H), mm (or m), ss (or
 * s).  Text in single quotes is literal ('' is a quote); any other
 * character that is not a letter stands for itself.  The time is broken
 * down in the session's time zone.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "mt/utils/date_format.h"

/* Walk the pattern; with tm == NULL only validate it. */
static char *
format_or_check(const char *pattern, const char *option, struct pg_tm *tm)
{
	StringInfoData out;
	const char *p = pattern;

	initStringInfo(&out);
	while (*p)
	{
		char		c = *p;
		int			count = 0;
		int			value = 0;
		int			width;

		if (c == '\'')
		{
			p++;
			if (*p == '\'')
			{
				appendStringInfoChar(&out, '\'');
				p++;
				continue;
			}
			while (*p && !(*p == '\'' && p[1] != '\''))
			{
				if (*p == '\'')
					p++;		/* '' inside quotes */
				appendStringInfoChar(&out, *p++);
			}
			if (*p != '\'')
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid date format \"%s\" in option \"%s\"", pattern, option),
						 errdetail("A quoted literal is not closed.")));
			p++;
			continue;
		}
		if (!isalpha((unsigned char) c))
		{
			appendStringInfoChar(&out, c);
			p++;
			continue;
		}
		while (p[count] == c)
			count++;
		p += count;
		width = count;
		switch (c)
		{
			case 'y':
			case 'u':
				value = tm ? tm->tm_year : 0;
				if (count == 2)
					value = value % 100;
				else if (count < 4)
					width = 1;
				break;
			case 'M':
				value = tm ? tm->tm_mon : 0;
				break;
			case 'd':
				value = tm ? tm->tm_mday : 0;
				break;
			case 'H':
				value = tm ? tm->tm_hour : 0;
				break;
			case 'm':
				value = tm ? tm->tm_min : 0;
				break;
			case 's':
				value = tm ? tm->tm_sec : 0;
				break;
			default:
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid date format \"%s\" in option \"%s\"", pattern, option),
						 errdetail("The pattern letter \"%c\" is not supported.", c),
						 errhint("Use yyyy, MM, dd, HH, mm and ss; quote literal letters, as in 'T'.")));
		}
		if (c != 'y' && c != 'u' && count > 2)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid date format \"%s\" in option \"%s\"", pattern, option),
					 errdetail("\"%.*s\" has too many letters; use one or two.", count, p - count)));
		appendStringInfo(&out, "%0*d", width, value);
	}
	return out.data;
}

void
mt_date_format_check(const char *pattern, const char *option)
{
	if (*pattern == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"%s\" must not be empty", option)));
	(void) format_or_check(pattern, option, NULL);
}

/* The schedule time t formatted with pattern, in the session's time zone. */
char *
mt_date_format(const char *pattern, TimestampTz t)
{
	struct pg_tm tm;
	fsec_t		fsec;
	int			tz;

	if (timestamp2tm(t, &tz, &tm, &fsec, NULL, NULL) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range")));
	return format_or_check(pattern, "date-formatter", &tm);
}
