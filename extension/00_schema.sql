-- materialized_table--1.2.sql, assembled by the Makefile from the files in extension/

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION materialized_table" to load this file. \quit

SET LOCAL search_path = pg_catalog, pg_temp;

GRANT USAGE ON SCHEMA materialized_table TO PUBLIC;

-- Internal objects: the catalog, and one hidden view per materialized table
-- holding its defining query.  The views are owned by their table's owner,
-- who needs USAGE here to refresh; the catalog tables stay private.
CREATE SCHEMA materialized_table_internal;
GRANT USAGE ON SCHEMA materialized_table_internal TO PUBLIC;
