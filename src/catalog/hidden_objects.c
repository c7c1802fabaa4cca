/*-------------------------------------------------------------------------
 *
 * src/catalog/hidden_objects.c
 *	  Privileges on a materialized table's hidden objects (its query view,
 *	  and the state and derived view of a DELTAS table): they belong to the
 *	  extension's owner, and only the table's owner may read them.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/tablecmds.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/hidden_objects.h"
#include "mt/catalog/marker.h"
#include "mt/materialized_table.h"

/*
 * The roles other than the extension's owner that hold privileges on rel.
 */
static List *
other_grantees(Oid rel)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(rel));
	Oid			extowner = mt_extension_owner();
	List	   *result = NIL;
	Datum		datum;
	bool		isnull;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", rel);
	datum = SysCacheGetAttr(RELOID, tup, Anum_pg_class_relacl, &isnull);
	if (!isnull)
	{
		Acl		   *acl = DatumGetAclP(datum);
		AclItem    *items = ACL_DAT(acl);

		for (int i = 0; i < ACL_NUM(acl); i++)
			if (items[i].ai_grantee != extowner)
				result = list_append_unique_oid(result, items[i].ai_grantee);
	}
	ReleaseSysCache(tup);
	return result;
}

static RoleSpec *
role_spec(Oid role)
{
	RoleSpec   *spec = makeNode(RoleSpec);

	spec->location = -1;
	if (role == ACL_ID_PUBLIC)
		spec->roletype = ROLESPEC_PUBLIC;
	else
	{
		spec->roletype = ROLESPEC_CSTRING;
		spec->rolename = GetUserNameFromId(role, false);
	}
	return spec;
}

static void
grant_privileges(Oid rel, bool is_grant, List *privileges, List *grantees)
{
	GrantStmt  *grant = makeNode(GrantStmt);

	grant->is_grant = is_grant;
	grant->targtype = ACL_TARGET_OBJECT;
	grant->objtype = OBJECT_TABLE;
	grant->objects = list_make1(makeRangeVar(get_namespace_name(get_rel_namespace(rel)),
											 get_rel_name(rel), -1));
	grant->privileges = privileges;
	grant->grantees = grantees;
	grant->behavior = DROP_RESTRICT;
	ExecuteGrantStmt(grant);
}

/*
 * mt_hidden_grant_to_owner
 *		A hidden object of a materialized table belongs to the extension's
 *		owner, so that no user may alter it, move it, or add columns,
 *		triggers or rules to it.  The table's owner, as whom its refreshes
 *		run, may read it (SELECT), and with write also adjust it (a state
 *		table); nobody else has any privilege on it.  Run as the extension's
 *		owner.
 */
void
mt_hidden_grant_to_owner(Oid rel, Oid owner, bool write)
{
	List	   *others = other_grantees(rel);
	List	   *privileges = NIL;
	const char *const names[] = {"select", "insert", "update", "delete"};
	ListCell   *lc;
	List	   *specs = NIL;

	foreach(lc, others)
		specs = lappend(specs, role_spec(lfirst_oid(lc)));
	if (specs != NIL)
		grant_privileges(rel, false, NIL, specs);
	if (owner == mt_extension_owner())
		return;
	for (int i = 0; i < (write ? lengthof(names) : 1); i++)
	{
		AccessPriv *priv = makeNode(AccessPriv);

		priv->priv_name = pstrdup(names[i]);
		privileges = lappend(privileges, priv);
	}
	grant_privileges(rel, true, privileges, list_make1(role_spec(owner)));
	CommandCounterIncrement();
}

/*
 * mt_sync_hidden_privileges
 *		After ALTER TABLE ... OWNER TO or REASSIGN OWNED: the privileges on
 *		the table's hidden objects (its query view, and the state and
 *		derived view of a DELTAS table) are its new owner's.
 */
void
mt_sync_hidden_privileges(Oid relid)
{
	MtTable    *mt = mt_catalog_lookup(relid, true);
	Oid			nsp = mt_internal_namespace();
	Oid			parts[3];
	Oid			owner;
	MtSavedUser saved;
	int			i;

	if (mt == NULL || !OidIsValid(mt->query_view))
		return;
	owner = mt_table_owner(relid);
	parts[0] = mt->query_view;
	parts[1] = get_relname_relid(mt_hidden_name("state_", mt->id), nsp);
	parts[2] = get_relname_relid(mt_hidden_name("derived_", mt->id), nsp);
	mt_as_extension_owner_begin(&saved);
	for (i = 0; i < lengthof(parts); i++)
		if (OidIsValid(parts[i]))
		{
			/* (hidden objects of version 1.0 belonged to the table's owner) */
			if (mt_table_owner(parts[i]) != mt_extension_owner())
				ATExecChangeOwner(parts[i], mt_extension_owner(), false, AccessExclusiveLock);
			mt_hidden_grant_to_owner(parts[i], owner, i == 1);
		}
	mt_as_extension_owner_end(&saved);
	CommandCounterIncrement();
}

/*
 * mt_grant_hidden_object
 *		Give a new hidden object of table relid to the extension's owner,
 *		with the privileges its refreshes need (see mt_hidden_grant_to_owner).
 */
void
mt_grant_hidden_object(Oid relid, Oid hidden, bool write)
{
	MtSavedUser saved;

	mt_as_extension_owner_begin(&saved);
	mt_hidden_grant_to_owner(hidden, mt_table_owner(relid), write);
	mt_as_extension_owner_end(&saved);
}

/*
 * mt_hidden_claimed
 *		Does a materialized table of this database own rel, a relation of
 *		the internal schema: its query view, state or derived view, or the
 *		table and view of the partial aggregates it combines (named for the
 *		table's id), or a restore marker?  A copy that Citus makes
 *		on a worker node of a coordinator's query view (a view over its
 *		distributed tables) belongs to none there.
 */
bool
mt_hidden_claimed(Oid rel)
{
	static const char *const prefixes[] = {"query_", "state_", "derived_", "partials_", "combined_"};
	char	   *name = get_rel_name(rel);
	int64		id = -1;

	if (name == NULL || mt_marker_is(rel))
		return true;
	for (int i = 0; i < lengthof(prefixes); i++)
	{
		size_t		len = strlen(prefixes[i]);

		if (strncmp(name, prefixes[i], len) == 0 && name[len] != '\0' &&
			strspn(name + len, "0123456789") == strlen(name + len))
			id = strtoi64(name + len, NULL, 10);
	}
	/* a name of another form: not one the catalog could disown */
	return id < 0 || mt_catalog_id_exists(id);
}
