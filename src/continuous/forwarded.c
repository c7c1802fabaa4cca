/*-------------------------------------------------------------------------
 *
 * src/continuous/forwarded.c
 *	  A CONTINUOUS table of the coordinator over distributed sources that
 *	  partial aggregates cannot keep (not an aggregate, not co-located, an
 *	  aggregate that does not combine): kept by recomputing the keys that
 *	  the changes of the sources' shards name, which their nodes send.
 *
 * The changes of a shard are decoded on its node only.  So each shard of
 * each source gets a materialized table of its node that reads the
 * source's key columns (those the table's keys come from) and holds no
 * rows: each apply of it by that node's worker logs the key values its
 * changes name (continuous/apply.c, commands/shard_partials.c).  Twice a
 * second the coordinator's worker asks every node for the values logged
 * since its last pass (mt_forwarded_follow) and recomputes the table's
 * rows of those keys, with the query Citus pushes down to the shards the
 * keys prune to: a pass costs the keys that changed.  A source whose
 * change names every row (use->full), a node that lost what the
 * coordinator acknowledged, or too many keys make the pass a full
 * recompute.  The table is dated by its oldest shard's node.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "mt/catalog/catalog.h"
#include "mt/catalog/freshness.h"
#include "mt/catalog/history.h"
#include "mt/continuous/cycle_int.h"
#include "mt/continuous/forwarded.h"
#include "mt/refresh/partials.h"
#include "mt/refresh/refresh.h"
#include "mt/utils/citus.h"
#include "mt/utils/extension.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/sql.h"

/* a source of the table, and what its nodes sent */
typedef struct ForwardedSource
{
	Oid			relid;
	List	   *columns;		/* int: the columns its nodes send, or NIL
								 * when any change of it names everything */
	int			followed;		/* its shards' tables on the nodes */
	bool		everything;		/* a node sent "*" */
	List	   *rows;			/* char **: the values sent, per column */
} ForwardedSource;

/* Can a column of this type be sent, its values told apart? */
static bool
sendable(Oid relid, AttrNumber attnum)
{
	Oid			type = get_atttype(relid, attnum);

	return OidIsValid(lookup_type_cache(type, TYPECACHE_EQ_OPR)->eq_opr);
}

/* The table's sources, with the columns their uses' keys come from. */
static List *
sources_of(MtAnalysis *a)
{
	List	   *sources = NIL;
	ListCell   *lu;

	foreach(lu, a->uses)
	{
		MtSourceUse *use = lfirst(lu);
		ForwardedSource *s = NULL;
		ListCell   *lc;
		bool		all = use->full || use->attnums == NIL;

		foreach(lc, sources)
			if (((ForwardedSource *) lfirst(lc))->relid == use->relid)
				s = lfirst(lc);
		if (s == NULL)
		{
			s = palloc0(sizeof(ForwardedSource));
			s->relid = use->relid;
			sources = lappend(sources, s);
		}
		else if (s->columns == NIL)
			continue;			/* everything already */
		foreach(lc, use->attnums)
			all |= !sendable(use->relid, lfirst_int(lc));
		if (all)
		{
			/* (one column of no value marks it: see definition()) */
			s->columns = list_make1_int(InvalidAttrNumber);
			continue;
		}
		if (s->columns != NIL && linitial_int(s->columns) == InvalidAttrNumber)
			continue;
		foreach(lc, use->attnums)
			s->columns = list_append_unique_int(s->columns, lfirst_int(lc));
	}
	return sources;
}

static bool
sends_everything(ForwardedSource *s)
{
	return s->columns == NIL || linitial_int(s->columns) == InvalidAttrNumber;
}

/* The query of the source's tables on the nodes: its key columns, no rows. */
static char *
definition(ForwardedSource *s)
{
	StringInfoData cols;
	ListCell   *lc;

	initStringInfo(&cols);
	if (sends_everything(s))
		appendStringInfoString(&cols, "true AS any_change");
	else
		foreach(lc, s->columns)
			appendStringInfo(&cols, "%s%s", cols.len ? ", " : "",
							 quote_identifier(get_attname(s->relid, lfirst_int(lc), false)));
	return psprintf("SELECT DISTINCT %s FROM %s WHERE false", cols.data, mt_qualified_name(s->relid));
}

/*
 * The SQL a node runs for the table (no sources: its tables are dropped);
 * known: the change markers the coordinator acknowledges.
 */
static char *
follow_command(MtTable *mt, List *sources, List *known)
{
	StringInfoData relids;
	StringInfoData defs;
	StringInfoData ncols;
	StringInfoData markers;
	ListCell   *lc;

	initStringInfo(&relids);
	initStringInfo(&defs);
	initStringInfo(&ncols);
	initStringInfo(&markers);
	foreach(lc, sources)
	{
		ForwardedSource *s = lfirst(lc);
		const char *sep = foreach_current_index(lc) ? ", " : "";

		appendStringInfo(&relids, "%s%s::pg_catalog.regclass", sep,
						 quote_literal_cstr(mt_qualified_name(s->relid)));
		appendStringInfo(&defs, "%s%s", sep, quote_literal_cstr(definition(s)));
		appendStringInfo(&ncols, "%s%d", sep, sends_everything(s) ? 0 : list_length(s->columns));
	}
	/* (a marker is digits, letters, ':', ';' and '@': nothing to quote) */
	foreach(lc, known)
		appendStringInfo(&markers, "%s%s", markers.len ? "," : "", (char *) lfirst(lc));
	/* the tables kept so here: a node drops the tables of others */
	if (sources != NIL)
		appendStringInfo(&markers, "%slive:%s", markers.len ? "," : "", mt_partials_live_tables());
	return psprintf("SELECT materialized_table_internal.follow_keys(" INT64_FORMAT ", %s, "
					"ARRAY[%s]::pg_catalog.regclass[], %s, ARRAY[%s]::pg_catalog.text[], "
					"ARRAY[%s]::pg_catalog.int4[], %s, %s::pg_catalog.text[])",
					mt->id,
					quote_literal_cstr(get_namespace_name(get_rel_namespace(mt->relid))),
					relids.data,
					quote_literal_cstr(GetUserNameFromId(mt_table_owner(mt->relid), false)),
					defs.data, ncols.data,
					quote_literal_cstr(mt_freshness_text(mt->freshness_value, mt->freshness_unit)),
					quote_literal_cstr(psprintf("{%s}", markers.data)));
}

/* The rows of a text[][] of ncols columns, each a char *[] (NULL for NULL). */
static List *
key_rows(const char *array_text, int ncols, bool *ok)
{
	ArrayType  *array = DatumGetArrayTypeP(OidInputFunctionCall(F_ARRAY_IN, (char *) array_text, TEXTOID, -1));
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	List	   *rows = NIL;

	*ok = (ARR_NDIM(array) == 2 && ARR_DIMS(array)[1] == ncols);
	if (!*ok)
		return NIL;
	deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	for (int r = 0; r < n / ncols; r++)
	{
		char	  **row = palloc(sizeof(char *) * ncols);

		for (int c = 0; c < ncols; c++)
			row[c] = nulls[r * ncols + c] ? NULL : TextDatumGetCString(elems[r * ncols + c]);
		rows = lappend(rows, row);
	}
	return rows;
}

/* The next line of an answer at *p (NULL past its end), *p past it. */
static char *
next_line(char **p)
{
	char	   *line = *p;
	char	   *end;

	if (line == NULL || *line == '\0')
		return NULL;
	end = strchr(line, '\n');
	if (end)
		*end++ = '\0';
	*p = end;
	return line;
}

/*
 * Read every node's answer into the sources; NULL, or what is wrong.
 * *markers: the nodes' markers, to acknowledge once the keys are applied.
 */
static char *
read_answers(List *answers, List *sources, TimestampTz *as_of, List **markers)
{
	ListCell   *la;

	foreach(la, answers)
	{
		char	   *p = pstrdup(lfirst(la));
		char	   *count = next_line(&p);
		char	   *bad = psprintf("a node answered \"%s\"", (char *) lfirst(la));
		ListCell   *lc;

		if (count == NULL)
			return bad;
		foreach(lc, sources)
		{
			ForwardedSource *s = lfirst(lc);
			char	   *marker = next_line(&p);
			int			n;

			if (marker == NULL || p == NULL || !mt_citus_count_as_of(count, &n, as_of))
				return bad;
			s->followed += n;
			count = strchr(count, ',') ? strchr(count, ',') + 1 : "";
			if (*p == '+')
			{
				/* "+<length> <text[][]>": values may hold new lines */
				char	   *end;
				long		len = strtol(p + 1, &end, 10);
				bool		ok;

				if (*end != ' ' || len < 0 || strlen(end + 1) < (size_t) len)
					return bad;
				p = end + 1 + len;
				if (*p == '\n')
					*p++ = '\0';
				else if (*p != '\0')
					return bad;
				end[1 + len] = '\0';
				if (!sends_everything(s))
				{
					s->rows = list_concat(s->rows, key_rows(end + 1, list_length(s->columns), &ok));
					if (!ok)
						return bad;
				}
			}
			else
			{
				char	   *rows = next_line(&p);

				if (rows == NULL)
					return bad;
				s->everything |= (strcmp(rows, "=") != 0);
			}
			if (n > 0)
				*markers = lappend(*markers, marker);
		}
	}
	return NULL;
}

/* Have the nodes that answered the tables of every shard of the sources? */
static char *
missing_shards(List *sources)
{
	ListCell   *lc;

	foreach(lc, sources)
	{
		ForwardedSource *s = lfirst(lc);
		int			shard_count = 1;

		if (mt_citus_table_kind(s->relid) == MT_CITUS_DISTRIBUTED)
			(void) mt_citus_distribution_column(s->relid, &shard_count);
		if (mt_citus_table_kind(s->relid) == MT_CITUS_DISTRIBUTED ?
			s->followed != shard_count : s->followed < 1)
			return psprintf("%d of the %d shards of \"%s\" have their changes followed on their nodes",
							s->followed, shard_count, get_rel_name(s->relid));
	}
	return NULL;
}

/*
 * The keys the sources' values name, as key tuples of the uses' families
 * (KeyEntry), in this session's text; *everything when a use's changes
 * name every row.
 */
static List *
named_keys(MtAnalysis *a, List *sources, bool *everything)
{
	List	   *keys = NIL;
	ListCell   *lu;

	*everything = false;
	foreach(lu, a->uses)
	{
		MtSourceUse *use = lfirst(lu);
		ForwardedSource *s = NULL;
		int			n = list_length(use->attnums);
		int		   *place = palloc(sizeof(int) * (n + 1));
		Oid		   *types = palloc(sizeof(Oid) * (n + 1));
		ListCell   *lc;
		Oid			save_userid;
		int			save_sec;
		int			save_nestlevel;

		foreach(lc, sources)
			if (((ForwardedSource *) lfirst(lc))->relid == use->relid)
				s = lfirst(lc);
		if (s == NULL || use->full || s->everything)
		{
			*everything = true;
			continue;
		}
		if (sends_everything(s))
			continue;			/* (and nothing changed) */
		foreach(lc, use->attnums)
		{
			int			i = foreach_current_index(lc);
			ListCell   *lk;

			types[i] = get_atttype(use->relid, lfirst_int(lc));
			place[i] = -1;
			foreach(lk, s->columns)
				if (lfirst_int(lk) == lfirst_int(lc))
					place[i] = foreach_current_index(lk);
			Assert(place[i] >= 0);
		}
		/* (a domain's input checks are the owner's code) */
		mt_run_as_owner_begin(a->owner, &save_userid, &save_sec, &save_nestlevel);
		foreach(lc, s->rows)
		{
			char	  **row = lfirst(lc);
			KeyEntry   *e = palloc0(sizeof(KeyEntry));

			e->key.tag = use->family;
			e->key.n = n;
			e->key.values = palloc(sizeof(char *) * (n + 1));
			for (int i = 0; i < n; i++)
				e->key.values[i] = mt_portable_convert(types[i], row[place[i]], false);
			keys = lappend(keys, e);
		}
		mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
	}
	return keys;
}

/*
 * mt_forwarded_on_nodes
 *		Is mt a CONTINUOUS table kept from the keys Citus's nodes send?
 */
bool
mt_forwarded_on_nodes(MtTable *mt)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(mt->relid)};
	bool		result;
	MtSavedUser saved;

	/* (a catalog of before version 1.4 has no such tables) */
	if (mt->refresh_mode != MT_MODE_CONTINUOUS || !mt_citus_installed() ||
		!OidIsValid(get_relname_relid("forwarded_table", mt_internal_namespace())))
		return false;
	mt_as_extension_owner_begin(&saved);
	SPI_connect();
	if (mt_spi_execute_saved("SELECT FROM materialized_table_internal.forwarded_table"
							 " WHERE relid OPERATOR(pg_catalog.=) $1",
							 1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the continuous state of \"%s\"", get_rel_name(mt->relid));
	result = (SPI_processed == 1);
	SPI_finish();
	mt_as_extension_owner_end(&saved);
	return result;
}

/* Is relid a Citus local table (its one shard on the coordinator)? */
static bool
citus_local(Oid relid)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	bool		local;

	SPI_connect();
	if (SPI_execute_with_args("SELECT FROM pg_catalog.pg_dist_partition"
							  " WHERE logicalrelid OPERATOR(pg_catalog.=) $1::pg_catalog.regclass"
							  "   AND partmethod OPERATOR(pg_catalog.=) 'n'"
							  "   AND repmodel OPERATOR(pg_catalog.<>) 't'",
							  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read how Citus distributes \"%s\"", get_rel_name(relid));
	local = (SPI_processed == 1);
	SPI_finish();
	return local;
}

/*
 * mt_forwarded_prepare
 *		Check that the nodes can send the keys of mt's sources (all of them
 *		distributed or reference tables), or refuse; says how it is kept.
 */
char *
mt_forwarded_prepare(MtTable *mt, MtAnalysis *a)
{
	ListCell   *lc;
	List	   *distributed = NIL;

	foreach(lc, mt_analysis_sources(a))
	{
		Oid			source = lfirst_oid(lc);
		MtCitusKind kind = mt_citus_table_kind(source);
		const char *problem = NULL;

		if (kind == MT_CITUS_NONE)
			problem = "is a table of the coordinator alone";
		else if (kind == MT_CITUS_OTHER)
			problem = "is distributed by append or range";
		else if (kind == MT_CITUS_REFERENCE && citus_local(source))
			problem = "is a Citus local table";
		else if (get_rel_relkind(source) == RELKIND_PARTITIONED_TABLE)
			problem = "is partitioned";
		if (problem)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("materialized table \"%s\" of the coordinator cannot follow its Citus sources in CONTINUOUS refresh mode",
							get_rel_name(mt->relid)),
					 errdetail("Source \"%s\" %s: the nodes that hold the shards of its other sources decode their changes, none decodes its.",
							   get_rel_name(source), problem),
					 errhint("Make \"%s\" a reference table (create_reference_table) or distribute it, or use REFRESH_MODE = FULL.",
							 get_rel_name(source))));
		if (kind == MT_CITUS_DISTRIBUTED)
			distributed = lappend(distributed, get_rel_name(source));
	}
	/* (its passes recompute what the nodes name, never on a clock) */
	if (a->poll)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("materialized table \"%s\" of the coordinator cannot follow its Citus sources in CONTINUOUS refresh mode",
						get_rel_name(mt->relid)),
				 errdetail("Its result can change without a change of its sources (a volatile or stable function, such as now()), and the nodes only say what changed."),
				 errhint("Use REFRESH_MODE = FULL.")));
	if (a->strategy != MT_STRATEGY_KEYS)
		return psprintf("the nodes holding the shards of %s say when they change, and the table is "
						"recomputed here then, at most twice a second: %s",
						distributed ? (char *) linitial(distributed) : "its sources", a->reason);
	return psprintf("the nodes holding the shards of %s send the key values their changes name, "
					"recomputed here twice a second: %s",
					distributed ? (char *) linitial(distributed) : "its sources", a->reason);
}

/*
 * mt_forwarded_follow
 *		Tell every node what to follow of mt's sources; once every shard's
 *		changes are followed, recompute the rows of the keys they sent and
 *		date the table by the oldest node.  *known: the change markers of
 *		the keys applied so far (the caller keeps them between passes, and
 *		takes the new ones once committed; NIL at first).  NULL, or what
 *		went wrong (then *known is left as it was).
 */
char *
mt_forwarded_follow(MtTable *mt, List **known)
{
	MtAnalysis *a;
	List	   *sources;
	List	   *answers;
	List	   *markers = NIL;
	List	   *keys;
	char	   *problem;
	TimestampTz as_of = 0;
	TimestampTz started = GetCurrentTimestamp();
	bool		everything;

	/* the table before its query view, as DROP and ALTER take them */
	LockRelationOid(mt->relid, MT_REFRESH_LOCKMODE);
	mt = mt_catalog_lookup(mt->relid, true);
	if (mt == NULL || !mt_forwarded_on_nodes(mt))
		return NULL;
	a = mt_analyze_query_view(mt->query_view, mt->relid);
	sources = sources_of(a);
	answers = mt_citus_on_all_nodes(follow_command(mt, sources, *known), &problem);
	if (problem)
		return problem;
	if ((problem = read_answers(answers, sources, &as_of, &markers)) != NULL ||
		(problem = missing_shards(sources)) != NULL)
		return problem;
	/* suspended: the nodes keep the keys, the table stays as it was */
	if (mt->status == MT_STATUS_SUSPENDED)
		return NULL;

	keys = named_keys(a, sources, &everything);
	if (everything || keys != NIL)
	{
		MtRefreshRequest req = {0};
		MtRefreshCounts counts;
		ContTable	t = {0};

		t.relid = mt->relid;
		t.query_view = mt->query_view;
		t.analysis = a;
		req.relid = mt->relid;
		if (!everything && a->strategy == MT_STRATEGY_KEYS && a->grouping_sets == NIL)
		{
			req.filter = mt_cont_keys_filter(&t, keys);
			/* a key expression that failed, or more keys than a recompute costs */
			everything = t.full || (req.filter != NIL &&
									mt_cont_full_is_cheaper(&t, req.filter, list_length(keys)));
			if (everything)
				req.filter = NIL;
		}
		else
			everything = true;
		/* (keys may name no row the table shows: a NULL joins nothing) */
		if (everything || req.filter != NIL)
		{
			MtHistoryRun *run = mt_history_start(mt->relid, mt_trigger_name(MT_TRIGGER_CONTINUOUS),
												 NULL, started, false);

			counts = mt_refresh_rows(&req);
			mt_history_succeeded(run, counts.inserted + counts.deleted, everything ? "FULL" : "KEYS");
		}
	}
	if (as_of > mt->last_refresh_time)
		mt_catalog_set_last_refresh(mt->relid, as_of);
	*known = markers;
	return NULL;
}

/*
 * mt_forwarded_drop
 *		The nodes drop the tables that follow mt's sources for it.
 */
void
mt_forwarded_drop(Oid relid)
{
	MtTable    *mt = mt_catalog_lookup(relid, true);
	char	   *problem;

	/*
	 * (gone already with its schema, whose drop Citus sends to the nodes:
	 * their tables go with it)
	 */
	if (mt == NULL || get_rel_name(relid) == NULL || !mt_forwarded_on_nodes(mt))
		return;
	/* a node that does not answer keeps its tables, unread, until a later pass */
	(void) mt_citus_on_all_nodes(follow_command(mt, NIL, NIL), &problem);
	if (problem)
		ereport(LOG,
				(errmsg("could not drop the tables that follow the sources of materialized table \"%s\" on every node",
						get_rel_name(relid)),
				 errdetail("%s", problem)));
}
