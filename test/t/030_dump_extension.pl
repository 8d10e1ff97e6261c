# The pipelines live in the extension's configuration tables: pg_dump and
# pg_restore carry them over intact (snapshot, journal, sequence), and DROP
# EXTENSION leaves nothing behind, not even in another backend's cache.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DumpRestore;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', 'CREATE EXTENSION streamforge');

# two pipelines: one compacted (snapshot + journal), one journal only
my $setup = "
SELECT streamforge.create_pipeline(n, ARRAY['a', 'b'],
         ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 3)], 1)
  FROM unnest(ARRAY['snap', 'jour']) AS n;
";
$node->safe_psql('src', $setup);

sub feed
{
	my ($db, $p, $from, $to, $threshold) = @_;
	my $sql = "SET streamforge.compaction_threshold = $threshold;\n";
	for my $i ($from .. $to)
	{
		my $part = $i % 2 ? 'b' : 'a';
		my $off = int($i / 2);
		$sql .= "SELECT * FROM streamforge.ingest('$p', '$part', $off, 'e$i', "
		  . "'k" . ($i % 3) . "', " . ($i * 3 % 17 + $i) . ", " . ($i % 7) . ");\n";
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
		"SELECT string_agg(name || ':' || (snapshot IS NOT NULL) || ':' || "
		  . "(SELECT count(*) > 0 FROM streamforge.journal j WHERE j.pipeline_id = p.id), "
		  . "',' ORDER BY name) FROM streamforge.pipeline p"),
	'jour:false:true,snap:true:true',
	'one pipeline has a snapshot and a journal, the other only a journal');

my $state_sql = "
SELECT name, streamforge.checkpoint(name), s.*
  FROM streamforge.pipeline, streamforge.stats(name) s ORDER BY name;
SELECT pg_catalog.to_jsonb(p) OPERATOR(pg_catalog.-) 'compacted_at'
  FROM streamforge.pipeline p ORDER BY name;
SELECT * FROM streamforge.journal ORDER BY pipeline_id, pos;
SELECT last_value FROM streamforge.pipeline_id_seq;
";
my $before = $node->safe_psql('src', $state_sql);

# --- pg_dump / pg_restore ---

dump_restore($node, 'src', 'dst');

is($node->safe_psql('dst', $state_sql),
	$before, 'tables, sequence and state are restored intact');
# (compacted_at, the time of the last snapshot write, is restored too; the
# two databases compact at their own times afterwards)
my $compacted_sql = 'SELECT name, compacted_at FROM streamforge.pipeline ORDER BY name';
is($node->safe_psql('dst', $compacted_sql), $node->safe_psql('src', $compacted_sql),
	'the time of the last compaction is restored');

# both databases go on identically
my $src_out = feed('src', 'snap', 60, 99, 0) . feed('src', 'jour', 60, 99, -1);
my $dst_out = feed('dst', 'snap', 60, 99, 0) . feed('dst', 'jour', 60, 99, -1);
ok(length($src_out) > 0, 'the continued run emits changes');
is($dst_out, $src_out, 'the restored pipelines emit the same changes');
is($node->safe_psql('dst', $state_sql),
	$node->safe_psql('src', $state_sql),
	'and end in the same state');

# a new pipeline in the restored database does not reuse an id
$node->safe_psql('dst',
	"SELECT streamforge.create_pipeline('new', ARRAY['a'], "
	  . "ARRAY[streamforge.fixed('f', 10)])");
is( $node->safe_psql(
		'dst',
		"SELECT count(DISTINCT id) FROM streamforge.pipeline"),
	'3',
	'the id sequence was restored');

# --- DROP EXTENSION while another backend caches a pipeline ---

my $a = $node->background_psql('src');
$a->query_safe(
	"SELECT streamforge.create_pipeline('t', ARRAY['a'], "
	  . "ARRAY[streamforge.fixed('w', 10)])");
$a->query_safe(
	"SELECT count(*) FROM streamforge.ingest('t', 'a', $_, 'old$_', 'k', $_, 1)")
  for 0 .. 2;
my $id_old = $a->query_safe("SELECT id FROM streamforge.pipeline WHERE name = 't'");
is($a->query_safe("SELECT count, sum FROM streamforge.live('t')"),
	'3|3', 'session A has t cached');

# session B re-creates the extension and a different t, with the same id
# and the same number of write calls
$node->safe_psql('src', "
DROP EXTENSION streamforge;
CREATE EXTENSION streamforge;
SELECT setval('streamforge.pipeline_id_seq', $id_old, false);
SELECT streamforge.create_pipeline('t', ARRAY['a'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('t', 'a', 0, 'new0', 'k', 1, 100);
SELECT count(*) FROM streamforge.ingest('t', 'a', 1, 'new1', 'k', 2, 100);
SELECT count(*) FROM streamforge.ingest('t', 'a', 2, 'new2', 'k', 3, 100);
");
is( $node->safe_psql(
		'src', "SELECT id, version FROM streamforge.pipeline WHERE name = 't'"),
	"$id_old|3",
	'the new t has the same id and version as the old one');
is($a->query_safe("SELECT count, sum FROM streamforge.live('t')"),
	'3|300', 'session A sees the new t, not its cached old one');
is( $a->query_safe(
		"SELECT count(*) FROM streamforge.pipeline WHERE name <> 't'"),
	'0',
	'the dropped extension left no pipeline behind');
$a->quit;

$node->safe_psql('src', 'DROP EXTENSION streamforge');
is( $node->safe_psql(
		'src',
		"SELECT to_regclass('streamforge.pipeline') IS NULL AND "
		  . "to_regclass('streamforge.journal') IS NULL AND "
		  . "to_regclass('streamforge.pipeline_id_seq') IS NULL"),
	't',
	'DROP EXTENSION removes the tables and the sequence');

$node->stop;
done_testing();
