-- materialized_table--1.2--1.3.sql: ALTER EXTENSION materialized_table UPDATE TO '1.3'

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION materialized_table UPDATE TO '1.3'" to load this file. \quit

SET LOCAL search_path = pg_catalog, pg_temp;

-- A node of a Citus cluster: this node's shards of the CONTINUOUS table t,
-- which Citus distributes, made materialized tables of this node that
-- read their sources' co-located shards (converted if need be), with the
-- coordinator's query, freshness and state; the number of shards this node
-- follows and the time their content is fresh as of.  Called by the
-- coordinator's worker on every node.
CREATE FUNCTION materialized_table_internal.follow_shards(
    t pg_catalog.regclass, definition text, freshness text, suspended boolean, refresh boolean,
    OUT shards integer, OUT as_of timestamptz)
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'mt_follow_shards_sql';
REVOKE ALL ON FUNCTION materialized_table_internal.follow_shards(pg_catalog.regclass, text, text, boolean, boolean) FROM PUBLIC;
