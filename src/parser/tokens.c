/*-------------------------------------------------------------------------
 *
 * src/parser/tokens.c
 *	  The token stream of the parser: tokenizing with PostgreSQL's core
 *	  scanner, and the words, identifiers and names of the grammar.
 *
 * The whole text is tokenized once (mt_tokenize, at the end); the parser then
 * walks the tokens (mt/parser/parser_int.h).  Flink quotes identifiers
 * with backticks; the scanner sees a backtick as an operator, so
 * tokenizing rewrites `name` into "name" in place as it meets them (same
 * length, so positions are unchanged).
 *
 * Words of the Flink grammar are matched by their text, whether the scanner
 * returns them as keywords (REFRESH, PARTITION, ...) or as unquoted
 * identifiers (FRESHNESS, ENFORCED, ...); a double-quoted identifier never
 * matches a word.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "common/keywords.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"

#include "mt/materialized_table.h"
#include "mt/parser/parser_int.h"

/* The token's text as it appears in the statement, for messages. */
char *
mt_token_text(MtParser *p, MtToken *t)
{
	int			start = t->location;
	int			end;
	int			i;

	if (t->type == 0)
		return NULL;
	end = (t + 1)->location;
	if (end > p->buflen)
		end = p->buflen;
	/* stop at whitespace that ends the token (strings may contain some) */
	if (t->type != SCONST)
	{
		for (i = start; i < end; i++)
			if (isspace((unsigned char) p->source[i]))
				break;
		end = i;
	}
	while (end > start && isspace((unsigned char) p->source[end - 1]))
		end--;
	return pnstrdup(p->source + start, end - start);
}

void
mt_syntax_error(MtParser *p, const char *expected)
{
	MtToken    *t = cur(p);
	char	   *text = at_end(p) ? NULL : mt_token_text(p, t);

	if (text == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("syntax error at end of input"),
				 expected ? errdetail("Expected %s.", expected) : 0,
				 mt_errposition(p->source, t->location)));
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("syntax error at or near \"%s\"", text),
			 expected ? errdetail("Expected %s.", expected) : 0,
			 mt_errposition(p->source, t->location)));
}

void
mt_expect_word(MtParser *p, const char *word, const char *expected)
{
	if (!accept_word(p, word))
		mt_syntax_error(p, expected);
}

void
mt_expect_char(MtParser *p, char c)
{
	if (!accept_char(p, c))
	{
		char		expected[8];

		snprintf(expected, sizeof(expected), "\"%c\"", c);
		mt_syntax_error(p, expected);
	}
}

/*
 * An identifier: a double-quoted one, an unquoted one, or a keyword that
 * PostgreSQL does not reserve.
 */
static bool
at_identifier(MtParser *p)
{
	MtToken    *t = cur(p);
	int			kwnum;

	if (at_end(p))
		return false;
	if (t->type == IDENT)
		return true;
	if (t->keyword == NULL)
		return false;
	kwnum = ScanKeywordLookup(t->keyword, &ScanKeywords);
	return kwnum >= 0 && ScanKeywordCategories[kwnum] != RESERVED_KEYWORD;
}

char *
mt_parse_identifier(MtParser *p, const char *what)
{
	MtToken    *t = cur(p);
	char	   *name;

	if (!at_identifier(p))
		mt_syntax_error(p, what);
	name = pstrdup(t->type == IDENT ? t->str : t->keyword);
	advance(p);
	return name;
}

char *
mt_parse_string(MtParser *p, const char *what)
{
	MtToken    *t = cur(p);
	char	   *s;

	if (at_end(p) || t->type != SCONST)
		mt_syntax_error(p, what);
	s = pstrdup(t->str);
	advance(p);
	return s;
}

/* '(' ident [, ...] ')' */
List *
mt_parse_identifier_list(MtParser *p, const char *what)
{
	List	   *names = NIL;

	mt_expect_char(p, '(');
	do
	{
		names = lappend(names, makeString(mt_parse_identifier(p, what)));
	} while (accept_char(p, ','));
	mt_expect_char(p, ')');
	return names;
}

MtQualifiedName *
mt_parse_qualified_name(MtParser *p)
{
	MtQualifiedName *qn = palloc0(sizeof(MtQualifiedName));
	char	   *parts[3];
	int			n = 0;

	qn->location = cur(p)->location;
	do
	{
		if (n == 3)
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("improper qualified name (too many dotted names)"),
					 errhint("A materialized table is named [catalog.][database.]table."),
					 mt_errposition(p->source, qn->location)));
		parts[n++] = mt_parse_identifier(p, "a table name");
	} while (accept_char(p, '.'));

	qn->name = parts[n - 1];
	if (n >= 2)
		qn->schema = parts[n - 2];
	if (n == 3)
		qn->catalog = parts[0];
	return qn;
}

/* ---------------------------------------------------------------------
 * Tokenizing
 * ---------------------------------------------------------------------
 */

/* Scanner errors of a scan that started at offset: positions in the whole text. */
typedef struct ScanOffset
{
	const char *buf;
	int			offset;
} ScanOffset;

static void
scan_error_callback(void *arg)
{
	ScanOffset *so = (ScanOffset *) arg;
	int			pos = geterrposition();

	if (pos > 0 && so->offset > 0)
		errposition(pos + pg_mbstrlen_with_len(so->buf, so->offset));
}

/*
 * A backtick-quoted identifier becomes a double-quoted one of the same
 * length.  Returns the offset of the closing backtick.
 */
static int
rewrite_backtick_pair(MtParser *p, int open)
{
	int			close;
	int			j;

	for (close = open + 1; close < p->buflen; close++)
	{
		if (p->buf[close] == '`')
		{
			if (p->buf[close + 1] == '`')
				close++;		/* doubled backtick stands for itself */
			else
				break;
		}
	}
	if (close >= p->buflen)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("unterminated quoted identifier"),
				 mt_errposition(p->source, open)));
	for (j = open + 1; j < close; j++)
		if (p->buf[j] == '"')
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("a backtick-quoted identifier cannot contain a double quote"),
					 errhint("Use a double-quoted identifier and double the quote character."),
					 mt_errposition(p->source, open)));
	p->buf[open] = '"';
	p->buf[close] = '"';
	return close;
}

/*
 * mt_tokenize
 *		The tokens of the whole text, with Flink's `quoted identifiers`
 *		turned into "quoted identifiers".
 *
 * The scanner sees a backtick as an operator.  Tokens are read left to
 * right; at the first operator holding a backtick, the pair is rewritten
 * in place (same length, so positions are unchanged) and scanning starts
 * again at that operator: what follows the backtick (an apostrophe in
 * `it's`, say) is only ever scanned once it is rewritten.
 */
void
mt_tokenize(MtParser *p)
{
	int			alloc = 64;
	int			offset = 0;

	p->ntoks = 0;
	p->toks = palloc(alloc * sizeof(MtToken));
	for (;;)
	{
		core_yy_extra_type yyextra;
		core_yyscan_t scanner;
		ErrorContextCallback callback;
		ScanOffset	so = {p->buf, offset};
		int			restart = -1;

		CHECK_FOR_INTERRUPTS();
		callback.callback = scan_error_callback;
		callback.arg = &so;
		callback.previous = error_context_stack;
		error_context_stack = &callback;
		scanner = scanner_init(p->buf + offset, &yyextra, &ScanKeywords, ScanKeywordTokens);
		yyextra.standard_conforming_strings = true;
		for (;;)
		{
			core_YYSTYPE yylval;
			int			yylloc = 0;
			int			type;
			int			at;
			MtToken    *t;

			memset(&yylval, 0, sizeof(yylval));
			type = core_yylex(&yylval, &yylloc, scanner);
			at = offset + yylloc;
			if (p->ntoks + 1 >= alloc)
			{
				alloc *= 2;
				p->toks = repalloc(p->toks, alloc * sizeof(MtToken));
			}
			t = &p->toks[p->ntoks++];
			memset(t, 0, sizeof(MtToken));
			t->type = type;
			t->location = (type == 0) ? p->buflen : at;
			if (type == 0)
				break;
			if (type == Op && strchr(yylval.str, '`') != NULL)
			{
				(void) rewrite_backtick_pair(p, at + (strchr(yylval.str, '`') - yylval.str));
				p->ntoks--;
				restart = at;
				break;
			}
			/*
			 * What the scanner sets depends on the token: an integer for
			 * ICONST and PARAM, a string for the others that carry a value,
			 * a keyword for keywords, nothing for the rest (yylval is a
			 * union: reading the wrong member is reading garbage).
			 */
			if (type == ICONST || type == PARAM)
				t->ival = yylval.ival;
			else if (type == IDENT || type == SCONST || type == FCONST ||
					 type == Op || type == BCONST || type == XCONST ||
					 type == UIDENT || type == USCONST)
			{
				t->str = pstrdup(yylval.str);
				t->quoted = (type == IDENT && (p->buf[at] == '"' ||
											   p->buf[at] == 'U' ||
											   p->buf[at] == 'u'));
				/* a doubled backtick inside `name` stands for one backtick */
				if (t->quoted && p->source[at] == '`' && t->str)
				{
					char	   *r = t->str;
					char	   *w = t->str;

					while (*r)
					{
						if (r[0] == '`' && r[1] == '`')
							r++;
						*w++ = *r++;
					}
					*w = '\0';
				}
			}
			else if (type < 256 || type == TYPECAST || type == DOT_DOT ||
					 type == COLON_EQUALS || type == EQUALS_GREATER ||
					 type == LESS_EQUALS || type == GREATER_EQUALS ||
					 type == NOT_EQUALS)
				 /* a character or an operator the grammar knows by name */ ;
			else
				t->keyword = yylval.keyword;
		}
		scanner_finish(scanner);
		error_context_stack = callback.previous;
		if (restart < 0)
			break;
		offset = restart;
	}
}

