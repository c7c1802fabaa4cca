/*-------------------------------------------------------------------------
 *
 * src/catalog/freshness.c
 *	  FRESHNESS and REFRESH_MODE, as Flink defines them.
 *
 * A FULL table is recomputed on a cron schedule derived from its
 * freshness, so only freshness values that divide their unit's range can
 * be expressed: 1, 2, 3, 4, 5, 6, 10, 12, 15, 20 or 30 seconds or minutes;
 * 1, 2, 3, 4, 6, 8 or 12 hours; 1 day.  Without REFRESH_MODE, a freshness
 * below materialized_table.freshness_threshold means CONTINUOUS.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "access/table.h"

#include "mt/catalog/freshness.h"
#include "mt/materialized_table.h"

static const int minute_divisors[] = {1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 0};
static const int hour_divisors[] = {1, 2, 3, 4, 6, 8, 12, 0};

int64
mt_freshness_seconds(int value, MtFreshnessUnit unit)
{
	switch (unit)
	{
		case MT_UNIT_SECOND:
			return value;
		case MT_UNIT_MINUTE:
			return (int64) value * 60;
		case MT_UNIT_HOUR:
			return (int64) value * 3600;
		case MT_UNIT_DAY:
			return (int64) value * 86400;
	}
	return value;
}

/* "INTERVAL '10' MINUTE" */
char *
mt_freshness_text(int value, MtFreshnessUnit unit)
{
	return psprintf("INTERVAL '%d' %s", value, mt_freshness_unit_name(unit));
}

/* A default freshness (in seconds) as a value in the largest unit that fits. */
static void
split_seconds(int seconds, int *value, MtFreshnessUnit *unit)
{
	if (seconds % 86400 == 0)
		*value = seconds / 86400, *unit = MT_UNIT_DAY;
	else if (seconds % 3600 == 0)
		*value = seconds / 3600, *unit = MT_UNIT_HOUR;
	else if (seconds % 60 == 0)
		*value = seconds / 60, *unit = MT_UNIT_MINUTE;
	else
		*value = seconds, *unit = MT_UNIT_SECOND;
}

static bool
in_list(const int *list, int value)
{
	for (; *list; list++)
		if (*list == value)
			return true;
	return false;
}

/*
 * check_full
 *		Can this freshness be a FULL table's cron schedule?  table names
 *		the table when it exists already (NULL at CREATE, whose statement
 *		names it).
 */
static void
check_full(int value, MtFreshnessUnit unit, const char *table, const char *source,
		   int location)
{
	const char *detail = NULL;

	switch (unit)
	{
		case MT_UNIT_SECOND:
		case MT_UNIT_MINUTE:
			if (!in_list(minute_divisors, value))
				detail = unit == MT_UNIT_SECOND ?
					"In FULL refresh mode a freshness in seconds must divide a minute: 1, 2, 3, 4, 5, 6, 10, 12, 15, 20 or 30." :
					"In FULL refresh mode a freshness in minutes must divide an hour: 1, 2, 3, 4, 5, 6, 10, 12, 15, 20 or 30.";
			break;
		case MT_UNIT_HOUR:
			if (!in_list(hour_divisors, value))
				detail = "In FULL refresh mode a freshness in hours must divide a day: 1, 2, 3, 4, 6, 8 or 12.";
			break;
		case MT_UNIT_DAY:
			if (value != 1)
				detail = "In FULL refresh mode a freshness in days must be 1.";
			break;
	}
	if (detail && table)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("freshness %s of materialized table \"%s\" cannot be expressed as a schedule in FULL refresh mode",
						mt_freshness_text(value, unit), table),
				 errdetail("%s", detail),
				 mt_errposition(source, location)));
	if (detail)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("freshness %s cannot be expressed as a schedule in FULL refresh mode",
						mt_freshness_text(value, unit)),
				 errdetail("%s", detail),
				 mt_errposition(source, location)));
}

void
mt_freshness_check_full(int value, MtFreshnessUnit unit, const char *source, int location)
{
	check_full(value, unit, NULL, source, location);
}

/*
 * mt_freshness_resolve
 *		The freshness and refresh mode of a new table, by Flink's rules:
 *		a given REFRESH_MODE wins; otherwise the freshness decides; with
 *		neither, CONTINUOUS at its default freshness.
 */
void
mt_freshness_resolve(MtFreshness *given, MtRefreshMode given_mode,
					 const char *source, int mode_location,
					 int *value, MtFreshnessUnit *unit, MtRefreshMode *mode)
{
	if (given)
	{
		*value = (int) given->value;
		*unit = given->unit;
		if (given_mode != MT_MODE_UNSET)
			*mode = given_mode;
		else
			*mode = mt_freshness_seconds(*value, *unit) < mt_freshness_threshold ?
				MT_MODE_CONTINUOUS : MT_MODE_FULL;
	}
	else
	{
		*mode = given_mode != MT_MODE_UNSET ? given_mode : MT_MODE_CONTINUOUS;
		split_seconds(*mode == MT_MODE_FULL ? mt_default_freshness_full :
					  mt_default_freshness_continuous, value, unit);
	}
	if (*mode == MT_MODE_FULL)
		mt_freshness_check_full(*value, *unit, source,
								given ? given->location : mode_location);
}

/*
 * mt_freshness_cron
 *		The cron schedule of a FULL freshness, or NULL for seconds (pg_cron
 *		1.4 has no second-level schedules).
 */
char *
mt_freshness_cron(int value, MtFreshnessUnit unit)
{
	switch (unit)
	{
		case MT_UNIT_SECOND:
			return NULL;
		case MT_UNIT_MINUTE:
			return value == 1 ? pstrdup("* * * * *") : psprintf("*/%d * * * *", value);
		case MT_UNIT_HOUR:
			return value == 1 ? pstrdup("0 * * * *") : psprintf("0 */%d * * *", value);
		case MT_UNIT_DAY:
			return pstrdup("0 0 * * *");
	}
	return NULL;
}

bool
mt_table_has_primary_key(Oid relid)
{
	Relation	rel = table_open(relid, AccessShareLock);
	bool		result = OidIsValid(RelationGetPrimaryKeyIndex(rel));

	table_close(rel, AccessShareLock);
	return result;
}

/*
 * mt_freshness_apply_rules
 *		The rules Realtime Compute sets for changing a table's freshness:
 *		at most one day; crossing materialized_table.freshness_threshold
 *		switches the refresh mode, which only a table with a primary key
 *		may do (its rows can be matched across the switch); FULL values
 *		must remain cron-expressible.  mt is the table with the new
 *		freshness; its refresh mode is updated here.  The rule between a
 *		table and the tables it reads is the lineage's
 *		(mt_lineage_check_freshness).
 */
void
mt_freshness_apply_rules(const char *source, MtTable *old, MtTable *mt, int location)
{
	int64		old_seconds = mt_freshness_seconds(old->freshness_value, old->freshness_unit);
	int64		new_seconds = mt_freshness_seconds(mt->freshness_value, mt->freshness_unit);
	bool		old_continuous = old_seconds < mt_freshness_threshold;
	bool		new_continuous = new_seconds < mt_freshness_threshold;

	if (new_seconds > 86400)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("freshness %s of materialized table \"%s\" is too long",
						mt_freshness_text(mt->freshness_value, mt->freshness_unit),
						get_rel_name(mt->relid)),
				 errdetail("The freshness of a materialized table can be changed to at most one day."),
				 mt_errposition(source, location)));

	if (old_continuous != new_continuous)
	{
		MtRefreshMode mode = new_continuous ? MT_MODE_CONTINUOUS : MT_MODE_FULL;

		if (mode != old->refresh_mode && !mt_table_has_primary_key(mt->relid))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("freshness %s would switch materialized table \"%s\" from %s to %s refresh mode",
							mt_freshness_text(mt->freshness_value, mt->freshness_unit),
							get_rel_name(mt->relid), mt_mode_name(old->refresh_mode),
							mt_mode_name(mode)),
					 errdetail("A table without a primary key cannot cross materialized_table.freshness_threshold (%d seconds).",
							   mt_freshness_threshold),
					 errhint("Keep the freshness on the same side of the threshold, or declare a primary key first."),
					 mt_errposition(source, location)));
		mt->refresh_mode = mode;
	}
	if (mt->refresh_mode == MT_MODE_FULL)
		check_full(mt->freshness_value, mt->freshness_unit, get_rel_name(mt->relid),
				   source, location);
}
