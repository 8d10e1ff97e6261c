# The upgrade chains from the releases 0.1.0 and 0.2.0 (docs/packaging.md).
#
# For each release, a cluster runs it exactly as released: its library and
# install script built from the release commit by scripts/test.sh
# (scripts/lib.sh, sf_release_tree), which passes the installation in
# SF_RELEASE_INSTALL_0_1_0 and SF_RELEASE_INSTALL_0_2_0 (the releases in
# SF_RELEASES).  It gets pipelines with state (deliveries, duplicates, late
# events, sessions, several partitions, an idle one, a compacted snapshot
# and an uncompacted journal), outputs, grants, a pg_cron job and
# checkpoints of the release.  From 0.2.0 also what 0.2.0 added: a
# pipeline with a time unit (interval windows, ingest_ts, advance_ts) and a
# retention (results_retention too), fed by append, append_ts, ingest_json
# (with and without offsets) and a table attached to it, its results with
# the avg column and a second pg_cron job.  Then the package upgrade, as
# dpkg does it with the server running: the new library and scripts
# replace the old ones by rename, the files the new version no longer ships
# disappear.  A session opened before it (with the release's library
# loaded) keeps ingesting; new sessions run the compat library
# (streamforge.so, release 0.3.0's: the release's SQL is bound to it, the
# new version's to streamforge-<version>.so; docs/packaging.md) under the
# release's SQL definitions and keep ingesting, reading and restoring; then ALTER
# EXTENSION streamforge UPDATE (0.1.0 through 0.2.0), and ingestion goes
# on, the attached table's too, bound to its pipeline's id.
#
# A second cluster does the same work entirely on the new version.  Every
# call's changes, and at the end the visible rows, late events, partitions,
# statistics, the outputs, the grants, the attachments, the pg_cron jobs
# and the checkpoints, must be equal; a release's checkpoint restores after
# the update to the state the new version's checkpoint of the same moment
# restores to.
#
# Finally the catalog: a database created at the release and updated must
# hold exactly the objects of a database created at the new version
# (functions with arguments, defaults, volatility, parallel safety and
# body, types, tables, columns, constraints, indexes, views, triggers,
# policies, sequences, privileges, comments, in both of the extension's
# schemas, the extension's members and its dumped configuration).  Any
# difference fails, naming the object.
#
# Without a release's installation (no git history for the release and no
# fixture, or its build failed) the test fails with the reason: it never
# skips.

use strict;
use warnings;

use File::Copy qw(copy);
use File::Path qw(make_path rmtree);
use POSIX qw(strftime);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my @releases = split ' ', ($ENV{SF_RELEASES} // '0.1.0 0.2.0');

my $new_version = `pg_config --sharedir`;
chomp $new_version;
my $new_share = $new_version;
my $new_lib = `pg_config --pkglibdir`;
chomp $new_lib;
open my $cf, '<', "$new_share/extension/streamforge.control"
  or die "no streamforge.control in $new_share/extension: $!";
($new_version) = map { /^default_version\s*=\s*'([^']*)'/ ? $1 : () } <$cf>;
close $cf;

# -1, 0, 1 as version $a is older than, equal to, newer than $b
sub version_cmp
{
	my ($a, $b) = @_;
	my @a = split /\./, $a;
	my @b = split /\./, $b;
	for my $i (0 .. 2)
	{
		my $c = ($a[$i] // 0) <=> ($b[$i] // 0);
		return $c if $c;
	}
	return 0;
}

# The package upgrade as dpkg performs it, of the installation whose
# extension and library directories are $ext_dir and $lib_dir.  The new
# package holds what "make install" installs (debian/, scripts/package.sh);
# each of its files is written beside its target and renamed over it (a
# backend that mapped the old library keeps it, new ones load the new one),
# and the files of the old package that the new one does not ship are
# removed.
sub package_upgrade
{
	my ($tmp, $ext_dir, $lib_dir) = @_;
	my $stage = "$tmp/stage";
	my $testdir = $ENV{TESTDIR} // '.';
	system("make -s -C '$testdir' PG_CONFIG=pg_config DESTDIR='$stage' install >'$tmp/stage.log' 2>&1") == 0
	  or die "make install into $stage failed: see $tmp/stage.log";
	my @new;
	for my $pair ([ "$stage$new_share/extension", $ext_dir ], [ "$stage$new_lib", $lib_dir ])
	{
		my ($from, $to) = @$pair;
		opendir my $d, $from or die "$from: $!";
		push @new, map { [ "$from/$_", "$to/$_" ] } grep { -f "$from/$_" } readdir $d;
		closedir $d;
	}
	my %shipped = map { $_->[1] => 1 } @new;
	for my $f (@new)
	{
		copy($f->[0], "$f->[1].dpkg-new") or die "copy $f->[0]: $!";
		chmod((stat $f->[0])[2] & 07777, "$f->[1].dpkg-new");
		rename("$f->[1].dpkg-new", $f->[1]) or die "rename to $f->[1]: $!";
	}
	for my $dir ($ext_dir, $lib_dir)
	{
		opendir my $d, $dir or die $!;
		unlink map { "$dir/$_" }
		  grep { /^streamforge/ && -f "$dir/$_" && !$shipped{"$dir/$_"} } readdir $d;
		closedir $d;
	}
	note('package upgrade installed: ' . join(' ', map { $_->[1] =~ s{.*/}{}r } @new));
	return scalar @new;
}

my $cron_conf = q{
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
};

sub extversion
{
	my ($node, $db) = @_;
	return $node->safe_psql($db // 'postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'streamforge'");
}

# ------------------------------------------------------------------
# The work: the same SQL on both clusters, in four phases.  With $f2 (a
# release of 0.2.0 or later) the work uses 0.2.0's features too.
# ------------------------------------------------------------------
sub setup_sql
{
	my ($f2) = @_;
	my $sql = q{
CREATE EXTENSION pg_cron;
CREATE EXTENSION streamforge;
CREATE ROLE regress_sf_reader;
CREATE ROLE regress_sf_feeder;
GRANT USAGE ON SCHEMA streamforge TO regress_sf_reader, regress_sf_feeder;
CREATE TABLE saved (label text, pipeline text, cp bytea NOT NULL, PRIMARY KEY (label, pipeline));
SELECT streamforge.create_pipeline('clicks', ARRAY['p0', 'p1', 'p2'],
    ARRAY[streamforge.fixed('minute', 60), streamforge.sliding('slide', 120, 45),
          streamforge.session('visit', 30)], 20);
SELECT streamforge.create_pipeline('quiet', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 4)], 1);
SELECT streamforge.configure_outputs('clicks');
SELECT streamforge.configure_outputs('quiet', results => false, late => true, notify => false);
SELECT streamforge.grant('clicks', 'regress_sf_reader', 'read');
SELECT streamforge.grant('clicks', 'regress_sf_feeder', 'ingest');
SELECT streamforge.grant('quiet', 'regress_sf_reader', 'admin');
SELECT streamforge.schedule_advance('clicks', 'p2', '0 0 1 1 *', 5, 's') > 0;
};
	$sql .= q{
SELECT streamforge.create_pipeline('timed', ARRAY['web', 'app'],
    ARRAY[streamforge.fixed_interval('minute', interval '1 minute'),
          streamforge.sliding_interval('slide', interval '2 minutes', interval '30 seconds'),
          streamforge.session_interval('visit', interval '20 seconds')],
    lateness => 15, retention => 120, time_unit => interval '1 second');
SELECT streamforge.configure_outputs('timed', results_retention => true);
SELECT streamforge.grant('timed', 'regress_sf_feeder', 'ingest');
CREATE TABLE visits (id bigserial PRIMARY KEY, page text NOT NULL, at timestamptz NOT NULL, ms integer NOT NULL);
SELECT streamforge.attach('timed', 'visits', event_id => 'id', key => 'page',
    event_time => 'at', value => 'ms', partition => '''web''');
SELECT streamforge.schedule_advance('timed', 'app', '0 0 1 1 *', 10, 's') > 0;
} if $f2;
	return $sql;
}

# Deterministic deliveries for one phase: events $from..$to.  Each phase
# uses ingest, ingest_batch, advance, mark_idle, a duplicate identity, a
# replayed offset, late events and a call by a role with a grant; every
# call's changes are printed.  With $f2 also append, append_ts, ingest_ts,
# ingest_json, inserts into the attached table and advance_ts.
my %offset;
my $cols = 'seq, op, window_name, key, window_start, window_end, count, sum, min, max';

sub event
{
	my ($i) = @_;
	my $t = $i * 7 + ($i * 13 % 11) - 5;
	$t -= 90 if $i % 17 == 0;    # late (or nearly)
	return ("e$i", 'k' . ($i * 7 % 4), $t, ($i * 31 % 23) - 11);
}

# the pipeline with a unit of a second: times from 2025-11-30 12:00:00 UTC
my $t0 = 1764504000;
sub timed_event
{
	my ($i) = @_;
	my $t = $t0 + $i * 4 + ($i * 5 % 7);
	$t -= 70 if $i % 13 == 0;    # late
	return ('/p' . ($i % 3), $t, ($i * 17 % 29) + 1);
}
sub ts { return strftime('%Y-%m-%d %H:%M:%S+00', gmtime(shift)); }

sub timed_ops
{
	my ($i) = @_;
	my ($key, $t, $val) = timed_event($i);
	my $ts = ts($t);
	my $sql = '';
	my $m = $i % 5;
	if ($m == 0)
	{
		# the attached table: one row, or two in one statement
		my ($key2, $t2, $val2) = timed_event($i + 1000);
		$sql .= "INSERT INTO visits (page, at, ms) VALUES ('$key', '$ts', $val)"
		  . ($i % 10 == 0 ? ", ('$key2', '" . ts($t2 - 1000 * 4 + 2) . "', $val2)" : '') . ";\n";
	}
	elsif ($m == 1)
	{
		# a duplicate identity now and then: the event of $i - 5 once more
		my $j = $i % 3 == 0 ? $i - 5 : $i;
		($key, $t, $val) = timed_event($j) if $j != $i;
		$ts = ts($t);
		my $call = "SELECT $cols FROM streamforge.append_ts('timed', 'web', 'a$j', '$key', '$ts', $val);\n";
		$sql .= $i % 10 == 6 ? "SET ROLE regress_sf_feeder;\n${call}RESET ROLE;\n" : $call;
	}
	elsif ($m == 2)
	{
		$sql .= "SELECT $cols FROM streamforge.ingest_ts('timed', 'app', "
		  . ($offset{app}++) . ", 'i$i', '$key', '$ts', $val);\n";
	}
	elsif ($m == 3)
	{
		my ($key2, $t2, $val2) = timed_event($i + 1);
		if ($i % 10 == 3)
		{
			# without offsets, a timestamp string and a time in units
			$sql .= "SELECT $cols FROM streamforge.ingest_json('timed', '["
			  . qq({"partition": "web", "event_id": "j$i", "key": "$key", "event_time": "$ts", "value": $val}, )
			  . qq({"partition": "web", "event_id": "jj$i", "key": "$key2", "event_time": $t2, "value": $val2}])
			  . "');\n";
		}
		else
		{
			$sql .= "SELECT $cols FROM streamforge.ingest_json('timed', '["
			  . qq({"partition": "app", "source_offset": ) . ($offset{app}++)
			  . qq(, "event_id": "j$i", "key": "$key", "event_time": "$ts", "value": $val}, )
			  . qq({"partition": "app", "source_offset": ) . ($offset{app}++)
			  . qq(, "event_id": "jj$i", "key": "$key2", "event_time": $t2, "value": $val2}])
			  . "');\n";
		}
	}
	else
	{
		$sql .= "SELECT $cols FROM streamforge.append('timed', 'web', 'b$i', '$key', $t, $val);\n";
	}
	if ($i % 6 == 0)
	{
		$sql .= "SELECT $cols FROM streamforge.advance_ts('timed', 'web', '" . ts($t - 20) . "');\n";
		$sql .= "SELECT $cols FROM streamforge.advance('timed', 'app', " . ($t - 25) . ");\n";
	}
	return $sql;
}

sub ops
{
	my ($from, $to, $f2) = @_;
	my $sql = '';
	my @batch;
	for my $i ($from .. $to)
	{
		my $part = ('p0', 'p1', 'p0', 'p1', 'p2')[ $i % 5 ];
		$part = 'p0' if $part eq 'p2' && $i > 40;    # p2 falls silent
		my $off = $offset{$part}++;
		# a duplicate identity now and then: event $i - 3 once more
		my ($id, $key, $t, $val) = event($i % 19 == 0 && $i > 3 ? $i - 3 : $i);
		if ($i % 6 < 3)
		{
			# events 6n, 6n+1, 6n+2 go in one ingest_batch
			push @batch, "ROW('$part', $off, '$id', '$key', $t, $val)";
			if ($i % 6 == 2 || $i == $to)
			{
				$sql .= "SELECT $cols FROM streamforge.ingest_batch('clicks', ARRAY["
				  . join(', ', @batch) . "]::streamforge.delivery[]);\n";
				@batch = ();
			}
		}
		elsif ($i % 10 == 1)
		{
			$sql .= "SET ROLE regress_sf_feeder;\n"
			  . "SELECT $cols FROM streamforge.ingest('clicks', '$part', $off, '$id', '$key', $t, $val);\n"
			  . "RESET ROLE;\n";
		}
		else
		{
			$sql .= "SELECT $cols FROM streamforge.ingest('clicks', '$part', $off, '$id', '$key', $t, $val);\n";
		}
		# replaying the offset just consumed is a no-op
		$sql .= "SELECT $cols FROM streamforge.ingest('clicks', '$part', $off, '$id', '$key', $t, $val);\n"
		  if $i % 11 == 0 && !@batch;
		$sql .= "SELECT $cols FROM streamforge.ingest('quiet', '"
		  . ($i % 2 ? 'a' : 'b') . "', " . ($offset{ 'q' . $i % 2 }++)
		  . ", 'q$i', '$key', " . ($i * 3 - 40) . ", $val);\n";
		if ($i % 4 == 0)
		{
			for my $p (qw(p0 p1))
			{
				$sql .= "SELECT $cols FROM streamforge.advance('clicks', '$p', "
				  . ($i * 7 - 25) . ");\n";
			}
			$sql .= "SELECT $cols FROM streamforge.advance('quiet', '"
			  . ($i % 8 ? 'a' : 'b') . "', " . ($i * 3 - 45) . ");\n";
		}
		$sql .= "SELECT $cols FROM streamforge.advance('clicks', 'p2', " . ($i * 7 - 30) . ");\n"
		  if $i == 20;
		$sql .= "SELECT $cols FROM streamforge.mark_idle('clicks', 'p2');\n"
		  if $i == 45;
		$sql .= timed_ops($i) if $f2;
	}
	return $sql;
}

# The state, read in a way that does not depend on the version: what the
# two runs must agree on.
sub state_sql
{
	my ($f2, $pipes) = @_;
	my $sql = qq{
SELECT 'watermark', p, streamforge.watermark(p) FROM unnest($pipes) p;
SELECT 'visible', p, v.* FROM unnest($pipes) p, streamforge.visible(p) v;
SELECT 'live', p, v.* FROM unnest($pipes) p, streamforge.live(p) v;
SELECT 'late', p, l.* FROM unnest($pipes) p, streamforge.late_events(p) l;
SELECT 'partitions', p, x.* FROM unnest($pipes) p, streamforge.partitions(p) x;
SELECT 'stats', p, s.deliveries, s.accepted, s.duplicate_ids, s.late_events,
       s.offset_replays, s.changes_emitted, s.live_buckets, s.visible_rows,
       s.partitions, s.idle_partitions
  FROM unnest($pipes) p, streamforge.stats(p) s;
SELECT 'changelog', c.pipeline, c.seq, c.op, c.window_name, c.key, c.window_start,
       c.window_end, c.count, c.sum, c.min, c.max
  FROM streamforge.changelog c ORDER BY pipeline, seq;
SELECT 'results', pipeline, window_name, key, window_start, window_end, count, sum, min, max, seq
  FROM streamforge.results ORDER BY 2, 3, 4, 5, 6;
SELECT 'late_output', l.pipeline, l.late_seq, l.partition, l.source_offset, l.event_id,
       l.key, l.event_time, l.value, l.watermark
  FROM streamforge.late_output l ORDER BY pipeline, late_seq;
SELECT 'outputs', pipeline, changelog, results, late, notify
  FROM streamforge.output_config ORDER BY pipeline;
SELECT 'grants', name, owner, readers, ingesters, admins FROM streamforge.pipeline ORDER BY name;
SELECT 'privileges', p, r, x, streamforge.has_pipeline_privilege(p, x, r)
  FROM unnest($pipes) p,
       unnest(ARRAY['regress_sf_reader', 'regress_sf_feeder']::name[]) r,
       unnest(ARRAY['read', 'ingest', 'admin']) x;
SELECT 'cron', jobname, schedule, command, database, username, active
  FROM cron.job ORDER BY jobname;
SELECT 'scheduled', s.* FROM streamforge.scheduled_advances() s;
SELECT 'checkpoint', label, pipeline, md5(cp) FROM saved WHERE label <> 'release' ORDER BY 2, 3;
SELECT 'checkpoint now', p, md5(streamforge.checkpoint(p)) FROM unnest($pipes) p;
};
	$sql .= qq{
SELECT 'remembered', p, s.remembered_identities, s.remembered_offsets, s.remembered_late_events,
       s.forgotten_offsets, s.forgotten_late_events
  FROM unnest($pipes) p, streamforge.stats(p) s;
SELECT 'definition', p.name, (d ->> 'lateness')::bigint, (d ->> 'retention')::bigint,
       (d ->> 'time_unit')::interval
  FROM streamforge.pipeline p,
       LATERAL (SELECT COALESCE(to_jsonb(p) -> 'definition', to_jsonb(p)) AS d) AS j
 ORDER BY p.name;
SELECT 'outputs retention', pipeline, results_retention FROM streamforge.output_config ORDER BY pipeline;
SELECT 'avg', pipeline, window_name, key, window_start, avg FROM streamforge.results ORDER BY 2, 3, 4, 5;
SELECT 'time', streamforge.time_unit('timed'), streamforge.watermark_ts('timed');
SELECT 'visible_ts', v.* FROM streamforge.visible_ts('timed') v;
SELECT 'results_ts', r.window_name, r.key, r.window_start, r.window_end, r.count, r.sum,
       r.min, r.max, r.seq
  FROM streamforge.results_ts('timed') r ORDER BY 2, 3, 4, 5;
SELECT 'attachments', source, pipeline, partition, event_id, key, event_time, value, trigger_name
  FROM streamforge.attachments ORDER BY source::text;
SELECT 'visits', count(*), max(id) FROM visits;
} if $f2;
	return $sql;
}

# The whole scenario from one release.
sub scenario
{
	my ($release) = @_;
	my $var = $release =~ tr/./_/r;
	my $old_install = $ENV{"SF_RELEASE_INSTALL_$var"} // '';
	if ($old_install eq '' || !-x "$old_install/bin/postgres")
	{
		my $why = $ENV{"SF_RELEASE_ERROR_$var"} || (
			$old_install eq ''
			? "SF_RELEASE_INSTALL_$var is not set (run this test through scripts/test.sh, which builds the releases)"
			: "SF_RELEASE_INSTALL_$var=$old_install holds no PostgreSQL installation");
		fail("release $release is installed for the upgrade test");
		diag($why);
		return;
	}
	isnt($new_version, $release, "the new version ($new_version) is not the release $release");
	my $f2 = version_cmp($release, '0.2.0') >= 0;
	my @pipes = ('clicks', 'quiet', $f2 ? ('timed') : ());
	my $pipes = 'ARRAY[' . join(', ', map { "'$_'" } @pipes) . ']';

	# The installation that gets the package upgrade: a copy of the
	# release's private tree, so that the release build stays as it was.
	my $tmp = PostgreSQL::Test::Utils::tempdir();
	my $pkgroot = "$tmp/pkg";
	my ($old_share) = `$old_install/bin/pg_config --sharedir` =~ /(.*)/;
	# The tree keeps the system's layout: .../usr/lib/postgresql/15 and
	# .../usr/share/postgresql/15 under one prefix.
	my ($prefix, $libsuffix) = $old_install =~ m{^(.*)(/usr/lib/postgresql/[^/]+)$}
	  or die "unexpected layout of $old_install";
	my ($sharesuffix) = $old_share =~ m{^\Q$prefix\E(/.*)$}
	  or die "unexpected layout of $old_share";
	make_path("$pkgroot/usr/lib/postgresql", "$pkgroot/usr/share/postgresql");
	system('cp', '-a', $old_install, "$pkgroot$libsuffix") == 0 or die "cp failed";
	system('cp', '-a', $old_share, "$pkgroot$sharesuffix") == 0 or die "cp failed";
	my $install = "$pkgroot$libsuffix";
	my $ext_dir = "$pkgroot$sharesuffix/extension";
	my $lib_dir = `$install/bin/pg_config --pkglibdir`;
	chomp $lib_dir;

	ok(-f "$ext_dir/streamforge--$release.sql",
		"release $release: its install script is installed");

	%offset = ();
	my $setup = setup_sql($f2);
	my @phases = (
		ops(0, 59, $f2),       # journals; quiet is compacted after
		ops(60, 64, $f2),      # a session opened before the package upgrade
		ops(65, 99, $f2),      # new library, release SQL
		ops(100, 159, $f2));
	my $state_sql = state_sql($f2, $pipes);

	my $save_checkpoints = sub {
		my ($node, $label) = @_;
		$node->safe_psql('postgres', qq{
INSERT INTO saved SELECT '$label', p, streamforge.checkpoint(p)
  FROM unnest($pipes) AS p;
});
	};

	# Restore saved checkpoints into new pipelines of the same definitions
	# (named $prefix<pipeline>) and print what becomes of them.
	my $restore_saved = sub {
		my ($node, $prefix, @labels) = @_;
		# (the row of 0.1.0-0.3.0 has a column per option, that of 0.4.0
		# one document: both read as JSON)
		my $more = $f2
		  ? ", (d ->> 'retention')::bigint, (d ->> 'time_unit')::interval"
		  : '';
		$node->safe_psql('postgres', qq{
SELECT streamforge.create_pipeline('$prefix' || p.name,
           ARRAY(SELECT jsonb_array_elements_text(d -> 'partitions')),
           ARRAY(SELECT jsonb_populate_record(NULL::streamforge.window_def, e)
                   FROM jsonb_array_elements(d -> 'windows') AS e),
           (d ->> 'lateness')::bigint$more)
  FROM streamforge.pipeline p,
       LATERAL (SELECT COALESCE(to_jsonb(p) -> 'definition', to_jsonb(p)) AS d) AS j
 WHERE p.name = ANY ($pipes) ORDER BY p.name;
});
		my $out = '';
		for my $label (@labels)
		{
			$out .= $node->safe_psql('postgres', qq{
SELECT streamforge.restore('$prefix' || pipeline, cp) FROM saved WHERE label = '$label' ORDER BY pipeline;
SELECT 'restored', label, pipeline, md5(streamforge.checkpoint('$prefix' || pipeline)),
       (SELECT count(*) FROM streamforge.visible('$prefix' || pipeline)),
       (SELECT count(*) FROM streamforge.late_events('$prefix' || pipeline)),
       streamforge.watermark('$prefix' || pipeline)
  FROM saved WHERE label = '$label' ORDER BY pipeline;
}) . "\n";
		}
		return $out;
	};

	# The whole run.  $package_upgrade runs where the package upgrade
	# happens (nothing for the reference run); $update runs ALTER
	# EXTENSION UPDATE.
	my $run_all = sub {
		my ($node, $package_upgrade, $update) = @_;
		my %out;
		$node->safe_psql('postgres', $setup);
		$out{release} = $node->safe_psql('postgres', "SET streamforge.compaction_threshold = -1;\n$phases[0]");
		# quiet compacted into a snapshot, clicks left as a journal
		$node->safe_psql('postgres', q{
SET streamforge.compaction_threshold = 0;
SELECT streamforge.advance('quiet', 'a', streamforge.watermark('quiet'));
});
		$save_checkpoints->($node, 'release');

		# a session that has loaded the library before the package upgrade
		my $early = $node->background_psql('postgres', on_error_stop => 1);
		$early->query_safe("SELECT streamforge.watermark('clicks')");

		$package_upgrade->();

		$out{bridge} = $early->query_safe("SET streamforge.compaction_threshold = -1;\n$phases[1]");
		$out{package} = $node->safe_psql('postgres', "SET streamforge.compaction_threshold = -1;\n$phases[2]");
		$out{early_watermark} = $early->query_safe("SELECT streamforge.watermark('clicks')");
		$early->quit;
		$save_checkpoints->($node, 'package');
		$out{package_state} = $node->safe_psql('postgres', $state_sql);
		$out{package_restored} = $restore_saved->($node, 'pkg_', 'release', 'package');
		$node->safe_psql('postgres',
			"SELECT streamforge.drop_pipeline('pkg_' || p) FROM unnest($pipes) p");

		$update->();

		$out{updated} = $node->safe_psql('postgres', "SET streamforge.compaction_threshold = -1;\n$phases[3]");
		$save_checkpoints->($node, 'updated');
		$out{state} = $node->safe_psql('postgres', $state_sql);
		$out{restored} = $restore_saved->($node, 'copy_', 'release', 'package', 'updated');
		$out{release_checkpoints} = $node->safe_psql('postgres',
			"SELECT string_agg(pipeline || ':' || md5(cp), ' ' ORDER BY pipeline) FROM saved WHERE label = 'release'");
		# 0.3.0 binds attachments to their pipeline's id
		$out{bound} = $node->safe_psql('postgres', q{
SELECT source, pipeline, pipeline_id, pipeline_id IS NOT DISTINCT FROM streamforge_internal.pipeline_id(pipeline)
  FROM streamforge.attachments ORDER BY source::text;
}) if $f2;
		return %out;
	};

	# --------------------------------------------------------------
	# The reference: everything on the new version.
	# --------------------------------------------------------------
	my $ref = PostgreSQL::Test::Cluster->new("reference_$var");
	$ref->init;
	$ref->append_conf('postgresql.conf', $cron_conf);
	$ref->start;
	my %want = $run_all->($ref, sub { }, sub { });
	is(extversion($ref), $new_version, "the reference for $release runs $new_version");
	$ref->stop;

	# The work is what it claims to be: none of the comparisons below is
	# between empty outputs.
	my ($clicks_stats) = $want{state} =~ /^stats\|clicks\|(.*)$/m;
	my %st;
	@st{qw(deliveries accepted duplicate_ids late_events offset_replays changes_emitted
		  live_buckets visible_rows partitions idle_partitions)} = split /\|/, $clicks_stats;
	ok( $st{late_events} > 0
		  && $st{duplicate_ids} > 0
		  && $st{offset_replays} > 0
		  && $st{idle_partitions} == 1
		  && $st{live_buckets} > 0
		  && $st{visible_rows} > 0,
		"the reference run has late events, duplicates, replays, an idle partition and live sessions ($clicks_stats)"
	);
	ok( (grep { length($want{$_}) > 300 } qw(release bridge package updated)) == 4,
		'every phase of the reference run emits changes');
	like($want{state}, qr/^changelog\|quiet\|/m, 'the changelog of the second pipeline is kept');
	like($want{state}, qr/^late_output\|clicks\|/m, 'the late output is kept');
	like($want{state}, qr/^cron\|.*advance_to_now\('clicks', 'p2', 5, 's'\)/m,
		'the pg_cron job is there');
	like($want{state}, qr/^privileges\|clicks\|regress_sf_feeder\|ingest\|t$/m,
		'the grants are there');
	if ($f2)
	{
		my ($timed) = $want{state} =~ /^stats\|timed\|(.*)$/m;
		my %ts;
		@ts{qw(deliveries accepted duplicate_ids late_events)} = split /\|/, $timed;
		my ($rem) = $want{state} =~ /^remembered\|timed\|(.*)$/m;
		my @rem = split /\|/, $rem;
		ok( $ts{late_events} > 0 && $ts{duplicate_ids} > 0 && $rem[3] > 0 && $rem[4] > 0,
			"the pipeline with a time unit has late events, duplicates and a retention that forgot offsets and late events ($timed; $rem)"
		);
		like($want{state}, qr/^late_output\|timed\|/m, 'its late output is kept');
		like($want{state}, qr/^avg\|timed\|minute\|.*\|\d/m, 'its results have averages');
		like($want{state}, qr/^visits\|[1-9]\d+\|/m, 'the attached table got rows');
		like($want{state}, qr/^attachments\|visits\|timed\|\('web'\)::pg_catalog.text\|\(id\)::pg_catalog.text\|\(page\)::pg_catalog.text\|streamforge.time_to_units\(\(at\), '00:00:01'::pg_catalog.interval\)\|\(ms\)::pg_catalog.int8\|/m,
			'the attachment is there');
		like($want{state}, qr/^cron\|.*advance_to_now\('timed', 'app', 10, 's'\)/m,
			'its pg_cron job is there');
		like($want{bound}, qr/^visits\|timed\|\d+\|t$/m, 'the attachment is bound to its pipeline');
	}

	# --------------------------------------------------------------
	# The upgrade: the release, the package upgrade, the update.
	# --------------------------------------------------------------
	my $node = PostgreSQL::Test::Cluster->new("upgrade_$var", install_path => $install);
	$node->init;
	$node->append_conf('postgresql.conf', $cron_conf);
	$node->start;
	# an empty database created at the release, for the catalog comparison
	$node->safe_psql('postgres', 'CREATE DATABASE cat_updated');
	$node->safe_psql('cat_updated', 'CREATE EXTENSION streamforge');
	is(extversion($node, 'cat_updated'), $release, "the cluster runs release $release");

	my %got = $run_all->(
		$node,
		sub {
			is(extversion($node), $release, "the pipelines were made by release $release");
			ok(package_upgrade($tmp, $ext_dir, $lib_dir) >= 3,
				'package upgrade: the new library and scripts are installed');
			ok(!-f "$ext_dir/streamforge--$release.sql",
				"package upgrade: the install script of release $release is gone");
			is(extversion($node), $release,
				"until the update, the SQL definitions of release $release are installed");
			# every C function the release's SQL declares is in the new library
			my ($ret, $stdout, $stderr) = $node->psql('postgres', q{
SELECT pg_catalog.fmgr_c_validator(p.oid), p.oid::regprocedure
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE l.lanname = 'c'
   AND p.pronamespace IN (SELECT oid FROM pg_namespace WHERE nspname IN ('streamforge', 'streamforge_internal'))});
			is($ret, 0, "the new library has every C entry point of release ${release}'s SQL")
			  or diag($stderr);
		},
		sub {
			my ($ret, $stdout, $stderr) = $node->psql('postgres', 'ALTER EXTENSION streamforge UPDATE');
			is($ret, 0, "ALTER EXTENSION streamforge UPDATE from $release") or diag($stderr);
			($ret, $stdout, $stderr) = $node->psql('cat_updated', 'ALTER EXTENSION streamforge UPDATE');
			is($ret, 0, "ALTER EXTENSION streamforge UPDATE from $release in an empty database")
			  or diag($stderr);
			is(extversion($node), $new_version, "the extension is at $new_version");
			# before 0.3.0 there were no epochs: the update puts everything
			# in epoch 1; 0.3.0's epochs (from one sequence) are kept
			my $old_epochs = $release lt '0.3.0' ? 'true' : 'false';
			# issue 25: the outputs of the release are migrated: results rows
			# its pipelines finalized are final, everything is in epoch 1
			is( $node->safe_psql('postgres', qq{
SELECT count(*) FILTER (WHERE r.final IS DISTINCT FROM
                              (r.window_end::numeric + (p.definition ->> 'lateness')::bigint < streamforge.watermark(p.name)))
       || '|' || count(*) FILTER (WHERE r.final) || '|' || count(*) FILTER (WHERE r.epoch <> 1 AND $old_epochs)
       || '|' || (SELECT count(*) FROM streamforge.changelog WHERE epoch <> 1 AND $old_epochs)
       || '|' || (SELECT count(*) FROM streamforge.output_config WHERE epoch <> 1 AND $old_epochs)
       || '|' || count(*) FILTER (WHERE p.definition ? 'time_unit' AND (r.window_start_ts IS NULL
                    OR r.window_start_ts <> streamforge.units_to_time(r.window_start, (p.definition ->> 'time_unit')::interval)))
       || '|' || (SELECT count(*) FROM streamforge.changelog c JOIN streamforge.pipeline q ON q.name = c.pipeline
                   WHERE q.definition ? 'time_unit' AND c.window_end_ts IS DISTINCT FROM
                         streamforge.units_to_time(c.window_end, (q.definition ->> 'time_unit')::interval))
  FROM streamforge.results r JOIN streamforge.pipeline p ON p.name = r.pipeline}) =~ s/\|[1-9]\d*\|/|some|/r,
				'0|some|0|0|0|0|0',
				"the update from $release marks the finalized results rows final, " . ($release lt "0.3.0" ? "puts the outputs in epoch 1" : "keeps their epochs") . " and fills their timestamps");
		});

	is($got{release}, $want{release},
		"release $release: every call returns the changes of the new version");
	note("checkpoints of release $release "
		  . ($got{release_checkpoints} eq $want{release_checkpoints} ? 'are' : 'are not')
		  . " byte-identical to the new version's of the same state");
	is($got{bridge}, $want{bridge},
		"$release: a session opened before the package upgrade goes on with the same changes");
	is($got{package}, $want{package},
		"new library, release $release SQL: every call returns the changes of the new version");
	is($got{early_watermark}, $want{early_watermark},
		"$release: the session opened before the package upgrade follows the state");
	is_lines($got{package_state}, $want{package_state},
		"new library, release $release SQL: the state equals that of a run on the new version");
	is_lines($got{package_restored}, $want{package_restored},
		"new library, release $release SQL: the checkpoints restore");
	is($got{updated}, $want{updated},
		"after the update from $release: every call returns the changes of the new version");
	is_lines($got{state}, $want{state},
		"after the update from $release: the final state (visible rows, late events, outputs, grants, attachments, jobs, checkpoints) equals that of a run on the new version");
	is_lines($got{restored}, $want{restored},
		"every checkpoint, release ${release}'s too, restores to the new version's state of the same moment");
	is($got{bound}, $want{bound},
		"the attachment of release $release is bound to its pipeline's id as on the new version")
	  if $f2;

	# The pg_cron jobs made by the release still run after the update (their
	# schedule never fires during the test: the command runs here, as the
	# job's user, after every comparison, since it reads the wall clock).
	for my $job (['clicks', 'p2'], $f2 ? (['timed', 'app']) : ())
	{
		my ($p, $part) = @$job;
		my ($command, $user) = split /\|/, $node->safe_psql('postgres',
			"SELECT command, username FROM cron.job WHERE command LIKE '%advance_to_now(''$p'', ''$part''%'");
		my ($ret, $stdout, $stderr) = $node->psql('postgres', "SET ROLE \"$user\";\n$command");
		is($ret, 0, "the pg_cron job of release $release for $p runs after the update")
		  or diag($stderr);
	}
	like($node->safe_psql('postgres', "SELECT idle FROM streamforge.partitions('clicks') WHERE partition = 'p2'"),
		qr/^f$/, 'the job reactivated the idle partition');
	if ($f2)
	{
		# the attached table goes on ingesting, at the partition's next offset
		my $before = $node->safe_psql('postgres',
			"SELECT consumed_offset FROM streamforge.partitions('timed') WHERE partition = 'web'");
		$node->safe_psql('postgres',
			"INSERT INTO visits (page, at, ms) VALUES ('/late', date_trunc('second', now()), 1), ('/late', date_trunc('second', now()), 2)");
		is( $node->safe_psql('postgres',
				"SELECT consumed_offset FROM streamforge.partitions('timed') WHERE partition = 'web'"),
			$before + 2,
			"the table attached in release $release goes on ingesting after the update");
	}

	# --------------------------------------------------------------
	# The catalog: updated against fresh.
	# --------------------------------------------------------------
	$node->safe_psql('postgres', 'CREATE DATABASE cat_fresh');
	$node->safe_psql('cat_fresh', 'CREATE EXTENSION streamforge');
	my $catalog_sql = catalog_query();
	my $updated = $node->safe_psql('cat_updated', $catalog_sql);
	my $fresh = $node->safe_psql('cat_fresh', $catalog_sql);
	cmp_ok(scalar(split /\n/, $fresh), '>', 100, 'the catalog query sees the extension');
	is_lines($updated, $fresh,
		"an installation of release $release updated has exactly the objects of a fresh $new_version one");
	# the stateful database's definitions too (its rows differ, its objects
	# must not; the schema's privileges are the ones this test granted)
	my $no_schema = sub { join "\n", grep { !/^schema: / } split /\n/, shift };
	is_lines($no_schema->($node->safe_psql('postgres', $catalog_sql)), $no_schema->($fresh),
		"the database with pipelines of release $release has the same objects after the update");

	$node->stop;
	return;
}

note("the releases: @releases");
ok(@releases >= 2 && (grep { $_ eq '0.1.0' } @releases) && (grep { $_ eq '0.2.0' } @releases),
	'the upgrades start from 0.1.0 and from 0.2.0');
scenario($_) for @releases;
done_testing();

# is() for many lines: on failure, lists the lines only one side has.
sub is_lines
{
	my ($got, $want, $name) = @_;
	return pass($name) if $got eq $want;
	my %g = map { $_ => 1 } split /\n/, $got;
	my %w = map { $_ => 1 } split /\n/, $want;
	my @only_got = grep { !$w{$_} } split /\n/, $got;
	my @only_want = grep { !$g{$_} } split /\n/, $want;
	fail($name);
	diag("only in the upgraded run / updated database:\n  "
		  . (@only_got ? join("\n  ", @only_got) : '(nothing)'));
	diag("only in the new version's run / fresh database:\n  "
		  . (@only_want ? join("\n  ", @only_want) : '(nothing)'));
	diag('(the same lines in a different order)') unless @only_got || @only_want;
	return 0;
}

# One line per property of every object of the extension, named so that a
# difference says which object it is.  No OIDs, nothing that depends on
# the order objects were created in, except column order (SELECT * and
# composite types see it).
sub catalog_query
{
	return q{
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'streamforge'),
members AS (
    SELECT d.classid, d.objid
      FROM pg_depend d, ext
     WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid
       AND d.deptype = 'e'),
ns AS (SELECT oid FROM pg_namespace WHERE nspname IN ('streamforge', 'streamforge_internal')),
funcs AS (SELECT p.* FROM pg_proc p, ns WHERE p.pronamespace = ns.oid),
rels AS (SELECT c.* FROM pg_class c, ns WHERE c.relnamespace = ns.oid),
types AS (SELECT t.* FROM pg_type t, ns WHERE t.typnamespace = ns.oid)
SELECT line FROM (
    SELECT 'extension: ' || e.extname || ' schema ' || e.extnamespace::regnamespace
           || ' relocatable ' || e.extrelocatable
           || ' config ' || coalesce((SELECT string_agg(c::regclass::text || '=' || coalesce(e.extcondition[i], ''), ',' ORDER BY c::regclass::text)
                                        FROM unnest(e.extconfig) WITH ORDINALITY AS u(c, i)), '-') AS line
      FROM pg_extension e WHERE e.extname = 'streamforge'
    UNION ALL
    SELECT 'member: ' || pg_describe_object(classid, objid, 0) FROM members
    UNION ALL
    SELECT 'schema: ' || nspname || ' owner ' || nspowner::regrole || ' acl ' || coalesce(nspacl::text, '-')
           || ' comment ' || coalesce(obj_description(oid, 'pg_namespace'), '-')
      FROM pg_namespace WHERE oid IN (SELECT oid FROM ns)
    UNION ALL
    SELECT 'function: ' || p.oid::regprocedure || ' args (' || pg_get_function_arguments(p.oid)
           || ') returns ' || pg_get_function_result(p.oid)
           || ' kind ' || p.prokind::text || ' volatility ' || p.provolatile::text || ' parallel ' || p.proparallel::text
           || ' strict ' || p.proisstrict || ' secdef ' || p.prosecdef || ' leakproof ' || p.proleakproof
           || ' cost ' || p.procost || ' rows ' || p.prorows
           || ' config ' || coalesce(p.proconfig::text, '-')
           || ' acl ' || coalesce(p.proacl::text, '-')
           || ' language ' || (SELECT lanname FROM pg_language WHERE oid = p.prolang)
           || ' body md5 ' || md5(coalesce(p.prosrc, '') || '|' || coalesce(p.probin, ''))
           || ' comment ' || coalesce(obj_description(p.oid, 'pg_proc'), '-')
      FROM funcs p
    UNION ALL
    SELECT 'type: ' || format_type(t.oid, NULL) || ' kind ' || t.typtype::text || ' category ' || t.typcategory::text
           || ' acl ' || coalesce(t.typacl::text, '-')
           || ' comment ' || coalesce(obj_description(t.oid, 'pg_type'), '-')
      FROM types t WHERE t.typtype <> 'b' OR t.typelem = 0
    UNION ALL
    SELECT 'relation: ' || c.oid::regclass || ' kind ' || c.relkind::text || ' persistence ' || c.relpersistence::text
           || ' options ' || coalesce(c.reloptions::text, '-')
           || ' rls ' || c.relrowsecurity || '/' || c.relforcerowsecurity
           || ' replident ' || c.relreplident::text
           || ' acl ' || coalesce(c.relacl::text, '-')
           || ' comment ' || coalesce(obj_description(c.oid, 'pg_class'), '-')
      FROM rels c
    UNION ALL
    SELECT 'column: ' || c.oid::regclass || ' #' || row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum)
           || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
           || ' notnull ' || a.attnotnull || ' collation ' || coalesce(nullif(a.attcollation, 0)::regcollation::text, '-')
           || ' storage ' || a.attstorage::text
           || ' default ' || coalesce(pg_get_expr(ad.adbin, ad.adrelid), '-')
           || ' identity ' || a.attidentity::text || ' generated ' || a.attgenerated::text
           || ' acl ' || coalesce(a.attacl::text, '-')
           || ' comment ' || coalesce(col_description(c.oid, a.attnum), '-')
      FROM rels c JOIN pg_attribute a ON a.attrelid = c.oid
      LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
     WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p', 'v', 'm', 'c', 'f')
    UNION ALL
    SELECT 'constraint: ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
           || ' deferrable ' || condeferrable || ' comment ' || coalesce(obj_description(oid, 'pg_constraint'), '-')
      FROM pg_constraint WHERE connamespace IN (SELECT oid FROM ns)
    UNION ALL
    SELECT 'index: ' || pg_get_indexdef(i.indexrelid)
      FROM pg_index i JOIN rels c ON c.oid = i.indrelid
    UNION ALL
    SELECT 'view: ' || c.oid::regclass || ' ' || md5(pg_get_viewdef(c.oid)) FROM rels c WHERE c.relkind IN ('v', 'm')
    UNION ALL
    SELECT 'trigger: ' || pg_get_triggerdef(t.oid) || ' enabled ' || t.tgenabled::text
           || ' comment ' || coalesce(obj_description(t.oid, 'pg_trigger'), '-')
      FROM pg_trigger t JOIN rels c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal
    UNION ALL
    SELECT 'policy: ' || tablename || ' ' || policyname || ' ' || permissive || ' ' || roles::text
           || ' ' || cmd || ' using ' || coalesce(qual, '-') || ' check ' || coalesce(with_check, '-')
           || ' comment ' || coalesce((SELECT obj_description(p.oid, 'pg_policy') FROM pg_policy p
                                        WHERE p.polname = policyname
                                          AND p.polrelid = format('%I.%I', schemaname, tablename)::regclass), '-')
      FROM pg_policies WHERE schemaname IN ('streamforge', 'streamforge_internal')
    UNION ALL
    SELECT 'sequence: ' || s.seqrelid::regclass || ' ' || format_type(s.seqtypid, NULL) || ' start ' || s.seqstart
           || ' increment ' || s.seqincrement || ' min ' || s.seqmin || ' max ' || s.seqmax
           || ' cache ' || s.seqcache || ' cycle ' || s.seqcycle
           || ' owned by ' || coalesce((SELECT d.refobjid::regclass || '.' || a.attname
                                          FROM pg_depend d JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
                                         WHERE d.classid = 'pg_class'::regclass AND d.objid = s.seqrelid
                                           AND d.deptype = 'a' AND d.refclassid = 'pg_class'::regclass), '-')
      FROM pg_sequence s JOIN rels c ON c.oid = s.seqrelid
    UNION ALL
    SELECT 'operator: ' || o.oid::regoperator FROM pg_operator o, ns WHERE o.oprnamespace = ns.oid
    UNION ALL
    SELECT 'cast: ' || format_type(castsource, NULL) || ' -> ' || format_type(casttarget, NULL)
      FROM pg_cast WHERE oid IN (SELECT objid FROM members WHERE classid = 'pg_cast'::regclass)
    UNION ALL
    SELECT 'event trigger: ' || evtname || ' ' || evtevent
      FROM pg_event_trigger WHERE oid IN (SELECT objid FROM members WHERE classid = 'pg_event_trigger'::regclass)
) AS l
ORDER BY line COLLATE "C";
};
}
