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
# files that need pg_cron throughout, run whole by another test
my %elsewhere =
  ('docs/recipe-clicks-per-minute.md' => 'test/t/050_outputs_cron.pl');

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

$node->stop;
done_testing();
