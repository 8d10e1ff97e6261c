# The documentation runs: every ```sql block of README.md and of docs/*.md,
# in order, each file in a fresh database of its own (with the extension
# created first unless the file creates it), each block in a psql session
# of its own that stops at the first error.  A block fails the test when it
# fails, or, marked <!-- docs-test: error -->, when it does not; blocks
# marked skip are not run, and those marked pg_cron are run by
# test/t/050_outputs_cron.pl (markers: test/t/DocsBlocks.pm), which also
# runs the whole of docs/recipe-clicks-per-minute.md, a pg_cron recipe.  Roles a file
# creates are dropped after it, so every file starts from the same cluster.
# A failure names the file, the block's number and its line.

use strict;
use warnings;

use File::Basename qw(dirname basename);
use File::Find qw(find);
use lib dirname(__FILE__);
use DocsBlocks qw(parse_blocks read_blocks);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

# The markers themselves, on a sample.
my @sample = parse_blocks(<<'MD');
```sql
SELECT 1;
```
<!-- docs-test: skip -->

```sql
\! shell
```
<!-- docs-test: error -->
```sql
SELECT 1 / 0;
```
<!-- docs-test: pg_cron -->
Some text in between.
```sql
SELECT 2;
```
```text
not sql
```
MD
is_deeply(
	[ map { "$_->{line}:$_->{mode}:$_->{sql}" } @sample ],
	[
		"1::SELECT 1;\n", "6:skip:\\! shell\n",
		"10:error:SELECT 1 / 0;\n", "15::SELECT 2;\n"
	],
	'blocks and markers are parsed as documented');
ok(!eval { parse_blocks("<!-- docs-test: skpi -->\n```sql\nSELECT 1;\n```\n"); 1 },
	'an unknown marker is refused');

my $top = dirname(__FILE__) . '/../..';
my @files = ("$top/README.md", sort glob("$top/docs/*.md"));
# files that need pg_cron or a Kafka cluster throughout, run whole by another test
my %elsewhere = (
	'docs/recipe-clicks-per-minute.md' => 'test/t/050_outputs_cron.pl',
	'docs/kafka.md' => 'test/t/143_kafka_docs.pl');

my $node = PostgreSQL::Test::Cluster->new('docs');
$node->init;
$node->start;

my %roles_before = map { $_ => 1 } split /\n/,
  $node->safe_psql('postgres', 'SELECT rolname FROM pg_roles');
my $nfile = 0;
for my $file (@files)
{
	my $name = $file eq "$top/README.md" ? 'README.md' : 'docs/' . basename($file);
	if ($elsewhere{$name})
	{
		note("$name: run by $elsewhere{$name}");
		next;
	}
	my @blocks = read_blocks($file);
	my @run = grep { $_->{mode} eq '' || $_->{mode} eq 'error' } @blocks;
	next unless @run;

	my $db = 'docs_' . ++$nfile;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION streamforge')
	  unless grep { $_->{sql} =~ /CREATE\s+EXTENSION\s+(IF\s+NOT\s+EXISTS\s+)?streamforge/i }
	  @run;

	for my $n (1 .. @blocks)
	{
		my $b = $blocks[ $n - 1 ];
		my $what = "$name block $n (line $b->{line})";
		if ($b->{mode} eq 'skip' || $b->{mode} eq 'pg_cron')
		{
			note("$what: not run here ($b->{mode})");
			next;
		}
		my ($ret, $stdout, $stderr) =
		  $node->psql($db, $b->{sql}, on_error_stop => 1);
		if ($b->{mode} eq 'error')
		{
			ok($ret != 0 && $stderr =~ /ERROR/, "$what fails, as documented")
			  or diag("block:\n$b->{sql}\noutput:\n$stdout");
		}
		else
		{
			is($ret, 0, "$what runs")
			  or diag("block:\n$b->{sql}\nerror:\n$stderr");
		}
	}

	$node->safe_psql('postgres', "DROP DATABASE $db");
	for my $role (split /\n/,
		$node->safe_psql('postgres', 'SELECT rolname FROM pg_roles'))
	{
		next if $roles_before{$role};
		$node->safe_psql('postgres', qq{DROP ROLE "$role"});
	}
}
cmp_ok($nfile, '>=', 2, 'README.md and docs/ have SQL to run');

# The reference consumer of docs/outputs.md (issue 25): it stops at the
# first error, and fails if its copy ever differs from the results table.
$node->safe_psql('postgres', 'CREATE DATABASE docs_consumer');
$node->safe_psql('docs_consumer', 'CREATE EXTENSION streamforge');
my ($cret, $cout, $cerr) = $node->psql('docs_consumer',
	slurp("$top/examples/consumer.sql"), on_error_stop => 1);
is($cret, 0, 'examples/consumer.sql runs') or diag($cerr);
like($cout, qr/rebuilt in epoch \d+\n.*applied 4 changes.*rebuilt in epoch/s,
	'... rebuilds after the restore');
$node->safe_psql('postgres', 'DROP DATABASE docs_consumer');

# The demo (issue 45): examples/demo.sql runs, a query-defined aggregate
# over timestamps first, and docs/demo.md shows exactly what it prints (as
# ./scripts/demo.sh runs it: psql -q, aligned; its NOTICE goes to stderr).
$node->safe_psql('postgres', 'CREATE DATABASE docs_demo');
$node->safe_psql('docs_demo', 'CREATE EXTENSION streamforge');
my ($dret, $dout, $derr) = $node->psql('docs_demo', slurp("$top/examples/demo.sql"),
	on_error_stop => 1, extra_params => [ '-P', 'format=aligned', '-P', 'tuples_only=off' ]);
is($dret, 0, 'examples/demo.sql runs') or diag($derr);
like($dout, qr/Part 1: an aggregate defined by a query.*create_aggregate.*Part 2: the pipeline API/s,
	'... the query-defined aggregate first, the bigint API second');
like($derr, qr/refused with SQLSTATE SF001/, '... and shows an offset conflict refused');
my ($shown) = slurp("$top/docs/demo.md") =~ /^<!-- demo-output:[^\n]*-->\n```text\n(.*?)^```$/ms;
$shown = join('', grep { !/^NOTICE:/ } split /^/m, $shown // '');
$shown =~ s/\n+\z//;
(my $printed = $dout) =~ s/\n+\z//;
if (!is($shown, $printed, 'docs/demo.md shows what examples/demo.sql prints'))
{
	my @s = split /\n/, $shown;
	my @p = split /\n/, $printed;
	my ($first) = grep { ($s[$_] // '') ne ($p[$_] // '') } 0 .. ($#s > $#p ? $#s : $#p);
	diag("first difference at line " . ($first + 1) . ":\ndocs/demo.md: " . ($s[$first] // '(none)')
		  . "\nthe demo:     " . ($p[$first] // '(none)'));
}
$node->safe_psql('postgres', 'DROP DATABASE docs_demo');

# ------------------------------------------------------------------
# What the docs say about the code, checked against it (issue 31).
# ------------------------------------------------------------------
sub slurp
{
	my ($path) = @_;
	open my $fh, '<', $path or die "could not open $path: $!";
	my $text = do { local $/; <$fh> };
	close $fh;
	return $text;
}
my %text = map { my $n = $_ eq "$top/README.md" ? 'README.md' : 'docs/' . basename($_); ($n => slurp($_)) } @files;

# No reference to a specification that is not in the repository: the
# docs, the tests and the SQL point to docs/semantics.md.  (The frozen
# 0.1.0 -> 0.2.0 update script is a released file and keeps its comments.)
my $spec = 'SPEC' . '.md';
my @spec_refs;
find(
	{
		no_chdir => 1,
		wanted => sub {
			return unless -f $_ && /\.(?:md|sql|out|pl|pm|spec|sh|in)$/;
			return if m{/sql/upgrade/streamforge--0\.1\.0--0\.2\.0\.sql$};
			my $t = slurp($_);
			(my $rel = $_) =~ s{^\Q$top\E/}{};
			push @spec_refs, $rel if index($t, $spec) >= 0;
		}
	},
	map { "$top/$_" } qw(README.md CHANGELOG.md docs sql test expected examples));
is(join(', ', sort @spec_refs), '', "no file refers to $spec, which is not in the repository");
like($text{'docs/semantics.md'}, qr/^## Emit modes$/m, 'docs/semantics.md has its "Emit modes" section');

# Links to a heading of a Markdown file resolve (GitHub's anchors).
sub anchors
{
	my ($md) = @_;
	my %a;
	my $in_code = 0;
	for my $l (split /\n/, $md)
	{
		$in_code = !$in_code if $l =~ /^```/;
		next if $in_code || $l !~ /^#+\s+(.*?)\s*$/;
		(my $slug = lc $1) =~ s/[^\w\- ]//g;
		$slug =~ s/ /-/g;
		$a{$slug} = 1;
	}
	return \%a;
}
my @broken;
for my $name (sort keys %text)
{
	my $dir = $name eq 'README.md' ? '' : 'docs/';
	while ($text{$name} =~ /\]\(([\w.\/-]*)#([\w-]+)\)/g)
	{
		my ($target, $anchor) = ($1, $2);
		my $path = $target eq '' ? $name : $dir . $target;
		1 while $path =~ s{[^/]+/\.\./}{};
		my $md = $text{$path} // (-f "$top/$path" ? slurp("$top/$path") : undef);
		push @broken, "$name: $target#$anchor"
		  unless defined $md && anchors($md)->{$anchor};
	}
}
is(join("\n", @broken), '', 'every link to a heading finds it');

# The router's functions: the lists in docs/reference.md and
# docs/scale-out.md (after a "router-functions" marker) are exactly the
# public functions of the current proxy script that streamforge also has;
# docs/reference.md's table of router functions lists the others.
my ($proxy_version) = slurp("$top/proxy/streamforge_proxy.control") =~ /^default_version\s*=\s*'([^']+)'/m;
my $proxy_sql = slurp("$top/proxy/streamforge_proxy--$proxy_version.sql");
my %router = map { $_ => 1 } grep { !/^px_/ } $proxy_sql =~ /^CREATE FUNCTION streamforge\.(\w+)\(/mg;
$node->safe_psql('postgres', 'CREATE DATABASE docs_catalog');
$node->safe_psql('docs_catalog', 'CREATE EXTENSION streamforge');
my %core = map { $_ => 1 } split /\n/, $node->safe_psql('docs_catalog',
	"SELECT DISTINCT proname FROM pg_proc WHERE pronamespace = 'streamforge'::regnamespace");
my @routed = sort grep { $core{$_} } keys %router;
my @router_only = sort grep { !$core{$_} } keys %router;
cmp_ok(scalar @routed, '>=', 10, "proxy/streamforge_proxy--$proxy_version.sql routes streamforge's functions");
for my $name ('docs/reference.md', 'docs/scale-out.md')
{
	my ($list) = $text{$name} =~ /^<!-- router-functions:[^\n]*-->\n([^\n]+)\n/m;
	is( join(', ', sort(($list // '') =~ /`(\w+)`/g)),
		join(', ', @routed),
		"$name lists exactly the functions the router routes")
	  or diag("the list, in the script's order:\n"
		  . join(', ', map { "`$_`" } grep { $core{$_} } grep { !/^px_/ } $proxy_sql =~ /^CREATE FUNCTION streamforge\.(\w+)\(/mg));
}
my ($router_section) = $text{'docs/reference.md'} =~ /^## Router functions[^\n]*\n(.*?)^## /ms;
is( join(', ', sort(($router_section // '') =~ /^\| `(\w+)\(/mg)),
	join(', ', @router_only),
	"docs/reference.md's table of router functions lists those streamforge lacks");

# The Settings table: every setting the library defines, with its default
# and who may set it.  The library of this version is streamforge-<version>
# ('streamforge' is the compat library, release 0.3.0's: docs/packaging.md).
my ($core_version) = slurp("$top/streamforge.control") =~ /^default_version\s*=\s*'([^']+)'/m;
my $settings = $node->safe_psql('docs_catalog', qq{
LOAD 'streamforge-$core_version';
SELECT name || ' ' || current_setting(name) || ' '
       || CASE context WHEN 'user' THEN 'any role' WHEN 'superuser' THEN 'superusers' ELSE context END
  FROM pg_settings WHERE name LIKE 'streamforge.%' ORDER BY name});
my ($settings_section) = $text{'docs/reference.md'} =~ /^## Settings\n(.*?)(?:^## |\z)/ms;
my @documented;
while (($settings_section // '') =~ /^\| `(streamforge\.\w+)` \| `([^`]*)` \| ([^|]*?) \|/mg)
{
	push @documented, "$1 $2 $3";
}
cmp_ok(scalar(split /\n/, $settings), '>=', 4, 'the library defines its settings');
is(join("\n", sort @documented), $settings,
	"docs/reference.md's Settings table has every setting, its default and who may set it");

# The function reference (issue 45): every function of the schema
# streamforge has a comment (sql/objects/98_comments.sql), and the
# generated part of docs/reference.md is exactly what scripts/reference.sql
# makes of the catalog (./scripts/reference.sh rewrites it).
my $uncommented = $node->safe_psql('docs_catalog', q{
SELECT string_agg(p.oid::regprocedure::text, ', ' ORDER BY p.oid::regprocedure::text)
  FROM pg_proc AS p
 WHERE p.pronamespace = 'streamforge'::regnamespace
   AND obj_description(p.oid, 'pg_proc') IS NULL});
is($uncommented, '',
	'every function of the schema streamforge has a comment (add the missing ones to sql/objects/98_comments.sql)');
my ($rret, $generated, $rerr) = $node->psql('docs_catalog', slurp("$top/scripts/reference.sql"), on_error_stop => 1);
is($rret, 0, 'scripts/reference.sql runs') or diag($rerr);
$generated =~ s/\n+\z//;
my ($documented_ref) = $text{'docs/reference.md'} =~
  /^(<!-- reference: generated .*?^<!-- reference: end of the generated part -->)$/ms;
cmp_ok(scalar(() = $generated =~ /^\| `\w+\(/mg), '>=', 80, '... and lists the functions');
unlike($generated, qr/Other functions/, '... every one of them in a group of scripts/reference.sql');
if (!is($documented_ref // '', $generated,
	'docs/reference.md is what the catalog generates (run ./scripts/reference.sh)'))
{
	my @d = split /\n/, $documented_ref // '';
	my @g = split /\n/, $generated;
	my ($first) = grep { ($d[$_] // '') ne ($g[$_] // '') } 0 .. ($#d > $#g ? $#d : $#g);
	diag("first difference at line " . ($first + 1) . " of the generated part:\n"
		  . "docs/reference.md: " . ($d[$first] // '(none)') . "\n"
		  . "the catalog:       " . ($g[$first] // '(none)'));
}
$node->safe_psql('postgres', 'DROP DATABASE docs_catalog');

# Role names: the docs' examples run in one cluster, so no two files may
# create the same role (README.md and docs/security.md once both made
# dashboard and collector).
my %made_by;
for my $name (sort keys %text)
{
	for my $b (parse_blocks($text{$name}))
	{
		while ($b->{sql} =~ /\bCREATE\s+(?:ROLE|USER)\s+(?!MAPPING\b)"?(\w+)/gi)
		{
			$made_by{ lc $1 }{$name} = 1;
		}
	}
}
my @clashes = map { "$_: " . join(', ', sort keys %{ $made_by{$_} }) }
  grep { keys %{ $made_by{$_} } > 1 } sort keys %made_by;
is(join("\n", @clashes), '', 'no two documents create the same role');
cmp_ok(scalar(keys %made_by), '>=', 3, '... among the roles they create');

# pg_cron: a role that is not a superuser needs USAGE on the schema cron
# (docs/outputs.md shows it, test/t/050_outputs_cron.pl runs it), and jobs
# stay behind when a database is restored elsewhere.
like($text{'docs/outputs.md'}, qr/^<!-- docs-test: pg_cron -->\n```sql\n(?:[^`]*\n)?GRANT USAGE ON SCHEMA cron TO /m,
	'docs/outputs.md grants USAGE on the schema cron in a block that runs');
like($text{'docs/guide.md'}, qr/GRANT USAGE ON SCHEMA cron/, '... and docs/guide.md says so');
like($text{'docs/outputs.md'}, qr/^### Restoring a database elsewhere$/m,
	'docs/outputs.md says what to do with the jobs of a database restored elsewhere');
like($text{'docs/guide.md'}, qr/restored elsewhere/, '... and docs/guide.md points there');
# A session on the library of before a package upgrade: the upgrade
# section says what the old library's "corrupt journal entry" means, and
# what 0.3.0's own check prints (sql/library_version pins the message).
my ($upgrade_section) = $text{'docs/packaging.md'} =~ /^## Upgrading to 0\.3\.0[^\n]*\n(.*?)^## /ms;
ok(defined $upgrade_section, 'docs/packaging.md has an "Upgrading to 0.3.0" section');
like($upgrade_section // '', qr/corrupt journal entry.*?reconnect/s,
	'... which says that the old library\'s "corrupt journal entry" means reconnect');
like($upgrade_section // '', qr/older than the installed extension version.*Reconnect to load the new library/s,
	'... and quotes the version check of 0.3.0');
my @recipe = read_blocks("$top/docs/recipe-clicks-per-minute.md");
my ($late_click) = grep { $recipe[$_]{sql} =~ /click-1006/ } 0 .. $#recipe;
ok(defined $late_click && $late_click > 0 && $recipe[ $late_click - 1 ]{sql} =~ /pg_sleep/,
	"the recipe's step 6 waits for the job before the late click");

# The README is the landing page (issue 45): short, with the two commands
# (CI's .ci/run runs the test command) and its example runs above.
my $readme_lines = () = $text{'README.md'} =~ /\n/g;
cmp_ok($readme_lines, '<=', 250, 'README.md is at most 250 lines');
like($text{'README.md'}, qr/^\| \*\*1\. the demo\*\* \| `\.\/scripts\/demo\.sh` \|/m, '... with the demo command');
like($text{'README.md'}, qr/^\| \*\*2\. the tests\*\* \| `\.\/scripts\/test\.sh` \|/m, '... and the test command');
like(slurp("$top/.ci/run"), qr/^\.\/scripts\/test\.sh$/m, "... which is what CI runs");
like((grep { $_->{mode} eq '' } read_blocks("$top/README.md"))[0]{sql} // '',
	qr/streamforge\.create_aggregate\(.*streamforge\.tumble\(\w+, interval/s,
	"... and its example is a query-defined aggregate over timestamps");

$node->stop;
done_testing();
