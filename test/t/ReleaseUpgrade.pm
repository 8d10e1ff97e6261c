# test/t/ReleaseUpgrade.pm: the package upgrade of a release's
# installation, shared by the TAP tests that update a database made at a
# release (092_attach_upgrade.pl, 157_aggregate_upgrade.pl).
#
# release_upgrade() checks that scripts/test.sh built the release
# (SF_RELEASE_INSTALL; without it the test fails with the reason, it never
# skips), copies the release's private tree so that the build stays as it
# was, and returns the copy's bin directory's installation path and a
# function that performs the package upgrade as dpkg does (it returns the
# number of files installed).
package ReleaseUpgrade;

use strict;
use warnings;

use Exporter qw(import);
use File::Copy qw(copy);
use File::Path qw(make_path);
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT_OK = qw(release_upgrade);

sub release_upgrade
{
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
	my $package_upgrade = sub
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
	};
	return ($install, $package_upgrade);
}

1;
