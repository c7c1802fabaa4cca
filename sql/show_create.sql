-- materialized_table.show_create(regclass): the Flink statement that
-- recreates a materialized table as it is now.
CREATE SCHEMA show_s;
SET search_path = show_s, public;
CREATE TABLE src (id int NOT NULL, name text, amount numeric(10,2), ds text, hr text, ts timestamp, tstz timestamptz);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE src REPLICA IDENTITY FULL;
INSERT INTO src VALUES (1, 'ann', 10.5, '2024-01-01', '00', '2024-01-01 00:00', '2024-01-01 00:00+00'),
                       (2, 'bob', 20, '2024-01-02', '01', '2024-01-02 01:00', '2024-01-02 01:00+00');
CREATE TYPE mood AS ENUM ('sad', 'happy');
CREATE FUNCTION twice(int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT $1 * 2';
-- what must survive the round trip
CREATE FUNCTION shape(regclass) RETURNS TABLE (item text) LANGUAGE sql AS $$
  SELECT format('column %s %s %s%s%s', attname, format_type(atttypid, atttypmod),
                CASE WHEN attnotnull THEN 'not null' ELSE 'null' END,
                coalesce(' generated ' || pg_get_expr(adbin, adrelid), ''),
                coalesce(' comment ' || col_description(attrelid, attnum), ''))
    FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
   WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped
  UNION ALL
  SELECT format('constraint %s %s', conname, pg_get_constraintdef(oid)) FROM pg_constraint WHERE conrelid = $1
  UNION ALL
  SELECT format('comment %s', obj_description($1, 'pg_class'))
  UNION ALL
  SELECT format('partitioning %s', pg_get_partkeydef($1))
  UNION ALL
  SELECT format('reloptions %s', reloptions) FROM pg_class WHERE oid = $1
  UNION ALL
  SELECT format('catalog %s %s %s %s %s %s %s %s', refresh_mode, freshness_value, freshness_unit,
                partition_keys, options, metadata_columns,
                watermark_column, watermark_expression)
    FROM materialized_table_internal.mt_table WHERE relid = $1
  UNION ALL
  SELECT format('distribution %s %s %s', distribution->'kind', distribution->'buckets', distribution->'columns')
    FROM materialized_table_internal.mt_table WHERE relid = $1
  UNION ALL
  SELECT format('rows %s', (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %s', $1), false, true, '')))[1]::text)
  ORDER BY 1
$$;
-- show_create, then drop and run its output: the same table comes back
CREATE FUNCTION round_trip(t regclass) RETURNS TABLE (same_statement boolean, same_shape boolean)
LANGUAGE plpgsql AS $$
DECLARE
  stmt text := materialized_table.show_create(t);
  name text := t::text;
  before text[] := ARRAY(SELECT shape(t));
BEGIN
  PERFORM materialized_table.execute('DROP MATERIALIZED TABLE ' || name);
  PERFORM materialized_table.execute(stmt);
  RETURN QUERY SELECT materialized_table.show_create(name::regclass) = stmt,
                      ARRAY(SELECT shape(name::regclass)) = before;
END $$;

-- the simplest table
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE s1 AS SELECT id, name FROM src');
SELECT materialized_table.show_create('s1');
SELECT * FROM round_trip('s1');

-- every clause
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE s2 (
    id INT COMMENT 'the id',
    ds STRING,
    total DECIMAL(12, 2),
    doubled AS twice(id) COMMENT 'twice the id',
    written TIMESTAMP_LTZ(3) METADATA FROM 'refresh_time',
    ts,
    CONSTRAINT s2_key PRIMARY KEY (ds, id) NOT ENFORCED,
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
  )
  COMMENT 'every ''clause'''
  DISTRIBUTED BY HASH (id) INTO 3 BUCKETS
  PARTITIONED BY (ds)
  WITH ('partition.fields.ds.date-formatter' = 'yyyy-MM-dd', 'fillfactor' = '90', 'connector' = 'x')
  FRESHNESS = INTERVAL '1' DAY
  REFRESH_MODE = FULL
  AS SELECT id, ds, sum(amount) AS total, max(ts) AS ts FROM src GROUP BY id, ds
$$);
SELECT materialized_table.show_create('s2');
SELECT * FROM shape('s2');
SELECT * FROM round_trip('s2');

-- Flink and PostgreSQL types, a user type, arrays and json
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE s3 (id BIGINT, name VARCHAR(5), amount DOUBLE, tl TIMESTAMP(3) WITH LOCAL TIME ZONE,
                                m mood, arr ARRAY<INT>, js MAP<STRING, INT>)
  FRESHNESS = INTERVAL '30' SECOND
  AS SELECT id, name::varchar(5) AS name, amount, tstz AS tl, 'happy'::mood AS m, ARRAY[id] AS arr,
            jsonb_build_object(name, id) AS js FROM src
$$);
SELECT materialized_table.show_create('s3');
SELECT * FROM round_trip('s3');

-- distributions
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE s4 (PRIMARY KEY (id) NOT ENFORCED) DISTRIBUTED INTO 2 BUCKETS
  FRESHNESS = INTERVAL '2' HOUR AS SELECT id, name FROM src;
  CREATE MATERIALIZED TABLE s5 DISTRIBUTED BY RANGE (id) INTO 2 BUCKETS FRESHNESS = INTERVAL '2' HOUR AS SELECT id, name FROM src;
  CREATE MATERIALIZED TABLE s6 DISTRIBUTED BY (name) AS SELECT id, name FROM src
$$);
SELECT materialized_table.show_create('s4');
SELECT materialized_table.show_create('s5');
SELECT materialized_table.show_create('s6');
SELECT * FROM round_trip('s4');
SELECT * FROM round_trip('s5');
SELECT * FROM round_trip('s6');

-- after ALTERs: the statement shows the table as it is now
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE s7 PARTITIONED BY (ds, hr) FRESHNESS = INTERVAL '1' HOUR
    AS SELECT ds, hr, count(*) AS n FROM src GROUP BY ds, hr;
  ALTER MATERIALIZED TABLE s7 AS SELECT ds, hr, count(*) AS n, sum(amount) AS total FROM src GROUP BY ds, hr;
  ALTER MATERIALIZED TABLE s7 ADD (avg_amount AS total / n COMMENT 'average', written TIMESTAMP_LTZ(3) METADATA FROM 'refresh_time');
  ALTER MATERIALIZED TABLE s7 ADD PRIMARY KEY (ds, hr) NOT ENFORCED;
  ALTER MATERIALIZED TABLE s7 ADD WATERMARK FOR written AS written;
  ALTER MATERIALIZED TABLE s7 MODIFY n COMMENT 'rows';
  ALTER MATERIALIZED TABLE s7 SET FRESHNESS = INTERVAL '2' HOUR;
  ALTER MATERIALIZED TABLE s7 SUSPEND
$$);
SELECT materialized_table.show_create('s7');
SELECT * FROM round_trip('s7');
-- a CREATE OR ALTER of the same statement changes nothing
SELECT materialized_table.execute(replace(materialized_table.show_create('s7'), 'CREATE MATERIALIZED TABLE', 'CREATE OR ALTER MATERIALIZED TABLE'));

-- the output does not depend on the search_path
SET search_path = public;
SELECT materialized_table.show_create('show_s.s1');
SELECT materialized_table.show_create('show_s.s3');
SET search_path = show_s, public;

-- hostile names and literals
SELECT materialized_table.execute($q$
  CREATE MATERIALIZED TABLE "we""ird; --" ("a b" COMMENT 'it''s', "Upper" AS "a b" || '''', CONSTRAINT "k""ey" PRIMARY KEY ("a b") NOT ENFORCED)
  COMMENT '$$ no ''dollar'' quoting $$' WITH ('o''pt' = 'v''al')
  FRESHNESS = INTERVAL '1' HOUR AS SELECT name AS "a b" FROM src
$q$);
SELECT materialized_table.show_create('"we""ird; --"');
SELECT * FROM round_trip('"we""ird; --"');

-- not a materialized table
SELECT materialized_table.show_create('src');
SELECT materialized_table.show_create(NULL);
SELECT materialized_table.show_create(0);

-- clean up
RESET search_path;
DROP SCHEMA show_s CASCADE;
SELECT count(*) FROM materialized_table.materialized_tables;
