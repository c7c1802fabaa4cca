/*-------------------------------------------------------------------------
 *
 * src/parser/embedded_sql.c
 *	  The SQL inside the statements, handed to PostgreSQL's raw parser.
 *
 * Every embedded SQL fragment -- the query after AS, computed-column and
 * watermark expressions -- goes to raw_parser() on a copy of the text in
 * which everything else is blanked with spaces, so that positions in
 * PostgreSQL's own syntax errors stay right.  Where an expression ends is
 * found on the tokens (a ',' or ')' outside parentheses, or a word of the
 * clause that follows it).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "mb/pg_wchar.h"
#include "parser/parser.h"

#include "mt/materialized_table.h"
#include "mt/parser/parser_int.h"

/*
 * mt_blank_outside
 *		A copy of buf with everything outside [start, end) blanked, for
 *		PostgreSQL's parser; head (if not NULL) overwrites its beginning.
 *
 * PostgreSQL reports positions in characters, counted from the start of
 * the text it parsed, and our error callback shows them against the
 * original text: so the part before start must keep both its length in
 * bytes (parse trees carry byte offsets) and its number of characters.
 * Blanking byte by byte keeps the first but not the second when the part
 * holds multibyte characters (a non-ASCII table name, say); then those
 * characters go into a comment at the beginning, and as many ASCII bytes
 * as the comment's delimiters need are dropped.
 */
char *
mt_blank_outside(MtParser *p, int start, int end, const char *head)
{
	char	   *copy = palloc(p->buflen + 1);
	int			headlen = head ? strlen(head) : 0;
	int			ascii = 0;
	int			mb = 0;
	int			i;

	for (i = 0; i < start;)
	{
		int			len = pg_mblen(p->buf + i);

		if (len > 1)
			mb += len;
		else
			ascii++;
		i += len;
	}

	if (mb == 0 || ascii < headlen + 4)
	{
		memcpy(copy, p->buf, p->buflen + 1);
		for (i = 0; i < p->buflen; i++)
			if ((i < start || i >= end) && copy[i] != '\n')
				copy[i] = ' ';
		if (head)
			memcpy(copy, head, headlen);
	}
	else
	{
		int			out = headlen;
		int			skip = headlen + 4;

		if (head)
			memcpy(copy, head, headlen);
		copy[out++] = '/';
		copy[out++] = '*';
		for (i = 0; i < start;)
		{
			int			len = pg_mblen(p->buf + i);

			if (len > 1)
			{
				memcpy(copy + out, p->buf + i, len);
				out += len;
			}
			i += len;
		}
		copy[out++] = '*';
		copy[out++] = '/';
		for (i = 0; i < start; i++)
		{
			if (IS_HIGHBIT_SET(p->buf[i]))
				continue;
			if (skip > 0)
				skip--;
			else
				copy[out++] = p->buf[i] == '\n' ? '\n' : ' ';
		}
		Assert(out == start);
		memcpy(copy + start, p->buf + start, p->buflen - start + 1);
		for (i = end; i < p->buflen; i++)
			if (copy[i] != '\n')
				copy[i] = ' ';
	}
	return copy;
}

static char *
trimmed_text(MtParser *p, int start, int end)
{
	while (start < end && isspace((unsigned char) p->source[start]))
		start++;
	while (end > start && isspace((unsigned char) p->source[end - 1]))
		end--;
	return pnstrdup(p->buf + start, end - start);
}

/*
 * mt_parse_expression_tokens
 *		Hand the tokens [from, to) to PostgreSQL's parser as one expression.
 *
 * PL/pgSQL's expression mode of the grammar parses the text as the target
 * list of a SELECT with its optional clauses; anything but one unnamed
 * target (FROM, WHERE, OFFSET, FOR UPDATE, a second column, ...) is
 * refused here, pointing at the expression, rather than by the SQL that
 * is later built around it.
 */
Node *
mt_parse_expression_tokens(MtParser *p, int from, int to, char **text)
{
	int			start = p->toks[from].location;
	int			end = p->toks[to].location;
	char	   *copy;
	List	   *raw;
	SelectStmt *select;
	SelectStmt *rest;
	ResTarget  *target;

	if (from >= to)
		mt_syntax_error(p, "an expression");
	while (end > start && isspace((unsigned char) p->buf[end - 1]))
		end--;
	copy = mt_blank_outside(p, start, end, NULL);
	copy[end] = '\0';
	raw = raw_parser(copy, RAW_PARSE_PLPGSQL_EXPR);
	select = (SelectStmt *) ((RawStmt *) linitial(raw))->stmt;
	if (list_length(select->targetList) != 1)
		goto bad;
	target = linitial_node(ResTarget, select->targetList);
	if (target->name != NULL)
		goto bad;
	/* nothing but that target */
	rest = copyObject(select);
	rest->targetList = NIL;
	if (!equal(rest, makeNode(SelectStmt)))
		goto bad;
	*text = trimmed_text(p, start, end);
	return target->val;

bad:
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("invalid expression"),
			 errdetail("A computed column or watermark takes a single scalar expression."),
			 mt_errposition(p->source, start)));
	return NULL;				/* keep compiler quiet */
}

/* Is token i the end of the current element (a ',' or ')' or the statement's end)? */
static bool
element_ends_at(MtParser *p, int i)
{
	return i >= p->stmt_end || token_is_char(&p->toks[i], ',') ||
		token_is_char(&p->toks[i], ')');
}

/*
 * Does the word at token i end an expression, or is it a column name
 * inside it?  COMMENT ends it when a string follows, FIRST when the
 * element ends after it, AFTER when a column name and the element's end
 * follow.
 */
static bool
ends_expression(MtParser *p, int i, const char *word)
{
	if (strcmp(word, "comment") == 0)
		return i + 1 < p->stmt_end && p->toks[i + 1].type == SCONST;
	if (strcmp(word, "first") == 0)
		return element_ends_at(p, i + 1);
	if (strcmp(word, "after") == 0)
		return i + 1 < p->stmt_end &&
			(p->toks[i + 1].type == IDENT || p->toks[i + 1].keyword != NULL) &&
			element_ends_at(p, i + 2);
	return true;
}

/*
 * Index of the token that ends an expression starting at the current token:
 * a ',' or ')' outside parentheses, or one of the given words.
 */
int
mt_expression_end(MtParser *p, const char *const *stop_words)
{
	int			depth = 0;
	int			i;

	for (i = p->pos; i < p->stmt_end; i++)
	{
		MtToken    *t = &p->toks[i];

		if (token_is_char(t, '(') || token_is_char(t, '['))
			depth++;
		else if (token_is_char(t, ')') || token_is_char(t, ']'))
		{
			if (depth == 0)
				break;
			depth--;
		}
		else if (depth == 0 && token_is_char(t, ','))
			break;
		else if (depth == 0 && stop_words && i > p->pos)
		{
			const char *const *w;

			for (w = stop_words; *w; w++)
				if (token_is_word(t, *w) && ends_expression(p, i, *w))
					return i;
		}
	}
	return i;
}

MtQuery *
mt_parse_query(MtParser *p)
{
	MtQuery    *q;

	if (at_end(p))
		mt_syntax_error(p, "a query after AS");
	q = mt_query_in_range(p, cur(p)->location, p->toks[p->stmt_end].location);
	p->pos = p->stmt_end;
	return q;
}

/* The query written in [start, end) of the text, parsed by PostgreSQL. */
MtQuery *
mt_query_in_range(MtParser *p, int start, int end)
{
	MtQuery    *q = palloc0(sizeof(MtQuery));
	List	   *raw;
	RawStmt    *rs;

	while (end > start && isspace((unsigned char) p->buf[end - 1]))
		end--;
	/* cut after the query, so that "end of input" points right behind it */
	q->parse_source = mt_blank_outside(p, start, end, NULL);
	q->parse_source[end] = '\0';
	raw = raw_parser(q->parse_source, RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("the query of a materialized table must be a single SELECT statement"),
				 mt_errposition(p->source, start)));
	rs = linitial_node(RawStmt, raw);
	if (!IsA(rs->stmt, SelectStmt))
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("the query of a materialized table must be a SELECT statement"),
				 mt_errposition(p->source, start)));
	q->stmt = (SelectStmt *) rs->stmt;
	if (q->stmt->intoClause)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("the query of a materialized table cannot use SELECT INTO"),
				 mt_errposition(p->source, start)));
	q->location = start;
	q->text = trimmed_text(p, start, end);
	q->length = strlen(q->text);
	return q;
}
