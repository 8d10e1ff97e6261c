# shellcheck shell=bash disable=SC2034
# scripts/lib.sh: helpers shared by demo.sh and test.sh (sourced, not run).
#
# Conventions:
#  - SF_ROOT is the checkout (the directory above scripts/).
#  - Everything PostgreSQL-side uses the Debian PostgreSQL 15 packages in
#    /usr/lib/postgresql/15; no system cluster is ever used or touched.
#  - PostgreSQL refuses to run as root.  When we are root, every server and
#    test process runs as the unprivileged user "postgres" (created by the
#    postgresql-common package); otherwise as the invoking user.
#  - Nothing here prompts: it works with CI=true and no standard input.

SF_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_MAJOR=15
PGDIR=/usr/lib/postgresql/$PG_MAJOR
PGBIN=$PGDIR/bin
PGXS_DIR=$PGDIR/lib/pgxs
PG_CONFIG=$PGBIN/pg_config
export DEBIAN_FRONTEND=noninteractive

sf_say() { printf '==> %s\n' "$*"; }
sf_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

sf_is_root() { [ "$(id -u)" -eq 0 ]; }

# Run a command with root rights: directly as root, else through sudo.
sf_as_root() {
	if sf_is_root; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		sf_die "need root rights for: $* (run as root or install sudo)"
	fi
}

# Run a command as the server user, from "/" unless a directory is given
# with SF_RUN_DIR (root's working directory may not be readable by it).
sf_as_server() {
	local dir=${SF_RUN_DIR:-/}
	if sf_is_root; then
		(cd "$dir" && runuser -u postgres -- "$@")
	else
		(cd "$dir" && "$@")
	fi
}

# With SF_LOG set to a file, the commands below that print a lot (apt-get,
# the compiler, make install) write there instead of the terminal, and a
# failure prints the log's last lines and names it.  Unset: they print to
# the terminal as before (test.sh).
# Usage: sf_logged COMMAND... (its output to $SF_LOG, if set)
sf_logged() {
	if [ -n "${SF_LOG:-}" ]; then
		printf '\n$ %s\n' "$*" >>"$SF_LOG"
		"$@" >>"$SF_LOG" 2>&1
	else
		"$@"
	fi
}

# sf_log_fail MESSAGE: die with MESSAGE, after the end of $SF_LOG if set.
sf_log_fail() {
	if [ -n "${SF_LOG:-}" ]; then
		echo "---- last lines of $SF_LOG:" >&2
		tail -n 25 "$SF_LOG" >&2
		echo "----" >&2
		sf_die "$1 (the whole output is in $SF_LOG)"
	fi
	sf_die "$1"
}

# Install the Debian packages among "$@" that are not installed yet.
sf_need_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	sf_say "installing Debian packages: ${missing[*]}"
	sf_logged sf_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q ||
		sf_log_fail "apt-get update failed"
	sf_logged sf_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "${missing[@]}" </dev/null ||
		sf_log_fail "apt-get install failed"
}

# Packages for building the extension and running a server; librdkafka-dev
# for the Kafka source streamforge_kafka (kafka/, docs/kafka.md), which the
# Makefile builds only when librdkafka is there.
SF_BUILD_PACKAGES=(build-essential postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR zlib1g-dev librdkafka-dev)
# Extra packages for the whole test suite: TAP tests (IPC::Run), pg_cron
# (scheduling tests), clang and its runtimes (fuzz targets under test/run.d),
# PL/Proxy (streamforge_proxy, test/t/100_proxy.pl).
SF_TEST_PACKAGES=(libipc-run-perl postgresql-$PG_MAJOR-cron clang libclang-rt-14-dev postgresql-$PG_MAJOR-plproxy)

# Build the extension in the checkout (-Wall -Wextra -Werror come from the
# Makefile) and install it into PostgreSQL 15.  The install is serialized
# with a lock because several checkouts may share one machine.
sf_build_and_install() {
	local ext libdir extdir f
	ext=$(sf_make_var "$SF_ROOT" EXTENSION)
	libdir=$($PG_CONFIG --pkglibdir)
	extdir=$($PG_CONFIG --sharedir)/extension
	if [ -n "${SF_LOG:-}" ]; then
		sf_say "building $ext (compiler output in $SF_LOG)"
	else
		sf_say "building $ext (make, PG_CONFIG=$PG_CONFIG)"
	fi
	sf_logged make -C "$SF_ROOT" -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG" ||
		sf_log_fail "build failed"

	# Nothing to do when the installed files are these ones (this lets a
	# user without root rights rerun after an install by root).
	local uptodate=1
	# this version's library (streamforge-<version>.so) and the compat
	# library of the older versions' SQL (streamforge.so, release 0.3.0's)
	local module
	module=$(sf_make_var "$SF_ROOT" MODULE_big)
	cmp -s "$SF_ROOT/$module.so" "$libdir/$module.so" || uptodate=0
	cmp -s "$SF_ROOT/$(sf_make_var "$SF_ROOT" COMPAT_DIR)/$ext.so" "$libdir/$ext.so" || uptodate=0
	for f in "$ext.control" $(sf_make_var "$SF_ROOT" DATA_built) $(sf_make_var "$SF_ROOT" DATA); do
		cmp -s "$SF_ROOT/$f" "$extdir/$(basename "$f")" || uptodate=0
	done
	# the Kafka source, when the build made it (kafka/, librdkafka)
	if [ -f "$SF_ROOT/kafka/streamforge_kafka.so" ]; then
		cmp -s "$SF_ROOT/kafka/streamforge_kafka.so" "$libdir/streamforge_kafka.so" || uptodate=0
		for f in "$SF_ROOT"/kafka/streamforge_kafka.control "$SF_ROOT"/kafka/streamforge_kafka--*.sql; do
			cmp -s "$f" "$extdir/$(basename "$f")" || uptodate=0
		done
	fi
	if [ $uptodate -eq 1 ]; then
		sf_say "$ext is installed already in $libdir"
		return 0
	fi

	sf_say "installing $ext into $libdir"
	local install=(flock /tmp/sf-install.lock make -C "$SF_ROOT" PG_CONFIG="$PG_CONFIG" install)
	if [ -w "$libdir" ] && [ -w "$extdir" ]; then
		sf_logged "${install[@]}" >/dev/null || sf_log_fail "make install failed"
	else
		sf_logged sf_as_root "${install[@]}" >/dev/null || sf_log_fail "make install failed"
	fi
}

# Install the build in the checkout (or in the source directory $2) into a
# private copy of the PostgreSQL tree under $1 (make install DESTDIR=$1):
# the copied binaries find their share and lib directories relative to
# themselves, so a server started from $1$PGBIN loads this build and nothing
# another checkout installed into the system tree.  Prints nothing; dies on
# failure.
sf_private_tree() {
	local dest=$1 src=${2:-$SF_ROOT} sharedir
	sharedir=$($PG_CONFIG --sharedir)
	mkdir -p "$dest$(dirname "$PGDIR")" "$dest$(dirname "$sharedir")"
	cp -a "$PGDIR" "$dest$PGDIR"
	cp -a "$sharedir" "$dest$sharedir"
	# Only this build's files: none of another version installed into the
	# system tree.
	rm -f "$dest$sharedir"/extension/"$(sf_make_var "$src" EXTENSION | cut -d' ' -f1)"* \
		"$dest$($PG_CONFIG --pkglibdir)/$(sf_make_var "$src" EXTENSION | cut -d' ' -f1)"*.so
	make -C "$src" PG_CONFIG="$PG_CONFIG" DESTDIR="$dest" install >/dev/null ||
		sf_die "make install into $dest failed"
}

# The releases that upgrades start from, oldest first: 0.1.0 (tag v0.1.0),
# 0.2.0 (tag v0.2.0) and 0.3.0 (the last commit of the 0.3.0 round).  Each is named by its commit, since tags need not
# reach every clone (sf_release_commit).  SF_RELEASE_VERSION and
# SF_RELEASE_COMMIT name the oldest, the one SF_RELEASE_INSTALL has always
# meant (test/t/091_install_takeover.pl, 092_attach_upgrade.pl).
SF_RELEASES=(0.1.0 0.2.0 0.3.0)

# sf_release_commit VERSION: the commit of a release of SF_RELEASES.
sf_release_commit() {
	case "$1" in
	0.1.0) echo 8f0744b0909e68aa064cf014a237424f615678ad ;;
	0.2.0) echo 7c5f2d6eb17a53ab248922091dfd153ceb78ff47 ;;
	0.3.0) echo 3cb303efad3bb447bb5847a73a55ee35bb7d1a2a ;;
	*)
		echo "unknown release \"$1\" (the releases are ${SF_RELEASES[*]})" >&2
		return 1
		;;
	esac
}
SF_RELEASE_VERSION=${SF_RELEASES[0]}
SF_RELEASE_COMMIT=$(sf_release_commit "$SF_RELEASE_VERSION")

# sf_release_var VERSION: the suffix of the environment variables that
# name a release to the TAP tests (0.2.0 -> 0_2_0: SF_RELEASE_INSTALL_0_2_0).
sf_release_var() {
	printf '%s' "${1//./_}"
}

# Build a released version exactly as released (git archive of its commit,
# its own Makefile and install script) under $1/src and install it into a
# private PostgreSQL tree under $1/pg (sf_private_tree).  $2 is the version
# (SF_RELEASE_VERSION if not given).  Prints the installation directory to
# pass as install_path (the one holding bin/); fails with a message on
# stderr when the checkout has neither the history for the commit nor the
# fixture (below), or the build fails.
sf_release_tree() {
	local dir=$1 version=${2:-$SF_RELEASE_VERSION} commit
	commit=$(sf_release_commit "$version") || return 1
	# (safe.directory: root may run this in a checkout another user owns)
	local git=(git -c safe.directory="$SF_ROOT" -C "$SF_ROOT")
	# The release's sources from the history; in a clone without it (a
	# shallow clone, a tarball), from the fixture made of the same commit
	# with only what the build needs, for 0.1.0
	#   git archive 8f0744b -- src sql/install Makefile streamforge.control
	# and for 0.2.0 (whose Makefile also installs its update script and
	# streamforge_proxy)
	#   git archive 7c5f2d6 -- src sql/install sql/upgrade proxy Makefile streamforge.control
	# and for 0.3.0 (also streamforge_kafka)
	#   git archive 3cb303e -- src sql/install sql/upgrade proxy kafka Makefile streamforge.control
	# (each | gzip -n -9 > test/fixtures/streamforge-VERSION.tar.gz).
	local fixture=$SF_ROOT/test/fixtures/streamforge-$version.tar.gz
	rm -rf "$dir" && mkdir -p "$dir/src" || return 1
	if "${git[@]}" cat-file -e "$commit^{commit}" 2>/dev/null; then
		"${git[@]}" archive "$commit" | tar -C "$dir/src" -xf - || {
			echo "git archive $commit failed" >&2
			return 1
		}
	elif [ -f "$fixture" ]; then
		tar -C "$dir/src" -xzf "$fixture" || return 1
	else
		echo "the checkout $SF_ROOT has neither commit $commit (release $version) nor $fixture: the upgrade tests need one of them" >&2
		return 1
	fi
	make -C "$dir/src" -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG" >"$dir/build.log" 2>&1 || {
		echo "building release $version failed: $dir/build.log" >&2
		return 1
	}
	(sf_private_tree "$dir/pg" "$dir/src") || return 1
	echo "$dir/pg$PGDIR"
}

# Checks that the server user exists (the postgresql package creates it).
sf_check_server_user() {
	if sf_is_root; then
		id postgres >/dev/null 2>&1 || sf_die "user \"postgres\" does not exist (is postgresql-$PG_MAJOR installed?)"
	fi
}

# A stable short tag for this checkout's path (for names under /tmp, /var/tmp).
sf_checkout_tag() {
	printf '%s' "$SF_ROOT" | cksum | cut -d' ' -f1
}

# Print variable $2 of the Makefile in directory $1, as PGXS computes it
# (REGRESS, REGRESS_OPTS, ISOLATION, ...): the Makefile stays the one place
# that says which tests exist and how they run.
sf_make_var() {
	printf '%s\n' 'sf-print-%:' '	@echo $($*)' |
		make -s --no-print-directory -C "$1" -f Makefile -f - \
			PG_CONFIG="$PG_CONFIG" "sf-print-$2"
}
