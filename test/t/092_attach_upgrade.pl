# Attachments of 0.2.0 through ALTER EXTENSION UPDATE to 0.3.0 (issue 21):
# a database made at release 0.1.0 (built from its commit by
# scripts/test.sh, passed in SF_RELEASE_INSTALL) is updated to 0.2.0, where
# tables are attached, one of them to a pipeline dropped since (0.2.0 left
# its triggers behind), then to 0.3.0.  The update binds every attachment to
# the id of the pipeline of its name (the orphan to none), keeps its
# mappings, and the attachments go on ingesting at the next offsets;
# drop_pipeline then detaches, and a pipeline re-created under the orphan's
# name receives nothing.  Without SF_RELEASE_INSTALL the test fails with the
# reason: it never skips.

use strict;
use warnings;

use File::Copy qw(copy);
use File::Path qw(make_path rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $release = $ENV{SF_RELEASE_VERSION} // '0.1.0';
my $old_install = $ENV{SF_RELEASE_INSTALL} // '';
if ($old_install eq '' || !-x "$old_install/bin/postgres")
{
	my $why = $ENV{SF_RELEASE_ERROR} || (
		$old_install eq ''
		? 'SF_RELEASE_INSTALL is not set (run this test through scripts/test.sh, which builds the release)'
		: "SF_RELEASE_INSTALL=$old_install holds no PostgreSQL installation");
	fail("release $release is installed for the upgrade test");
	diag($why);
	done_testing();
	exit 1;
}

my $new_version = `pg_config --sharedir`;
chomp $new_version;
my $new_share = $new_version;
my $new_lib = `pg_config --pkglibdir`;
chomp $new_lib;
open my $cf, '<', "$new_share/extension/streamforge.control"
  or die "no streamforge.control in $new_share/extension: $!";
($new_version) = map { /^default_version\s*=\s*'([^']*)'/ ? $1 : () } <$cf>;
close $cf;
isnt($new_version, $release, "the new version ($new_version) is not the release");

# ------------------------------------------------------------------
# The installation that gets the package upgrade: a copy of the release's
# private tree, so that the release build stays as it was.
# ------------------------------------------------------------------
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
	"the release's install script is installed");

# The package upgrade as dpkg performs it.  The new package holds what
# "make install" installs (debian/, scripts/package.sh); each of its files
# is written beside its target and renamed over it (a backend that mapped
# the old library keeps it, new ones load the new one), and the files of
# the old package that the new one does not ship are removed.
sub package_upgrade
{
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


my $node = PostgreSQL::Test::Cluster->new('attach_upgrade', install_path => $install);
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION streamforge');
ok(package_upgrade() >= 3, 'package upgrade: the new library and scripts are installed');
$node->safe_psql('postgres', "ALTER EXTENSION streamforge UPDATE TO '0.2.0'");
$node->safe_psql(
	'postgres', q{
SELECT streamforge.create_pipeline('pages', ARRAY['web'],
    ARRAY[streamforge.fixed('w', 60)], time_unit => interval '1 second');
CREATE TABLE visits (id bigserial PRIMARY KEY, page text NOT NULL, at timestamptz NOT NULL);
SELECT streamforge.attach('pages', 'visits', event_id => 'id', key => 'page', event_time => 'at');
INSERT INTO visits (page, at) VALUES ('/a', '2026-11-30 12:00:00+00'), ('/b', '2026-11-30 12:00:10+00');
SELECT streamforge.create_pipeline('gone', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
CREATE TABLE left_behind (id integer, k text, t bigint);
SELECT streamforge.attach('gone', 'left_behind', 'id', 'k', 't');
SELECT streamforge.drop_pipeline('gone');
});
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_trigger WHERE tgrelid = 'left_behind'::regclass"),
	'2', '0.2.0 leaves the triggers of a dropped pipeline behind');

$node->safe_psql('postgres', "ALTER EXTENSION streamforge UPDATE TO '0.3.0'");
is( $node->safe_psql('postgres',
		"SELECT source, pipeline, pipeline_id IS NOT DISTINCT FROM streamforge_internal.pipeline_id(pipeline), "
		  . "pipeline_id FROM streamforge.attachments ORDER BY source::text"),
	"left_behind|gone|f|0\nvisits|pages|t|1",
	'the update binds each attachment to its pipeline, the orphan to none');
is( $node->safe_psql('postgres',
		"SELECT tgname, tgnargs, pg_catalog.pg_get_triggerdef(oid) ~ 'AFTER UPDATE .* REFERENCING OLD TABLE AS old_rows FOR EACH ROW WHEN' "
		  . "FROM pg_trigger WHERE tgrelid = 'visits'::regclass ORDER BY tgname"),
	"streamforge_attach_b3b32a2d422265cd|9|f\nstreamforge_attach_b3b32a2d422265cd_update|9|t",
	'with the triggers attach() makes now');
$node->safe_psql('postgres',
	"INSERT INTO visits (page, at) VALUES ('/c', '2026-11-30 12:01:00+00')");
is( $node->safe_psql('postgres',
		"SELECT consumed_offset FROM streamforge.partitions('pages')"),
	'2', 'the updated attachment ingests at the next offset');
is( $node->safe_psql('postgres',
		"SELECT key, count FROM streamforge.live_ts('pages') ORDER BY key"),
	"/a|1\n/b|1\n/c|1", 'with its mappings unchanged');
my ($ret, $out, $err) = $node->psql('postgres', 'ALTER TABLE visits DROP COLUMN page');
isnt($ret, 0, 'a column the mappings read cannot be dropped');

# the orphan: a pipeline of the same name receives nothing
$node->safe_psql('postgres',
	"SELECT streamforge.create_pipeline('gone', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)])");
($ret, $out, $err) = $node->psql('postgres', "INSERT INTO left_behind VALUES (1, 'k', 1)");
like($err, qr/pipeline "gone" attached to table public.left_behind was dropped/,
	'the orphan refuses inserts');
is( $node->safe_psql('postgres', "SELECT deliveries FROM streamforge.stats('gone')"),
	'0', 'the re-created pipeline received nothing');

# drop_pipeline detaches now
$node->safe_psql('postgres', "SELECT streamforge.drop_pipeline('pages')");
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_trigger WHERE tgrelid = 'visits'::regclass"),
	'0', 'drop_pipeline detaches');
$node->safe_psql('postgres',
	"INSERT INTO visits (page, at) VALUES ('/d', '2026-11-30 12:02:00+00')");

$node->stop;
done_testing();
