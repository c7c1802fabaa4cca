/*-------------------------------------------------------------------------
 *
 * src/parser/ddl_parser.c
 *	  Parser for Flink's MATERIALIZED TABLE statements.
 *
 * PostgreSQL's grammar cannot be extended, so the statements arrive as text
 * through materialized_table.execute().  We tokenize that text with the core
 * scanner (the same one the server uses, so quoting, comments, dollar quotes
 * and keywords behave exactly as in SQL) and walk the tokens with a small
 * recursive-descent parser.  Every embedded SQL fragment -- the query after
 * AS, computed-column and watermark expressions -- goes to raw_parser() on a
 * copy of the text in which everything else is blanked with spaces, so that
 * positions in PostgreSQL's own syntax errors stay right.
 *
 * Flink quotes identifiers with backticks; the scanner sees a backtick as an
 * operator, so tokenize() rewrites `name` into "name" in place as it meets
 * them (same length, so positions are unchanged).
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
#include <limits.h>

#include "common/keywords.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parser.h"
#include "parser/parse_type.h"
#include "parser/scanner.h"
#include "parser/gram.h"
#include "utils/builtins.h"

#include "mt/parser/ddl_parser.h"
#include "mt/parser/flink_types.h"
#include "mt/materialized_table.h"

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

static void tokenize(MtParser *p);
static MtStatement *parse_statement(MtParser *p, int start, int end);

/* ---------------------------------------------------------------------
 * Token helpers
 * ---------------------------------------------------------------------
 */

static MtToken *
cur(MtParser *p)
{
	return &p->toks[p->pos];
}

static MtToken *
peek(MtParser *p, int ahead)
{
	int			i = p->pos + ahead;

	if (i > p->stmt_end)
		i = p->stmt_end;
	return &p->toks[i];
}

static bool
at_end(MtParser *p)
{
	return p->pos >= p->stmt_end;
}

static void
advance(MtParser *p)
{
	if (p->pos < p->stmt_end)
		p->pos++;
	p->gt_used = 0;
}

/* The token as a bare word (keyword or unquoted identifier), or NULL. */
static const char *
token_word(MtToken *t)
{
	if (t->keyword)
		return t->keyword;
	if (t->type == IDENT && !t->quoted)
		return t->str;
	return NULL;
}

static bool
token_is_word(MtToken *t, const char *word)
{
	const char *w = token_word(t);

	return w != NULL && strcmp(w, word) == 0;
}

static bool
token_is_char(MtToken *t, char c)
{
	return t->type == (unsigned char) c;
}

/* The token's text as it appears in the statement, for messages. */
static char *
token_text(MtParser *p, MtToken *t)
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

static void
syntax_error(MtParser *p, const char *expected)
{
	MtToken    *t = cur(p);
	char	   *text = at_end(p) ? NULL : token_text(p, t);

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

static bool
accept_word(MtParser *p, const char *word)
{
	if (!at_end(p) && token_is_word(cur(p), word))
	{
		advance(p);
		return true;
	}
	return false;
}

static void
expect_word(MtParser *p, const char *word, const char *expected)
{
	if (!accept_word(p, word))
		syntax_error(p, expected);
}

static bool
accept_char(MtParser *p, char c)
{
	if (!at_end(p) && token_is_char(cur(p), c))
	{
		advance(p);
		return true;
	}
	return false;
}

static void
expect_char(MtParser *p, char c)
{
	if (!accept_char(p, c))
	{
		char		expected[8];

		snprintf(expected, sizeof(expected), "\"%c\"", c);
		syntax_error(p, expected);
	}
}

/*
 * Is the current token the operator character c?  The scanner returns a lone
 * '<' or '>' as a character token but joins runs such as ">>" into one Op,
 * which nested types (ARRAY<ARRAY<INT>>) must split again.
 */
static bool
token_is_opchar(MtToken *t, int used, char c)
{
	if (used == 0 && token_is_char(t, c))
		return true;
	return t->type == Op && t->str[used] == c;
}

static bool
at_op_char(MtParser *p, char c)
{
	return !at_end(p) && token_is_opchar(cur(p), p->gt_used, c);
}

/* Take one character c, splitting joined operators such as ">>". */
static bool
accept_op_char(MtParser *p, char c)
{
	MtToken    *t = cur(p);

	if (!at_op_char(p, c))
		return false;
	if (t->type == Op && t->str[p->gt_used + 1] != '\0')
		p->gt_used++;
	else
		advance(p);
	return true;
}

/* Is the current token the last one of the statement? */
static bool
at_last(MtParser *p)
{
	return p->pos + 1 >= p->stmt_end;
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

static char *
parse_identifier(MtParser *p, const char *what)
{
	MtToken    *t = cur(p);
	char	   *name;

	if (!at_identifier(p))
		syntax_error(p, what);
	name = pstrdup(t->type == IDENT ? t->str : t->keyword);
	advance(p);
	return name;
}

static char *
parse_string(MtParser *p, const char *what)
{
	MtToken    *t = cur(p);
	char	   *s;

	if (at_end(p) || t->type != SCONST)
		syntax_error(p, what);
	s = pstrdup(t->str);
	advance(p);
	return s;
}

/* '(' ident [, ...] ')' */
static List *
parse_identifier_list(MtParser *p, const char *what)
{
	List	   *names = NIL;

	expect_char(p, '(');
	do
	{
		names = lappend(names, makeString(parse_identifier(p, what)));
	} while (accept_char(p, ','));
	expect_char(p, ')');
	return names;
}

static MtQualifiedName *
parse_qualified_name(MtParser *p)
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
		parts[n++] = parse_identifier(p, "a table name");
	} while (accept_char(p, '.'));

	qn->name = parts[n - 1];
	if (n >= 2)
		qn->schema = parts[n - 2];
	if (n == 3)
		qn->catalog = parts[0];
	return qn;
}

/* ---------------------------------------------------------------------
 * Embedded SQL fragments
 * ---------------------------------------------------------------------
 */

/*
 * blank_outside
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
static char *
blank_outside(MtParser *p, int start, int end, const char *head)
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
 * parse_expression
 *		Hand the tokens [from, to) to PostgreSQL's parser as one expression.
 *
 * PL/pgSQL's expression mode of the grammar parses the text as the target
 * list of a SELECT with its optional clauses; anything but one unnamed
 * target (FROM, WHERE, OFFSET, FOR UPDATE, a second column, ...) is
 * refused here, pointing at the expression, rather than by the SQL that
 * is later built around it.
 */
static Node *
parse_expression(MtParser *p, int from, int to, char **text)
{
	int			start = p->toks[from].location;
	int			end = p->toks[to].location;
	char	   *copy;
	List	   *raw;
	SelectStmt *select;
	SelectStmt *rest;
	ResTarget  *target;

	if (from >= to)
		syntax_error(p, "an expression");
	while (end > start && isspace((unsigned char) p->buf[end - 1]))
		end--;
	copy = blank_outside(p, start, end, NULL);
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
static int
expression_end(MtParser *p, const char *const *stop_words)
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

static MtQuery *query_in_range(MtParser *p, int start, int end);

static MtQuery *
parse_query(MtParser *p)
{
	MtQuery    *q;

	if (at_end(p))
		syntax_error(p, "a query after AS");
	q = query_in_range(p, cur(p)->location, p->toks[p->stmt_end].location);
	p->pos = p->stmt_end;
	return q;
}

/* The query written in [start, end) of the text, parsed by PostgreSQL. */
static MtQuery *
query_in_range(MtParser *p, int start, int end)
{
	MtQuery    *q = palloc0(sizeof(MtQuery));
	List	   *raw;
	RawStmt    *rs;

	while (end > start && isspace((unsigned char) p->buf[end - 1]))
		end--;
	/* cut after the query, so that "end of input" points right behind it */
	q->parse_source = blank_outside(p, start, end, NULL);
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

/* ---------------------------------------------------------------------
 * Clauses
 * ---------------------------------------------------------------------
 */

/*
 * A type as Flink or PostgreSQL spells it.  Flink's names are translated
 * into PostgreSQL's (see parser/flink_types.c); the result is handed to
 * PostgreSQL's type-name parser.
 */
static char *parse_type_text(MtParser *p);

static const char *const type_stop_words[] = {
	"not", "null", "primary", "constraint", "comment", "metadata",
	"first", "after", "unique", "check", "default", "references",
	"generated", NULL
};

static bool
at_type_stop(MtParser *p)
{
	const char *const *w;

	if (at_end(p) || token_is_char(cur(p), ',') || token_is_char(cur(p), ')') ||
		at_op_char(p, '>'))
		return true;
	for (w = type_stop_words; *w; w++)
		if (token_is_word(cur(p), *w))
			return true;
	return false;
}

static char *
parse_type_text(MtParser *p)
{
	StringInfoData words;
	StringInfoData args;
	const char *first = at_end(p) ? NULL : token_word(cur(p));
	int			location = cur(p)->location;
	bool		array_suffix = false;
	char	   *result;

	/* nested types recurse: ARRAY<ARRAY<...>> must not overflow the stack */
	check_stack_depth();

	/* ARRAY<T> and MULTISET<T> (a bag) become T[] */
	if (first && (strcmp(first, "array") == 0 || strcmp(first, "multiset") == 0) &&
		token_is_opchar(peek(p, 1), 0, '<'))
	{
		char	   *element;

		advance(p);
		accept_op_char(p, '<');
		element = parse_type_text(p);
		if (!accept_op_char(p, '>'))
			syntax_error(p, "\">\"");
		return psprintf("%s[]", element);
	}
	if (first && (strcmp(first, "map") == 0 || strcmp(first, "row") == 0) &&
		(token_is_opchar(peek(p, 1), 0, '<') ||
		 (strcmp(first, "row") == 0 && token_is_char(peek(p, 1), '('))))
	{
		bool		angle = token_is_opchar(peek(p, 1), 0, '<');
		int			depth = 0;

		/* MAP and ROW become jsonb; their inner types still must be valid */
		advance(p);
		if (angle)
		{
			accept_op_char(p, '<');
			do
			{
				if (strcmp(first, "row") == 0)
					(void) parse_identifier(p, "a field name");
				(void) parse_type_text(p);
				if (accept_word(p, "comment"))
					(void) parse_string(p, "a comment string");
			} while (accept_char(p, ','));
			if (!accept_op_char(p, '>'))
				syntax_error(p, "\">\"");
		}
		else
		{
			expect_char(p, '(');
			depth = 1;
			while (depth > 0 && !at_end(p))
			{
				if (token_is_char(cur(p), '('))
					depth++;
				else if (token_is_char(cur(p), ')'))
					depth--;
				advance(p);
			}
		}
		return pstrdup("jsonb");
	}

	/* words, each optionally followed by (args), then [] suffixes */
	initStringInfo(&words);
	initStringInfo(&args);
	while (!at_type_stop(p))
	{
		MtToken    *t = cur(p);

		if (token_is_char(t, '('))
		{
			int			depth = 0;

			resetStringInfo(&args);
			do
			{
				t = cur(p);
				if (token_is_char(t, '('))
					depth++;
				else if (token_is_char(t, ')'))
					depth--;
				appendStringInfoString(&args, token_text(p, t));
				advance(p);
			} while (depth > 0 && !at_end(p));
			appendStringInfoString(&words, args.data);
			continue;
		}
		if (token_is_char(t, '['))
		{
			advance(p);
			if (cur(p)->type == ICONST)
				advance(p);
			expect_char(p, ']');
			array_suffix = true;
			appendStringInfoString(&words, "[]");
			continue;
		}
		if (t->type == IDENT && t->quoted)
			appendStringInfo(&words, "%s%s", words.len ? " " : "",
							 quote_identifier(t->str));
		else if (token_word(t))
			appendStringInfo(&words, "%s%s", words.len ? " " : "", token_word(t));
		else if (token_is_char(t, '.'))
			appendStringInfoChar(&words, '.');
		else
			syntax_error(p, "a data type");
		advance(p);
	}
	if (words.len == 0)
		syntax_error(p, "a data type");

	result = mt_flink_type_to_pg(words.data, array_suffix);
	if (result == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("type \"%s\" is not supported", words.data),
				 errdetail("PostgreSQL has no counterpart of this Flink type."),
				 mt_errposition(p->source, location)));
	return result;
}


/* [CONSTRAINT name] PRIMARY KEY [(cols)] NOT ENFORCED */
static void
expect_not_enforced(MtParser *p, int location)
{
	if (accept_word(p, "not"))
	{
		if (accept_word(p, "enforced"))
			return;
		syntax_error(p, "ENFORCED");
	}
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("primary key must be declared NOT ENFORCED"),
			 errdetail("Flink only supports NOT ENFORCED primary keys; PostgreSQL still checks the key at every refresh."),
			 mt_errposition(p->source, location)));
}

static MtPrimaryKey *
parse_primary_key(MtParser *p, char *constraint_name, int location)
{
	MtPrimaryKey *pk = palloc0(sizeof(MtPrimaryKey));

	pk->constraint_name = constraint_name;
	pk->location = location;
	expect_word(p, "primary", "PRIMARY KEY");
	expect_word(p, "key", "KEY");
	pk->columns = parse_identifier_list(p, "a column name");
	expect_not_enforced(p, location);
	return pk;
}

static void
unique_not_supported(MtParser *p, int location)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("UNIQUE constraints are not supported on materialized tables"),
			 errhint("Declare a PRIMARY KEY ... NOT ENFORCED, or create a unique index on the table."),
			 mt_errposition(p->source, location)));
}

static MtWatermark *
parse_watermark(MtParser *p)
{
	static const char *const stop[] = {NULL};
	MtWatermark *wm = palloc0(sizeof(MtWatermark));
	int			from;
	int			to;

	wm->location = cur(p)->location;
	expect_word(p, "watermark", "WATERMARK");
	expect_word(p, "for", "FOR");
	wm->column = parse_identifier(p, "a column name");
	expect_word(p, "as", "AS");
	from = p->pos;
	to = expression_end(p, stop);
	wm->expr = parse_expression(p, from, to, &wm->expr_text);
	wm->expr_location = p->toks[from].location;
	p->pos = to;
	return wm;
}

static void
parse_column_place(MtParser *p, MtColumn *col)
{
	int			location = cur(p)->location;

	if (accept_word(p, "first"))
		col->place = MT_PLACE_FIRST;
	else if (accept_word(p, "after"))
	{
		col->place = MT_PLACE_AFTER;
		col->place_after = parse_identifier(p, "a column name");
	}
	else
		return;
	if (!p->in_alter)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("column positions (FIRST, AFTER) are only allowed in ALTER MATERIALIZED TABLE"),
				 mt_errposition(p->source, location)));
}

typedef struct TypeLocation
{
	const char *source;
	int			location;
} TypeLocation;

static void
type_error_callback(void *arg)
{
	TypeLocation *where = (TypeLocation *) arg;

	(void) mt_errposition(where->source, where->location);
}

/*
 * A column: "name", "name type [...]", "name AS expr" or
 * "name type METADATA [FROM 'key'] [VIRTUAL]".
 */
static MtColumn *
parse_column(MtParser *p)
{
	static const char *const stop[] = {"comment", "first", "after", NULL};
	MtColumn   *col = palloc0(sizeof(MtColumn));

	col->location = cur(p)->location;
	col->name = parse_identifier(p, "a column name");
	col->kind = MT_COLUMN_PHYSICAL;

	if (accept_word(p, "as"))
	{
		int			from = p->pos;
		int			to = expression_end(p, stop);

		col->kind = MT_COLUMN_COMPUTED;
		col->expr = parse_expression(p, from, to, &col->expr_text);
		col->expr_location = p->toks[from].location;
		p->pos = to;
	}
	else if (!at_type_stop(p))
	{
		int			type_location = cur(p)->location;
		ErrorContextCallback callback;
		TypeLocation where = {p->source, type_location};

		col->type_text = parse_type_text(p);
		/* errors about the translated type point at the type as written */
		callback.callback = type_error_callback;
		callback.arg = &where;
		callback.previous = error_context_stack;
		error_context_stack = &callback;
		col->type_name = typeStringToTypeName(col->type_text);
		error_context_stack = callback.previous;
		col->type_name->location = type_location;
		if (accept_word(p, "not"))
		{
			expect_word(p, "null", "NULL");
			col->not_null = true;
		}
		else
			(void) accept_word(p, "null");
		if (accept_word(p, "metadata"))
		{
			col->kind = MT_COLUMN_METADATA;
			if (accept_word(p, "from"))
				col->metadata_key = parse_string(p, "a metadata key string");
			if (accept_word(p, "virtual"))
				col->is_virtual = true;
		}
	}

	if (token_is_word(cur(p), "constraint") || token_is_word(cur(p), "primary"))
	{
		int			location = cur(p)->location;

		if (accept_word(p, "constraint"))
			col->constraint_name = parse_identifier(p, "a constraint name");
		if (token_is_word(cur(p), "unique"))
			unique_not_supported(p, location);
		expect_word(p, "primary", "PRIMARY KEY");
		expect_word(p, "key", "KEY");
		expect_not_enforced(p, location);
		col->primary_key = true;
	}
	else if (token_is_word(cur(p), "unique"))
		unique_not_supported(p, cur(p)->location);

	if (accept_word(p, "comment"))
		col->comment = parse_string(p, "a comment string");
	parse_column_place(p, col);
	return col;
}

/* Items of a column list, or of ALTER ... ADD/MODIFY (...). */
typedef struct MtElements
{
	List	   *columns;
	MtPrimaryKey *primary_key;
	MtWatermark *watermark;
} MtElements;

static void
parse_element(MtParser *p, MtElements *el)
{
	MtToken    *t = cur(p);
	int			location = t->location;

	if (token_is_word(t, "constraint") || token_is_word(t, "primary"))
	{
		char	   *name = NULL;

		if (accept_word(p, "constraint"))
			name = parse_identifier(p, "a constraint name");
		if (token_is_word(cur(p), "unique"))
			unique_not_supported(p, location);
		if (el->primary_key)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("multiple primary keys are not allowed"),
					 mt_errposition(p->source, location)));
		el->primary_key = parse_primary_key(p, name, location);
	}
	else if (token_is_word(t, "unique"))
		unique_not_supported(p, location);
	else if (token_is_word(t, "watermark") && token_is_word(peek(p, 1), "for"))
	{
		if (el->watermark)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("multiple watermarks are not allowed"),
					 mt_errposition(p->source, location)));
		el->watermark = parse_watermark(p);
	}
	else
		el->columns = lappend(el->columns, parse_column(p));
}

static void
parse_element_list(MtParser *p, MtElements *el)
{
	expect_char(p, '(');
	do
	{
		parse_element(p, el);
	} while (accept_char(p, ','));
	expect_char(p, ')');
}

static char *
parse_option_value(MtParser *p)
{
	MtToken    *t = cur(p);
	char	   *v;

	if (at_end(p))
		syntax_error(p, "an option value");
	if (t->type == SCONST || t->type == FCONST || t->type == IDENT)
		v = pstrdup(t->str);
	else if (t->type == ICONST)
		v = psprintf("%d", t->ival);
	else if (t->keyword)
		v = pstrdup(t->keyword);
	else
		syntax_error(p, "an option value");
	advance(p);
	return v;
}

/* ('key' = 'value' [, ...]) */
static List *
parse_options(MtParser *p)
{
	List	   *options = NIL;

	expect_char(p, '(');
	do
	{
		MtOption   *opt = palloc0(sizeof(MtOption));
		ListCell   *lc;

		opt->location = cur(p)->location;
		if (cur(p)->type == SCONST)
			opt->key = parse_string(p, "an option key");
		else
		{
			/* unquoted keys may be dotted: sink.parallelism */
			StringInfoData key;

			initStringInfo(&key);
			do
			{
				appendStringInfo(&key, "%s%s", key.len ? "." : "",
								 parse_identifier(p, "an option key"));
			} while (accept_char(p, '.'));
			opt->key = key.data;
		}
		if (!accept_char(p, '='))
			syntax_error(p, "\"=\"");
		opt->value = parse_option_value(p);
		foreach(lc, options)
		{
			if (strcmp(((MtOption *) lfirst(lc))->key, opt->key) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_OBJECT),
						 errmsg("option \"%s\" specified more than once", opt->key),
						 mt_errposition(p->source, opt->location)));
		}
		options = lappend(options, opt);
	} while (accept_char(p, ','));
	expect_char(p, ')');
	return options;
}

static bool
accept_equals(MtParser *p)
{
	return accept_char(p, '=');
}

/*
 * FRESHNESS = INTERVAL '<n>' { SECOND[S] | MINUTE[S] | HOUR[S] | DAY[S] }
 * (the FRESHNESS word already consumed)
 */
static MtFreshness *
parse_freshness(MtParser *p)
{
	static const struct
	{
		const char *word;
		MtFreshnessUnit unit;
	}			units[] = {
		{"second", MT_UNIT_SECOND}, {"seconds", MT_UNIT_SECOND},
		{"minute", MT_UNIT_MINUTE}, {"minutes", MT_UNIT_MINUTE},
		{"hour", MT_UNIT_HOUR}, {"hours", MT_UNIT_HOUR},
		{"day", MT_UNIT_DAY}, {"days", MT_UNIT_DAY},
	};
	MtFreshness *f = palloc0(sizeof(MtFreshness));
	const char *value;
	const char *unit;
	const char *s;
	bool		outer_minus = false;
	bool		negative;
	int64		n = 0;
	int			value_location;
	int			i;

	if (!accept_equals(p))
		syntax_error(p, "\"=\"");
	f->location = cur(p)->location;
	if (!accept_word(p, "interval"))
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("materialized table freshness must be an INTERVAL literal"),
				 errhint("Write FRESHNESS = INTERVAL '<num>' { SECOND | MINUTE | HOUR | DAY }."),
				 mt_errposition(p->source, f->location)));
	value_location = cur(p)->location;
	if (accept_char(p, '-'))
		outer_minus = true;
	value = parse_string(p, "a quoted number such as '1'");

	/* the unit first: a compound or unsupported unit is the real fault */
	unit = at_end(p) ? NULL : token_word(cur(p));
	for (i = 0; unit && i < lengthof(units); i++)
		if (strcmp(unit, units[i].word) == 0)
			break;
	if (unit == NULL || i == lengthof(units))
	{
		if (unit && (strcmp(unit, "year") == 0 || strcmp(unit, "years") == 0 ||
					 strcmp(unit, "month") == 0 || strcmp(unit, "months") == 0 ||
					 strcmp(unit, "week") == 0 || strcmp(unit, "weeks") == 0 ||
					 strcmp(unit, "millisecond") == 0 || strcmp(unit, "microsecond") == 0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("materialized table freshness does not support the time unit %s",
							token_text(p, cur(p))),
					 errhint("Use SECOND, MINUTE, HOUR or DAY."),
					 mt_errposition(p->source, cur(p)->location)));
		syntax_error(p, "SECOND, MINUTE, HOUR or DAY");
	}
	f->unit = units[i].unit;
	advance(p);
	if (token_is_word(cur(p), "to") || token_is_char(cur(p), '('))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("materialized table freshness must use a single time unit"),
				 errhint("Use SECOND, MINUTE, HOUR or DAY."),
				 mt_errposition(p->source, cur(p)->location)));

	s = value;
	while (isspace((unsigned char) *s))
		s++;
	negative = outer_minus;
	if (*s == '-' || *s == '+')
		negative ^= (*s++ == '-');
	if (!isdigit((unsigned char) *s))
		n = -1;
	for (; isdigit((unsigned char) *s); s++)
	{
		n = n * 10 + (*s - '0');
		if (n > INT_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("materialized table freshness \"%s\" is out of range", value),
					 mt_errposition(p->source, value_location)));
	}
	while (isspace((unsigned char) *s))
		s++;
	if (*s != '\0' || n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("materialized table freshness must be a positive integer"),
				 errdetail("The interval value \"%s%s\" is not an integer.",
						   outer_minus ? "-" : "", value),
				 mt_errposition(p->source, value_location)));
	if (negative || n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("materialized table freshness must be a positive integer"),
				 errdetail("The interval value is %s.",
						   n == 0 ? "zero" : "negative"),
				 mt_errposition(p->source, value_location)));
	f->value = n;
	return f;
}

static int
parse_buckets(MtParser *p)
{
	MtToken    *t = cur(p);
	int			n;

	expect_word(p, "into", "INTO");
	t = cur(p);
	if (at_end(p) || t->type != ICONST || t->ival <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the number of buckets must be a positive integer"),
				 mt_errposition(p->source, t->location)));
	n = t->ival;
	advance(p);
	expect_word(p, "buckets", "BUCKETS");
	return n;
}

/* [HASH | RANGE] (cols) [INTO n BUCKETS], after DISTRIBUTED BY */
static void
parse_distribution_by(MtParser *p, MtDistribution *d)
{
	if (accept_word(p, "hash"))
		d->kind = MT_DISTRIBUTION_HASH;
	else if (accept_word(p, "range"))
		d->kind = MT_DISTRIBUTION_RANGE;
	d->columns = parse_identifier_list(p, "a column name");
	if (token_is_word(cur(p), "into"))
		d->buckets = parse_buckets(p);
}

/*
 * DISTRIBUTED BY [HASH | RANGE] (cols) [INTO n BUCKETS]
 * DISTRIBUTED INTO n BUCKETS
 * (DISTRIBUTED, or ALTER's DISTRIBUTION, already consumed)
 */
static MtDistribution *
parse_distribution(MtParser *p, int location)
{
	MtDistribution *d = palloc0(sizeof(MtDistribution));

	d->location = location;
	if (accept_word(p, "by"))
		parse_distribution_by(p, d);
	else if (token_is_word(cur(p), "into"))
		d->buckets = parse_buckets(p);
	else
		syntax_error(p, "BY or INTO");
	return d;
}

/*
 * START_MODE = mode (the START_MODE word already consumed), as Flink 2.x
 * writes it: FROM_BEGINNING, FROM_NOW[(interval)], FROM_TIMESTAMP(ts),
 * RESUME_OR_FROM_BEGINNING, RESUME_OR_FROM_NOW[(interval)] or
 * RESUME_OR_FROM_TIMESTAMP(ts).  Where a stream starts reading has no
 * counterpart here: a source is a table, read whole, which is what
 * FROM_BEGINNING says.  The others are refused, saying so.
 */
static MtStartMode *parse_start_mode_value(MtParser *p);

static MtStartMode *
parse_start_mode(MtParser *p)
{
	if (!accept_equals(p))
		syntax_error(p, "\"=\"");
	return parse_start_mode_value(p);
}

static MtStartMode *
parse_start_mode_value(MtParser *p)
{
	static const char *const modes[] = {
		"from_beginning", "from_now", "from_timestamp", "resume_or_from_beginning",
		"resume_or_from_now", "resume_or_from_timestamp", NULL
	};
	MtStartMode *sm = palloc0(sizeof(MtStartMode));
	const char *word;
	const char *const *m;
	char	   *text;
	int			i;

	sm->location = cur(p)->location;
	word = at_end(p) ? NULL : token_word(cur(p));
	for (m = modes; word && *m; m++)
		if (strcmp(word, *m) == 0)
			break;
	if (word == NULL || *m == NULL)
		syntax_error(p, "FROM_BEGINNING, FROM_NOW, FROM_TIMESTAMP, RESUME_OR_FROM_BEGINNING, RESUME_OR_FROM_NOW or RESUME_OR_FROM_TIMESTAMP");
	sm->mode = pstrdup(word);
	for (i = 0; sm->mode[i]; i++)
		sm->mode[i] = pg_toupper((unsigned char) sm->mode[i]);
	advance(p);
	text = sm->mode;
	/* the argument of FROM_NOW(...) and FROM_TIMESTAMP(...), kept for the message */
	if (token_is_char(cur(p), '('))
	{
		int			depth = 0;
		int			from = cur(p)->location;
		int			to;

		do
		{
			if (token_is_char(cur(p), '('))
				depth++;
			else if (token_is_char(cur(p), ')'))
				depth--;
			advance(p);
		} while (depth > 0 && !at_end(p));
		if (depth > 0)
			syntax_error(p, "\")\"");
		to = cur(p)->location;
		while (to > from && isspace((unsigned char) p->source[to - 1]))
			to--;
		text = psprintf("%s%.*s", sm->mode, to - from, p->source + from);
	}
	else if (strcmp(sm->mode, "FROM_TIMESTAMP") == 0 ||
			 strcmp(sm->mode, "RESUME_OR_FROM_TIMESTAMP") == 0)
		syntax_error(p, "\"(\" and a timestamp");
	if (strcmp(sm->mode, "FROM_BEGINNING") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("START_MODE = %s is not supported", text),
				 errdetail("The sources of a materialized table are PostgreSQL tables, read whole: there is no stream offset to start or resume from, and every table starts FROM_BEGINNING."),
				 errhint("Leave START_MODE out or write START_MODE = FROM_BEGINNING; to keep only recent rows, filter them in the query."),
				 mt_errposition(p->source, sm->location)));
	return sm;
}

static void
duplicate_clause(MtParser *p, const char *clause, int location)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("%s specified more than once", clause),
			 mt_errposition(p->source, location)));
}

/* ---------------------------------------------------------------------
 * Statements
 * ---------------------------------------------------------------------
 */

static void
expect_materialized_table(MtParser *p, const char *verb)
{
	if (!token_is_word(cur(p), "materialized") ||
		!token_is_word(peek(p, 1), "table"))
	{
		if (token_is_word(cur(p), "materialized") && token_is_word(peek(p, 1), "view"))
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("materialized_table.execute() only runs MATERIALIZED TABLE statements"),
					 errhint("Run %s MATERIALIZED VIEW as an ordinary SQL statement.", verb),
					 mt_errposition(p->source, cur(p)->location)));
		syntax_error(p, "MATERIALIZED TABLE");
	}
	advance(p);
	advance(p);
}

static MtCreateStmt *
parse_create(MtParser *p)
{
	MtCreateStmt *c = palloc0(sizeof(MtCreateStmt));
	int			location = cur(p)->location;

	expect_word(p, "create", "CREATE");
	if (token_is_word(cur(p), "temporary") || token_is_word(cur(p), "temp"))
	{
		if (token_is_word(peek(p, 1), "materialized"))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("CREATE TEMPORARY MATERIALIZED TABLE is not supported"),
					 errdetail("Materialized tables are always permanent."),
					 mt_errposition(p->source, location)));
		syntax_error(p, "MATERIALIZED TABLE");
	}
	if (accept_word(p, "or"))
	{
		if (token_is_word(cur(p), "replace"))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("CREATE OR REPLACE MATERIALIZED TABLE is not supported"),
					 errhint("Use CREATE OR ALTER MATERIALIZED TABLE."),
					 mt_errposition(p->source, location)));
		expect_word(p, "alter", "ALTER");
		c->or_alter = true;
	}
	expect_materialized_table(p, "CREATE");
	c->name = parse_qualified_name(p);

	if (token_is_char(cur(p), '('))
	{
		MtElements	el = {0};

		parse_element_list(p, &el);
		c->has_column_list = true;
		c->columns = el.columns;
		c->primary_key = el.primary_key;
		c->watermark = el.watermark;
	}

	/* the clauses, in Flink's order or any other, each at most once */
	for (;;)
	{
		MtToken    *t = cur(p);
		int			clause_location = t->location;

		if (at_end(p))
			syntax_error(p, "AS followed by a query");
		if (accept_word(p, "as"))
		{
			c->query = parse_query(p);
			break;
		}
		else if (accept_word(p, "comment"))
		{
			if (c->comment)
				duplicate_clause(p, "COMMENT", clause_location);
			c->comment = parse_string(p, "a comment string");
		}
		else if (accept_word(p, "distributed"))
		{
			if (c->distribution)
				duplicate_clause(p, "DISTRIBUTED", clause_location);
			c->distribution = parse_distribution(p, clause_location);
		}
		else if (accept_word(p, "partitioned"))
		{
			if (c->partition_keys)
				duplicate_clause(p, "PARTITIONED BY", clause_location);
			expect_word(p, "by", "BY");
			c->partition_location = clause_location;
			c->partition_keys = parse_identifier_list(p, "a column name");
		}
		else if (accept_word(p, "with"))
		{
			if (c->options)
				duplicate_clause(p, "WITH", clause_location);
			c->options = parse_options(p);
		}
		else if (accept_word(p, "freshness"))
		{
			if (c->freshness)
				duplicate_clause(p, "FRESHNESS", clause_location);
			c->freshness = parse_freshness(p);
		}
		else if (accept_word(p, "start_mode"))
		{
			if (c->start_mode)
				duplicate_clause(p, "START_MODE", clause_location);
			c->start_mode = parse_start_mode(p);
		}
		else if (accept_word(p, "refresh_mode"))
		{
			if (c->refresh_mode != MT_MODE_UNSET)
				duplicate_clause(p, "REFRESH_MODE", clause_location);
			if (!accept_equals(p))
				syntax_error(p, "\"=\"");
			c->refresh_mode_location = cur(p)->location;
			if (accept_word(p, "continuous"))
				c->refresh_mode = MT_MODE_CONTINUOUS;
			else if (accept_word(p, "full"))
				c->refresh_mode = MT_MODE_FULL;
			else
				syntax_error(p, "CONTINUOUS or FULL");
		}
		else
			syntax_error(p, "COMMENT, DISTRIBUTED BY, PARTITIONED BY, WITH, FRESHNESS, REFRESH_MODE, START_MODE or AS");
	}
	return c;
}

static MtAlterStmt *
parse_alter(MtParser *p)
{
	MtAlterStmt *a = palloc0(sizeof(MtAlterStmt));
	MtToken    *t;

	expect_word(p, "alter", "ALTER");
	expect_materialized_table(p, "ALTER");
	a->name = parse_qualified_name(p);
	t = cur(p);
	a->action_location = t->location;
	p->in_alter = true;

	if (accept_word(p, "suspend"))
		a->action = MT_ALTER_SUSPEND;
	else if (accept_word(p, "resume"))
	{
		a->action = MT_ALTER_RESUME;
		if (accept_word(p, "with"))
			a->options = parse_options(p);
	}
	else if (accept_word(p, "refresh"))
	{
		a->action = MT_ALTER_REFRESH;
		if (accept_word(p, "partition"))
		{
			expect_char(p, '(');
			do
			{
				MtOption   *opt = palloc0(sizeof(MtOption));

				opt->location = cur(p)->location;
				opt->key = parse_identifier(p, "a partition column");
				if (!accept_equals(p))
					syntax_error(p, "\"=\"");
				if (cur(p)->type != SCONST)
					ereport(ERROR,
							(errcode(ERRCODE_SYNTAX_ERROR),
							 errmsg("partition values must be string literals"),
							 errhint("Write the value in single quotes, as in (ds = '2024-06-28')."),
							 mt_errposition(p->source, cur(p)->location)));
				opt->value = parse_string(p, "a string literal");
				a->partition_spec = lappend(a->partition_spec, opt);
			} while (accept_char(p, ','));
			expect_char(p, ')');
		}
	}
	else if (token_is_word(t, "as") || token_is_word(t, "start_mode"))
	{
		if (accept_word(p, "start_mode"))
			a->start_mode = parse_start_mode(p);
		expect_word(p, "as", "AS followed by a query");
		a->action = MT_ALTER_AS;
		a->query = parse_query(p);
	}
	else if (accept_word(p, "rename"))
	{
		a->action = MT_ALTER_RENAME;
		expect_word(p, "to", "TO");
		a->new_name = parse_qualified_name(p);
	}
	else if (accept_word(p, "set"))
	{
		a->action = MT_ALTER_SET_FRESHNESS;
		expect_word(p, "freshness", "FRESHNESS");
		a->freshness = parse_freshness(p);
	}
	else if (token_is_word(t, "add") || token_is_word(t, "modify"))
	{
		MtElements	el = {0};

		a->action = token_is_word(t, "add") ? MT_ALTER_ADD : MT_ALTER_MODIFY;
		advance(p);
		if (token_is_word(cur(p), "distribution"))
		{
			int			location = cur(p)->location;

			if (a->action == MT_ALTER_MODIFY)
				ereport(ERROR,
						(errcode(ERRCODE_SYNTAX_ERROR),
						 errmsg("MODIFY DISTRIBUTION is not part of Flink's grammar"),
						 errhint("Use DROP DISTRIBUTION followed by ADD DISTRIBUTION."),
						 mt_errposition(p->source, location)));
			advance(p);
			a->distribution = parse_distribution(p, location);
		}
		else
		{
			if (token_is_char(cur(p), '('))
				parse_element_list(p, &el);
			else
				parse_element(p, &el);
			a->columns = el.columns;
			a->primary_key = el.primary_key;
			a->watermark = el.watermark;
		}
	}
	else if (accept_word(p, "drop"))
	{
		a->action = MT_ALTER_DROP;
		if (accept_word(p, "primary"))
		{
			expect_word(p, "key", "KEY");
			a->drop_target = MT_DROP_PRIMARY_KEY;
		}
		else if (accept_word(p, "constraint"))
		{
			a->drop_target = MT_DROP_CONSTRAINT;
			a->drop_constraint = parse_identifier(p, "a constraint name");
		}
		else if (token_is_word(cur(p), "watermark") && at_last(p))
		{
			advance(p);
			a->drop_target = MT_DROP_WATERMARK;
		}
		else if (token_is_word(cur(p), "distribution") && at_last(p))
		{
			advance(p);
			a->drop_target = MT_DROP_DISTRIBUTION;
		}
		else if (token_is_char(cur(p), '('))
		{
			a->drop_target = MT_DROP_COLUMNS;
			a->drop_columns = parse_identifier_list(p, "a column name");
		}
		else
		{
			a->drop_target = MT_DROP_COLUMNS;
			a->drop_columns = list_make1(makeString(parse_identifier(p, "a column name")));
		}
	}
	else
		syntax_error(p, "SUSPEND, RESUME, REFRESH, AS, SET FRESHNESS, ADD, MODIFY, DROP or RENAME TO");

	if (!at_end(p))
		syntax_error(p, "the end of the statement");
	return a;
}

static MtDropStmt *
parse_drop(MtParser *p)
{
	MtDropStmt *d = palloc0(sizeof(MtDropStmt));
	int			location = cur(p)->location;

	expect_word(p, "drop", "DROP");
	if ((token_is_word(cur(p), "temporary") || token_is_word(cur(p), "temp")) &&
		token_is_word(peek(p, 1), "materialized"))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("DROP TEMPORARY MATERIALIZED TABLE is not supported"),
				 errdetail("Materialized tables are always permanent."),
				 mt_errposition(p->source, location)));
	expect_materialized_table(p, "DROP");
	if (accept_word(p, "if"))
	{
		expect_word(p, "exists", "EXISTS");
		d->if_exists = true;
	}
	d->name = parse_qualified_name(p);
	if (!at_end(p))
		syntax_error(p, "the end of the statement");
	return d;
}

/*
 * SHOW MATERIALIZED TABLES [{FROM | IN} [catalog.]db] [[NOT] LIKE 'pattern']
 * SHOW CREATE MATERIALIZED TABLE name
 */
static MtShowStmt *
parse_show(MtParser *p, MtStatementKind *kind)
{
	MtShowStmt *s = palloc0(sizeof(MtShowStmt));

	expect_word(p, "show", "SHOW");
	if (accept_word(p, "create"))
	{
		*kind = MT_STMT_SHOW_CREATE;
		expect_materialized_table(p, "SHOW CREATE");
		s->name = parse_qualified_name(p);
	}
	else
	{
		*kind = MT_STMT_SHOW_TABLES;
		if (!token_is_word(cur(p), "materialized") || !token_is_word(peek(p, 1), "tables"))
			syntax_error(p, "MATERIALIZED TABLES or CREATE MATERIALIZED TABLE");
		advance(p);
		advance(p);
		if (accept_word(p, "from") || accept_word(p, "in"))
		{
			MtQualifiedName *qn = parse_qualified_name(p);

			if (qn->catalog)
				ereport(ERROR,
						(errcode(ERRCODE_SYNTAX_ERROR),
						 errmsg("improper qualified name (too many dotted names)"),
						 errhint("A database is named [catalog.]database."),
						 mt_errposition(p->source, qn->location)));
			s->schema = qn;
		}
		if (accept_word(p, "not"))
		{
			s->not_like = true;
			expect_word(p, "like", "LIKE");
			s->like = parse_string(p, "a pattern string");
		}
		else if (accept_word(p, "like"))
			s->like = parse_string(p, "a pattern string");
	}
	if (!at_end(p))
		syntax_error(p, "the end of the statement");
	return s;
}

/* DESCRIBE | DESC [EXTENDED] name */
static MtDescribeStmt *
parse_describe(MtParser *p)
{
	MtDescribeStmt *d = palloc0(sizeof(MtDescribeStmt));

	if (!accept_word(p, "describe"))
		expect_word(p, "desc", "DESCRIBE");
	/* a table may be called "extended": then it is the last word */
	if (token_is_word(cur(p), "extended") && !at_last(p))
	{
		advance(p);
		d->extended = true;
	}
	d->name = parse_qualified_name(p);
	if (!at_end(p))
		syntax_error(p, "the end of the statement");
	return d;
}

static MtStatement *
parse_statement(MtParser *p, int start, int end)
{
	MtStatement *st = palloc0(sizeof(MtStatement));
	MtToken    *first = &p->toks[start];

	p->pos = start;
	p->stmt_end = end;
	p->gt_used = 0;
	p->in_alter = false;
	st->source = p->source;
	st->location = first->location;
	st->length = p->toks[end].location - first->location;

	if (token_is_word(first, "create"))
	{
		st->kind = MT_STMT_CREATE;
		st->create = parse_create(p);
	}
	else if (token_is_word(first, "alter"))
	{
		st->kind = MT_STMT_ALTER;
		st->alter = parse_alter(p);
	}
	else if (token_is_word(first, "drop"))
	{
		st->kind = MT_STMT_DROP;
		st->drop = parse_drop(p);
	}
	else if (token_is_word(first, "show"))
		st->show = parse_show(p, &st->kind);
	else if (token_is_word(first, "describe") || token_is_word(first, "desc"))
	{
		st->kind = MT_STMT_DESCRIBE;
		st->describe = parse_describe(p);
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("syntax error at or near \"%s\"", token_text(p, first)),
				 errdetail("materialized_table.execute() runs CREATE, ALTER, DROP, SHOW and DESCRIBE statements of materialized tables."),
				 mt_errposition(p->source, first->location)));
	return st;
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
 * tokenize
 *		The tokens of the whole text, with Flink's `quoted identifiers`
 *		turned into "quoted identifiers".
 *
 * The scanner sees a backtick as an operator.  Tokens are read left to
 * right; at the first operator holding a backtick, the pair is rewritten
 * in place (same length, so positions are unchanged) and scanning starts
 * again at that operator: what follows the backtick (an apostrophe in
 * `it's`, say) is only ever scanned once it is rewritten.
 */
static void
tokenize(MtParser *p)
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


/*
 * mt_parse
 *		Parse the text of execute() into a list of MtStatement.
 *
 * Statements are separated by semicolons found by the scanner, so a
 * semicolon inside a string, a dollar quote or a comment separates nothing.
 * All statements are parsed before any runs.
 */
List *
mt_parse(const char *source)
{
	MtParser	p = {0};
	List	   *result = NIL;
	int			start;
	int			i;

	p.source = source;
	p.buf = pstrdup(source);
	p.buflen = strlen(source);
	tokenize(&p);

	start = 0;
	for (i = 0; i < p.ntoks; i++)
	{
		MtToken    *t = &p.toks[i];

		if (t->type == ';' || t->type == 0)
		{
			if (i > start)
				result = lappend(result, parse_statement(&p, start, i));
			start = i + 1;
		}
	}
	if (result == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("no statement to execute"),
				 errhint("Pass CREATE, ALTER or DROP MATERIALIZED TABLE statements to materialized_table.execute().")));
	return result;
}

/* ---------------------------------------------------------------------
 * Pieces of native statements (see hooks/native.c)
 * ---------------------------------------------------------------------
 */

/*
 * mt_parse_fragment
 *		One clause of the CREATE grammar, given as the value of an option
 *		of CREATE MATERIALIZED VIEW.
 *
 * text holds the client's statement up to the option's string literal,
 * then the value at [start, end): so every location, and every position
 * in an error, is the value's place in the client's own text.  Only the
 * value is read.
 */
MtFragment *
mt_parse_fragment(MtFragmentKind kind, const char *text, int start, int end)
{
	MtParser	p = {0};
	MtFragment *f = palloc0(sizeof(MtFragment));

	p.source = text;
	p.buf = pstrdup(text);
	p.buflen = strlen(text);
	Assert(end <= p.buflen);
	p.buf = blank_outside(&p, start, end, NULL);
	p.buf[end] = '\0';
	p.buflen = end;
	tokenize(&p);
	p.pos = 0;
	while (p.pos < p.ntoks && p.toks[p.pos].location < start)
		p.pos++;
	p.stmt_end = p.ntoks - 1;

	switch (kind)
	{
		case MT_FRAGMENT_ELEMENTS:
			{
				MtElements	el = {0};

				if (token_is_char(cur(&p), '('))
					parse_element_list(&p, &el);
				else
				{
					do
					{
						parse_element(&p, &el);
					} while (accept_char(&p, ','));
				}
				f->columns = el.columns;
				f->primary_key = el.primary_key;
				f->watermark = el.watermark;
				break;
			}
		case MT_FRAGMENT_NAMES:
			if (token_is_char(cur(&p), '('))
				f->names = parse_identifier_list(&p, "a column name");
			else
			{
				do
				{
					f->names = lappend(f->names, makeString(parse_identifier(&p, "a column name")));
				} while (accept_char(&p, ','));
			}
			break;
		case MT_FRAGMENT_DISTRIBUTION:
			f->distribution = palloc0(sizeof(MtDistribution));
			f->distribution->location = start;
			if (accept_word(&p, "by") || token_is_word(cur(&p), "hash") ||
				token_is_word(cur(&p), "range") || token_is_char(cur(&p), '('))
				parse_distribution_by(&p, f->distribution);
			else if (token_is_word(cur(&p), "into"))
				f->distribution->buckets = parse_buckets(&p);
			else
				syntax_error(&p, "HASH, RANGE, a column list or INTO");
			break;
		case MT_FRAGMENT_START_MODE:
			f->start_mode = parse_start_mode_value(&p);
			break;
	}
	if (!at_end(&p))
		syntax_error(&p, "the end of the option's value");
	return f;
}

/*
 * mt_parse_query_text
 *		The query of a native statement, at [start, end) of source, parsed
 *		as the query after AS is.
 */
MtQuery *
mt_parse_query_text(const char *source, int start, int end)
{
	MtParser	p = {0};

	p.source = source;
	p.buf = pstrdup(source);
	p.buflen = strlen(source);
	return query_in_range(&p, start, end);
}
