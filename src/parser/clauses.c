/*-------------------------------------------------------------------------
 *
 * src/parser/clauses.c
 *	  The column list and the clauses of CREATE and ALTER MATERIALIZED
 *	  TABLE.
 *
 * A column list holds columns (physical, computed or metadata), a primary
 * key and a watermark; ALTER ... ADD and MODIFY take the same elements.
 * The clauses after it are WITH options, FRESHNESS, DISTRIBUTED and
 * START_MODE (the statements themselves are in parser/ddl_parser.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <limits.h>

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"

#include "mt/materialized_table.h"
#include "mt/parser/flink_types.h"
#include "mt/parser/parser_int.h"

/* ---------------------------------------------------------------------
 * Types
 * ---------------------------------------------------------------------
 */

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
			mt_syntax_error(p, "\">\"");
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
					(void) mt_parse_identifier(p, "a field name");
				(void) parse_type_text(p);
				if (accept_word(p, "comment"))
					(void) mt_parse_string(p, "a comment string");
			} while (accept_char(p, ','));
			if (!accept_op_char(p, '>'))
				mt_syntax_error(p, "\">\"");
		}
		else
		{
			mt_expect_char(p, '(');
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
				appendStringInfoString(&args, mt_token_text(p, t));
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
			mt_expect_char(p, ']');
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
			mt_syntax_error(p, "a data type");
		advance(p);
	}
	if (words.len == 0)
		mt_syntax_error(p, "a data type");

	result = mt_flink_type_to_pg(words.data, array_suffix);
	if (result == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("type \"%s\" is not supported", words.data),
				 errdetail("PostgreSQL has no counterpart of this Flink type."),
				 mt_errposition(p->source, location)));
	return result;
}

/* ---------------------------------------------------------------------
 * The column list
 * ---------------------------------------------------------------------
 */

/* [CONSTRAINT name] PRIMARY KEY [(cols)] NOT ENFORCED */
static void
expect_not_enforced(MtParser *p, int location)
{
	if (accept_word(p, "not"))
	{
		if (accept_word(p, "enforced"))
			return;
		mt_syntax_error(p, "ENFORCED");
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
	mt_expect_word(p, "primary", "PRIMARY KEY");
	mt_expect_word(p, "key", "KEY");
	pk->columns = mt_parse_identifier_list(p, "a column name");
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
	mt_expect_word(p, "watermark", "WATERMARK");
	mt_expect_word(p, "for", "FOR");
	wm->column = mt_parse_identifier(p, "a column name");
	mt_expect_word(p, "as", "AS");
	from = p->pos;
	to = mt_expression_end(p, stop);
	wm->expr = mt_parse_expression_tokens(p, from, to, &wm->expr_text);
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
		col->place_after = mt_parse_identifier(p, "a column name");
	}
	else
		return;
	if (!p->in_alter)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("column positions (FIRST, AFTER) are only allowed in ALTER MATERIALIZED TABLE"),
				 mt_errposition(p->source, location)));
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
	col->name = mt_parse_identifier(p, "a column name");
	col->kind = MT_COLUMN_PHYSICAL;

	if (accept_word(p, "as"))
	{
		int			from = p->pos;
		int			to = mt_expression_end(p, stop);

		col->kind = MT_COLUMN_COMPUTED;
		col->expr = mt_parse_expression_tokens(p, from, to, &col->expr_text);
		col->expr_location = p->toks[from].location;
		p->pos = to;
	}
	else if (!at_type_stop(p))
	{
		int			type_location = cur(p)->location;
		MtErrorAt	at;

		col->type_text = parse_type_text(p);
		/* errors about the translated type point at the type as written */
		mt_error_at_push(&at, p->source, type_location, false);
		col->type_name = typeStringToTypeName(col->type_text);
		mt_error_at_pop(&at);
		col->type_name->location = type_location;
		if (accept_word(p, "not"))
		{
			mt_expect_word(p, "null", "NULL");
			col->not_null = true;
		}
		else
			(void) accept_word(p, "null");
		if (accept_word(p, "metadata"))
		{
			col->kind = MT_COLUMN_METADATA;
			if (accept_word(p, "from"))
				col->metadata_key = mt_parse_string(p, "a metadata key string");
			if (accept_word(p, "virtual"))
				col->is_virtual = true;
		}
	}

	if (token_is_word(cur(p), "constraint") || token_is_word(cur(p), "primary"))
	{
		int			location = cur(p)->location;

		if (accept_word(p, "constraint"))
			col->constraint_name = mt_parse_identifier(p, "a constraint name");
		if (token_is_word(cur(p), "unique"))
			unique_not_supported(p, location);
		mt_expect_word(p, "primary", "PRIMARY KEY");
		mt_expect_word(p, "key", "KEY");
		expect_not_enforced(p, location);
		col->primary_key = true;
	}
	else if (token_is_word(cur(p), "unique"))
		unique_not_supported(p, cur(p)->location);

	if (accept_word(p, "comment"))
		col->comment = mt_parse_string(p, "a comment string");
	parse_column_place(p, col);
	return col;
}

/* One item of a column list, or of ALTER ... ADD/MODIFY (...). */
void
mt_parse_element(MtParser *p, MtElements *el)
{
	MtToken    *t = cur(p);
	int			location = t->location;

	if (token_is_word(t, "constraint") || token_is_word(t, "primary"))
	{
		char	   *name = NULL;

		if (accept_word(p, "constraint"))
			name = mt_parse_identifier(p, "a constraint name");
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

void
mt_parse_element_list(MtParser *p, MtElements *el)
{
	mt_expect_char(p, '(');
	do
	{
		mt_parse_element(p, el);
	} while (accept_char(p, ','));
	mt_expect_char(p, ')');
}

/* ---------------------------------------------------------------------
 * WITH options, FRESHNESS, DISTRIBUTED, START_MODE
 * ---------------------------------------------------------------------
 */

static char *
parse_option_value(MtParser *p)
{
	MtToken    *t = cur(p);
	char	   *v;

	if (at_end(p))
		mt_syntax_error(p, "an option value");
	if (t->type == SCONST || t->type == FCONST || t->type == IDENT)
		v = pstrdup(t->str);
	else if (t->type == ICONST)
		v = psprintf("%d", t->ival);
	else if (t->keyword)
		v = pstrdup(t->keyword);
	else
		mt_syntax_error(p, "an option value");
	advance(p);
	return v;
}

/* ('key' = 'value' [, ...]) */
List *
mt_parse_options(MtParser *p)
{
	List	   *options = NIL;

	mt_expect_char(p, '(');
	do
	{
		MtOption   *opt = palloc0(sizeof(MtOption));
		ListCell   *lc;

		opt->location = cur(p)->location;
		if (cur(p)->type == SCONST)
			opt->key = mt_parse_string(p, "an option key");
		else
		{
			/* unquoted keys may be dotted: sink.parallelism */
			StringInfoData key;

			initStringInfo(&key);
			do
			{
				appendStringInfo(&key, "%s%s", key.len ? "." : "",
								 mt_parse_identifier(p, "an option key"));
			} while (accept_char(p, '.'));
			opt->key = key.data;
		}
		if (!accept_char(p, '='))
			mt_syntax_error(p, "\"=\"");
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
	mt_expect_char(p, ')');
	return options;
}


/*
 * FRESHNESS = INTERVAL '<n>' { SECOND[S] | MINUTE[S] | HOUR[S] | DAY[S] }
 * (the FRESHNESS word already consumed)
 */
MtFreshness *
mt_parse_freshness(MtParser *p)
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
		mt_syntax_error(p, "\"=\"");
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
	value = mt_parse_string(p, "a quoted number such as '1'");

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
							mt_token_text(p, cur(p))),
					 errhint("Use SECOND, MINUTE, HOUR or DAY."),
					 mt_errposition(p->source, cur(p)->location)));
		mt_syntax_error(p, "SECOND, MINUTE, HOUR or DAY");
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

int
mt_parse_buckets(MtParser *p)
{
	MtToken    *t = cur(p);
	int			n;

	mt_expect_word(p, "into", "INTO");
	t = cur(p);
	if (at_end(p) || t->type != ICONST || t->ival <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the number of buckets must be a positive integer"),
				 mt_errposition(p->source, t->location)));
	n = t->ival;
	advance(p);
	mt_expect_word(p, "buckets", "BUCKETS");
	return n;
}

/* [HASH | RANGE] (cols) [INTO n BUCKETS], after DISTRIBUTED BY */
void
mt_parse_distribution_by(MtParser *p, MtDistribution *d)
{
	if (accept_word(p, "hash"))
		d->kind = MT_DISTRIBUTION_HASH;
	else if (accept_word(p, "range"))
		d->kind = MT_DISTRIBUTION_RANGE;
	d->columns = mt_parse_identifier_list(p, "a column name");
	if (token_is_word(cur(p), "into"))
		d->buckets = mt_parse_buckets(p);
}

/*
 * DISTRIBUTED BY [HASH | RANGE] (cols) [INTO n BUCKETS]
 * DISTRIBUTED INTO n BUCKETS
 * (DISTRIBUTED, or ALTER's DISTRIBUTION, already consumed)
 */
MtDistribution *
mt_parse_distribution(MtParser *p, int location)
{
	MtDistribution *d = palloc0(sizeof(MtDistribution));

	d->location = location;
	if (accept_word(p, "by"))
		mt_parse_distribution_by(p, d);
	else if (token_is_word(cur(p), "into"))
		d->buckets = mt_parse_buckets(p);
	else
		mt_syntax_error(p, "BY or INTO");
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
MtStartMode *
mt_parse_start_mode(MtParser *p)
{
	if (!accept_equals(p))
		mt_syntax_error(p, "\"=\"");
	return mt_parse_start_mode_value(p);
}

MtStartMode *
mt_parse_start_mode_value(MtParser *p)
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
		mt_syntax_error(p, "FROM_BEGINNING, FROM_NOW, FROM_TIMESTAMP, RESUME_OR_FROM_BEGINNING, RESUME_OR_FROM_NOW or RESUME_OR_FROM_TIMESTAMP");
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
			mt_syntax_error(p, "\")\"");
		to = cur(p)->location;
		while (to > from && isspace((unsigned char) p->source[to - 1]))
			to--;
		text = psprintf("%s%.*s", sm->mode, to - from, p->source + from);
	}
	else if (strcmp(sm->mode, "FROM_TIMESTAMP") == 0 ||
			 strcmp(sm->mode, "RESUME_OR_FROM_TIMESTAMP") == 0)
		mt_syntax_error(p, "\"(\" and a timestamp");
	if (strcmp(sm->mode, "FROM_BEGINNING") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("START_MODE = %s is not supported", text),
				 errdetail("The sources of a materialized table are PostgreSQL tables, read whole: there is no stream offset to start or resume from, and every table starts FROM_BEGINNING."),
				 errhint("Leave START_MODE out or write START_MODE = FROM_BEGINNING; to keep only recent rows, filter them in the query."),
				 mt_errposition(p->source, sm->location)));
	return sm;
}
