/*-------------------------------------------------------------------------
 *
 * mt/catalog/freshness.h
 *	  FRESHNESS and REFRESH_MODE: validation, defaults, mode inference and
 *	  the cron schedule a FULL table's freshness turns into.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_FRESHNESS_H
#define MT_FRESHNESS_H

#include "mt/catalog/catalog.h"
#include "mt/catalog/definition.h"

extern int64 mt_freshness_seconds(int value, MtFreshnessUnit unit);
extern void mt_freshness_resolve(MtFreshness *given, MtRefreshMode given_mode,
								 const char *source, int mode_location,
								 int *value, MtFreshnessUnit *unit,
								 MtRefreshMode *mode);
extern void mt_freshness_check_full(int value, MtFreshnessUnit unit,
									const char *source, int location);
extern char *mt_freshness_cron(int value, MtFreshnessUnit unit);
extern char *mt_freshness_text(int value, MtFreshnessUnit unit);
extern bool mt_table_has_primary_key(Oid relid);
extern void mt_freshness_apply_rules(const char *source, MtTable *old, MtTable *mt,
									 int location);

#endif							/* MT_FRESHNESS_H */
