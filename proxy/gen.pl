#!/usr/bin/perl
# proxy/gen.pl: expands a template of the router extension into its script
# (docs/scale-out.md, "What is routed, and how to add a function").
#
#   perl proxy/gen.pl [--replace] TEMPLATE > SCRIPT      (from the top directory)
#
# Template lines (and the @create_...@ tokens below, inside any line):
#   -- @include FILE          the text of FILE (itself expanded)
#   -- @types                 every type of the data node (sql/schema/*.sql)
#                             that the routed API uses, and window_def;
#                             change and late_event get a last column shard
#   -- @types-except T ...    the same, but the types named
#   -- @generated             the wrappers of proxy/api.tsv's routed functions,
#                             and the window constructors (functions of the
#                             data node bound to sf_window_ctor: kind window)
# --replace makes every CREATE FUNCTION a CREATE OR REPLACE FUNCTION (the
# update script).  The signatures are the data node's, read from
# sql/schema/*.sql and sql/objects/*.sql (the current state: each function
# is defined once).  Fails when a function is defined twice, when a function
# of the data node has no line in proxy/api.tsv (but those returning a
# window_def: window constructors and their interval forms), a line names
# no function,
# a "hand" function is not in the template, or a signature cannot be routed.
use strict;
use warnings;

my $replace = 0;
if (@ARGV && $ARGV[0] eq '--replace')
{
	$replace = 1;
	shift @ARGV;
}
die "usage: perl proxy/gen.pl [--replace] TEMPLATE\n" unless @ARGV == 1;
my $template = $ARGV[0];

sub slurp
{
	my ($f) = @_;
	open(my $fh, '<', $f) or die "gen.pl: cannot open $f: $!\n";
	local $/;
	my $t = <$fh>;
	close $fh;
	return $t;
}

# --- the data node's API ------------------------------------------------
my @pieces = ((sort glob('sql/schema/*.sql')), (sort glob('sql/objects/*.sql')));
die "gen.pl: no sql/objects/*.sql (run from the top directory)\n" unless @pieces;
my $install = join("\n", map { slurp($_) } @pieces);
$install =~ s/--[^\n]*//g;    # comments (no "--" inside the literals we read)

# text from position $pos that starts with "(": the balanced group, without
# the outer parentheses; $pos is moved past it
sub balanced
{
	my ($s, $posref) = @_;
	my ($depth, $start, $q) = (0, $$posref, 0);
	for (my $i = $$posref; $i < length $s; $i++)
	{
		my $c = substr($s, $i, 1);
		if ($q) { $q = 0 if $c eq "'"; next; }
		if ($c eq "'") { $q = 1; next; }
		$depth++ if $c eq '(';
		$depth-- if $c eq ')';
		if ($depth == 0)
		{
			$$posref = $i + 1;
			return substr($s, $start + 1, $i - $start - 1);
		}
	}
	die "gen.pl: unbalanced parentheses\n";
}

sub split_commas
{
	my ($s) = @_;
	my @out;
	my ($cur, $depth, $q) = (q{}, 0, 0);
	for my $c (split //, $s)
	{
		if ($q) { $q = 0 if $c eq "'"; $cur .= $c; next; }
		$q = 1 if $c eq "'";
		$depth++ if $c eq '(';
		$depth-- if $c eq ')';
		if ($c eq ',' && $depth == 0) { push @out, $cur; $cur = ''; next; }
		$cur .= $c;
	}
	push @out, $cur if $cur =~ /\S/;
	s/^\s+|\s+$//g for @out;
	s/\s+/ /g for @out;
	return @out;
}

# an argument: { mode, name, type, default }
sub parse_arg
{
	my ($a) = @_;
	my $mode = 'IN';
	$mode = uc $1 if $a =~ s/^(IN|OUT|INOUT|VARIADIC)\s+//i;
	my $default;
	$default = $1 if $a =~ s/\s+(?:DEFAULT\s+|=\s*)(.*)$//is;
	$a =~ /^(\w+)\s+(.+)$/ or die "gen.pl: cannot read the argument \"$a\"\n";
	return { mode => $mode, name => $1, type => $2, default => $default };
}

my %types;    # name -> [ [column, type], ... ]
while ($install =~ /CREATE\s+TYPE\s+streamforge\.(\w+)\s+AS\s*(?=\()/gi)
{
	my ($name, $pos) = ($1, pos($install));
	my $cols = balanced($install, \$pos);
	$types{$name} = [ map { [ /^(\w+)\s+(.+)$/ ] } split_commas($cols) ];
	pos($install) = $pos;
}

# A function dropped by a later piece (DROP FUNCTION, to change its
# arguments) is not the data node's any more: the positions of the drops,
# by name and identity, so that only a CREATE after the last drop counts.
my %dropped;    # name -> { identity -> position of its last DROP }
while ($install =~ /DROP\s+FUNCTION\s+(?:IF\s+EXISTS\s+)?streamforge\.(\w+)\s*(?=\()/gi)
{
	my ($name, $pos) = ($1, pos($install));
	my $identity = join(', ', split_commas(balanced($install, \$pos)));
	$dropped{$name}{$identity} = $pos;
	pos($install) = $pos;
}

my %funcs;    # name -> { identity -> { args, returns } }
my @func_order;
while ($install =~ /CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+streamforge\.(\w+)\s*(?=\()/gi)
{
	my ($name, $pos) = ($1, pos($install));
	my $created_at = $pos;
	my @args = map { parse_arg($_) } split_commas(balanced($install, \$pos));
	my $rest = substr($install, $pos);
	$rest =~ /^\s*RETURNS\s+/gci or die "gen.pl: $name has no RETURNS\n";
	my $ret;
	if ($rest =~ /\GTABLE\s*(?=\()/gci)
	{
		my $p = pos($rest);
		$ret = { table => [ map { parse_arg($_) } split_commas(balanced($rest, \$p)) ] };
	}
	else
	{
		$rest =~ /\G(.*?)\s+(?=LANGUAGE|AS\b|IMMUTABLE|STABLE|VOLATILE|STRICT|CALLED|PARALLEL|SECURITY|SET\b|COST|ROWS|LEAKPROOF|BEGIN)/gcsi
		  or die "gen.pl: cannot read the result of $name\n";
		($ret = { type => $1 })->{type} =~ s/\s+/ /g;
		$ret->{setof} = 1 if $ret->{type} =~ s/^SETOF\s+//i;
	}
	my $identity = join(', ', map { $_->{type} } grep { $_->{mode} ne 'OUT' } @args);
	# the C symbol of a LANGUAGE C function (before any body or the end of
	# the statement)
	my ($symbol) = $rest =~ /\A[^;\$]*?\bAS\s+'MODULE_PATHNAME'\s*,\s*'(\w+)'/i;
	pos($install) = $pos;
	next if ($dropped{$name}{$identity} // -1) > $created_at;
	# sql/objects/ holds the current state: a second definition would
	# be replaced by the first on every update, or add an overload
	die "gen.pl: streamforge.$name($identity) is defined twice in sql/objects/ (keep one: src/README.md, \"Where SQL goes\")\n"
	  if $funcs{$name} && $funcs{$name}{$identity};    # (no autovivification)
	push @func_order, $name unless $funcs{$name};
	$funcs{$name}{$identity} = { name => $name, args => \@args, returns => $ret, symbol => $symbol };
}

# the data node's comment of each function (of its last overload)
my %comment;
{
	my $raw = join("\n", map { slurp($_) } @pieces);
	while ($raw =~ /^COMMENT ON FUNCTION streamforge\.(\w+)\s*\([^)]*\)\s+IS\s+'((?:[^']|'')*)'/mg)
	{
		$comment{$1} = $2;
	}
}

# --- the window constructors ---------------------------------------------
# A function of the data node bound to the C entry point sf_window_ctor is
# a window constructor: streamforge.<kind>(name, <the kind's params>), the
# kind being the function's name (src/api/define.c; the kinds are the
# operations table src/engine/window_kinds.c, and the regress test
# ops_registry checks that these functions are exactly its kinds).  The
# router builds the same row locally (kind "window", below): the data node
# checks it where it arrives (create_pipeline, create_sharded_pipeline's
# definition_of, add_window), with the constructor's messages.  Its
# arguments must be "name" and columns of window_def.
my %is_window_ctor;
for my $name (@func_order)
{
	for my $f (values %{ $funcs{$name} })
	{
		next unless ($f->{symbol} // '') eq 'sf_window_ctor';
		my @in = in_args($f);
		die "gen.pl: window constructor $name must return streamforge.window_def\n"
		  unless ($f->{returns}{type} // '') eq 'streamforge.window_def' && !$f->{returns}{setof};
		die "gen.pl: window constructor $name must take \"name text\" first\n"
		  unless @in && $in[0]{name} eq 'name' && $in[0]{type} eq 'text';
		my %col = map { $_->[0] => $_->[1] } @{ $types{window_def} // [] };
		for my $a (@in[ 1 .. $#in ])
		{
			die "gen.pl: window constructor $name: its argument $a->{name} is not a column of streamforge.window_def\n"
			  unless $col{ $a->{name} } && $a->{name} !~ /^(name|kind)$/;
			die "gen.pl: window constructor $name: its argument $a->{name} is $a->{type}, the column is $col{ $a->{name} }\n"
			  unless $col{ $a->{name} } eq $a->{type};
			die "gen.pl: window constructor $name: its argument $a->{name} has a default\n"
			  if defined $a->{default};
		}
		$is_window_ctor{$name} = 1;
	}
}

# --- the declaration ------------------------------------------------------
my (%decl, @decl_order);
for my $line (split /\n/, slurp('proxy/api.tsv'))
{
	next if $line =~ /^\s*(#|$)/;
	my ($name, $kind, $merge) = split /\s+/, $line;
	die "gen.pl: proxy/api.tsv: \"$line\": unknown kind\n"
	  unless defined $kind && $kind =~ /^(pipeline|partition|split|one|any|hand|node|router|window)$/;
	die "gen.pl: proxy/api.tsv: $name is declared window, but the data node does not bind it to sf_window_ctor\n"
	  if $kind eq 'window' && !$is_window_ctor{$name};
	die "gen.pl: proxy/api.tsv: $name is declared twice\n" if $decl{$name};
	$merge = '-' unless defined $merge;
	my %opt = map { $_ => 1 } grep { $_ ne '-' } split /,/, $merge;
	for my $o (keys %opt)
	{
		die "gen.pl: proxy/api.tsv: $name: unknown option $o\n"
		  unless $o =~ /^(first|sum|min|and|noretry)$/;
	}
	my ($m) = grep { $_ ne 'noretry' } sort keys %opt;
	$decl{$name} = { kind => $kind, merge => $m // '-', retry => !$opt{noretry} };
	push @decl_order, $name;
}
# A function returning a window_def (and no set) needs no line: a window
# constructor is of kind window, any other (the interval forms) of kind any.
# A line, if any, says otherwise.
{
	my @implicit;
	for my $name (@func_order)
	{
		next if $decl{$name};
		my @r = map { $_->{returns} } values %{ $funcs{$name} };
		next if grep { ($_->{type} // '') ne 'streamforge.window_def' || $_->{setof} } @r;
		$decl{$name} = { kind => ($is_window_ctor{$name} ? 'window' : 'any'), merge => '-', retry => 1,
			implicit => 1 };
		push @implicit, $name;
	}
	unshift @decl_order, @implicit;
}
my @missing = grep { !$decl{$_} } @func_order;
die "gen.pl: functions of sql/objects/*.sql without a line in proxy/api.tsv (add one: docs/scale-out.md): @missing\n"
  if @missing;
my @stale = grep { !$funcs{$_} && $decl{$_}{kind} ne 'router' } @decl_order;
my @clash = grep { $funcs{$_} && $decl{$_}{kind} eq 'router' } @decl_order;
die "gen.pl: proxy/api.tsv declares as the router's own functions that the data node has: @clash\n" if @clash;
die "gen.pl: proxy/api.tsv names functions that sql/objects/*.sql lacks: @stale\n" if @stale;

# --- generation -------------------------------------------------------------
my $SP = "SET search_path = pg_catalog, pg_temp";

sub in_args { return grep { $_->{mode} ne 'OUT' } @{ $_[0]{args} }; }

sub arg_list
{
	my ($f, $with_default) = @_;
	return join(', ', map {
		($_->{mode} eq 'IN' ? '' : "$_->{mode} ")
		  . "$_->{name} $_->{type}"
		  . ($with_default && defined $_->{default} ? " DEFAULT $_->{default}" : '')
	} @{ $f->{args} });
}

sub returns_sql
{
	my ($r) = @_;
	return 'TABLE (' . join(', ', map { "$_->{name} $_->{type}" } @{ $r->{table} }) . ')'
	  if $r->{table};
	return ($r->{setof} ? 'SETOF ' : '') . $r->{type};
}

# the columns of a set result (undef for a scalar)
sub result_columns
{
	my ($r) = @_;
	return [ map { $_->{name} } @{ $r->{table} } ] if $r->{table};
	return undef unless $r->{setof};
	(my $t = $r->{type}) =~ s/^streamforge\.//;
	return [ map { $_->[0] } @{ $types{$t} } ] if $types{$t};
	return undef;
}

sub order_by
{
	my ($r) = @_;
	my $cols = result_columns($r) or return '';
	my %has = map { $_ => 1 } @$cols;
	return ' ORDER BY px_r.shard, px_r.seq' if $r->{type} && $r->{type} eq 'streamforge.change';
	return ' ORDER BY px_r.shard, px_r.late_seq' if $r->{type} && $r->{type} eq 'streamforge.late_event';
	return ' ORDER BY px_r.window_name COLLATE "C", px_r.key COLLATE "C", px_r.window_start, px_r.window_end'
	  if $has{window_name} && $has{key} && $has{window_start} && $has{window_end};
	return '';
}

my %types_used = (window_def => 1);

sub note_types
{
	my ($f) = @_;
	for my $t ((map { $_->{type} } @{ $f->{args} }), $f->{returns}{type} // '')
	{
		$types_used{$1} = 1 if $t =~ /^streamforge\.(\w+)/;
	}
}

sub shard_tagged
{
	my ($r) = @_;
	return $r->{setof} && $r->{type} =~ /^streamforge\.(change|late_event)$/;
}

# A window constructor (kind window): the row the data node's constructor
# returns for valid arguments, built here without a remote call, so that it
# stays IMMUTABLE and works while a shard is down.  Its checks are the data
# node's, made where the row arrives (docs/scale-out.md, "Window
# constructors"); nothing here knows a kind.
sub gen_window
{
	my ($f) = @_;
	my $name = $f->{name};
	my @in = in_args($f);
	my %argpos = map { $in[$_]{name} => $_ + 1 } 0 .. $#in;
	my @row = map {
		my $c = $_->[0];
		$c eq 'kind' ? "'$name'" : $argpos{$c} ? "\$$argpos{$c}" : 'NULL'
	} @{ $types{window_def} };
	my $ident = join(', ', map { $_->{type} } @in);
	note_types($f);
	return <<"EOT";
-- $name: kind window (a window constructor of the data node; its row,
-- checked by the shard that receives it)
CREATE FUNCTION streamforge.$name(${\ arg_list($f, 1)})
RETURNS streamforge.window_def
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS \$\$ SELECT ROW(${\ join(', ', @row)})::streamforge.window_def \$\$;
COMMENT ON FUNCTION streamforge.$name($ident) IS
    '${\ ($comment{$name} // $name)} (checked by the shard at create_pipeline or add_window)';

EOT
}

sub gen_function
{
	my ($f, $kind, $merge, $retry) = @_;
	my $name = $f->{name};
	return gen_window($f) if $kind eq 'window';
	my @in = in_args($f);
	my $r = $f->{returns};
	note_types($f);
	die "gen.pl: $name: OUT arguments are not generated (declare it hand)\n"
	  if grep { $_->{mode} ne 'IN' } @{ $f->{args} };
	my $nargs = scalar @in;
	my $call_args = join(', ', map { $_->{name} } @in);
	my $pos_args = join(', ', map { "\$$_" } 1 .. $nargs);
	my $ident = join(', ', map { $_->{type} } @in);
	my $setof = $r->{setof} || $r->{table};
	my $void = !$setof && $r->{type} eq 'void';
	my $out = "-- $name: kind $kind ("
	  . ($decl{$name}{implicit} ? 'it returns a window_def: no line in proxy/api.tsv' : 'proxy/api.tsv') . ")\n";

	if ($kind eq 'any')
	{
		die "gen.pl: $name: kind any needs a scalar result\n" if $setof || $void;
		$out .= <<"EOT";
CREATE FUNCTION streamforge.px_$name(${\ arg_list($f, 0)})
RETURNS $r->{type}
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
$SP
AS \$\$
    CLUSTER 'streamforge';
    RUN ON ANY;
    ${\ ($r->{type} =~ /^streamforge\.(\w+)$/ && $types{$1}
	? "SELECT px_r.* FROM streamforge.$name($call_args) px_r;"
	: "SELECT streamforge.$name($call_args) AS px_$name;")}
\$\$;
COMMENT ON FUNCTION streamforge.px_$name($ident) IS
    'internal: $name on any shard';

CREATE FUNCTION streamforge.$name(${\ arg_list($f, 1)})
RETURNS $r->{type}
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
$SP
AS \$\$
BEGIN
    -- the SQL/MED server must exist before PL/Proxy looks the cluster up
    PERFORM streamforge.shard_count();
    RETURN streamforge.px_$name($pos_args);
EXCEPTION WHEN internal_error THEN
    PERFORM streamforge.px_unreachable(ARRAY[]::integer[], SQLERRM);
    RAISE;
END
\$\$;
COMMENT ON FUNCTION streamforge.$name($ident) IS
    '${\ ($comment{$name} // $name)} (computed by any shard)';

EOT
		return $out;
	}

	my ($pi) = grep { $in[$_]{name} eq 'pipeline' } 0 .. $#in;
	die "gen.pl: $name: kind $kind needs a first argument \"pipeline\"\n"
	  unless defined $pi && $pi == 0;

	# the remote function: px_<name>(px_shards integer[], <args>)
	my @px_args = map { "$_->{name} $_->{type}" } @in;
	my $remote_call = "streamforge.$name($call_args)";
	my ($split_arg, $split_json);
	if ($kind eq 'split')
	{
		die "gen.pl: $name: kind split needs the batch as second argument\n" unless $nargs >= 2;
		$split_arg = $in[1];
		$split_json = $split_arg->{type} eq 'jsonb';
		my ($el) = $split_arg->{type} =~ /^streamforge\.(\w+)\[\]$/;
		die "gen.pl: $name: a split argument is jsonb or an array of a streamforge type with a field partition\n"
		  unless $split_json || ($el && $types{$el} && grep { $_->[0] eq 'partition' } @{ $types{$el} });
		$px_args[1] = 'px_batches text[]';
		my @ca = map { $_->{name} } @in;
		$ca[1] = "((px_batches)[1])::$split_arg->{type}";
		$remote_call = "streamforge.$name(" . join(', ', @ca) . ')';
	}
	my ($px_returns, $px_select);
	if ($setof)
	{
		$px_returns = returns_sql($r);
		$px_select = shard_tagged($r)
		  ? "SELECT px_r.*, (px_shards)[1] AS shard FROM $remote_call px_r;"
		  : "SELECT px_r.* FROM $remote_call px_r;";
	}
	elsif ($void)
	{
		$px_returns = 'SETOF integer';
		$px_select = "SELECT (px_shards)[1] AS px_$name FROM $remote_call px_r;";
	}
	else
	{
		$px_returns = "TABLE (px_shard integer, px_value $r->{type})";
		$px_select = "SELECT (px_shards)[1] AS px_shard, $remote_call AS px_value;";
	}
	my $split_clause = $kind eq 'split' ? 'SPLIT px_shards, px_batches;' : 'SPLIT px_shards;';
	my $px_ident = join(', ', 'integer[]', map { (split / /, $_, 2)[1] } @px_args);
	$out .= <<"EOT";
CREATE FUNCTION streamforge.px_$name(px_shards integer[], ${\ join(', ', @px_args)})
RETURNS $px_returns
LANGUAGE plproxy VOLATILE PARALLEL UNSAFE
$SP
AS \$\$
    CLUSTER 'streamforge';
    $split_clause
    RUN ON px_shards;
    $px_select
\$\$;
COMMENT ON FUNCTION streamforge.px_$name($px_ident) IS
    'internal: $name on the given shards';

EOT

	# the public wrapper
	my $route =
	    $kind eq 'partition' ? do {
		my ($pa) = grep { $in[$_]{name} eq 'partition' } 0 .. $#in;
		die "gen.pl: $name: kind partition needs an argument \"partition\"\n" unless defined $pa;
		"streamforge.px_route(\$1, \$" . ($pa + 1) . ", false)";
	  }
	  : $kind eq 'one' ? "ARRAY[streamforge.px_one_shard(\$1, '$name')]"
	  : "streamforge.px_route(\$1, NULL, true)";
	my @decl = $kind eq 'split'
	  ? ("    px_all integer[] := $route;", '    px_targets integer[] := px_all;')
	  : ("    px_targets integer[] := $route;");
	my @pargs = ('px_targets', map { "\$$_" } 1 .. $nargs);
	my $body = '';
	if ($kind eq 'split')
	{
		push @decl, '    px_batches text[];', '    px_firsts bigint[];', '    px_n integer;';
		$pargs[2] = 'px_batches';
		my $elems = $split_json
		  ? "SELECT px_d.e, px_d.o, px_d.e OPERATOR(pg_catalog.->>) 'partition' AS p\n"
		  . "                      FROM pg_catalog.jsonb_array_elements(\$2) WITH ORDINALITY AS px_d(e, o)"
		  : "SELECT px_d.e, px_d.o, (px_d.e).partition AS p\n"
		  . "                      FROM (SELECT pg_catalog.unnest(\$2) AS e,\n"
		  . "                                   pg_catalog.generate_series(1, pg_catalog.cardinality(\$2)) AS o) px_d";
		my $agg = $split_json ? 'pg_catalog.jsonb_agg(px_e.e ORDER BY px_e.o)::pg_catalog.text'
		  : 'pg_catalog.array_agg(px_e.e ORDER BY px_e.o)::pg_catalog.text';
		my $single = $split_json
		  ? "pg_catalog.cardinality(px_all) OPERATOR(pg_catalog.=) 1\n"
		  . "       OR pg_catalog.jsonb_typeof(\$2) IS DISTINCT FROM 'array'"
		  : 'pg_catalog.cardinality(px_all) OPERATOR(pg_catalog.=) 1';
		$body .= <<"EOT";
    -- One target (a placed pipeline, a sharded one on one shard), or a
    -- batch that only the data node can judge: sent whole.
    IF $single THEN
        px_targets := px_all[1:1];
        px_batches := ARRAY[\$2::pg_catalog.text];
    ELSIF \$2 IS NULL THEN
        RAISE EXCEPTION '$split_arg->{name} must not be null' USING ERRCODE = 'null_value_not_allowed';
    ELSE
        -- split by the shard of each element's partition, array order kept
        -- within each shard; an element without a partition goes to shard
        -- 0, which refuses it with streamforge's error
        px_n := pg_catalog.cardinality(px_all);
        SELECT pg_catalog.array_agg(px_g.s ORDER BY px_g.s),
               pg_catalog.array_agg(px_g.b ORDER BY px_g.s),
               pg_catalog.array_agg(px_g.f ORDER BY px_g.s)
          INTO px_targets, px_batches, px_firsts
          FROM (SELECT COALESCE(streamforge.shard_of(px_e.p, px_n), 0) AS s,
                       $agg AS b, pg_catalog.min(px_e.o) AS f
                  FROM ($elems) px_e
                 GROUP BY 1) px_g;
        IF px_targets IS NULL THEN
            RETURN;
        END IF;
    END IF;
EOT
	}
	my $call = "streamforge.px_$name(" . join(', ', @pargs) . ')';
	if ($setof)
	{
		$body .= "    RETURN QUERY SELECT * FROM $call px_r${\ order_by($r)};\n";
	}
	elsif ($void)
	{
		$body .= "    PERFORM $call;\n";
	}
	else
	{
		push @decl, "    px_v $r->{type};";
		my $m =
		    $kind ne q{pipeline} ? q{(pg_catalog.array_agg(px_r.px_value))[1]}
		  : $merge eq 'sum' ? "pg_catalog.sum(px_r.px_value)::$r->{type}"
		  : $merge eq 'min' ? "CASE WHEN pg_catalog.bool_or(px_r.px_value IS NULL) THEN NULL ELSE pg_catalog.min(px_r.px_value) END"
		  : $merge eq 'and' ? 'pg_catalog.bool_and(px_r.px_value)'
		  : $merge eq 'first' ? '(pg_catalog.array_agg(px_r.px_value ORDER BY px_r.px_shard))[1]'
		  : die "gen.pl: $name: a scalar result of kind $kind needs a merge (first, sum, min, and) in proxy/api.tsv\n";
		$body .= "    SELECT $m INTO px_v FROM $call px_r;\n    RETURN px_v;\n";
	}
	$body .= "    RETURN;\n" if $setof || $void;
	$body =~ s/^/    /mg;
	# A split batch refused by a shard (idempotent kinds only): every
	# part is sent again alone, in shard order, so that when the error
	# reaches the caller every other shard has applied its part (a replay
	# where the parallel call had), and the error raised is that of the
	# refusing part whose first delivery comes first in the array
	# (docs/scale-out.md, "A batch spanning shards").
	my $settle = '';
	if ($kind eq 'split' && $retry)
	{
		push @decl, '    px_i integer;', '    px_o bigint;', '    px_state text;', '    px_msg text;',
		  '    px_detail text;', '    px_hint text;', '    px_s text;', '    px_m text;', '    px_d text;',
		  '    px_h text;', '    px_failed integer;';
		my $one = "streamforge.px_$name(ARRAY[px_targets[px_i]], \$1, ARRAY[px_batches[px_i]]"
		  . join('', map { ", \$$_" } 3 .. $nargs) . ')';
		$settle = <<"EOT";
            IF pg_catalog.cardinality(px_targets) OPERATOR(pg_catalog.>) 1
               AND pg_catalog.cardinality(px_batches) OPERATOR(pg_catalog.=) pg_catalog.cardinality(px_targets) THEN
                FOR px_i IN 1 .. pg_catalog.cardinality(px_targets) LOOP
                    BEGIN
                        RETURN QUERY SELECT * FROM $one px_r${\ order_by($r)};
                    EXCEPTION
                        WHEN query_canceled THEN
                            RAISE;
                        WHEN OTHERS THEN
                            GET STACKED DIAGNOSTICS px_s = RETURNED_SQLSTATE, px_m = MESSAGE_TEXT,
                                px_d = PG_EXCEPTION_DETAIL, px_h = PG_EXCEPTION_HINT;
                            IF px_o IS NULL OR px_firsts[px_i] OPERATOR(pg_catalog.<) px_o THEN
                                px_o := px_firsts[px_i];
                                px_failed := px_targets[px_i];
                                px_state := px_s;
                                px_msg := px_m;
                                px_detail := px_d;
                                px_hint := px_h;
                            END IF;
                    END;
                END LOOP;
                IF px_state IS NULL THEN
                    RETURN;     -- every part went through alone
                END IF;
                IF px_state OPERATOR(pg_catalog.=) 'XX000' THEN
                    PERFORM streamforge.px_unreachable(ARRAY[px_failed], px_msg);
                END IF;
                RAISE EXCEPTION USING ERRCODE = px_state, MESSAGE = px_msg,
                    DETAIL = COALESCE(px_detail, ''), HINT = COALESCE(px_hint, '');
            END IF;
EOT
	}
	$body = $retry && $settle ne ''
	  ? "    -- a lost connection (a node restarted since the last call) is\n"
	  . "    -- retried once on a new one (px_retry)\n"
	  . "    FOR px_try IN 1 .. 2 LOOP\n        BEGIN\n"
	  . join('', map { "    $_\n" } split /\n/, $body)
	  . "        EXCEPTION\n"
	  . "          WHEN query_canceled THEN\n"
	  . "            RAISE;\n"
	  . "          WHEN OTHERS THEN\n"
	  . "            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN\n"
	  . "                CONTINUE;\n"
	  . "            END IF;\n"
	  . $settle
	  . "            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);\n"
	  . "            RAISE;\n"
	  . "        END;\n    END LOOP;"
	  : $retry
	  ? "    -- a lost connection (a node restarted since the last call) is\n"
	  . "    -- retried once on a new one (px_retry)\n"
	  . "    FOR px_try IN 1 .. 2 LOOP\n        BEGIN\n"
	  . join('', map { "    $_\n" } split /\n/, $body)
	  . "        EXCEPTION WHEN admin_shutdown OR crash_shutdown OR internal_error THEN\n"
	  . "            IF px_try OPERATOR(pg_catalog.=) 1 AND streamforge.px_retry(SQLSTATE, SQLERRM) THEN\n"
	  . "                CONTINUE;\n"
	  . "            END IF;\n"
	  . "            PERFORM streamforge.px_unreachable(px_targets, SQLERRM);\n"
	  . "            RAISE;\n"
	  . "        END;\n    END LOOP;"
	  : "    BEGIN\n$body    EXCEPTION WHEN internal_error THEN\n"
	  . "        PERFORM streamforge.px_unreachable(px_targets, SQLERRM);\n"
	  . "        RAISE;\n    END;";
	$out .= <<"EOT";
CREATE FUNCTION streamforge.$name(${\ arg_list($f, 1)})
RETURNS ${\ returns_sql($r)}
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
$SP
AS \$\$
DECLARE
${\ join("\n", @decl)}
BEGIN
$body
END
\$\$;
COMMENT ON FUNCTION streamforge.$name($ident) IS
    '${\ ($comment{$name} // $name)} (routed: $kind)';

EOT
	return $out;
}

my $generated = "-- ------------------------------------------------------------------\n"
  . "-- Generated by proxy/gen.pl from proxy/api.tsv and the signatures of\n"
  . "-- sql/objects/*.sql: do not edit here.\n"
  . "-- ------------------------------------------------------------------\n";
for my $name (@decl_order)
{
	my $d = $decl{$name};
	next if $d->{kind} eq 'router';
	for my $id (sort keys %{ $funcs{$name} })
	{
		note_types($funcs{$name}{$id}) unless $d->{kind} eq 'node';
	}
	next if $d->{kind} eq 'hand' || $d->{kind} eq 'node';
	$generated .= gen_function($funcs{$name}{$_}, $d->{kind}, $d->{merge}, $d->{retry})
	  for sort keys %{ $funcs{$name} };
}
$generated =~ s/\n+$/\n/;

sub types_sql
{
	my (%except) = map { $_ => 1 } @_;
	my $s = '';
	for my $t (sort { ($a eq 'window_def' ? 0 : 1) <=> ($b eq 'window_def' ? 0 : 1) || $a cmp $b } keys %types_used)
	{
		next if $except{$t};
		die "gen.pl: the API uses the type streamforge.$t, which sql/schema/*.sql does not create\n"
		  unless $types{$t};
		my @cols = map { "    $_->[0] $_->[1]" } @{ $types{$t} };
		push @cols, '    shard integer       -- router only: the shard that numbered the row'
		  if $t eq 'change' || $t eq 'late_event';
		$s .= "CREATE TYPE streamforge.$t AS (\n" . join(",\n", @cols) . "\n);\n\n";
	}
	$s =~ s/\n+$/\n/;
	return $s;
}

# --- create_pipeline's arguments, for the hand-written create_* wrappers
# of proxy/router.sql.in (issue 41: the options of src/codec/options.def
# reach the router through the node's signature).  Tokens, inside any line:
#   @create_params@   its arguments after "name", with their defaults
#   @create_args@     their names, comma-separated
#   @create_types@    their types (for COMMENT ON FUNCTION)
#   @create_args_from:EXPR@   each argument read from the definition
#                     document EXPR by its name and SQL type (absent:
#                     NULL, or the argument's default)
my @create_args;
{
	my @ids = keys %{ $funcs{create_pipeline} // {} };
	die "gen.pl: the data node must define exactly one streamforge.create_pipeline\n"
	  unless @ids == 1;
	my @a = in_args($funcs{create_pipeline}{ $ids[0] });
	die "gen.pl: create_pipeline's first argument must be name text\n"
	  unless $a[0]{name} eq 'name' && $a[0]{type} eq 'text';
	@create_args = @a[ 1 .. $#a ];
}

sub arg_from_document
{
	my ($a, $d) = @_;
	my $k = "'$a->{name}'";
	my $e;
	if ($a->{type} eq 'streamforge.window_def[]')
	{
		$e = "ARRAY(SELECT pg_catalog.jsonb_populate_record(NULL::streamforge.window_def, px_w) "
		  . "FROM pg_catalog.jsonb_array_elements($d OPERATOR(pg_catalog.->) $k) px_w)";
	}
	elsif ($a->{type} =~ /^(\w+)\[\]$/)
	{
		$e = "CASE WHEN $d OPERATOR(pg_catalog.?) $k THEN ARRAY(SELECT pg_catalog.jsonb_array_elements_text("
		  . "$d OPERATOR(pg_catalog.->) $k)::pg_catalog.$1) END";
	}
	else
	{
		my %pg = (bigint => 'int8', text => 'text', interval => 'interval', integer => 'int4', boolean => 'bool');
		my $t = $pg{ $a->{type} } or die "gen.pl: create_pipeline's argument $a->{name} has a type the router cannot read from a document: $a->{type}\n";
		$e = "($d OPERATOR(pg_catalog.->>) $k)::pg_catalog.$t";
	}
	$e = "COALESCE($e, $a->{default})"
	  if defined $a->{default} && $a->{default} !~ /^NULL$/i;
	return $e;
}

sub create_token
{
	my ($what, $expr) = @_;
	return join(', ', map { "$_->{name} $_->{type}" . (defined $_->{default} ? " DEFAULT $_->{default}" : '') } @create_args)
	  if $what eq 'params';
	return join(', ', map { $_->{name} } @create_args) if $what eq 'args';
	return join(', ', map { $_->{type} } @create_args) if $what eq 'types';
	return join(",\n        ", map { arg_from_document($_, $expr) } @create_args);
}

my %hand_defined;

sub expand
{
	my ($file, $depth) = @_;
	die "gen.pl: \@include nested too deep at $file\n" if $depth > 4;
	my $out = '';
	for my $line (split /(?<=\n)/, slurp($file))
	{
		if ($line =~ /^-- \@include (\S+)\s*$/)
		{
			$out .= expand($1, $depth + 1);
		}
		elsif ($line =~ /^-- \@types\s*$/)
		{
			$out .= types_sql();
		}
		elsif ($line =~ /^-- \@types-except (.+?)\s*$/)
		{
			$out .= types_sql(split ' ', $1);
		}
		elsif ($line =~ /^-- \@generated\s*$/)
		{
			$out .= $generated;
		}
		else
		{
			$line =~ s/\@create_(params|args|types)\@/create_token($1)/ge;
			$line =~ s/\@create_args_from:([^@]+)\@/create_token('from', $1)/ge;
			$hand_defined{$1} = 1 if $line =~ /^CREATE FUNCTION streamforge\.(\w+)\(/;
			$out .= $line;
		}
	}
	return $out;
}

my $script = expand($template, 0);
my @undefined = grep { $decl{$_}{kind} =~ /^(hand|router)$/ && !$hand_defined{$_} } @decl_order;
die "gen.pl: proxy/api.tsv declares as hand functions that $template does not define: @undefined\n"
  if @undefined;
if ($replace)
{
	$script =~ s/^CREATE FUNCTION /CREATE OR REPLACE FUNCTION /mg;
	# create_pipeline's arguments are only ever appended (src/codec/
	# options.def): an update that adds one has created the wrappers that
	# take them as new overloads; the older ones go (no CASCADE: a user's
	# object that calls one stops the update)
	my $n = 1 + @create_args;
	$script .= <<"EOS";

-- The create_* wrappers of an older create_pipeline (proxy/gen.pl)
DO \$px\$
DECLARE
    f pg_catalog.regprocedure;
BEGIN
    FOR f IN SELECT p.oid::pg_catalog.regprocedure FROM pg_catalog.pg_proc p
              WHERE p.pronamespace OPERATOR(pg_catalog.=) 'streamforge'::pg_catalog.regnamespace
                AND ((p.proname OPERATOR(pg_catalog.=) ANY (ARRAY['create_pipeline', 'create_sharded_pipeline', 'definition_of', 'px_definition_of'])
                      AND p.pronargs OPERATOR(pg_catalog.<>) $n)
                     OR (p.proname OPERATOR(pg_catalog.=) 'px_create'
                         AND p.pronargs OPERATOR(pg_catalog.<>) ${\($n + 1)}))
    LOOP
        EXECUTE pg_catalog.format('DROP FUNCTION %s', f);
    END LOOP;
END
\$px\$;
EOS
}
print $script;
