-- Every kind of token PostgreSQL's core scanner returns, fed to execute()
-- alone and in every clause of the Flink statements: each must give an
-- ordinary error (or succeed), never crash the server or fail internally.
-- Each case runs in a subtransaction that is rolled back; its SQLSTATE and
-- message are printed ("ok" when it succeeded).
CREATE SCHEMA tok_s;
SET search_path = tok_s, public;
CREATE TABLE tok_src (a int PRIMARY KEY, b text, ds text);
SELECT materialized_table.execute($$
  CREATE MATERIALIZED TABLE tok_mt (PRIMARY KEY (a, ds) NOT ENFORCED)
    PARTITIONED BY (ds) FRESHNESS = INTERVAL '1' HOUR REFRESH_MODE = FULL
    AS SELECT a, b, ds FROM tok_src
$$);

-- one token of each kind, named
CREATE TABLE tokens (kind text, token text, ord serial);
INSERT INTO tokens (kind, token) VALUES
  ('IDENT', 'foo'), ('IDENT quoted', '"Foo"'), ('IDENT backtick', '`x`'),
  ('UIDENT', 'U&"d\0061t"'), ('UIDENT UESCAPE', 'U&"d!0061t" UESCAPE ''!'''),
  ('ICONST', '42'), ('ICONST large', '99999999999999999999'),
  ('FCONST', '1.5'), ('FCONST exp', '1e3'),
  ('SCONST', '''x'''), ('SCONST E', 'E''x\ny'''), ('SCONST dollar', '$$x$$'),
  ('SCONST tagged', '$q$x$q$'),
  ('USCONST', 'U&''d\0061t'''), ('BCONST', 'b''101'''), ('XCONST', 'x''1F'''),
  ('PARAM', '$1'), ('PARAM large', '$99999999999'), ('PARAM junk', '$1a'),
  ('Op', '+'), ('Op long', '<=>'), ('Op tilde', '~~*'),
  ('TYPECAST', '::'), ('DOT_DOT', '..'), ('COLON_EQUALS', ':='),
  ('EQUALS_GREATER', '=>'), ('LESS_EQUALS', '<='), ('GREATER_EQUALS', '>='),
  ('NOT_EQUALS', '<>'), ('NOT_EQUALS bang', '!='),
  ('char (', '('), ('char )', ')'), ('char ,', ','), ('char ;', ';'),
  ('char .', '.'), ('char [', '['), ('char :', ':'), ('char *', '*'),
  ('keyword reserved', 'SELECT'), ('keyword unreserved', 'ABORT'),
  ('keyword col_name', 'BETWEEN'), ('keyword type_func', 'LEFT'),
  ('comment line', E'-- c\n'), ('comment block', '/* c */'),
  ('unterminated string', '''abc'), ('unterminated ident', '"abc'),
  ('unterminated dollar', '$$abc'), ('unterminated comment', '/* abc'),
  ('unterminated backtick', '`abc');

-- every clause, %s standing for the token
CREATE TABLE clauses (clause text, template text, ord serial);
INSERT INTO clauses (clause, template) VALUES
  ('alone', '%s'),
  ('after CREATE', 'CREATE %s'),
  ('table name', 'CREATE MATERIALIZED TABLE %s AS SELECT 1 AS a'),
  ('after name', 'CREATE MATERIALIZED TABLE tok_new %s AS SELECT 1 AS a'),
  ('column list', 'CREATE MATERIALIZED TABLE tok_new (%s) AS SELECT 1 AS a'),
  ('column type', 'CREATE MATERIALIZED TABLE tok_new (a %s) AS SELECT 1 AS a'),
  ('computed column', 'CREATE MATERIALIZED TABLE tok_new (a, c AS %s) AS SELECT 1 AS a'),
  ('primary key', 'CREATE MATERIALIZED TABLE tok_new (a, PRIMARY KEY (%s) NOT ENFORCED) AS SELECT 1 AS a'),
  ('watermark', 'CREATE MATERIALIZED TABLE tok_new (t, WATERMARK FOR t AS %s) AS SELECT now() AS t'),
  ('comment', 'CREATE MATERIALIZED TABLE tok_new COMMENT %s AS SELECT 1 AS a'),
  ('partitioned by', 'CREATE MATERIALIZED TABLE tok_new PARTITIONED BY (%s) AS SELECT 1 AS a'),
  ('option key', 'CREATE MATERIALIZED TABLE tok_new WITH (%s = ''v'') AS SELECT 1 AS a'),
  ('option value', 'CREATE MATERIALIZED TABLE tok_new WITH (''k'' = %s) AS SELECT 1 AS a'),
  ('distributed by', 'CREATE MATERIALIZED TABLE tok_new DISTRIBUTED BY HASH (%s) INTO 2 BUCKETS AS SELECT 1 AS a'),
  ('buckets', 'CREATE MATERIALIZED TABLE tok_new DISTRIBUTED BY (a) INTO %s BUCKETS AS SELECT 1 AS a'),
  ('freshness', 'CREATE MATERIALIZED TABLE tok_new FRESHNESS = %s AS SELECT 1 AS a'),
  ('freshness value', 'CREATE MATERIALIZED TABLE tok_new FRESHNESS = INTERVAL %s HOUR AS SELECT 1 AS a'),
  ('freshness unit', 'CREATE MATERIALIZED TABLE tok_new FRESHNESS = INTERVAL ''1'' %s AS SELECT 1 AS a'),
  ('refresh mode', 'CREATE MATERIALIZED TABLE tok_new REFRESH_MODE = %s AS SELECT 1 AS a'),
  ('after AS', 'CREATE MATERIALIZED TABLE tok_new AS %s'),
  ('in query', 'CREATE MATERIALIZED TABLE tok_new AS SELECT %s AS a'),
  ('alter name', 'ALTER MATERIALIZED TABLE %s SUSPEND'),
  ('alter action', 'ALTER MATERIALIZED TABLE tok_mt %s'),
  ('partition spec', 'ALTER MATERIALIZED TABLE tok_mt REFRESH PARTITION (%s)'),
  ('partition value', 'ALTER MATERIALIZED TABLE tok_mt REFRESH PARTITION (ds = %s)'),
  ('set freshness', 'ALTER MATERIALIZED TABLE tok_mt SET FRESHNESS = %s'),
  ('set option', 'ALTER MATERIALIZED TABLE tok_mt SET (%s)'),
  ('reset option', 'ALTER MATERIALIZED TABLE tok_mt RESET (%s)'),
  ('resume with', 'ALTER MATERIALIZED TABLE tok_mt RESUME WITH (%s)'),
  ('add column', 'ALTER MATERIALIZED TABLE tok_mt ADD (%s)'),
  ('drop name', 'DROP MATERIALIZED TABLE %s'),
  ('drop if exists', 'DROP MATERIALIZED TABLE IF EXISTS %s'),
  ('second statement', 'DROP MATERIALIZED TABLE IF EXISTS tok_none; %s');

CREATE FUNCTION try_execute(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  state text;
  msg text;
BEGIN
  BEGIN
    PERFORM materialized_table.execute(stmt);
    RAISE EXCEPTION USING ERRCODE = 'T0KEN', MESSAGE = 'ok';
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
  END;
  IF state = 'T0KEN' THEN
    RETURN 'ok';
  END IF;
  RETURN state || ': ' || msg;
END
$$;

SET client_min_messages = warning;
-- nothing fails internally (class XX) or crashes: none of these rows
SELECT c.clause, t.kind, try_execute(format(c.template, t.token)) AS result
  FROM clauses c CROSS JOIN tokens t
 WHERE try_execute(format(c.template, t.token)) LIKE 'XX%'
 ORDER BY c.ord, t.ord;

-- and what each gives
SELECT c.clause, t.kind, try_execute(format(c.template, t.token)) AS result
  FROM clauses c CROSS JOIN tokens t
 ORDER BY c.ord, t.ord;

-- the same, alone, as a role without any privilege
CREATE ROLE tok_nobody;
GRANT USAGE ON SCHEMA tok_s TO tok_nobody;
GRANT SELECT ON tok_s.tokens TO tok_nobody;
SET ROLE tok_nobody;
SELECT t.kind, tok_s.try_execute(t.token) AS result
  FROM tok_s.tokens t ORDER BY t.ord;
SELECT tok_s.try_execute('CREATE MATERIALIZED TABLE x AS SELECT $1');
RESET ROLE;

-- the table the cases altered is as it was
SELECT refresh_status, freshness FROM materialized_table.materialized_tables
 WHERE table_name = 'tok_mt'::regclass;

DROP SCHEMA tok_s CASCADE;
DROP ROLE tok_nobody;
