/*-------------------------------------------------------------------------
 *
 * src/parser/ddl_parser.c
 *	  Parser for Flink's MATERIALIZED TABLE statements.
 *
 * PostgreSQL's grammar cannot be extended, so the statements arrive as text
 * through materialized_table.execute().  We tokenize that text with the core
 * scanner (the same one the server uses, so quoting, comments, dollar quotes
 * and keywords behave exactly as in SQL) and walk the tokens with a small
 * recursive-descent parser.  This file holds the statements and the entry
 * points of mt/parser/ddl_parser.h; the token stream is parser/tokens.c,
 * the embedded SQL parser/embedded_sql.c, the column list and the clauses
 * parser/clauses.c (see mt/parser/parser_int.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"

#include "mt/parser/ddl_parser.h"
#include "mt/parser/parser_int.h"
#include "mt/materialized_table.h"

/* ---------------------------------------------------------------------
 * Statements
 * ---------------------------------------------------------------------
 */

static void
duplicate_clause(MtParser *p, const char *clause, int location)
{
	ereport(ERROR,
			(errcode(ERRCODE_SYNTAX_ERROR),
			 errmsg("%s specified more than once", clause),
			 mt_errposition(p->source, location)));
}

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
		mt_syntax_error(p, "MATERIALIZED TABLE");
	}
	advance(p);
	advance(p);
}

static MtCreateStmt *
parse_create(MtParser *p)
{
	MtCreateStmt *c = palloc0(sizeof(MtCreateStmt));
	int			location = cur(p)->location;

	mt_expect_word(p, "create", "CREATE");
	if (token_is_word(cur(p), "temporary") || token_is_word(cur(p), "temp"))
	{
		if (token_is_word(peek(p, 1), "materialized"))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("CREATE TEMPORARY MATERIALIZED TABLE is not supported"),
					 errdetail("Materialized tables are always permanent."),
					 mt_errposition(p->source, location)));
		mt_syntax_error(p, "MATERIALIZED TABLE");
	}
	if (accept_word(p, "or"))
	{
		if (token_is_word(cur(p), "replace"))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("CREATE OR REPLACE MATERIALIZED TABLE is not supported"),
					 errhint("Use CREATE OR ALTER MATERIALIZED TABLE."),
					 mt_errposition(p->source, location)));
		mt_expect_word(p, "alter", "ALTER");
		c->or_alter = true;
	}
	expect_materialized_table(p, "CREATE");
	c->name = mt_parse_qualified_name(p);

	if (token_is_char(cur(p), '('))
	{
		MtElements	el = {0};

		mt_parse_element_list(p, &el);
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
			mt_syntax_error(p, "AS followed by a query");
		if (accept_word(p, "as"))
		{
			c->query = mt_parse_query(p);
			break;
		}
		else if (accept_word(p, "comment"))
		{
			if (c->comment)
				duplicate_clause(p, "COMMENT", clause_location);
			c->comment = mt_parse_string(p, "a comment string");
		}
		else if (accept_word(p, "distributed"))
		{
			if (c->distribution)
				duplicate_clause(p, "DISTRIBUTED", clause_location);
			c->distribution = mt_parse_distribution(p, clause_location);
		}
		else if (accept_word(p, "partitioned"))
		{
			if (c->partition_keys)
				duplicate_clause(p, "PARTITIONED BY", clause_location);
			mt_expect_word(p, "by", "BY");
			c->partition_location = clause_location;
			c->partition_keys = mt_parse_identifier_list(p, "a column name");
		}
		else if (accept_word(p, "with"))
		{
			if (c->options)
				duplicate_clause(p, "WITH", clause_location);
			c->options = mt_parse_options(p);
		}
		else if (accept_word(p, "freshness"))
		{
			if (c->freshness)
				duplicate_clause(p, "FRESHNESS", clause_location);
			c->freshness = mt_parse_freshness(p);
		}
		else if (accept_word(p, "start_mode"))
		{
			if (c->start_mode)
				duplicate_clause(p, "START_MODE", clause_location);
			c->start_mode = mt_parse_start_mode(p);
		}
		else if (accept_word(p, "refresh_mode"))
		{
			if (c->refresh_mode != MT_MODE_UNSET)
				duplicate_clause(p, "REFRESH_MODE", clause_location);
			if (!accept_equals(p))
				mt_syntax_error(p, "\"=\"");
			c->refresh_mode_location = cur(p)->location;
			if (accept_word(p, "continuous"))
				c->refresh_mode = MT_MODE_CONTINUOUS;
			else if (accept_word(p, "full"))
				c->refresh_mode = MT_MODE_FULL;
			else
				mt_syntax_error(p, "CONTINUOUS or FULL");
		}
		else
			mt_syntax_error(p, "COMMENT, DISTRIBUTED BY, PARTITIONED BY, WITH, FRESHNESS, REFRESH_MODE, START_MODE or AS");
	}
	return c;
}

static MtAlterStmt *
parse_alter(MtParser *p)
{
	MtAlterStmt *a = palloc0(sizeof(MtAlterStmt));
	MtToken    *t;

	mt_expect_word(p, "alter", "ALTER");
	expect_materialized_table(p, "ALTER");
	a->name = mt_parse_qualified_name(p);
	t = cur(p);
	a->action_location = t->location;
	p->in_alter = true;

	if (accept_word(p, "suspend"))
		a->action = MT_ALTER_SUSPEND;
	else if (accept_word(p, "resume"))
	{
		a->action = MT_ALTER_RESUME;
		if (accept_word(p, "with"))
			a->options = mt_parse_options(p);
	}
	else if (accept_word(p, "refresh"))
	{
		a->action = MT_ALTER_REFRESH;
		if (accept_word(p, "partition"))
		{
			mt_expect_char(p, '(');
			do
			{
				MtOption   *opt = palloc0(sizeof(MtOption));

				opt->location = cur(p)->location;
				opt->key = mt_parse_identifier(p, "a partition column");
				if (!accept_equals(p))
					mt_syntax_error(p, "\"=\"");
				if (cur(p)->type != SCONST)
					ereport(ERROR,
							(errcode(ERRCODE_SYNTAX_ERROR),
							 errmsg("partition values must be string literals"),
							 errhint("Write the value in single quotes, as in (ds = '2024-06-28')."),
							 mt_errposition(p->source, cur(p)->location)));
				opt->value = mt_parse_string(p, "a string literal");
				a->partition_spec = lappend(a->partition_spec, opt);
			} while (accept_char(p, ','));
			mt_expect_char(p, ')');
		}
	}
	else if (token_is_word(t, "as") || token_is_word(t, "start_mode"))
	{
		if (accept_word(p, "start_mode"))
			a->start_mode = mt_parse_start_mode(p);
		mt_expect_word(p, "as", "AS followed by a query");
		a->action = MT_ALTER_AS;
		a->query = mt_parse_query(p);
	}
	else if (accept_word(p, "rename"))
	{
		a->action = MT_ALTER_RENAME;
		mt_expect_word(p, "to", "TO");
		a->new_name = mt_parse_qualified_name(p);
	}
	else if (accept_word(p, "set"))
	{
		a->action = MT_ALTER_SET_FRESHNESS;
		mt_expect_word(p, "freshness", "FRESHNESS");
		a->freshness = mt_parse_freshness(p);
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
			a->distribution = mt_parse_distribution(p, location);
		}
		else
		{
			if (token_is_char(cur(p), '('))
				mt_parse_element_list(p, &el);
			else
				mt_parse_element(p, &el);
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
			mt_expect_word(p, "key", "KEY");
			a->drop_target = MT_DROP_PRIMARY_KEY;
		}
		else if (accept_word(p, "constraint"))
		{
			a->drop_target = MT_DROP_CONSTRAINT;
			a->drop_constraint = mt_parse_identifier(p, "a constraint name");
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
			a->drop_columns = mt_parse_identifier_list(p, "a column name");
		}
		else
		{
			a->drop_target = MT_DROP_COLUMNS;
			a->drop_columns = list_make1(makeString(mt_parse_identifier(p, "a column name")));
		}
	}
	else
		mt_syntax_error(p, "SUSPEND, RESUME, REFRESH, AS, SET FRESHNESS, ADD, MODIFY, DROP or RENAME TO");

	if (!at_end(p))
		mt_syntax_error(p, "the end of the statement");
	return a;
}

static MtDropStmt *
parse_drop(MtParser *p)
{
	MtDropStmt *d = palloc0(sizeof(MtDropStmt));
	int			location = cur(p)->location;

	mt_expect_word(p, "drop", "DROP");
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
		mt_expect_word(p, "exists", "EXISTS");
		d->if_exists = true;
	}
	d->name = mt_parse_qualified_name(p);
	if (!at_end(p))
		mt_syntax_error(p, "the end of the statement");
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

	mt_expect_word(p, "show", "SHOW");
	if (accept_word(p, "create"))
	{
		*kind = MT_STMT_SHOW_CREATE;
		expect_materialized_table(p, "SHOW CREATE");
		s->name = mt_parse_qualified_name(p);
	}
	else
	{
		*kind = MT_STMT_SHOW_TABLES;
		if (!token_is_word(cur(p), "materialized") || !token_is_word(peek(p, 1), "tables"))
			mt_syntax_error(p, "MATERIALIZED TABLES or CREATE MATERIALIZED TABLE");
		advance(p);
		advance(p);
		if (accept_word(p, "from") || accept_word(p, "in"))
		{
			MtQualifiedName *qn = mt_parse_qualified_name(p);

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
			mt_expect_word(p, "like", "LIKE");
			s->like = mt_parse_string(p, "a pattern string");
		}
		else if (accept_word(p, "like"))
			s->like = mt_parse_string(p, "a pattern string");
	}
	if (!at_end(p))
		mt_syntax_error(p, "the end of the statement");
	return s;
}

/* DESCRIBE | DESC [EXTENDED] name */
static MtDescribeStmt *
parse_describe(MtParser *p)
{
	MtDescribeStmt *d = palloc0(sizeof(MtDescribeStmt));

	if (!accept_word(p, "describe"))
		mt_expect_word(p, "desc", "DESCRIBE");
	/* a table may be called "extended": then it is the last word */
	if (token_is_word(cur(p), "extended") && !at_last(p))
	{
		advance(p);
		d->extended = true;
	}
	d->name = mt_parse_qualified_name(p);
	if (!at_end(p))
		mt_syntax_error(p, "the end of the statement");
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
				 errmsg("syntax error at or near \"%s\"", mt_token_text(p, first)),
				 errdetail("materialized_table.execute() runs CREATE, ALTER, DROP, SHOW and DESCRIBE statements of materialized tables."),
				 mt_errposition(p->source, first->location)));
	return st;
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
	mt_tokenize(&p);

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
	p.buf = mt_blank_outside(&p, start, end, NULL);
	p.buf[end] = '\0';
	p.buflen = end;
	mt_tokenize(&p);
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
					mt_parse_element_list(&p, &el);
				else
				{
					do
					{
						mt_parse_element(&p, &el);
					} while (accept_char(&p, ','));
				}
				f->columns = el.columns;
				f->primary_key = el.primary_key;
				f->watermark = el.watermark;
				break;
			}
		case MT_FRAGMENT_NAMES:
			if (token_is_char(cur(&p), '('))
				f->names = mt_parse_identifier_list(&p, "a column name");
			else
			{
				do
				{
					f->names = lappend(f->names, makeString(mt_parse_identifier(&p, "a column name")));
				} while (accept_char(&p, ','));
			}
			break;
		case MT_FRAGMENT_DISTRIBUTION:
			f->distribution = palloc0(sizeof(MtDistribution));
			f->distribution->location = start;
			if (accept_word(&p, "by") || token_is_word(cur(&p), "hash") ||
				token_is_word(cur(&p), "range") || token_is_char(cur(&p), '('))
				mt_parse_distribution_by(&p, f->distribution);
			else if (token_is_word(cur(&p), "into"))
				f->distribution->buckets = mt_parse_buckets(&p);
			else
				mt_syntax_error(&p, "HASH, RANGE, a column list or INTO");
			break;
		case MT_FRAGMENT_START_MODE:
			f->start_mode = mt_parse_start_mode_value(&p);
			break;
	}
	if (!at_end(&p))
		mt_syntax_error(&p, "the end of the option's value");
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
	return mt_query_in_range(&p, start, end);
}
