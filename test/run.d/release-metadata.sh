#!/usr/bin/env bash
# test/run.d/release-metadata.sh: the license and the release metadata agree
# (issue 31): LICENSE is the PostgreSQL License with the project's
# copyright line, debian/copyright (DEP-5) names it for every file, the
# README says it, and META.json (PGXN) has the license and the versions of
# both control files.  Runs from the repository's top directory.
set -euo pipefail
root=${SF_ROOT:-$(pwd)}
fail=0
bad() { echo "release-metadata: $*"; fail=1; }

grep -q '^PostgreSQL License$' "$root/LICENSE" || bad "LICENSE is not the PostgreSQL License"
grep -qx 'Copyright (c) 2026, The streamforge authors' "$root/LICENSE" ||
	bad "LICENSE lacks the line \"Copyright (c) 2026, The streamforge authors\""
grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/$' "$root/debian/copyright" ||
	bad "debian/copyright is not in DEP-5 form"
# every Files paragraph names the license, and the license text is there
n_files=$(grep -c '^Files:' "$root/debian/copyright")
n_lic=$(grep -c '^License: PostgreSQL$' "$root/debian/copyright")
if [ "$n_files" -lt 1 ] || [ "$n_lic" -ne $((n_files + 1)) ]; then
	bad "debian/copyright: each Files paragraph must say \"License: PostgreSQL\", with one stand-alone License paragraph"
fi
grep -q 'PostgreSQL License' "$root/README.md" || bad "README.md does not state the license"

ver() { sed -n "s/^default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" "$1"; }
core=$(ver "$root/streamforge.control")
proxy=$(ver "$root/proxy/streamforge_proxy.control")
perl -MJSON::PP -e '
my ($file, $core, $proxy) = @ARGV;
open my $fh, "<", $file or die "$file: $!\n";
my $m = JSON::PP->new->decode(do { local $/; <$fh> });
my @bad;
push @bad, "license is \"$m->{license}\", not \"postgresql\"" unless ($m->{license} // "") eq "postgresql";
push @bad, "version $m->{version} is not the control file'"'"'s $core" unless $m->{version} eq $core;
push @bad, "provides.streamforge.version is not $core" unless ($m->{provides}{streamforge}{version} // "") eq $core;
push @bad, "provides.streamforge_proxy.version is not $proxy" unless ($m->{provides}{streamforge_proxy}{version} // "") eq $proxy;
print "release-metadata: META.json: $_\n" for @bad;
exit(@bad ? 1 : 0);
' "$root/META.json" "$core" "$proxy" || fail=1
[ "$fail" -eq 0 ] && echo "release-metadata: LICENSE, debian/copyright, README.md and META.json agree ($core, proxy $proxy)"
exit "$fail"
