/*-------------------------------------------------------------------------
 *
 * src/refresh/partitions.c
 *	  Creating and finding the partitions of a materialized table.
 *
 * See mt/refresh/partitions.h for the layout.  A new LIST partition is created as a
 * standalone table (with its own sub-levels and buckets) and then attached:
 * CREATE TABLE ... PARTITION OF would take an ACCESS EXCLUSIVE lock on the
 * parent and block every reader, ATTACH PARTITION takes SHARE UPDATE
 * EXCLUSIVE, which readers do not conflict with.
 *
 * Partitions are named after the table and their values
 * (sales_2024_06_28); bucket partitions get a _b<n> suffix.
 *
 * Each partition carries the privileges of the table (and of its columns),
 * copied when it is created and again after a GRANT or REVOKE on the
 * table: PostgreSQL checks a partition's own privileges when it is read
 * directly, and a GRANT on a partitioned table does not reach its
 * partitions.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/table.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/pg_inherits.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "partitioning/partbounds.h"
#include "partitioning/partdesc.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "mt/materialized_table.h"
#include "mt/refresh/partitions.h"

struct MtPartitionMap
{
	int			nlevels;		/* LIST levels */
	AttrNumber *attnums;		/* key columns in the table's descriptor */
	FmgrInfo   *out;			/* their output functions */
	HTAB	   *known;			/* key strings of existing partitions */
};

typedef struct KnownKey
{
	char		key[NAMEDATALEN * 4];
} KnownKey;

/* The hash key of a list of values (char *, NULL for SQL NULL). */
static void
key_string(char *dst, List *values)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, values)
	{
		char	   *v = lfirst(lc);

		if (v == NULL)
			appendStringInfoChar(&buf, '\x1e');
		else
			appendStringInfoString(&buf, v);
		appendStringInfoChar(&buf, '\x1f');
	}
	/* long keys are hashed on a prefix plus their length; collisions only cost a lookup */
	memset(dst, 0, sizeof(((KnownKey *) 0)->key));
	if (buf.len >= (int) sizeof(((KnownKey *) 0)->key))
		snprintf(dst, sizeof(((KnownKey *) 0)->key), "%.*s#%d#%u",
				 (int) sizeof(((KnownKey *) 0)->key) - 24, buf.data, buf.len,
				 hash_bytes((unsigned char *) buf.data, buf.len));
	else
		memcpy(dst, buf.data, buf.len);
	pfree(buf.data);
}

/* The child of parent holding value (text, or NULL), or InvalidOid. */
static Oid
find_list_child(Relation parent, FmgrInfo *out, const char *value)
{
	PartitionDesc pd = RelationGetPartitionDesc(parent, true);
	PartitionBoundInfo bi = pd->boundinfo;
	int			i;

	if (pd->nparts == 0 || bi == NULL || bi->strategy != PARTITION_STRATEGY_LIST)
		return InvalidOid;
	if (value == NULL)
		return bi->null_index >= 0 ? pd->oids[bi->null_index] : InvalidOid;
	for (i = 0; i < bi->ndatums; i++)
	{
		char	   *v = OutputFunctionCall(out, bi->datums[i][0]);

		if (strcmp(v, value) == 0)
			return pd->oids[bi->indexes[i]];
	}
	return InvalidOid;
}

static void
collect_known(MtPartitionMap *map, Relation rel, int level, List *prefix)
{
	PartitionDesc pd;
	PartitionBoundInfo bi;
	int			i;

	if (level == map->nlevels)
	{
		KnownKey	k;

		key_string(k.key, prefix);
		hash_search(map->known, k.key, HASH_ENTER, NULL);
		return;
	}
	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
		return;
	pd = RelationGetPartitionDesc(rel, true);
	bi = pd->boundinfo;
	if (pd->nparts == 0 || bi == NULL || bi->strategy != PARTITION_STRATEGY_LIST)
		return;
	for (i = 0; i < bi->ndatums; i++)
	{
		Relation	child = table_open(pd->oids[bi->indexes[i]], AccessShareLock);
		char	   *v = OutputFunctionCall(&map->out[level], bi->datums[i][0]);

		collect_known(map, child, level + 1, lappend(list_copy(prefix), v));
		table_close(child, AccessShareLock);
	}
	if (bi->null_index >= 0)
	{
		Relation	child = table_open(pd->oids[bi->null_index], AccessShareLock);

		collect_known(map, child, level + 1, lappend(list_copy(prefix), NULL));
		table_close(child, AccessShareLock);
	}
}

/*
 * mt_partition_map_load
 *		The LIST partitions of rel that exist now; NULL if it has none.
 */
MtPartitionMap *
mt_partition_map_load(Relation rel, MtTable *mt)
{
	MtPartitionMap *map;
	HASHCTL		ctl;
	ListCell   *lc;
	int			i = 0;

	if (mt->partition_keys == NIL)
		return NULL;
	map = palloc0(sizeof(MtPartitionMap));
	map->nlevels = list_length(mt->partition_keys);
	map->attnums = palloc(sizeof(AttrNumber) * map->nlevels);
	map->out = palloc(sizeof(FmgrInfo) * map->nlevels);
	foreach(lc, mt->partition_keys)
	{
		AttrNumber	attnum = get_attnum(RelationGetRelid(rel), strVal(lfirst(lc)));
		Oid			typoutput;
		bool		varlena;

		map->attnums[i] = attnum;
		getTypeOutputInfo(TupleDescAttr(RelationGetDescr(rel), attnum - 1)->atttypid,
						  &typoutput, &varlena);
		fmgr_info(typoutput, &map->out[i]);
		i++;
	}
	ctl.keysize = sizeof(((KnownKey *) 0)->key);
	ctl.entrysize = sizeof(KnownKey);
	ctl.hcxt = CurrentMemoryContext;
	map->known = hash_create("materialized_table partitions", 64, &ctl,
							 HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	collect_known(map, rel, 0, NIL);
	return map;
}

/*
 * mt_partition_map_has_row
 *		Does a partition for the slot's LIST values exist?  If not, and
 *		values is given, return those values for mt_partition_create().
 */
bool
mt_partition_map_has_row(MtPartitionMap *map, TupleTableSlot *slot, List **values)
{
	List	   *vals = NIL;
	KnownKey	k;
	bool		found;
	int			i;

	for (i = 0; i < map->nlevels; i++)
	{
		bool		isnull;
		Datum		d = slot_getattr(slot, map->attnums[i], &isnull);

		vals = lappend(vals, isnull ? NULL : OutputFunctionCall(&map->out[i], d));
	}
	key_string(k.key, vals);
	hash_search(map->known, k.key, HASH_FIND, &found);
	if (!found)
	{
		/* remember it: the caller creates it before inserting again */
		hash_search(map->known, k.key, HASH_ENTER, NULL);
		if (values)
			*values = vals;
	}
	return found;
}

/* ---------------------------------------------------------------------
 * Creating partitions
 * ---------------------------------------------------------------------
 */

static void
run_sql(const char *sql)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc < 0)
		elog(ERROR, "SPI_execute failed (%d): %s", rc, sql);
}

/* A table name in nspid not taken yet, built from base. */
static char *
choose_name(const char *base, Oid nspid)
{
	char		name[NAMEDATALEN];
	int			len = pg_mbcliplen(base, strlen(base), NAMEDATALEN - 8);
	int			n;

	snprintf(name, sizeof(name), "%.*s", len, base);
	for (n = 1; OidIsValid(get_relname_relid(name, nspid)); n++)
		snprintf(name, sizeof(name), "%.*s_%d", len, base, n);
	return pstrdup(name);
}

/* Append a value to a partition name, keeping only letters, digits and _. */
static void
append_name_part(StringInfo name, const char *value)
{
	const char *s;
	bool		last_underscore = false;

	appendStringInfoChar(name, '_');
	if (value == NULL)
	{
		appendStringInfoString(name, "null");
		return;
	}
	for (s = value; *s; s++)
	{
		unsigned char c = (unsigned char) *s;

		if (isalnum(c) || IS_HIGHBIT_SET(c))
		{
			appendStringInfoChar(name, isupper(c) ? tolower(c) : c);
			last_underscore = false;
		}
		else if (!last_underscore)
		{
			appendStringInfoChar(name, '_');
			last_underscore = true;
		}
	}
}

static char *
qualified(Oid nspid, const char *name)
{
	return quote_qualified_identifier(get_namespace_name(nspid), name);
}

static char *
column_list_sql(List *columns)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, columns)
		appendStringInfo(&buf, "%s%s", buf.len ? ", " : "", quote_identifier(strVal(lfirst(lc))));
	return buf.data;
}

/* WITH (...) for a leaf: the table options that are storage parameters */
extern char *mt_storage_options_sql(List *options);

/* PARTITION BY clause of a table at LIST level `level` (nlevels = leaf) */
static char *
partition_by_sql(MtTable *mt, int level)
{
	if (level < list_length(mt->partition_keys))
		return psprintf(" PARTITION BY LIST (%s)",
						quote_identifier(strVal(list_nth(mt->partition_keys, level))));
	if (mt->distribution)
		return psprintf(" PARTITION BY %s (%s)",
						mt->distribution->kind == MT_DISTRIBUTION_RANGE ? "RANGE" : "HASH",
						column_list_sql(mt->distribution->columns));
	return "";
}

/*
 * The SQL of the lower bound of RANGE bucket i: MINVALUE below the first,
 * MAXVALUE above the last, else the stored bound (computed from the data
 * when the table was created).
 */
static char *
range_bound_sql(MtDistribution *d, int i)
{
	StringInfoData buf;
	int			ncols = list_length(d->columns);
	int			c;

	initStringInfo(&buf);
	for (c = 0; c < ncols; c++)
	{
		if (c)
			appendStringInfoString(&buf, ", ");
		if (i < 0)
			appendStringInfoString(&buf, "MINVALUE");
		else if (i >= list_length(d->bounds))
			appendStringInfoString(&buf, "MAXVALUE");
		else
			appendStringInfoString(&buf, quote_literal_cstr(list_nth(list_nth(d->bounds, i), c)));
	}
	return buf.data;
}

/* Create the buckets of a (new, unattached) table partitioned by the distribution. */
static void
create_buckets(MtTable *mt, Oid nspid, const char *parent_name)
{
	MtDistribution *d = mt->distribution;
	char	   *storage = mt_storage_options_sql(mt->options);
	int			i;

	for (i = 0; i < d->buckets; i++)
	{
		StringInfoData base;
		char	   *name;

		initStringInfo(&base);
		appendStringInfo(&base, "%s_b%d", parent_name, i);
		name = choose_name(base.data, nspid);
		if (d->kind == MT_DISTRIBUTION_RANGE)
		{
			if (i > list_length(d->bounds))
				break;			/* fewer distinct values than buckets */
			run_sql(psprintf("CREATE TABLE %s PARTITION OF %s FOR VALUES FROM (%s) TO (%s)%s",
							 qualified(nspid, name), qualified(nspid, parent_name),
							 range_bound_sql(d, i - 1), range_bound_sql(d, i),
							 storage));
			continue;
		}
		run_sql(psprintf("CREATE TABLE %s PARTITION OF %s FOR VALUES WITH (MODULUS %d, REMAINDER %d)%s",
						 qualified(nspid, name), qualified(nspid, parent_name),
						 d->buckets, i, storage));
	}
	/* range partitions cannot hold NULL keys: a default bucket takes them */
	if (d->kind == MT_DISTRIBUTION_RANGE)
		run_sql(psprintf("CREATE TABLE %s PARTITION OF %s DEFAULT%s",
						 qualified(nspid, choose_name(psprintf("%s_bnull", parent_name), nspid)),
						 qualified(nspid, parent_name), storage));
}

/*
 * Build the subtree for values[level..] as a standalone table named after
 * the values, and return its name.
 */
static char *
create_subtree(Oid nspid, const char *root_name, MtTable *mt, List *values, int level,
			   const char *parent_name)
{
	int			nlevels = list_length(mt->partition_keys);
	StringInfoData base;
	char	   *name;
	bool		leaf = (level + 1 == nlevels);

	initStringInfo(&base);
	appendStringInfoString(&base, parent_name);
	append_name_part(&base, list_nth(values, level));
	name = choose_name(base.data, nspid);

	run_sql(psprintf("CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING GENERATED INCLUDING STORAGE INCLUDING COMPRESSION)%s%s",
					 qualified(nspid, name), qualified(nspid, root_name),
					 partition_by_sql(mt, level + 1),
					 (leaf && mt->distribution == NULL) ? mt_storage_options_sql(mt->options) : ""));
	if (!leaf)
	{
		char	   *child = create_subtree(nspid, root_name, mt, values, level + 1, name);
		const char *v = list_nth(values, level + 1);

		run_sql(psprintf("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES IN (%s)",
						 qualified(nspid, name), qualified(nspid, child),
						 v ? quote_literal_cstr(v) : "NULL"));
	}
	else if (mt->distribution)
		create_buckets(mt, nspid, name);
	return name;
}

/* ---------------------------------------------------------------------
 * Privileges
 * ---------------------------------------------------------------------
 */

/*
 * An ACL of the table's as one of a partition owned by part_owner (a
 * partition belongs to the table's owner, unless someone changed it).
 */
static Acl *
acl_for(Datum acl, bool isnull, Oid table_owner, Oid part_owner)
{
	Acl		   *result;

	if (isnull)
		return NULL;
	result = DatumGetAclPCopy(acl);
	if (part_owner != table_owner)
		result = aclnewowner(result, table_owner, part_owner);
	return result;
}

/*
 * set_acl
 *		Make the ACL column attno of a catalog row acl (NULL: the default
 *		privileges), keeping the shared dependencies on the roles it names,
 *		as GRANT does.  Nothing changes when it is that already.
 */
static void
set_acl(Relation catalog, HeapTuple tup, int attno, Oid relid, int32 subid, Oid owner, Acl *acl)
{
	TupleDesc	desc = RelationGetDescr(catalog);
	Datum		old;
	bool		oldnull;
	Datum	   *values = palloc0(sizeof(Datum) * desc->natts);
	bool	   *nulls = palloc0(sizeof(bool) * desc->natts);
	bool	   *replace = palloc0(sizeof(bool) * desc->natts);
	HeapTuple	newtup;
	Oid		   *oldmembers = NULL;
	Oid		   *newmembers = NULL;
	int			noldmembers = 0;
	int			nnewmembers = 0;

	old = heap_getattr(tup, attno, desc, &oldnull);
	if (oldnull && acl == NULL)
		return;
	if (!oldnull && acl != NULL && aclequal(DatumGetAclP(old), acl))
		return;
	replace[attno - 1] = true;
	nulls[attno - 1] = (acl == NULL);
	values[attno - 1] = acl ? PointerGetDatum(acl) : (Datum) 0;
	newtup = heap_modify_tuple(tup, desc, values, nulls, replace);
	CatalogTupleUpdate(catalog, &newtup->t_self, newtup);

	if (!oldnull)
		noldmembers = aclmembers(DatumGetAclP(old), &oldmembers);
	if (acl)
		nnewmembers = aclmembers(acl, &newmembers);
	updateAclDependencies(RelationRelationId, relid, subid, owner,
						  noldmembers, oldmembers, nnewmembers, newmembers);
}

/*
 * mt_partition_sync_privileges
 *		Give every partition of table relid the table's privileges, and its
 *		columns the table's columns' (by name).  The caller holds the
 *		table.
 */
void
mt_partition_sync_privileges(Oid relid)
{
	List	   *tree = find_all_inheritors(relid, NoLock, NULL);
	Relation	classrel;
	Relation	attrel;
	HeapTuple	roottup;
	Form_pg_class root;
	TupleDesc	rootdesc;
	Datum		acl;
	bool		isnull;
	Relation	rel;
	ListCell   *lc;

	if (list_length(tree) <= 1)
		return;
	classrel = table_open(RelationRelationId, RowExclusiveLock);
	attrel = table_open(AttributeRelationId, RowExclusiveLock);
	roottup = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(relid));
	if (!HeapTupleIsValid(roottup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	root = (Form_pg_class) GETSTRUCT(roottup);
	acl = heap_getattr(roottup, Anum_pg_class_relacl, RelationGetDescr(classrel), &isnull);
	rel = table_open(relid, NoLock);
	rootdesc = CreateTupleDescCopy(RelationGetDescr(rel));
	table_close(rel, NoLock);

	foreach(lc, tree)
	{
		Oid			part = lfirst_oid(lc);
		HeapTuple	tup;
		Oid			part_owner;
		int			i;

		if (part == relid)
			continue;
		tup = SearchSysCacheCopy1(RELOID, ObjectIdGetDatum(part));
		if (!HeapTupleIsValid(tup))
			continue;
		part_owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
		set_acl(classrel, tup, Anum_pg_class_relacl, part, 0, part_owner,
				acl_for(acl, isnull, root->relowner, part_owner));
		heap_freetuple(tup);

		for (i = 0; i < rootdesc->natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(rootdesc, i);
			HeapTuple	roottatt;
			HeapTuple	partatt;
			Datum		attacl;
			bool		attnull;

			if (att->attisdropped)
				continue;
			roottatt = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(att->attnum));
			if (!HeapTupleIsValid(roottatt))
				continue;
			attacl = SysCacheGetAttr(ATTNUM, roottatt, Anum_pg_attribute_attacl, &attnull);
			partatt = SearchSysCacheCopyAttName(part, NameStr(att->attname));
			if (HeapTupleIsValid(partatt))
			{
				set_acl(attrel, partatt, Anum_pg_attribute_attacl, part,
						((Form_pg_attribute) GETSTRUCT(partatt))->attnum, part_owner,
						acl_for(attacl, attnull, root->relowner, part_owner));
				heap_freetuple(partatt);
			}
			ReleaseSysCache(roottatt);
		}
	}
	table_close(attrel, RowExclusiveLock);
	table_close(classrel, RowExclusiveLock);
	CommandCounterIncrement();
}

/*
 * mt_partition_create
 *		Create the partitions holding rows with these LIST values.
 *
 * The caller holds a lock on the table that keeps other refreshes out,
 * runs with the table owner's privileges, and has no relation of the
 * partition tree open: ALTER TABLE ... ATTACH PARTITION refuses a table
 * this session still uses.
 */
void
mt_partition_create(Oid relid, MtTable *mt, List *values)
{
	Oid			nspid = get_rel_namespace(relid);
	char	   *root_name = get_rel_name(relid);
	Oid			parent = relid;
	int			level;

	for (level = 0; level < list_length(values); level++)
	{
		Relation	parent_rel = table_open(parent, AccessShareLock);
		AttrNumber	attnum = get_attnum(relid, strVal(list_nth(mt->partition_keys, level)));
		Oid			typoutput;
		bool		varlena;
		FmgrInfo	out;
		Oid			child;

		getTypeOutputInfo(get_atttype(relid, attnum), &typoutput, &varlena);
		fmgr_info(typoutput, &out);
		child = find_list_child(parent_rel, &out, list_nth(values, level));
		table_close(parent_rel, NoLock);
		if (!OidIsValid(child))
		{
			char	   *parent_name = get_rel_name(parent);
			const char *v = list_nth(values, level);
			char	   *name;

			SPI_connect();
			name = create_subtree(nspid, root_name, mt, values, level, parent_name);
			run_sql(psprintf("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES IN (%s)",
							 qualified(nspid, parent_name), qualified(nspid, name),
							 v ? quote_literal_cstr(v) : "NULL"));
			SPI_finish();
			CommandCounterIncrement();
			mt_partition_sync_privileges(relid);
			return;
		}
		parent = child;
	}
}

/*
 * mt_partition_create_buckets
 *		The buckets of a new table distributed without PARTITIONED BY.
 */
void
mt_partition_create_buckets(Oid relid, MtTable *mt)
{
	if (mt->distribution == NULL || mt->partition_keys != NIL)
		return;
	SPI_connect();
	create_buckets(mt, get_rel_namespace(relid), get_rel_name(relid));
	SPI_finish();
	CommandCounterIncrement();
	mt_partition_sync_privileges(relid);
}

/*
 * Table options that are PostgreSQL storage parameters: they are applied
 * to the table (or, for a partitioned table, to its partitions).
 */
static const char *const storage_options[] = {
	"fillfactor", "toast_tuple_target", "parallel_workers",
	"autovacuum_", "toast.", "vacuum_index_cleanup", "vacuum_truncate",
	"log_autovacuum_min_duration", "user_catalog_table", NULL
};

bool
mt_is_storage_option(const char *key)
{
	const char *const *o;

	for (o = storage_options; *o; o++)
	{
		size_t		len = strlen(*o);

		if ((*o)[len - 1] == '_' || (*o)[len - 1] == '.')
		{
			if (strncmp(key, *o, len) == 0)
				return true;
		}
		else if (strcmp(key, *o) == 0)
			return true;
	}
	return false;
}

/* " WITH (k = 'v', ...)" for the storage parameters among options, or "". */
char *
mt_storage_options_sql(List *options)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	foreach(lc, options)
	{
		MtOption   *opt = lfirst(lc);
		char	   *dot;

		if (!mt_is_storage_option(opt->key))
			continue;
		appendStringInfoString(&buf, buf.len ? ", " : " WITH (");
		dot = strchr(opt->key, '.');
		if (dot)
			appendStringInfo(&buf, "%s.%s", quote_identifier(pnstrdup(opt->key, dot - opt->key)),
							 quote_identifier(dot + 1));
		else
			appendStringInfoString(&buf, quote_identifier(opt->key));
		appendStringInfo(&buf, " = %s", quote_literal_cstr(opt->value));
	}
	if (buf.len)
		appendStringInfoChar(&buf, ')');
	return buf.data;
}
