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

REVOKE ALL ON materialized_table_internal.continuous_state FROM PUBLIC;
REVOKE ALL ON materialized_table_internal.change_keys FROM PUBLIC;
REVOKE ALL ON materialized_table_internal.change_deltas FROM PUBLIC;

-- Every change committed before this time has been applied to its table or
-- kept for it (continuous_state.pending_since); NULL when the database's
-- worker has made no pass since the server started.
CREATE FUNCTION materialized_table_internal.continuous_horizon()
RETURNS timestamptz
LANGUAGE C VOLATILE
AS 'MODULE_PATHNAME', 'mt_continuous_horizon_sql';
