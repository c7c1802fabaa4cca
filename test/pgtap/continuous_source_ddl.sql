-- DDL on sources while they are written: a column the queries do not read
-- changes type (the table is rewritten), is added with a default, is
-- dropped.  Decoding hands over each row in the layout of its time, and a
-- batch may hold rows of both layouts, or be applied after the DDL that
-- changed the layout committed; the DELTAS tables, which read those rows,
-- must not read them with the wrong layout.  Every table converges.
--
-- Not wrapped in a transaction: the worker only sees committed data.  The
-- file cleans up after itself.
\set schema tap_sd
\ir ../lib/tap_helpers.sql
SET search_path = tap_sd, public;

CREATE TABLE customers (id int PRIMARY KEY, note int, region text NOT NULL);
INSERT INTO customers SELECT i, i, 'r' || (i % 7) FROM generate_series(1, 100) i;
CREATE TABLE orders (id int PRIMARY KEY, junk int, customer_id int NOT NULL, amount int NOT NULL);
INSERT INTO orders SELECT i, i, 1 + i % 100, i % 50 FROM generate_series(1, 2000) i;

SELECT plan(7);

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tap_sd.own FRESHNESS = INTERVAL '1' SECOND AS
    SELECT customer_id, count(*) AS n, sum(amount) AS total FROM tap_sd.orders GROUP BY customer_id;
  CREATE MATERIALIZED TABLE tap_sd.avgs FRESHNESS = INTERVAL '1' SECOND AS
    SELECT customer_id, count(*) AS n, avg(amount) AS mean FROM tap_sd.orders GROUP BY customer_id;
  CREATE MATERIALIZED TABLE tap_sd.joined FRESHNESS = INTERVAL '1' SECOND AS
    SELECT c.region, count(*) AS n, sum(o.amount) AS total
      FROM tap_sd.orders o JOIN tap_sd.customers c ON c.id = o.customer_id GROUP BY c.region;
  CREATE MATERIALIZED TABLE tap_sd.tops FRESHNESS = INTERVAL '1' SECOND AS
    SELECT customer_id, max(amount) AS top FROM tap_sd.orders GROUP BY customer_id$$) \g /dev/null
SELECT isnt(wait_for($$SELECT bool_and(synced) FROM materialized_table_internal.continuous_state$$, 20),
            NULL, 'the worker takes the tables up');

-- (a procedure that commits cannot have a SET search_path: names are qualified)
CREATE PROCEDURE writer(seconds float) LANGUAGE plpgsql AS $$
DECLARE
    stop timestamptz := clock_timestamp() + seconds * interval '1 second';
    k int;
BEGIN
    WHILE clock_timestamp() < stop LOOP
        k := 1 + (random() * 3000)::int;
        INSERT INTO tap_sd.orders AS o (id, customer_id, amount) VALUES (k, 1 + k % 100, (random() * 60)::int)
            ON CONFLICT (id) DO UPDATE SET amount = excluded.amount, customer_id = 1 + o.customer_id % 100;
        DELETE FROM tap_sd.orders WHERE id = 1 + (random() * 3000)::int;
        COMMIT;
    END LOOP;
END $$;
SELECT writer_connect('tap_sd_w') \g /dev/null
SELECT dblink_send_query('tap_sd_w', 'CALL tap_sd.writer(7)') \g /dev/null

SELECT pg_sleep(1) \g /dev/null
ALTER TABLE orders ALTER COLUMN junk TYPE bigint;
SELECT pg_sleep(1) \g /dev/null
ALTER TABLE orders ALTER COLUMN junk TYPE text;
SELECT pg_sleep(1) \g /dev/null
ALTER TABLE customers ALTER COLUMN note TYPE numeric;
ALTER TABLE orders ADD COLUMN extra numeric DEFAULT 1.5;
SELECT pg_sleep(1) \g /dev/null
ALTER TABLE orders DROP COLUMN junk;
SELECT pg_sleep(1) \g /dev/null
ALTER TABLE orders ALTER COLUMN extra TYPE int;

SELECT is(status, 'CALL', 'the write load ran') FROM dblink_get_result('tap_sd_w') AS r(status text);
SELECT dblink_disconnect('tap_sd_w') \g /dev/null

SELECT isnt(converged(30), NULL, 'the tables converge');
SELECT is(mismatches('own') + mismatches('avgs'), 0::bigint,
          'single-source deltas (own rows, hidden state) equal their queries');
SELECT is(mismatches('joined'), 0::bigint, 'deltas through a join equal the query');
SELECT is(mismatches('tops'), 0::bigint, 'a keys table equals its query');
SELECT is(failed_cycles(), 0::bigint, 'no cycle failed');

SELECT * FROM finish();
SELECT materialized_table.execute('DROP MATERIALIZED TABLE tap_sd.own; DROP MATERIALIZED TABLE tap_sd.avgs;
  DROP MATERIALIZED TABLE tap_sd.joined; DROP MATERIALIZED TABLE tap_sd.tops') \g /dev/null
RESET search_path;
DROP SCHEMA tap_sd CASCADE;
