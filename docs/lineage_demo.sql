-- docs/lineage_demo.sql: the lineage drawn in docs/lineage.png.
--
--   psql -d demo -f docs/lineage_demo.sql
--   psql -d demo -Atc 'SELECT materialized_table.lineage_dot()' | dot -Tpng > docs/lineage.png
--
-- Sources, a CONTINUOUS table read by FULL tables on two levels, one table
-- suspended and one whose last refresh failed.
DROP SCHEMA IF EXISTS shop CASCADE;
CREATE SCHEMA shop;
CREATE TABLE shop.customers (id int PRIMARY KEY, region text NOT NULL);
CREATE TABLE shop.orders (id int PRIMARY KEY, customer_id int NOT NULL, ordered_at timestamptz NOT NULL,
                          amount numeric(10, 2) NOT NULL);
ALTER TABLE shop.customers REPLICA IDENTITY FULL;
ALTER TABLE shop.orders REPLICA IDENTITY FULL;
INSERT INTO shop.customers SELECT i, 'region ' || i % 4 FROM generate_series(1, 100) i;
INSERT INTO shop.orders SELECT i, 1 + i % 100, timestamptz '2024-06-01' + i * interval '7 minutes', i % 90 + 10
  FROM generate_series(1, 2000) i;
CREATE TABLE shop.fx (currency text PRIMARY KEY, rate numeric NOT NULL);
INSERT INTO shop.fx VALUES ('EUR', 1), ('USD', 0.9);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE shop.orders_enriched (PRIMARY KEY (id) NOT ENFORCED)
    FRESHNESS = INTERVAL '1' MINUTE AS
    SELECT o.id, c.region, to_char(o.ordered_at, 'YYYY-MM-DD') AS ds, o.amount
      FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id;
  CREATE MATERIALIZED TABLE shop.daily_revenue PARTITIONED BY (ds)
    WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd')
    FRESHNESS = INTERVAL '1' HOUR AS
    SELECT ds, region, sum(amount) AS revenue, count(*) AS orders FROM shop.orders_enriched GROUP BY ds, region;
  CREATE MATERIALIZED TABLE shop.region_revenue FRESHNESS = INTERVAL '2' HOUR AS
    SELECT region, sum(revenue) AS revenue FROM shop.daily_revenue GROUP BY region;
  CREATE MATERIALIZED TABLE shop.revenue_usd FRESHNESS = INTERVAL '4' HOUR AS
    SELECT r.region, r.revenue / fx.rate AS revenue_usd FROM shop.region_revenue r, shop.fx WHERE fx.currency = 'USD';
  CREATE MATERIALIZED TABLE shop.top_customers FRESHNESS = INTERVAL '1' DAY AS
    SELECT c.id, c.region, count(*) AS orders FROM shop.orders o JOIN shop.customers c ON c.id = o.customer_id
     GROUP BY c.id, c.region ORDER BY orders DESC LIMIT 10;
  ALTER MATERIALIZED TABLE shop.top_customers SUSPEND
$$);
-- a refresh that fails: revenue_usd divides by a rate of zero
UPDATE shop.fx SET rate = 0 WHERE currency = 'USD';
SELECT * FROM materialized_table.refresh('shop.revenue_usd');
