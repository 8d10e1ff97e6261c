# streamforge: PGXS build.  See README.md for the two top-level commands.
EXTENSION = streamforge
EXTVERSION = $(shell grep default_version $(EXTENSION).control | sed -e "s/default_version[[:space:]]*=[[:space:]]*'\([^']*\)'/\1/")

MODULE_big = streamforge
OBJS = \
	src/acl.o \
	src/append.o \
	src/canonjson.o \
	src/clock.o \
	src/codec.o \
	src/codec_validate.o \
	src/limits.o \
	src/engine.o \
	src/identity.o \
	src/journal.o \
	src/persist.o \
	src/reconcile.o \
	src/retention.o \
	src/redefine.o \
	src/session.o \
	src/sf_manage.o \
	src/sf_sql.o \
	src/sink.o \
	src/snapshot.o \
	src/timeunit.o \
	src/window.o

# The install script is generated from the ordered pieces in sql/install/,
# so that sql/*.sql holds only pg_regress inputs.
DATA_built = $(EXTENSION)--$(EXTVERSION).sql
DATA = $(filter-out $(DATA_built),$(wildcard sql/upgrade/$(EXTENSION)--*--*.sql))
# A second extension, streamforge_proxy (SQL only, installed in a router
# database with plproxy; docs/scale-out.md), installed by the same install.
DATA += proxy/streamforge_proxy.control $(wildcard proxy/streamforge_proxy--*.sql)

REGRESS = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
REGRESS_OPTS = --inputdir=. --load-extension=$(EXTENSION)

ISOLATION = $(patsubst test/specs/%.spec,%,$(sort $(wildcard test/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test --load-extension=$(EXTENSION)

TAP_TESTS = 1
PROVE_TESTS = $(sort $(wildcard test/t/*.pl))

PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare
SHLIB_LINK = -lz

EXTRA_CLEAN = $(DATA_built)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(DATA_built): $(sort $(wildcard sql/install/*.sql)) $(EXTENSION).control
	cat $(sort $(wildcard sql/install/*.sql)) > $@

# PGXS tracks no header dependencies: rebuild everything when a header moves.
$(OBJS): $(wildcard src/*.h)
