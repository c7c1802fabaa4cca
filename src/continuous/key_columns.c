/*-------------------------------------------------------------------------
 *
 * src/continuous/key_columns.c
 *	  The key columns of a source's use: narrowed to its primary key, or
 *	  expressions over its columns (see mt/continuous/key_columns.h).
 *
 * Expressions.  Every result row a changed source row contributes to carries that
 * row's value of the expression in the result column (a group column, a
 * DISTINCT one): recomputing the rows with those values is enough, as for
 * a plain column.  The expression is not evaluated while decoding (an
 * error there would stop decoding for every table of the database): the
 * cycle computes the values of the columns decoding kept, in a
 * subtransaction, and a failure recomputes the table instead.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "mt/continuous/analysis_int.h"
#include "mt/continuous/key_columns.h"
#include "mt/utils/extension.h"
#include "mt/utils/sql.h"
#include "mt/utils/subxact.h"

/*
 * When the source's primary key is among the columns a use reads keys
 * from, the key alone names the rows: fewer columns make a tighter filter
 * and one an index serves.
 */
void
mt_narrow_to_primary_key(MtSourceUse *use)
{
	Relation	rel = table_open(use->relid, AccessShareLock);
	Oid			pk = RelationGetPrimaryKeyIndex(rel);
	List	   *attnums = NIL;
	List	   *columns = NIL;

	table_close(rel, AccessShareLock);
	if (!OidIsValid(pk))
		return;
	rel = index_open(pk, AccessShareLock);
	for (int i = 0; i < rel->rd_index->indnkeyatts; i++)
	{
		int			pos = -1;
		ListCell   *lc;

		foreach(lc, use->attnums)
			if (lfirst_int(lc) == rel->rd_index->indkey.values[i])
				pos = foreach_current_index(lc);
		if (pos < 0)
		{
			index_close(rel, AccessShareLock);
			return;
		}
		attnums = lappend_int(attnums, list_nth_int(use->attnums, pos));
		columns = lappend(columns, list_nth(use->key_columns, pos));
	}
	index_close(rel, AccessShareLock);
	use->attnums = attnums;
	use->key_columns = columns;
}

/*
 * mt_keyable_equality
 *		An equality that names keys: of one type on both sides,
 *		mergejoinable, and of a deterministic collation (if any).
 */
bool
mt_keyable_equality(OpExpr *op)
{
	return list_length(op->args) == 2 &&
		exprType(linitial(op->args)) == exprType(lsecond(op->args)) &&
		op_mergejoinable(op->opno, exprType(linitial(op->args))) &&
		(!OidIsValid(op->inputcollid) || get_collation_isdeterministic(op->inputcollid));
}

/*
 * mt_lookup_sql
 *		The SQL of a lookup: the keyed use's columns of the rows of its relation
 * whose column attno has one of the values $1 (text[], as decoding gives
 * them).  NULL if the column's type has no array type.
 */
char *
mt_lookup_sql(MtSourceUse *keyed, AttrNumber attno)
{
	Oid			type = get_atttype(keyed->relid, attno);
	Oid			arraytype = get_array_type(type);
	StringInfoData cols;
	ListCell   *lc;

	if (!OidIsValid(arraytype))
		return NULL;
	initStringInfo(&cols);
	foreach(lc, keyed->attnums)
		appendStringInfo(&cols, "%sk.%s", cols.len ? ", " : "",
						 quote_identifier(get_attname(keyed->relid, lfirst_int(lc), false)));
	return psprintf("SELECT DISTINCT %s FROM %s%s k WHERE k.%s %s ANY (CAST(CAST($1 AS pg_catalog.text[]) AS %s))",
					cols.data, keyed->inh ? "" : "ONLY ", mt_qualified_name(keyed->relid),
					quote_identifier(get_attname(keyed->relid, attno, false)),
					mt_equality_sql(type), mt_type_sql(arraytype, -1));
}

/* A key column of a FULL JOIN: a plain result column of one of its tables. */
typedef struct JoinKey
{
	Var		   *var;
	char	   *name;
} JoinKey;

static char *
join_key_name(List *keys, int varno, AttrNumber attno)
{
	ListCell   *lc;

	foreach(lc, keys)
	{
		JoinKey    *k = lfirst(lc);

		if (k->var->varno == varno && k->var->varattno == attno)
			return k->name;
	}
	return NULL;
}

static MtSourceUse *
join_use(Query *q, int rtindex, MtAnalysis *a)
{
	MtSourceUse *use = palloc0(sizeof(MtSourceUse));
	RangeTblEntry *rte = rt_fetch(rtindex, q->rtable);

	use->relid = rte->relid;
	use->inh = rte->inh;
	use->rtindex = rtindex;
	use->family = list_length(a->uses);
	a->uses = lappend(a->uses, use);
	return use;
}

/*
 * mt_full_join_uses
 *		The uses of a query that is one FULL JOIN of two tables (names: its
 *		result columns): a changed row of either names two families, the
 *		key columns of its own table (the result rows it is in, matched or
 *		null-extended) and, through an equality of the ON clause, the key
 *		column of the other table it equals, or the other table's keys of
 *		the rows it joins, looked up (that table's rows whose null
 *		extension comes or goes); a NULL there names nothing (strict).  A
 *		table without both is read whole.  False if q is no such query.
 */
bool
mt_full_join_uses(Query *q, List *names, MtAnalysis *a)
{
	JoinExpr   *j;
	List	   *keys = NIL;
	int			side[2];
	MtSourceUse *own[2];
	MtSourceUse *cross[2] = {NULL, NULL};
	bool		keyed[2];
	bool		any = false;
	ListCell   *lc;
	int			position = 0;

	if (q->setOperations || q->hasSubLinks || q->hasWindowFuncs || q->hasTargetSRFs ||
		q->groupingSets || q->hasDistinctOn || q->jointree == NULL ||
		list_length(q->jointree->fromlist) != 1 || !IsA(linitial(q->jointree->fromlist), JoinExpr))
		return false;
	j = linitial(q->jointree->fromlist);
	if (j->jointype != JOIN_FULL || !IsA(j->larg, RangeTblRef) || !IsA(j->rarg, RangeTblRef))
		return false;
	side[0] = ((RangeTblRef *) j->larg)->rtindex;
	side[1] = ((RangeTblRef *) j->rarg)->rtindex;
	if (rt_fetch(side[0], q->rtable)->rtekind != RTE_RELATION ||
		rt_fetch(side[1], q->rtable)->rtekind != RTE_RELATION)
		return false;

	/* key columns: plain columns of either table (of a grouped query, group columns) */
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		Var		   *var;

		if (tle->resjunk)
			continue;
		position++;
		if ((q->hasAggs || q->groupClause) && tle->ressortgroupref == 0)
			continue;
		var = mt_base_var(q, (Node *) tle->expr);
		if (var != NULL && join_key_name(keys, var->varno, var->varattno) == NULL)
		{
			JoinKey    *k = palloc(sizeof(JoinKey));

			k->var = var;
			k->name = list_nth(names, position - 1);
			keys = lappend(keys, k);
		}
	}

	/* each table's own key columns */
	for (int s = 0; s < 2; s++)
	{
		own[s] = join_use(q, side[s], a);
		foreach(lc, keys)
		{
			JoinKey    *k = lfirst(lc);

			if (k->var->varno == side[s])
			{
				own[s]->attnums = lappend_int(own[s]->attnums, k->var->varattno);
				own[s]->key_columns = lappend(own[s]->key_columns, makeString(k->name));
			}
		}
		mt_narrow_to_primary_key(own[s]);
	}
	/* the other's, through an ON equality: its key column, or looked up */
	for (int s = 0; s < 2; s++)
	{
		foreach(lc, make_ands_implicit((Expr *) j->quals))
		{
			OpExpr	   *op = lfirst(lc);
			Var		   *mine;
			Var		   *other;
			char	   *name;
			char	   *sql = NULL;

			if (!IsA(op, OpExpr) || !mt_keyable_equality(op))
				continue;
			mine = mt_base_var(q, linitial(op->args));
			other = mt_base_var(q, lsecond(op->args));
			if (mine == NULL || other == NULL)
				continue;
			if (mine->varno != side[s])
			{
				Var		   *swap = mine;

				mine = other;
				other = swap;
			}
			if (mine->varno != side[s] || other->varno != side[1 - s])
				continue;
			name = join_key_name(keys, other->varno, other->varattno);
			if (name == NULL && (own[1 - s]->key_columns == NIL ||
								 (sql = mt_lookup_sql(own[1 - s], other->varattno)) == NULL))
				continue;
			cross[s] = palloc0(sizeof(MtSourceUse));
			*cross[s] = *own[s];
			cross[s]->strict = true;
			cross[s]->attnums = list_make1_int(mine->varattno);
			cross[s]->key_columns = name ? list_make1(makeString(name)) : NIL;
			cross[s]->lookup_sql = sql;
			cross[s]->lookup_family = own[1 - s]->family;
			break;
		}
	}
	/*
	 * keyed: its own columns and the other's, the latter not looked up in
	 * a table that is read whole (twice: that may follow from the first)
	 */
	for (int pass = 0; pass < 2; pass++)
		for (int s = 0; s < 2; s++)
			keyed[s] = own[s]->key_columns != NIL && cross[s] != NULL &&
				(cross[s]->lookup_sql == NULL || (pass == 0 || keyed[1 - s]));
	for (int s = 0; s < 2; s++)
	{
		if (!keyed[s])
		{
			own[s]->full = true;
			own[s]->attnums = NIL;
			own[s]->key_columns = NIL;
			continue;
		}
		any = true;
		cross[s]->family = list_length(a->uses);
		a->uses = lappend(a->uses, cross[s]);
		foreach(lc, list_concat(list_copy(own[s]->key_columns), cross[s]->key_columns))
			a->keys = list_append_unique(a->keys, lfirst(lc));
	}
	return any;
}

/*
 * mt_expression_key_rtindex
 *		The range table entry whose columns alone expr computes, if it can
 *		be a key: not a plain column, immutable, reading columns of one
 *		table that no outer join can null (nullable: by range table index);
 *		else 0.
 */
int
mt_expression_key_rtindex(Query *q, bool *nullable, Node *expr)
{
	Bitmapset  *varnos;
	Bitmapset  *attnos = NULL;
	int			rtindex;
	int			attno = -1;

	if (IsA(expr, Var) || contain_mutable_functions(expr) || contain_agg_clause(expr) ||
		contain_window_function(expr) || expression_returns_set(expr) ||
		contain_subplans(expr) || checkExprHasSubLink(expr) || contain_vars_of_level(expr, 1))
		return 0;
	varnos = pull_varnos(NULL, expr);
	if (!bms_get_singleton_member(varnos, &rtindex) ||
		rt_fetch(rtindex, q->rtable)->rtekind != RTE_RELATION || nullable[rtindex])
		return 0;
	/* user columns only: no whole row, no system column */
	pull_varattnos(expr, rtindex, &attnos);
	while ((attno = bms_next_member(attnos, attno)) >= 0)
		if (attno + FirstLowInvalidHeapAttributeNumber <= 0)
			return 0;
	return rtindex;
}

/*
 * mt_expression_keys_use
 *		Key the use of range table entry rtindex by those of exprs (result
 *		columns names, one each) that mt_expression_key_rtindex gives it: the
 *		columns they read become its attnums, the result columns its key
 *		columns, and key_sql computes the latter from the former.
 */
void
mt_expression_keys_use(MtSourceUse *use, int rtindex, List *exprs, List *names)
{
	Bitmapset  *attnos = NULL;
	List	   *mine = NIL;
	List	   *context = deparse_context_for("r", use->relid);
	StringInfoData select;
	StringInfoData casts;
	StringInfoData arrays;
	StringInfoData aliases;
	ListCell   *le;
	ListCell   *ln;
	int			attno = -1;
	int			nestlevel;
	int			i = 0;

	forboth(le, exprs, ln, names)
	{
		Node	   *expr = lfirst(le);

		if (bms_singleton_member(pull_varnos(NULL, expr)) != rtindex)
			continue;
		pull_varattnos(expr, rtindex, &attnos);
		mine = lappend(mine, expr);
		use->key_columns = lappend(use->key_columns, makeString(pstrdup(lfirst(ln))));
	}
	if (mine == NIL)
		return;

	initStringInfo(&casts);
	initStringInfo(&arrays);
	initStringInfo(&aliases);
	while ((attno = bms_next_member(attnos, attno)) >= 0)
	{
		AttrNumber	a = attno + FirstLowInvalidHeapAttributeNumber;
		Oid			type;
		int32		typmod;
		Oid			collation;

		get_atttypetypmodcoll(use->relid, a, &type, &typmod, &collation);
		use->attnums = lappend_int(use->attnums, a);
		i++;
		appendStringInfo(&casts, "%sCAST(u.a%d AS %s) AS %s", i > 1 ? ", " : "", i,
						 mt_type_sql(type, typmod),
						 quote_identifier(get_attname(use->relid, a, false)));
		appendStringInfo(&arrays, "%spg_catalog.unnest(CAST($%d AS pg_catalog.text[]))",
						 i > 1 ? ", " : "", i);
		appendStringInfo(&aliases, "%sa%d", i > 1 ? ", " : "", i);
	}

	/* every name not in pg_catalog qualified, as the query's view reads them */
	initStringInfo(&select);
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	foreach(le, mine)
	{
		Node	   *expr = copyObject(lfirst(le));

		ChangeVarNodes(expr, rtindex, 1, 0);
		appendStringInfo(&select, "%s%s", select.len > 0 ? ", " : "",
						 deparse_expression(expr, context, true, false));
	}
	AtEOXact_GUC(false, nestlevel);
	use->key_sql = psprintf("SELECT %s FROM (SELECT %s FROM ROWS FROM (%s) AS u(%s)) r",
							select.data, casts.data, arrays.data, aliases.data);
}

/*
 * mt_expression_key_values
 *		The key tuples (char *[], NULL for NULL) that the use's key_sql
 *		gives for tuples of its columns (as decoding keeps them), computed as
 *		owner.  If that fails (a division by zero, a cast), *failed is set
 *		and NIL returned: the caller recomputes the table.
 */
List *
mt_expression_key_values(MtSourceUse *use, Oid owner, List *tuples, bool *failed)
{
	int			ncols = list_length(use->attnums);
	int			nkeys = list_length(use->key_columns);
	Oid		   *types = palloc(sizeof(Oid) * ncols);
	Datum	   *args = palloc(sizeof(Datum) * ncols);
	List	   *volatile result = NIL;
	MtSubxact	sub;

	*failed = false;
	if (tuples == NIL)
		return NIL;
	for (int c = 0; c < ncols; c++)
	{
		Datum	   *elems = palloc(sizeof(Datum) * list_length(tuples));
		bool	   *nulls = palloc(sizeof(bool) * list_length(tuples));
		int			dims[1] = {list_length(tuples)};
		int			lbs[1] = {1};
		ListCell   *lt;

		foreach(lt, tuples)
		{
			char	  **values = lfirst(lt);
			int			k = foreach_current_index(lt);

			nulls[k] = (values[c] == NULL);
			elems[k] = nulls[k] ? (Datum) 0 : CStringGetTextDatum(values[c]);
		}
		types[c] = TEXTARRAYOID;
		args[c] = PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, TEXTOID,
													 -1, false, TYPALIGN_INT));
	}

	mt_subxact_begin(&sub);
	PG_TRY();
	{
		Oid			save_userid;
		int			save_sec;
		int			save_nestlevel;

		mt_run_as_owner_begin(owner, &save_userid, &save_sec, &save_nestlevel);
		SPI_connect();
		if (SPI_execute_with_args(use->key_sql, ncols, types, args, NULL, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not compute the keys of \"%s\"", get_rel_name(use->relid));
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			MemoryContext spi = MemoryContextSwitchTo(sub.caller);
			char	  **key = palloc(sizeof(char *) * (nkeys + 1));

			for (int k = 0; k < nkeys; k++)
			{
				char	   *v = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, k + 1);

				key[k] = v ? pstrdup(v) : NULL;
			}
			result = lappend(result, key);
			MemoryContextSwitchTo(spi);
		}
		SPI_finish();
		mt_run_as_owner_end(save_userid, save_sec, save_nestlevel);
		mt_subxact_commit(&sub);
	}
	PG_CATCH();
	{
		ErrorData  *edata = mt_subxact_rollback(&sub);

		ereport(LOG,
				(errmsg("could not compute the keys that changed rows of \"%s\" name, so the materialized table is recomputed",
						get_rel_name(use->relid)),
				 errdetail_internal("%s", edata->message)));
		FreeErrorData(edata);
		*failed = true;
		result = NIL;
	}
	PG_END_TRY();
	return result;
}

/* The name of attno's key column in use: of those it gives, the first in keys. */
static Node *
canonical_name(MtSourceUse *use, AttrNumber attno, List *keys)
{
	Node	   *best = NULL;
	int			best_pos = -1;
	ListCell   *la;
	ListCell   *lk;

	forboth(la, use->attnums, lk, use->key_columns)
	{
		int			pos = 0;
		ListCell   *lw;

		if (lfirst_int(la) != attno)
			continue;
		foreach(lw, keys)
		{
			if (equal(lfirst(lw), lfirst(lk)))
				break;
			pos++;
		}
		if (best == NULL || pos < best_pos)
		{
			best = lfirst(lk);
			best_pos = pos;
		}
	}
	return best;
}

/* A use whose key columns are plain columns of its relation. */
static bool
coarsenable(MtSourceUse *use)
{
	return !use->full && use->lookup_sql == NULL && use->key_sql == NULL && use->attnums != NIL;
}

/*
 * mt_coarsen_key_uses
 *		Fewer key columns for uses of a query read by several, so that their
 *		families are one filter an index serves.  Any subset of a use's key
 *		columns names a superset of the rows its changes reach: the rows of
 *		those keys are replaced, however many more they are.
 *
 * A column a use gives twice (two result columns equal by a join: TPC-H
 * Q21's l_orderkey and o_orderkey) is kept once, under the name that comes
 * first in a->keys, so that uses of it agree.  A use whose columns include
 * the one column another use of its relation names (the l_orderkey of a
 * subquery correlated on it) is narrowed to that column: the other use's
 * family already replaces every row those changed rows have there, so its
 * finer key saves nothing, and the two become one family of one column
 * (mt_cont_keys_filter merges them), rather than a filter of many columns
 * no index serves.  A query of one use is left as it is (its key may be
 * the table's whole row: continuous/apply.c).
 */
void
mt_coarsen_key_uses(MtAnalysis *a)
{
	ListCell   *lc;

	if (list_length(a->uses) < 2)
		return;
	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);
		List	   *attnums = NIL;
		List	   *columns = NIL;
		ListCell   *la;

		if (!coarsenable(use))
			continue;
		foreach(la, use->attnums)
		{
			if (list_member_int(attnums, lfirst_int(la)))
				continue;
			attnums = lappend_int(attnums, lfirst_int(la));
			columns = lappend(columns, canonical_name(use, lfirst_int(la), a->keys));
		}
		use->attnums = attnums;
		use->key_columns = columns;
	}
	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);
		ListCell   *lo;

		if (!coarsenable(use) || list_length(use->attnums) < 2)
			continue;
		foreach(lo, a->uses)
		{
			MtSourceUse *other = lfirst(lo);
			int			pos = -1;
			ListCell   *la;

			if (other == use || !coarsenable(other) || list_length(other->attnums) != 1 ||
				other->relid != use->relid || other->inh != use->inh)
				continue;
			foreach(la, use->attnums)
				if (lfirst_int(la) == linitial_int(other->attnums))
					pos = foreach_current_index(la);
			if (pos < 0)
				continue;
			use->attnums = list_make1_int(list_nth_int(use->attnums, pos));
			use->key_columns = list_make1(list_nth(use->key_columns, pos));
			break;
		}
	}
	/* what the reason names */
	a->keys = NIL;
	foreach(lc, a->uses)
	{
		MtSourceUse *use = lfirst(lc);

		if (!use->full && use->lookup_sql == NULL)
			a->keys = list_concat_unique(a->keys, use->key_columns);
	}
}

/* ---------------------------------------------------------------------
 * Keys carried into IN subqueries
 * ---------------------------------------------------------------------
 */

/*
 * mt_keyed_in_output
 *		For "x IN (SELECT y FROM r ...)", sl: the subquery's target entry of
 *		y when whether a row's x is in the set depends on r's rows with
 *		y = x only -- the subquery is a plain one, or groups by y (TPC-H
 *		Q18's HAVING); NULL otherwise.
 */
TargetEntry *
mt_keyed_in_output(SubLink *sl)
{
	Query	   *sq;
	TargetEntry *tle;

	if (!IsA(sl, SubLink) || sl->subLinkType != ANY_SUBLINK || sl->testexpr == NULL ||
		!IsA(sl->testexpr, OpExpr) || !mt_keyable_equality((OpExpr *) sl->testexpr) ||
		!IsA(lsecond(((OpExpr *) sl->testexpr)->args), Param))
		return NULL;
	sq = (Query *) sl->subselect;
	if (sq->setOperations || sq->limitCount || sq->limitOffset || sq->hasWindowFuncs ||
		sq->hasTargetSRFs || sq->hasDistinctOn || sq->groupingSets ||
		(sq->hasAggs && sq->groupClause == NIL))
		return NULL;
	tle = linitial_node(TargetEntry, sq->targetList);
	if (sq->groupClause != NIL &&
		(tle->ressortgroupref == 0 ||
		 !get_sortgroupref_clause_noerr(tle->ressortgroupref, sq->groupClause)))
		return NULL;
	return tle;
}

/*
 * The rows of query q with the values $1 (an array of its type) of result
 * column column, as text, where q's WHERE tests that column by an IN
 * subquery mt_keyed_in_output accepts, "col IN (SELECT y FROM ...)": each
 * such subquery also gets "y = ANY ($1)", since its other rows can match
 * no row of those values.  PostgreSQL carries an equality into a subquery,
 * but not "col = ANY (...)": TPC-H Q18's recompute of the changed orders
 * summed the lines of every order in its IN (SELECT l_orderkey ... GROUP BY
 * l_orderkey HAVING ...).  y must be a plain column of the subquery.  NULL
 * when no subquery is so.
 */
static char *
keys_pushed_sql(Query *q, Var *var)
{
	Query	   *copy = copyObject(q);
	bool		pushed = false;
	ListCell   *lc;

	foreach(lc, make_ands_implicit((Expr *) copy->jointree->quals))
	{
		SubLink    *sl = lfirst(lc);
		TargetEntry *out = mt_keyed_in_output(sl);
		OpExpr	   *op;
		Query	   *sub;
		Param	   *values;
		ScalarArrayOpExpr *test;

		if (out == NULL || !IsA(out->expr, Var) || ((Var *) out->expr)->varlevelsup != 0)
			continue;
		op = (OpExpr *) sl->testexpr;
		if (!equal(linitial(op->args), var))
			continue;
		sub = (Query *) sl->subselect;
		values = makeNode(Param);
		values->paramkind = PARAM_EXTERN;
		values->paramid = 1;
		values->paramtype = get_array_type(var->vartype);
		values->paramtypmod = -1;
		values->paramcollid = InvalidOid;
		values->location = -1;
		test = makeNode(ScalarArrayOpExpr);
		test->opno = op->opno;
		test->opfuncid = get_opcode(op->opno);
		test->useOr = true;
		test->inputcollid = op->inputcollid;
		test->args = list_make2(copyObject(out->expr), values);
		test->location = -1;
		sub->jointree->quals = make_and_qual(sub->jointree->quals, (Node *) test);
		pushed = true;
	}
	return pushed ? mt_query_text(copy) : NULL;
}

/*
 * mt_keys_pushed_note
 *		Note in a, a KEYS analysis of query q (the state's, for kept rows),
 *		the text of q for each of its keys that IN subqueries test
 *		(keys_pushed_sql).
 */
void
mt_keys_pushed_note(MtAnalysis *a, Query *q)
{
	ListCell   *lc;

	if (q->setOperations || q->groupingSets || q->jointree->quals == NULL)
		return;
	foreach(lc, q->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		Var		   *var = (Var *) tle->expr;
		MtPushedKey *key;
		char	   *sql;

		if (tle->resjunk || tle->resname == NULL ||
			!list_member(a->keys, makeString(tle->resname)) ||
			!IsA(var, Var) || var->varlevelsup != 0 || !OidIsValid(get_array_type(var->vartype)) ||
			(sql = keys_pushed_sql(q, var)) == NULL)
			continue;
		key = palloc(sizeof(MtPushedKey));
		key->column = pstrdup(tle->resname);
		key->sql = sql;
		key->arraytype = get_array_type(var->vartype);
		a->pushed_keys = lappend(a->pushed_keys, key);
	}
}

/*
 * mt_keys_pushed_sql
 *		The text of the query to read the rows of filter from instead of the
 *		query itself (its parameter $1 the filter's), or NULL: when the
 *		filter is the values of one column that IN subqueries test, whose
 *		type in relation relid (what the filter's values are read as) is the
 *		query's.
 */
const char *
mt_keys_pushed_sql(MtAnalysis *a, List *filter, Oid relid)
{
	MtFilterFamily *family;
	MtFilterColumn *col;
	ListCell   *lc;

	if (list_length(filter) != 1)
		return NULL;
	family = linitial(filter);
	if (family->rowwise || list_length(family->columns) != 1)
		return NULL;
	col = linitial(family->columns);
	foreach(lc, a->pushed_keys)
	{
		MtPushedKey *key = lfirst(lc);
		AttrNumber	attnum;

		if (strcmp(key->column, col->name) != 0)
			continue;
		attnum = get_attnum(relid, col->name);
		if (attnum == InvalidAttrNumber ||
			get_array_type(get_atttype(relid, attnum)) != key->arraytype)
			return NULL;
		return key->sql;
	}
	return NULL;
}
