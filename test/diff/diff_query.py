"""Random queries over the sources of diff_schema.py.

generate(rng, start, count) returns count Query objects for one group of
tables, each of one shape (SHAPES; the shape names the summary's rows) and
with tags naming what it uses (sources, join types, aggregates, ...: the
words --skip and --known match).  Every query is deterministic -- its
result depends on the data only -- except where ties let a correct answer
vary, and there the Query says how to check it:

  check == "exact": the table must equal the query (EXCEPT ALL both ways);
  check == "ties":  ORDER BY ... LIMIT / OFFSET or DISTINCT ON, whose rows
      among ties may be any of them.  The table W is one valid answer iff
        |W| = |Q|,  the bag of W's sort keys = that of Q's (keys: output
        columns), and W is a sub-bag of U, the query without its LIMIT /
        OFFSET / DISTINCT ON (universe):
      the keys of the rows at each position do not depend on how ties are
      broken, and any rows of U with those keys are then one answer.
      Window functions and aggregates whose result depends on an order
      (row_number, lag, string_agg, ...) are only generated over an order
      that is total, so that they are "exact".

Queries write the schema as "{s}" and name each output column c1, c2, ...
A query of shape mt_on_mt reads an earlier table of its group (upstream).
"""

from diff_schema import TABLES, SOURCE_TAGS

SHAPES = [
    "filter", "join_inner", "join_outer", "self_join", "join_nonequi", "exists", "in_subquery",
    "scalar_subquery", "group_by", "group_by_expr", "global_agg", "agg_expr", "join_agg",
    "outer_join_agg", "distinct", "distinct_on", "setop", "window", "topk", "from_subquery", "cte",
    "mt_on_mt", "deltas_group", "deltas_global", "deltas_join", "deltas_twice", "grouping_sets",
    "lateral",
]

NUMERIC_KINDS = ("int", "num", "numf")


class Col:
    def __init__(self, expr, kind, domain=None, unique=False):
        self.expr = expr          # as the query writes it: x1.a
        self.kind = kind
        self.domain = domain
        self.unique = unique      # unique in its relation (a primary key)


class Rel:
    def __init__(self, sql, alias, cols, tags, table=None):
        self.sql = sql            # the FROM item: {s}.t1 x1, (SELECT ...) x2, w x3
        self.alias = alias
        self.cols = cols
        self.tags = set(tags)
        self.table = table        # the base table, if one


class Query:
    def __init__(self, idx, shape, sql, outputs, tags, check="exact", keys=None, universe=None,
                 upstream=()):
        self.idx = idx
        self.name = f"q{idx:04d}"
        self.shape = shape
        self.sql = sql
        self.outputs = outputs    # [(name, kind, domain)]
        self.tags = sorted(set(tags) | {"shape:" + shape})
        self.check = check
        self.keys = keys or []
        self.universe = universe
        self.upstream = list(upstream)

    def text(self, schema):
        return self.sql.replace("{s}", schema)


class Core:
    """A SELECT without ORDER BY / LIMIT: its SQL, outputs and tags."""

    def __init__(self, sql, outputs, tags, upstream=(), total_order=False, setop=False):
        self.sql = sql
        self.outputs = outputs
        self.tags = set(tags)
        self.upstream = list(upstream)
        self.setop = setop


class Gen:
    def __init__(self, rng, earlier):
        self.r = rng
        self.earlier = earlier    # queries of the group before this one (upstream candidates)
        self.n = 0
        self.upstream = []

    # --- names and small pieces -------------------------------------------
    def alias(self):
        self.n += 1
        return f"x{self.n}"

    def chance(self, p):
        return self.r.random() < p

    def table_rel(self, table=None, avoid=()):
        r = self.r
        if table is None:
            if "v" not in avoid and self.chance(0.03):
                table = "v"
            else:
                table = r.choice([t for t in ["t1", "t2", "t3", "p", "pt"] if t not in avoid] or ["t1"])
        a = self.alias()
        spec = TABLES[table]
        only = table == "p" and self.chance(0.15)
        cols = [Col(f"{a}.{c}", k, d, unique=(spec["pk"] == [c])) for c, k, d in spec["cols"]]
        tags = {SOURCE_TAGS[table]} | ({"only"} if only else set())
        return Rel(("ONLY " if only else "") + f"{{s}}.{table} {a}", a, cols, tags, table)

    def derived_rel(self, core, name=None):
        a = self.alias()
        cols = [Col(f"{a}.{n}", k, d) for n, k, d in core.outputs]
        sql = f"{name} {a}" if name else f"({core.sql}) {a}"
        return Rel(sql, a, cols, core.tags, None)

    def mt_rel(self):
        cands = [q for q in self.earlier if not q.upstream]
        if not cands:
            return None
        up = self.r.choice(cands)
        self.upstream.append(up.name)
        a = self.alias()
        cols = [Col(f"{a}.{n}", k, d) for n, k, d in up.outputs]
        return Rel(f"{{s}}.{up.name} {a}", a, cols, {"src:mt"}, None)

    def cols_of(self, rels, kinds=None):
        out = [c for rel in rels for c in rel.cols if kinds is None or c.kind in kinds]
        return out

    def literal(self, kind):
        r = self.r
        if kind == "int":
            return str(r.choice([0, 1, 2, 3, 5]))
        if kind in ("num", "numf"):
            return r.choice(["0", "1.5", "2", "10", "-1"])
        if kind == "text":
            return r.choice(["'a'", "'A'", "'ab'", "'b'", "''"])
        if kind == "date":
            return r.choice(["date '2024-01-15'", "date '2024-02-01'", "date '2024-03-01'"])
        if kind == "ts":
            return r.choice(["timestamp '2024-01-15 12:00'", "timestamp '2024-02-01 00:00'"])
        if kind == "tstz":
            return r.choice(["timestamptz '2024-01-15 12:00+00'", "timestamptz '2024-02-01 00:00+00'"])
        return "NULL"

    def atom(self, cols):
        r = self.r
        c = r.choice(cols)
        e, k = c.expr, c.kind
        x = r.random()
        if x < 0.15:
            return f"{e} IS {'NOT ' if self.chance(0.4) else ''}NULL"
        if k == "int":
            return r.choice([f"{e} > {self.literal(k)}", f"{e} IN (0, 2, 3)", f"{e} % 3 = 1",
                             f"coalesce({e}, -1) <> 0", f"{e} BETWEEN 1 AND 4", f"{e} = {self.literal(k)}"])
        if k in ("num", "numf"):
            return r.choice([f"{e} > {self.literal(k)}", f"{e} <= 2.5", f"{e} <> 0"])
        if k == "text":
            return r.choice([f"{e} = {self.literal(k)}", f"lower({e}) = 'ab'", f"{e} LIKE 'a%'",
                             f"{e} <> ''", f"{e} IN ('a', 'b', 'c')"])
        if k in ("date", "ts", "tstz"):
            return r.choice([f"{e} >= {self.literal(k)}", f"{e} < {self.literal(k)}"])
        if k == "bool":
            return e
        return f"{e} IS NOT NULL"

    def pred(self, cols):
        cols = [c for c in cols if c.kind != "float"]
        p = self.atom(cols)
        x = self.r.random()
        if x < 0.3:
            p = f"{p} AND {self.atom(cols)}"
        elif x < 0.45:
            p = f"({p} OR {self.atom(cols)})"
        elif x < 0.5:
            p = f"NOT ({p})"
        return p

    def item(self, c, plain=0.7):
        """An expression of a column for a select list: (sql, kind, domain)."""
        r = self.r
        if self.chance(plain):
            return c.expr, c.kind, c.domain
        e = c.expr
        if c.kind == "int":
            return r.choice([(f"{e} + 1", "int", None), (f"{e} * 2", "int", None),
                             (f"coalesce({e}, 0)", "int", c.domain)])
        if c.kind in ("num", "numf"):
            return r.choice([(f"{e} * 2", c.kind, None), (f"round({e}, 1)", "num", None),
                             (f"abs({e})", c.kind, None)])
        if c.kind == "text":
            return r.choice([(f"lower({e})", "text", None), (f"{e} || '!'", "text", None),
                             (f"upper({e})", "text", None)])
        if c.kind == "date":
            return r.choice([(f"{e} + 1", "date", None), (f"date_trunc('month', {e}::timestamp)", "ts", None),
                             (f"date_trunc('month', {e})", "tstz", None)])
        if c.kind == "ts":
            return f"date_trunc('day', {e})", "ts", None
        if c.kind == "tstz":
            return f"{e} + interval '1 hour'", "tstz", None
        return c.expr, c.kind, c.domain

    def items(self, rels, lo=1, hi=4, plain=0.7):
        cols = self.cols_of(rels)
        n = self.r.randint(lo, min(hi, len(cols)))
        picked = self.r.sample(cols, n)
        # every relation of a join shows at least one column (NULL extensions show)
        for rel in rels:
            if not any(c in rel.cols for c in picked):
                picked.append(self.r.choice(rel.cols))
        return [self.item(c, plain) for c in picked]

    def select_list(self, items, start=1):
        return ", ".join(f"{e} AS c{i}" for i, (e, _, _) in enumerate(items, start)), \
            [(f"c{i}", k, d) for i, (_, k, d) in enumerate(items, start)]

    # --- joins ----------------------------------------------------------------
    def equi(self, left_cols, right):
        """An equality joining rel right to one of left_cols: its SQL, or None."""
        r = self.r
        pairs = [(lc, rc) for lc in left_cols for rc in right.cols
                 if (lc.domain and lc.domain == rc.domain)
                 or (lc.kind == rc.kind and lc.kind in ("text", "date") and not lc.domain and not rc.domain)]
        if not pairs:
            return None
        # the small-integer domain joins most, ids least: take either
        lc, rc = r.choice(pairs)
        return f"{lc.expr} = {rc.expr}"

    def nonequi(self, left_cols, right):
        r = self.r
        pairs = [(lc, rc) for lc in left_cols for rc in right.cols
                 if lc.kind == rc.kind and lc.kind in ("int", "numf", "num", "date")]
        if not pairs:
            return None
        lc, rc = r.choice(pairs)
        if lc.kind == "date" and self.chance(0.5):
            return f"{rc.expr} BETWEEN {lc.expr} - 3 AND {lc.expr} + 3"
        op = r.choice(["<", "<=", ">", "<>"])
        return f"{lc.expr} {op} {rc.expr}"

    def from_clause(self, n, outer=0.0, nonequi=0.0, first=None, tables=None, extra_on=0.2):
        """n relations joined: (FROM sql, rels, tags, where conditions)."""
        rels = [first or self.table_rel(tables[0] if tables else None)]
        sql = rels[0].sql
        tags = set(rels[0].tags)
        conds = []
        comma = not outer and self.chance(0.2)
        for i in range(1, n):
            right = self.table_rel(tables[i] if tables and i < len(tables) else None)
            left_cols = self.cols_of(rels)
            cond = None
            ne = False
            if self.chance(nonequi):
                cond = self.nonequi(left_cols, right)
                if cond:
                    ne = True
                    tags.add("join:nonequi")
                    if self.chance(0.3):
                        eq = self.equi(left_cols, right)
                        cond = f"{cond} AND {eq}" if eq else cond
            if cond is None:
                cond = self.equi(left_cols, right)
            if cond is None:
                cond = self.nonequi(left_cols, right) or "true"
                ne = True
                tags.add("join:nonequi")
            jt = "JOIN"
            if self.chance(outer):
                jt = self.r.choice(["LEFT JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
                if jt == "FULL JOIN" and ne:
                    jt = "LEFT JOIN"     # FULL JOIN needs merge- or hash-joinable conditions
                tags.add("join:" + jt.split()[0].lower())
                if self.chance(extra_on) and jt != "FULL JOIN":
                    cond = f"{cond} AND {self.atom(right.cols)}"
            else:
                tags.add("join:inner")
            if comma and jt == "JOIN":
                sql += f", {right.sql}"
                conds.append(cond)
            else:
                sql += f" {jt} {right.sql} ON {cond}"
            rels.append(right)
            tags |= right.tags
        if len({rel.table for rel in rels if rel.table}) < len([rel for rel in rels if rel.table]):
            tags.add("join:self")
        return sql, rels, tags, conds

    def where(self, rels, conds, p=0.5, extra=None):
        cs = list(conds)
        if self.chance(p):
            cs.append(self.pred(self.cols_of(rels)))
        if extra:
            cs.append(extra)
        return (" WHERE " + " AND ".join(cs)) if cs else ""

    # --- aggregates -------------------------------------------------------------
    def aggregate(self, cols, tags):
        """One aggregate: (sql, kind)."""
        r = self.r
        c = r.choice(cols)
        e, k = c.expr, c.kind
        numeric = [x for x in cols if x.kind in NUMERIC_KINDS]
        x = r.random()
        if x < 0.2:
            tags.add("agg:count")
            return "count(*)", "int"
        if x < 0.3:
            tags.add("agg:count")
            return f"count({e})", "int"
        if x < 0.45 and numeric:
            c = r.choice(numeric)
            tags.add("agg:sum")
            return f"sum({c.expr})", "int" if c.kind == "int" else "num"
        if x < 0.55 and numeric:
            c = r.choice(numeric)
            tags.add("agg:avg")
            return f"avg({c.expr})", "num"
        if x < 0.7 and k not in ("bool",):
            f = r.choice(["min", "max"])
            tags.add("agg:minmax")
            return f"{f}({e})", k
        if x < 0.8:
            tags.add("agg:count_distinct")
            return f"count(DISTINCT {e})", "int"
        if x < 0.9:
            tags.add("agg:filter")
            f, kk = self.aggregate([y for y in cols if y.kind in NUMERIC_KINDS] or cols, set())
            if "FILTER" in f or "DISTINCT" in f:
                f, kk = "count(*)", "int"
            return f"{f} FILTER (WHERE {self.atom(cols)})", kk
        texts = [y for y in cols if y.kind == "text"]
        if texts:
            t = r.choice(texts).expr
            tags.add("agg:string_agg")
            return f"string_agg({t}, ',' ORDER BY {t})", "text"
        tags.add("agg:bool")
        return f"bool_or({self.atom(cols)})", "bool"

    def aggregates(self, cols, tags, lo=1, hi=4):
        return [self.aggregate(cols, tags) for _ in range(self.r.randint(lo, hi))]

    def agg_expression(self, cols, tags):
        """An expression over aggregates: (sql, kind)."""
        r = self.r
        tags.add("agg:expression")
        numeric = [c for c in cols if c.kind in NUMERIC_KINDS]
        if not numeric:
            return r.choice([("count(*) * 2", "int"),
                             ("CASE WHEN count(*) > 2 THEN 'many' ELSE 'few' END", "text")])
        c = r.choice(numeric).expr
        return r.choice([
            (f"sum({c}) + count(*)", "num"),
            (f"coalesce(max({c}), 0) - coalesce(min({c}), 0)", "num"),
            ("count(*) * 2", "int"),
            (f"round(avg({c}), 2)", "num"),
            (f"sum({c}) / nullif(count({c}), 0)", "num"),
            ("CASE WHEN count(*) > 2 THEN 'many' ELSE 'few' END", "text"),
            (f"count(DISTINCT {c}) + 1", "int"),
        ])

    def having(self, cols, tags):
        tags.add("having")
        numeric = [c for c in cols if c.kind in NUMERIC_KINDS]
        choices = ["count(*) > 1", "count(*) >= 3"]
        if numeric:
            c = self.r.choice(numeric).expr
            choices += [f"sum({c}) > 2", f"max({c}) IS NOT NULL", f"min({c}) < 3"]
        return " HAVING " + self.r.choice(choices)

    # --- cores --------------------------------------------------------------------
    def core_filter(self, first=None):
        sql, rels, tags, conds = self.from_clause(1, first=first)
        its = self.items(rels, 1, 4)
        sl, outs = self.select_list(its)
        return Core(f"SELECT {sl} FROM {sql}{self.where(rels, conds, 0.8)}", outs, tags)

    def core_join(self, n, outer=0.0, nonequi=0.0, first=None, tables=None):
        sql, rels, tags, conds = self.from_clause(n, outer, nonequi, first, tables)
        its = self.items(rels, 2, 5)
        sl, outs = self.select_list(its)
        return Core(f"SELECT {sl} FROM {sql}{self.where(rels, conds, 0.4)}", outs, tags)

    def group_cols(self, rels, exprs=False, tags=None):
        cols = self.cols_of(rels)
        good = [c for c in cols if c.kind in ("int", "text", "date") and not c.unique and c.kind != "float"]
        good = good or cols
        out = []
        for c in self.r.sample(good, min(len(good), self.r.choice([1, 1, 2]))):
            if exprs:
                e = c.expr
                choice = {
                    "int": [(f"{e} % 3", "int", None), (f"coalesce({e}, -1)", "int", c.domain)],
                    "text": [(f"lower({e})", "text", None), (f"coalesce({e}, '?')", "text", None)],
                    "date": [(f"date_trunc('month', {e}::timestamp)", "ts", None),
                             (f"extract(day FROM {e})", "num", None)],
                }.get(c.kind, [(e, c.kind, c.domain)])
                out.append(self.r.choice(choice))
            else:
                out.append((c.expr, c.kind, c.domain))
        if exprs:
            # the time-bucket rollup, and a % 10 of an id
            ts = [c for c in cols if c.kind in ("ts", "tstz")]
            ids = [c for c in cols if c.domain == "id"]
            if ts and self.chance(0.5):
                c = self.r.choice(ts)
                out[0] = (f"date_trunc('{self.r.choice(['hour', 'day'])}', {c.expr})", c.kind, None)
                tags.add("group:date_trunc" + ("_tz" if c.kind == "tstz" else ""))
            elif ids and self.chance(0.4):
                out[0] = (f"{self.r.choice(ids).expr} % 10", "int", None)
            tags.add("group:expr")
        return out

    def core_group(self, n=1, outer=0.0, exprs=False, first=None, having=0.3, global_=False,
                   expressions=0.0, tables=None, window=False):
        sql, rels, tags, conds = self.from_clause(n, outer, 0.1, first, tables)
        cols = self.cols_of(rels)
        gcols = [] if global_ else self.group_cols(rels, exprs, tags)
        aggs = self.aggregates(cols, tags, 1, 4 if not global_ else 3)
        if self.chance(expressions):
            aggs.append(self.agg_expression(cols, tags))
            if self.chance(0.5):
                aggs.append(self.agg_expression(cols, tags))
        items = list(gcols) + [(a, k, None) for a, k in aggs]
        if window:
            a = self.r.choice([a for a, k in aggs if k in NUMERIC_KINDS] or ["count(*)"])
            f = self.r.choice(["rank()", "dense_rank()", "count(*)"])
            items.append((f"{f} OVER (ORDER BY {a} DESC)", "int", None))
            tags |= {"window", "window:over_group"}
        sl, outs = self.select_list(items)
        q = f"SELECT {sl} FROM {sql}{self.where(rels, conds, 0.4)}"
        if gcols:
            if self.chance(0.25):
                q += " GROUP BY " + ", ".join(str(i) for i in range(1, len(gcols) + 1))
            else:
                q += " GROUP BY " + ", ".join(e for e, _, _ in gcols)
        else:
            tags.add("agg:global")
        if self.chance(having):
            q += self.having(cols, tags)
        return Core(q, outs, tags)

    def core_setop(self):
        r = self.r
        sigs = {("small", "text"): ["t1", "t2", "t3", "p"], ("small", "date"): ["t1", "t3", "pt"],
                ("id", "small"): ["t1", "t3", "p", "pt"], ("text",): ["t1", "t2", "t3", "p"]}
        sig = r.choice(sorted(sigs))
        tags = set()
        branches = []
        for _ in range(3 if self.chance(0.25) else 2):
            rel = self.table_rel(r.choice(sigs[sig]))
            tags |= rel.tags
            exprs = []
            for want in sig:
                cs = [c for c in rel.cols if (c.domain == want if want in ("small", "id") else
                                              c.kind == want and not c.domain)]
                exprs.append(r.choice(cs))
            sl = ", ".join(f"{c.expr} AS c{i}" for i, c in enumerate(exprs, 1))
            branches.append(f"SELECT {sl} FROM {rel.sql}" + (f" WHERE {self.pred(rel.cols)}" if self.chance(0.6) else ""))
        q = branches[0]
        for b in branches[1:]:
            op = r.choice(["UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"])
            tags.add("setop:" + op.lower().replace(" ", "_"))
            q += f" {op} {b}"
        kinds = {"small": ("int", "small"), "id": ("int", "id"), "text": ("text", None), "date": ("date", None)}
        outs = [(f"c{i}", kinds[w][0], kinds[w][1]) for i, w in enumerate(sig, 1)]
        return Core(q, outs, tags, setop=True)

    def core_window(self):
        r = self.r
        total = self.chance(0.4)
        rel = self.table_rel(r.choice(["t1", "t3"]) if total else None)
        tags = set(rel.tags) | {"window"}
        cols = rel.cols
        parts = [c for c in cols if c.domain == "small" or c.kind == "text"]
        orders = [c for c in cols if c.kind in ("int", "numf", "num", "date", "ts", "text") and not c.unique]
        part = r.choice(parts)
        order = r.choice([c for c in orders if c is not part] or orders)
        pb = f"PARTITION BY {part.expr}" if self.chance(0.8) else ""
        numeric = [c for c in cols if c.kind in NUMERIC_KINDS]
        wins = []
        for _ in range(r.choice([1, 1, 2])):
            anyc = r.choice(cols)
            numc = r.choice(numeric)
            nk = "int" if numc.kind == "int" else "num"
            if total:
                uniq = [c for c in cols if c.unique][0]
                ob = f"ORDER BY {order.expr}, {uniq.expr}"
                f, k = r.choice([("row_number()", "int"), (f"lag({anyc.expr})", anyc.kind),
                                 (f"lead({numc.expr}, 2)", numc.kind), ("ntile(3)", "int"),
                                 (f"first_value({anyc.expr})", anyc.kind),
                                 (f"sum({numc.expr})", nk), ("count(*)", "int")])
                frame = (" ROWS BETWEEN 1 PRECEDING AND CURRENT ROW"
                         if f.startswith(("sum", "count")) and self.chance(0.5) else "")
                tags.add("window:ordered")
            else:
                ob = f"ORDER BY {order.expr}" + r.choice(["", " DESC", " NULLS FIRST"])
                frame = ""
                f, k = r.choice([("rank()", "int"), ("dense_rank()", "int"), ("percent_rank()", "float"),
                                 ("cume_dist()", "float"), (f"sum({numc.expr})", nk),
                                 ("count(*)", "int"), (f"max({order.expr})", order.kind),
                                 (f"avg({numc.expr})", "num")])
                if self.chance(0.3) and not f.endswith("()"):
                    ob = ""          # the whole partition
            wins.append((f"{f} OVER ({' '.join(x for x in (pb, ob) if x)}{frame})", k, None))
        its = self.items([rel], 1, 3, plain=0.9)
        if pb and part.expr not in [e for e, _, _ in its] and self.chance(0.7):
            # the partition shown: a change names the partitions it touches
            its.insert(0, (part.expr, part.kind, part.domain))
            tags.add("window:partition_shown")
        its += wins
        sl, outs = self.select_list(its)
        return Core(f"SELECT {sl} FROM {rel.sql}" + (f" WHERE {self.pred(cols)}" if self.chance(0.4) else ""),
                    outs, tags)

    def core_window_over_group(self):
        """A window over grouped rows, ordered by an aggregate."""
        return self.core_group(1, having=0.0, window=True)

    # --- what the DELTAS engine maintains ---------------------------------------------
    # count, sum, avg, min and max (of columns and expressions, with FILTER), expressions
    # over them, HAVING, grouped by columns or expressions or by nothing, over
    # one source or a fact joined with dimensions by their keys (one of them
    # read twice).  Now and then an aggregate or a group it does not keep, so
    # that the fallback is checked beside it.
    def delta_arg(self, cols, tags):
        """A numeric argument of sum() / avg(): (sql, kind)."""
        r = self.r
        num = [c for c in cols if c.kind in NUMERIC_KINDS]
        ints = [c for c in cols if c.kind == "int"]
        # mostly of a type whose sum's display scale the query tells
        c = r.choice([c for c in num if c.kind != "num"] if self.chance(0.8) else num)
        if c.kind == "num":
            tags.add("agg:unscaled")     # numeric of no declared scale
        x = r.random()
        if x < 0.4:
            return c.expr, "int" if c.kind == "int" else "num"
        tags.add("agg:of_expression")
        if x < 0.55:
            return f"{c.expr} * {r.choice(['2', '1.5', '0.25', '-1'])}", "num"
        if x < 0.7 and ints:
            # TPC-H's l_extendedprice * (1 - l_discount)
            return f"{c.expr} * (1 - {r.choice(ints).expr})", "num"
        if x < 0.85:
            return (f"CASE WHEN {self.atom(cols)} THEN {c.expr} ELSE {r.choice(['0', '0.5', 'NULL'])} END",
                    "num")
        return f"{c.expr} + {r.choice(num).expr}", "num"

    def delta_agg(self, cols, tags):
        """One aggregate the DELTAS engine keeps (now and then one it does not)."""
        r = self.r
        x = r.random()
        if x < 0.22:
            f, k = "count(*)", "int"
            tags.add("agg:count")
        elif x < 0.32:
            f, k = f"count({r.choice(cols).expr})", "int"
            tags.add("agg:count")
        elif x < 0.6:
            a, k = self.delta_arg(cols, tags)
            f, k = f"sum({a})", k
            tags.add("agg:sum")
        elif x < 0.78:
            # of any ordered column (text under the default collation, and
            # now and then "C"), or an expression: kept by comparison, a
            # group re-read when its extremum goes
            c = r.choice([c for c in cols if c.kind != "bool"])
            e, k = c.expr, c.kind
            if k == "text" and self.chance(0.3):
                e = f'{e} COLLATE "C"'
                tags.add("agg:collate")
            elif k in NUMERIC_KINDS and self.chance(0.3):
                e, k = self.delta_arg(cols, tags)
            f = f"{r.choice(['min', 'max'])}({e})"
            tags.add("agg:minmax")
        elif x < 0.94:
            a, _ = self.delta_arg(cols, tags)
            f, k = f"avg({a})", "num"
            tags.add("agg:avg")
        else:
            return self.aggregate(cols, tags)
        if f != "count(*)" and self.chance(0.08):
            # an ORDER BY that does not change the result
            uniq = [c for c in cols if c.unique]
            if uniq:
                f = f"{f[:-1]} ORDER BY {uniq[0].expr})"
        if self.chance(0.25):
            f += f" FILTER (WHERE {self.atom([c for c in cols if c.kind != 'float'])})"
            tags.add("agg:filter")
        return f, k

    def delta_expression(self, cols, tags):
        """An expression over count / sum / avg: (sql, kind)."""
        r = self.r
        tags.add("agg:expression")
        num = [c for c in cols if c.kind in NUMERIC_KINDS]
        a, _ = self.delta_arg(cols, tags)
        c = r.choice(cols).expr
        return r.choice([
            (f"sum({a}) * 1.0 / count(*)", "num"),
            (f"count(*) - count({c})", "int"),
            (f"sum({a}) / nullif(count({a}), 0)", "num"),
            (f"round(avg({a}), 2)", "num"),
            (f"coalesce(sum({a}), 0) + count(*)", "num"),
            ("CASE WHEN count(*) > 2 THEN 'many' ELSE 'few' END", "text"),
            (f"sum({a}) FILTER (WHERE {self.atom(cols)}) - sum({r.choice(num).expr})", "num"),
            (f"coalesce(max({a}), 0) - coalesce(min({a}), 0)", "num"),
        ])

    def delta_having(self, cols, tags):
        r = self.r
        tags.add("having")
        a, _ = self.delta_arg(cols, tags)
        return " HAVING " + r.choice([
            "count(*) > 1", "count(*) >= 3", f"sum({a}) > 2", f"avg({a}) < 3",
            f"count(*) FILTER (WHERE {self.atom(cols)}) >= 1", f"count(*) > 1 AND sum({a}) <> 0",
            f"max({a}) > 1", f"min({r.choice(cols).expr}) IS NULL",
            f"string_agg({r.choice(cols).expr}::text, ',') IS NULL",   # one the engine does not keep
        ])

    def delta_group_keys(self, cols, tags):
        """1 - 2 group keys, plain columns or expressions: [(sql, kind, domain)]."""
        r = self.r
        out = []
        cands = [c for c in cols if c.kind != "float"]
        for _ in range(r.choice([1, 1, 1, 2])):
            # numerics more often: equal values of several displays need care (1.5 = 1.50)
            c = r.choices(cands, [3 if c.kind in ("num", "numf") else 1 for c in cands])[0]
            e = c.expr
            opts = {
                "int": [(e, "int", c.domain), (f"{e} % 3", "int", None), (f"coalesce({e}, -1)", "int", c.domain),
                        (f"{e} % 10", "int", None), (f"{e} / 4", "int", None)],
                "text": [(e, "text", None), (f"lower({e})", "text", None), (f"coalesce({e}, '?')", "text", None),
                         (f"left({e}, 1)", "text", None)],
                "date": [(e, "date", None), (f"date_trunc('month', {e}::timestamp)", "ts", None),
                         (f"extract(day FROM {e})", "num", None), (f"{e} + 1", "date", None)],
                "ts": [(f"date_trunc('hour', {e})", "ts", None), (f"date_trunc('day', {e})", "ts", None),
                       (e, "ts", None)],
                "tstz": [(f"date_trunc('hour', {e})", "tstz", None), (e, "tstz", None)],
                "numf": [(e, "numf", None), (f"round({e})", "num", None)],
                "num": [(e, "num", None)],
            }.get(c.kind, [(e, c.kind, c.domain)])
            g = r.choice(opts)
            if g[0] != e:
                tags.add("group:expr")
                if g[0].startswith("date_trunc"):
                    tags.add("group:date_trunc")
            if g[0] not in [o[0] for o in out]:
                out.append(g)
        return out

    def delta_query(self, rels, from_sql, conds, tags, global_=False, keys_shown=False):
        r = self.r
        cols = self.cols_of(rels)
        keys = [] if global_ else self.delta_group_keys(cols, tags)
        aggs = [self.delta_agg(cols, tags) for _ in range(r.randint(1, 3))]
        if self.chance(0.35):
            aggs.append(self.delta_expression(cols, tags))
        hidden = keys and not keys_shown and self.chance(0.1)     # grouped by a column it does not show
        items = ([] if hidden else list(keys)) + [(a, k, None) for a, k in aggs]
        sl, outs = self.select_list(items)
        q = f"SELECT {sl} FROM {from_sql}{self.where(rels, conds, 0.5)}"
        if keys:
            if hidden:
                tags.add("group:not_shown")
                q += " GROUP BY " + ", ".join(e for e, _, _ in keys)
            elif self.chance(0.3):
                q += " GROUP BY " + ", ".join(str(i) for i in range(1, len(keys) + 1))
            else:
                q += " GROUP BY " + ", ".join(e for e, _, _ in keys)
        else:
            tags.add("agg:global")
        if self.chance(0.3):
            q += self.delta_having(cols, tags)
        return Core(q, outs, tags | {"deltas"})

    def deltas_in_place(self):
        """The shape a DELTAS table keeps in its own rows: plain groups, count(*), counts, sums of NOT NULL columns."""
        r = self.r
        t = r.choice(["pt", "pt", "t1", "t3"])
        sql, rels, tags, conds = self.from_clause(1, tables=[t])
        cols = rels[0].cols
        notnull = [c for c in cols if c.unique or (t == "pt" and c.expr.endswith((".amt", ".id")))]
        g = r.choice([c for c in cols if c.kind in ("int", "text", "date") and not c.unique])
        items = [(g.expr, g.kind, g.domain), ("count(*)", "int", None)]
        for _ in range(r.randint(1, 2)):
            if self.chance(0.6):
                c = r.choice(notnull)
                items.append((f"sum({c.expr})", "int" if c.kind == "int" else "numf", None))
            else:
                items.append((f"count({r.choice(cols).expr})", "int", None))
        r.shuffle(items)
        sl, outs = self.select_list(items)
        tags |= {"deltas", "deltas:in_place", "agg:count", "agg:sum"}
        return Core(f"SELECT {sl} FROM {sql}{self.where(rels, conds, 0.4)} GROUP BY {g.expr}", outs, tags)

    def dimension_join(self, fact, dim, tags):
        """The ON condition joining dimension dim by its key to a column of fact."""
        key = [c for c in dim.cols if c.unique][0]
        cand = [c for c in fact.cols if c.kind == "int" and c.domain in ("id", "small") and c is not key]
        return f"{dim.alias}.{key.expr.split('.')[1]} = {self.r.choice(cand).expr}"

    def deltas_join(self, twice=False):
        """A fact joined with 1 - 2 dimensions by their keys (a dimension twice, or a snowflake)."""
        r = self.r
        fact = self.table_rel(r.choice(["t3", "t3", "t3", "t2", "t2", "pt", "pt", "p", "p", "v"]
                                       + ([] if twice else ["t1", "t1"])))
        tags = set(fact.tags) | {"join:inner", "join:star"}
        rels = [fact]
        sql = fact.sql
        conds = []
        comma = self.chance(0.25)

        def add(dim, on):
            nonlocal sql
            if comma:
                sql += f", {dim.sql}"
                conds.append(on)
            else:
                sql += f" JOIN {dim.sql} ON {on}"
            rels.append(dim)
            tags.update(dim.tags)

        if twice:
            d = "t1" if fact.table != "t1" else "t3"
            d1, d2 = self.table_rel(d), self.table_rel(d)
            add(d1, self.dimension_join(fact, d1, tags))
            add(d2, self.dimension_join(fact, d2, tags))
            tags.add("join:dimension_twice")
        else:
            d = r.choice(["t1", "t3"]) if fact.table not in ("t1", "t3") else "t1" if fact.table == "t3" else "t3"
            d1 = self.table_rel(d)
            add(d1, self.dimension_join(fact, d1, tags))
            if d == "t3" and self.chance(0.3):
                # a snowflake: t3's t1_id names a t1
                d2 = self.table_rel("t1")
                add(d2, f"{d2.alias}.id = {d1.alias}.t1_id")
                tags.add("join:snowflake")
        if len({x.table for x in rels}) < len(rels):
            tags.add("join:self")
        return self.delta_query(rels, sql, conds, tags, global_=self.chance(0.2))

    # --- GROUPING SETS, LATERAL ------------------------------------------------------
    def grouping_sets(self):
        r = self.r
        sql, rels, tags, conds = self.from_clause(r.choice([1, 1, 2]))
        cols = self.cols_of(rels)
        good = [c for c in cols if c.kind in ("int", "text", "date") and not c.unique]
        g = r.sample(good, min(len(good), r.choice([2, 2, 3])))
        names = [c.expr for c in g]
        kind = r.choice(["ROLLUP", "CUBE", "GROUPING SETS", "GROUPING SETS", "mixed"])
        if kind == "ROLLUP" or kind == "CUBE":
            gb = f"{kind} ({', '.join(names)})"
        elif kind == "GROUPING SETS":
            # every column shown is in a set
            sets = r.choice([[[n] for n in names], [names, names[:1], []], [names, []],
                             [names[:1], names[1:], []]])
            gb = "GROUPING SETS (" + ", ".join("(" + ", ".join(x) + ")" for x in sets) + ")"
        else:
            gb = f"{names[0]}, ROLLUP ({', '.join(names[1:])})"
        tags.add("grouping_sets:" + kind.split()[0].lower())
        aggs = self.aggregates(cols, tags, 1, 3) if self.chance(0.3) else \
            [self.delta_agg(cols, tags) for _ in range(r.randint(1, 2))]
        items = [(c.expr, c.kind, c.domain) for c in g] + [(a, k, None) for a, k in aggs]
        if self.chance(0.4):
            items.append((f"grouping({', '.join(names)})", "int", None))
        sl, outs = self.select_list(items)
        q = f"SELECT {sl} FROM {sql}{self.where(rels, conds, 0.4)} GROUP BY {gb}"
        if self.chance(0.2):
            q += " HAVING count(*) > 1"
        return Core(q, outs, tags | {"grouping_sets"})

    def lateral(self):
        """LATERAL with a set-returning function, a subquery per row (TopK per group) or an aggregate."""
        r = self.r
        x = self.table_rel(r.choice(["t1", "t1", "t3", "t2", "p", "pt"]))
        tags = set(x.tags) | {"lateral"}
        ints = [c for c in x.cols if c.kind == "int"]
        texts = [c for c in x.cols if c.kind == "text"]
        kind = r.choice(["unnest", "unnest", "jsonb", "split", "series", "topk", "agg"])
        tags.add("lateral:" + kind)
        a = self.alias()
        if kind == "unnest":
            i1, i2 = r.choice(ints), r.choice(ints)
            if self.chance(0.4):
                fr = f"CROSS JOIN LATERAL unnest(ARRAY[{i1.expr}, {i2.expr}]) WITH ORDINALITY AS {a}(v, o)"
                lcols = [Col(f"{a}.v", "int", "small"), Col(f"{a}.o", "int", None)]
            else:
                fr = f"CROSS JOIN LATERAL unnest(ARRAY[{i1.expr}, {i2.expr}, {r.choice(ints).expr}]) AS {a}(v)"
                lcols = [Col(f"{a}.v", "int", "small")]
        elif kind == "jsonb":
            c1, c2 = r.choice(x.cols), r.choice(x.cols)
            fr = (f"CROSS JOIN LATERAL jsonb_array_elements(jsonb_build_array({c1.expr}, {c2.expr})) "
                  f"AS {a}(v)")
            lcols = [Col(f"{a}.v", "jsonb", None)]
        elif kind == "split":
            t = r.choice(texts) if texts else None
            if t is None:
                return self.lateral()
            fr = f"CROSS JOIN LATERAL regexp_split_to_table({t.expr}, '') AS {a}(v)" if self.chance(0.5) else \
                f"CROSS JOIN LATERAL unnest(string_to_array({t.expr}, ' ')) AS {a}(v)"
            lcols = [Col(f"{a}.v", "text", None)]
        elif kind == "series":
            i = r.choice([c for c in ints if c.domain == "small"] or ints)
            join = r.choice(["CROSS JOIN LATERAL", "LEFT JOIN LATERAL"])
            fr = f"{join} generate_series(1, least({i.expr}, 5)) AS {a}(v)" + (" ON true" if join.startswith("LEFT") else "")
            lcols = [Col(f"{a}.v", "int", "small")]
        elif kind == "topk":
            y = self.table_rel("t3")
            key = [c for c in x.cols if c.domain in ("id", "small")]
            k = r.choice(key)
            join = r.choice(["CROSS JOIN LATERAL", "LEFT JOIN LATERAL"])
            desc = r.choice(["", " DESC"])
            fr = (f"{join} (SELECT {y.alias}.id AS id, {y.alias}.n AS n FROM {y.sql} "
                  f"WHERE {y.alias}.t1_id = {k.expr} ORDER BY {y.alias}.n{desc} NULLS LAST, {y.alias}.id "
                  f"LIMIT {r.choice([1, 2])}) {a}" + (" ON true" if join.startswith("LEFT") else ""))
            lcols = [Col(f"{a}.id", "int", "id"), Col(f"{a}.n", "numf", None)]
            tags |= y.tags
        else:
            y = self.table_rel(r.choice(["t3", "t2", "pt"]))
            k = r.choice([c for c in x.cols if c.domain in ("id", "small")])
            yk = r.choice([c for c in y.cols if c.domain == k.domain] or [c for c in y.cols if c.kind == "int"])
            num = [c for c in y.cols if c.kind in NUMERIC_KINDS]
            fr = (f"CROSS JOIN LATERAL (SELECT count(*) AS cnt, sum({r.choice(num).expr}) AS total "
                  f"FROM {y.sql} WHERE {yk.expr} = {k.expr}) {a}")
            lcols = [Col(f"{a}.cnt", "int", None), Col(f"{a}.total", "num", None)]
            tags |= y.tags
        if self.chance(0.25) and kind != "jsonb":
            # aggregated over the rows it gives
            g = r.choice(lcols)
            items = [(g.expr, g.kind, g.domain), ("count(*)", "int", None)]
            if self.chance(0.5):
                items.append((f"count(DISTINCT {x.cols[0].expr})", "int", None))
            sl, outs = self.select_list(items)
            return Core(f"SELECT {sl} FROM {x.sql} {fr} GROUP BY {g.expr}", outs, tags | {"lateral:grouped"})
        its = self.items([x], 1, 3, plain=0.9) + [(c.expr, c.kind, c.domain) for c in lcols]
        sl, outs = self.select_list(its)
        w = f" WHERE {self.pred(x.cols)}" if self.chance(0.3) else ""
        return Core(f"SELECT {sl} FROM {x.sql} {fr}{w}", outs, tags)

    # --- the shapes ------------------------------------------------------------------
    def shape(self, shape):
        r = self.r
        if shape == "filter":
            return self.core_filter()
        if shape == "join_inner":
            return self.core_join(r.choice([2, 2, 3, 4]))
        if shape == "join_outer":
            return self.core_join(r.choice([2, 2, 3]), outer=0.8)
        if shape == "self_join":
            t = r.choice(["t1", "t2", "t3", "p", "pt"])
            x, y = self.table_rel(t), self.table_rel(t)
            pairs = [(c, d) for c, d in zip(x.cols, y.cols) if not c.unique and c.domain != "id"]
            c, d = r.choice(pairs)
            cond = f"{c.expr} = {d.expr}"
            if TABLES[t]["pk"] == ["id"] and self.chance(0.6):
                cond += f" AND {x.alias}.id {r.choice(['<', '<>'])} {y.alias}.id"
            jt = r.choice(["JOIN", "JOIN", "LEFT JOIN", "FULL JOIN"])
            tags = x.tags | {"join:self", "join:" + ("inner" if jt == "JOIN" else jt.split()[0].lower())}
            its = self.items([x, y], 2, 4)
            sl, outs = self.select_list(its)
            return Core(f"SELECT {sl} FROM {x.sql} {jt} {y.sql} ON {cond}{self.where([x, y], [], 0.3)}",
                        outs, tags)
        if shape == "join_nonequi":
            return self.core_join(2, outer=0.25, nonequi=1.0)
        if shape == "exists":
            return self.exists()
        if shape == "in_subquery":
            return self.in_subquery()
        if shape == "scalar_subquery":
            return self.scalar_subquery()
        if shape == "group_by":
            return self.core_group(1)
        if shape == "group_by_expr":
            return self.core_group(r.choice([1, 1, 2]), exprs=True)
        if shape == "global_agg":
            return self.core_group(r.choice([1, 1, 2]), global_=True, having=0.15, expressions=0.3)
        if shape == "agg_expr":
            return self.core_group(1, global_=self.chance(0.3), expressions=1.0)
        if shape == "join_agg":
            return self.core_group(r.choice([2, 2, 3]), expressions=0.2)
        if shape == "outer_join_agg":
            return self.core_group(2, outer=1.0)
        if shape == "distinct":
            c = self.core_join(r.choice([1, 1, 2])) if self.chance(0.5) else self.core_filter()
            c.sql = c.sql.replace("SELECT ", "SELECT DISTINCT ", 1)
            c.tags.add("distinct")
            return c
        if shape == "setop":
            return self.core_setop()
        if shape == "window":
            return self.core_window_over_group() if self.chance(0.25) else self.core_window()
        if shape == "from_subquery":
            return self.nested(cte=False)
        if shape == "cte":
            return self.nested(cte=True)
        if shape == "deltas_group":
            if self.chance(0.2):
                return self.deltas_in_place()
            sql, rels, tags, conds = self.from_clause(1)
            return self.delta_query(rels, sql, conds, tags)
        if shape == "deltas_global":
            sql, rels, tags, conds = self.from_clause(1)
            return self.delta_query(rels, sql, conds, tags, global_=True)
        if shape == "deltas_join":
            return self.deltas_join()
        if shape == "deltas_twice":
            return self.deltas_join(twice=True)
        if shape == "grouping_sets":
            return self.grouping_sets()
        if shape == "lateral":
            return self.lateral()
        if shape == "mt_on_mt":
            up = self.mt_rel()
            if up is None:
                return None
            kind = r.choice(["filter", "group", "join", "outer"])
            if kind == "filter":
                c = self.core_filter(first=up)
            elif kind == "group":
                c = self.core_group(1, first=up)
            else:
                c = self.core_join(2, outer=1.0 if kind == "outer" else 0.0, first=up)
            c.upstream = list(self.upstream)
            return c
        raise ValueError(shape)

    def exists(self):
        r = self.r
        sql, rels, tags, conds = self.from_clause(r.choice([1, 1, 2]))
        sub = self.table_rel()
        eq = self.equi(self.cols_of(rels), sub) or self.nonequi(self.cols_of(rels), sub) or "true"
        inner = eq + (f" AND {self.atom(sub.cols)}" if self.chance(0.5) else "")
        neg = self.chance(0.5)
        tags |= sub.tags | {"subquery:not_exists" if neg else "subquery:exists"}
        its = self.items(rels, 1, 4)
        sl, outs = self.select_list(its)
        cond = f"{'NOT ' if neg else ''}EXISTS (SELECT 1 FROM {sub.sql} WHERE {inner})"
        return Core(f"SELECT {sl} FROM {sql}{self.where(rels, conds, 0.3, cond)}", outs, tags)

    def in_subquery(self):
        r = self.r
        sql, rels, tags, conds = self.from_clause(1)
        sub = self.table_rel()
        pairs = [(lc, rc) for lc in self.cols_of(rels) for rc in sub.cols
                 if lc.domain and lc.domain == rc.domain]
        if not pairs:
            pairs = [(lc, rc) for lc in self.cols_of(rels) for rc in sub.cols
                     if lc.kind == rc.kind and lc.kind == "text"]
        lc, rc = r.choice(pairs)
        neg = self.chance(0.5)
        subw = ""
        if self.chance(0.5):
            subw = f" WHERE {self.atom(sub.cols)}"
        if self.chance(0.25):
            # correlated
            corr = self.equi([c for c in self.cols_of(rels) if c is not lc], sub)
            if corr:
                subw = (subw + " AND " if subw else " WHERE ") + corr
                tags.add("subquery:correlated")
        tags |= sub.tags | {"subquery:not_in" if neg else "subquery:in"}
        grouped = ""
        if not neg and self.chance(0.4):
            # grouped by its output, as TPC-H Q18's: the keys a cycle
            # recomputes are carried into it
            grouped = f" GROUP BY {rc.expr} HAVING count(*) > {r.choice([0, 1, 2])}"
            tags.add("subquery:in_grouped")
        its = self.items(rels, 1, 4)
        sl, outs = self.select_list(its)
        cond = f"{lc.expr} {'NOT IN' if neg else 'IN'} (SELECT {rc.expr} FROM {sub.sql}{subw}{grouped})"
        return Core(f"SELECT {sl} FROM {sql}{self.where(rels, conds, 0.3, cond)}", outs, tags)

    def scalar_subquery(self):
        r = self.r
        sql, rels, tags, conds = self.from_clause(1)
        sub = self.table_rel()
        stags = set()
        agg, kind = self.aggregate(sub.cols, stags)
        corr = self.equi(self.cols_of(rels), sub) if self.chance(0.7) else None
        tags |= sub.tags
        tags.add("subquery:scalar_correlated" if corr else "subquery:scalar")
        subq = f"(SELECT {agg} FROM {sub.sql}" + (f" WHERE {corr}" if corr else "") + ")"
        its = self.items(rels, 1, 3)
        where_extra = None
        if self.chance(0.5) or kind not in NUMERIC_KINDS:
            its.append((subq, kind, None))
            tags.add("subquery:in_select")
        else:
            num = [c for c in self.cols_of(rels) if c.kind in NUMERIC_KINDS]
            c = r.choice(num)
            where_extra = f"{c.expr} {r.choice(['>', '<=', '='])} {subq}"
            tags.add("subquery:in_where")
        sl, outs = self.select_list(its)
        return Core(f"SELECT {sl} FROM {sql}{self.where(rels, conds, 0.3, where_extra)}", outs, tags)

    def recursive(self):
        """WITH RECURSIVE: t3's rows reached from a start through t1_id = id, 3 steps at most."""
        r = self.r
        x, y = self.table_rel("t3"), self.table_rel("t3")
        start = r.choice([f"{x.alias}.t1_id IS NULL", f"{x.alias}.v = 0", f"{x.alias}.id < 5"])
        step = r.choice([f"{y.alias}.t1_id = w.id", f"{y.alias}.id = w.t1_id"])
        body = (f"WITH RECURSIVE w(id, t1_id, depth) AS (SELECT {x.alias}.id, {x.alias}.t1_id, 0 FROM {x.sql} "
                f"WHERE {start} UNION ALL SELECT {y.alias}.id, {y.alias}.t1_id, w.depth + 1 FROM w JOIN {y.sql} "
                f"ON {step} WHERE w.depth < 3) ")
        tags = x.tags | {"cte", "cte:recursive"}
        if self.chance(0.5):
            return Core(body + "SELECT w.depth AS c1, count(*) AS c2, count(DISTINCT w.id) AS c3 FROM w GROUP BY w.depth",
                        [("c1", "int", None), ("c2", "int", None), ("c3", "int", None)], tags)
        return Core(body + "SELECT w.id AS c1, w.t1_id AS c2, w.depth AS c3 FROM w",
                    [("c1", "int", "id"), ("c2", "int", "id"), ("c3", "int", None)], tags)

    def nested(self, cte):
        """A query over a subquery in FROM, or a CTE."""
        r = self.r
        if cte and self.chance(0.15):
            return self.recursive()
        kind = r.choice(["group", "outer_group", "filter", "distinct", "setop"])
        if kind == "group":
            inner = self.core_group(1, having=0.2)
        elif kind == "outer_group":
            inner = self.core_group(2, outer=1.0, having=0.0)      # TPC-H Q13
        elif kind == "filter":
            inner = self.core_join(r.choice([1, 2]))
        elif kind == "distinct":
            inner = self.core_filter()
            inner.sql = inner.sql.replace("SELECT ", "SELECT DISTINCT ", 1)
            inner.tags.add("distinct")
        else:
            inner = self.core_setop()
        tags = set(inner.tags) | {"cte" if cte else "from_subquery"}
        name = "w" if cte else None
        rel = self.derived_rel(inner, name)
        outer = r.choice(["filter", "group", "join", "self"] if cte else ["filter", "group", "join"])
        if outer == "self":
            rel2 = self.derived_rel(inner, name)
            eq = self.equi(rel.cols, rel2) or f"{rel.cols[0].expr} = {rel2.cols[0].expr}"
            from_sql = f"{rel.sql} JOIN {rel2.sql} ON {eq}"
            its = self.items([rel, rel2], 2, 4)
            sl, outs = self.select_list(its)
            body = Core(f"SELECT {sl} FROM {from_sql}", outs, tags)
            tags.add("cte:twice")
        elif outer == "filter":
            body = self.core_filter(first=rel)
        elif outer == "group":
            body = self.core_group(1, first=rel, having=0.2)
        else:
            body = self.core_join(2, outer=0.4, first=rel)
        body.tags |= tags
        if cte:
            mat = r.choice(["", "", "MATERIALIZED ", "NOT MATERIALIZED "])
            body.sql = f"WITH w AS {mat}({inner.sql}) {body.sql}"
        return body

    def topk(self):
        """ORDER BY output columns LIMIT n [OFFSET m] over another shape."""
        r = self.r
        kind = r.choice(["filter", "join", "group", "setop", "deltas", "deltas"])

        def deltas():
            sql, rels, tags, conds = self.from_clause(1)
            return self.delta_query(rels, sql, conds, tags, keys_shown=True)
        core = {"filter": self.core_filter, "join": lambda: self.core_join(2, outer=0.3),
                "group": lambda: self.core_group(1, having=0.1), "setop": self.core_setop,
                "deltas": deltas}[kind]()
        outs = [o for o in core.outputs if o[1] != "float"]
        keys = r.sample(outs, min(len(outs), r.choice([1, 1, 2])))
        ob = ", ".join(f"{k[0]}{r.choice(['', ' DESC', ' NULLS FIRST', ' DESC NULLS LAST'])}" for k in keys)
        lim = r.choice([1, 3, 5, 10])
        off = r.choice([0, 0, 0, 2, 4])
        tags = core.tags | {"topk", "topk:" + kind} | ({"topk:offset"} if off else set())
        if self.chance(0.25):
            # every row tied with the last one: with no OFFSET, one answer only
            tail = f" ORDER BY {ob}" + (f" OFFSET {off} ROWS" if off else "") + f" FETCH FIRST {lim} ROWS WITH TIES"
            tags.add("topk:with_ties")
            return Query(0, "topk", core.sql + tail, core.outputs, tags, "ties" if off else "exact",
                         [k[0] for k in keys], core.sql)
        tail = f" ORDER BY {ob}" + (f" LIMIT {lim}" if self.chance(0.9) else "") + (f" OFFSET {off}" if off else "")
        return Query(0, "topk", core.sql + tail, core.outputs, tags, "ties", [k[0] for k in keys], core.sql)

    def distinct_on(self):
        r = self.r
        sql, rels, tags, conds = self.from_clause(r.choice([1, 1, 2]))
        cols = self.cols_of(rels)
        dcols = r.sample([c for c in cols if c.kind in ("int", "text", "date")], r.choice([1, 1, 2]))
        others = r.sample([c for c in cols if c not in dcols], min(len(cols) - len(dcols), r.randint(1, 3)))
        items = [(c.expr, c.kind, c.domain) for c in dcols + others]
        sl, outs = self.select_list(items)
        dnames = [f"c{i}" for i in range(1, len(dcols) + 1)]
        extra = [f"c{i}" for i in range(len(dcols) + 1, len(items) + 1)]
        okeys = r.sample(extra, min(len(extra), r.choice([0, 1, 1, 2])))
        ob = ", ".join(dnames + [k + r.choice(["", " DESC"]) for k in okeys])
        universe = f"SELECT {sl} FROM {sql}{self.where(rels, conds, 0.4)}"
        q = universe.replace("SELECT ", f"SELECT DISTINCT ON ({', '.join(dnames)}) ", 1) + f" ORDER BY {ob}"
        tags.add("distinct_on")
        return Query(0, "distinct_on", q, outs, tags, "ties", dnames + okeys, universe)


def generate(rng, start, count, shapes=SHAPES):
    """count queries of one group, numbered from start: every shape in turn (shuffled)."""
    order = []
    while len(order) < count:
        cycle = list(shapes)
        rng.shuffle(cycle)
        order += cycle
    order = order[:count]
    # tables reading other tables of the group come after some of them
    mt = [s for s in order[:8] if s == "mt_on_mt"]
    order = [s for s in order[:8] if s != "mt_on_mt"] + mt + order[8:]
    out = []
    for i, shape in enumerate(order):
        g = Gen(rng, out)
        if shape == "mt_on_mt" and not any(not q.upstream for q in out):
            shape = "filter"           # nothing to read yet
        if shape == "topk":
            q = g.topk()
        elif shape == "distinct_on":
            q = g.distinct_on()
        else:
            c = g.shape(shape)
            q = Query(0, shape, c.sql, c.outputs, c.tags, upstream=c.upstream)
        q.idx = start + i
        q.name = f"q{q.idx:04d}"
        out.append(q)
    return out
