/*-------------------------------------------------------------------------
 *
 * src/utils/settings.c
 *	  The extension's settings (GUCs) and their current values.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "utils/guc.h"

#include "mt/utils/settings.h"

int			mt_freshness_threshold = 30 * 60;
int			mt_default_freshness_continuous = 3 * 60;
int			mt_default_freshness_full = 60 * 60;
int			mt_history_retention = 7 * 24 * 60 * 60;
bool		mt_conversion_from_table = false;
bool		mt_scheduled_refreshes = true;

/*
 * mt_settings_define
 *		Define the settings; _PG_init, when loaded at server start.
 */
void
mt_settings_define(void)
{
	DefineCustomIntVariable("materialized_table.freshness_threshold",
							"Freshness below which a table without REFRESH_MODE is refreshed continuously.",
							"At or above it the table is refreshed in FULL mode on a schedule.",
							&mt_freshness_threshold,
							30 * 60, 1, 24 * 60 * 60,
							PGC_USERSET, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("materialized_table.default_freshness_continuous",
							"Freshness of a CONTINUOUS table created without FRESHNESS.",
							NULL,
							&mt_default_freshness_continuous,
							3 * 60, 1, 24 * 60 * 60,
							PGC_USERSET, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("materialized_table.default_freshness_full",
							"Freshness of a FULL table created without FRESHNESS.",
							NULL,
							&mt_default_freshness_full,
							60 * 60, 1, 24 * 60 * 60,
							PGC_USERSET, GUC_UNIT_S,
							NULL, NULL, NULL);
	DefineCustomIntVariable("materialized_table.history_retention",
							"How long refresh history is kept.",
							"0 keeps it forever.",
							&mt_history_retention,
							7 * 24 * 60 * 60, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_S,
							NULL, NULL, NULL);
	/* one way, and a change of what a table is: the administrator's choice */
	DefineCustomBoolVariable("materialized_table.conversion_from_table",
							 "Lets CREATE OR ALTER MATERIALIZED TABLE convert an existing table into a materialized table in place.",
							 "As Flink's table.materialized-table.conversion-from-table.enabled.",
							 &mt_conversion_from_table,
							 false,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	/* a database's setting: pg_cron runs each job in a new session */
	DefineCustomBoolVariable("materialized_table.scheduled_refreshes",
							 "Whether the runs of FULL tables' pg_cron jobs refresh them.",
							 "Off, a job's run does nothing, so that a database's tests do not depend on the clock; scheduled_refresh() called with a trigger time still refreshes.",
							 &mt_scheduled_refreshes,
							 true,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	MarkGUCPrefixReserved("materialized_table");
}
