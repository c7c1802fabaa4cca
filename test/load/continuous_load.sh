#!/usr/bin/env bash
# continuous_load.sh: the randomized load test of CONTINUOUS tables, without
# crashes.  Every query shape of test/lib/continuous_fixture.sql (aggregate,
# join + aggregate, filter with key, global aggregate, left join, distinct,
# window function, chain) under a pgbench load of random inserts, updates
# and deletes on three sources (test/lib/continuous_load.pgbench); after the
# load each table equals its query (EXCEPT ALL both ways) and the catalog is
# intact.  It is continuous_crash.sh with MT_CRASHES=0: a failure here and
# not there is a maintenance bug, not a crash-recovery one.
#
# Environment (set by test/run.sh): MT_TEST_DIR, MT_TEST_PORT, PGBIN;
# MT_LOAD_SECONDS (default 30) of load.
MT_CRASHES=0 exec bash "$(dirname "$0")/../crash/continuous_crash.sh"
