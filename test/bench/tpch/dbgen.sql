-- test/bench/tpch/dbgen.sql: TPC-H data at scale factor :sf, in SQL.
--
--   psql -v sf=0.1 -f test/bench/tpch/dbgen.sql
--
-- dbgen is not available, so this follows TPC-H 3.0.1, clause 4.2.3, in
-- SQL: the cardinalities (SF x 10,000 suppliers, 200,000 parts, 800,000
-- partsupp, 150,000 customers, 1,500,000 orders, 1 to 7 lines each), the
-- key relationships (the 4 suppliers of a part by the spec's formula, a
-- line's supplier one of its part's 4, sparse order keys: 8 of every 32,
-- no orders for customers whose key is a multiple of 3), the value domains
-- and uniform distributions of every column, the derived columns
-- (retail price, extended price, return flag, line status, order status
-- and total price) and the fixed NATION and REGION rows.  Deviations:
--   * comments are substrings of a pool of 10,000 texts from a simplified
--     version of the spec's grammar (clause 4.2.2.10) with its word lists
--     and weights (abridged), not of dbgen's 300 MB text pool; what the
--     queries look for in them (Q13 '%special%requests%', Q16
--     '%Customer%Complaints%') occurs at about the spec's rates (printed
--     by tpch.sh);
--   * the 5 x SF suppliers with "Customer ... Complaints" and with
--     "Customer ... Recommends" are at least 1 each (at SF 0.01 the spec's
--     0.05 would be none);
--   * addresses are random strings of the spec's lengths over a smaller
--     alphabet;
--   * the random numbers are PostgreSQL's random() with a fixed seed, not
--     dbgen's streams: the data is the same from run to run, but not
--     dbgen's rows.
-- It also defines the functions the benchmark changes the data with:
-- tpch_add_orders() (new orders and their lines, as the spec's RF1 does)
-- and tpch_change() (see below).
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SELECT setseed(0.2024);

DROP TABLE IF EXISTS lineitem, orders, partsupp, customer, supplier, part, nation, region,
    tpch_text, tpch_scale CASCADE;
DROP SEQUENCE IF EXISTS tpch_new_order;

CREATE TABLE tpch_scale AS
SELECT :sf::numeric AS sf,
       greatest(1, round(:sf * 10000))::int AS suppliers,
       greatest(1, round(:sf * 200000))::int AS parts,
       greatest(1, round(:sf * 150000))::int AS customers,
       greatest(1, round(:sf * 1500000))::int AS orders;

-- a random integer in [lo, hi]
CREATE OR REPLACE FUNCTION tpch_rand(lo int, hi int) RETURNS int LANGUAGE sql VOLATILE
AS $$ SELECT lo + floor(random() * (hi - lo + 1))::int $$;
-- one element of an array, at random
CREATE OR REPLACE FUNCTION tpch_pick(a text[]) RETURNS text LANGUAGE sql VOLATILE
AS $$ SELECT a[1 + floor(random() * cardinality(a))::int] $$;
-- P_RETAILPRICE of a part key (clause 4.2.3)
CREATE OR REPLACE FUNCTION tpch_retailprice(partkey int) RETURNS numeric LANGUAGE sql IMMUTABLE
AS $$ SELECT ((90000 + ((partkey / 10) % 20001) + 100 * (partkey % 1000)) / 100.0)::numeric(15,2) $$;
-- the i-th (0..3) supplier of a part (clause 4.2.3, PS_SUPPKEY)
CREATE OR REPLACE FUNCTION tpch_partsupp(partkey int, i int, s int) RETURNS int LANGUAGE sql IMMUTABLE
AS $$ SELECT ((partkey + i * (s / 4 + (partkey - 1) / s)) % s) + 1 $$;
-- a phone number of a nation (clause 4.2.2.9)
CREATE OR REPLACE FUNCTION tpch_phone(nationkey int) RETURNS text LANGUAGE sql VOLATILE
AS $$ SELECT (nationkey + 10) || '-' || tpch_rand(100, 999) || '-' || tpch_rand(100, 999)
             || '-' || tpch_rand(1000, 9999) $$;
-- a random string of a length in [lo, hi] (clause 4.2.2.7, v-strings)
CREATE OR REPLACE FUNCTION tpch_vstring(lo int, hi int) RETURNS text LANGUAGE sql VOLATILE
AS $$ SELECT string_agg(substr('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,.',
                                tpch_rand(1, 65), 1), '')
        FROM generate_series(1, tpch_rand(lo, hi)) $$;

-- the text pool: texts of sentences of the spec's grammar (clause
-- 4.2.2.10), its word lists with their weights (dists.dss)
CREATE TABLE tpch_text (id int PRIMARY KEY, s text NOT NULL);
DO $$
DECLARE
    nouns text[] := (SELECT array_agg(w) FROM (VALUES ('packages', 40), ('requests', 40),
        ('accounts', 40), ('deposits', 40), ('foxes', 20), ('ideas', 20), ('theodolites', 20),
        ('pinto beans', 20), ('instructions', 20), ('dependencies', 10), ('excuses', 10),
        ('platelets', 10), ('asymptotes', 10), ('courts', 5), ('dolphins', 5), ('multipliers', 1),
        ('sauternes', 1), ('warthogs', 1), ('frets', 1), ('dinos', 1), ('attainments', 1),
        ('somas', 1), ('Tiresias', 1), ('patterns', 1), ('forges', 1), ('braids', 1), ('frays', 1),
        ('warhorses', 1), ('dugouts', 1), ('notornis', 1), ('epitaphs', 1), ('pearls', 1),
        ('tithes', 1), ('waters', 1), ('orbits', 1), ('gifts', 1), ('sheaves', 1), ('depths', 1),
        ('sentiments', 1), ('decoys', 1), ('realms', 1), ('pains', 1), ('grouches', 1),
        ('escapades', 1), ('hockey players', 1)) v (w, n), generate_series(1, n));
    verbs text[] := (SELECT array_agg(w) FROM (VALUES ('sleep', 20), ('wake', 20), ('are', 20),
        ('cajole', 20), ('haggle', 20), ('nag', 10), ('use', 10), ('boost', 10), ('affix', 5),
        ('detect', 5), ('integrate', 5), ('maintain', 1), ('nod', 1), ('was', 1), ('lose', 1),
        ('sublate', 1), ('solve', 1), ('thrash', 1), ('promise', 1), ('engage', 1), ('hinder', 1),
        ('print', 1), ('x-ray', 1), ('breach', 1), ('eat', 1), ('grow', 1), ('impress', 1),
        ('mold', 1), ('poach', 1), ('serve', 1), ('run', 1), ('dazzle', 1), ('snooze', 1),
        ('doze', 1), ('unwind', 1), ('kindle', 1), ('play', 1), ('hang', 1), ('believe', 1),
        ('doubt', 1)) v (w, n), generate_series(1, n));
    adjectives text[] := (SELECT array_agg(w) FROM (VALUES ('special', 20), ('pending', 20),
        ('unusual', 20), ('express', 20), ('furious', 1), ('sly', 1), ('careful', 1), ('blithe', 1),
        ('quick', 1), ('fluffy', 1), ('slow', 1), ('quiet', 1), ('ruthless', 1), ('thin', 1),
        ('close', 1), ('dogged', 1), ('daring', 1), ('brave', 1), ('stealthy', 1),
        ('permanent', 1), ('enticing', 1), ('idle', 1), ('busy', 1), ('regular', 50),
        ('final', 40), ('ironic', 40), ('even', 30), ('bold', 20), ('silent', 10)) v (w, n),
        generate_series(1, n));
    adverbs text[] := (SELECT array_agg(w) FROM (VALUES ('sometimes', 1), ('always', 1),
        ('never', 1), ('furiously', 50), ('slyly', 50), ('carefully', 50), ('blithely', 40),
        ('quickly', 30), ('fluffily', 20), ('slowly', 1), ('quietly', 1), ('ruthlessly', 1),
        ('thinly', 1), ('closely', 1), ('doggedly', 1), ('daringly', 1), ('bravely', 1),
        ('stealthily', 1), ('permanently', 1), ('enticingly', 1), ('idly', 1), ('busily', 1),
        ('regularly', 1), ('finally', 1), ('ironically', 1), ('evenly', 1), ('boldly', 1),
        ('silently', 1)) v (w, n), generate_series(1, n));
    prepositions text[] := (SELECT array_agg(w) FROM (VALUES ('about', 50), ('above', 50),
        ('according to', 50), ('across', 50), ('after', 50), ('against', 40), ('along', 40),
        ('alongside of', 30), ('among', 30), ('around', 20), ('at', 10), ('atop', 1),
        ('before', 1), ('behind', 1), ('beneath', 1), ('beside', 1), ('besides', 1),
        ('between', 1), ('beyond', 1), ('by', 1), ('despite', 1), ('during', 1), ('except', 1),
        ('for', 1), ('from', 1), ('in place of', 1), ('inside', 1), ('instead of', 1),
        ('into', 1), ('near', 1), ('of', 1), ('on', 1), ('outside', 1), ('over', 1), ('past', 1),
        ('since', 1), ('through', 1), ('throughout', 1), ('to', 1), ('toward', 1), ('under', 1),
        ('until', 1), ('up', 1), ('upon', 1), ('without', 1), ('with', 1), ('within', 1)) v (w, n),
        generate_series(1, n));
    auxiliaries text[] := ARRAY['do', 'may', 'might', 'shall', 'will', 'would', 'can', 'could',
        'should', 'ought to', 'must', 'will have to', 'shall have to', 'could have to',
        'should have to', 'must have to', 'need to', 'try to'];
    terminators text[] := array_fill('.'::text, ARRAY[50]) || ARRAY[';', ':', '?', '!', '--'];
    -- weighted choices among the forms of a sentence (N: noun phrase, V:
    -- verb phrase, P: prepositional phrase, T: terminator), of a noun
    -- phrase (N: noun, J: adjective, D: adverb, ',': a comma) and of a
    -- verb phrase (V: verb, X: auxiliary, D: adverb)
    sentences text[] := ARRAY['NVT', 'NVT', 'NVT', 'NVPT', 'NVPT', 'NVPT', 'NVNT', 'NVNT',
                              'NVNT', 'NPVNT', 'NPVPT'];
    nps text[] := array_fill('N'::text, ARRAY[10]) || array_fill('JN'::text, ARRAY[20])
        || array_fill('J,JN'::text, ARRAY[10]) || array_fill('DJN'::text, ARRAY[50]);
    vps text[] := array_fill('V'::text, ARRAY[30]) || ARRAY['XV'] || array_fill('VD'::text, ARRAY[40])
        || ARRAY['XVD'];
    text_out text;
    form text;
    words text;
    sym text;
BEGIN
    FOR id IN 1..10000 LOOP
        text_out := '';
        WHILE length(text_out) < 260 LOOP
            -- the sentence as a string of word classes (p: a preposition)
            form := sentences[1 + floor(random() * cardinality(sentences))::int];
            words := '';
            FOR k IN 1..length(form) LOOP
                words := words || CASE substr(form, k, 1)
                    WHEN 'N' THEN nps[1 + floor(random() * cardinality(nps))::int]
                    WHEN 'V' THEN vps[1 + floor(random() * cardinality(vps))::int]
                    WHEN 'P' THEN 'p' || nps[1 + floor(random() * cardinality(nps))::int]
                    ELSE 'T' END;
            END LOOP;
            FOR k IN 1..length(words) LOOP
                sym := substr(words, k, 1);
                text_out := text_out || CASE sym
                    WHEN 'N' THEN ' ' || nouns[1 + floor(random() * cardinality(nouns))::int]
                    WHEN 'J' THEN ' ' || adjectives[1 + floor(random() * cardinality(adjectives))::int]
                    WHEN 'D' THEN ' ' || adverbs[1 + floor(random() * cardinality(adverbs))::int]
                    WHEN 'V' THEN ' ' || verbs[1 + floor(random() * cardinality(verbs))::int]
                    WHEN 'X' THEN ' ' || auxiliaries[1 + floor(random() * cardinality(auxiliaries))::int]
                    WHEN 'p' THEN ' ' || prepositions[1 + floor(random() * cardinality(prepositions))::int] || ' the'
                    WHEN ',' THEN ','
                    ELSE terminators[1 + floor(random() * cardinality(terminators))::int] END;
            END LOOP;
        END LOOP;
        INSERT INTO tpch_text VALUES (id, ltrim(text_out));
    END LOOP;
END $$;
-- a comment of a length in [lo, hi]: a substring of a text of the pool
CREATE OR REPLACE FUNCTION tpch_comment(lo int, hi int) RETURNS text LANGUAGE sql VOLATILE
AS $$ SELECT substr(s, tpch_rand(1, 50), tpch_rand(lo, hi)) FROM tpch_text WHERE id = (SELECT tpch_rand(1, 10000)) $$;

-- the schema (dss.ddl), with the spec's types
CREATE TABLE region (
    r_regionkey integer NOT NULL, r_name char(25) NOT NULL, r_comment varchar(152));
CREATE TABLE nation (
    n_nationkey integer NOT NULL, n_name char(25) NOT NULL, n_regionkey integer NOT NULL,
    n_comment varchar(152));
CREATE TABLE part (
    p_partkey integer NOT NULL, p_name varchar(55) NOT NULL, p_mfgr char(25) NOT NULL,
    p_brand char(10) NOT NULL, p_type varchar(25) NOT NULL, p_size integer NOT NULL,
    p_container char(10) NOT NULL, p_retailprice decimal(15,2) NOT NULL,
    p_comment varchar(23) NOT NULL);
CREATE TABLE supplier (
    s_suppkey integer NOT NULL, s_name char(25) NOT NULL, s_address varchar(40) NOT NULL,
    s_nationkey integer NOT NULL, s_phone char(15) NOT NULL, s_acctbal decimal(15,2) NOT NULL,
    s_comment varchar(101) NOT NULL);
CREATE TABLE partsupp (
    ps_partkey integer NOT NULL, ps_suppkey integer NOT NULL, ps_availqty integer NOT NULL,
    ps_supplycost decimal(15,2) NOT NULL, ps_comment varchar(199) NOT NULL);
CREATE TABLE customer (
    c_custkey integer NOT NULL, c_name varchar(25) NOT NULL, c_address varchar(40) NOT NULL,
    c_nationkey integer NOT NULL, c_phone char(15) NOT NULL, c_acctbal decimal(15,2) NOT NULL,
    c_mktsegment char(10) NOT NULL, c_comment varchar(117) NOT NULL);
CREATE TABLE orders (
    o_orderkey integer NOT NULL, o_custkey integer NOT NULL, o_orderstatus char(1) NOT NULL,
    o_totalprice decimal(15,2) NOT NULL, o_orderdate date NOT NULL,
    o_orderpriority char(15) NOT NULL, o_clerk char(15) NOT NULL,
    o_shippriority integer NOT NULL, o_comment varchar(79) NOT NULL);
CREATE TABLE lineitem (
    l_orderkey integer NOT NULL, l_partkey integer NOT NULL, l_suppkey integer NOT NULL,
    l_linenumber integer NOT NULL, l_quantity decimal(15,2) NOT NULL,
    l_extendedprice decimal(15,2) NOT NULL, l_discount decimal(15,2) NOT NULL,
    l_tax decimal(15,2) NOT NULL, l_returnflag char(1) NOT NULL, l_linestatus char(1) NOT NULL,
    l_shipdate date NOT NULL, l_commitdate date NOT NULL, l_receiptdate date NOT NULL,
    l_shipinstruct char(25) NOT NULL, l_shipmode char(10) NOT NULL,
    l_comment varchar(44) NOT NULL);

INSERT INTO region VALUES
    (0, 'AFRICA', tpch_comment(31, 115)), (1, 'AMERICA', tpch_comment(31, 115)),
    (2, 'ASIA', tpch_comment(31, 115)), (3, 'EUROPE', tpch_comment(31, 115)),
    (4, 'MIDDLE EAST', tpch_comment(31, 115));
INSERT INTO nation
SELECT k, name, r, tpch_comment(31, 114)
  FROM (VALUES (0, 'ALGERIA', 0), (1, 'ARGENTINA', 1), (2, 'BRAZIL', 1), (3, 'CANADA', 1),
               (4, 'EGYPT', 4), (5, 'ETHIOPIA', 0), (6, 'FRANCE', 3), (7, 'GERMANY', 3),
               (8, 'INDIA', 2), (9, 'INDONESIA', 2), (10, 'IRAN', 4), (11, 'IRAQ', 4),
               (12, 'JAPAN', 2), (13, 'JORDAN', 4), (14, 'KENYA', 0), (15, 'MOROCCO', 0),
               (16, 'MOZAMBIQUE', 0), (17, 'PERU', 1), (18, 'CHINA', 2), (19, 'ROMANIA', 3),
               (20, 'SAUDI ARABIA', 4), (21, 'VIETNAM', 2), (22, 'RUSSIA', 3),
               (23, 'UNITED KINGDOM', 3), (24, 'UNITED STATES', 1)) n (k, name, r);

-- PART: P_NAME is 5 distinct words of the 92 colours
INSERT INTO part
SELECT k,
       (SELECT string_agg(w, ' ') FROM (
            SELECT w FROM unnest(ARRAY['almond', 'antique', 'aquamarine', 'azure', 'beige',
                'bisque', 'black', 'blanched', 'blue', 'blush', 'brown', 'burlywood', 'burnished',
                'chartreuse', 'chiffon', 'chocolate', 'coral', 'cornflower', 'cornsilk', 'cream',
                'cyan', 'dark', 'deep', 'dim', 'dodger', 'drab', 'firebrick', 'floral', 'forest',
                'frosted', 'gainsboro', 'ghost', 'goldenrod', 'green', 'grey', 'honeydew', 'hot',
                'indian', 'ivory', 'khaki', 'lace', 'lavender', 'lawn', 'lemon', 'light', 'lime',
                'linen', 'magenta', 'maroon', 'medium', 'metallic', 'midnight', 'mint', 'misty',
                'moccasin', 'navajo', 'navy', 'olive', 'orange', 'orchid', 'pale', 'papaya',
                'peach', 'peru', 'pink', 'plum', 'powder', 'puff', 'purple', 'red', 'rose',
                'rosy', 'royal', 'saddle', 'salmon', 'sandy', 'seashell', 'sienna', 'sky',
                'slate', 'smoke', 'snow', 'spring', 'steel', 'tan', 'thistle', 'tomato',
                'turquoise', 'violet', 'wheat', 'white', 'yellow']) w
             ORDER BY random() + 0 * k LIMIT 5) c),
       'Manufacturer#' || m,
       'Brand#' || m || tpch_rand(1, 5),
       tpch_pick(ARRAY['STANDARD', 'SMALL', 'MEDIUM', 'LARGE', 'ECONOMY', 'PROMO']) || ' '
           || tpch_pick(ARRAY['ANODIZED', 'BURNISHED', 'PLATED', 'POLISHED', 'BRUSHED']) || ' '
           || tpch_pick(ARRAY['TIN', 'NICKEL', 'BRASS', 'STEEL', 'COPPER']),
       tpch_rand(1, 50),
       tpch_pick(ARRAY['SM', 'LG', 'MED', 'JUMBO', 'WRAP']) || ' '
           || tpch_pick(ARRAY['CASE', 'BOX', 'BAG', 'JAR', 'PKG', 'PACK', 'CAN', 'DRUM']),
       tpch_retailprice(k),
       tpch_comment(5, 22)
  FROM (SELECT k, tpch_rand(1, 5) AS m FROM generate_series(1, (SELECT parts FROM tpch_scale)) k) p;

INSERT INTO supplier
SELECT k, 'Supplier#' || lpad(k::text, 9, '0'), tpch_vstring(10, 40), nk, tpch_phone(nk),
       tpch_rand(-99999, 999999) / 100.0, tpch_comment(25, 100)
  FROM (SELECT k, tpch_rand(0, 24) AS nk FROM generate_series(1, (SELECT suppliers FROM tpch_scale)) k) s;
-- 5 x SF suppliers (at least one) of each: "Customer" then "Complaints",
-- or "Recommends", somewhere in the comment (clause 4.2.3, S_COMMENT)
WITH chosen AS (
    SELECT s_suppkey, row_number() OVER (ORDER BY random()) AS n FROM supplier),
 marked AS (
    SELECT s_suppkey, CASE WHEN n <= greatest(1, round(5 * (SELECT sf FROM tpch_scale)))
                           THEN 'Complaints' ELSE 'Recommends' END AS word
      FROM chosen WHERE n <= 2 * greatest(1, round(5 * (SELECT sf FROM tpch_scale))))
UPDATE supplier s
   SET s_comment = left(substr(s.s_comment, 1, 10) || ' Customer ' || substr(s.s_comment, 11, 20)
                        || ' ' || m.word || ' ' || substr(s.s_comment, 31), 100)
  FROM marked m WHERE s.s_suppkey = m.s_suppkey;

INSERT INTO partsupp
SELECT p.k, tpch_partsupp(p.k, i, (SELECT suppliers FROM tpch_scale)), tpch_rand(1, 9999),
       tpch_rand(100, 100000) / 100.0, tpch_comment(49, 198)
  FROM generate_series(1, (SELECT parts FROM tpch_scale)) p (k), generate_series(0, 3) i;

INSERT INTO customer
SELECT k, 'Customer#' || lpad(k::text, 9, '0'), tpch_vstring(10, 40), nk, tpch_phone(nk),
       tpch_rand(-99999, 999999) / 100.0,
       tpch_pick(ARRAY['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD']),
       tpch_comment(29, 116)
  FROM (SELECT k, tpch_rand(0, 24) AS nk FROM generate_series(1, (SELECT customers FROM tpch_scale)) k) c;

-- tpch_add_orders(keys): ORDERS with these keys, and their LINEITEMs (the
-- initial load, and the new orders of a change, as RF1 inserts them); in
-- one statement without DDL, as a writer's transaction would be (a
-- temporary table would send the worker catalog invalidations)
CREATE OR REPLACE FUNCTION tpch_add_orders(keys int[]) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    s int := (SELECT suppliers FROM tpch_scale);
    p int := (SELECT parts FROM tpch_scale);
    c int := (SELECT customers FROM tpch_scale);
    clerks int := greatest(1, round((SELECT sf FROM tpch_scale) * 1000));
    lines bigint;
BEGIN
    WITH o AS MATERIALIZED (
        SELECT o_orderkey,
               -- customers whose key is not a multiple of 3: the j-th is 3 (j / 2) + 1 + j % 2
               3 * (j / 2) + 1 + j % 2 AS o_custkey,
               date '1992-01-01' + tpch_rand(0, date '1998-08-02' - date '1992-01-01') AS o_orderdate,
               tpch_pick(ARRAY['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW']) AS o_orderpriority,
               'Clerk#' || lpad(tpch_rand(1, clerks)::text, 9, '0') AS o_clerk,
               tpch_comment(19, 78) AS o_comment,
               tpch_rand(1, 7) AS nlines
          FROM (SELECT o_orderkey, tpch_rand(0, c - c / 3 - 1) AS j FROM unnest(keys) o_orderkey) k),
    l AS MATERIALIZED (
        SELECT o_orderkey AS l_orderkey, l_partkey, tpch_partsupp(l_partkey, tpch_rand(0, 3), s) AS l_suppkey,
               l_linenumber, l_quantity, l_quantity * tpch_retailprice(l_partkey) AS l_extendedprice,
               tpch_rand(0, 10) / 100.0 AS l_discount, tpch_rand(0, 8) / 100.0 AS l_tax,
               CASE WHEN l_receiptdate <= date '1995-06-17' THEN tpch_pick(ARRAY['R', 'A']) ELSE 'N' END AS l_returnflag,
               CASE WHEN l_shipdate > date '1995-06-17' THEN 'O' ELSE 'F' END AS l_linestatus,
               l_shipdate, l_commitdate, l_receiptdate,
               tpch_pick(ARRAY['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN']) AS l_shipinstruct,
               tpch_pick(ARRAY['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB']) AS l_shipmode,
               tpch_comment(10, 43) AS l_comment
          FROM (SELECT o_orderkey, l_linenumber, l_shipdate, l_commitdate,
                       l_shipdate + tpch_rand(1, 30) AS l_receiptdate, l_partkey, l_quantity
                  FROM (SELECT o_orderkey, l_linenumber, o_orderdate + tpch_rand(1, 121) AS l_shipdate,
                               o_orderdate + tpch_rand(30, 90) AS l_commitdate,
                               tpch_rand(1, p) AS l_partkey, tpch_rand(1, 50)::numeric AS l_quantity
                          FROM o, generate_series(1, nlines) l_linenumber) l1) l2),
    -- O_ORDERSTATUS and O_TOTALPRICE from the lines
    new_orders AS (
        INSERT INTO orders
        SELECT o.o_orderkey, o.o_custkey,
               CASE WHEN t.f = t.n THEN 'F' WHEN t.f = 0 THEN 'O' ELSE 'P' END,
               t.total, o.o_orderdate, o.o_orderpriority, o.o_clerk, 0, o.o_comment
          FROM o
          JOIN (SELECT l_orderkey, count(*) AS n, count(*) FILTER (WHERE l_linestatus = 'F') AS f,
                       round(sum(l_extendedprice * (1 + l_tax) * (1 - l_discount)), 2) AS total
                  FROM l GROUP BY l_orderkey) t ON t.l_orderkey = o.o_orderkey)
    INSERT INTO lineitem SELECT * FROM l;
    GET DIAGNOSTICS lines = ROW_COUNT;
    RETURN lines;
END $$;

-- the initial orders: keys sparse, the first 8 of every 32 (clause 4.2.3)
SELECT tpch_add_orders(ARRAY(SELECT ((i - 1) / 8) * 32 + (i - 1) % 8 + 1
                               FROM generate_series(1, (SELECT orders FROM tpch_scale)) i));
-- new orders of the changes take the keys of the gaps, as RF1 does: the
-- g-th new order has key (g / 24) * 32 + 9 + g % 24
CREATE SEQUENCE tpch_new_order MINVALUE 0 START 0;

-- the primary keys (clause 1.4.2.2) and foreign keys (1.4.2.3), and
-- indexes on the foreign keys that no primary key starts with
ALTER TABLE region ADD CONSTRAINT region_pkey PRIMARY KEY (r_regionkey);
ALTER TABLE nation ADD CONSTRAINT nation_pkey PRIMARY KEY (n_nationkey);
ALTER TABLE part ADD CONSTRAINT part_pkey PRIMARY KEY (p_partkey);
ALTER TABLE supplier ADD CONSTRAINT supplier_pkey PRIMARY KEY (s_suppkey);
ALTER TABLE partsupp ADD CONSTRAINT partsupp_pkey PRIMARY KEY (ps_partkey, ps_suppkey);
ALTER TABLE customer ADD CONSTRAINT customer_pkey PRIMARY KEY (c_custkey);
ALTER TABLE orders ADD CONSTRAINT orders_pkey PRIMARY KEY (o_orderkey);
ALTER TABLE lineitem ADD CONSTRAINT lineitem_pkey PRIMARY KEY (l_orderkey, l_linenumber);
ALTER TABLE nation ADD CONSTRAINT nation_region_fkey FOREIGN KEY (n_regionkey) REFERENCES region;
ALTER TABLE supplier ADD CONSTRAINT supplier_nation_fkey FOREIGN KEY (s_nationkey) REFERENCES nation;
ALTER TABLE customer ADD CONSTRAINT customer_nation_fkey FOREIGN KEY (c_nationkey) REFERENCES nation;
ALTER TABLE partsupp ADD CONSTRAINT partsupp_part_fkey FOREIGN KEY (ps_partkey) REFERENCES part;
ALTER TABLE partsupp ADD CONSTRAINT partsupp_supplier_fkey FOREIGN KEY (ps_suppkey) REFERENCES supplier;
ALTER TABLE orders ADD CONSTRAINT orders_customer_fkey FOREIGN KEY (o_custkey) REFERENCES customer;
ALTER TABLE lineitem ADD CONSTRAINT lineitem_orders_fkey FOREIGN KEY (l_orderkey) REFERENCES orders;
ALTER TABLE lineitem ADD CONSTRAINT lineitem_partsupp_fkey
    FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp;
CREATE INDEX nation_regionkey ON nation (n_regionkey);
CREATE INDEX supplier_nationkey ON supplier (s_nationkey);
CREATE INDEX customer_nationkey ON customer (c_nationkey);
CREATE INDEX partsupp_suppkey ON partsupp (ps_suppkey);
CREATE INDEX orders_custkey ON orders (o_custkey);
CREATE INDEX lineitem_partkey_suppkey ON lineitem (l_partkey, l_suppkey);
CREATE INDEX lineitem_suppkey ON lineitem (l_suppkey);

-- tpch_change(kind, fraction): one change of the data, in the caller's
-- transaction, returning the rows it changed.
--   'lineitem': of lineitem's rows, (fraction - 2 x 0.1%) updated -- a new
--     quantity (and extended price) and discount -- and 0.1% deleted and
--     0.1% inserted with their orders: RF2 and RF1 of the spec, each of
--     0.1% of the orders; 1% in all for fraction 0.01
--   'lineitem_updates': fraction of lineitem's rows updated as above, and
--     nothing else (orders untouched)
--   'partsupp': fraction of partsupp's rows get a new supply cost and
--     available quantity (for the queries that read no lineitem or orders)
CREATE OR REPLACE FUNCTION tpch_change(kind text, fraction float8) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    n_orders int := greatest(1, round((SELECT orders FROM tpch_scale) * 0.001));
    changed bigint := 0;
    n bigint;
    gone int[];
BEGIN
    IF kind = 'lineitem_updates' THEN
        UPDATE lineitem l
           SET l_quantity = u.q, l_extendedprice = u.q * tpch_retailprice(l.l_partkey),
               l_discount = u.d
          FROM (SELECT l_orderkey, l_linenumber, tpch_rand(1, 50)::numeric AS q, tpch_rand(0, 10) / 100.0 AS d
                  FROM lineitem WHERE random() < fraction) u
         WHERE (l.l_orderkey, l.l_linenumber) = (u.l_orderkey, u.l_linenumber);
        GET DIAGNOSTICS changed = ROW_COUNT;
        RETURN changed;
    ELSIF kind <> 'lineitem' AND kind <> 'partsupp' THEN
        RAISE EXCEPTION 'unknown change kind %', kind;
    END IF;
    IF kind = 'partsupp' THEN
        UPDATE partsupp SET ps_supplycost = tpch_rand(100, 100000) / 100.0,
                            ps_availqty = tpch_rand(1, 9999)
         WHERE random() < fraction;
        GET DIAGNOSTICS changed = ROW_COUNT;
        RETURN changed;
    END IF;
    -- RF2: delete 0.1% of the orders, lines first
    gone := ARRAY(SELECT o_orderkey FROM orders ORDER BY random() LIMIT n_orders);
    DELETE FROM lineitem WHERE l_orderkey = ANY (gone);
    GET DIAGNOSTICS n = ROW_COUNT;
    changed := changed + n;
    DELETE FROM orders WHERE o_orderkey = ANY (gone);
    -- updates of the rest of the fraction
    UPDATE lineitem l
       SET l_quantity = u.q, l_extendedprice = u.q * tpch_retailprice(l.l_partkey),
           l_discount = u.d
      FROM (SELECT l_orderkey, l_linenumber, tpch_rand(1, 50)::numeric AS q, tpch_rand(0, 10) / 100.0 AS d
              FROM lineitem WHERE random() < fraction - 0.002) u
     WHERE (l.l_orderkey, l.l_linenumber) = (u.l_orderkey, u.l_linenumber);
    GET DIAGNOSTICS n = ROW_COUNT;
    changed := changed + n;
    -- RF1: as many new orders, with their lines
    changed := changed + tpch_add_orders(ARRAY(
        SELECT ((g / 24) * 32 + 9 + g % 24)::int
          FROM (SELECT nextval('tpch_new_order') AS g FROM generate_series(1, n_orders)) s));
    RETURN changed;
END $$;

VACUUM ANALYZE;
