-- test/clients/clients.sql: the psql part of clients.sh.  Every check
-- raises an error when it fails (ON_ERROR_STOP); the two error statements
-- at the end are looked at by clients.sh.
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS clients_psql CASCADE;
RESET client_min_messages;
CREATE SCHEMA clients_psql;
CREATE TABLE clients_psql.src (id int PRIMARY KEY, g text, v int);
INSERT INTO clients_psql.src VALUES (1, 'a', 10), (2, 'a', 5), (3, 'b', 7);

-- the Flink spelling and the native one, side by side
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE clients_psql.flink_totals (PRIMARY KEY (g) NOT ENFORCED)
    FRESHNESS = INTERVAL '1' HOUR
    AS SELECT g, sum(v) AS total FROM clients_psql.src GROUP BY g
$$) = 'CREATE MATERIALIZED TABLE' AS created \gset
CREATE MATERIALIZED VIEW clients_psql.native_totals
  WITH (materialized_table.freshness = '1 hour', materialized_table.primary_key = 'g')
  AS SELECT g, sum(v) AS total FROM clients_psql.src GROUP BY g;

INSERT INTO clients_psql.src VALUES (4, 'c', 1);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE clients_psql.flink_totals REFRESH');
REFRESH MATERIALIZED VIEW CONCURRENTLY clients_psql.native_totals;
DO $$
BEGIN
    IF (SELECT count(*) FROM clients_psql.native_totals) <> 3
       OR EXISTS (SELECT * FROM clients_psql.native_totals EXCEPT SELECT * FROM clients_psql.flink_totals)
       OR EXISTS (SELECT * FROM clients_psql.flink_totals EXCEPT SELECT * FROM clients_psql.native_totals) THEN
        RAISE EXCEPTION 'the two spellings disagree';
    END IF;
END $$;

-- suspend both ways, describe, show
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE clients_psql.flink_totals SUSPEND');
ALTER MATERIALIZED VIEW clients_psql.native_totals SET (materialized_table.refresh_status = 'suspended');
DO $$
BEGIN
    IF (SELECT count(*) FROM materialized_table.materialized_tables
         WHERE table_name::text LIKE 'clients_psql.%' AND refresh_status = 'SUSPENDED') <> 2 THEN
        RAISE EXCEPTION 'not both suspended';
    END IF;
    IF (SELECT string_agg(name || ':' || key, ',' ORDER BY name)
          FROM materialized_table.execute_query('DESCRIBE clients_psql.native_totals') WHERE key IS NOT NULL)
       IS DISTINCT FROM 'g:PRI(g)' THEN
        RAISE EXCEPTION 'DESCRIBE is wrong';
    END IF;
    IF (SELECT count(*) FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES FROM clients_psql')) <> 2 THEN
        RAISE EXCEPTION 'SHOW MATERIALIZED TABLES is wrong';
    END IF;
END $$;
SELECT * FROM materialized_table.execute_query('SHOW MATERIALIZED TABLES IN clients_psql');

-- drop both ways
SELECT materialized_table.execute('DROP MATERIALIZED TABLE clients_psql.flink_totals');
DROP MATERIALIZED VIEW clients_psql.native_totals;
DO $$
BEGIN
    IF EXISTS (SELECT FROM materialized_table.materialized_tables WHERE table_name::text LIKE 'clients_psql.%') THEN
        RAISE EXCEPTION 'not dropped';
    END IF;
END $$;

-- errors: an internal position into execute()'s text, a position into the native statement
\set ON_ERROR_STOP off
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE clients_psql.bad FRESHNESS = INTERVAL '5' HOUR REFRESH_MODE = FULL AS SELECT 1 AS a$$);
CREATE MATERIALIZED VIEW clients_psql.bad WITH (materialized_table.freshness = '5 hours', materialized_table.refresh_mode = 'full') AS SELECT 1 AS a;
\set ON_ERROR_STOP on
SET client_min_messages = warning;
DROP SCHEMA clients_psql CASCADE;
