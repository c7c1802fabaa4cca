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

-- A node of a Citus cluster: its materialized tables of partial aggregates
-- (follow_partials), of the coordinator's table table_id, whose first
-- ngroups columns are the group's (one of a table the coordinator no longer
-- has is dropped at the next call for another); each
-- write of one logs the groups it wrote (key: those columns as text, NULL
-- for all of them).  A call of the coordinator takes the rows logged since
-- into a new batch and sends it the rows of the groups of every batch past
-- the last it acknowledged, which goes at the next call.
CREATE TABLE materialized_table_internal.partial_table (
    relid oid NOT NULL,
    table_id bigint NOT NULL,
    ngroups integer NOT NULL,
    CONSTRAINT partial_table_pkey PRIMARY KEY (relid)
);
CREATE TABLE materialized_table_internal.partial_change (
    relid oid NOT NULL,
    batch bigint,
    key text[]
);
CREATE INDEX partial_change_relid_idx ON materialized_table_internal.partial_change (relid, batch);
CREATE SEQUENCE materialized_table_internal.partial_batch;
REVOKE ALL ON materialized_table_internal.partial_table FROM PUBLIC;
REVOKE ALL ON materialized_table_internal.partial_change FROM PUBLIC;
REVOKE ALL ON SEQUENCE materialized_table_internal.partial_batch FROM PUBLIC;
