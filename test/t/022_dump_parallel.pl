# Parallel pipelines (writers => 'parallel', issue 46) across pg_dump and
# pg_restore (must-show 6): the lanes, their journals and snapshots, the
# head's journal and snapshot and the outputs are extension configuration
# tables, so a restored database holds the same pipelines, equal to a
# serial pipeline given the same calls; after the restore two writers go on
# concurrently in both databases with the same results.  And DROP EXTENSION
# leaves no parallel pipeline behind in another backend's memory (parallel
# pipelines are held in their own hash, not the serial cache).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DumpRestore;

my $node = PostgreSQL::Test::Cluster->new('dump_parallel');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', 'CREATE EXTENSION streamforge');

# psnap compacts at every commit (snapshots of head and lanes), pjour never
# (journals only); ref is the serial reference of both
$node->safe_psql('src', "
SELECT streamforge.create_pipeline(n, ARRAY['a', 'b', 'c'],
         ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 10),
               streamforge.session('s', 3)], 1,
         writers => CASE WHEN n = 'ref' THEN 'serial' ELSE 'parallel' END)
  FROM unnest(ARRAY['psnap', 'pjour', 'ref']) AS n;
SELECT streamforge.configure_outputs(n)
  FROM unnest(ARRAY['psnap', 'pjour', 'ref']) AS n;
");

# The calls of event $i on pipeline $p: a delivery on its partition (an
# earlier event again every seventh: a duplicate), an advance every fifth.
sub calls
{
	my ($p, $part, $from, $to) = @_;
	my $sql = '';
	for my $i ($from .. $to)
	{
		my $id = $i % 7 == 6 ? $i - 3 : $i;
		$sql .= "SELECT streamforge.ingest_count('$p', '$part', $i, "
		  . "'$part$id', 'k" . ($id % 3) . "', " . ($id * 3 % 17 + $id) . ", "
		  . ($id % 7) . ");\n";
		$sql .= "SELECT count(*) >= 0 FROM streamforge.advance('$p', '$part', "
		  . ($i - 5) . ");\n"
		  if $i % 5 == 0;
	}
	return $sql;
}

my %threshold = (psnap => 0, pjour => -1, ref => -1);

# Two writers on partitions a and b of $p, interleaved: a's transaction is
# open while b's runs and commits, then a commits; the reference gets the
# same calls in commit order.
sub two_writers
{
	my ($db, $p, $from, $to) = @_;
	my $s1 = $node->background_psql($db);
	my $s2 = $node->background_psql($db);
	# psnap: both compact, so s1 commits after s2's compaction (design 4.5
	# 7b: it re-executes against the new snapshots)
	$_->query_safe("SET streamforge.compaction_threshold = $threshold{$p}")
	  for ($s1, $s2);
	$s1->query_safe('BEGIN');
	$s1->query_safe(calls($p, 'a', $from, $to));
	$s2->query_safe('BEGIN');
	$s2->query_safe(calls($p, 'b', $from, $to));
	$s2->query_safe('COMMIT');
	$s1->query_safe('COMMIT');
	$s1->quit;
	$s2->quit;
}

sub run_all
{
	my ($db, $from, $to) = @_;
	two_writers($db, $_, $from, $to) for ('psnap', 'pjour');
	# the reference: b's transaction, then a's (the commit order above)
	$node->safe_psql($db,
		"BEGIN;\n" . calls('ref', 'b', $from, $to) . "COMMIT;\n"
		  . "BEGIN;\n" . calls('ref', 'a', $from, $to) . "COMMIT;");
	# then, uncompacted everywhere, a delivery on c and its advance: psnap
	# has journal rows on top of its snapshots
	$node->safe_psql($db,
		"SET streamforge.compaction_threshold = -1;\n"
		  . "SELECT streamforge.ingest_count(p, 'c', " . ($from ? 1 : 0) . ", 'c$to', 'k1', $to, 1) "
		  . "FROM unnest(ARRAY['psnap', 'pjour', 'ref']) AS p;\n"
		  . "SELECT count(*) >= 0 FROM unnest(ARRAY['psnap', 'pjour', 'ref']) AS p, "
		  . "LATERAL streamforge.advance(p, 'c', " . ($to - 5) . ")");
}

run_all('src', 0, 39);
is( $node->safe_psql(
		'src',
		"SELECT string_agg(name || ':' || (snapshot IS NOT NULL) || ':' || "
		  . "(SELECT count(*) > 0 FROM streamforge.lane_journal j WHERE j.pipeline_id = p.id) || ':' || "
		  . "(SELECT bool_and(l.snapshot IS NOT NULL) FROM streamforge.lane l WHERE l.pipeline_id = p.id), "
		  . "',' ORDER BY name) FROM streamforge.pipeline p WHERE name <> 'ref'"),
	'pjour:false:true:false,psnap:true:true:true',
	'one parallel pipeline has snapshots of head and lanes, the other only journals');

# every parallel pipeline equals the serial reference
my $equal_ref_sql = "
SELECT p, (streamforge.inspect_checkpoint(streamforge.checkpoint(p))::jsonb
            #- '{definition,writers}')
        = streamforge.inspect_checkpoint(streamforge.checkpoint('ref'))::jsonb,
       (SELECT array_agg((op, window_name, key, window_start, window_end, count,
                          sum, min, max) ORDER BY seq)
          FROM streamforge.changelog WHERE pipeline = p)
       IS NOT DISTINCT FROM
       (SELECT array_agg((op, window_name, key, window_start, window_end, count,
                          sum, min, max) ORDER BY seq)
          FROM streamforge.changelog WHERE pipeline = 'ref')
  FROM unnest(ARRAY['pjour', 'psnap']) AS p ORDER BY p";
is($node->safe_psql('src', $equal_ref_sql),
	"pjour|t|t\npsnap|t|t",
	'both parallel pipelines equal the serial reference (checkpoint but for the writers key, changelog)');

my $state_sql = "
SELECT name, streamforge.checkpoint(name), s.*
  FROM streamforge.pipeline, streamforge.stats(name) s ORDER BY name;
SELECT pg_catalog.to_jsonb(p) OPERATOR(pg_catalog.-) 'compacted_at'
  FROM streamforge.pipeline p ORDER BY name;
SELECT * FROM streamforge.lane ORDER BY pipeline_id, lane;
SELECT * FROM streamforge.lane_journal ORDER BY pipeline_id, lane, pos;
SELECT * FROM streamforge.journal ORDER BY pipeline_id, pos;
SELECT * FROM streamforge.partitions('psnap');
SELECT * FROM streamforge.partitions('pjour');
SELECT pipeline, seq, op, window_name, key, window_start, count, sum
  FROM streamforge.changelog ORDER BY pipeline, seq;
SELECT pipeline, late_seq, partition, source_offset, event_id
  FROM streamforge.late_output ORDER BY pipeline, late_seq;
SELECT last_value FROM streamforge.pipeline_id_seq;
";
my $before = $node->safe_psql('src', $state_sql);

# --- pg_dump / pg_restore ---

dump_restore($node, 'src', 'dst');

is($node->safe_psql('dst', $state_sql),
	$before, 'lanes, lane journals, head journal, outputs and state are restored intact');

# both databases go on identically, two writers at a time
run_all('src', 40, 89);
run_all('dst', 40, 89);
is($node->safe_psql('dst', $equal_ref_sql),
	"pjour|t|t\npsnap|t|t",
	'after the restore, two writers at a time, the restored pipelines still equal the reference');
is($node->safe_psql('dst', $state_sql),
	$node->safe_psql('src', $state_sql),
	'and the restored database ends in the same state as the original');

# --- DROP EXTENSION while another backend holds a parallel pipeline ---

my $a = $node->background_psql('src');
$a->query_safe(
	"SELECT streamforge.create_pipeline('t', ARRAY['a'], "
	  . "ARRAY[streamforge.fixed('w', 10)], writers => 'parallel')");
$a->query_safe(
	"SELECT streamforge.ingest_count('t', 'a', $_, 'old$_', 'k', $_, 1)")
  for 0 .. 2;
my $id_old = $a->query_safe("SELECT id FROM streamforge.pipeline WHERE name = 't'");
is($a->query_safe("SELECT count, sum FROM streamforge.live('t')"),
	'3|3', 'session A holds the parallel t');

# session B re-creates the extension and a different parallel t with the
# same id and the same number of commits
$node->safe_psql('src', "
DROP EXTENSION streamforge;
CREATE EXTENSION streamforge;
SELECT setval('streamforge.pipeline_id_seq', $id_old, false);
SELECT streamforge.create_pipeline('t', ARRAY['a'], ARRAY[streamforge.fixed('w', 10)],
                                   writers => 'parallel');
SELECT streamforge.ingest_count('t', 'a', 0, 'new0', 'k', 1, 100);
SELECT streamforge.ingest_count('t', 'a', 1, 'new1', 'k', 2, 100);
SELECT streamforge.ingest_count('t', 'a', 2, 'new2', 'k', 3, 100);
");
is( $node->safe_psql(
		'src', "SELECT id FROM streamforge.pipeline WHERE name = 't'"),
	$id_old,
	'the new t has the same id as the old one');
is($a->query_safe("SELECT count, sum FROM streamforge.live('t')"),
	'3|300', 'session A sees the new t, not the old one it held');
is($a->query_safe(
		"SELECT streamforge.ingest_count('t', 'a', 3, 'new3', 'k', 4, 100)"),
	'1', 'and writes to the new t');
is($node->safe_psql('src', "SELECT count, sum FROM streamforge.live('t')"),
	'4|400', 'which another session reads');
$a->quit;

$node->stop;
done_testing();
