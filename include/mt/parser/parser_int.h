/*-------------------------------------------------------------------------
 *
 * mt/parser/parser_int.h
 *	  The token stream shared by the files of the parser (not for others).
 *
 * The parser of src/parser/ walks the tokens of PostgreSQL's core scanner
 * by recursive descent:
 *
 *	  tokens.c		 the token stream: tokenizing, words, identifiers, names
 *	  embedded_sql.c SQL handed to PostgreSQL's raw parser: the query after
 *					 AS, the expressions of computed columns and watermarks
 *	  clauses.c		 the column list and the clauses of CREATE and ALTER
 *	  ddl_parser.c	 the statements, and the entry points of ddl_parser.h
 *
 * each using only those above it.  Looking at the current token and
 * stepping over it never fails, and is inlined here; everything that can
 * raise an error is a function of one of those files.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_PARSER_INT_H
#define MT_PARSER_INT_H

#include "parser/scanner.h"
#include "parser/gram.h"

#include "mt/parser/ddl_parser.h"

typedef struct MtToken
{
	int			type;			/* core scanner token code; 0 at end */
	char	   *str;			/* IDENT, SCONST, FCONST, Op ... value */
	const char *keyword;		/* canonical keyword text, or NULL */
	int			ival;			/* ICONST value */
	int			location;		/* byte offset */
	bool		quoted;			/* double-quoted identifier */
} MtToken;

typedef struct MtParser
{
	const char *source;			/* text as the user wrote it */
	char	   *buf;			/* same text, backticks rewritten */
	int			buflen;
	MtToken    *toks;
	int			ntoks;
	int			pos;			/* current token */
	int			stmt_end;		/* index of the token ending this statement */
	int			gt_used;		/* '>' already taken from the current Op */
	bool		in_alter;		/* column positions are allowed */
} MtParser;

/* Items of a column list, or of ALTER ... ADD/MODIFY (...). */
typedef struct MtElements
{
	List	   *columns;
	MtPrimaryKey *primary_key;
	MtWatermark *watermark;
} MtElements;

/* ---------------------------------------------------------------------
 * Token helpers
 * ---------------------------------------------------------------------
 */

static inline MtToken *
cur(MtParser *p)
{
	return &p->toks[p->pos];
}

static inline MtToken *
peek(MtParser *p, int ahead)
{
	int			i = p->pos + ahead;

	if (i > p->stmt_end)
		i = p->stmt_end;
	return &p->toks[i];
}

static inline bool
at_end(MtParser *p)
{
	return p->pos >= p->stmt_end;
}

/* Is the current token the last one of the statement? */
static inline bool
at_last(MtParser *p)
{
	return p->pos + 1 >= p->stmt_end;
}

static inline void
advance(MtParser *p)
{
	if (p->pos < p->stmt_end)
		p->pos++;
	p->gt_used = 0;
}

/* The token as a bare word (keyword or unquoted identifier), or NULL. */
static inline const char *
token_word(MtToken *t)
{
	if (t->keyword)
		return t->keyword;
	if (t->type == IDENT && !t->quoted)
		return t->str;
	return NULL;
}

static inline bool
token_is_word(MtToken *t, const char *word)
{
	const char *w = token_word(t);

	return w != NULL && strcmp(w, word) == 0;
}

static inline bool
token_is_char(MtToken *t, char c)
{
	return t->type == (unsigned char) c;
}

static inline bool
accept_word(MtParser *p, const char *word)
{
	if (!at_end(p) && token_is_word(cur(p), word))
	{
		advance(p);
		return true;
	}
	return false;
}

static inline bool
accept_char(MtParser *p, char c)
{
	if (!at_end(p) && token_is_char(cur(p), c))
	{
		advance(p);
		return true;
	}
	return false;
}

static inline bool
accept_equals(MtParser *p)
{
	return accept_char(p, '=');
}

/* tokens.c */
extern void mt_tokenize(MtParser *p);
extern char *mt_token_text(MtParser *p, MtToken *t);
extern void mt_syntax_error(MtParser *p, const char *expected) pg_attribute_noreturn();
extern void mt_expect_word(MtParser *p, const char *word, const char *expected);
extern void mt_expect_char(MtParser *p, char c);
extern char *mt_parse_identifier(MtParser *p, const char *what);
extern char *mt_parse_string(MtParser *p, const char *what);
extern List *mt_parse_identifier_list(MtParser *p, const char *what);
extern MtQualifiedName *mt_parse_qualified_name(MtParser *p);

/* embedded_sql.c */
extern char *mt_blank_outside(MtParser *p, int start, int end, const char *head);
extern Node *mt_parse_expression_tokens(MtParser *p, int from, int to, char **text);
extern int	mt_expression_end(MtParser *p, const char *const *stop_words);
extern MtQuery *mt_parse_query(MtParser *p);
extern MtQuery *mt_query_in_range(MtParser *p, int start, int end);

/* clauses.c */
extern void mt_parse_element(MtParser *p, MtElements *el);
extern void mt_parse_element_list(MtParser *p, MtElements *el);
extern List *mt_parse_options(MtParser *p);
extern MtFreshness *mt_parse_freshness(MtParser *p);
extern int	mt_parse_buckets(MtParser *p);
extern void mt_parse_distribution_by(MtParser *p, MtDistribution *d);
extern MtDistribution *mt_parse_distribution(MtParser *p, int location);
extern MtStartMode *mt_parse_start_mode(MtParser *p);
extern MtStartMode *mt_parse_start_mode_value(MtParser *p);

#endif							/* MT_PARSER_INT_H */
