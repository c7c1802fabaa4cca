-- 00_smoke: the extension is installed and a materialized table can be
-- created, read, refreshed and dropped.  The detailed tests come after.
SELECT extname FROM pg_extension WHERE extname IN ('pg_cron', 'materialized_table') ORDER BY 1;

CREATE TABLE smoke_src (k int, v int);
INSERT INTO smoke_src SELECT i % 3, i FROM generate_series(1, 10) i;

SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE smoke_mt
    FRESHNESS = INTERVAL '1' HOUR
    AS SELECT k, sum(v) AS total, count(*) AS n FROM smoke_src GROUP BY k
$$);
SELECT * FROM smoke_mt ORDER BY k;
SELECT table_name, refresh_mode, freshness, refresh_status
  FROM materialized_table.materialized_tables WHERE table_name = 'smoke_mt'::regclass;

-- a refresh picks up source changes
INSERT INTO smoke_src VALUES (3, 100);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE smoke_mt REFRESH');
SELECT * FROM smoke_mt ORDER BY k;
SELECT trigger, status, rows FROM materialized_table.refresh_history
 WHERE table_name = 'smoke_mt'::regclass ORDER BY run_id;

-- partitioned: every row lands in the partition of its value, also when
-- the partitions are created by the refresh that writes the rows
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE smoke_pmt PARTITIONED BY (p)
    FRESHNESS = INTERVAL '1' HOUR
    AS SELECT CAST(k % 2 AS text) AS p, k, sum(v) AS total FROM smoke_src GROUP BY k
$$);
SELECT tableoid::regclass AS partition, p, count(*), sum(total) FROM smoke_pmt GROUP BY 1, 2 ORDER BY 2;
UPDATE smoke_src SET v = v * 10;
SELECT materialized_table.execute($$ALTER MATERIALIZED TABLE smoke_pmt REFRESH PARTITION (p = '0')$$);
SELECT tableoid::regclass AS partition, p, count(*), sum(total) FROM smoke_pmt GROUP BY 1, 2 ORDER BY 2;

-- with a primary key (an index the refresh maintains)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE smoke_pk (PRIMARY KEY (k) NOT ENFORCED)
    FRESHNESS = INTERVAL '1' HOUR
    AS SELECT k, sum(v) AS total FROM smoke_src GROUP BY k
$$);
INSERT INTO smoke_src VALUES (4, 4);
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE smoke_pk REFRESH');
SET enable_seqscan = off;
SELECT * FROM smoke_pk WHERE k = 4;
RESET enable_seqscan;

SELECT materialized_table.execute('DROP MATERIALIZED TABLE smoke_mt; DROP MATERIALIZED TABLE smoke_pmt; DROP MATERIALIZED TABLE smoke_pk');
SELECT count(*) FROM materialized_table.materialized_tables WHERE table_name::text LIKE 'smoke%';
DROP TABLE smoke_src;
