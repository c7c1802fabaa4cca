/*-------------------------------------------------------------------------
 *
 * src/commands/execute.c
 *	  materialized_table.execute() and execute_query(): the front door for
 *	  Flink's statements.
 *
 * execute() runs statements that change tables (CREATE, ALTER, DROP) and
 * returns the command tag of the last, or the text SHOW CREATE gives;
 * execute_query() runs one statement that returns rows (SHOW MATERIALIZED
 * TABLES, SHOW CREATE, DESCRIBE) and returns them (see commands/describe.c).
 *
 * The text is parsed whole before anything runs; then each statement runs
 * in turn, in the caller's transaction.  An error context callback turns
 * error positions into positions inside that text, so psql shows the
 * statement with a cursor under the fault.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "mt/commands/commands.h"
#include "mt/parser/ddl_parser.h"
#include "mt/materialized_table.h"

PG_FUNCTION_INFO_V1(mt_execute);
PG_FUNCTION_INFO_V1(mt_execute_query);

static void
execute_error_callback(void *arg)
{
	const char *source = (const char *) arg;
	int			position = geterrposition();

	if (position > 0)
	{
		errposition(0);
		internalerrposition(position);
		internalerrquery(source);
	}
}

/* The statement text, which may not be NULL. */
static char *
statement_argument(FunctionCallInfo fcinfo, const char *function)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the statement passed to %s cannot be null", function)));
	mt_require_preload();
	if (!mt_extension_ready())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"%s\" is not ready", MT_EXTENSION_NAME)));
	return text_to_cstring(PG_GETARG_TEXT_PP(0));
}

static const char *
run_statement(MtStatement *st)
{
	switch (st->kind)
	{
		case MT_STMT_CREATE:
			return mt_create_command(st);
		case MT_STMT_ALTER:
			return mt_alter_command(st);
		case MT_STMT_DROP:
			return mt_drop_command(st);
		case MT_STMT_SHOW_CREATE:
			return mt_show_create_command(st);
		case MT_STMT_SHOW_TABLES:
		case MT_STMT_DESCRIBE:
			/* refused before anything ran */
			break;
	}
	return NULL;
}

Datum
mt_execute(PG_FUNCTION_ARGS)
{
	char	   *source = statement_argument(fcinfo, "materialized_table.execute()");
	ErrorContextCallback errcallback;
	const char *tag = NULL;
	List	   *statements;
	ListCell   *lc;

	errcallback.callback = execute_error_callback;
	errcallback.arg = source;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;

	statements = mt_parse(source);
	foreach(lc, statements)
	{
		MtStatement *st = lfirst(lc);

		if (MT_STATEMENT_RETURNS_ROWS(st))
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("%s returns rows", st->kind == MT_STMT_DESCRIBE ?
							"DESCRIBE" : "SHOW MATERIALIZED TABLES"),
					 errhint("Run it with SELECT * FROM materialized_table.execute_query(...)."),
					 mt_errposition(source, st->location)));
	}
	foreach(lc, statements)
	{
		tag = run_statement(lfirst(lc));
		CommandCounterIncrement();
	}

	error_context_stack = errcallback.previous;
	PG_RETURN_TEXT_P(cstring_to_text(tag));
}

/*
 * mt_execute_query
 *		materialized_table.execute_query(statement text): the rows of one
 *		SHOW or DESCRIBE statement.
 */
Datum
mt_execute_query(PG_FUNCTION_ARGS)
{
	char	   *source = statement_argument(fcinfo, "materialized_table.execute_query()");
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ErrorContextCallback errcallback;
	List	   *statements;
	MtStatement *st;

	errcallback.callback = execute_error_callback;
	errcallback.arg = source;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;

	statements = mt_parse(source);
	st = linitial(statements);
	if (list_length(statements) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("materialized_table.execute_query() runs one statement"),
				 mt_errposition(source, ((MtStatement *) lsecond(statements))->location)));
	if (!MT_STATEMENT_RETURNS_ROWS(st) && st->kind != MT_STMT_SHOW_CREATE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("materialized_table.execute_query() runs SHOW and DESCRIBE statements"),
				 errhint("Run CREATE, ALTER and DROP MATERIALIZED TABLE with materialized_table.execute()."),
				 mt_errposition(source, st->location)));

	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != MT_QUERY_NATTS)
		elog(ERROR, "materialized_table.execute_query() has %d columns, not %d",
			 rsinfo->setDesc->natts, MT_QUERY_NATTS);
	mt_query_command(st, rsinfo->setResult, rsinfo->setDesc);

	error_context_stack = errcallback.previous;
	return (Datum) 0;
}
