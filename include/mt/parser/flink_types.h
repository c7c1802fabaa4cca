/*-------------------------------------------------------------------------
 *
 * mt/parser/flink_types.h
 *	  Translation of Flink SQL type names into PostgreSQL's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_FLINK_TYPES_H
#define MT_FLINK_TYPES_H

extern char *mt_flink_type_to_pg(const char *type_text, bool array_suffix);

#endif							/* MT_FLINK_TYPES_H */
