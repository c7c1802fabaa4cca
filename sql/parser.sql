-- The front door: materialized_table.execute() tokenizes Flink's statements
-- with PostgreSQL's scanner and hands the query after AS to PostgreSQL.
CREATE SCHEMA parser_s;
SET search_path = parser_s, public;
CREATE TABLE orders (id int PRIMARY KEY, customer text, amount numeric, ds text);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE orders REPLICA IDENTITY FULL;
INSERT INTO orders VALUES (1, 'ann', 10, '2024-01-01'), (2, 'bob', 20, '2024-01-01'),
                          (3, 'ann', 5, '2024-01-02');

-- keywords in any case, comments of both kinds
SELECT materialized_table.execute($$
  cReAtE Materialized TABLE p1 -- a line comment
    /* a block comment */ FreshNess = Interval '1' Hour
    refresh_MODE = full
  As SELECT customer, sum(amount) AS total FROM orders GROUP BY customer
$$);
SELECT * FROM p1 ORDER BY customer;

-- double-quoted and backtick identifiers keep their case
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE "P2" AS SELECT id FROM orders');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE `Mixed Case` (`ID`) AS SELECT id AS "ID" FROM orders');
SELECT relname FROM pg_class WHERE relname IN ('P2', 'Mixed Case') ORDER BY 1;
SELECT "ID" FROM "Mixed Case" ORDER BY 1;
-- a doubled backtick stands for itself; a backtick in a string is left alone
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE `tick``s` AS SELECT ''a`b'' AS v');
SELECT * FROM "tick`s";
-- backticks next to operators and quotes inside them
SELECT materialized_table.execute($q$
  CREATE MATERIALIZED TABLE `it's` (`a b`, `c;d`, `e`, `s` AS `a b`+`e`*2, `t` AS `c;d`||'`') AS
  SELECT 1 AS `a b`, 'x' AS `c;d`, 3 AS `e`
$q$);
SELECT * FROM "it's";
SELECT materialized_table.execute('DROP MATERIALIZED TABLE `it''s`');
-- a scanner error after backticks still points at the right place
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE `a` (`b`) AS SELECT ''unterminated');
-- an unterminated backtick
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE `open AS SELECT 1');
-- a quoted identifier is never a keyword
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p3 "AS" SELECT 1');

-- string and dollar-quoted literals, with semicolons inside
SELECT materialized_table.execute($q$
  CREATE MATERIALIZED TABLE p4 COMMENT 'a; comment' AS
  SELECT 'x;y' AS s, $$it's; here$$ AS d, E'tab\there' AS e
$q$);
SELECT * FROM p4;
SELECT obj_description('p4'::regclass, 'pg_class');

-- several statements in one call: the last tag is returned
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE p5 AS SELECT 1 AS one;
  ALTER MATERIALIZED TABLE p5 REFRESH;
  DROP MATERIALIZED TABLE p5;
$$);
SELECT to_regclass('p5');
-- all statements are parsed before any runs: a late syntax error runs nothing
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE p6 AS SELECT 1 AS one;
  DROP MATERIALIZED TABLE p6 garbage
$$);
SELECT to_regclass('p6');
-- an error in a later statement undoes the earlier ones (same transaction)
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE p6 AS SELECT 1 AS one;
  DROP MATERIALIZED TABLE no_such_table
$$);
SELECT to_regclass('p6');

-- empty input, only comments and semicolons
SELECT materialized_table.execute('');
SELECT materialized_table.execute(' ; -- nothing ;');
-- a NULL statement is an error (execute() is not STRICT)
SELECT materialized_table.execute(NULL);

-- statements that are not about materialized tables
SELECT materialized_table.execute('SELECT 1');
SELECT materialized_table.execute('CREATE TABLE t (a int)');
SELECT materialized_table.execute('DROP TABLE orders');
SELECT materialized_table.execute('CREATE MATERIALIZED VIEW v AS SELECT 1');
SELECT materialized_table.execute('ALTER MATERIALIZED VIEW v RENAME TO w');
SELECT materialized_table.execute('CREATE MATERIALIZED p AS SELECT 1');

-- syntax errors carry a cursor position inside the statement
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 FRESHNESS INTERVAL ''1'' HOUR AS SELECT 1');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 AS SELEC 1');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 AS SELECT 1 +');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 AS SELECT (1');
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE p7
  AS SELECT id FROM orders WHERE
$$);
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 AS SELECT nosuchcol FROM orders');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 AS SELECT 1 FROM nosuchtable');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 WITH (''a'' ''b'') AS SELECT 1');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 AS');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 BOGUS AS SELECT 1');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 (a INT,) AS SELECT 1 AS a');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 COMMENT ''x'' COMMENT ''y'' AS SELECT 1');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 AS SELECT ''unterminated');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p7 AS SELECT 1 /* unterminated');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p1 FROBNICATE');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p1 SUSPEND NOW');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE IF p1');
-- multibyte text before the fault: the cursor counts characters
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE "größe" COMMENT ''äöü'' AS SELEC 1');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE "größe" COMMENT ''äöü'' AS SELECT nosuch FROM orders');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE "größe" (c AS a +) AS SELECT 1 AS a');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE "größe" (c AS ä + 1) AS SELECT 1 AS a');

-- forms Flink refuses
SELECT materialized_table.execute('CREATE TEMPORARY MATERIALIZED TABLE p8 AS SELECT 1');
SELECT materialized_table.execute('CREATE TEMP MATERIALIZED TABLE p8 AS SELECT 1');
SELECT materialized_table.execute('CREATE OR REPLACE MATERIALIZED TABLE p8 AS SELECT 1');
SELECT materialized_table.execute('DROP TEMPORARY MATERIALIZED TABLE p1');

-- the query must be exactly one SELECT
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p9 AS SELECT 1; DROP TABLE orders');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p9 AS SELECT 1 AS a; TRUNCATE orders');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p9 AS SELECT 1 INTO x');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p9 AS INSERT INTO orders VALUES (9)');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p9 AS WITH d AS (DELETE FROM orders RETURNING id) SELECT id FROM d');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p9 AS SELECT id FROM orders FOR UPDATE');
SELECT count(*) FROM orders;
SELECT to_regclass('p9');
-- VALUES and TABLE are SELECTs too
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p9 AS VALUES (1, ''one'')');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE p9b AS TABLE orders');
SELECT * FROM p9;
SELECT count(*) FROM p9b;
SELECT materialized_table.execute('DROP MATERIALIZED TABLE p9; DROP MATERIALIZED TABLE p9b');

-- catalog.db.name: the catalog is the current database, db the schema
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE contrib_regression.parser_s.p10 AS SELECT 1 AS a');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE parser_s.p11 AS SELECT 2 AS a');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE `contrib_regression`.`public`.`p12` AS SELECT 3 AS a');
SELECT to_regclass('parser_s.p10'), to_regclass('parser_s.p11'), to_regclass('public.p12');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE otherdb.parser_s.p13 AS SELECT 1');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE nosuchschema.p13 AS SELECT 1');
SELECT materialized_table.execute('CREATE MATERIALIZED TABLE a.b.c.d AS SELECT 1');
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE otherdb.parser_s.p10 REFRESH');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE otherdb.parser_s.p10');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE contrib_regression.parser_s.p10');
SELECT materialized_table.execute('DROP MATERIALIZED TABLE parser_s.p11; DROP MATERIALIZED TABLE contrib_regression.public.p12');

-- Flink's words are still names: columns called comment, metadata, first, after
CREATE TABLE words (id int, "comment" text, metadata text, first int, after int, virtual int);
-- sources of continuous tables carry their old row values (see continuous.c)
ALTER TABLE words REPLICA IDENTITY FULL;
INSERT INTO words VALUES (1, 'c', 'm', 1, 2, 3);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE p14 (id, comment COMMENT 'a comment', metadata, first, after, virtual,
                                 s AS first + after COMMENT 'sum', t AS comment || metadata, u AS after)
  PARTITIONED BY (comment) AS SELECT * FROM words
$$);
SELECT * FROM p14;
SELECT materialized_table.execute('ALTER MATERIALIZED TABLE p14 REFRESH PARTITION (comment = ''c''); DROP MATERIALIZED TABLE p14');
DROP TABLE words;

-- clean up
SELECT materialized_table.execute($$
  DROP MATERIALIZED TABLE p1; DROP MATERIALIZED TABLE "P2"; DROP MATERIALIZED TABLE `Mixed Case`;
  DROP MATERIALIZED TABLE `tick``s`; DROP MATERIALIZED TABLE p4
$$);
RESET search_path;
DROP SCHEMA parser_s CASCADE;
SELECT count(*) FROM materialized_table.materialized_tables;
