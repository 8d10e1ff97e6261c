# Many sessions calling one pipeline at the same time (docs/semantics.md "Transactions"):
# write calls serialize on the pipeline's row, none is lost, and the same
# event delivered by 24 sessions at once is accepted exactly once.
#
# To make the calls truly concurrent, a blocker session holds the pipeline's
# row lock (an open transaction with a write call) while the others start
# their calls; once all of them wait on the lock, the blocker commits.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('concurrency');
$node->init;
$node->append_conf('postgresql.conf', 'max_connections = 60');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION streamforge');

# Start $n sessions, session $i running $sql->($i) while a blocker holds
# the row lock of pipeline $pipeline; return each session's output or error.
sub run_blocked
{
	my ($pipeline, $partition, $n, $sql) = @_;

	my $blocker = $node->background_psql('postgres');
	$blocker->query_safe('BEGIN');
	$blocker->query_safe(
		"SELECT count(*) FROM streamforge.mark_idle('$pipeline', '$partition')");

	my @sessions;
	for my $i (0 .. $n - 1)
	{
		my $s = $node->background_psql('postgres');
		$s->query_until(qr/started/,
			"\\echo started\nSELECT 'result:' || count(*) FROM ("
			  . $sql->($i) . ") AS c;\n");
		push @sessions, $s;
	}

	# every session waits for the blocker's row lock
	$node->poll_query_until('postgres',
		"SELECT count(*) = $n FROM pg_stat_activity "
		  . "WHERE wait_event_type = 'Lock' AND query LIKE '%result:%'")
	  or die "the sessions did not all wait for the row lock";

	$blocker->query_safe('COMMIT');
	$blocker->quit;

	my @results;
	for my $s (@sessions)
	{
		my ($out, $err) = $s->query('SELECT 1');
		push @results, $err ? "error: $s->{stderr}" : $out;
		$s->quit;
	}
	return @results;
}

# --- 24 sessions deliver the same event at the same offset ---

$node->safe_psql('postgres',
	"SELECT streamforge.create_pipeline('same', ARRAY['a', 'b'], "
	  . "ARRAY[streamforge.fixed('w', 10)])");

my @same = run_blocked(
	'same', 'b', 24,
	sub {
		"SELECT * FROM streamforge.ingest('same', 'a', 0, 'e1', 'k', 5, 7)";
	});

is(scalar(grep { /^result:0\n1$/ } @same),
	24, 'all 24 deliveries of the same event succeed without output')
  or diag explain \@same;
is( $node->safe_psql(
		'postgres',
		"SELECT deliveries, accepted, offset_replays FROM streamforge.stats('same')"
	),
	'1|1|23',
	'the event is accepted once, the 23 others are offset replays');
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(partition || '=' || consumed_offset, ',' ORDER BY partition) "
		  . "FROM streamforge.partitions('same')"),
	'a=0,b=-1',
	'offset 0 of partition a is consumed once');
is( $node->safe_psql(
		'postgres',
		"SELECT window_start, count, sum FROM streamforge.live('same')"),
	'0|1|7',
	'the window counts the event once');
is( $node->safe_psql(
		'postgres',
		"SELECT version, (SELECT count(*) FROM streamforge.journal j "
		  . "WHERE j.pipeline_id = p.id) "
		  . "FROM streamforge.pipeline p WHERE name = 'same'"),
	'25|25',
	'every write call took its own version and journal entry');

# --- 40 sessions deliver 40 distinct events, one partition each ---

my $parts = join(', ', map { "'p$_'" } 0 .. 39);
$node->safe_psql('postgres',
	"SELECT streamforge.create_pipeline('distinct', ARRAY[$parts, 'idle'], "
	  . "ARRAY[streamforge.fixed('w', 100)])");

my @distinct = run_blocked(
	'distinct', 'idle', 40,
	sub {
		my $i = shift;
		"SELECT * FROM streamforge.ingest('distinct', 'p$i', 0, 'e$i', 'k', $i, "
		  . ($i * 3 + 1) . ")";
	});

is(scalar(grep { /^result:0\n1$/ } @distinct),
	40, 'all 40 concurrent deliveries succeed')
  or diag explain \@distinct;
is( $node->safe_psql(
		'postgres',
		"SELECT deliveries, accepted, offset_replays FROM streamforge.stats('distinct')"
	),
	'40|40|0',
	'all 40 events are counted');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FILTER (WHERE consumed_offset = 0) "
		  . "FROM streamforge.partitions('distinct')"),
	'40',
	'every partition consumed its delivery');
is( $node->safe_psql(
		'postgres',
		"SELECT window_start, window_end, count, sum, min, max "
		  . "FROM streamforge.live('distinct')"),
	'0|100|40|2380|1|118',
	'the window aggregates all 40 values');

$node->stop;
done_testing();
