/*-------------------------------------------------------------------------
 *
 * src/utils/extension.c
 *	  The extension in this database: is it here and ready, its internal
 *	  schema and owner, running as that owner or as a table's owner, the
 *	  pinned search_path of the extension's own SQL, and error positions
 *	  into the statement text of execute().
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "commands/extension.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "mt/utils/extension.h"

/* Was the library loaded at server start, with its hooks and workers? */
static bool mt_preloaded = false;

/* _PG_init, when loaded through shared_preload_libraries */
void
mt_extension_set_preloaded(void)
{
	mt_preloaded = true;
}

/*
 * mt_require_preload
 *		The statements on materialized tables need the library's hooks.
 */
void
mt_require_preload(void)
{
	if (!mt_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("materialized_table can only be used when loaded through shared_preload_libraries"),
				 errhint("Add materialized_table to shared_preload_libraries in postgresql.conf and restart the server.")));
}

/*
 * mt_errposition
 *		errposition() for a byte offset into the statement text of execute().
 *
 * execute()'s error callback turns it into an internal position into that
 * text, which psql shows with a cursor under the offending token.
 */
int
mt_errposition(const char *source, int location)
{
	if (source == NULL || location < 0)
		return 0;
	return errposition(pg_mbstrlen_with_len(source, location) + 1);
}

/* the error context callback of mt_error_at_push */
static void
error_at_callback(void *arg)
{
	MtErrorAt  *at = (MtErrorAt *) arg;

	if (!at->keep_own_position || geterrposition() <= 0)
		(void) mt_errposition(at->source, at->location);
}

/*
 * mt_error_at_push
 *		Until mt_error_at_pop, errors point at location in source (the
 *		statement text of execute(), or the client's): those PostgreSQL
 *		raises while checking a piece of the statement (an option, a type,
 *		a query's privileges) then point at that piece.  With
 *		keep_own_position, an error that has a position keeps it.
 */
void
mt_error_at_push(MtErrorAt *at, const char *source, int location, bool keep_own_position)
{
	at->source = source;
	at->location = location;
	at->keep_own_position = keep_own_position;
	at->callback.callback = error_at_callback;
	at->callback.arg = at;
	at->callback.previous = error_context_stack;
	error_context_stack = &at->callback;
}

void
mt_error_at_pop(MtErrorAt *at)
{
	error_context_stack = at->callback.previous;
}

Oid
mt_internal_namespace(void)
{
	return get_namespace_oid(MT_INTERNAL_SCHEMA, true);
}

/*
 * mt_extension_ready
 *		Is the extension installed in this database and not being created?
 *
 * Hooks run in every database of the cluster; they must pass everything
 * through untouched where the extension is absent or half-installed.
 */
bool
mt_extension_ready(void)
{
	if (!IsTransactionState())
		return false;
	if (!OidIsValid(mt_internal_namespace()))
		return false;
	if (creating_extension &&
		CurrentExtensionObject == get_extension_oid(MT_EXTENSION_NAME, true))
		return false;
	return true;
}

Oid
mt_extension_owner(void)
{
	Oid			nsp = mt_internal_namespace();
	HeapTuple	tup;
	Oid			owner = BOOTSTRAP_SUPERUSERID;

	/* the extension's script created this schema, as the extension's owner */
	tup = SearchSysCache1(NAMESPACEOID, ObjectIdGetDatum(nsp));
	if (HeapTupleIsValid(tup))
	{
		owner = ((Form_pg_namespace) GETSTRUCT(tup))->nspowner;
		ReleaseSysCache(tup);
	}
	return owner;
}

/*
 * mt_as_extension_owner_begin
 *		The extension's internal tables are private to its owner: read and
 *		write them with that role's rights, whoever runs the statement.
 *		An error restores the caller's user with the (sub)transaction.
 */
void
mt_as_extension_owner_begin(MtSavedUser *saved)
{
	GetUserIdAndSecContext(&saved->userid, &saved->sec_context);
	SetUserIdAndSecContext(mt_extension_owner(),
						   saved->sec_context | SECURITY_LOCAL_USERID_CHANGE);
	saved->nestlevel = mt_pin_search_path();
}

void
mt_as_extension_owner_end(MtSavedUser *saved)
{
	mt_unpin_search_path(saved->nestlevel);
	SetUserIdAndSecContext(saved->userid, saved->sec_context);
}

/*
 * mt_pin_search_path
 *		search_path = pg_catalog, pg_temp until mt_unpin_search_path (or
 *		the end of the (sub)transaction): the extension's own SQL, run in a
 *		session whose search_path a user chose, must not find that user's
 *		operators, functions or types before PostgreSQL's (pg_temp is never
 *		searched for those).  Returns the GUC nest level to pass back.
 */
int
mt_pin_search_path(void)
{
	int			nestlevel = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	return nestlevel;
}

void
mt_unpin_search_path(int nestlevel)
{
	AtEOXact_GUC(false, nestlevel);
}

/*
 * mt_portable_text_begin
 *		The settings under which values are written as text for another
 *		session, perhaps on another node, to read back (end it with
 *		mt_unpin_search_path): dates, times and intervals in ISO form and
 *		UTC, floats exact, bytea in hex, money in the C locale.  Each
 *		session's own settings could make a date ambiguous, cut a float's
 *		digits or shift a time by its zone.  Only values are read or
 *		written under them, never a user's query.
 */
int
mt_portable_text_begin(void)
{
	static const char *const settings[][2] = {
		{"DateStyle", "ISO, YMD"},
		{"IntervalStyle", "postgres"},
		{"TimeZone", "UTC"},
		{"extra_float_digits", "3"},
		{"bytea_output", "hex"},
		{"lc_monetary", "C"},
	};
	int			nestlevel = NewGUCNestLevel();

	for (int i = 0; i < lengthof(settings); i++)
		(void) set_config_option(settings[i][0], settings[i][1], PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	return nestlevel;
}

/*
 * mt_portable_convert
 *		A value of type (NULL for NULL) written as this session's settings
 *		write it, written as mt_portable_text_begin's do; or, !to_portable,
 *		the other way.
 */
char *
mt_portable_convert(Oid type, const char *value, bool to_portable)
{
	Oid			input;
	Oid			ioparam;
	Oid			output;
	bool		varlena;
	Datum		d;
	int			nestlevel = 0;
	char	   *result;

	if (value == NULL)
		return NULL;
	getTypeInputInfo(type, &input, &ioparam);
	getTypeOutputInfo(type, &output, &varlena);
	if (!to_portable)
		nestlevel = mt_portable_text_begin();
	d = OidInputFunctionCall(input, (char *) value, ioparam, -1);
	if (!to_portable)
		mt_unpin_search_path(nestlevel);
	else
		nestlevel = mt_portable_text_begin();
	result = OidOutputFunctionCall(output, d);
	if (to_portable)
		mt_unpin_search_path(nestlevel);
	return result;
}

/*
 * mt_pin_session_search_path
 *		A background process of the extension runs its own SQL with
 *		search_path = pg_catalog, pg_temp for its whole life, whatever
 *		ALTER DATABASE or ALTER ROLE set: operators and functions that a
 *		role put in a schema ahead of (or beside) pg_catalog would
 *		otherwise run as the process's superuser.  Set at the session's
 *		level, right after connecting, it outranks those settings, survives
 *		every transaction and configuration reload, and still lets a
 *		function's own SET clause apply while it runs.
 */
void
mt_pin_session_search_path(void)
{
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_SESSION);
}

/* Only the owner (or a superuser) may alter, refresh or drop an MT. */
void
mt_check_owner(Oid relid)
{
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, get_rel_name(relid));
}

Oid
mt_table_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * mt_run_as_owner_begin
 *		Run what follows with the privileges of owner, as REFRESH
 *		MATERIALIZED VIEW does: a security-restricted operation with a safe
 *		search_path.  Errors undo all of it with the (sub)transaction.
 */
void
mt_run_as_owner_begin(Oid owner, Oid *save_userid, int *save_sec, int *save_nestlevel)
{
	GetUserIdAndSecContext(save_userid, save_sec);
	SetUserIdAndSecContext(owner, *save_sec | SECURITY_RESTRICTED_OPERATION);
	*save_nestlevel = mt_pin_search_path();
}

void
mt_run_as_owner_end(Oid save_userid, int save_sec, int save_nestlevel)
{
	mt_unpin_search_path(save_nestlevel);
	SetUserIdAndSecContext(save_userid, save_sec);
}
