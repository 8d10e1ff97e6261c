#!/usr/bin/env bash
# test/run.d/bad-inputs-sync.sh: the catalogue of bad inputs
# (test/bad-inputs.md) and the rows the regression test runs
# (sql/bad_inputs.sql) must be the same list: every row (number,
# description, statement, SQLSTATE) of the one must be in the other.
# Runs from the repository's top directory.
set -euo pipefail
root=${SF_ROOT:-$(pwd)}
exec perl -e '
use strict; use warnings;
my ($md, $sql) = @ARGV;
my (%m, %s);
open(my $fh, "<:encoding(UTF-8)", $md) or die "$md: $!";
while (<$fh>) {
    next unless /^\| (\d+) \| (.*) \| `(.*)` \| (\w{5}) \|$/;
    my ($n, $d, $q, $e) = ($1, $2, $3, $4);
    s/\\\|/|/g for ($d, $q);
    die "$md: row $n twice\n" if exists $m{$n};
    $m{$n} = join("\x1f", $d, $q, $e);
}
close $fh;
open($fh, "<:encoding(UTF-8)", $sql) or die "$sql: $!";
while (<$fh>) {
    next unless /^\((\d+), \x27((?:[^\x27]|\x27\x27)*)\x27, \$\$(.*?)\$\$, \x27(\w{5})\x27\)[,;]$/;
    my ($n, $d, $q, $e) = ($1, $2, $3, $4);
    $d =~ s/\x27\x27/\x27/g;
    die "$sql: row $n twice\n" if exists $s{$n};
    $s{$n} = join("\x1f", $d, $q, $e);
}
close $fh;
my $bad = 0;
for my $n (sort { $a <=> $b } keys %m) {
    if (!exists $s{$n}) { print "row $n is in $md only\n"; $bad++; }
    elsif ($s{$n} ne $m{$n}) { print "row $n differs between $md and $sql\n"; $bad++; }
}
for my $n (sort { $a <=> $b } keys %s) {
    if (!exists $m{$n}) { print "row $n is in $sql only\n"; $bad++; }
}
if (!%m) { print "no rows found in $md\n"; $bad++; }
printf "bad-inputs-sync: %d rows, %d problems\n", scalar(keys %m), $bad;
exit($bad ? 1 : 0);
' "$root/test/bad-inputs.md" "$root/sql/bad_inputs.sql"
