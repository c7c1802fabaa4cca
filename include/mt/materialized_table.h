/*-------------------------------------------------------------------------
 *
 * mt/materialized_table.h
 *	  The vocabulary of the sources, and the utilities every layer uses.
 *
 * Vocabulary used throughout the sources:
 *	  MT			a materialized table: an ordinary heap table (or a
 *					partitioned table) whose content is its query's result
 *	  query view	the hidden view in MT_INTERNAL_SCHEMA holding the MT's
 *					defining query; PostgreSQL tracks the MT's sources
 *					through it and refreshes read from it
 *	  refresh		any write of an MT's content; only the refresh engine
 *					(src/refresh/) performs one
 *
 * The layers, top down (docs/architecture.md): the entry point
 * (src/materialized_table.c), hooks/ and bgw/, commands/ and parser/,
 * lifecycle/, scheduler/ and continuous/, refresh/, catalog/, utils/.
 * A file calls only files of its own layer or of layers below it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MATERIALIZED_TABLE_H
#define MATERIALIZED_TABLE_H

#include "postgres.h"

#include "mt/utils/extension.h"
#include "mt/utils/settings.h"
#include "mt/utils/subxact.h"

#endif							/* MATERIALIZED_TABLE_H */
