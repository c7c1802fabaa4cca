#!/usr/bin/env bash
# pg_cluster.sh: a private PostgreSQL 15 cluster configured for materialized_table.
#
#   pg_cluster.sh start DIR PORT [CRON_DB]   initdb (if needed) and start
#   pg_cluster.sh stop DIR                   stop (fast)
#   pg_cluster.sh kill DIR                   SIGKILL the postmaster (crash tests)
#   pg_cluster.sh restart DIR                start again after stop or kill
#
# The cluster listens only on a Unix socket in DIR, on PORT, and runs as the
# postgres OS user (initdb and postgres refuse root).  CRON_DB is the
# database pg_cron lives in (cron.database_name).  MT_CLUSTER_CONF, if
# set, is added to a new cluster's postgresql.conf (a test's own settings).
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}

# as root, from / : the postgres user may not enter the caller's directory
# (a clone in /root), which initdb and postgres change back to
as_postgres() {
    if [ "$(id -u)" = 0 ]; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

cmd=${1:?usage: pg_cluster.sh start|stop|kill|restart DIR [PORT [CRON_DB]]}
# the socket directory and the log must be absolute paths
dir=$(realpath -m "${2:?cluster directory}")

case "$cmd" in
start)
    port=${3:?port}
    crondb=${4:-postgres}
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_postgres "$PGBIN/initdb" -D "$dir/data" -U postgres -A trust \
            --no-instructions >"$dir/initdb.log" 2>&1
        cat >>"$dir/data/postgresql.conf" <<CONF

# --- materialized_table ---
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = 'pg_cron,materialized_table'
wal_level = logical
max_replication_slots = 16
max_wal_senders = 16
max_worker_processes = 32
max_prepared_transactions = 10
cron.database_name = '$crondb'
cron.use_background_workers = on
cron.max_running_jobs = 8
timezone = 'UTC'
log_line_prefix = '%m [%p] %q%a '
${MT_CLUSTER_CONF:-}
CONF
        # PostgreSQL 15.19 and later decode only with the output plugins
        # listed there; an older server refuses to start with the setting
        settings=$(as_postgres "$PGBIN/postgres" --describe-config 2>/dev/null || true)
        if grep -q '^output_plugin_libraries'$'\t' <<<"$settings"; then
            echo "output_plugin_libraries = 'pgoutput, test_decoding, materialized_table'" \
                >>"$dir/data/postgresql.conf"
        fi
    fi
    as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null
    ;;
restart)
    as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 120 start >/dev/null
    ;;
stop)
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null || true
    fi
    ;;
kill)
    # SIGKILL of the postmaster alone, as a crash of it would be; its
    # children notice and exit, and PostgreSQL refuses to start again while
    # one of them still holds the old shared memory: wait for them all
    pid=$(head -1 "$dir/data/postmaster.pid")
    children=$(pgrep -P "$pid" || true)
    kill -9 "$pid"
    for p in $pid $children; do
        while kill -0 "$p" 2>/dev/null; do sleep 0.1; done
    done
    ;;
*)
    echo "unknown command: $cmd" >&2
    exit 2
    ;;
esac
