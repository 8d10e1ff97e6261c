#!/usr/bin/env bash
# test/run.d/sql-qualified.sh: every SQL statement streamforge runs must be
# immune to the caller's search_path (docs/security.md, "search_path").
#
# It scans
#   - every SQL statement string of src/*/*.c and kafka/src/*.c: a sequence of adjacent C string
#     literals (with the string macros #defined in the same file expanded)
#     whose text starts with SELECT, INSERT, UPDATE, DELETE or WITH;
#   - every function body of sql/schema, sql/objects, sql/migrations and sql/upgrade,
#     of the Kafka source's kafka/*.sql, and of the router extension's
#     scripts proxy/*.sql (but the frozen
#     released proxy/streamforge_proxy--0.2.0.sql, which predates the rule
#     and which its update script replaces whole): a
#     function with SET search_path = pg_catalog, pg_temp passes (its body
#     resolves in pg_catalog whatever the caller's path); a LANGUAGE sql
#     function without it must be fully qualified like a C statement; any
#     other function with a body and no such SET fails.  A BEGIN ATOMIC
#     body is parsed when the function is created, under the script's
#     search_path (streamforge first after pg_catalog, issue 21): it must be
#     qualified whatever its SET says;
#   - every definition those scripts store, bound when the script runs:
#     column defaults, CHECK constraints and generated columns (CREATE and
#     ALTER TABLE, CREATE DOMAIN), views, index expressions and predicates,
#     policies, trigger functions and WHEN conditions, parameter defaults,
#     DO blocks and top-level SELECT/INSERT/UPDATE/DELETE.  Example it
#     catches (0.2.0, issue 21): DEFAULT nextval('streamforge.pipeline_id_seq'),
#     which bound to a look-alike streamforge.nextval(text).
# In a statement, after removing quoted literals, parameters ($1), a C
# statement's %s (a name the C code quoted and qualified itself),
# OPERATOR(pg_catalog.x) and the assignments of a SET list, any operator
# character left (=, +, <, ~, ...) is an unqualified operator; a name
# followed by "(" that is neither schema-qualified nor SQL syntax (IN,
# EXISTS, ROW, an alias's column list, ...) is an unqualified function; a
# cast "::" must name a qualified type; BETWEEN, IN (list), LIKE, IS
# DISTINCT FROM, NULLIF and CASE x WHEN look their operator up by name and
# are findings too.  Example it catches (0.1.0):
#   UPDATE streamforge.pipeline SET version = version + 1 WHERE ...
#
# Usage: test/run.d/sql-qualified.sh [FILE...]  (default: the tree's files).
# Runs from the repository's top directory; exit status 1 on any finding.
set -euo pipefail
root=${SF_ROOT:-$(pwd)}
if [ $# -eq 0 ]; then
	set -- "$root"/src/*/*.c "$root"/sql/schema/*.sql "$root"/sql/objects/*.sql "$root"/sql/migrations/*.sql "$root"/sql/upgrade/*.sql
	# the Kafka source extension (issue 28)
	set -- "$@" "$root"/kafka/src/*.c "$root"/kafka/*.sql
	for f in "$root"/proxy/*.sql; do
		case "$f" in
		*/proxy/streamforge_proxy--0.2.0.sql) ;;	# frozen release
		*) set -- "$@" "$f" ;;
		esac
	done
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
    $sql = substr($sql, 0, 240) . " ..." if length($sql) > 244;
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
    # the "%s" of a C statement is a name the code quoted and qualified
    # itself (quote_qualified_identifier: the table of an aggregate)
    $s =~ s/%s/ pg_catalog.x /g if $file =~ /\.c$/;
    # OPERATOR(schema.op): the schema must be pg_catalog
    # (replaced by a comma, so that "x OPERATOR(pg_catalog./) (y)" is no call)
    while ($s =~ s/\bOPERATOR\s*\(\s*(\w+)\s*\.\s*[^\s)]+\s*\)/ , /i) {
        report($file, "operator qualified with \"$1\"", $sql) if lc($1) ne "pg_catalog";
    }
    report($file, "unqualified OPERATOR()", $sql) if $s =~ /\bOPERATOR\s*\(/i;
    # casts: ::schema.type
    while ($s =~ s/::\s*(\w+)(\s*\.\s*\w+)?(\s*\[\s*\])?/ /) {
        report($file, "cast to unqualified type \"$1\"", $sql) unless defined $2;
    }
    # UPDATE ... SET a = x, b = y (and INSERT ... ON CONFLICT DO UPDATE
    # SET ...): the "=" of an assignment is syntax
    if ($s =~ /^\s*UPDATE\b/i || $s =~ /\bDO\s+UPDATE\s+SET\b/i) {
        $s =~ s{\bSET\b(.*?)(?=\bWHERE\b|\bRETURNING\b|\bFROM\b|$)}{
            my $list = $1;
            $list =~ s/(^|,)\s*\w+\s*=/$1 /g;
            " SET $list"
        }sie;
    }
    # constructs that look an operator up by name, through the search_path:
    # x BETWEEN a AND b (>=, <=), x IN (list) (=), LIKE (~~), IS DISTINCT
    # FROM (=), NULLIF (=), CASE x WHEN v (=)
    report($file, "implicit operator of BETWEEN", $sql) if $s =~ /\bBETWEEN\b/i;
    report($file, "implicit operator of LIKE", $sql) if $s =~ /\b(?:I?LIKE|SIMILAR\s+TO)\b/i;
    report($file, "implicit operator of IS DISTINCT FROM", $sql) if $s =~ /\bDISTINCT\s+FROM\b/i;
    report($file, "implicit operator of NULLIF", $sql) if $s =~ /\bNULLIF\s*\(/i;
    report($file, "implicit operator of IN (...)", $sql)
      if $s =~ /(?<!\bposition)\s*\([^()]*\bIN\s*\(|(?:^|[^(\s]\s*|\w\s+)\bIN\s*\(/i
      && $s !~ /\bposition\s*\([^()]*\bIN\b/i;
    while ($s =~ /\bCASE\b\s*(\S+)/gi) {
        report($file, "implicit operator of CASE x WHEN", $sql) if lc($1) ne "when";
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

# Split an SQL script into its top-level statements: quoted literals,
# quoted identifiers, dollar quotes and comments are kept whole, psql
# meta-commands (\echo ... \quit) dropped.
sub split_statements {
    my ($t) = @_;
    $t =~ s/^\\[^\n]*//mg;
    my @stmts;
    my $cur = "";
    while (length $t) {
        if ($t =~ s/^(--[^\n]*)//) { $cur .= " "; }
        elsif ($t =~ s{^(/\*.*?\*/)}{}s) { $cur .= " "; }
        elsif ($t =~ s/^(\x27(?:[^\x27]|\x27\x27)*\x27)//) { $cur .= $1; }
        elsif ($t =~ s/^("(?:[^"]|"")*")//) { $cur .= $1; }
        elsif ($t =~ s/^((\$\w*\$).*?\2)//s) { $cur .= $1; }
        elsif ($t =~ s/^;//) {
            # BEGIN ATOMIC ... END holds statements of its own
            if ($cur =~ /\bBEGIN\s+ATOMIC\b/i && $cur !~ /\bEND\s*$/i) { $cur .= ";"; next; }
            push @stmts, $cur if $cur =~ /\S/; $cur = "";
        }
        elsif ($t =~ s/^([^-\/\x27"\$;]+|.)//s) { $cur .= $1; }
    }
    push @stmts, $cur if $cur =~ /\S/;
    return @stmts;
}

# The text inside the parenthesis that opens at the start of $s (which
# must start with "("), literals and quoted names skipped.
sub paren {
    my ($s) = @_;
    my $depth = 0;
    my $out = "";
    while ($s =~ /\G(\x27(?:[^\x27]|\x27\x27)*\x27|"(?:[^"]|"")*"|\(|\)|[^()\x27"]+)/gc) {
        my $tok = $1;
        if ($tok eq "(") { $depth++; }
        elsif ($tok eq ")") { $depth--; return substr($out, 1) if $depth == 0; }
        $out .= $tok;
    }
    return $out;
}

# The default expressions of a column or parameter list: from DEFAULT up
# to the next "," or ")" at the same depth, or a column constraint keyword.
sub defaults_in {
    my ($s) = @_;
    my @out;
    while ($s =~ /\bDEFAULT\b/gi) {
        my $rest = substr($s, pos($s));
        my ($depth, $e) = (0, "");
        while ($rest =~ /\G(\x27(?:[^\x27]|\x27\x27)*\x27|"(?:[^"]|"")*"|\(|\)|,|\b(?:NOT|NULL|PRIMARY|UNIQUE|REFERENCES|CHECK|CONSTRAINT|GENERATED|COLLATE)\b|\w+|\s+|[^()\x27"\w\s,])/gci) {
            my $tok = $1;
            last if $depth == 0 && ($tok eq "," || $tok eq ")" || $tok =~ /^(NOT|NULL|PRIMARY|UNIQUE|REFERENCES|CHECK|CONSTRAINT|GENERATED|COLLATE)$/i);
            $depth++ if $tok eq "(";
            $depth-- if $tok eq ")";
            $e .= $tok;
        }
        push @out, $e;
    }
    return @out;
}

# The expressions an object definition stores (and binds when it is
# created, with the script search_path): column defaults, CHECK
# constraints, generated columns, index expressions and predicates,
# policies, trigger conditions, views.
sub check_definition {
    my ($file, $st) = @_;
    my $s = $st;
    $s =~ s/^\s+//;
    (my $head = $s) =~ s/\s+/ /g;
    $head = substr($head, 0, 60);
    my $what = "$file: $head";
    my $expr = sub { check_sql($what, "SELECT $_[0]"); };
    if ($s =~ /^(CREATE|ALTER)\s+(TABLE|FOREIGN\s+TABLE)\b/i) {
        $expr->($_) for defaults_in($s);
        while ($s =~ /\b(?:CHECK|GENERATED\s+ALWAYS\s+AS)\s*(?=\()/gi) {
            $expr->(paren(substr($s, pos($s))));
        }
        while ($s =~ /\bUSING\s+(?=\()/gi) {     # ALTER COLUMN TYPE ... USING (expr)
            $expr->(paren(substr($s, pos($s))));
        }
    } elsif ($s =~ /^CREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:TEMP|TEMPORARY|RECURSIVE)\s+)*(?:MATERIALIZED\s+)?VIEW\b.*?\bAS\s+((?:SELECT|WITH|VALUES)\b.*)$/is) {
        check_sql($what, $1);
    } elsif ($s =~ /^CREATE\s+(?:UNIQUE\s+)?INDEX\b.*?\bON\s+(?:ONLY\s+)?[\w."]+\s*(?:USING\s+\w+\s*)?(?=\()/is) {
        my $rest = substr($s, $+[0]);
        $expr->(paren($rest));
        $expr->($1) if $rest =~ /\bWHERE\b(.*)$/is;
    } elsif ($s =~ /^CREATE\s+POLICY\b/i) {
        while ($s =~ /\b(?:USING|WITH\s+CHECK)\s*(?=\()/gi) {
            $expr->(paren(substr($s, pos($s))));
        }
    } elsif ($s =~ /^CREATE\s+(?:OR\s+REPLACE\s+)?(?:CONSTRAINT\s+)?TRIGGER\b/i) {
        $expr->(paren(substr($s, $+[0]))) if $s =~ /\bWHEN\s*(?=\()/gi;
        if ($s =~ /\bEXECUTE\s+(?:FUNCTION|PROCEDURE)\s+([\w"]+)(\s*\.\s*[\w"]+)?/i) {
            report($file, "trigger function \"$1\" not schema-qualified", $st) unless defined $2;
        }
    } elsif ($s =~ /^CREATE\s+DOMAIN\b/i) {
        $expr->($_) for defaults_in($s);
        while ($s =~ /\bCHECK\s*(?=\()/gi) { $expr->(paren(substr($s, pos($s)))); }
    } elsif ($s =~ /^(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i) {
        check_sql($file, $s);
    }
}

# A DO block or PL/pgSQL body that runs with the script search_path: its
# statements must be qualified like SQL ones, once the PL/pgSQL syntax
# around them is gone.
sub check_plpgsql {
    my ($file, $body) = @_;
    my $b = $body;
    $b =~ s/--[^\n]*//g;
    $b =~ s/^\s*(?:<<\w+>>\s*)?DECLARE\b.*?\bBEGIN\b/ /is;   # declarations
    $b =~ s/:=/ /g;
    # RAISE ... USING option = expr
    $b =~ s/\b(?:ERRCODE|MESSAGE|DETAIL|HINT|COLUMN|CONSTRAINT|DATATYPE|TABLE|SCHEMA)\s*=/ /gi;
    for my $part (split /;/, $b) {
        $part =~ s/\b(?:BEGIN|END\s+IF|END\s+LOOP|END|IF|THEN|ELSIF|ELSE|LOOP|RAISE|EXCEPTION|NOTICE|WARNING|PERFORM|RETURN|FOREACH|FOR|WHILE|EXIT|CONTINUE)\b/ /gi;
        check_sql($file, "SELECT $part") if $part =~ /\S/;
    }
}

sub sql_file {
    my ($file) = @_;
    open(my $fh, "<", $file) or die "$file: $!";
    local $/; my $t = <$fh>; close $fh;
    for my $st (split_statements($t)) {
        if ($st =~ /^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE)\s+([\w.]+)(.*?)(?:AS\s+(\$\w*\$)(.*?)\3(.*))?$/is) {
            my ($name, $head, $body, $tail) = ($1, $2, $4, $5);
            my $attrs = $head . ($tail // "");
            my ($lang) = $attrs =~ /\bLANGUAGE\s+(\w+)/i;
            $lang = lc($lang // "");
            # parameter defaults are bound when the function is created
            my ($params) = $st =~ /^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE)\s+[\w.]+\s*(\(.*)/is;
            check_sql("$file: function $name", "SELECT $_") for defaults_in(paren($params));
            next if $lang eq "c" || $lang eq "internal";
            $nstmt++;
            # BEGIN ATOMIC: parsed when created, with the script search_path,
            # whatever the function own SET search_path says
            if (!defined $body && $attrs =~ /\bBEGIN\s+ATOMIC\b(.*)$/is) {
                my $atomic = $1;
                # (the statement splitter cut it at its first ";")
                $atomic =~ s/\bEND\s*$//i;
                check_sql("$file: function $name", $_) for grep { /\S/ } split /;/, $atomic;
                next;
            }
            next if $attrs =~ /\bSET\s+search_path\s*(?:=|TO)\s*\x27?pg_catalog\x27?\s*,\s*\x27?pg_temp\x27?/i;
            if ($lang eq "sql" && defined $body) {
                check_sql("$file: function $name", $_) for grep { /\S/ } split /;/, $body;
            } else {
                report($file, "function $name has no SET search_path = pg_catalog, pg_temp", "LANGUAGE $lang");
            }
        } elsif ($st =~ /^\s*DO\b.*?(\$\w*\$)(.*?)\1/is) {
            $nstmt++;
            check_plpgsql("$file: DO block", $2);
        } else {
            $nstmt++ if $st =~ /^\s*(CREATE|ALTER|SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;
            check_definition($file, $st);
        }
    }
}

for my $f (@ARGV) {
    if ($f =~ /\.c$/) { c_file($f); } else { sql_file($f); }
}
printf "sql-qualified: %d statements and functions, %d problems\n", $nstmt, $bad;
exit($bad || !$nstmt ? 1 : 0);
' "$@"
