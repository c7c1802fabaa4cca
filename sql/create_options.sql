-- CREATE MATERIALIZED TABLE: WITH options, FRESHNESS and REFRESH_MODE.
CREATE SCHEMA create_options_s;
SET search_path = create_options_s, public;
CREATE TABLE src (id int, ds text, hr text, d date, amount int);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src VALUES (1, '2024-01-01', '00', '2024-01-01', 5), (2, '2024-01-02', '01', '2024-01-02', 7);
CREATE VIEW mts AS
  SELECT table_name, refresh_mode, freshness, refresh_status, partition_keys, options, scheduler
    FROM materialized_table.materialized_tables
   WHERE table_name::text LIKE 'o%' ORDER BY table_name::text;

-- WITH: the date formatter of a string partition column
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o1 PARTITIONED BY (ds)
    WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd')
    FRESHNESS = INTERVAL '1' DAY
    AS SELECT ds, sum(amount) AS total FROM src GROUP BY ds
$$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o2 PARTITIONED BY (ds, hr)
    WITH ('partition.fields.ds.date-formatter' = 'yyyyMMdd', 'partition.fields.hr.date-formatter' = 'HH')
    FRESHNESS = INTERVAL '1' HOUR
    AS SELECT ds, hr, id FROM src
$$);
-- not a partition column, not a string column, not a pattern
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o3 PARTITIONED BY (ds) WITH ('partition.fields.hr.date-formatter' = 'HH')
  FRESHNESS = INTERVAL '1' HOUR AS SELECT ds, hr FROM src
$$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o3 WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd')
  FRESHNESS = INTERVAL '1' HOUR AS SELECT ds FROM src
$$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o3 PARTITIONED BY (d) WITH ('partition.fields.d.date-formatter' = 'yyyy-MM-dd')
  FRESHNESS = INTERVAL '1' HOUR AS SELECT d FROM src
$$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o3 PARTITIONED BY (ds) WITH ('partition.fields.ds.date-formatter' = 'yyyy-QQ')
  FRESHNESS = INTERVAL '1' HOUR AS SELECT ds FROM src
$$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o3 PARTITIONED BY (ds) WITH ('partition.fields.ds.date-formatter' = '')
  FRESHNESS = INTERVAL '1' HOUR AS SELECT ds FROM src
$$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o3 PARTITIONED BY (ds) WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd''T''HH')
  FRESHNESS = INTERVAL '1' HOUR AS SELECT ds FROM src
$$);
SELECT materialized_table.execute('DROP MATERIALIZED TABLE o3');
-- a date formatter only matters in FULL mode
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o3 PARTITIONED BY (ds) WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd')
  AS SELECT ds FROM src
$$);
SELECT materialized_table.execute('DROP MATERIALIZED TABLE o3');
-- storage parameters are applied to the table (or its partitions)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o4 WITH ('fillfactor' = '70', 'autovacuum_enabled' = 'false', 'toast.autovacuum_enabled' = 'false')
  AS SELECT id, ds FROM src
$$);
SELECT c.reloptions, t.reloptions AS toast FROM pg_class c LEFT JOIN pg_class t ON t.oid = c.reltoastrelid
 WHERE c.oid = 'o4'::regclass;
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o5 PARTITIONED BY (ds) WITH ('fillfactor' = '60') AS SELECT ds, id FROM src
$$);
SELECT relname, reloptions FROM pg_class WHERE oid IN (SELECT relid FROM pg_partition_tree('o5')) ORDER BY 1;
-- PostgreSQL checks them
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o6 WITH (''fillfactor'' = ''5'') AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o6 WITH (''fillfactor'' = ''lots'') AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o6 WITH (''toast.fillfactor'' = ''50'') AS SELECT id FROM src');
-- other keys are kept and shown, with a notice; sink.parallelism is checked
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o6 WITH ('connector' = 'filesystem', sink.parallelism = 4, 'format' = 'json')
  AS SELECT id FROM src
$$);
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o7 WITH (''sink.parallelism'' = ''zero'') AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o7 WITH (''sink.parallelism'' = ''0'') AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o7 WITH (''a'' = ''1'', ''a'' = ''2'') AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o7 WITH () AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o7 WITH (''a'') AS SELECT id FROM src');
SELECT to_regclass('o7');

-- FRESHNESS: a positive integer and one of SECOND, MINUTE, HOUR, DAY (plural too)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL '30' SECONDS AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o11 FRESHNESS = INTERVAL '10' MINUTES AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o12 FRESHNESS = INTERVAL '2' HOURS AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o13 FRESHNESS = INTERVAL '1' DAYS AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o14 FRESHNESS = INTERVAL ' 5 ' minute AS SELECT id FROM src
$$);
SELECT * FROM mts;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE o10; DROP MATERIALIZED TABLE o11; DROP MATERIALIZED TABLE o12; DROP MATERIALIZED TABLE o13; DROP MATERIALIZED TABLE o14');
-- errors
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''-1'' HOUR AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL -''1'' HOUR AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''0'' SECOND AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''1.5'' HOUR AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''abc'' HOUR AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''99999999999'' SECOND AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''1'' MONTH AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''1'' YEAR AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''1'' WEEK AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''1 2'' DAY TO HOUR AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''1'' DAY TO HOUR AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''-0'' DAY AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''1'' SECOND(3) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''1'' AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''1 hour'' AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = ''1'' HOUR AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = 1 AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL 1 HOUR AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o10 FRESHNESS = INTERVAL ''1'' HOUR FRESHNESS = INTERVAL ''1'' HOUR AS SELECT id FROM src');
SELECT to_regclass('o10');

-- REFRESH_MODE given wins; omitted, the freshness decides against the threshold
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o20 AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o21 FRESHNESS = INTERVAL '29' MINUTE AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o22 FRESHNESS = INTERVAL '30' MINUTE AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o23 REFRESH_MODE = FULL AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o24 REFRESH_MODE = CONTINUOUS AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o25 FRESHNESS = INTERVAL '1' MINUTE REFRESH_MODE = FULL AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o26 FRESHNESS = INTERVAL '1' DAY REFRESH_MODE = CONTINUOUS AS SELECT id FROM src
$$);
SELECT * FROM mts;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE o20; DROP MATERIALIZED TABLE o21; DROP MATERIALIZED TABLE o22; DROP MATERIALIZED TABLE o23; DROP MATERIALIZED TABLE o24; DROP MATERIALIZED TABLE o25; DROP MATERIALIZED TABLE o26');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o27 REFRESH_MODE = BATCH AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o27 REFRESH_MODE FULL AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o27 REFRESH_MODE = FULL REFRESH_MODE = FULL AS SELECT id FROM src');
-- the settings: threshold and the defaults of each mode
SET materialized_table.freshness_threshold = '2h';
SET materialized_table.default_freshness_continuous = '30s';
SET materialized_table.default_freshness_full = '1d';
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o30 FRESHNESS = INTERVAL '1' HOUR AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o31 FRESHNESS = INTERVAL '2' HOUR AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o32 AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o33 REFRESH_MODE = FULL AS SELECT id FROM src
$$);
SELECT * FROM mts;
SET materialized_table.default_freshness_full = '90min';
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o34 REFRESH_MODE = FULL AS SELECT id FROM src');
SET materialized_table.default_freshness_full = '5h';
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o34 REFRESH_MODE = FULL AS SELECT id FROM src');
SET materialized_table.freshness_threshold = 0;
SET materialized_table.no_such_setting = 1;
RESET materialized_table.freshness_threshold;
RESET materialized_table.default_freshness_continuous;
RESET materialized_table.default_freshness_full;
SHOW materialized_table.freshness_threshold;
SHOW materialized_table.default_freshness_continuous;
SHOW materialized_table.default_freshness_full;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE o30; DROP MATERIALIZED TABLE o31; DROP MATERIALIZED TABLE o32; DROP MATERIALIZED TABLE o33');

-- FULL mode: the freshness must be a cron schedule
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE o40 FRESHNESS = INTERVAL '15' SECOND REFRESH_MODE = FULL AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o41 FRESHNESS = INTERVAL '20' MINUTE REFRESH_MODE = FULL AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o42 FRESHNESS = INTERVAL '8' HOUR AS SELECT id FROM src;
  CREATE MATERIALIZED TABLE o43 FRESHNESS = INTERVAL '1' DAY AS SELECT id FROM src
$$);
SELECT * FROM mts;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o44 FRESHNESS = INTERVAL ''60'' SECOND REFRESH_MODE = FULL AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o44 FRESHNESS = INTERVAL ''7'' MINUTE REFRESH_MODE = FULL AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o44 FRESHNESS = INTERVAL ''5'' HOUR AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o44 FRESHNESS = INTERVAL ''24'' HOUR AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o44 FRESHNESS = INTERVAL ''2'' DAY AS SELECT id FROM src');
-- the same values are fine in CONTINUOUS mode
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o44 FRESHNESS = INTERVAL ''5'' HOUR REFRESH_MODE = CONTINUOUS AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE o45 FRESHNESS = INTERVAL ''60'' SECOND AS SELECT id FROM src');
SELECT * FROM mts;

-- clean up
RESET search_path;
DROP SCHEMA create_options_s CASCADE;
SELECT count(*) FROM materialized_table.materialized_tables;
