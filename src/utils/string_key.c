/*-------------------------------------------------------------------------
 *
 * src/utils/string_key.c
 *	  dynahash tables keyed by a tuple of nullable strings (the text of a
 *	  row's key or group values) and a small tag.
 *
 * An entry starts with its MtStringKey.  A lookup's key points to the
 * caller's strings; when HASH_ENTER adds the entry, the caller copies them
 * (mt_string_key_keep) so that the entry outlives the lookup.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"

#include "mt/utils/string_key.h"

static uint32
string_key_hash(const void *key, Size keysize)
{
	const MtStringKey *k = key;
	uint32		hash = hash_uint32((uint32) k->tag);

	for (int i = 0; i < k->n; i++)
		hash = hash_combine(hash, k->values[i] ?
							hash_bytes((const unsigned char *) k->values[i], strlen(k->values[i])) :
							0x3c6ef372);
	return hash;
}

static int
string_key_match(const void *key1, const void *key2, Size keysize)
{
	const MtStringKey *a = key1;
	const MtStringKey *b = key2;

	if (a->tag != b->tag || a->n != b->n)
		return 1;
	for (int i = 0; i < a->n; i++)
	{
		if ((a->values[i] == NULL) != (b->values[i] == NULL))
			return 1;
		if (a->values[i] && strcmp(a->values[i], b->values[i]) != 0)
			return 1;
	}
	return 0;
}

/*
 * mt_string_key_create
 *		A hash table of entries of entrysize bytes, each starting with its
 *		MtStringKey, in memory context cxt.
 */
HTAB *
mt_string_key_create(const char *name, long nelem, Size entrysize, MemoryContext cxt)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(MtStringKey);
	ctl.entrysize = entrysize;
	ctl.hash = string_key_hash;
	ctl.match = string_key_match;
	ctl.hcxt = cxt;
	return hash_create(name, nelem, &ctl, HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
}

/*
 * mt_string_key_keep
 *		A new entry's key gets copies of its strings, in the current memory
 *		context (the same strings: its hash and equality do not change).
 */
void
mt_string_key_keep(MtStringKey *key)
{
	char	  **values = palloc(sizeof(char *) * (key->n + 1));

	for (int i = 0; i < key->n; i++)
		values[i] = key->values[i] ? pstrdup(key->values[i]) : NULL;
	key->values = values;
}
