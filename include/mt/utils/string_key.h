/*-------------------------------------------------------------------------
 *
 * mt/utils/string_key.h
 *	  dynahash tables keyed by a tuple of nullable strings
 *	  (src/utils/string_key.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_UTILS_STRING_KEY_H
#define MT_UTILS_STRING_KEY_H

#include "utils/hsearch.h"

typedef struct MtStringKey
{
	int			tag;			/* e.g. a key family; 0 when unused */
	int			n;
	char	  **values;			/* n strings, NULL for a null value */
} MtStringKey;

extern HTAB *mt_string_key_create(const char *name, long nelem, Size entrysize,
								  MemoryContext cxt);
extern void mt_string_key_keep(MtStringKey *key);

#endif							/* MT_UTILS_STRING_KEY_H */
