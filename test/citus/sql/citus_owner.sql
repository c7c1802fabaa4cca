-- A CONTINUOUS table that Citus distributes, owned by a role that is not a
-- superuser.  The coordinator asks the nodes as the extension's owner; each
-- node then analyzes the owner's query and converts, alters and refreshes
-- its shards with the rights of the shard's owner, never the superuser's.
-- The owner's functions log who runs them, on each node.
SET client_min_messages = warning;
SET materialized_table.scheduled_refreshes = off;
CREATE ROLE mt_owner_alice LOGIN;
CREATE ROLE mt_owner_bob LOGIN;
CREATE SCHEMA co AUTHORIZATION mt_owner_alice;
GRANT USAGE ON SCHEMA co TO mt_owner_bob;
SELECT result FROM run_command_on_all_nodes($$CREATE TABLE public.mt_callers (who text)$$);
SELECT result FROM run_command_on_all_nodes($$GRANT INSERT ON public.mt_callers TO PUBLIC$$);
-- callers(): the roles that ran the owner's functions, on each node
CREATE FUNCTION callers() RETURNS TABLE (node text, roles text) LANGUAGE sql AS $$
  SELECT CASE WHEN n.groupid = 0 THEN 'coordinator' ELSE 'worker' END, r.result
    FROM run_command_on_all_nodes($q$SELECT coalesce(string_agg(DISTINCT who, ','), '(none)')
                                       FROM public.mt_callers$q$) r
    JOIN pg_dist_node n USING (nodeid) ORDER BY n.nodeport
$$;
CREATE FUNCTION public.caught_up(t regclass) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    started timestamptz := clock_timestamp();
BEGIN
    LOOP
        IF (SELECT last_refresh_time >= started FROM materialized_table.materialized_tables
             WHERE table_name = t)
           AND NOT EXISTS ((SELECT * FROM co.t EXCEPT ALL SELECT * FROM co.t_query)
                           UNION ALL (SELECT * FROM co.t_query EXCEPT ALL SELECT * FROM co.t)) THEN
            RETURN true;
        END IF;
        IF clock_timestamp() > started + interval '30 seconds' THEN
            RETURN false;
        END IF;
        PERFORM pg_sleep(0.2);
    END LOOP;
END
$$;

SET ROLE mt_owner_alice;
CREATE FUNCTION co.log_caller(x int) RETURNS int LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    INSERT INTO public.mt_callers VALUES (current_user);
    RETURN x;
END
$$;
-- immutable, so that a planner folds one(1) by running it
CREATE FUNCTION co.one(x int) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT co.log_caller(x) $$;
CREATE TABLE co.orders (id bigint, customer_id int NOT NULL, amount numeric(10,2) NOT NULL,
                        PRIMARY KEY (customer_id, id));
SELECT create_distributed_table('co.orders', 'customer_id', shard_count => 4);
INSERT INTO co.orders SELECT i, i % 50, i % 97 FROM generate_series(1, 2000) i;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE co.t DISTRIBUTED BY HASH (customer_id) FRESHNESS = INTERVAL '1' SECOND
    AS SELECT customer_id, count(*) * co.one(1) AS n, sum(amount) AS total
         FROM co.orders GROUP BY customer_id $$);
CREATE VIEW co.t_query AS
  SELECT customer_id, count(*) * co.one(1) AS n, sum(amount) AS total FROM co.orders GROUP BY customer_id;
SELECT caught_up('co.t');
RESET ROLE;
SELECT pg_catalog.pg_get_userbyid(relowner) AS owner FROM pg_class WHERE oid = 'co.t'::regclass;
SELECT nodeport > 0 AS node, result AS shards_owned_by_alice FROM run_command_on_workers($$
  SELECT count(*) FROM materialized_table.materialized_tables m JOIN pg_class c ON c.oid = m.table_name
   WHERE m.table_name::text LIKE 'co.t\_%' AND pg_get_userbyid(c.relowner) = 'mt_owner_alice'$$);

-- the owner's REFRESH and ALTER ... AS reach every node
SET ROLE mt_owner_alice;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE co.t REFRESH');
SELECT nodeport > 0 AS node, result AS manual_runs FROM run_command_on_workers($$
  SELECT count(*) FROM materialized_table.refresh_history
   WHERE table_name::text LIKE 'co.t\_%' AND trigger = 'MANUAL'$$);
SELECT materialized_table.execute($$
  ALTER MATERIALIZED TABLE co.t AS SELECT customer_id, count(*) * co.one(1) AS n, sum(amount) AS total,
                                          max(amount) AS top FROM co.orders GROUP BY customer_id $$);
CREATE OR REPLACE VIEW co.t_query AS
  SELECT customer_id, count(*) * co.one(1) AS n, sum(amount) AS total, max(amount) AS top
    FROM co.orders GROUP BY customer_id;
INSERT INTO co.orders SELECT i, i % 50, 500 FROM generate_series(2001, 2100) i;
SELECT caught_up('co.t');
SELECT max(top) FROM co.t;
RESET ROLE;

-- a table of the coordinator, kept from partial aggregates the nodes keep
-- per shard: created, kept and refreshed with the owner's rights too
CREATE FUNCTION public.buckets_caught_up() RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    started timestamptz := clock_timestamp();
BEGIN
    LOOP
        IF (SELECT last_refresh_time >= started FROM materialized_table.materialized_tables
             WHERE table_name = 'co.by_bucket'::regclass)
           AND NOT EXISTS ((SELECT * FROM co.by_bucket EXCEPT ALL SELECT * FROM co.by_bucket_query)
                           UNION ALL (SELECT * FROM co.by_bucket_query EXCEPT ALL SELECT * FROM co.by_bucket)) THEN
            RETURN true;
        END IF;
        IF clock_timestamp() > started + interval '30 seconds' THEN
            RETURN false;
        END IF;
        PERFORM pg_sleep(0.2);
    END LOOP;
END
$$;
SET ROLE mt_owner_alice;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE co.by_bucket FRESHNESS = INTERVAL '1' SECOND
    AS SELECT customer_id % 5 AS bucket, sum(amount * co.one(1)) AS total FROM co.orders GROUP BY 1 $$);
CREATE VIEW co.by_bucket_query AS
  SELECT customer_id % 5 AS bucket, sum(amount * co.one(1)) AS total FROM co.orders GROUP BY 1;
INSERT INTO co.orders SELECT i, i % 50, 7 FROM generate_series(3001, 3050) i;
SELECT buckets_caught_up();
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE co.by_bucket REFRESH');
RESET ROLE;
SELECT maintenance, maintenance_detail FROM materialized_table.materialized_tables
 WHERE table_name = 'co.by_bucket'::regclass;
SELECT nodeport > 0 AS node, result AS partial_tables_owned_by_alice FROM run_command_on_workers($$
  SELECT count(*) FROM materialized_table.materialized_tables m JOIN pg_class c ON c.oid = m.table_name
   WHERE m.table_name::text LIKE 'co.mt\_partial\_%' AND pg_get_userbyid(c.relowner) = 'mt_owner_alice'$$);

-- every call of the owner's function, on every node, ran as the owner
-- (caught_up() runs as the owner too: a view's functions run as the caller)
SELECT * FROM callers();
-- control: a superuser's call is logged as such
SELECT result FROM run_command_on_workers($$SELECT co.one(1) FROM co.t_query LIMIT 1$$);
SELECT * FROM callers();

-- another role may neither alter the table nor ask a node to follow it
SET ROLE mt_owner_bob;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE co.t REFRESH');
SELECT success, result FROM run_command_on_workers($$
  SELECT * FROM materialized_table_internal.follow_shards('co.t', 'SELECT 1', '1 s', false, true)$$);
RESET ROLE;

SELECT materialized_table.execute('DROP MATERIALIZED TABLE co.t; DROP MATERIALIZED TABLE co.by_bucket');
DROP SCHEMA co CASCADE;
SELECT result FROM run_command_on_all_nodes($$DROP TABLE public.mt_callers$$);
DROP FUNCTION callers();
DROP FUNCTION public.caught_up(regclass);
DROP FUNCTION public.buckets_caught_up();
DROP ROLE mt_owner_alice;
DROP ROLE mt_owner_bob;
RESET materialized_table.scheduled_refreshes;
