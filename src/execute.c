/*-------------------------------------------------------------------------
 *
 * execute.c
 *	  materialized_table.execute(): the front door for Flink's statements.
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
#include "utils/builtins.h"

#include "commands.h"
#include "ddl_parser.h"
#include "materialized_table.h"

PG_FUNCTION_INFO_V1(mt_execute);

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
	}
	return NULL;
}

Datum
mt_execute(PG_FUNCTION_ARGS)
{
	char	   *source = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ErrorContextCallback errcallback;
	const char *tag = NULL;
	List	   *statements;
	ListCell   *lc;

	mt_require_preload();
	if (!mt_extension_ready())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"%s\" is not ready", MT_EXTENSION_NAME)));

	errcallback.callback = execute_error_callback;
	errcallback.arg = source;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;

	statements = mt_parse(source);
	foreach(lc, statements)
	{
		tag = run_statement(lfirst(lc));
		CommandCounterIncrement();
	}

	error_context_stack = errcallback.previous;
	PG_RETURN_TEXT_P(cstring_to_text(tag));
}
