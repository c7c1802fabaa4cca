/*-------------------------------------------------------------------------
 *
 * src/commands/cascade.c
 *	  materialized_table.refresh(table, partition, cascade): a refresh of a
 *	  table or of one of its partitions, and with cascade of every
 *	  materialized table below it in the lineage (Realtime Compute's
 *	  backfill).
 *
 * The plan is made and checked before anything runs:
 *	  - its tables: the one named (depth 0) and, with cascade, every
 *		materialized table that reads it directly or through others, each
 *		at one more than the deepest of its upstream tables in the plan, at
 *		most MT_CASCADE_MAX_DEPTH;
 *	  - the caller owns each of them;
 *	  - for a partition refresh, the partition spec names partition columns
 *		of the first table, and every other table is partitioned by exactly
 *		the same columns.
 * Then the tables are refreshed upstream first (by depth, then name), each
 * by mt_refresh() in a subtransaction of its own, so that:
 *	  - a table whose upstream in the plan failed is not refreshed, and is
 *		recorded as failed because of it; tables on other branches still
 *		run;
 *	  - a table dropped after the plan was made is skipped, with a note in
 *		the history;
 *	  - a failure of the table named is the caller's error (once the
 *		tables below it are recorded); a failure further down is a WARNING
 *		and a row of the result, and what succeeded stays.
 * Every run of a cascade carries its id (refresh_history.cascade_id).
 *
 * Locks: a table is locked when its turn comes and stays locked until the
 * transaction ends (as mt_refresh does), not while the plan is made, which
 * is why a table may be gone by its turn.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "mt/catalog/catalog.h"
#include "mt/commands/commands.h"
#include "mt/catalog/history.h"
#include "mt/catalog/lineage.h"
#include "mt/materialized_table.h"
#include "mt/refresh/refresh.h"
#include "mt/utils/spi_plans.h"
#include "mt/utils/sql.h"

PG_FUNCTION_INFO_V1(mt_refresh_sql);

#define CASCADE_RESULT_COLUMNS 6

typedef enum CascadeStatus
{
	CASCADE_PENDING,
	CASCADE_SUCCEEDED,
	CASCADE_FAILED,
	CASCADE_SKIPPED
} CascadeStatus;

/* A table of the plan. */
typedef struct CascadeTable
{
	Oid			relid;
	char	   *name;			/* kept: the table may be dropped meanwhile */
	char	   *sort_name;		/* schema-qualified, for the order */
	int			depth;
	List	   *upstream;		/* CascadeTable: its upstream tables in the plan */
	CascadeStatus status;
	uint64		rows;
	char	   *detail;
} CascadeTable;

static CascadeTable *
find_planned(List *plan, Oid relid)
{
	ListCell   *lc;

	foreach(lc, plan)
		if (((CascadeTable *) lfirst(lc))->relid == relid)
			return lfirst(lc);
	return NULL;
}

static CascadeTable *
plan_table(Oid relid)
{
	CascadeTable *t = palloc0(sizeof(CascadeTable));

	t->relid = relid;
	t->name = get_rel_name(relid);
	t->sort_name = mt_qualified_name(relid);
	return t;
}

static int
plan_order(const ListCell *a, const ListCell *b)
{
	CascadeTable *ta = lfirst(a);
	CascadeTable *tb = lfirst(b);

	if (ta->depth != tb->depth)
		return ta->depth < tb->depth ? -1 : 1;
	return strcmp(ta->sort_name, tb->sort_name);
}

/*
 * make_plan
 *		The root and, with cascade, every materialized table below it, with
 *		their depths, in the order they are refreshed.
 */
static List *
make_plan(Oid root, bool cascade)
{
	List	   *plan = list_make1(plan_table(root));
	List	   *edges;
	ListCell   *lc;
	bool		changed;
	int			rounds = 0;

	if (!cascade)
		return plan;

	/* everything reachable from the root */
	edges = mt_lineage_table_edges();
	do
	{
		changed = false;
		foreach(lc, edges)
		{
			MtLineageEdge *e = lfirst(lc);

			if (find_planned(plan, e->upstream) && !find_planned(plan, e->downstream))
			{
				plan = lappend(plan, plan_table(e->downstream));
				changed = true;
			}
		}
	} while (changed);

	/* who reads whom within the plan */
	foreach(lc, edges)
	{
		MtLineageEdge *e = lfirst(lc);
		CascadeTable *up = find_planned(plan, e->upstream);
		CascadeTable *down = find_planned(plan, e->downstream);

		if (up && down && down->relid != root)
			down->upstream = lappend(down->upstream, up);
	}

	/* depth: the longest way down from the root (the lineage has no cycle) */
	do
	{
		changed = false;
		foreach(lc, plan)
		{
			CascadeTable *t = lfirst(lc);
			ListCell   *lu;

			foreach(lu, t->upstream)
			{
				CascadeTable *up = lfirst(lu);

				if (t->depth < up->depth + 1)
				{
					t->depth = up->depth + 1;
					changed = true;
				}
			}
		}
		if (++rounds > list_length(plan) + 1)
			elog(ERROR, "the lineage below \"%s\" has a cycle", get_rel_name(root));
	} while (changed);

	list_sort(plan, plan_order);
	return plan;
}

static bool
same_columns(List *a, List *b)
{
	ListCell   *lc;

	if (list_length(a) != list_length(b))
		return false;
	foreach(lc, a)
	{
		ListCell   *lc2;
		bool		found = false;

		foreach(lc2, b)
			if (strcmp(strVal(lfirst(lc)), strVal(lfirst(lc2))) == 0)
				found = true;
		if (!found)
			return false;
	}
	return true;
}

/* Everything that can be checked before anything runs. */
static void
check_plan(List *plan, List *spec)
{
	CascadeTable *root = linitial(plan);
	MtTable    *root_mt = mt_catalog_lookup(root->relid, false);
	ListCell   *lc;

	foreach(lc, plan)
	{
		CascadeTable *t = lfirst(lc);
		MtTable    *mt = mt_catalog_lookup(t->relid, false);

		mt_check_owner(t->relid);
		if (t->depth > MT_CASCADE_MAX_DEPTH)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("materialized table \"%s\" is %d levels below \"%s\", deeper than a cascading refresh reaches",
							t->name, t->depth, root->name),
					 errdetail("A cascading refresh reaches at most %d levels below the table it starts from.",
							   MT_CASCADE_MAX_DEPTH),
					 errhint("Start the cascade further down the lineage.")));
		if (spec == NIL)
			continue;
		if (t == root)
			mt_check_partition_spec(mt, spec, NULL);
		else if (!same_columns(mt->partition_keys, root_mt->partition_keys))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("cannot cascade the partition refresh of \"%s\" to materialized table \"%s\"",
							root->name, t->name),
					 mt->partition_keys ?
					 errdetail("A partition refresh cascades only to materialized tables partitioned by exactly the same columns: \"%s\" is partitioned by (%s), \"%s\" by (%s).",
							   root->name, mt_name_list_text(root_mt->partition_keys),
							   t->name, mt_name_list_text(mt->partition_keys)) :
					 errdetail("A partition refresh cascades only to materialized tables partitioned by exactly the same columns: \"%s\" is partitioned by (%s), \"%s\" is not partitioned.",
							   root->name, mt_name_list_text(root_mt->partition_keys), t->name),
					 errhint("Refresh whole tables with a cascade (partition => NULL), or refresh the partition of \"%s\" without one.",
							 root->name)));
	}
}

/* A partition spec from jsonb: an object of scalars, values as text. */
static List *
spec_from_jsonb(Jsonb *jb)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	List	   *spec = NIL;
	MtOption   *opt = NULL;

	if (!JB_ROOT_IS_OBJECT(jb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("partition must be a JSON object of partition columns and values"),
				 errhint("For example: '{\"ds\": \"2024-06-01\"}'.")));
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			opt = palloc0(sizeof(MtOption));
			opt->key = pnstrdup(v.val.string.val, v.val.string.len);
			opt->location = -1;
		}
		else if (tok == WJB_VALUE)
		{
			if (v.type == jbvString)
				opt->value = pnstrdup(v.val.string.val, v.val.string.len);
			else if (v.type == jbvNumeric)
				opt->value = DatumGetCString(DirectFunctionCall1(numeric_out,
																 NumericGetDatum(v.val.numeric)));
			else if (v.type == jbvBool)
				opt->value = pstrdup(v.val.boolean ? "true" : "false");
			else
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("value of partition column \"%s\" must be a string, number or boolean",
								opt->key),
						 errdetail("A partition is named by one value per partition column.")));
			spec = lappend(spec, opt);
		}
	}
	if (spec == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("partition must name at least one partition column"),
				 errhint("Pass NULL to refresh the whole table.")));
	return spec;
}

static int64
next_cascade_id(void)
{
	return mt_spi_int8_as_extension_owner("SELECT pg_catalog.nextval('materialized_table_internal.refresh_cascade_seq')",
										  "could not allocate a cascade id");
}

/*
 * Refresh one table in a subtransaction; on failure return the error
 * (mt_refresh has recorded it in the history).
 */
static ErrorData *
refresh_one(CascadeTable *t, List *spec, MtRefreshTrigger trigger)
{
	MtSubxact	sub;
	ErrorData  *volatile error = NULL;

	mt_subxact_begin(&sub);
	PG_TRY();
	{
		t->rows = mt_refresh(t->relid, spec, trigger);
		mt_subxact_commit(&sub);
	}
	PG_CATCH();
	{
		error = mt_subxact_rollback(&sub);
	}
	PG_END_TRY();
	return error;
}

/* The upstream table in the plan whose failure keeps t from running. */
static CascadeTable *
failed_upstream(CascadeTable *t)
{
	ListCell   *lc;

	foreach(lc, t->upstream)
		if (((CascadeTable *) lfirst(lc))->status == CASCADE_FAILED)
			return lfirst(lc);
	return NULL;
}

/* Record every table not run yet below a failure as failed because of it. */
static void
fail_below(List *plan, const char *partition)
{
	ListCell   *lc;

	foreach(lc, plan)
	{
		CascadeTable *t = lfirst(lc);
		CascadeTable *up;

		if (t->status != CASCADE_PENDING || (up = failed_upstream(t)) == NULL)
			continue;
		t->status = CASCADE_FAILED;
		t->detail = psprintf("not refreshed: upstream materialized table \"%s\" failed", up->name);
		mt_history_note(t->relid, mt_trigger_name(MT_TRIGGER_CASCADE), partition, "FAILED",
						t->detail, true);
		ereport(WARNING,
				(errmsg("materialized table \"%s\" was not refreshed because its upstream \"%s\" failed",
						t->name, up->name)));
	}
}

static void
run_plan(List *plan, List *spec)
{
	char	   *partition = mt_partition_spec_text(spec);
	ListCell   *lc;

	foreach(lc, plan)
	{
		CascadeTable *t = lfirst(lc);
		bool		is_root = (lc == list_head(plan));
		ErrorData  *error;

		if (t->status != CASCADE_PENDING)
			continue;			/* failed because of its upstream */

		/* dropped since the plan was made: gone by the time the lock is ours */
		LockRelationOid(t->relid, MT_REFRESH_LOCKMODE);
		if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(t->relid)) ||
			!mt_is_materialized_table(t->relid))
		{
			t->status = CASCADE_SKIPPED;
			t->detail = psprintf("skipped: materialized table \"%s\" was dropped before the cascade reached it",
								 t->name);
			mt_history_note(t->relid, mt_trigger_name(MT_TRIGGER_CASCADE), partition, "SKIPPED",
							t->detail, true);
			ereport(NOTICE,
					(errmsg("materialized table \"%s\" was dropped, skipping", t->name)));
			continue;
		}

		error = refresh_one(t, spec, is_root ? MT_TRIGGER_MANUAL : MT_TRIGGER_CASCADE);
		if (error == NULL)
		{
			t->status = CASCADE_SUCCEEDED;
			continue;
		}
		t->status = CASCADE_FAILED;
		t->detail = error->message;
		if (!is_root)
			ereport(WARNING,
					(errmsg("refresh of materialized table \"%s\" failed: %s",
							t->name, error->message)));
		fail_below(plan, partition);
		if (is_root)
			ReThrowError(error);
	}
}

/*
 * materialized_table.refresh(table regclass, partition jsonb DEFAULT NULL,
 *							  cascade boolean DEFAULT false)
 * RETURNS TABLE (table_name regclass, depth integer, status text,
 *				  rows bigint, detail text, cascade_id bigint)
 *
 * One row per table of the plan, in the order they ran.
 */
Datum
mt_refresh_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid;
	List	   *spec = NIL;
	bool		cascade = PG_ARGISNULL(2) ? false : PG_GETARG_BOOL(2);
	List	   *plan;
	int64		cascade_id = 0;
	int64		saved_cascade_id = mt_history_cascade_id;
	ListCell   *lc;

	mt_require_preload();

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("table must not be null")));
	relid = PG_GETARG_OID(0);
	if (!mt_is_materialized_table(relid))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a materialized table",
						get_rel_name(relid) ? get_rel_name(relid) : psprintf("%u", relid))));
	if (!PG_ARGISNULL(1))
		spec = spec_from_jsonb(PG_GETARG_JSONB_P(1));

	InitMaterializedSRF(fcinfo, 0);

	plan = make_plan(relid, cascade);
	check_plan(plan, spec);

	if (cascade)
		cascade_id = next_cascade_id();
	mt_history_cascade_id = cascade_id;
	PG_TRY();
	{
		run_plan(plan, spec);
	}
	PG_FINALLY();
	{
		mt_history_cascade_id = saved_cascade_id;
	}
	PG_END_TRY();

	foreach(lc, plan)
	{
		CascadeTable *t = lfirst(lc);
		Datum		values[CASCADE_RESULT_COLUMNS];
		bool		nulls[CASCADE_RESULT_COLUMNS] = {0};
		static const char *const names[] = {"PENDING", "SUCCEEDED", "FAILED", "SKIPPED"};

		values[0] = ObjectIdGetDatum(t->relid);
		values[1] = Int32GetDatum(t->depth);
		values[2] = CStringGetTextDatum(names[t->status]);
		values[3] = Int64GetDatum((int64) t->rows);
		nulls[3] = (t->status != CASCADE_SUCCEEDED);
		values[4] = t->detail ? CStringGetTextDatum(t->detail) : (Datum) 0;
		nulls[4] = (t->detail == NULL);
		values[5] = Int64GetDatum(cascade_id);
		nulls[5] = (cascade_id == 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
