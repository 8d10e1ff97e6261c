# Measures pipelines (issue 27, docs/aggregates.md) survive what every
# pipeline survives: pg_dump / pg_restore carry their definitions (the
# measures and aggregates columns), snapshots (binary format 3 since
# 0.4.0; version 2 checkpoints before) and
# journals ('V' entries) over, and an immediate shutdown (crash) loses no
# committed delivery; both then go on exactly like the original.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DumpRestore;

my $node = PostgreSQL::Test::Cluster->new('measures');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', 'CREATE EXTENSION streamforge');

# one pipeline compacted at every call (snapshot + journal), one journal only
$node->safe_psql('src', "
SELECT streamforge.create_pipeline(n, ARRAY['a', 'b'],
         ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 3)], 2,
         measures => ARRAY['x', 'y'],
         aggregates => ARRAY['count', 'sum(x)', 'avg(y)', 'var_samp(x)',
                             'first(y)', 'last(x)', 'count_if(y > 3) AS big'])
  FROM unnest(ARRAY['snap', 'jour']) AS n;
SELECT streamforge.configure_outputs('jour');
");

sub feed
{
	my ($db, $p, $from, $to, $threshold) = @_;
	my $sql = "SET streamforge.compaction_threshold = $threshold;\n";
	for my $i ($from .. $to)
	{
		my $part = $i % 2 ? 'b' : 'a';
		my $off = int($i / 2);
		my ($x, $y) = ($i * 7 % 11 - 5, $i % 6);
		$sql .=
		    "SELECT seq, op, window_name, key, window_start, window_end, count, aggregates "
		  . "FROM streamforge.ingest_measures('$p', '$part', $off, 'e$i', "
		  . "'k" . ($i % 3) . "', " . ($i * 3 % 17 + $i) . ", ARRAY[$x, $y]);\n";
		$sql .= "SELECT * FROM streamforge.advance('$p', '$part', "
		  . ($i - 5) . ");\n"
		  if $i % 5 == 0;
	}
	return $node->safe_psql($db, $sql);
}

feed('src', 'snap', 0, 59, 0);
feed('src', 'jour', 0, 59, -1);
is( $node->safe_psql(
		'src',
		"SELECT string_agg(name || ':' || coalesce(get_byte(snapshot, 8)::text, '-') || ':' || "
		  . "(SELECT count(*) > 0 FROM streamforge.journal j WHERE j.pipeline_id = p.id), "
		  . "',' ORDER BY name) FROM streamforge.pipeline p"),
	'jour:-:true,snap:3:true',
	'one pipeline has a format 3 snapshot and a journal, the other only a journal');

my $state_sql = "
SELECT name, streamforge.checkpoint(name), s.*
  FROM streamforge.pipeline, streamforge.stats(name) s ORDER BY name;
SELECT name, definition -> 'measures', definition -> 'aggregates' FROM streamforge.pipeline ORDER BY name;
SELECT * FROM streamforge.live_aggregates('snap');
SELECT * FROM streamforge.live_aggregates('jour');
SELECT seq, aggregates FROM streamforge.changelog ORDER BY pipeline, seq;
SELECT window_name, key, window_start, aggregates FROM streamforge.results ORDER BY 1, 2, 3;
";
my $before = $node->safe_psql('src', $state_sql);
like($before, qr/"first_y"/, 'the state shows the declared aggregates');

# --- pg_dump / pg_restore ---
dump_restore($node, 'src', 'dst');
is($node->safe_psql('dst', $state_sql),
	$before, 'definitions, snapshots, journals and outputs are restored intact');

my $src_out = feed('src', 'snap', 60, 89, 0) . feed('src', 'jour', 60, 89, -1);
my $dst_out = feed('dst', 'snap', 60, 89, 0) . feed('dst', 'jour', 60, 89, -1);
like($src_out, qr/\|upsert\|/, 'the continued run emits changes');
like($node->safe_psql('src', "SELECT aggregates FROM streamforge.changelog WHERE pipeline = 'jour' ORDER BY seq DESC LIMIT 1"),
	qr/"sum_x"/, 'and the changelog has their aggregates');
is($dst_out, $src_out, 'the restored pipelines emit the same changes');

# --- crash: an immediate shutdown after committed deliveries ---
my $pre = $node->safe_psql('src', $state_sql);
$node->stop('immediate');
$node->start;
is($node->safe_psql('src', $state_sql), $pre,
	'after a crash the state is the committed one');
my $after_crash = feed('src', 'snap', 90, 119, 0) . feed('src', 'jour', 90, 119, -1);
my $dst_more = feed('dst', 'snap', 90, 119, 0) . feed('dst', 'jour', 90, 119, -1);
is($after_crash, $dst_more, 'and goes on like the copy that did not crash');
is($node->safe_psql('src', $state_sql), $node->safe_psql('dst', $state_sql),
	'both end in the same state');

$node->stop;
done_testing();
