/*-------------------------------------------------------------------------
 *
 * src/hooks/native.c
 *	  The statements on materialized tables spelt as PostgreSQL parses
 *	  them: MATERIALIZED VIEW statements with materialized_table options.
 *
 *	  CREATE MATERIALIZED VIEW name WITH (materialized_table.freshness =
 *		'1 minute', ...) AS query		CREATE [OR ALTER] MATERIALIZED TABLE
 *	  REFRESH MATERIALIZED VIEW [CONCURRENTLY] name
 *										ALTER ... REFRESH
 *	  ALTER MATERIALIZED VIEW name SET (...) / RESET (...)
 *										SET FRESHNESS, SUSPEND, RESUME, ADD /
 *										MODIFY / DROP PRIMARY KEY, options
 *	  ALTER MATERIALIZED VIEW name RENAME TO new_name
 *										ALTER ... RENAME TO
 *	  DROP MATERIALIZED VIEW [IF EXISTS] name [, ...] [CASCADE]
 *										DROP MATERIALIZED TABLE
 *
 * The utility hook hands them here before PostgreSQL runs them (hooks/guards.c).
 * This is a router, not a second implementation: each statement becomes
 * the parse tree of the Flink statement that says the same (MtStatement)
 * and runs through the same command code as execute().  Its "source" is
 * the client's own query string, and every location an offset into it,
 * so errors carry a position (not an internal one) under the token that
 * caused them: a name, an option, a token inside an option's value (which
 * the Flink grammar of that clause parses, see mt_parse_fragment), the
 * query.
 *
 * A CREATE MATERIALIZED VIEW without any materialized_table option, and
 * the other statements on anything that is not a materialized table, are
 * PostgreSQL's own and pass untouched.  PostgreSQL's parse analysis has
 * already analyzed the query of a CREATE (so a query PostgreSQL refuses
 * for a materialized view, one reading a temporary table say, is refused
 * with its message); the reloption namespace "materialized_table", which
 * it would refuse only when it creates the view, never reaches it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "parser/scansup.h"
#include "parser/scanner.h"
#include "parser/gram.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/varlena.h"

#include "mt/catalog/catalog.h"
#include "mt/commands/commands.h"
#include "mt/parser/ddl_parser.h"
#include "mt/catalog/freshness.h"
#include "mt/materialized_table.h"
#include "mt/hooks/native.h"
#include "mt/utils/relations.h"

#define NATIVE_NAMESPACE	MT_EXTENSION_NAME

#define DATE_FORMATTER_PREFIX "partition.fields."
#define DATE_FORMATTER_SUFFIX ".date-formatter"

/* The options of CREATE MATERIALIZED VIEW in NATIVE_NAMESPACE. */
static const char *const create_options[] = {
	"freshness", "refresh_mode", "partitioned_by", "date_formatter", "primary_key",
	"comment", "distribution", "columns", "start_mode", "or_alter", NULL
};

/* ... and of ALTER MATERIALIZED VIEW ... SET / RESET */
static const char *const alter_options[] = {
	"freshness", "refresh_status", "primary_key", "date_formatter", "start_mode", NULL
};

/* A token of the client's statement. */
typedef struct NativeToken
{
	int			type;
	int			location;		/* byte offset into the query string */
	const char *keyword;
} NativeToken;

/* The client's statement: the query string, where it is, its tokens. */
typedef struct Native
{
	const char *source;			/* the whole query string */
	int			location;		/* of the statement */
	int			end;			/* of the statement */
	NativeToken *toks;
	int			ntoks;			/* the last is the end, type 0 */
} Native;

/* ---------------------------------------------------------------------
 * The client's text
 * ---------------------------------------------------------------------
 */

static void
native_init(Native *n, PlannedStmt *pstmt, const char *queryString)
{
	core_yy_extra_type yyextra;
	core_yyscan_t scanner;
	int			alloc = 64;
	char	   *text;

	n->source = queryString ? queryString : "";
	n->location = pstmt->stmt_location > 0 ? pstmt->stmt_location : 0;
	if (n->location > (int) strlen(n->source))
		n->location = 0;
	n->end = pstmt->stmt_len > 0 ? n->location + pstmt->stmt_len : strlen(n->source);

	/* the statement's tokens, as the server's scanner sees them */
	text = pnstrdup(n->source + n->location, n->end - n->location);
	n->toks = palloc(alloc * sizeof(NativeToken));
	n->ntoks = 0;
	scanner = scanner_init(text, &yyextra, &ScanKeywords, ScanKeywordTokens);
	for (;;)
	{
		core_YYSTYPE yylval;
		int			yylloc = 0;
		int			type;

		memset(&yylval, 0, sizeof(yylval));
		type = core_yylex(&yylval, &yylloc, scanner);
		if (n->ntoks + 1 >= alloc)
		{
			alloc *= 2;
			n->toks = repalloc(n->toks, alloc * sizeof(NativeToken));
		}
		n->toks[n->ntoks].type = type;
		n->toks[n->ntoks].location = type == 0 ? n->end : n->location + yylloc;
		n->toks[n->ntoks].keyword = NULL;
		if (type != 0 && type != IDENT && type != SCONST && type != FCONST &&
			type != ICONST && type != Op && type != PARAM && type != BCONST &&
			type != XCONST && type != UIDENT && type != USCONST && type >= 256 &&
			type != TYPECAST && type != DOT_DOT && type != COLON_EQUALS &&
			type != EQUALS_GREATER && type != LESS_EQUALS && type != GREATER_EQUALS &&
			type != NOT_EQUALS)
			n->toks[n->ntoks].keyword = yylval.keyword;
		n->ntoks++;
		if (type == 0)
			break;
	}
	scanner_finish(scanner);
}

static bool
token_is_keyword(NativeToken *t, const char *word)
{
	return t->keyword != NULL && strcmp(t->keyword, word) == 0;
}

/* The index of the token at location, or -1. */
static int
token_at(Native *n, int location)
{
	int			i;

	for (i = 0; i < n->ntoks; i++)
		if (n->toks[i].location == location)
			return i;
	return -1;
}

/* The location of the first top-level keyword word, or -1. */
static int
keyword_location(Native *n, const char *word)
{
	int			depth = 0;
	int			i;

	for (i = 0; i < n->ntoks; i++)
	{
		NativeToken *t = &n->toks[i];

		if (t->type == '(')
			depth++;
		else if (t->type == ')')
			depth--;
		else if (depth == 0 && token_is_keyword(t, word))
			return t->location;
	}
	return -1;
}

static int
position_at(Native *n, int location)
{
	return mt_errposition(n->source, location >= 0 ? location : n->location);
}

/* An MtStatement of the client's statement. */
static MtStatement *
native_statement(Native *n, MtStatementKind kind)
{
	MtStatement *st = palloc0(sizeof(MtStatement));

	st->kind = kind;
	st->source = n->source;
	st->location = n->location;
	st->length = n->end - n->location;
	return st;
}

static MtQualifiedName *
name_of(RangeVar *rv)
{
	MtQualifiedName *qn = palloc0(sizeof(MtQualifiedName));

	qn->catalog = rv->catalogname;
	qn->schema = rv->schemaname;
	qn->name = rv->relname;
	qn->location = rv->location;
	return qn;
}

/* The statements change things: refused where PostgreSQL refuses its own. */
static void
prevent_if_read_only(const char *command)
{
	PreventCommandIfReadOnly(command);
	PreventCommandIfParallelMode(command);
	PreventCommandDuringRecovery(command);
}

/* ---------------------------------------------------------------------
 * Options
 * ---------------------------------------------------------------------
 */

static bool
is_ours(DefElem *def)
{
	return def->defnamespace != NULL && strcmp(def->defnamespace, NATIVE_NAMESPACE) == 0;
}

static bool
in_list(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (strcmp(*list, name) == 0)
			return true;
	return false;
}

static void
unknown_option(Native *n, DefElem *def, const char *const *known, const char *statement)
{
	StringInfoData list;

	initStringInfo(&list);
	for (; *known; known++)
		appendStringInfo(&list, "%s%s.%s", list.len ? ", " : "", NATIVE_NAMESPACE, *known);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unrecognized parameter \"%s.%s\"", NATIVE_NAMESPACE, def->defname),
			 errdetail("%s of a materialized table takes: %s.", statement, list.data),
			 position_at(n, def->location)));
}

/* An option's value as text ("true" for a bare option, as PostgreSQL reads it). */
static char *
option_value(DefElem *def)
{
	return def->arg ? defGetString(def) : pstrdup("true");
}

/* The key a WITH option of the Flink statement has: [namespace.]name. */
static char *
option_key(DefElem *def)
{
	return def->defnamespace ? psprintf("%s.%s", def->defnamespace, def->defname) :
		pstrdup(def->defname);
}

/* Errors without a position of their own point at the option. */
#define WITH_POSITION(n_, location_, code_) \
	do { \
		MtErrorAt	at_; \
		mt_error_at_push(&at_, (n_)->source, (location_), true); \
		code_; \
		mt_error_at_pop(&at_); \
	} while (0)

static bool
option_bool(Native *n, DefElem *def)
{
	bool		result = false;

	WITH_POSITION(n, def->location, result = defGetBoolean(def));
	return result;
}

/*
 * A value of the Flink grammar (a column list, a distribution, ...) in an
 * option: parsed where it stands in the client's text.  The literal is the
 * token after "namespace.name =": the value replaces it, starting one byte
 * in (or after a dollar quote's tag), so that positions inside a plain
 * literal are exact, and inside one with escapes within the literal.
 */
static MtFragment *
option_fragment(Native *n, DefElem *def, MtFragmentKind kind)
{
	char	   *value = option_value(def);
	int			i = token_at(n, def->location);
	int			literal = def->location;
	int			offset = 0;
	char	   *text;
	MtFragment *f = NULL;

	/* ns . name = value */
	if (i >= 0 && i + 4 < n->ntoks && n->toks[i + 3].type == '=')
	{
		literal = n->toks[i + 4].location;
		if (n->source[literal] == '\'')
			offset = 1;
		else if (n->source[literal] == '$')
		{
			const char *close = strchr(n->source + literal + 1, '$');

			if (close)
				offset = close - (n->source + literal) + 1;
		}
		else if (n->toks[i + 4].type == SCONST)
			offset = 1;			/* E'...', U&'...': within the literal */
	}
	text = palloc(literal + offset + strlen(value) + 1);
	memcpy(text, n->source, literal);
	memset(text + literal, ' ', offset);
	strcpy(text + literal + offset, value);
	WITH_POSITION(n, literal,
				  f = mt_parse_fragment(kind, text, literal + offset,
										literal + offset + strlen(value)));
	return f;
}

/*
 * materialized_table.freshness = '5 minutes': an interval, in the largest
 * unit it is a whole number of, as FRESHNESS = INTERVAL '5' MINUTE says.
 */
static MtFreshness *
option_freshness(Native *n, DefElem *def)
{
	char	   *value = option_value(def);
	MtFreshness *f = palloc0(sizeof(MtFreshness));
	Interval   *interval = NULL;
	int64		usecs;
	int64		seconds;

	f->location = def->location;
	WITH_POSITION(n, def->location,
				  interval = DatumGetIntervalP(DirectFunctionCall3(interval_in,
																   CStringGetDatum(value),
																   ObjectIdGetDatum(InvalidOid),
																   Int32GetDatum(-1))));
	if (interval->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("materialized table freshness \"%s\" is not a number of seconds, minutes, hours or days",
						value),
				 errhint("Write it in seconds, minutes, hours or days, as in '5 minutes'."),
				 position_at(n, def->location)));
	usecs = interval->time + (int64) interval->day * USECS_PER_DAY;
	if (usecs <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("materialized table freshness must be positive"),
				 errdetail("The interval \"%s\" is %s.", value, usecs == 0 ? "zero" : "negative"),
				 position_at(n, def->location)));
	if (usecs % USECS_PER_SEC != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("materialized table freshness \"%s\" is not a whole number of seconds", value),
				 position_at(n, def->location)));
	seconds = usecs / USECS_PER_SEC;
	if (seconds % SECS_PER_DAY == 0)
		f->value = seconds / SECS_PER_DAY, f->unit = MT_UNIT_DAY;
	else if (seconds % SECS_PER_HOUR == 0)
		f->value = seconds / SECS_PER_HOUR, f->unit = MT_UNIT_HOUR;
	else if (seconds % SECS_PER_MINUTE == 0)
		f->value = seconds / SECS_PER_MINUTE, f->unit = MT_UNIT_MINUTE;
	else
		f->value = seconds, f->unit = MT_UNIT_SECOND;
	if (f->value > INT_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("materialized table freshness \"%s\" is out of range", value),
				 position_at(n, def->location)));
	return f;
}

static MtRefreshMode
option_refresh_mode(Native *n, DefElem *def)
{
	char	   *value = option_value(def);

	if (pg_strcasecmp(value, "continuous") == 0)
		return MT_MODE_CONTINUOUS;
	if (pg_strcasecmp(value, "full") == 0)
		return MT_MODE_FULL;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value for parameter \"%s.%s\": \"%s\"", NATIVE_NAMESPACE,
					def->defname, value),
			 errhint("Valid values are \"continuous\" and \"full\"."),
			 position_at(n, def->location)));
	return MT_MODE_UNSET;		/* keep compiler quiet */
}

/*
 * materialized_table.date_formatter = 'ds=yyyy-MM-dd, hr=HH': one
 * 'partition.fields.<col>.date-formatter' option per column.  A comma
 * inside a pattern goes in the pattern's own quotes ('','').
 */
static List *
option_date_formatters(Native *n, DefElem *def)
{
	char	   *value = option_value(def);
	List	   *result = NIL;
	char	   *p = value;

	for (;;)
	{
		char	   *start = p;
		char	   *eq;
		char	   *column;
		char	   *pattern;
		bool		quoted = false;
		MtOption   *opt;

		/* up to a comma outside the pattern's quotes */
		while (*p && (quoted || *p != ','))
		{
			if (*p == '\'')
				quoted = !quoted;
			p++;
		}
		eq = memchr(start, '=', p - start);
		if (eq == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for parameter \"%s.%s\": \"%s\"", NATIVE_NAMESPACE,
							def->defname, value),
					 errdetail("Each date-formatter is column=pattern, as in 'ds=yyyy-MM-dd'; several are separated by commas."),
					 position_at(n, def->location)));
		column = pnstrdup(start, eq - start);
		pattern = pnstrdup(eq + 1, p - eq - 1);
		column = downcase_identifier(column, strlen(column), false, false);
		/* trim the column's spaces; a quoted one keeps its case */
		while (isspace((unsigned char) *column))
			column++;
		while (*column && isspace((unsigned char) column[strlen(column) - 1]))
			column[strlen(column) - 1] = '\0';
		while (isspace((unsigned char) *pattern))
			pattern++;
		while (*pattern && isspace((unsigned char) pattern[strlen(pattern) - 1]))
			pattern[strlen(pattern) - 1] = '\0';
		{
			char	   *raw = pnstrdup(start, eq - start);
			char	   *r = raw;

			while (isspace((unsigned char) *r))
				r++;
			if (*r == '"')
			{
				List	   *names = NIL;

				if (SplitIdentifierString(r, '.', &names) && list_length(names) == 1)
					column = pstrdup(linitial(names));
			}
		}
		opt = palloc0(sizeof(MtOption));
		opt->key = psprintf(DATE_FORMATTER_PREFIX "%s" DATE_FORMATTER_SUFFIX, column);
		opt->value = pattern;
		opt->location = def->location;
		result = lappend(result, opt);
		if (*p == '\0')
			break;
		p++;
	}
	return result;
}

static bool
is_date_formatter(const char *key)
{
	size_t		len = strlen(key);

	return len > strlen(DATE_FORMATTER_PREFIX) + strlen(DATE_FORMATTER_SUFFIX) &&
		strncmp(key, DATE_FORMATTER_PREFIX, strlen(DATE_FORMATTER_PREFIX)) == 0 &&
		strcmp(key + len - strlen(DATE_FORMATTER_SUFFIX), DATE_FORMATTER_SUFFIX) == 0;
}

/* A WITH option, once: keys are compared as the Flink statement's are. */
static List *
add_option(Native *n, List *options, MtOption *opt)
{
	ListCell   *lc;

	foreach(lc, options)
		if (strcmp(((MtOption *) lfirst(lc))->key, opt->key) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("parameter \"%s\" specified more than once", opt->key),
					 position_at(n, opt->location)));
	return lappend(options, opt);
}

static MtOption *
option_of(DefElem *def)
{
	MtOption   *opt = palloc0(sizeof(MtOption));

	opt->key = option_key(def);
	opt->value = option_value(def);
	opt->location = def->location;
	return opt;
}

/* ---------------------------------------------------------------------
 * CREATE MATERIALIZED VIEW
 * ---------------------------------------------------------------------
 */

static void
not_with_create(Native *n, int location, const char *what, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s is not supported for a materialized table", what),
			 hint ? errhint("%s", hint) : 0,
			 position_at(n, location)));
}

/*
 * The query: what follows the first AS outside parentheses (nothing before
 * it can hold one, AS being reserved), up to a WITH [NO] DATA that ends the
 * statement.
 */
static MtQuery *
create_query(Native *n, IntoClause *into)
{
	int			start = -1;
	int			end = n->end;
	int			depth = 0;
	int			last = n->ntoks - 1;	/* the end */
	int			i;

	for (i = 0; i < n->ntoks - 1; i++)
	{
		NativeToken *t = &n->toks[i];

		if (t->type == '(')
			depth++;
		else if (t->type == ')')
			depth--;
		else if (depth == 0 && token_is_keyword(t, "as"))
		{
			start = n->toks[i + 1].location;
			break;
		}
	}
	if (start < 0 || start >= n->end)
		elog(ERROR, "no query in CREATE MATERIALIZED VIEW");
	if (last >= 2 && token_is_keyword(&n->toks[last - 1], "data") &&
		(token_is_keyword(&n->toks[last - 2], "with") ||
		 (last >= 3 && token_is_keyword(&n->toks[last - 2], "no") &&
		  token_is_keyword(&n->toks[last - 3], "with"))))
	{
		int			with = token_is_keyword(&n->toks[last - 2], "with") ? last - 2 : last - 3;

		end = n->toks[with].location;
		if (into->skipData)
			not_with_create(n, end, "WITH NO DATA",
							"A materialized table is filled when it is created; leave WITH NO DATA out.");
	}
	return mt_parse_query_text(n->source, start, end);
}

/*
 * native_create
 *		CREATE MATERIALIZED VIEW ... WITH (materialized_table.* ...) AS query:
 *		CREATE [OR ALTER] MATERIALIZED TABLE, each clause an option.
 */
static bool
native_create(Native *n, CreateTableAsStmt *ctas, QueryCompletion *qc)
{
	IntoClause *into = ctas->into;
	MtStatement *st;
	MtCreateStmt *c;
	bool		ours = false;
	ListCell   *lc;
	const char *tag;

	if (ctas->objtype != OBJECT_MATVIEW)
		return false;
	foreach(lc, into->options)
		if (is_ours(lfirst(lc)))
			ours = true;
	if (!ours)
		return false;

	prevent_if_read_only("CREATE MATERIALIZED VIEW");
	st = native_statement(n, MT_STMT_CREATE);
	c = st->create = palloc0(sizeof(MtCreateStmt));
	c->name = name_of(into->rel);

	if (into->colNames)
		not_with_create(n, into->rel->location, "a column name list",
						"Name the columns in the query, or declare them with materialized_table.columns.");
	if (into->accessMethod)
		not_with_create(n, keyword_location(n, "using"), "USING",
						"A materialized table is a heap table.");
	if (into->tableSpaceName)
		not_with_create(n, keyword_location(n, "tablespace"), "TABLESPACE", NULL);

	foreach(lc, into->options)
	{
		DefElem    *def = lfirst(lc);
		ListCell   *lc2;

		/* each option once, as PostgreSQL's WITH has it */
		for_each_cell(lc2, into->options, lnext(into->options, lc))
		{
			DefElem    *other = lfirst(lc2);

			if (strcmp(def->defname, other->defname) == 0 &&
				((def->defnamespace == NULL && other->defnamespace == NULL) ||
				 (def->defnamespace && other->defnamespace &&
				  strcmp(def->defnamespace, other->defnamespace) == 0)))
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_OBJECT),
						 errmsg("parameter \"%s\" specified more than once", option_key(other)),
						 position_at(n, other->location)));
		}
		if (!is_ours(def))
		{
			c->options = add_option(n, c->options, option_of(def));
			continue;
		}
		if (!in_list(create_options, def->defname))
			unknown_option(n, def, create_options, "CREATE MATERIALIZED VIEW");
		if (strcmp(def->defname, "freshness") == 0)
			c->freshness = option_freshness(n, def);
		else if (strcmp(def->defname, "refresh_mode") == 0)
		{
			c->refresh_mode = option_refresh_mode(n, def);
			c->refresh_mode_location = def->location;
		}
		else if (strcmp(def->defname, "partitioned_by") == 0)
		{
			c->partition_keys = option_fragment(n, def, MT_FRAGMENT_NAMES)->names;
			c->partition_location = def->location;
		}
		else if (strcmp(def->defname, "date_formatter") == 0)
		{
			foreach(lc2, option_date_formatters(n, def))
				c->options = add_option(n, c->options, lfirst(lc2));
		}
		else if (strcmp(def->defname, "primary_key") == 0)
		{
			if (c->primary_key)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
						 errmsg("multiple primary keys are not allowed"),
						 position_at(n, def->location)));
			c->primary_key = palloc0(sizeof(MtPrimaryKey));
			c->primary_key->columns = option_fragment(n, def, MT_FRAGMENT_NAMES)->names;
			c->primary_key->location = def->location;
		}
		else if (strcmp(def->defname, "comment") == 0)
			c->comment = option_value(def);
		else if (strcmp(def->defname, "distribution") == 0)
		{
			c->distribution = option_fragment(n, def, MT_FRAGMENT_DISTRIBUTION)->distribution;
			c->distribution->location = def->location;
		}
		else if (strcmp(def->defname, "columns") == 0)
		{
			MtFragment *f = option_fragment(n, def, MT_FRAGMENT_ELEMENTS);

			c->has_column_list = true;
			c->columns = f->columns;
			c->watermark = f->watermark;
			if (f->primary_key && c->primary_key)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
						 errmsg("multiple primary keys are not allowed"),
						 position_at(n, f->primary_key->location)));
			if (f->primary_key)
				c->primary_key = f->primary_key;
		}
		else if (strcmp(def->defname, "start_mode") == 0)
			c->start_mode = option_fragment(n, def, MT_FRAGMENT_START_MODE)->start_mode;
		else if (strcmp(def->defname, "or_alter") == 0)
			c->or_alter = option_bool(n, def);
	}
	c->query = create_query(n, into);

	/* IF NOT EXISTS: as PostgreSQL, a relation of that name is left alone */
	if (ctas->if_not_exists)
	{
		Oid			nspid;

		if (c->or_alter)
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("IF NOT EXISTS and %s.or_alter cannot be used together", NATIVE_NAMESPACE),
					 position_at(n, into->rel->location)));
		nspid = mt_resolve_namespace(st, c->name);
		if (OidIsValid(get_relname_relid(c->name->name, nspid)))
		{
			ereport(NOTICE,
					(errcode(ERRCODE_DUPLICATE_TABLE),
					 errmsg("relation \"%s\" already exists, skipping", c->name->name)));
			if (qc)
				SetQueryCompletion(qc, CMDTAG_CREATE_MATERIALIZED_VIEW, 0);
			return true;
		}
	}

	tag = mt_create_command(st);
	if (qc)
		SetQueryCompletion(qc, strcmp(tag, "ALTER MATERIALIZED TABLE") == 0 ?
						   CMDTAG_ALTER_MATERIALIZED_VIEW : CMDTAG_CREATE_MATERIALIZED_VIEW, 0);
	return true;
}

/* ---------------------------------------------------------------------
 * REFRESH, ALTER, DROP
 * ---------------------------------------------------------------------
 */

/* The materialized table a name of the statement refers to, or InvalidOid. */
static Oid
materialized_table_named(RangeVar *rv)
{
	Oid			relid = RangeVarGetRelid(rv, NoLock, true);

	return (OidIsValid(relid) && mt_is_materialized_table(relid)) ? relid : InvalidOid;
}

static void
run_alter(Native *n, RangeVar *rv, MtAlterAction action, int location, MtAlterStmt *a)
{
	MtStatement *st = native_statement(n, MT_STMT_ALTER);

	if (a == NULL)
		a = palloc0(sizeof(MtAlterStmt));
	a->name = name_of(rv);
	a->action = action;
	a->action_location = location;
	st->alter = a;
	(void) mt_alter_command(st);
	CommandCounterIncrement();
}

/* REFRESH MATERIALIZED VIEW [CONCURRENTLY] name: readers are never blocked */
static bool
native_refresh(Native *n, RefreshMatViewStmt *stmt, QueryCompletion *qc)
{
	if (!OidIsValid(materialized_table_named(stmt->relation)))
		return false;
	prevent_if_read_only("REFRESH MATERIALIZED VIEW");
	if (stmt->skipData)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("WITH NO DATA is not supported for a materialized table"),
				 errdetail("A materialized table always holds its query's rows."),
				 errhint("Use ALTER MATERIALIZED VIEW ... SET (%s.refresh_status = 'suspended') to stop its refreshes.",
						 NATIVE_NAMESPACE),
				 position_at(n, keyword_location(n, "with"))));
	run_alter(n, stmt->relation, MT_ALTER_REFRESH, stmt->relation->location, NULL);
	if (qc)
		SetQueryCompletion(qc, CMDTAG_REFRESH_MATERIALIZED_VIEW, 0);
	return true;
}

static void
not_with_alter(Native *n, DefElem *def, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("parameter \"%s.%s\" cannot be changed by ALTER MATERIALIZED VIEW",
					NATIVE_NAMESPACE, def->defname),
			 errhint("%s", hint),
			 position_at(n, def->location)));
}

/*
 * native_alter
 *		ALTER MATERIALIZED VIEW name SET (...) / RESET (...) of a
 *		materialized table: each option the action of ALTER MATERIALIZED
 *		TABLE that changes it.  WITH options (storage parameters, the
 *		date-formatters, ...) change together, as CREATE OR ALTER changes
 *		them.
 */
static bool
native_alter(Native *n, AlterTableStmt *stmt, QueryCompletion *qc)
{
	Oid			relid;
	MtTable    *mt;
	List	   *options;
	bool		options_changed = false;
	int			options_location = -1;
	MtFreshness *freshness = NULL;
	int			status_location = -1;
	MtStatus	status = MT_STATUS_INITIALIZING;
	DefElem    *primary_key = NULL;
	bool		drop_primary_key = false;
	ListCell   *lc;

	if (stmt->objtype != OBJECT_MATVIEW)
		return false;
	relid = materialized_table_named(stmt->relation);
	if (!OidIsValid(relid))
		return false;
	prevent_if_read_only("ALTER MATERIALIZED VIEW");
	mt = mt_catalog_lookup(relid, false);
	options = list_copy(mt->options);

	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);
		bool		reset = (cmd->subtype == AT_ResetRelOptions);
		ListCell   *lc2;

		if (cmd->subtype != AT_SetRelOptions && cmd->subtype != AT_ResetRelOptions)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("ALTER MATERIALIZED VIEW only sets and resets the options of materialized table \"%s\"",
							get_rel_name(relid)),
					 errhint("Use ALTER TABLE for this change."),
					 position_at(n, stmt->relation->location)));
		foreach(lc2, (List *) cmd->def)
		{
			DefElem    *def = lfirst(lc2);

			if (!is_ours(def))
			{
				/* a WITH option of the table: replaced, added or removed */
				MtOption   *opt = option_of(def);
				ListCell   *lc3;

				foreach(lc3, options)
					if (strcmp(((MtOption *) lfirst(lc3))->key, opt->key) == 0)
						options = foreach_delete_current(options, lc3);
				if (!reset)
					options = lappend(options, opt);
				options_changed = true;
				if (options_location < 0)
					options_location = def->location;
				continue;
			}
			if (!in_list(alter_options, def->defname))
			{
				if (in_list(create_options, def->defname))
				{
					if (strcmp(def->defname, "refresh_mode") == 0)
						not_with_alter(n, def, "A new freshness switches the refresh mode across materialized_table.freshness_threshold; otherwise drop the table and create it again.");
					else if (strcmp(def->defname, "columns") == 0)
						not_with_alter(n, def, "Use ALTER MATERIALIZED TABLE ... ADD, MODIFY or DROP through materialized_table.execute().");
					else if (strcmp(def->defname, "comment") == 0)
						not_with_alter(n, def, "Use COMMENT ON TABLE.");
					else if (strcmp(def->defname, "or_alter") == 0)
						not_with_alter(n, def, "It is an option of CREATE MATERIALIZED VIEW.");
					else
						not_with_alter(n, def, "It is fixed when the table is created: drop the table and create it again.");
				}
				unknown_option(n, def, alter_options, "ALTER MATERIALIZED VIEW");
			}
			if (strcmp(def->defname, "freshness") == 0)
			{
				if (reset)
				{
					int			value;
					MtFreshnessUnit unit;
					MtRefreshMode mode;

					/* the default of the table's mode */
					mt_freshness_resolve(NULL, mt->refresh_mode, n->source, def->location,
										 &value, &unit, &mode);
					freshness = palloc0(sizeof(MtFreshness));
					freshness->value = value;
					freshness->unit = unit;
					freshness->location = def->location;
				}
				else
					freshness = option_freshness(n, def);
			}
			else if (strcmp(def->defname, "refresh_status") == 0)
			{
				char	   *value = reset ? "activated" : option_value(def);

				if (pg_strcasecmp(value, "suspended") == 0)
					status = MT_STATUS_SUSPENDED;
				else if (pg_strcasecmp(value, "activated") == 0)
					status = MT_STATUS_ACTIVATED;
				else
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("invalid value for parameter \"%s.%s\": \"%s\"",
									NATIVE_NAMESPACE, def->defname, value),
							 errhint("Valid values are \"suspended\" and \"activated\"."),
							 position_at(n, def->location)));
				status_location = def->location;
			}
			else if (strcmp(def->defname, "primary_key") == 0)
			{
				primary_key = reset ? NULL : def;
				drop_primary_key = reset;
			}
			else if (strcmp(def->defname, "date_formatter") == 0)
			{
				ListCell   *lc3;

				foreach(lc3, options)
					if (is_date_formatter(((MtOption *) lfirst(lc3))->key))
						options = foreach_delete_current(options, lc3);
				if (!reset)
					options = list_concat(options, option_date_formatters(n, def));
				options_changed = true;
				if (options_location < 0)
					options_location = def->location;
			}
			else if (strcmp(def->defname, "start_mode") == 0 && !reset)
				(void) option_fragment(n, def, MT_FRAGMENT_START_MODE);
		}
	}

	/* each change as the ALTER MATERIALIZED TABLE action that makes it */
	if (options_changed)
	{
		MtAlterStmt *a = palloc0(sizeof(MtAlterStmt));

		a->options = options;
		run_alter(n, stmt->relation, MT_ALTER_SET_OPTIONS, options_location, a);
	}
	if (freshness)
	{
		MtAlterStmt *a = palloc0(sizeof(MtAlterStmt));

		a->freshness = freshness;
		run_alter(n, stmt->relation, MT_ALTER_SET_FRESHNESS, freshness->location, a);
	}
	if (primary_key || drop_primary_key)
	{
		MtAlterStmt *a = palloc0(sizeof(MtAlterStmt));
		bool		has_key = mt_primary_key_columns(relid) != NIL;

		if (primary_key)
		{
			a->primary_key = palloc0(sizeof(MtPrimaryKey));
			a->primary_key->columns = option_fragment(n, primary_key, MT_FRAGMENT_NAMES)->names;
			a->primary_key->location = primary_key->location;
			run_alter(n, stmt->relation, has_key ? MT_ALTER_MODIFY : MT_ALTER_ADD,
					  primary_key->location, a);
		}
		else
		{
			a->drop_target = MT_DROP_PRIMARY_KEY;
			run_alter(n, stmt->relation, MT_ALTER_DROP, stmt->relation->location, a);
		}
	}
	if (status_location >= 0)
		run_alter(n, stmt->relation,
				  status == MT_STATUS_SUSPENDED ? MT_ALTER_SUSPEND : MT_ALTER_RESUME,
				  status_location, NULL);
	if (qc)
		SetQueryCompletion(qc, CMDTAG_ALTER_MATERIALIZED_VIEW, 0);
	return true;
}

/* ALTER MATERIALIZED VIEW name RENAME TO new_name */
static bool
native_rename(Native *n, RenameStmt *stmt, QueryCompletion *qc)
{
	MtAlterStmt *a;

	if (stmt->renameType != OBJECT_MATVIEW || stmt->relation == NULL ||
		!OidIsValid(materialized_table_named(stmt->relation)))
		return false;
	prevent_if_read_only("ALTER MATERIALIZED VIEW");
	a = palloc0(sizeof(MtAlterStmt));
	a->new_name = palloc0(sizeof(MtQualifiedName));
	a->new_name->name = stmt->newname;
	/* the new name is the statement's last token */
	a->new_name->location = n->ntoks >= 2 ? n->toks[n->ntoks - 2].location : n->location;
	run_alter(n, stmt->relation, MT_ALTER_RENAME, a->new_name->location, a);
	if (qc)
		SetQueryCompletion(qc, CMDTAG_ALTER_MATERIALIZED_VIEW, 0);
	return true;
}

/*
 * native_drop
 *		DROP MATERIALIZED VIEW of materialized tables (and maybe views):
 *		DROP MATERIALIZED TABLE of each materialized table, with CASCADE if
 *		given; PostgreSQL drops the others, as a statement naming only them.
 */
static bool
native_drop(Native *n, PlannedStmt **pstmt, DropStmt *stmt, QueryCompletion *qc)
{
	List	   *ours = NIL;
	List	   *rest = NIL;
	ListCell   *lc;

	if (stmt->removeType != OBJECT_MATVIEW)
		return false;
	foreach(lc, stmt->objects)
	{
		if (OidIsValid(materialized_table_named(makeRangeVarFromNameList(lfirst(lc)))))
			ours = lappend(ours, lfirst(lc));
		else
			rest = lappend(rest, lfirst(lc));
	}
	if (ours == NIL)
		return false;
	prevent_if_read_only("DROP MATERIALIZED VIEW");

	foreach(lc, ours)
	{
		MtStatement *st = native_statement(n, MT_STMT_DROP);
		RangeVar   *rv = makeRangeVarFromNameList(lfirst(lc));

		rv->location = n->location;
		st->drop = palloc0(sizeof(MtDropStmt));
		st->drop->name = name_of(rv);
		st->drop->if_exists = stmt->missing_ok;
		st->drop->behavior = stmt->behavior;
		(void) mt_drop_command(st);
		CommandCounterIncrement();
	}
	if (rest == NIL)
	{
		if (qc)
			SetQueryCompletion(qc, CMDTAG_DROP_MATERIALIZED_VIEW, 0);
		return true;
	}
	/* the materialized views it names besides are PostgreSQL's */
	*pstmt = copyObject(*pstmt);
	((DropStmt *) (*pstmt)->utilityStmt)->objects = rest;
	return false;
}

/*
 * mt_native_utility
 *		Run a native statement on materialized tables; true if it was one
 *		(then the statement is done), false to let PostgreSQL run it, maybe
 *		as a new statement (*pstmt replaced: the part of a DROP that names
 *		no materialized table).
 */
bool
mt_native_utility(PlannedStmt **pstmt, const char *queryString, QueryCompletion *qc)
{
	Node	   *parsetree = (*pstmt)->utilityStmt;
	Native		n;

	switch (nodeTag(parsetree))
	{
		case T_CreateTableAsStmt:
			if (((CreateTableAsStmt *) parsetree)->objtype != OBJECT_MATVIEW)
				return false;
			break;
		case T_RefreshMatViewStmt:
			break;
		case T_AlterTableStmt:
			if (((AlterTableStmt *) parsetree)->objtype != OBJECT_MATVIEW)
				return false;
			break;
		case T_RenameStmt:
			if (((RenameStmt *) parsetree)->renameType != OBJECT_MATVIEW)
				return false;
			break;
		case T_DropStmt:
			if (((DropStmt *) parsetree)->removeType != OBJECT_MATVIEW)
				return false;
			break;
		default:
			return false;
	}

	native_init(&n, *pstmt, queryString);
	switch (nodeTag(parsetree))
	{
		case T_CreateTableAsStmt:
			return native_create(&n, (CreateTableAsStmt *) parsetree, qc);
		case T_RefreshMatViewStmt:
			return native_refresh(&n, (RefreshMatViewStmt *) parsetree, qc);
		case T_AlterTableStmt:
			return native_alter(&n, (AlterTableStmt *) parsetree, qc);
		case T_RenameStmt:
			return native_rename(&n, (RenameStmt *) parsetree, qc);
		case T_DropStmt:
			return native_drop(&n, pstmt, (DropStmt *) parsetree, qc);
		default:
			return false;
	}
}
