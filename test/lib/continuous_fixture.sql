-- Sources and CONTINUOUS tables of every query shape, for the load and crash
-- tests.  mismatches(t) (test/lib/mismatches.sql) counts the rows in which a materialized table and
-- its query differ (EXCEPT ALL both ways).
DROP SCHEMA IF EXISTS load CASCADE;
CREATE SCHEMA load;
SET search_path = load, public;

CREATE TABLE accounts (id int PRIMARY KEY, grp int NOT NULL, balance numeric(12,2) NOT NULL, free numeric);
CREATE TABLE customers (id int PRIMARY KEY, region text NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, ds date NOT NULL, amount numeric NOT NULL);
INSERT INTO accounts SELECT i, i % 50, (i * 37) % 1000, CASE WHEN i % 3 > 0 THEN i / 7.0 END
  FROM generate_series(1, 5000) i;
INSERT INTO customers SELECT i, 'region ' || (i % 7) FROM generate_series(1, 500) i;
INSERT INTO orders SELECT i, 1 + (i * 13) % 500, date '2024-01-01' + (i % 30), (i * 7) % 100 FROM generate_series(1, 20000) i;

\set schema load
\ir mismatches.sql

SELECT materialized_table.execute($$
CREATE MATERIALIZED TABLE load.agg FRESHNESS = INTERVAL '1' SECOND AS
  SELECT grp, count(*) AS n, sum(balance) AS total, avg(balance) AS average, count(free) AS frees
  FROM load.accounts GROUP BY grp;
CREATE MATERIALIZED TABLE load.own_rows FRESHNESS = INTERVAL '1' SECOND AS
  SELECT grp, count(*) AS n, sum(balance) AS total, count(free) AS frees
  FROM load.accounts GROUP BY grp;
CREATE MATERIALIZED TABLE load.free_sums FRESHNESS = INTERVAL '1' SECOND AS
  SELECT grp, sum(free) AS free FROM load.accounts GROUP BY grp;
CREATE MATERIALIZED TABLE load.minmax FRESHNESS = INTERVAL '1' SECOND AS
  SELECT grp, min(balance) AS lo, max(balance) AS hi, string_agg(id::text, ',' ORDER BY id) AS ids
  FROM load.accounts GROUP BY grp;
CREATE MATERIALIZED TABLE load.minmax_deltas FRESHNESS = INTERVAL '1' SECOND AS
  SELECT grp, min(balance) AS lo, max(balance) AS hi, min(free) AS lo_free, count(*) AS n
  FROM load.accounts GROUP BY grp;
CREATE MATERIALIZED TABLE load.minmax_global FRESHNESS = INTERVAL '1' SECOND AS
  SELECT min(balance) AS lo, max(free) AS hi, count(*) AS n FROM load.accounts;
CREATE MATERIALIZED TABLE load.minmax_join FRESHNESS = INTERVAL '1' SECOND AS
  SELECT c.region, min(o.amount) AS lo, max(o.ds) AS last_ds, count(*) AS n
  FROM load.orders o JOIN load.customers c ON c.id = o.customer_id GROUP BY c.region;
CREATE MATERIALIZED TABLE load.joinagg FRESHNESS = INTERVAL '1' SECOND AS
  SELECT o.ds, c.region, count(*) AS n, sum(o.amount) AS total
  FROM load.orders o JOIN load.customers c ON c.id = o.customer_id GROUP BY o.ds, c.region;
CREATE MATERIALIZED TABLE load.joindelta FRESHNESS = INTERVAL '1' SECOND AS
  SELECT o.ds, c.region, count(*) AS n, sum(o.customer_id) AS customers, avg(o.id) AS avg_id
  FROM load.orders o JOIN load.customers c ON c.id = o.customer_id GROUP BY o.ds, c.region;
CREATE MATERIALIZED TABLE load.bycustomer FRESHNESS = INTERVAL '1' SECOND AS
  SELECT o.customer_id, c.region, count(*) AS n, sum(o.id) AS ids
  FROM load.orders o JOIN load.customers c ON c.id = o.customer_id WHERE o.id % 3 <> 0
  GROUP BY o.customer_id, c.region;
CREATE MATERIALIZED TABLE load.rich FRESHNESS = INTERVAL '2' SECOND AS
  SELECT id, grp, balance FROM load.accounts WHERE balance > 900;
CREATE MATERIALIZED TABLE load.global FRESHNESS = INTERVAL '1' SECOND AS
  SELECT count(*) AS n, sum(amount) AS total FROM load.orders;
CREATE MATERIALIZED TABLE load.global_deltas FRESHNESS = INTERVAL '1' SECOND AS
  SELECT count(*) AS n, sum(balance) AS total, avg(balance) AS average FROM load.accounts;
CREATE MATERIALIZED TABLE load.byexpr FRESHNESS = INTERVAL '1' SECOND AS
  SELECT id % 10 AS bucket, count(*) AS n, sum(balance * 2) AS doubled FROM load.accounts GROUP BY 1;
CREATE MATERIALIZED TABLE load.filtered FRESHNESS = INTERVAL '1' SECOND AS
  SELECT grp, count(*) FILTER (WHERE balance > 500) AS big, sum(balance) FILTER (WHERE free IS NULL) AS nofree
  FROM load.accounts GROUP BY grp HAVING count(*) > 99;
CREATE MATERIALIZED TABLE load.scales FRESHNESS = INTERVAL '1' SECOND AS
  SELECT grp, sum(CASE WHEN free IS NULL THEN balance ELSE balance * 1.5 END) AS mixed,
         sum(balance) * 1.0 / count(*) AS mean
  FROM load.accounts GROUP BY grp;
CREATE MATERIALIZED TABLE load.joinshare FRESHNESS = INTERVAL '1' SECOND AS
  SELECT o.ds, sum(CASE WHEN c.region = 'region 1' THEN o.customer_id ELSE 0 END) * 100.0 / sum(o.customer_id) AS share
  FROM load.orders o JOIN load.customers c ON c.id = o.customer_id GROUP BY o.ds;
CREATE MATERIALIZED TABLE load.joinglobal FRESHNESS = INTERVAL '1' SECOND AS
  SELECT count(*) AS n, sum(o.customer_id) AS customers FROM load.orders o
  JOIN load.customers c ON c.id = o.customer_id WHERE c.region <> 'region 0';
CREATE MATERIALIZED TABLE load.topk FRESHNESS = INTERVAL '1' SECOND AS
  SELECT grp, sum(balance) AS total FROM load.accounts GROUP BY grp ORDER BY total DESC, grp LIMIT 5;
CREATE MATERIALIZED TABLE load.topjoin FRESHNESS = INTERVAL '1' SECOND AS
  SELECT o.customer_id, c.region, sum(o.amount) AS revenue FROM load.orders o
  JOIN load.customers c ON c.id = o.customer_id GROUP BY o.customer_id, c.region
  ORDER BY revenue DESC, o.customer_id LIMIT 10;
CREATE MATERIALIZED TABLE load.fromsub FRESHNESS = INTERVAL '1' SECOND AS
  SELECT x.region, x.ds, count(*) AS n, sum(x.net) AS net
  FROM (SELECT c.region, o.ds, o.amount - 1 AS net FROM load.orders o, load.customers c
         WHERE c.id = o.customer_id) AS x GROUP BY x.region, x.ds;
CREATE MATERIALIZED TABLE load.twice FRESHNESS = INTERVAL '1' SECOND AS
  SELECT c1.region AS from_region, c2.region AS to_region, count(*) AS n
  FROM load.orders o JOIN load.customers c1 ON c1.id = o.customer_id
  JOIN load.customers c2 ON c2.id = 1 + o.customer_id % 500 GROUP BY 1, 2;
CREATE MATERIALIZED TABLE load.setop FRESHNESS = INTERVAL '1' SECOND AS
  SELECT customer_id AS id FROM load.orders WHERE amount > 90
  UNION SELECT id FROM load.customers WHERE region = 'region 3';
CREATE MATERIALIZED TABLE load.insub FRESHNESS = INTERVAL '1' SECOND AS
  SELECT a.id, a.grp FROM load.accounts a WHERE a.grp IN (SELECT c.id % 50 FROM load.customers c WHERE c.region = 'region 2');
CREATE MATERIALIZED TABLE load.unnested FRESHNESS = INTERVAL '1' SECOND AS
  SELECT a.grp, count(*) AS n, sum(x) AS total FROM load.accounts a, unnest(ARRAY[a.id, a.grp]) AS x GROUP BY a.grp;
CREATE MATERIALIZED TABLE load.leftjoin FRESHNESS = INTERVAL '1' SECOND AS
  SELECT c.id, c.region, count(o.id) AS orders FROM load.customers c
  LEFT JOIN load.orders o ON o.customer_id = c.id GROUP BY c.id, c.region;
CREATE MATERIALIZED TABLE load.regions FRESHNESS = INTERVAL '1' SECOND AS
  SELECT DISTINCT region FROM load.customers;
CREATE MATERIALIZED TABLE load.ranked FRESHNESS = INTERVAL '3' SECOND AS
  SELECT id, grp, rank() OVER (PARTITION BY grp ORDER BY balance, id) AS r FROM load.accounts;
CREATE MATERIALIZED TABLE load.chain FRESHNESS = INTERVAL '2' SECOND AS
  SELECT grp, n, total FROM load.agg WHERE n > 95;
CREATE MATERIALIZED TABLE load.ownchain FRESHNESS = INTERVAL '2' SECOND AS
  SELECT grp, n, frees FROM load.own_rows WHERE total > 50000;
CREATE MATERIALIZED TABLE load.chainjoin FRESHNESS = INTERVAL '2' SECOND AS
  SELECT a.grp, count(*) AS n, sum(a.id) AS ids FROM load.accounts a JOIN load.agg g ON g.grp = a.grp
  WHERE g.n > 95 GROUP BY a.grp;
-- rows kept by keys in a hidden state: a LIMIT over keys, a query over an
-- aggregating FROM subquery, a WITH query read twice, a global aggregate
CREATE MATERIALIZED TABLE load.kept_top FRESHNESS = INTERVAL '1' SECOND AS
  SELECT id, grp, balance FROM load.accounts WHERE grp < 20 ORDER BY balance DESC, id LIMIT 7;
CREATE MATERIALIZED TABLE load.kept_sub FRESHNESS = INTERVAL '1' SECOND AS
  SELECT n, count(*) AS customers FROM (SELECT c.id, count(o.id) AS n FROM load.customers c
    LEFT JOIN load.orders o ON o.customer_id = c.id GROUP BY c.id) x GROUP BY n;
CREATE MATERIALIZED TABLE load.kept_cte FRESHNESS = INTERVAL '1' SECOND AS
  WITH per_grp AS (SELECT grp, count(*) AS n FROM load.accounts GROUP BY grp)
  SELECT grp, n FROM per_grp WHERE n >= (SELECT max(n) - 3 FROM per_grp);
CREATE MATERIALIZED TABLE load.kept_input FRESHNESS = INTERVAL '1' SECOND AS
  SELECT count(DISTINCT customer_id) AS buyers, string_agg(DISTINCT ds::text, ',' ORDER BY ds::text) AS days
  FROM load.orders WHERE amount > 95;
-- the rows of grouped queries kept by the keys their changes name: through
-- a correlated subquery (TPC-H Q4) and through a join (Q16)
CREATE MATERIALIZED TABLE load.kept_groups FRESHNESS = INTERVAL '1' SECOND AS
  SELECT c.region, count(*) AS customers FROM load.customers c
  WHERE EXISTS (SELECT FROM load.orders o WHERE o.customer_id = c.id AND o.amount > 50) GROUP BY c.region;
CREATE MATERIALIZED TABLE load.kept_join_groups FRESHNESS = INTERVAL '1' SECOND AS
  SELECT c.region, count(DISTINCT o.ds) AS days, max(o.amount) AS top
  FROM load.orders o JOIN load.customers c ON c.id = o.customer_id GROUP BY c.region;
-- grouping sets kept by deltas, of one table and of a join
CREATE MATERIALIZED TABLE load.rollup FRESHNESS = INTERVAL '1' SECOND AS
  SELECT grp % 5 AS grp5, grp, count(*) AS n, sum(balance) AS total, grouping(grp % 5, grp) AS level
  FROM load.accounts GROUP BY ROLLUP (grp % 5, grp);
CREATE MATERIALIZED TABLE load.cube_join FRESHNESS = INTERVAL '1' SECOND AS
  SELECT c.region, o.ds, count(*) AS n, sum(o.customer_id) AS customers
  FROM load.orders o JOIN load.customers c ON c.id = o.customer_id GROUP BY CUBE (c.region, o.ds);
-- keys: an expression over one source, a LATERAL subquery, a FULL JOIN,
-- an outer join's nullable side looked up
CREATE MATERIALIZED TABLE load.by_bucket FRESHNESS = INTERVAL '1' SECOND AS
  SELECT balance::int % 10 AS bucket, count(DISTINCT grp) AS grps, string_agg(id::text, ',' ORDER BY id) AS ids
  FROM load.accounts WHERE id % 7 = 0 GROUP BY balance::int % 10;
CREATE MATERIALIZED TABLE load.last_order FRESHNESS = INTERVAL '1' SECOND AS
  SELECT c.id, c.region, o.id AS order_id, o.amount
  FROM load.customers c LEFT JOIN LATERAL (SELECT o.id, o.amount FROM load.orders o
    WHERE o.customer_id = c.id ORDER BY o.ds DESC, o.id DESC LIMIT 1) o ON true;
CREATE MATERIALIZED TABLE load.full_join FRESHNESS = INTERVAL '1' SECOND AS
  SELECT a.id, a.balance, c.id AS customer_id, c.region
  FROM load.accounts a FULL JOIN load.customers c ON c.id = a.grp WHERE a.id IS NULL OR a.id % 5 = 0;
CREATE MATERIALIZED TABLE load.nullable_side FRESHNESS = INTERVAL '1' SECOND AS
  SELECT o.id, o.amount, c.region FROM load.orders o LEFT JOIN load.customers c
    ON c.id = o.customer_id AND c.region <> 'region 3' WHERE o.id % 4 = 0;
-- windows over the whole result, over their input rows kept by keys: a
-- rank of a join's groups, a running total of rows
CREATE MATERIALIZED TABLE load.kept_ranks FRESHNESS = INTERVAL '1' SECOND AS
  SELECT c.region, sum(o.amount) AS revenue, rank() OVER (ORDER BY sum(o.amount) DESC, c.region) AS place
  FROM load.orders o JOIN load.customers c ON c.id = o.customer_id GROUP BY c.region;
CREATE MATERIALIZED TABLE load.kept_running FRESHNESS = INTERVAL '1' SECOND AS
  SELECT id, balance, sum(balance) OVER (ORDER BY id) AS running, count(*) OVER () AS accounts
  FROM load.accounts WHERE grp < 5;
$$);
