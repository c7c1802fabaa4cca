-- CREATE MATERIALIZED TABLE: the column list, primary key, computed and
-- metadata columns, watermark, COMMENT, DISTRIBUTED BY, PARTITIONED BY.
CREATE SCHEMA create_s;
SET search_path = create_s, public;
SET timezone = 'UTC';
CREATE TABLE src (id int NOT NULL, name text, amount numeric(10,2), ds text, hr text,
                  ts timestamp, tstz timestamptz, big bigint, flag boolean, raw bytea);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src VALUES
  (1, 'ann', 10.50, '2024-01-01', '01', '2024-01-01 01:00', '2024-01-01 01:00+00', 100, true, '\x01'),
  (2, 'bob', 20.00, '2024-01-01', '02', '2024-01-01 02:00', '2024-01-01 02:00+00', 200, false, '\x02'),
  (3, 'cid', 30.25, '2024-01-02', '01', '2024-01-02 01:00', '2024-01-02 01:00+00', 300, null, null);

-- a helper: the columns of a table as psql's \d would list them
CREATE FUNCTION cols(regclass) RETURNS TABLE (name name, type text, not_null boolean)
LANGUAGE sql AS $$
  SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute
   WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped ORDER BY attnum
$$;

-- no column list: the query's columns and types
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c1 AS SELECT id, name, amount FROM src');
SELECT * FROM cols('c1');
SELECT * FROM c1 ORDER BY id;

-- names only: a permutation of the query's columns, whose order the table takes
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c2 (amount, id, name) AS SELECT id, name, amount FROM src');
SELECT * FROM cols('c2');
SELECT * FROM c2 ORDER BY id;
-- names are never renamed by the list, and each appears once
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c3 (a, b, c) AS SELECT id, name, amount FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c3 (id, name) AS SELECT id, name, amount FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c3 (id, name, amount, ds) AS SELECT id, name, amount FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c3 (id, id, name) AS SELECT id, name, amount FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c3 AS SELECT id, id FROM src');
SELECT to_regclass('c3');

-- names with Flink types: the query's values are cast
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE c4 (
    id BIGINT, name STRING, amount DECIMAL(12, 1), small TINYINT, i INT, d DOUBLE, f FLOAT,
    ts TIMESTAMP(3), tl TIMESTAMP_LTZ(3), tw TIMESTAMP(3) WITH LOCAL TIME ZONE,
    b BYTES, vb VARBINARY(10), arr ARRAY<INT>, nested ARRAY<ARRAY<STRING>>,
    m MAP<STRING, INT>, r ROW<a INT, b STRING>, v VARCHAR(5), c CHAR(3), dt DATE, tm TIME(0),
    bo BOOLEAN, dec DECIMAL
  ) AS SELECT id, name, amount, 1::smallint AS small, id AS i, 1.5::float8 AS d, 2.5::real AS f,
              ts, tstz AS tl, tstz AS tw, raw AS b, raw AS vb, ARRAY[id] AS arr,
              ARRAY[ARRAY[name]] AS nested, jsonb_build_object(name, id) AS m,
              jsonb_build_object('a', id, 'b', name) AS r, name::varchar(5) AS v, 'abc'::char(3) AS c,
              ts::date AS dt, ts::time AS tm, flag AS bo, amount AS dec
       FROM src
$$);
SELECT * FROM cols('c4');
SELECT id, amount, ts, tl, tw, arr, nested, m, r FROM c4 ORDER BY id;
-- PostgreSQL type names work as well, and the casts are assignment casts
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE c5 (id int8, name varchar(2), amount integer, ts timestamptz, big double precision)
  AS SELECT id, name, amount, ts, big FROM src
$$);
SELECT * FROM cols('c5');
SELECT * FROM c5 ORDER BY id;
-- a type the query's value cannot be assigned to
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c6 (id BOOLEAN, name STRING) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c6 (id INT, name INT) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c6 (id INT, name nosuchtype) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c6 (id INT, name VARCHAR(x)) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c6 (id INT, name STRING EXTRA) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c6 (id INT, name RAW(''x'')) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c6 (id ARRAY<INT, name STRING) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c6 (id INT, name STRING) AS SELECT id, name FROM src');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE c6');
-- a value that does not fit the declared type fails the whole CREATE
\set SHOW_CONTEXT never
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c6 (id INT, name VARCHAR(2), amount DECIMAL(3, 0)) AS SELECT id, name, amount * 100 AS amount FROM src');
\set SHOW_CONTEXT errors
SELECT to_regclass('c6');

-- primary key: only the key, with NOT ENFORCED; its columns become NOT NULL
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c7 (PRIMARY KEY (id) NOT ENFORCED) AS SELECT id, name FROM src');
SELECT * FROM cols('c7');
SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'c7'::regclass;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c8 (CONSTRAINT c8_key PRIMARY KEY (id, name) NOT ENFORCED) AS SELECT id, name FROM src');
SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'c8'::regclass;
SELECT * FROM cols('c8');
-- a column constraint
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c9 (id INT PRIMARY KEY NOT ENFORCED, name STRING) AS SELECT id, name FROM src');
SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'c9'::regclass;
-- errors
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c10 (PRIMARY KEY (nope) NOT ENFORCED) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c10 (PRIMARY KEY (id)) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c10 (PRIMARY KEY (id) ENFORCED) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c10 (id INT PRIMARY KEY, name STRING) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c10 (UNIQUE (id)) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c10 (CONSTRAINT u UNIQUE (id) NOT ENFORCED) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c10 (id INT UNIQUE, name STRING) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c10 (PRIMARY KEY (id) NOT ENFORCED, PRIMARY KEY (name) NOT ENFORCED) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c10 (id INT PRIMARY KEY NOT ENFORCED, name STRING, PRIMARY KEY (name) NOT ENFORCED) AS SELECT id, name FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c10 (id, CHECK (id > 0)) AS SELECT id FROM src');
-- the key must hold: duplicates or NULLs fail the CREATE
\set SHOW_CONTEXT never
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c10 (PRIMARY KEY (ds) NOT ENFORCED) AS SELECT ds FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c10 (PRIMARY KEY (flag) NOT ENFORCED) AS SELECT DISTINCT flag FROM src');
\set SHOW_CONTEXT errors
SELECT to_regclass('c10');

-- computed columns: stored generated columns, where the list puts them
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE c11 (id, doubled AS id * 2 COMMENT 'twice the id', amount, label AS upper(name) || '!', name)
  AS SELECT id, name, amount FROM src
$$);
SELECT * FROM cols('c11');
SELECT * FROM c11 ORDER BY id;
SELECT attname, pg_get_expr(adbin, adrelid) FROM pg_attrdef JOIN pg_attribute ON attrelid = adrelid AND attnum = adnum
 WHERE adrelid = 'c11'::regclass ORDER BY adnum;
-- computed columns with the query's columns left implicit
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c12 (total AS amount + 1) AS SELECT id, amount FROM src');
SELECT * FROM c12 ORDER BY id;
-- computed column errors: positions point into the expression
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS nosuch + 1) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS id + ''a'') AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS now()) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS count(id)) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS (SELECT 1)) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS generate_series(1, id)) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS id, y AS x + 1) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (id AS 1) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS 1 AS y) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS ) AS SELECT id FROM src');
-- one expression and nothing more: no clause of a query around it
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS id + 1 OFFSET 1) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS id + 1 LIMIT 1) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS id + 1 FOR UPDATE) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS id + 1 ORDER BY 1) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS id + 1 WHERE true) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS id INTO y) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (x AS DISTINCT id) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (t, WATERMARK FOR t AS t OFFSET 1) AS SELECT now() AS t');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c13 (PRIMARY KEY (x) NOT ENFORCED, x AS id + 1) AS SELECT id FROM src');
SELECT to_regclass('c13');

-- metadata columns: refresh_time is the time of the refresh that wrote the row
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE c14 (id, name, written TIMESTAMP_LTZ(3) METADATA FROM 'refresh_time', refresh_time TIMESTAMP_LTZ(3) METADATA VIRTUAL)
  AS SELECT id, name FROM src
$$);
SELECT * FROM cols('c14');
SELECT count(*), count(DISTINCT written), bool_and(written = refresh_time),
       bool_and(written BETWEEN now() - interval '1 minute' AND now()) AS recent
  FROM c14;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c15 (id, k TIMESTAMP_LTZ(3) METADATA FROM ''offset'') AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c15 (id, partition INT METADATA) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c15 (id, k BOOLEAN METADATA FROM ''refresh_time'') AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c15 (id, id TIMESTAMP_LTZ(3) METADATA FROM ''refresh_time'') AS SELECT id FROM src');
SELECT to_regclass('c15');

-- watermark: kept and shown; its column must be a timestamp
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE c16 (id, ts, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) AS SELECT id, ts FROM src
$$);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE c17 (WATERMARK FOR tstz AS tstz - INTERVAL '1' MINUTE) AS SELECT id, tstz FROM src
$$);
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c18 (WATERMARK FOR nope AS nope) AS SELECT id, ts FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c18 (WATERMARK FOR id AS id) AS SELECT id, ts FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c18 (WATERMARK FOR ts AS id + 1) AS SELECT id, ts FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c18 (WATERMARK FOR ts AS ts, WATERMARK FOR ts AS ts) AS SELECT id, ts FROM src');
SELECT to_regclass('c18');

-- COMMENT on the table and its columns
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE c19 (id INT COMMENT 'the id', name STRING COMMENT 'it''s the name')
  COMMENT 'people; and their names'
  AS SELECT id, name FROM src
$$);
SELECT obj_description('c19'::regclass, 'pg_class'), col_description('c19'::regclass, 1), col_description('c19'::regclass, 2);

-- DISTRIBUTED BY HASH (cols) INTO n BUCKETS: hash partitions
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE c20 DISTRIBUTED BY HASH (id) INTO 3 BUCKETS AS SELECT id, name FROM src
$$);
\d c20
SELECT count(*) FROM c20;
-- DISTRIBUTED BY (cols): hash, with the default number of buckets
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c21 DISTRIBUTED BY (id, name) AS SELECT id, name FROM src');
SELECT pg_get_partkeydef('c21'::regclass), count(*) FROM pg_inherits WHERE inhparent = 'c21'::regclass;
-- DISTRIBUTED INTO n BUCKETS: by the primary key
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c22 (PRIMARY KEY (id) NOT ENFORCED) DISTRIBUTED INTO 2 BUCKETS AS SELECT id, name FROM src');
SELECT pg_get_partkeydef('c22'::regclass), count(*) FROM pg_inherits WHERE inhparent = 'c22'::regclass;
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c23 DISTRIBUTED INTO 2 BUCKETS AS SELECT id, name FROM src');
-- DISTRIBUTED BY RANGE: buckets of equal size, plus one for NULLs
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c23 DISTRIBUTED BY RANGE (id) INTO 2 BUCKETS AS SELECT id, name FROM src');
SELECT pg_get_partkeydef('c23'::regclass);
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'c23'::regclass ORDER BY 1;
SELECT tableoid::regclass, id FROM c23 ORDER BY id;
-- distribution errors
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c24 DISTRIBUTED BY HASH (nope) INTO 2 BUCKETS AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c24 DISTRIBUTED BY HASH (id) INTO 0 BUCKETS AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c24 DISTRIBUTED BY HASH (id) INTO -1 BUCKETS AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c24 DISTRIBUTED BY HASH (id) INTO 2 AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c24 DISTRIBUTED BY LIST (id) AS SELECT id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c24 (PRIMARY KEY (id) NOT ENFORCED) DISTRIBUTED BY (name) INTO 2 BUCKETS AS SELECT id, name FROM src');
SELECT to_regclass('c24');

-- PARTITIONED BY: a LIST partition per value
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c25 PARTITIONED BY (ds) AS SELECT ds, id, name FROM src');
SELECT pg_get_partkeydef('c25'::regclass);
SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'c25'::regclass ORDER BY 1;
SELECT tableoid::regclass, * FROM c25 ORDER BY id;
-- two partition columns: a second level under each value of the first
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c26 PARTITIONED BY (ds, hr) AS SELECT ds, hr, id FROM src');
SELECT tableoid::regclass, * FROM c26 ORDER BY id;
SELECT pg_get_partkeydef('c26_2024_01_01'::regclass);
-- partitioned and distributed: buckets under each partition
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c27 DISTRIBUTED BY HASH (id) INTO 2 BUCKETS PARTITIONED BY (ds) AS SELECT ds, id FROM src');
SELECT count(*) FROM pg_partition_tree('c27') WHERE isleaf;
SELECT count(*) FROM c27;
-- NULL partition values and values that do not make a clean name
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c28 PARTITIONED BY (flag) AS SELECT flag, id FROM src');
SELECT tableoid::regclass, * FROM c28 ORDER BY id;
SELECT materialized_table.execute($$CREATE MATERIALIZED TABLE c29 PARTITIONED BY (v) AS SELECT name || ' / ''x'' ' AS v FROM src$$);
SELECT tableoid::regclass, * FROM c29 ORDER BY v;
-- a primary key of a partitioned or distributed table must contain its partition columns
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c30 (PRIMARY KEY (id) NOT ENFORCED) PARTITIONED BY (ds) AS SELECT ds, id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c30 (PRIMARY KEY (ds, id) NOT ENFORCED) PARTITIONED BY (ds) AS SELECT ds, id FROM src');
SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'c30'::regclass;
-- partition errors
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c31 PARTITIONED BY (nope) AS SELECT ds, id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c31 PARTITIONED BY (ds, ds) AS SELECT ds, id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c31 (x AS id + 1) PARTITIONED BY (x) AS SELECT ds, id FROM src');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE c31 PARTITIONED BY () AS SELECT ds, id FROM src');
SELECT to_regclass('c31');

-- clean up
RESET search_path;
DROP SCHEMA create_s CASCADE;
SELECT count(*) FROM materialized_table.materialized_tables;
