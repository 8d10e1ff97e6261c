#!/usr/bin/env bash
# test/run.d/sql-qualified.sh: every SQL statement streamforge runs must be
# immune to the caller's search_path (docs/security.md, "search_path").
#
# It scans
#   - every SQL statement string of src/*/*.c: a sequence of adjacent C string
#     literals (with the string macros #defined in the same file expanded)
#     whose text starts with SELECT, INSERT, UPDATE, DELETE or WITH;
#   - every function body of sql/install/*.sql and sql/upgrade/*.sql.in: a function with
#     SET search_path = pg_catalog, pg_temp passes (its body resolves in
#     pg_catalog whatever the caller's path); a LANGUAGE sql function
#     without it must be fully qualified like a C statement; any other
#     function with a body and no such SET fails.
# In a statement, after removing quoted literals, parameters ($1),
# OPERATOR(pg_catalog.x) and the assignments of a SET list, any operator
# character left (=, +, <, ~, ...) is an unqualified operator; a name
# followed by "(" that is neither schema-qualified nor SQL syntax (IN,
# EXISTS, ROW, an alias's column list, ...) is an unqualified function; a
# cast "::" must name a qualified type.  Example it catches (0.1.0):
#   UPDATE streamforge.pipeline SET version = version + 1 WHERE ...
#
# Usage: test/run.d/sql-qualified.sh [FILE...]  (default: the tree's files).
# Runs from the repository's top directory; exit status 1 on any finding.
set -euo pipefail
root=${SF_ROOT:-$(pwd)}
if [ $# -eq 0 ]; then
	set -- "$root"/src/*/*.c "$root"/sql/install/*.sql "$root"/sql/upgrade/*.sql.in "$root"/sql/upgrade/*.sql
fi
exec perl -e '
use strict; use warnings;

my $bad = 0;
my $nstmt = 0;
my %syntax = map { $_ => 1 } qw(
    select from where and or not in values exists any all some row array
    conflict using on by returning set with ordinality cast coalesce nullif
    greatest least into join lateral case when then else over filter within
    as is distinct);

sub report { my ($file, $what, $sql) = @_;
    $sql =~ s/\s+/ /g;
    print "$file: $what in: $sql\n"; $bad++; }

# Findings in one statement (text of SQL, no comments)
sub check_sql {
    my ($file, $sql) = @_;
    my $s = $sql;
    $nstmt++;
    $s =~ s/--[^\n]*//g;
    $s =~ s/\x27(?:[^\x27]|\x27\x27)*\x27/ \x27\x27 /g;   # literals
    $s =~ s/"(?:[^"]|"")*"/ q /g;                     # quoted identifiers
    $s =~ s/\$\d+/ p /g;                               # parameters
    # OPERATOR(schema.op): the schema must be pg_catalog
    while ($s =~ s/\bOPERATOR\s*\(\s*(\w+)\s*\.\s*[^\s)]+\s*\)/ /i) {
        report($file, "operator qualified with \"$1\"", $sql) if lc($1) ne "pg_catalog";
    }
    report($file, "unqualified OPERATOR()", $sql) if $s =~ /\bOPERATOR\s*\(/i;
    # casts: ::schema.type
    while ($s =~ s/::\s*(\w+)(\s*\.\s*\w+)?(\s*\[\s*\])?/ /) {
        report($file, "cast to unqualified type \"$1\"", $sql) unless defined $2;
    }
    # UPDATE ... SET a = x, b = y: the "=" of an assignment is syntax
    if ($s =~ /^\s*UPDATE\b/i) {
        $s =~ s{\bSET\b(.*?)(?=\bWHERE\b|\bRETURNING\b|\bFROM\b|$)}{
            my $list = $1;
            $list =~ s/(^|,)\s*\w+\s*=/$1 /g;
            " SET $list"
        }sie;
    }
    # "*" of a select list, t.*, count(*)
    $s =~ s/\.\s*\*/ /g;
    $s =~ s/\(\s*\*\s*\)/( )/g;
    $s =~ s/\bSELECT\s+\*/SELECT /gi;
    if ($s =~ /([-+*\/<>=~!@#%^&|`?]+)/) {
        report($file, "unqualified operator \"$1\"", $sql);
    }
    # functions: name( not preceded by "." and not syntax or an alias list
    while ($s =~ /(\S*?)(\b\w+)\s*\(/g) {
        my ($before, $name) = ($1, $2);
        next if $before =~ /\.$/;
        next if $syntax{lc $name};
        my $prev = substr($s, 0, $-[2]);
        next if $prev =~ /\b(AS|INTO)\s*$/i;           # alias(cols), INTO t(cols)
        next if $prev =~ /\.\s*$/;
        report($file, "unqualified function \"$name\"", $sql);
    }
}

sub c_file {
    my ($file) = @_;
    open(my $fh, "<", $file) or die "$file: $!";
    local $/; my $t = <$fh>; close $fh;
    $t =~ s{/\*.*?\*/}{ }gs;
    $t =~ s{//[^\n]*}{ }g;
    # string macros: #define NAME "..." (with continuations)
    my %mac;
    while ($t =~ /^#define[ \t]+(\w+)[ \t]*(?:\\\n[ \t]*)?((?:"(?:[^"\\\n]|\\.)*"[ \t]*(?:\\\n[ \t]*)?)+)$/mg) {
        my ($n, $body) = ($1, $2);
        my $v = "";
        $v .= $1 while $body =~ /"((?:[^"\\\n]|\\.)*)"/g;
        $mac{$n} = $v;
    }
    $t =~ s/^#define[^\n]*(?:\\\n[^\n]*)*//mg;
    # sequences of adjacent literals, macros in between
    my $mnames = join("|", map { quotemeta } keys %mac) || "(?!)";
    while ($t =~ /((?:"(?:[^"\\\n]|\\.)*"|\b(?:$mnames)\b)(?:\s*(?:"(?:[^"\\\n]|\\.)*"|\b(?:$mnames)\b))*)/g) {
        my $seq = $1;
        next unless $seq =~ /"/;
        my $sql = "";
        while ($seq =~ /"((?:[^"\\\n]|\\.)*)"|\b(\w+)\b/g) {
            $sql .= defined $1 ? $1 : $mac{$2};
        }
        $sql =~ s/\\n/ /g; $sql =~ s/\\"/"/g;
        next unless $sql =~ /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/;
        check_sql($file, $sql);
    }
}

sub sql_file {
    my ($file) = @_;
    open(my $fh, "<", $file) or die "$file: $!";
    local $/; my $t = <$fh>; close $fh;
    # CREATE [OR REPLACE] FUNCTION ... up to the end of the statement
    while ($t =~ /\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE)\s+([\w.]+)(.*?)(?:AS\s+(\$\w*\$)(.*?)\3(.*?))?;\s*$/gims) {
        my ($name, $head, $body, $tail) = ($1, $2, $4, $5);
        my $attrs = $head . ($tail // "");
        my ($lang) = $attrs =~ /\bLANGUAGE\s+(\w+)/i;
        $lang = lc($lang // "");
        next if $lang eq "c" || $lang eq "internal";
        $nstmt++;
        next if $attrs =~ /\bSET\s+search_path\s*(?:=|TO)\s*\x27?pg_catalog\x27?\s*,\s*\x27?pg_temp\x27?/i;
        if ($lang eq "sql" && defined $body) {
            check_sql("$file: function $name", $_) for grep { /\S/ } split /;/, $body;
        } else {
            report($file, "function $name has no SET search_path = pg_catalog, pg_temp", "LANGUAGE $lang");
        }
    }
}

for my $f (@ARGV) {
    if ($f =~ /\.c$/) { c_file($f); } else { sql_file($f); }
}
printf "sql-qualified: %d statements and functions, %d problems\n", $nstmt, $bad;
exit($bad || !$nstmt ? 1 : 0);
' "$@"
