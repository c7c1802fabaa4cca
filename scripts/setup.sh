#!/usr/bin/env bash
# scripts/setup.sh: from a fresh Debian 12 machine to a running demo.
#
#   bash scripts/setup.sh      as root, or as a user who may use sudo (it is
#                              used for apt-get and make install only)
#
# 1. installs PostgreSQL 15 and what the build and the tests need (apt)
# 2. builds materialized_table and installs it into PostgreSQL 15
# 3. starts a local demo cluster configured for it (scripts/pg_cluster.sh):
#    shared_preload_libraries = 'pg_cron,materialized_table',
#    wal_level = logical, cron.database_name = 'demo', ...
# 4. creates database demo with the extensions and runs scripts/demo.sql
#
# Running it again is harmless: packages already there are left alone, the
# cluster is restarted with the freshly built library, and the demo drops
# and recreates its own objects.
#
# Environment:
#   PG_CONFIG      pg_config to build for (default /usr/lib/postgresql/15/bin/pg_config)
#   PGBIN          server binaries (default: pg_config --bindir)
#   MT_DEMO_DIR    cluster directory (default /var/lib/postgresql/materialized_table_demo
#                  as root, ~/materialized_table_demo otherwise)
#   MT_DEMO_PORT   port (default 5488)
#   MT_SETUP_SKIP_APT=1   do not run apt-get
set -euo pipefail
# the socket directory must be an absolute path
[ -n "${MT_DEMO_DIR:-}" ] && MT_DEMO_DIR=$(realpath -m "$MT_DEMO_DIR")
cd "$(dirname "$0")/.."

# the README lists the same packages
PACKAGES=(postgresql-15 postgresql-server-dev-15 postgresql-15-cron postgresql-15-pgtap
          libtap-parser-sourcehandler-pgtap-perl build-essential graphviz python3-psycopg2)

# root runs everything itself (a fresh container has no sudo); anyone else
# needs sudo for apt and make install
SUDO=()
if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "scripts/setup.sh: run it as root, or install sudo: apt-get and make install need root" >&2
        exit 1
    fi
    SUDO=(sudo)
fi

if [ "${MT_SETUP_SKIP_APT:-0}" != 1 ]; then
    echo "=== installing packages: ${PACKAGES[*]}"
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends --no-upgrade "${PACKAGES[@]}"
fi

export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
export PGBIN=${PGBIN:-$("$PG_CONFIG" --bindir)}
if [ "$(id -u)" = 0 ]; then
    DIR=${MT_DEMO_DIR:-/var/lib/postgresql/materialized_table_demo}
else
    DIR=${MT_DEMO_DIR:-$HOME/materialized_table_demo}
fi
PORT=${MT_DEMO_PORT:-5488}
DB=demo

echo "=== building and installing materialized_table ($PG_CONFIG)"
make -s PG_CONFIG="$PG_CONFIG"
# install as root when we are not: the extension directory belongs to root
if [ -w "$("$PG_CONFIG" --pkglibdir)" ]; then
    make -s PG_CONFIG="$PG_CONFIG" install
else
    "${SUDO[@]}" make -s PG_CONFIG="$PG_CONFIG" install
fi

echo "=== demo cluster in $DIR, port $PORT"
# restart: a running server would keep the previous build of the library
bash scripts/pg_cluster.sh stop "$DIR"
bash scripts/pg_cluster.sh start "$DIR" "$PORT" "$DB"
chmod 755 "$DIR"

export PGHOST=$DIR PGPORT=$PORT PGUSER=postgres
PSQL=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1)
if [ "$("${PSQL[@]}" -At -d postgres -c "SELECT count(*) FROM pg_database WHERE datname = '$DB'")" = 0 ]; then
    "${PSQL[@]}" -d postgres -c "CREATE DATABASE $DB"
fi
"${PSQL[@]}" -d "$DB" -c "SET client_min_messages = warning" \
    -c "CREATE EXTENSION IF NOT EXISTS pg_cron" \
    -c "CREATE EXTENSION IF NOT EXISTS materialized_table"

echo "=== running scripts/demo.sql"
"$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$DB" -f scripts/demo.sql

cat <<EOF

=== materialized_table is running
Connect:     psql -h $DIR -p $PORT -U postgres $DB
Stop/start:  PGBIN=$PGBIN bash scripts/pg_cluster.sh stop $DIR
             PGBIN=$PGBIN bash scripts/pg_cluster.sh start $DIR $PORT $DB
Server log:  $DIR/server.log
Tests:       bash test/run.sh
EOF
