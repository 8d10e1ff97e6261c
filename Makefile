# streamforge: PGXS build.  See README.md for the two top-level commands.
EXTENSION = streamforge
EXTVERSION = $(shell grep default_version $(EXTENSION).control | sed -e "s/default_version[[:space:]]*=[[:space:]]*'\([^']*\)'/\1/")

MODULE_big = streamforge
# One wildcard per layer, lowest first (src/README.md): engine < codec <
# persist < api.
OBJS = $(patsubst %.c,%.o,$(sort $(wildcard src/engine/*.c))) \
	$(patsubst %.c,%.o,$(sort $(wildcard src/codec/*.c))) \
	$(patsubst %.c,%.o,$(sort $(wildcard src/persist/*.c))) \
	$(patsubst %.c,%.o,$(sort $(wildcard src/api/*.c)))

# The install script is generated from the ordered pieces in sql/install/,
# so that sql/*.sql holds only pg_regress inputs.
# The update scripts are generated too, from sql/upgrade/*.sql.in: a line
# "-- @include sql/install/NN_x.sql" stands for that piece, so an object
# new in a version is defined once for a fresh install and an update.
# Update scripts of past releases are frozen as plain files
# (sql/upgrade/*.sql): a released script is never regenerated.
UPGRADE_TEMPLATES = $(wildcard sql/upgrade/$(EXTENSION)--*--*.sql.in)
DATA_built = $(EXTENSION)--$(EXTVERSION).sql \
	$(patsubst sql/upgrade/%.sql.in,%.sql,$(UPGRADE_TEMPLATES))
DATA = $(wildcard sql/upgrade/$(EXTENSION)--*--*.sql)
# A second extension, streamforge_proxy (SQL only, installed in a router
# database with plproxy; docs/scale-out.md), installed by the same install.
DATA += proxy/streamforge_proxy.control $(wildcard proxy/streamforge_proxy--*.sql)

# "make installcheck" runs REGRESS and ISOLATION against the running server
# that PGHOST, PGPORT and PGUSER name (a superuser: the tests create roles),
# in databases of their own created from template0 with the C locale and
# UTF8, as scripts/test.sh's temporary instances are.
REGRESS = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
REGRESS_OPTS = --inputdir=. --load-extension=$(EXTENSION)
NO_LOCALE = 1
ENCODING = UTF8

ISOLATION = $(patsubst test/specs/%.spec,%,$(sort $(wildcard test/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test --load-extension=$(EXTENSION)

# The TAP tests start clusters of their own, some of them from a second
# (0.1.0) build that scripts/test.sh prepares: scripts/test.sh runs them.
# TAP_TESTS stays unset so that "make installcheck" uses only the server it
# is given.
PROVE_TESTS = $(sort $(wildcard test/t/*.pl))

PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers -Wno-sign-compare
SHLIB_LINK = -lz

EXTRA_CLEAN = $(DATA_built) tmp_check/

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(EXTENSION)--$(EXTVERSION).sql: $(sort $(wildcard sql/install/*.sql)) $(EXTENSION).control
	cat $(sort $(wildcard sql/install/*.sql)) > $@

$(EXTENSION)--%.sql: sql/upgrade/$(EXTENSION)--%.sql.in $(wildcard sql/install/*.sql)
	awk '/^-- @include / { f = $$3; while ((getline l < f) > 0) print l; \
		if (close(f) != 0) { print "missing " f > "/dev/stderr"; exit 1 }; next } \
		{ print }' $< > $@.tmp && mv $@.tmp $@

# PGXS tracks no header dependencies: rebuild everything when a header moves.
$(OBJS): $(wildcard src/*/*.h)

# The Kafka source, streamforge_kafka (kafka/, docs/kafka.md), is a second
# extension built on librdkafka: built and installed with this one when
# librdkafka's headers are there, skipped with a note when not, so that
# the core extension keeps its own dependencies (PGXS, zlib).
# WITH_KAFKA=no skips it whatever is installed (debian/rules: the Debian
# package holds the core extension only).
WITH_KAFKA ?= auto
ifeq ($(WITH_KAFKA),no)
HAVE_RDKAFKA := skipped
else
HAVE_RDKAFKA := $(shell printf '\#include <librdkafka/rdkafka.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo yes)
endif
ifeq ($(HAVE_RDKAFKA),yes)
all: kafka-all
install: kafka-install
clean: kafka-clean
.PHONY: kafka-all kafka-install kafka-clean
kafka-all:
	$(MAKE) -C kafka PG_CONFIG=$(PG_CONFIG)
kafka-install: kafka-all
	$(MAKE) -C kafka PG_CONFIG=$(PG_CONFIG) install
kafka-clean:
	$(MAKE) -C kafka PG_CONFIG=$(PG_CONFIG) clean
else ifneq ($(HAVE_RDKAFKA),skipped)
all: kafka-missing
.PHONY: kafka-missing
kafka-missing:
	@echo "note: streamforge_kafka (kafka/) is not built: librdkafka is missing (Debian: apt-get install librdkafka-dev)"
endif
