#!/usr/bin/env bash
# test/clients/readme_examples.sh: the README's SQL examples run as written.
#
# Every ```sql block of README.md, in order, through psql with
# ON_ERROR_STOP, in the test database (PGHOST, PGPORT, PGUSER, PGDATABASE,
# PGBIN from test/run.sh).  The examples live in schema shop, which this
# script drops before and after.  Blocks whose first line is "-- on a Citus
# coordinator" are left to test/citus/run.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
readme=$here/../../README.md
PSQL=("${PGBIN:-/usr/lib/postgresql/15/bin}/psql" -X -q -v ON_ERROR_STOP=1)
sql=$(mktemp)
trap 'rm -f "$sql"' EXIT

awk '/^```sql$/ { on = 1; first = 1; next }
     /^```/ { on = 0 }
     on && first { first = 0; if ($0 == "-- on a Citus coordinator") { on = 0; skipped++; next } }
     on' "$readme" >"$sql"
[ -s "$sql" ] || { echo "no sql blocks in README.md"; exit 1; }
"${PSQL[@]}" -c "SET client_min_messages = warning" -c "DROP SCHEMA IF EXISTS shop CASCADE"
"${PSQL[@]}" -f "$sql" >/dev/null
"${PSQL[@]}" -c "SET client_min_messages = warning" -c "DROP SCHEMA shop CASCADE"
citus=$(grep -c '^-- on a Citus coordinator$' "$readme" || true)
echo "ok: $(($(grep -c '^```sql$' "$readme") - citus)) SQL blocks of README.md ($citus more on Citus: test/citus)"
