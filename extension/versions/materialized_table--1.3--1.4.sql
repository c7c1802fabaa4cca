-- materialized_table--1.3--1.4.sql: ALTER EXTENSION materialized_table UPDATE TO '1.4'

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION materialized_table UPDATE TO '1.4'" to load this file. \quit

SET LOCAL search_path = pg_catalog, pg_temp;

-- A node of a Citus cluster: for each shard of source this node holds, a
-- materialized table of this node keeping that shard's partial aggregates
-- (definition, as the coordinator's table id of the given schema and owner
-- has them computed), with its freshness and state; the number of them, as
-- of when they are fresh, a marker of their last refreshes and their rows
-- combined by group (kinds: how each column combines), unless the marker
-- is among those known.  An empty definition drops them.  Called by the
-- coordinator's worker on every node.
CREATE FUNCTION materialized_table_internal.follow_partials(
    id bigint, schema_name name, source pg_catalog.regclass, owner_name name, definition text,
    kinds text[], freshness text, suspended boolean, known text[])
RETURNS text
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'mt_follow_partials_sql';
REVOKE ALL ON FUNCTION materialized_table_internal.follow_partials(bigint, name, pg_catalog.regclass, name, text, text[], text, boolean, text[]) FROM PUBLIC;
