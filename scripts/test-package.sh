#!/usr/bin/env bash
# scripts/test-package.sh: install the Debian packages on a clean Debian 12
# and run the regression suites against that installation.
#
#   ./scripts/test-package.sh [CORE.deb [KAFKA.deb]]
#   ./scripts/test-package.sh --upgrade[=VERSION] [...]
#
# Default: dist/postgresql-15-streamforge_<debian/changelog's version>_<arch>.deb
# and dist/postgresql-15-streamforge-kafka_<same>_<arch>.deb (build them
# with scripts/package.sh).  With --upgrade, step 2 first installs
# the packages of a release, 0.3.0 unless VERSION names another
# (dist/postgresql-15-streamforge_<VERSION>-1_<arch>.deb, and from 0.3.0
# dist/postgresql-15-streamforge-kafka_<VERSION>-1_<arch>.deb, built by
# scripts/package.sh --release=VERSION), and pg_cron; makes pipelines with
# it (from 0.2.0 also a time unit, a retention, results with averages, a
# table attached, ingest_json and a pg_cron job); then upgrades to the
# package under test with apt while the server runs, ingests under the
# release's SQL, runs ALTER EXTENSION UPDATE, ingests again (the attached
# table too, now bound to its pipeline's id), runs the pg_cron job and
# restores the release's checkpoint.  From 0.3.0 also a Kafka subscription
# (streamforge_kafka preloaded; the test's mock cluster, sf_kafka_mock,
# copied in as a program): messages consumed by the release's worker,
# by the release's SQL with the new packages, and after a restart and
# ALTER EXTENSION streamforge_kafka UPDATE by the new worker, each offset
# once.  As root, with debootstrap and the apt mirror of this machine's
# sources:
#
#   1. a Debian 12 minbase chroot (debootstrap; the base tarball is kept in
#      $SF_BASE_TGZ, default /var/tmp/sf-package-bookworm.tgz, and
#      /tmp/sf-bookworm-base.tgz of shared/tools/fresh-debian.sh is reused
#      when present), without compiler, make or PostgreSQL headers;
#   2. apt-get install postgresql-15 and the .debs: apt resolves the
#      packages' dependencies from their control files, nothing else;
#   3. checks that the core package holds every file "make install
#      WITH_KAFKA=no" installs (whatever extensions the Makefile has), the
#      Kafka package every file "make -C kafka install" installs, and that
#      no build tool is present in the chroot;
#   4. starts the cluster the postgresql-15 package created, runs CREATE
#      EXTENSION streamforge, then pg_regress and pg_isolation_regress of
#      the installed postgresql-client-15 over the checkout's sql/, expected/ and
#      test/ (specs, expected outputs, the SQL models; copied in; no build tree, no library)
#      against that running server: make installcheck's commands, from the
#      Makefile's REGRESS, ISOLATION and their options;
#   5. streamforge_kafka: preloaded, CREATE EXTENSION, a subscription fed
#      by the mock cluster consumes every message (sql/kafka_inputs.sql
#      of step 4 ran against the package's extension too).
#
# On demand only (root, network): scripts/test.sh does not run it.  Exit
# status 0 when everything passed.  docs/packaging.md has a transcript.
set -uo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

sf_is_root || sf_die "run as root (debootstrap, chroot, mount)"

upgrade=
deb=
kafka_deb=
for arg in "$@"; do
	case "$arg" in
	--upgrade) upgrade=${SF_RELEASES[${#SF_RELEASES[@]} - 1]} ;;
	--upgrade=*) upgrade=${arg#--upgrade=} ;;
	-*) sf_die "unknown option \"$arg\" (expected --upgrade[=VERSION])" ;;
	*-kafka_*.deb) kafka_deb=$arg ;;
	*) deb=$arg ;;
	esac
done
arch=$(dpkg --print-architecture)
if [ -z "$deb" ]; then
	version=$(cd "$SF_ROOT" && dpkg-parsechangelog -S Version)
	deb=$SF_ROOT/dist/postgresql-$PG_MAJOR-streamforge_${version}_$arch.deb
	[ -f "$deb" ] || sf_die "no $deb: run scripts/package.sh first"
	kafka_deb=$SF_ROOT/dist/postgresql-$PG_MAJOR-streamforge-kafka_${version}_$arch.deb
	[ -f "$kafka_deb" ] || sf_die "no $kafka_deb: run scripts/package.sh first"
fi
[ -f "$deb" ] || sf_die "$deb does not exist"
deb=$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")
if [ -n "$kafka_deb" ]; then
	[ -f "$kafka_deb" ] || sf_die "$kafka_deb does not exist"
	kafka_deb=$(cd "$(dirname "$kafka_deb")" && pwd)/$(basename "$kafka_deb")
fi
release_deb=
release_kafka_deb=
if [ -n "$upgrade" ]; then
	sf_release_commit "$upgrade" >/dev/null || exit 1
	release_deb=$SF_ROOT/dist/postgresql-$PG_MAJOR-streamforge_$upgrade-1_$arch.deb
	[ -f "$release_deb" ] || sf_die "no $release_deb: run scripts/package.sh --release=$upgrade first"
	# from 0.3.0 on, the release had a Kafka source: its package too
	if [ -n "$kafka_deb" ] && dpkg --compare-versions "$upgrade" ge 0.3.0; then
		release_kafka_deb=$SF_ROOT/dist/postgresql-$PG_MAJOR-streamforge-kafka_$upgrade-1_$arch.deb
		[ -f "$release_kafka_deb" ] || sf_die "no $release_kafka_deb: run scripts/package.sh --release=$upgrade first"
	fi
fi
# The mock cluster of the TAP tests (a program linking librdkafka1, which
# the Kafka package pulls in): the chroot has no Kafka broker.
if [ -n "$kafka_deb" ]; then
	make -s -C "$SF_ROOT/kafka" PG_CONFIG="$PG_CONFIG" tools/sf_kafka_mock >/dev/null ||
		sf_die "could not build kafka/tools/sf_kafka_mock"
fi

DEBOOTSTRAP=${DEBOOTSTRAP:-$(command -v debootstrap || echo /usr/sbin/debootstrap)}
BASE=${SF_BASE_TGZ:-/var/tmp/sf-package-bookworm.tgz}
[ -f "$BASE" ] || [ ! -f /tmp/sf-bookworm-base.tgz ] || BASE=/tmp/sf-bookworm-base.tgz
ROOT=/var/tmp/sf-package-root.$(sf_checkout_tag)
MIRROR=$(grep -hm1 -E '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}')
[ -n "$MIRROR" ] || MIRROR=$(grep -hm1 -E '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}')
[ -n "$MIRROR" ] || MIRROR=http://deb.debian.org/debian

umount_root() {
	local m
	for m in proc sys; do umount -l "$ROOT/$m" 2>/dev/null; done
	umount -R -l "$ROOT/dev" 2>/dev/null
	return 0
}
# Deletes the chroot, never what is mounted in it (the host's /dev).
remove_root() {
	[ -e "$ROOT" ] || return 0
	if grep -q " $ROOT/" /proc/mounts; then
		echo "error: something is still mounted under $ROOT; not deleting it" >&2
		return 1
	fi
	rm -rf --one-file-system "$ROOT"
}
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
	mock_stop
	[ -x "$ROOT/usr/bin/pg_ctlcluster" ] &&
		chroot "$ROOT" pg_ctlcluster "$PG_MAJOR" main stop -m fast >/dev/null 2>&1
	umount_root
	[ -n "${SF_KEEP_ROOT:-}" ] || remove_root
}
trap cleanup EXIT

# 1. the chroot
if [ ! -f "$BASE" ]; then
	[ -x "$DEBOOTSTRAP" ] || sf_die "debootstrap is missing (apt-get install debootstrap, or DEBOOTSTRAP=/path/to/debootstrap)"
	sf_say "debootstrap bookworm (minbase) from $MIRROR into $BASE"
	rm -rf "$ROOT.base"
	"$DEBOOTSTRAP" --variant=minbase --include=ca-certificates bookworm "$ROOT.base" "$MIRROR" \
		>"$ROOT.debootstrap.log" 2>&1 || sf_die "debootstrap failed: $ROOT.debootstrap.log"
	tar czf "$BASE" -C "$ROOT.base" . && rm -rf "$ROOT.base" "$ROOT.debootstrap.log"
fi
umount_root
remove_root || sf_die "could not remove the previous $ROOT"
mkdir -p "$ROOT" && tar xzf "$BASE" -C "$ROOT" || sf_die "could not unpack $BASE"
sf_say "clean Debian $(cat "$ROOT/etc/debian_version") in $ROOT (from $BASE)"
# fresh-debian.sh's base has make (and git) for its newcomer's clone: the
# package must do without, so it goes
if [ -e "$ROOT/usr/bin/make" ]; then
	chroot "$ROOT" dpkg --purge make >/dev/null 2>&1 || sf_die "could not remove make from the chroot"
fi
rm -f "$ROOT/etc/apt/sources.list" "$ROOT"/etc/apt/sources.list.d/*
if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
	cp /etc/apt/sources.list.d/*.sources "$ROOT/etc/apt/sources.list.d/"
else
	cp /etc/apt/sources.list "$ROOT/etc/apt/sources.list"
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# Packages install their services, but nothing starts until we say so.
printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
chmod 755 "$ROOT/usr/sbin/policy-rc.d"
{ mount -t proc proc "$ROOT/proc" && mount --rbind /dev "$ROOT/dev" && mount -t sysfs sys "$ROOT/sys"; } ||
	sf_die "could not mount /proc, /dev, /sys in $ROOT"

in_root() {
	chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

status=0
check() {	# check DESCRIPTION COMMAND...: one line of the verdict
	if "${@:2}"; then
		echo "    ok:     $1"
	else
		echo "    FAILED: $1"
		status=1
	fi
}
# apt_install DEB|PACKAGE...: apt-get install postgresql-15 and the
# packages (a .deb file is copied in)
apt_install() {
	local f names=()
	for f in "$@"; do
		case "$f" in
		*.deb)
			cp "$f" "$ROOT/tmp/"
			names+=("./$(basename "$f")")
			;;
		*) names+=("$f") ;;
		esac
	done
	sf_say "apt-get install postgresql-$PG_MAJOR ${names[*]}"
	in_root sh -c "cd /tmp && apt-get install -y -q --no-install-recommends postgresql-$PG_MAJOR ${names[*]}" \
		>"$ROOT/tmp/apt.log" 2>&1 || { tail -20 "$ROOT/tmp/apt.log"; sf_die "apt-get install failed"; }
	# shellcheck disable=SC2016  # dpkg-query's format, not the shell's
	in_root dpkg-query -W -f='    ${Package} ${Version}\n' postgresql-$PG_MAJOR "postgresql-$PG_MAJOR-streamforge*" |
		grep -v -- '-dbgsym ' | grep -v ' $'
}
start_cluster() {
	in_root pg_ctlcluster "$PG_MAJOR" main status >/dev/null 2>&1 && return 0
	sf_say "starting the cluster $PG_MAJOR/main of the package"
	in_root pg_ctlcluster "$PG_MAJOR" main start || sf_die "the cluster did not start"
}
# sql_is DESCRIPTION DATABASE EXPECTED SQL: the last line SQL prints is EXPECTED
sql_is() {
	local got
	got=$(in_root runuser -u postgres -- psql -X -qAt -v ON_ERROR_STOP=1 -d "$2" -c "$4" 2>&1 | tail -1)
	check "$1" [ "$got" = "$3" ]
	[ "$got" = "$3" ] || echo "            got: $got"
}

# The mock Kafka cluster, in the chroot: kafka/tools/sf_kafka_mock (the TAP
# tests' program) reads commands from a FIFO and answers one line each.
mock_pid=
mock_start() {
	[ -n "$mock_pid" ] && return 0
	cp "$SF_ROOT/kafka/tools/sf_kafka_mock" "$ROOT/tmp/sf_kafka_mock"
	rm -f "$ROOT/tmp/mock.in" && mkfifo "$ROOT/tmp/mock.in"
	: >"$ROOT/tmp/mock.out"
	in_root sh -c 'exec /tmp/sf_kafka_mock </tmp/mock.in >/tmp/mock.out 2>/tmp/mock.err' &
	mock_pid=$!
	exec 7>"$ROOT/tmp/mock.in"
	local i
	for i in $(seq 100); do
		grep -q '^bootstrap ' "$ROOT/tmp/mock.out" && break
		sleep 0.2
	done
	mock_bootstrap=$(sed -n 's/^bootstrap //p' "$ROOT/tmp/mock.out")
	[ -n "$mock_bootstrap" ] || sf_die "sf_kafka_mock did not start: $(cat "$ROOT/tmp/mock.err")"
	sf_say "mock Kafka cluster at $mock_bootstrap"
}
# mock_cmd LINE: one command; fails unless it answers "ok ..."
mock_cmd() {
	local n i
	n=$(wc -l <"$ROOT/tmp/mock.out")
	echo "$1" >&7
	for i in $(seq 600); do
		[ "$(wc -l <"$ROOT/tmp/mock.out")" -gt "$n" ] && break
		sleep 0.1
	done
	tail -1 "$ROOT/tmp/mock.out" | grep -q '^ok' || {
		echo "    sf_kafka_mock: $1: $(tail -1 "$ROOT/tmp/mock.out")"
		return 1
	}
}
# mock_produce TOPIC PARTITIONS FROM TO: JSON messages {"id":"m<i>","k":
# "k<i % 3>","t":<its timestamp>,"v":1}, message i to partition
# i % PARTITIONS with timestamp 1700000000000 + i (ms)
mock_produce() {
	local i
	for i in $(seq "$3" "$4"); do
		echo "p $1 $((i % $2)) $((1700000000000 + i)) - {\"id\":\"m$i\",\"k\":\"k$((i % 3))\",\"t\":$((1700000000000 + i)),\"v\":1}" >&7
	done
	mock_cmd flush
}
mock_stop() {
	[ -n "$mock_pid" ] || return 0
	echo quit >&7 2>/dev/null
	exec 7>&-
	wait "$mock_pid" 2>/dev/null
	mock_pid=
}
# kafka_conf DATABASE [LIBRARIES]: preload streamforge_kafka (and
# LIBRARIES before it) for the subscriptions of DATABASE; takes effect at
# the next restart
kafka_conf() {
	printf '%s\n' "shared_preload_libraries = '${2:+$2,}streamforge_kafka'" \
		"streamforge_kafka.database = '$1'" "streamforge_kafka.restart_time = 1" \
		>"$ROOT/etc/postgresql/$PG_MAJOR/main/conf.d/streamforge_kafka.conf"
}
# wait_sql DESCRIPTION DATABASE SQL: SQL returns t within 120 s
wait_sql() {
	local i got=
	for i in $(seq 240); do
		got=$(in_root runuser -u postgres -- psql -X -qAt -d "$2" -c "$3" 2>&1 | tail -1)
		[ "$got" = t ] && break
		sleep 0.5
	done
	check "$1" [ "$got" = t ]
	[ "$got" = t ] || in_root runuser -u postgres -- psql -X -d "$2" \
		-c 'SELECT * FROM streamforge_kafka.subscriptions' -c 'SELECT * FROM streamforge_kafka.rejected'
}
# caught_up PIPELINE N: the subscriptions of PIPELINE have consumed N
# messages, and the pipeline's own offsets say so too
caught_up() {
	echo "SELECT (SELECT COALESCE(sum(consumed_offset + 1), 0) FROM streamforge_kafka.subscriptions
	               WHERE pipeline = '$1') = $2
	         AND (SELECT sum(consumed_offset + 1) FROM streamforge.partitions('$1')) = $2
	         AND NOT EXISTS (SELECT FROM streamforge_kafka.rejected)"
}

# 2. postgresql-15 and the package (--upgrade: first the release's package,
#    a pipeline made by it, then the package upgrade with the server
#    running, the old SQL with the new library, ALTER EXTENSION UPDATE)
in_root apt-get update -q >/dev/null || sf_die "apt-get update failed in the chroot"
if [ -n "$upgrade" ]; then
	release=$upgrade
	newversion=$(sf_make_var "$SF_ROOT" EXTVERSION)
	# from 0.2.0 on, the release's features too
	f2=
	[ "$release" != 0.1.0 ] && f2=1
	apt_install "$release_deb" ${release_kafka_deb:+"$release_kafka_deb"} "postgresql-$PG_MAJOR-cron"
	printf '%s\n' "shared_preload_libraries = 'pg_cron${release_kafka_deb:+,streamforge_kafka}'" \
		"cron.database_name = 'sf_upgrade'" \
		>"$ROOT/etc/postgresql/$PG_MAJOR/main/conf.d/pg_cron.conf"
	# (conf.d/streamforge_kafka.conf is read last: it names both)
	[ -n "$release_kafka_deb" ] && kafka_conf sf_upgrade pg_cron
	start_cluster
	in_root runuser -u postgres -- psql -X -qAt -d postgres -c 'CREATE DATABASE sf_upgrade;'
	sql_is "release $release: a pipeline with outputs, a checkpoint and a pg_cron job" sf_upgrade t "
		CREATE EXTENSION pg_cron;
		CREATE EXTENSION streamforge;
		SELECT streamforge.create_pipeline('up', ARRAY['a', 'b'],
		    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 5)], 2);
		SELECT streamforge.configure_outputs('up');
		SELECT count(*) FROM streamforge.ingest('up', 'a', 0, 'e0', 'k', 1, 1);
		SELECT count(*) FROM streamforge.ingest('up', 'b', 0, 'e1', 'k', 12, 2);
		SELECT count(*) FROM streamforge.advance('up', 'a', 11);
		SELECT count(*) FROM streamforge.advance('up', 'b', 11);
		SELECT streamforge.schedule_advance('up', 'b', '0 0 1 1 *', 5, 's') > 0;
		CREATE TABLE saved AS SELECT streamforge.checkpoint('up') AS cp,
		    (SELECT array_agg(v ORDER BY v::text) FROM streamforge.visible('up') v)::text AS vis;
		SELECT extversion = '$release' AND vis IS NOT NULL
		  FROM pg_extension, saved WHERE extname = 'streamforge';"
	if [ -n "$f2" ]; then
		sql_is "release $release: a time unit, a retention, an attached table, ingest_json, averages" sf_upgrade t "
			SELECT streamforge.create_pipeline('timed', ARRAY['web'],
			    ARRAY[streamforge.fixed_interval('m', interval '1 minute')],
			    lateness => 5, retention => 600, time_unit => interval '1 second');
			SELECT streamforge.configure_outputs('timed', results_retention => true);
			CREATE TABLE visits (id bigserial PRIMARY KEY, page text NOT NULL,
			                     at timestamptz NOT NULL, ms integer NOT NULL);
			SELECT streamforge.attach('timed', 'visits', event_id => 'id', key => 'page',
			    event_time => 'at', value => 'ms');
			INSERT INTO visits (page, at, ms)
			    VALUES ('/a', '2026-11-30 12:00:00+00', 10), ('/a', '2026-11-30 12:00:30+00', 20);
			SELECT count(*) FROM streamforge.ingest_json('timed',
			    '[{\"partition\": \"web\", \"event_id\": \"j1\", \"key\": \"/b\", \"event_time\": \"2026-11-30 12:00:40+00\", \"value\": 5}]');
			SELECT count(*) FROM streamforge.advance_ts('timed', 'web', '2026-11-30 12:01:10+00');
			SELECT streamforge.schedule_advance('timed', 'web', '0 0 1 1 *', 10, 's') > 0;
			SELECT (SELECT avg FROM streamforge.results WHERE pipeline = 'timed' AND key = '/a') = 15
			   AND (SELECT count(*) FROM streamforge.attachments) = 1
			   AND (SELECT consumed_offset FROM streamforge.partitions('timed')) = 2;"
	fi
	if [ -n "$release_kafka_deb" ]; then
		mock_start
		mock_cmd "topic kt 2"
		sql_is "release $release: streamforge_kafka, a subscription" sf_upgrade t "
			CREATE EXTENSION streamforge_kafka;
			SELECT streamforge.create_pipeline('kp', ARRAY['kt-0', 'kt-1'],
			    ARRAY[streamforge.fixed('w', 100)], lateness => 1000000000);
			SELECT streamforge_kafka.subscribe('kp', '$mock_bootstrap', 'kt',
			    mapping => '{\"event_id\": \"id\", \"key\": \"k\", \"event_time\": \"t\", \"value\": \"v\"}',
			    max_wait => 20) IS NOT NULL;
			SELECT extversion = '$release' FROM pg_extension WHERE extname = 'streamforge_kafka';"
		mock_produce kt 2 0 99
		wait_sql "release $release: its worker consumes 100 messages" sf_upgrade "$(caught_up kp 100)"
	fi
	apt_install "$deb" ${kafka_deb:+"$kafka_deb"}
	sql_is "after the package upgrade, the release's SQL is still installed" sf_upgrade "$release" \
		"SELECT extversion FROM pg_extension WHERE extname = 'streamforge'"
	if [ -n "$release_kafka_deb" ]; then
		mock_produce kt 2 100 149
		wait_sql "after the package upgrade, the running worker consumes 50 more" sf_upgrade "$(caught_up kp 150)"
	fi
	sql_is "the new library ingests under the release's SQL (a late event, changelog consecutive)" sf_upgrade t "
		SELECT count(*) FROM streamforge.ingest('up', 'a', 1, 'e2', 'k', 16, 3);
		SELECT count(*) FROM streamforge.ingest('up', 'a', 2, 'e3', 'k', 0, 4);
		SELECT count(*) FROM streamforge.advance('up', 'a', 30);
		SELECT count(*) FROM streamforge.advance('up', 'b', 30);
		SELECT (SELECT count(*) FROM streamforge.late_events('up')) = 1
		   AND (SELECT count(*) = max(seq) FROM streamforge.changelog WHERE pipeline = 'up');"
	[ -n "$f2" ] && sql_is "the new library ingests under the release's SQL: the attached table, ingest_json" sf_upgrade t "
		INSERT INTO visits (page, at, ms) VALUES ('/a', '2026-11-30 12:01:20+00', 7);
		SELECT count(*) FROM streamforge.ingest_json('timed',
		    '[{\"partition\": \"web\", \"event_id\": \"j2\", \"key\": \"/b\", \"event_time\": \"2026-11-30 12:01:30+00\", \"value\": 9}]');
		SELECT (SELECT consumed_offset FROM streamforge.partitions('timed')) = 4;"
	sql_is "ALTER EXTENSION streamforge UPDATE" sf_upgrade "$newversion" "
		ALTER EXTENSION streamforge UPDATE;
		SELECT extversion FROM pg_extension WHERE extname = 'streamforge'"
	sql_is "after the update: ingestion goes on, the release's checkpoint restores" sf_upgrade t "
		SELECT count(*) FROM streamforge.ingest('up', 'b', 1, 'e4', 'k', 31, 5);
		SELECT count(*) FROM streamforge.advance('up', 'b', 45);
		SELECT count(*) FROM streamforge.advance('up', 'a', 45);
		SELECT streamforge.create_pipeline('up_copy', ARRAY['a', 'b'],
		    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 5)], 2);
		SELECT streamforge.restore('up_copy', cp) FROM saved;
		SELECT (SELECT array_agg(v ORDER BY v::text) FROM streamforge.visible('up_copy') v)::text = vis
		   AND (SELECT count(*) FROM streamforge.results WHERE pipeline = 'up') > 0
		   AND (SELECT count(*) = max(seq) FROM streamforge.changelog WHERE pipeline = 'up')
		  FROM saved;"
	[ -n "$f2" ] && sql_is "after the update: the attachment is bound to its pipeline's id and ingests, averages" sf_upgrade t "
		INSERT INTO visits (page, at, ms) VALUES ('/a', '2026-11-30 12:01:40+00', 11);
		SELECT count(*) FROM streamforge.advance_ts('timed', 'web', '2026-11-30 12:02:10+00');
		SELECT (SELECT pipeline_id = streamforge_internal.pipeline_id('timed')
		          FROM streamforge.attachments WHERE source = 'visits'::regclass)
		   AND (SELECT consumed_offset FROM streamforge.partitions('timed')) = 5
		   AND (SELECT avg FROM streamforge.results
		         WHERE pipeline = 'timed' AND key = '/a'
		           AND window_start = streamforge.time_to_units('2026-11-30 12:01:00+00', interval '1 second')) = 9
		   AND streamforge.time_unit('timed') = interval '1 second';"
	# the jobs the release scheduled run after the update (as their user;
	# the schedules never fire during the test)
	sql_is "after the update: the release's pg_cron jobs are there and run" sf_upgrade t "
		DO \$\$
		DECLARE j record;
		BEGIN
		    FOR j IN SELECT command FROM cron.job LOOP EXECUTE j.command; END LOOP;
		END \$\$;
		SELECT count(*) = ${f2:+1 + }1 FROM cron.job WHERE command LIKE '%streamforge.advance_to_now(%';"
	# streamforge_kafka: the server runs the release's library until a
	# restart (it is preloaded: every backend inherits it from the
	# postmaster, and its update script binds functions the release's
	# library has not), so a restart, then the update (docs/kafka.md,
	# "Upgrading")
	if [ -n "$release_kafka_deb" ]; then
		in_root pg_ctlcluster "$PG_MAJOR" main restart || sf_die "the cluster did not restart"
		sql_is "after a restart, ALTER EXTENSION streamforge_kafka UPDATE" sf_upgrade "$newversion" "
			ALTER EXTENSION streamforge_kafka UPDATE;
			SELECT extversion FROM pg_extension WHERE extname = 'streamforge_kafka'"
	fi
	# the suites below run as without --upgrade: without pg_cron
	rm -f "$ROOT/etc/postgresql/$PG_MAJOR/main/conf.d/pg_cron.conf"
	[ -n "$release_kafka_deb" ] && kafka_conf sf_upgrade
	in_root pg_ctlcluster "$PG_MAJOR" main restart || sf_die "the cluster did not restart"
	if [ -n "$release_kafka_deb" ]; then
		mock_produce kt 2 150 199
		wait_sql "after the update and a restart, the new worker consumes 50 more, each offset once" \
			sf_upgrade "$(caught_up kp 200)"
		sql_is "the subscription's events are in the pipeline once each" sf_upgrade t "
			SELECT sum(count) = 200 FROM streamforge.live('kp')"
	fi
else
	apt_install "$deb" ${kafka_deb:+"$kafka_deb"}
fi

# 3. the package holds what make install installs; no build tools
sf_say "package contents against make install"
# compare_install PACKAGE DIRECTORY MAKEVARS...: PACKAGE installs under
# /usr/{lib,share}/postgresql exactly the files "make -C DIRECTORY
# MAKEVARS install" installs
compare_install() {
	local package=$1 dir=$2 stage
	shift 2
	stage=$(mktemp -d)
	make -s -C "$dir" PG_CONFIG="$PG_CONFIG" "$@" >/dev/null &&
		make -s -C "$dir" PG_CONFIG="$PG_CONFIG" "$@" DESTDIR="$stage" install >/dev/null ||
		sf_die "make install into $stage failed"
	(cd "$stage" && find . -type f | sed 's|^\.||' | sort) >"$stage.make"
	rm -rf "$stage"
	in_root dpkg -L "$package" | grep -E "^/usr/(lib|share)/postgresql/" |
		while read -r f; do [ -f "$ROOT$f" ] && echo "$f"; done | sort >"$stage.deb"
	echo "    $package:"
	sed 's/^/        /' "$stage.make"
	local what="make${*:+ $*} install"
	[ "$dir" = "$SF_ROOT" ] || what="make -C ${dir#"$SF_ROOT"/}${*:+ $*} install"
	check "$package installs every file of $what" \
		sh -c "comm -23 '$stage.make' '$stage.deb' | sed 's/^/    missing: /' | grep . >&2; ! comm -23 '$stage.make' '$stage.deb' | grep -q ."
	check "$package installs nothing else there" \
		sh -c "! comm -13 '$stage.make' '$stage.deb' | sed 's/^/    extra: /' | grep . >&2"
	rm -f "$stage.make" "$stage.deb"
}
# (WITH_KAFKA=no as debian/rules: streamforge_kafka is in the Kafka package)
compare_install "postgresql-$PG_MAJOR-streamforge" "$SF_ROOT" WITH_KAFKA=no
[ -n "$kafka_deb" ] && compare_install "postgresql-$PG_MAJOR-streamforge-kafka" "$SF_ROOT/kafka"
check "no compiler, make or server headers in the chroot" \
	in_root sh -c '! command -v cc && ! command -v gcc && ! command -v make && [ ! -e /usr/include/postgresql ]'

# 4. a running server, CREATE EXTENSION, the suites
start_cluster
psql_root() { in_root runuser -u postgres -- psql -X -v ON_ERROR_STOP=1 -qAt "$@"; }
check "CREATE DATABASE sf_package" psql_root -d postgres -c "CREATE DATABASE sf_package;"
check "CREATE EXTENSION streamforge installs the package's version" sh -c "
	v=\$(chroot '$ROOT' runuser -u postgres -- psql -X -qAt -d sf_package -c 'CREATE EXTENSION streamforge; SELECT extversion FROM pg_extension WHERE extname = \$\$streamforge\$\$')
	echo \"    extversion: \$v\"; [ \"\$v\" = '$(sf_make_var "$SF_ROOT" EXTVERSION)' ]"
check "a pipeline works" sh -c "
	chroot '$ROOT' runuser -u postgres -- psql -X -qAt -v ON_ERROR_STOP=1 -d sf_package -c \"
	SELECT streamforge.create_pipeline('smoke', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
	SELECT count(*) FROM streamforge.ingest('smoke', 'p', 0, 'e', 'k', 1, 1);
	SELECT op || ' ' || count FROM streamforge.advance('smoke', 'p', 20);\" | tail -1 | grep -qx 'upsert 1'"

tests=$ROOT/tmp/streamforge-tests
mkdir -p "$tests"
cp -a "$SF_ROOT/sql" "$SF_ROOT/expected" "$SF_ROOT/test" "$tests/"
in_root chown -R postgres:postgres /tmp/streamforge-tests
read -r -a regress <<<"$(sf_make_var "$SF_ROOT" REGRESS)"
read -r -a regress_opts <<<"$(sf_make_var "$SF_ROOT" REGRESS_OPTS)"
read -r -a isolation <<<"$(sf_make_var "$SF_ROOT" ISOLATION)"
read -r -a isolation_opts <<<"$(sf_make_var "$SF_ROOT" ISOLATION_OPTS)"
pgxs=/usr/lib/postgresql/$PG_MAJOR/lib/pgxs
run_suite() {	# run_suite DRIVER OPTIONS...: as make installcheck does
	in_root runuser -u postgres -- sh -c 'cd /tmp/streamforge-tests && exec "$@"' sh \
		env PGHOST=/var/run/postgresql PGPORT=5432 \
		"$@"
}
sf_say "installcheck: pg_regress, ${#regress[@]} tests, against the running server"
check "pg_regress (installcheck) over sql/*.sql" run_suite \
	"$pgxs/src/test/regress/pg_regress" --bindir="/usr/lib/postgresql/$PG_MAJOR/bin" \
	--no-locale --encoding=UTF8 "${regress_opts[@]}" "${regress[@]}"
sf_say "installcheck: pg_isolation_regress, ${#isolation[@]} specs, against the running server"
check "pg_isolation_regress (installcheck) over test/specs/*.spec" run_suite \
	"$pgxs/src/test/isolation/pg_isolation_regress" --bindir="/usr/lib/postgresql/$PG_MAJOR/bin" \
	--outputdir=output_iso --no-locale --encoding=UTF8 "${isolation_opts[@]}" "${isolation[@]}"
for f in "$tests/regression.diffs" "$tests/output_iso/regression.diffs"; do
	[ -s "$f" ] && { sf_say "${f#"$tests"/}"; cat "$f"; }
done

# 5. streamforge_kafka: preloaded, a subscription consumes every message
if [ -n "$kafka_deb" ]; then
	sf_say "streamforge_kafka: preloaded, a subscription to the mock cluster"
	kafka_conf sf_kafka
	in_root pg_ctlcluster "$PG_MAJOR" main restart || sf_die "the cluster did not restart"
	mock_start
	mock_cmd "topic clicks 3"
	check "CREATE DATABASE sf_kafka" psql_root -d postgres -c "CREATE DATABASE sf_kafka;"
	sql_is "CREATE EXTENSION streamforge_kafka installs the package's version, subscribe" sf_kafka t "
		CREATE EXTENSION streamforge;
		CREATE EXTENSION streamforge_kafka;
		SELECT streamforge.create_pipeline('kclicks', ARRAY['clicks-0', 'clicks-1', 'clicks-2'],
		    ARRAY[streamforge.fixed('w', 100)], lateness => 1000000000);
		SELECT streamforge_kafka.subscribe('kclicks', '$mock_bootstrap', 'clicks',
		    mapping => '{\"event_id\": \"id\", \"key\": \"k\", \"event_time\": \"t\", \"value\": \"v\"}',
		    max_wait => 20) IS NOT NULL;
		SELECT extversion = '$(sf_make_var "$SF_ROOT/kafka" EXTVERSION)'
		  FROM pg_extension WHERE extname = 'streamforge_kafka';"
	mock_produce clicks 3 0 299
	wait_sql "the worker consumes 300 messages into the pipeline" sf_kafka "$(caught_up kclicks 300)"
	sql_is "each message is one event of the pipeline" sf_kafka t "
		SELECT sum(count) = 300 FROM streamforge.live('kclicks')"
	mock_stop
fi

if [ "$status" -eq 0 ]; then
	sf_say "the package passed on a clean Debian $(cat "$ROOT/etc/debian_version")"
else
	sf_say "the package FAILED (SF_KEEP_ROOT=1 keeps $ROOT)"
fi
exit "$status"
