-- Lineage: which relations each materialized table reads (see src/lineage.c).
--
-- PostgreSQL records what a table's query view reads in pg_depend; plain
-- views are looked through (a view is not a node of the lineage, what it
-- reads is) and a partition counts as its partitioned table.

-- The relations a query view reads: tables, partitioned tables, foreign
-- tables, materialized views and materialized tables; a partition stands
-- for the root of its tree.  Reads only PostgreSQL's catalogs, so that it
-- runs with anyone's rights.
CREATE FUNCTION materialized_table_internal.relations_read(query_view oid)
RETURNS SETOF oid
LANGUAGE sql STABLE STRICT ROWS 3
BEGIN ATOMIC
WITH RECURSIVE reads(rel) AS (
    SELECT d.refobjid
      FROM pg_catalog.pg_rewrite r
      JOIN pg_catalog.pg_depend d
        ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = r.oid
       AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid <> r.ev_class
     WHERE r.ev_class = $1
    UNION
    SELECT d.refobjid
      FROM reads
      JOIN pg_catalog.pg_class c ON c.oid = reads.rel AND c.relkind = 'v'
      JOIN pg_catalog.pg_rewrite r ON r.ev_class = c.oid
      JOIN pg_catalog.pg_depend d
        ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = r.oid
       AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refobjid <> r.ev_class
)
SELECT DISTINCT
       CASE WHEN c.relispartition
            THEN pg_catalog.pg_partition_root(c.oid::pg_catalog.regclass)::pg_catalog.oid
            ELSE c.oid
       END
  FROM reads
  JOIN pg_catalog.pg_class c ON c.oid = reads.rel
 WHERE c.relkind IN ('r', 'p', 'f', 'm');
END;

-- What users query: one row per edge, upstream relation -> downstream
-- materialized table, with both ends' state (the upstream's is NULL when it
-- is not a materialized table).  A table's level is 1 when it reads no
-- other materialized table, else one more than the deepest one it reads.
CREATE VIEW materialized_table.lineage AS
WITH RECURSIVE edges AS MATERIALIZED (
    SELECT r.upstream, t.relid::pg_catalog.oid AS downstream
      FROM materialized_table_internal.mt_table t
     CROSS JOIN LATERAL materialized_table_internal.relations_read(t.query_view::pg_catalog.oid) AS r(upstream)
     WHERE r.upstream <> t.relid::pg_catalog.oid
), table_edges AS (
    SELECT e.upstream, e.downstream
      FROM edges e
     WHERE e.upstream IN (SELECT relid::pg_catalog.oid FROM materialized_table_internal.mt_table)
), levels(relid, level) AS (
    SELECT t.relid::pg_catalog.oid, 1
      FROM materialized_table_internal.mt_table t
     WHERE NOT EXISTS (SELECT FROM table_edges e WHERE e.downstream = t.relid::pg_catalog.oid)
    UNION ALL
    SELECT e.downstream, l.level + 1
      FROM levels l
      JOIN table_edges e ON e.upstream = l.relid
     WHERE l.level < 64
), depths AS (
    SELECT l.relid, pg_catalog.max(l.level) AS level FROM levels l GROUP BY l.relid
), tables AS MATERIALIZED (
    SELECT m.table_name::pg_catalog.oid AS relid,
           m.refresh_mode,
           m.freshness,
           m.refresh_status,
           m.last_refresh_time,
           (SELECT h.status
              FROM materialized_table_internal.history h
             WHERE h.table_name = m.table_name AND h.status IN ('SUCCEEDED', 'FAILED')
             ORDER BY h.started_at DESC, h.run_id DESC
             LIMIT 1) AS last_refresh_status,
           m.current_lag,
           m.freshness_met,
           l.level
      FROM materialized_table_internal.tables m
      LEFT JOIN depths l ON l.relid = m.table_name::pg_catalog.oid
)
SELECT e.upstream::pg_catalog.regclass AS upstream,
       CASE WHEN u.relid IS NOT NULL THEN 'MATERIALIZED TABLE'
            WHEN c.relkind = 'f' THEN 'FOREIGN TABLE'
            WHEN c.relkind = 'm' THEN 'MATERIALIZED VIEW'
            ELSE 'TABLE'
       END AS upstream_kind,
       e.downstream::pg_catalog.regclass AS downstream,
       d.level AS downstream_level,
       u.refresh_mode AS upstream_refresh_mode,
       u.freshness AS upstream_freshness,
       u.refresh_status AS upstream_refresh_status,
       u.last_refresh_time AS upstream_last_refresh_time,
       u.last_refresh_status AS upstream_last_refresh_status,
       u.current_lag AS upstream_current_lag,
       u.freshness_met AS upstream_freshness_met,
       d.refresh_mode AS downstream_refresh_mode,
       d.freshness AS downstream_freshness,
       d.refresh_status AS downstream_refresh_status,
       d.last_refresh_time AS downstream_last_refresh_time,
       d.last_refresh_status AS downstream_last_refresh_status,
       d.current_lag AS downstream_current_lag,
       d.freshness_met AS downstream_freshness_met
  FROM edges e
  JOIN pg_catalog.pg_class c ON c.oid = e.upstream
  JOIN tables d ON d.relid = e.downstream
  LEFT JOIN tables u ON u.relid = e.upstream;

GRANT SELECT ON materialized_table.lineage TO PUBLIC;

-- The lineage as a Graphviz graph:
--   psql -Atc 'SELECT materialized_table.lineage_dot()' | dot -Tpng > lineage.png
CREATE FUNCTION materialized_table.lineage_dot()
RETURNS text
LANGUAGE C STABLE
AS 'MODULE_PATHNAME', 'mt_lineage_dot';

COMMENT ON FUNCTION materialized_table.lineage_dot() IS
'the lineage of the materialized tables as Graphviz DOT text: sources and materialized tables (with mode, freshness, status and last refresh), suspended tables dashed and grey, failing ones red';
