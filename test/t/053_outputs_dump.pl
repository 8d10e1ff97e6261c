# The output tables are configuration tables (docs/outputs.md): pg_dump and
# pg_restore carry their rows over, in an order their foreign keys accept
# (plain SQL format and custom format), and the restored pipeline goes on
# writing outputs where the original left off.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('sink_dump');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql(
	'src', q{
CREATE EXTENSION streamforge;
SELECT streamforge.create_pipeline('d', ARRAY['a'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 3)], 5);
SELECT streamforge.configure_outputs('d', notify => false);
SELECT count(*) FROM streamforge.ingest_batch('d', ARRAY(
    SELECT ROW('a', i, 'e' || i, 'k' || (i % 3), i * 2, i)::streamforge.delivery
      FROM generate_series(0, 49) AS i));
SELECT count(*) FROM streamforge.advance('d', 'a', 60);
SELECT count(*) FROM streamforge.ingest('d', 'a', 50, 'late', 'k0', 1, 1);
SELECT count(*) FROM streamforge.advance('d', 'a', 80);
SELECT streamforge.create_pipeline('quiet', ARRAY['a'], ARRAY[streamforge.fixed('f', 10)]);
});

my $outputs = q{
SELECT 'config', pipeline, changelog::text, results::text, late::text, notify::text,
       NULL, NULL, NULL, NULL, NULL
  FROM streamforge.output_config
UNION ALL
SELECT 'changelog', pipeline, seq::text, op, window_name, key, window_start::text,
       window_end::text, count::text, sum::text, min::text || '/' || max::text
  FROM streamforge.changelog
UNION ALL
SELECT 'results', pipeline, seq::text, NULL, window_name, key, window_start::text,
       window_end::text, count::text, sum::text, min::text || '/' || max::text
  FROM streamforge.results
UNION ALL
SELECT 'late', pipeline, late_seq::text, partition, event_id, key, source_offset::text,
       event_time::text, value::text, watermark::text, NULL
  FROM streamforge.late_output
ORDER BY 1, 2, 3, 5, 6, 7};
my $before = $node->safe_psql('src', $outputs);
like($before, qr/^changelog\|d\|1\|/m, 'the source has a changelog');
like($before, qr/^late\|d\|1\|/m,      'the source has a late output');

my $n = 0;
for my $format ('-Fp', '-Fc')
{
	$n++;
	my $dump = $node->basedir . "/outputs$n.dump";
	my $db = "dst$n";
	$node->command_ok([ 'pg_dump', $format, '-f', $dump, '-d', $node->connstr('src') ],
		"pg_dump $format");
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	if ($format eq '-Fp')
	{
		$node->command_ok(
			[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', $dump, '-d',
				$node->connstr($db) ],
			"restore $format");
	}
	else
	{
		$node->command_ok(
			[ 'pg_restore', '--exit-on-error', '-d', $node->connstr($db), $dump ],
			"restore $format");
	}
	is($node->safe_psql($db, $outputs), $before, "$format: the outputs are restored");

	# the restored pipeline goes on: seq continues, results follow
	my $last = $node->safe_psql($db,
		"SELECT max(seq) FROM streamforge.changelog WHERE pipeline = 'd'");
	my $next = $node->safe_psql($db,
		"SELECT count(*) FROM streamforge.ingest('d', 'a', 51, 'x', 'k9', 85, 7); "
		  . "SELECT min(seq) FROM streamforge.advance('d', 'a', 100)");
	is($next, "0\n" . ($last + 1), "$format: the next change continues the seq");
	is( $node->safe_psql(
			$db,
			"SELECT count, sum FROM streamforge.results "
			  . "WHERE pipeline = 'd' AND key = 'k9' AND window_name = 'f'"),
		'1|7',
		"$format: the results table follows the new changes");
	is( $node->safe_psql(
			$db,
			"SELECT count(*) FROM streamforge.ingest('quiet', 'a', 0, 'q', 'k', 1, 1); "
			  . "SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'quiet'"),
		"0\n0",
		"$format: a pipeline without outputs still has none");
}

$node->stop;
done_testing();
