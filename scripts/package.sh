#!/usr/bin/env bash
# scripts/package.sh: build the Debian packages postgresql-15-streamforge
# (the core extension) and postgresql-15-streamforge-kafka (streamforge_kafka).
#
#   ./scripts/package.sh            # -> dist/postgresql-15-streamforge_<v>_<arch>.deb
#                                   #    dist/postgresql-15-streamforge-kafka_<v>_<arch>.deb
#   ./scripts/package.sh --nocheck  # skip the build-time installcheck
#   ./scripts/package.sh --release[=VERSION]
#                                   # the packages of a release (default
#                                   # the latest, 0.3.0; 0.2.0, 0.1.0 too)
#                                   # built from its commit, for
#                                   # scripts/test-package.sh --upgrade
#
# Builds the way Debian builds PostgreSQL extensions (debian/: pg_buildext,
# dh --with pgxs_loop, debian/pgversions): dpkg-buildpackage -us -uc -b in
# a copy of the working tree (without .git and build products) under
# dist/build/, so that the checkout stays clean and the products land in
# dist/.  The core package holds whatever "make install WITH_KAFKA=no"
# installs (every extension of the Makefile, its scripts and its
# libraries), the Kafka package what "make -C kafka install" installs
# (debian/rules).  Then lintian
# checks the .deb and the .changes; an error fails the script.
#
# Needs the Debian packaging tools (build-essential, debhelper, devscripts,
# fakeroot, lintian, postgresql-server-dev-all, postgresql-15, zlib1g-dev,
# librdkafka-dev).
# The build-time check (dh_pgxs_test) runs "make installcheck" in a
# pg_virtualenv cluster; as root, that cluster runs as user postgres.
# scripts/test-package.sh then installs the .deb on a clean Debian 12.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

nocheck=
release=
for arg in "$@"; do
	case "$arg" in
	--nocheck) nocheck=1 ;;
	--release) release=${SF_RELEASES[${#SF_RELEASES[@]} - 1]} ;;
	--release=*) release=${arg#--release=} ;;
	*) sf_die "unknown argument \"$arg\" (expected --nocheck or --release[=VERSION])" ;;
	esac
done

for tool in dpkg-buildpackage dh pg_buildext lintian fakeroot; do
	command -v "$tool" >/dev/null ||
		sf_die "$tool is missing (apt-get install build-essential debhelper devscripts fakeroot lintian postgresql-server-dev-all)"
done

DIST=$SF_ROOT/dist
rm -rf "$DIST/build"
if [ -n "$release" ]; then
	# A release as released (its commit).  0.2.0 is the first release
	# with a debian/: its package is built from that, as it was released.
	# 0.1.0 has none: it is packaged with this debian/ and a changelog of
	# its own.  The build-time check is off (0.1.0's Makefile runs the TAP
	# tests in installcheck; the release's tests ran when it was released).
	commit=$(sf_release_commit "$release") || exit 1
	version=$release-1
	upstream=$release
	nocheck=1
	src=$DIST/build/streamforge-$upstream
	mkdir -p "$src"
	sf_say "extracting release $release ($commit) to $src"
	git -c safe.directory="$SF_ROOT" -C "$SF_ROOT" archive "$commit" | tar -C "$src" -xf - ||
		sf_die "git archive $commit failed (does the checkout have the history?)"
	if [ -f "$src/debian/changelog" ]; then
		[ "$(cd "$src" && dpkg-parsechangelog -S Version)" = "$version" ] ||
			sf_die "release $release's debian/changelog is not at $version"
		# 0.3.0 has the Kafka source (kafka/) but its debian/ packaged
		# the core extension only: its packages are built with this
		# debian/ (which adds postgresql-15-streamforge-kafka; 0.3.0's
		# debian/ differs from it by that package only) and the
		# release's own changelog, so that the upgrade test starts from
		# a release's Kafka package as a user who built it would have.
		if [ -d "$src/kafka" ] && ! grep -q -- '-kafka$' "$src/debian/control.in"; then
			sf_say "release $release: packaged with this debian/ (postgresql-15-streamforge-kafka too) and its own changelog"
			cp "$src/debian/changelog" "$DIST/build/changelog.$release"
			rm -rf "$src/debian"
			cp -a "$SF_ROOT/debian" "$src/"
			mv "$DIST/build/changelog.$release" "$src/debian/changelog"
		fi
	else
		cp -a "$SF_ROOT/debian" "$src/"
		cat >"$src/debian/changelog" <<-EOF
			streamforge ($version) unstable; urgency=medium

			  * Release $release, packaged for the upgrade test.

			 -- $(sed -n 's/^Maintainer: //p' "$SF_ROOT/debian/control")  $(date -R)
		EOF
		# 0.1.0 has no Kafka source: no Kafka package
		perl -0pe 's/\n\n+Package: [^\n]*-kafka\n.*//s; s/\n \.\n The Kafka source[^\n]*\n?/\n/' \
			"$SF_ROOT/debian/control.in" >"$src/debian/control.in"
		(cd "$src" && pg_buildext updatecontrol) || sf_die "pg_buildext updatecontrol failed"
	fi
else
	version=$(cd "$SF_ROOT" && dpkg-parsechangelog -S Version)
	upstream=${version%-*}
	extversion=$(sf_make_var "$SF_ROOT" EXTVERSION)
	[ "$upstream" = "$extversion" ] ||
		sf_die "debian/changelog is at $version but the extension's default_version is $extversion (add a debian/changelog entry: dch -v $extversion-1)"
	src=$DIST/build/streamforge-$upstream
	mkdir -p "$src"
	sf_say "copying the working tree to $src"
	tar -C "$SF_ROOT" --exclude=./.git --exclude=./dist --exclude=./.demo \
		--exclude='./tmp_check*' --exclude=./results --exclude=./output_iso \
		--exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude=./bench/work --exclude='./compat-*' \
		--exclude="./streamforge--$extversion.sql" -cf - . | tar -C "$src" -xf -
fi

# The build-time installcheck starts a server, which refuses to run as
# root: pg_virtualenv then runs it as postgres, who must reach the tree.
if sf_is_root; then
	chown -R postgres:postgres "$DIST/build"
	chmod 755 "$DIST" "$DIST/build"
fi

sf_say "dpkg-buildpackage -us -uc -b${nocheck:+ (DEB_BUILD_OPTIONS=nocheck)}"
(cd "$src" &&
	env ${nocheck:+DEB_BUILD_OPTIONS=nocheck DEB_BUILD_PROFILES=nocheck} \
		dpkg-buildpackage -us -uc -b) || sf_die "dpkg-buildpackage failed"

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
changes=$DIST/build/streamforge_${version}_$arch.changes
debs=$(cd "$DIST/build" && ls ./*.deb)
sf_say "lintian"
(cd "$DIST/build" && lintian --fail-on error --info "$changes") ||
	sf_die "lintian found errors"

for f in $debs "streamforge_${version}_$arch.changes" "streamforge_${version}_$arch.buildinfo"; do
	mv "$DIST/build/$f" "$DIST/"
done
rm -rf "$DIST/build"
sf_say "built:"
for f in $debs; do
	echo "    dist/${f#./}"
done
for f in $debs; do
	case "$f" in *-dbgsym_*) continue ;; esac
	echo "    ${f#./}:"
	dpkg-deb --contents "$DIST/${f#./}" | awk '{print "        " $NF}' | grep -E '\.(so|control|sql)$'
done
