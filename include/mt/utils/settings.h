/*-------------------------------------------------------------------------
 *
 * mt/utils/settings.h
 *	  The extension's settings (src/utils/settings.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_UTILS_SETTINGS_H
#define MT_UTILS_SETTINGS_H

extern int	mt_freshness_threshold;			/* seconds */
extern int	mt_default_freshness_continuous;	/* seconds */
extern int	mt_default_freshness_full;		/* seconds */
extern int	mt_history_retention;			/* seconds; 0 keeps everything */
extern bool mt_conversion_from_table;		/* CREATE OR ALTER converts a table */
extern bool mt_scheduled_refreshes;		/* pg_cron's runs of jobs refresh */

extern void mt_settings_define(void);

#endif							/* MT_UTILS_SETTINGS_H */
