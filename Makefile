# materialized_table: PGXS build
#
#   make && make install             build and install into PostgreSQL 15
#   bash test/run.sh                 the whole test suite (see README.md)

EXTENSION = materialized_table
MODULE_big = materialized_table
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/*.c src/*/*.c)))

# the install script of the current version is assembled from
# extension/*.sql, one file per concern; earlier versions' scripts and the
# update scripts from them are kept in extension/versions/
EXTVERSION = 1.4
DATA_built = materialized_table--$(EXTVERSION).sql
DATA = $(wildcard extension/versions/*.sql)

PG_CPPFLAGS = -I$(srcdir)/include -I$(libpq_srcdir)
# the worker keeps its connections to a Citus cluster's nodes (src/utils/node_connections.c)
SHLIB_LINK_INTERNAL = $(libpq)

REGRESS = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
# on any cluster configured as the README says: the database named by
# cron.database_name (the first file creates the extensions if missing)
MT_REGRESS_DB ?= contrib_regression
REGRESS_OPTS = --use-existing --dbname=$(MT_REGRESS_DB)

EXTRA_CLEAN = results regression.diffs regression.out test/isolation/output_iso

PG_CONFIG ?= $(firstword $(wildcard /usr/lib/postgresql/15/bin/pg_config) pg_config)
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

materialized_table--$(EXTVERSION).sql: $(sort $(wildcard extension/*.sql))
	cat $^ > $@

$(OBJS): $(wildcard include/mt/*.h include/mt/*/*.h)
