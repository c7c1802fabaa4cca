#!/usr/bin/env bash
# test/clients/clients.sh: both spellings of the statements -- the Flink
# text through materialized_table.execute() and the native MATERIALIZED
# VIEW statements -- from three clients: psql, psycopg2 (clients.py) and
# node-postgres (clients.js).  Each creates, refreshes, alters, describes
# and drops tables both ways, checks the rows and command tags it gets,
# and that errors carry a position into the statement (native) or into
# execute()'s text (an internal position).
#
# Run by test/run.sh against its cluster (PGHOST, PGPORT, PGUSER,
# PGDATABASE, PGBIN).  A client whose driver is missing is skipped with a
# line "skip: ..."; node-postgres is installed with npm into a cache
# directory ($MT_NODE_DIR, default ~/.cache/materialized_table/node) when
# node and npm are there.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PSQL=("${PGBIN:-/usr/lib/postgresql/15/bin}/psql" -X -q -v ON_ERROR_STOP=1)
failed=0

# --- psql ------------------------------------------------------------------------
psql_out=$("${PSQL[@]}" -f "$here/clients.sql" 2>&1)
if [ $? != 0 ]; then
    echo "$psql_out"
    echo "FAILED: psql"
    failed=1
else
    # a native error is positioned in the statement (no QUERY: line), an
    # execute() error in its text (a QUERY: line with the Flink statement)
    # with the cursor under the option
    native_err=$(echo "$psql_out" | awk '/^psql:.*ERROR:/ { block = "" } { block = block $0 "\n" }
                                         /^LINE 1: CREATE MATERIALIZED VIEW/ { found = 1 }
                                         found && /^DETAIL:/ { printf "%s", block; exit }')
    caret_ok=$(echo "$native_err" | awk '/^LINE 1: CREATE MATERIALIZED VIEW/ { want = index($0, "(materialized") + 1; getline;
                                          if (index($0, "^") == want) print "yes" }')
    if echo "$psql_out" | grep -q 'QUERY:  CREATE MATERIALIZED TABLE clients_psql.bad' &&
       ! echo "$native_err" | grep -q '^QUERY:' && [ "$caret_ok" = yes ]; then
        echo "ok: psql"
    else
        echo "$psql_out"
        echo "FAILED: psql (error positions)"
        failed=1
    fi
fi

# --- psycopg2 --------------------------------------------------------------------
if /usr/bin/python3 -c 'import psycopg2' 2>/dev/null; then
    if /usr/bin/python3 "$here/clients.py"; then
        echo "ok: psycopg2"
    else
        echo "FAILED: psycopg2"
        failed=1
    fi
else
    echo "skip: psycopg2 (python3-psycopg2 is not installed)"
fi

# --- node-postgres ---------------------------------------------------------------
NODE_DIR=${MT_NODE_DIR:-$HOME/.cache/materialized_table/node}
if ! command -v node >/dev/null; then
    echo "skip: node-postgres (node is not installed)"
else
    if ! NODE_PATH=$NODE_DIR/node_modules node -e 'require("pg")' 2>/dev/null; then
        if command -v npm >/dev/null; then
            mkdir -p "$NODE_DIR"
            npm install --prefix "$NODE_DIR" --no-audit --no-fund --silent pg@8 >"$NODE_DIR/npm.log" 2>&1 ||
                sed 's/^/    npm: /' "$NODE_DIR/npm.log" | tail -5
        fi
    fi
    if ! NODE_PATH=$NODE_DIR/node_modules node -e 'require("pg")' 2>/dev/null; then
        echo "skip: node-postgres (the pg package could not be installed with npm)"
    elif NODE_PATH=$NODE_DIR/node_modules node "$here/clients.js"; then
        echo "ok: node-postgres"
    else
        echo "FAILED: node-postgres"
        failed=1
    fi
fi

exit $failed
