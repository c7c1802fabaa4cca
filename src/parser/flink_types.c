/*-------------------------------------------------------------------------
 *
 * src/parser/flink_types.c
 *	  Translation of Flink SQL type names into PostgreSQL's.
 *
 * A column list may name types as Flink writes them (STRING, DOUBLE,
 * TIMESTAMP_LTZ(3), BYTES ...) or as PostgreSQL does (text, double
 * precision, timestamptz ...).  The parser joins the words of a type, its
 * modifiers and any [] suffix into one lower-case string; this module
 * rewrites the Flink spellings and leaves every other spelling to
 * PostgreSQL's own type-name parser, which reports unknown types.
 * ARRAY<T>, MAP<K,V> and ROW<...> are handled by the parser itself.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "lib/stringinfo.h"

#include "mt/parser/flink_types.h"

typedef struct FlinkType
{
	const char *flink;			/* first word, lower case */
	const char *pg;				/* PostgreSQL name */
	bool		keep_modifier;	/* carry (n) / (p, s) over */
} FlinkType;

static const FlinkType flink_types[] = {
	{"string", "text", false},
	{"tinyint", "smallint", false},
	{"int", "integer", false},
	{"float", "real", false},
	{"double", "double precision", false},
	{"bytes", "bytea", false},
	{"varbinary", "bytea", false},
	{"binary", "bytea", false},
	{"timestamp_ltz", "timestamptz", true},
	{"decimal", "numeric", true},
	{"dec", "numeric", true},
};

/* Flink types without a PostgreSQL counterpart. */
static const char *const unsupported[] = {"raw", "null", "symbol", "structured", NULL};

/*
 * mt_flink_type_to_pg
 *		The PostgreSQL spelling of a type, or NULL if there is none.
 */
char *
mt_flink_type_to_pg(const char *type_text, bool array_suffix)
{
	const char *s = type_text;
	const char *word_end;
	const char *modifier = NULL;
	const char *rest;
	char	   *word;
	StringInfoData out;
	int			i;

	(void) array_suffix;		/* "[]" stays part of the text */
	for (word_end = s; *word_end && (isalnum((unsigned char) *word_end) || *word_end == '_'); word_end++)
		;
	word = pnstrdup(s, word_end - s);
	rest = word_end;
	if (*rest == '(')
	{
		const char *close = strchr(rest, ')');

		modifier = rest;
		rest = close ? close + 1 : modifier + strlen(modifier);
	}

	for (i = 0; unsupported[i]; i++)
		if (strcmp(word, unsupported[i]) == 0)
			return NULL;

	initStringInfo(&out);

	/* TIMESTAMP[(p)] WITH LOCAL TIME ZONE is Flink's timestamptz */
	if (strcmp(word, "timestamp") == 0 &&
		strncmp(rest, " with local time zone", 21) == 0)
	{
		appendStringInfoString(&out, "timestamptz");
		if (modifier)
			appendBinaryStringInfo(&out, modifier, rest - modifier);
		appendStringInfoString(&out, rest + 21);
		return out.data;
	}

	/* DOUBLE PRECISION is already PostgreSQL's */
	if (strcmp(word, "double") == 0 && strncmp(rest, " precision", 10) == 0)
		return pstrdup(type_text);

	for (i = 0; i < lengthof(flink_types); i++)
	{
		if (strcmp(word, flink_types[i].flink) != 0)
			continue;
		/* FLOAT(p) is PostgreSQL's own syntax: leave it alone */
		if (strcmp(word, "float") == 0 && modifier)
			break;
		appendStringInfoString(&out, flink_types[i].pg);
		if (modifier && flink_types[i].keep_modifier)
			appendBinaryStringInfo(&out, modifier, rest - modifier);
		appendStringInfoString(&out, rest);
		return out.data;
	}
	return pstrdup(type_text);
}
