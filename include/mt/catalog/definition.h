/*-------------------------------------------------------------------------
 *
 * mt/catalog/definition.h
 *	  The parts of a materialized table's definition that its catalog row
 *	  keeps, as the parser gives them (mt/parser/ddl_parser.h) and the
 *	  catalog stores them (mt/catalog/catalog.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CATALOG_DEFINITION_H
#define MT_CATALOG_DEFINITION_H

#include "nodes/pg_list.h"

typedef enum MtRefreshMode
{
	MT_MODE_UNSET = 0,
	MT_MODE_CONTINUOUS = 'C',
	MT_MODE_FULL = 'F'
} MtRefreshMode;

typedef enum MtFreshnessUnit
{
	MT_UNIT_SECOND,
	MT_UNIT_MINUTE,
	MT_UNIT_HOUR,
	MT_UNIT_DAY
} MtFreshnessUnit;

/* FRESHNESS = INTERVAL ... as written */
typedef struct MtFreshness
{
	int64		value;
	MtFreshnessUnit unit;
	int			location;
} MtFreshness;

typedef enum MtDistributionKind
{
	MT_DISTRIBUTION_DEFAULT,	/* DISTRIBUTED BY (cols): hash */
	MT_DISTRIBUTION_HASH,
	MT_DISTRIBUTION_RANGE
} MtDistributionKind;

typedef struct MtDistribution
{
	MtDistributionKind kind;
	List	   *columns;		/* list of String; NIL for DISTRIBUTED INTO n */
	int			buckets;		/* 0 when INTO n BUCKETS was omitted */
	List	   *bounds;			/* RANGE: lower bounds of buckets 1..n-1, each a
								 * List of char * (computed at CREATE) */
	int			location;
} MtDistribution;

/* A 'key' = 'value' pair of WITH (...) or a partition spec. */
typedef struct MtOption
{
	char	   *key;
	char	   *value;
	int			location;
} MtOption;

#endif							/* MT_CATALOG_DEFINITION_H */
