/*-------------------------------------------------------------------------
 *
 * mt/continuous/key_columns.h
 *	  The key columns of a source's use (MtSourceUse): narrowed to its
 *	  primary key, or expressions over its columns (GROUP BY
 *	  date_trunc('hour', ts), DISTINCT lower(name)).
 *
 * Of expressions, a changed row of that source names the expression's value: decoding
 * keeps the columns it reads (MtSourceUse.attnums), and the cycle computes
 * the values from them (MtSourceUse.key_sql), as the table's owner.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_CONTINUOUS_KEY_COLUMNS_H
#define MT_CONTINUOUS_KEY_COLUMNS_H

#include "nodes/parsenodes.h"

#include "mt/continuous/analysis.h"
#include "mt/refresh/refresh.h"

extern void mt_narrow_to_primary_key(MtSourceUse *use);
extern void mt_coarsen_key_uses(MtAnalysis *a);
extern bool mt_keyable_equality(OpExpr *op);
extern char *mt_lookup_sql(MtSourceUse *keyed, AttrNumber attno);
extern bool mt_full_join_uses(Query *q, List *names, MtAnalysis *a);
extern int	mt_expression_key_rtindex(Query *q, bool *nullable, Node *expr);
extern void mt_expression_keys_use(MtSourceUse *use, int rtindex, List *exprs, List *names);
extern List *mt_expression_key_values(MtSourceUse *use, Oid owner, List *tuples, bool *failed);
extern TargetEntry *mt_keyed_in_output(SubLink *sl);
extern void mt_keys_pushed_note(MtAnalysis *a, Query *q);
extern const char *mt_keys_pushed_sql(MtAnalysis *a, List *filter, Oid relid);

#endif							/* MT_CONTINUOUS_KEY_COLUMNS_H */
