#!/usr/bin/env perl
# scripts/options.pl: the SQL that the table of options writes.
#
#   perl scripts/options.pl            rewrite the generated blocks in place
#   perl scripts/options.pl --check    fail (exit 1) if one is stale
#
# Reads src/codec/options.def (one SF_OPTION line per argument of
# create_pipeline after "name", in argument order) and writes the text
# between
#   -- @options <block> begin ...
#   -- @options end
# in the files of sql/objects/:
#   create_pipeline   (30_functions.sql) streamforge.create_pipeline and its
#                     COMMENT
#   definition_of     (30_functions.sql) streamforge.definition_of and its
#                     COMMENT
#   pipeline_info     (85_metrics.sql) pipeline_info's column per option
#                     since 0.3.0, read from the document d.definition
#                     (the options before 0.3.0 have their own older
#                     columns; a view's columns are only appended)
# The chain: options.def -> this script -> sql/objects -> proxy/gen.pl (the
# router's create_* wrappers read create_pipeline's signature) -> the
# router.  test/run.d/options.sh runs --check.
use strict;
use warnings;
use File::Basename qw(dirname);

my $check = @ARGV && $ARGV[0] eq '--check';
my $root = dirname(dirname(__FILE__));

# ---------------------------------------------------------------- the table
my @opts;
{
	open(my $fh, '<', "$root/src/codec/options.def") or die "options.def: $!";
	while (my $l = <$fh>)
	{
		next unless $l =~ /^SF_OPTION\(/;
		$l =~ /^SF_OPTION\((\w+),\s*"([^"]*)",\s*(NULL|"((?:[^"\\]|\\.)*)"),\s*(\w+),\s*SF_V\((\d+),\s*(\d+),\s*(\d+)\)/
		  or die "options.def: cannot read: $l";
		push @opts, {
			name => $1,
			type => $2,
			default => ($3 eq 'NULL' ? undef : $4),
			kind => $5,
			since => $6 * 10000 + $7 * 100 + $8,
		};
	}
	die "options.def: no option" unless @opts;
}

# ------------------------------------------------------------ the blocks
sub signature
{
	my ($fn, $returns, $symbol, $volatility, $comment) = @_;
	my @args = ('name text');
	for my $o (@opts)
	{
		push @args, "$o->{name} $o->{type}"
		  . (defined $o->{default} ? " DEFAULT $o->{default}" : '');
	}
	# the argument types, wrapped at 76 columns
	my @types = ('text', map { $_->{type} } @opts);
	my ($types, $line) = ('', '   ');
	for my $i (0 .. $#types)
	{
		my $t = $types[$i] . ($i < $#types ? ',' : '');
		if (length($line) + 1 + length($t) > 76)
		{
			$types .= "$line\n";
			$line = '   ';
		}
		$line .= " $t";
	}
	$types .= $line;
	return "CREATE OR REPLACE FUNCTION streamforge.$fn("
	  . join(",\n    ", @args) . ")\n"
	  . "RETURNS $returns\n"
	  . "AS 'MODULE_PATHNAME', '$symbol'\n"
	  . "LANGUAGE C $volatility;\n\n"
	  . "COMMENT ON FUNCTION streamforge.$fn(\n$types) IS\n"
	  . "    '$comment';\n";
}

my %cast = (bigint => 'pg_catalog.int8', interval => 'pg_catalog.interval',
	integer => 'pg_catalog.int4', boolean => 'pg_catalog.bool');

sub info_column
{
	my ($o) = @_;
	my $get = "d.definition OPERATOR(pg_catalog.->>) '$o->{name}'";
	if ($o->{type} eq 'text[]')
	{
		return "       CASE WHEN d.definition OPERATOR(pg_catalog.?) '$o->{name}'\n"
		  . "            THEN ARRAY(SELECT pg_catalog.jsonb_array_elements_text(\n"
		  . "                                  d.definition OPERATOR(pg_catalog.->) '$o->{name}'))\n"
		  . "       END AS $o->{name}";
	}
	my $v;
	if ($o->{type} eq 'text')
	{
		$v = $get;
	}
	elsif (exists $cast{ $o->{type} })
	{
		$v = "($get)::$cast{$o->{type}}";
	}
	else
	{
		die "options.pl: no pipeline_info rule for SQL type $o->{type} (option $o->{name})";
	}
	# the key is absent at the default (SF_OPT_OMIT)
	$v = "COALESCE($v, $o->{default})"
	  if defined $o->{default} && $o->{default} ne 'NULL';
	return "       $v AS $o->{name}";
}

my %blocks = (
	create_pipeline => signature('create_pipeline', 'void',
		'sf_create_pipeline', 'VOLATILE PARALLEL UNSAFE',
		'create a pipeline with its partitions, windows and allowed lateness'),
	definition_of => signature('definition_of', 'jsonb',
		'sf_definition_of', 'STABLE PARALLEL SAFE',
		'the definition document create_pipeline would store for these arguments (creates nothing)'),
	pipeline_info => join(",\n",
		map { info_column($_) } grep { $_->{since} >= 300 } @opts) . "\n",
);

# ------------------------------------------------------------ the files
my $stale = 0;
my %seen;
for my $file (glob("$root/sql/objects/*.sql"))
{
	open(my $fh, '<', $file) or die "$file: $!";
	my $text = do { local $/; <$fh> };
	close $fh;
	my $new = $text;
	$new =~ s{(^-- \@options (\w+) begin[^\n]*\n)(.*?)(^-- \@options end$)}{
		my ($open, $name, $close) = ($1, $2, $4);
		die "$file: unknown block $name\n" unless exists $blocks{$name};
		$seen{$name}++;
		$open . $blocks{$name} . $close
	}gmse;
	next if $new eq $text;
	my $rel = $file =~ s{^\Q$root\E/}{}r;
	if ($check)
	{
		print STDERR "options: $rel is stale (run perl scripts/options.pl)\n";
		$stale = 1;
	}
	else
	{
		open(my $out, '>', $file) or die "$file: $!";
		print $out $new;
		close $out;
		print "options: rewrote $rel\n";
	}
}
for my $name (sort keys %blocks)
{
	next if $seen{$name};
	print STDERR "options: no block \"-- \@options $name begin\" in sql/objects/\n";
	$stale = 1;
}
exit $stale;
