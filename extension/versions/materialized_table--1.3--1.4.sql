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

-- A node of a Citus cluster: for each source of the coordinator's table id
-- (of the given schema and owner) and each shard of it this node holds, a
-- materialized table of this node whose changes name the key values the
-- coordinator's table recomputes (definitions: over each source, its key
-- columns, ncolumns of them); each apply of one logs those values instead
-- of writing rows.  Lines: the number of them per source and as of when
-- they are fresh; then per source a marker and the values logged since the
-- batch the coordinator acknowledged in known ("=" none, "+" and their
-- text[][], "*" all of them).  Empty definitions drop them.  Called by the
-- coordinator's worker on every node.
CREATE FUNCTION materialized_table_internal.follow_keys(
    id bigint, schema_name name, sources pg_catalog.regclass[], owner_name name,
    definitions text[], ncolumns integer[], freshness text, known text[])
RETURNS text
LANGUAGE C VOLATILE STRICT
AS 'MODULE_PATHNAME', 'mt_follow_keys_sql';
REVOKE ALL ON FUNCTION materialized_table_internal.follow_keys(bigint, name, pg_catalog.regclass[], name, text[], integer[], text, text[]) FROM PUBLIC;

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
    -- kept by follow_keys: its applies log the keys named, not rows
    forwards boolean NOT NULL DEFAULT false,
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

-- The CONTINUOUS tables of a Citus coordinator kept from the key values
-- their sources' nodes send (follow_keys), not by this database's worker.
CREATE TABLE materialized_table_internal.forwarded_table (
    relid oid NOT NULL,
    CONSTRAINT forwarded_table_pkey PRIMARY KEY (relid)
);
REVOKE ALL ON materialized_table_internal.forwarded_table FROM PUBLIC;
