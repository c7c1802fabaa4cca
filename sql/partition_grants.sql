-- The partitions of a materialized table carry its privileges: those that
-- exist when it is granted, and those its refreshes create later.  A
-- partition read directly is checked against its own privileges.
CREATE SCHEMA part_grants_s;
SET search_path = part_grants_s, public;
CREATE TABLE sales (ds text, product int, q int);
INSERT INTO sales VALUES ('2024-01-01', 1, 5), ('2024-01-02', 2, 7);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE daily PARTITIONED BY (ds) FRESHNESS = INTERVAL '1' HOUR
    AS SELECT ds, product, sum(q) AS q FROM sales GROUP BY 1, 2;
  CREATE MATERIALIZED TABLE spread DISTRIBUTED BY HASH (product) INTO 2 BUCKETS FRESHNESS = INTERVAL '1' HOUR
    AS SELECT product, sum(q) AS q FROM sales GROUP BY 1
$$);
CREATE ROLE regress_pg_grants_reader;
GRANT USAGE ON SCHEMA part_grants_s TO regress_pg_grants_reader;
CREATE VIEW acls AS
SELECT c.relname, c.relacl::text,
       (SELECT string_agg(a.attname || ' ' || a.attacl::text, ', ' ORDER BY a.attnum)
          FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attacl IS NOT NULL) AS column_acls
  FROM pg_class c
 WHERE c.relnamespace = 'part_grants_s'::regnamespace AND c.relkind IN ('r', 'p')
   AND (c.relname LIKE 'daily%' OR c.relname LIKE 'spread%')
 ORDER BY c.relname;

-- GRANT reaches the partitions there are, and the buckets
GRANT SELECT ON daily, spread TO regress_pg_grants_reader;
GRANT SELECT (ds), UPDATE (q) ON daily TO PUBLIC;
SELECT * FROM acls;
-- a partition a refresh creates gets them too
INSERT INTO sales VALUES ('2024-01-03', 3, 1);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE daily REFRESH');
SELECT * FROM acls WHERE relname = 'daily_2024_01_03';
SET ROLE regress_pg_grants_reader;
SELECT * FROM daily_2024_01_03;
SELECT * FROM daily_2024_01_01;
SELECT count(*) FROM spread_b0;
RESET ROLE;
-- and the scheduled run's partitions
INSERT INTO sales VALUES ('2024-01-04', 4, 2);
SELECT materialized_table.scheduled_refresh('daily', '2024-01-05 00:00+00');
SELECT * FROM acls WHERE relname = 'daily_2024_01_04';
-- REVOKE too, and ALL TABLES IN SCHEMA
REVOKE SELECT ON daily FROM regress_pg_grants_reader;
REVOKE SELECT (ds), UPDATE (q) ON daily FROM PUBLIC;
SET ROLE regress_pg_grants_reader;
SELECT * FROM daily_2024_01_03;
RESET ROLE;
GRANT SELECT ON ALL TABLES IN SCHEMA part_grants_s TO regress_pg_grants_reader;
SELECT relname, relacl FROM acls WHERE relname LIKE 'daily_2024_01_0_';
REVOKE SELECT ON ALL TABLES IN SCHEMA part_grants_s FROM regress_pg_grants_reader;
GRANT SELECT ON daily TO regress_pg_grants_reader WITH GRANT OPTION;
SELECT * FROM acls;
-- the role's privileges on the partitions are known: it cannot be dropped meanwhile
\set VERBOSITY terse
DROP ROLE regress_pg_grants_reader;
\set VERBOSITY default
REVOKE ALL ON daily, spread FROM regress_pg_grants_reader;
SELECT count(*) AS partitions_naming_the_role
  FROM pg_class WHERE relnamespace = 'part_grants_s'::regnamespace
   AND relacl::text LIKE '%regress_pg_grants_reader%';

SET client_min_messages = warning;
DROP SCHEMA part_grants_s CASCADE;
RESET client_min_messages;
DROP ROLE regress_pg_grants_reader;
