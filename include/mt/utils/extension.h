/*-------------------------------------------------------------------------
 *
 * mt/utils/extension.h
 *	  The extension in this database, its owner, and running as an owner
 *	  (src/utils/extension.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef MT_UTILS_EXTENSION_H
#define MT_UTILS_EXTENSION_H

#define MT_EXTENSION_NAME		"materialized_table"
#define MT_SCHEMA				"materialized_table"
#define MT_INTERNAL_SCHEMA		"materialized_table_internal"

/* statements on materialized tables need the library preloaded */
extern void mt_extension_set_preloaded(void);
extern void mt_require_preload(void);

/* error position into the statement text handed to execute() */
extern int	mt_errposition(const char *source, int location);

/* errors raised in between point at a piece of the statement */
typedef struct MtErrorAt
{
	ErrorContextCallback callback;
	const char *source;
	int			location;
	bool		keep_own_position;
} MtErrorAt;

extern void mt_error_at_push(MtErrorAt *at, const char *source, int location,
							 bool keep_own_position);
extern void mt_error_at_pop(MtErrorAt *at);

/* is the extension installed (and not being created or dropped) here? */
extern bool mt_extension_ready(void);
extern Oid	mt_internal_namespace(void);
extern Oid	mt_extension_owner(void);

/*
 * The extension's own statements on its private tables (the catalog, the
 * refresh history) and on pg_cron's run with the rights of the extension's
 * owner and search_path = pg_catalog, whoever calls: users of materialized
 * tables may not touch those tables directly.  Only fixed, schema-qualified
 * SQL runs this way.  An error in between is undone by the (sub)transaction.
 */
typedef struct MtSavedUser
{
	Oid			userid;
	int			sec_context;
	int			nestlevel;
} MtSavedUser;

extern void mt_as_extension_owner_begin(MtSavedUser *saved);
extern void mt_as_extension_owner_end(MtSavedUser *saved);

/*
 * A table's refresh runs as its owner, as a security-restricted operation,
 * under the pinned search_path.
 */
extern Oid	mt_table_owner(Oid relid);
extern void mt_check_owner(Oid relid);
extern void mt_run_as_owner_begin(Oid owner, Oid *save_userid, int *save_sec, int *save_nestlevel);
extern void mt_run_as_owner_end(Oid save_userid, int save_sec, int save_nestlevel);

/* search_path = pg_catalog, pg_temp for the extension's own SQL */
extern int	mt_pin_search_path(void);
extern void mt_unpin_search_path(int nestlevel);
/* values as text that another node reads back the same (mt_unpin_search_path ends it) */
extern int	mt_portable_text_begin(void);
/* a value of type as text of this session's settings to portable text, or back */
extern char *mt_portable_convert(Oid type, const char *value, bool to_portable);
/* the same for the whole life of a background process */
extern void mt_pin_session_search_path(void);

#endif							/* MT_UTILS_EXTENSION_H */
