"""Token-level mutation of statements.

tokenize() splits a text roughly as PostgreSQL's scanner does (strings of
every kind, dollar quotes, quoted and backticked identifiers, comments,
parameters, numbers, operators), keeping whitespace as tokens so that a
mutated text keeps its layout.  mutate() drops, duplicates, swaps and
replaces tokens, inserts tokens of every kind the scanner knows, splices
pieces of other statements and cuts the text short.
"""

import re

from fuzz_grammar import chance, pick

_WS = re.compile(r"[ \t\n\r\f]+")
_NUM = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_IDENT = re.compile(r"[A-Za-z_\u0080-\U0010ffff][A-Za-z_0-9$\u0080-\U0010ffff]*")
_PARAM = re.compile(r"\$\d+")
_DOLLAR = re.compile(r"\$([A-Za-z_\u0080-\U0010ffff][A-Za-z_0-9\u0080-\U0010ffff]*)?\$")
_OP = re.compile(r"[+\-*/<>=~!@#%^&|`?]+")


def _quoted(text, i, q, backslash=False):
    """End of a quoted token starting at i (the opening quote), doubled quotes inside."""
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if backslash and c == "\\":
            j += 2
            continue
        if c == q:
            if j + 1 < n and text[j + 1] == q:
                j += 2
                continue
            return j + 1
        j += 1
    return n


def tokenize(text):
    toks = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        m = _WS.match(text, i)
        if m:
            toks.append(m.group())
            i = m.end()
            continue
        if text.startswith("--", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            toks.append(text[i:j])
            i = j
            continue
        if text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            toks.append(text[i:j])
            i = j
            continue
        lower = text[i:i + 3].lower()
        if lower.startswith("u&'") or lower.startswith('u&"'):
            j = _quoted(text, i + 2, text[i + 2])
            toks.append(text[i:j])
            i = j
            continue
        if lower[:2] in ("e'", "b'", "x'", "n'"):
            j = _quoted(text, i + 1, "'", backslash=lower[0] == "e")
            toks.append(text[i:j])
            i = j
            continue
        if c in "'\"`":
            j = _quoted(text, i, c)
            toks.append(text[i:j])
            i = j
            continue
        if c == "$":
            m = _PARAM.match(text, i)
            if m:
                toks.append(m.group())
                i = m.end()
                continue
            m = _DOLLAR.match(text, i)
            if m:
                close = text.find(m.group(), m.end())
                j = n if close < 0 else close + len(m.group())
                toks.append(text[i:j])
                i = j
                continue
        if c == ":" and text.startswith("::", i) or c == "." and text.startswith("..", i) \
                or text.startswith(":=", i) or text.startswith("=>", i):
            toks.append(text[i:i + 2])
            i += 2
            continue
        m = _NUM.match(text, i)
        if m and (c.isdigit() or c == "."):
            toks.append(m.group())
            i = m.end()
            continue
        m = _IDENT.match(text, i)
        if m:
            toks.append(m.group())
            i = m.end()
            continue
        m = _OP.match(text, i)
        if m:
            toks.append(m.group())
            i = m.end()
            continue
        toks.append(c)
        i += 1
    return toks


# Tokens of every kind PostgreSQL's scanner knows, and some it does not.
TOKEN_POOL = [
    # parameters (PARAM)
    "$1", "$2", "$0", "$99999999999",
    # Unicode identifiers and strings (UIDENT, USCONST)
    'U&"x"', 'U&"d\\0061t\\+000061"', "U&\"x\" UESCAPE '!'", "U&'x'", "U&'\\0041'", "U&'\\D800'",
    "u&'!0041' UESCAPE '!'",
    # bit strings, hex strings (BCONST, XCONST)
    "b'1'", "B'0101'", "b'2'", "x'1F'", "X''", "x'G'",
    # numbers (ICONST, FCONST) and junk after them
    "1.5e3", ".5", "1e-10", "1.", "0", "1", "-1", "2147483647", "2147483648", "9223372036854775808",
    "99999999999999999999999", "00012", "1_000", "0x1F", "123abc", "1e309", "1.5.5",
    # two-character tokens
    "::", "..", ":=", "=>", "<=", ">=", "<>", "!=",
    # operators
    "+", "-", "*", "/", "%", "^", "<", ">", "=", "~", "!", "@", "#", "&", "|", "?", "||", "->>", "#>>",
    "@>", "<@", "&&", "!!", "~~*", "<->", "+-", "---", "*/", "=<>", "<<=",
    # punctuation
    "(", ")", "[", "]", ",", ";", ".", ":", ";;", "((((((((((", "))))))",
    # keywords, Flink's and PostgreSQL's
    "SELECT", "FROM", "WHERE", "AS", "WITH", "TABLE", "MATERIALIZED", "CREATE", "ALTER", "DROP", "OR",
    "IF", "EXISTS", "NOT", "NULL", "PRIMARY", "KEY", "ENFORCED", "FRESHNESS", "INTERVAL", "SECOND",
    "DAY", "REFRESH_MODE", "FULL", "CONTINUOUS", "PARTITIONED", "BY", "DISTRIBUTED", "HASH", "INTO",
    "BUCKETS", "COMMENT", "WATERMARK", "FOR", "METADATA", "VIRTUAL", "SUSPEND", "RESUME", "REFRESH",
    "PARTITION", "SET", "RESET", "ADD", "MODIFY", "TEMPORARY", "REPLACE", "UNION", "ALL", "LIMIT",
    "GROUP", "ORDER", "VALUES", "DEFAULT", "CASCADE", "CONSTRAINT", "UNIQUE", "ARRAY", "ROW", "MAP",
    "MULTISET", "FIRST", "AFTER", "DISTRIBUTION", "RANGE", "VIEW", "INSERT", "DELETE", "RETURNING",
    "LATERAL", "WINDOW", "OVER", "USING", "ON", "JOIN", "CAST", "COLLATE", "ESCAPE", "UESCAPE",
    # identifiers
    "x", '"x"', '""', "`x`", "``", '`a"b`', "`a``b`", "`", "id", "n", "ds", "region", "fm", "fz",
    "materialized_table", "materialized_table_internal", "pg_catalog", "fuzzdb", "t0", "t1",
    # strings, comments, dollar quotes, unterminated constructs
    "'x'", "''", "'it''s'", "E'\\n'", "E'\\\\'", "E'\\x41'", "E'\\u0041'", "E'\\777'", "$$x$$",
    "$a$x$a$", "$$", "$a$", "$1$", "'", '"', "E'", "U&'", "/* c */", "/* /* nested */ */", "/*",
    "-- line\n", "N'x'",
    # whitespace and odd Unicode (no NUL: it cannot be sent)
    "\t", "\n", "\r", "\f", "\v", "\u00a0", "é", "ß", "中文", "\U0001F642", "\u200d", "\u202e", "\ufeff",
    "e\u0301", "ǅ", "Ｓ", "Σ", "\u2028", "\U0010FFFF", "\ud7ff",
]


def random_token(rng):
    r = rng.random()
    if r < 0.04:
        return pick(rng, ["a", "\"", "`", "é", "x"]) * pick(rng, [63, 64, 100, 1000, 10000]) + \
            pick(rng, ["", "\"", "`"])
    if r < 0.06:
        return "'" + "s" * pick(rng, [100, 10000, 100000]) + "'"
    if r < 0.07:
        return "ARRAY<" * 200 + "INT" + ">" * 200
    if r < 0.08:
        return "(" * 1000 + "1" + ")" * 1000
    return pick(rng, TOKEN_POOL)


def mutate(rng, text, donors=()):
    """1 to 4 token-level mutations of text."""
    toks = tokenize(text)
    for _ in range(rng.randrange(1, 5)):
        real = [i for i, t in enumerate(toks) if not _WS.fullmatch(t)]
        op = rng.random()
        if not real:
            toks.append(" " + random_token(rng))
            continue
        i = pick(rng, real)
        if op < 0.15:                        # drop
            del toks[i]
        elif op < 0.25:                      # duplicate
            toks.insert(i, toks[i] + (" " if chance(rng, 0.7) else ""))
        elif op < 0.35:                      # swap
            j = pick(rng, real)
            toks[i], toks[j] = toks[j], toks[i]
        elif op < 0.65:                      # insert a token
            sep = " " if chance(rng, 0.75) else ""
            toks.insert(i, random_token(rng) + sep)
        elif op < 0.80:                      # replace a token
            toks[i] = random_token(rng)
        elif op < 0.85:                      # a number at its limits
            nums = [k for k in real if _NUM.fullmatch(toks[k]) or toks[k].startswith("'") and toks[k][1:-1].isdigit()]
            k = pick(rng, nums) if nums else i
            toks[k] = pick(rng, ["0", "-1", "2147483648", "'0'", "'-5'", "'99999999999'", "1e400", "NULL"])
        elif op < 0.92 and donors:           # splice a piece of another statement
            d = tokenize(pick(rng, donors)) or [random_token(rng)]
            a = rng.randrange(len(d))
            toks[i:i] = d[a:a + rng.randrange(1, 12)]
        elif op < 0.96:                      # cut short
            toks = toks[:i]
        else:                                # case of a word
            toks[i] = toks[i].swapcase() if chance(rng, 0.5) else toks[i].upper()
    out = "".join(toks)
    return out.replace("\x00", "")
