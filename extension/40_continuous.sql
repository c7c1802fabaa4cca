-- CONTINUOUS refresh mode (see include/continuous_analysis.h and
-- src/continuous_worker.c).  One row per CONTINUOUS table: how it is
-- maintained and where its pipeline stands.
CREATE TABLE materialized_table_internal.continuous_state (
    relid oid NOT NULL,
    strategy text NOT NULL,
    reason text NOT NULL,
    poll boolean NOT NULL DEFAULT false,
    synced boolean NOT NULL DEFAULT false,
    needs_full boolean NOT NULL DEFAULT false,
    pending_since timestamptz,
    last_apply timestamptz,
    baseline_xmin xid,
    baseline_xmax xid,
    baseline_xip xid[],
    baseline_lsn pg_lsn,
    -- the end of the last batch whose work for the table the worker
    -- committed: after a crash, decoding skips that work for it
    applied_lsn pg_lsn,
    CONSTRAINT continuous_state_pkey PRIMARY KEY (relid),
    CONSTRAINT continuous_state_strategy_check CHECK (strategy IN ('KEYS', 'DELTAS', 'FULL'))
);

-- Work that waits for its table (suspended, or not due yet): the key
-- values of changed rows, one family per source occurrence ...
CREATE TABLE materialized_table_internal.change_keys (
    relid oid NOT NULL,
    family integer NOT NULL,
    keys text[] NOT NULL,
    CONSTRAINT change_keys_pkey PRIMARY KEY (relid, family, keys)
);

-- ... or, for tables maintained by deltas, per-group adjustments.
CREATE TABLE materialized_table_internal.change_deltas (
    relid oid NOT NULL,
    keys text[] NOT NULL,
    deltas text[] NOT NULL
);
CREATE INDEX change_deltas_relid_idx ON materialized_table_internal.change_deltas (relid);

-- Groups of a table maintained by deltas that were recomputed from the
-- sources as of a snapshot (a change of a joined source named them, or a
-- changed row removed the value of their min or max): a change decoded
-- later whose transaction that snapshot saw is already counted in them.  A
-- baseline is a filter (each family: its columns, each with the values it
-- matches; a family numbered below zero matches them row by row, the i-th
-- value of every column together) and the snapshot's xmin, xmax and xip;
-- it is forgotten once decoding has passed lsn.
CREATE TABLE materialized_table_internal.continuous_baseline (
    relid oid NOT NULL,
    lsn pg_lsn NOT NULL,
    family integer NOT NULL,
    position integer NOT NULL,
    column_name text NOT NULL,
    vals text[] NOT NULL,
    has_null boolean NOT NULL,
    snapshot_xmin xid NOT NULL,
    snapshot_xmax xid NOT NULL,
    snapshot_xip xid[] NOT NULL
);
CREATE INDEX continuous_baseline_relid_idx ON materialized_table_internal.continuous_baseline (relid);

REVOKE ALL ON materialized_table_internal.continuous_state FROM PUBLIC;
REVOKE ALL ON materialized_table_internal.continuous_baseline FROM PUBLIC;
REVOKE ALL ON materialized_table_internal.change_keys FROM PUBLIC;
REVOKE ALL ON materialized_table_internal.change_deltas FROM PUBLIC;

-- Every change committed before this time has been applied to its table or
-- kept for it (continuous_state.pending_since); NULL when the database's
-- worker has made no pass since the server started.
CREATE FUNCTION materialized_table_internal.continuous_horizon()
RETURNS timestamptz
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mt_continuous_horizon_sql';

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

-- The CONTINUOUS tables of a Citus coordinator kept from the key values
-- their sources' nodes send (follow_keys), not by this database's worker.
CREATE TABLE materialized_table_internal.forwarded_table (
    relid oid NOT NULL,
    CONSTRAINT forwarded_table_pkey PRIMARY KEY (relid)
);
REVOKE ALL ON materialized_table_internal.forwarded_table FROM PUBLIC;

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
