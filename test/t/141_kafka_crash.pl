# streamforge_kafka: exactly once through crashes (issue 28, item 5).
#
# Messages with duplicates (the same event produced again, at another
# offset, maybe of another partition) and out-of-order event times go into
# a 3-partition topic of the mock cluster while the worker consumes them in
# small batches (each round's messages are produced while the subscription
# is paused, then consumed); at random points the test terminates the worker, kills it
# (SIGKILL: the postmaster restarts every process) or stops the server
# with -m immediate and starts it again.  At the end the pipeline must
# equal a GROUP BY over the distinct messages: nothing lost (every offset
# consumed, every event counted) and nothing doubled (no replayed offset,
# the duplicates counted once).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KafkaTest;

my $seed = $ENV{SF_KAFKA_SEED} // 2028;
note("seed $seed (SF_KAFKA_SEED)");
srand($seed);

my $kafka = KafkaTest->start;
$kafka->cmd('topic ev 3');
my $node = KafkaTest::node('kafka_crash');
my $bs = $kafka->{bootstrap};

$node->safe_psql('postgres', qq{
	SELECT streamforge.create_pipeline('pc', ARRAY['ev-0', 'ev-1', 'ev-2'],
		ARRAY[streamforge.fixed('w', 100)], lateness => 1000000000);
	SELECT streamforge_kafka.subscribe('pc', '$bs', 'ev',
		mapping => '{"event_id": "id", "key": "k", "event_time": "t", "value": "v"}',
		batch_size => 2, max_wait => 20);
});

my (@sent, %first);
my ($n, $dups) = (0, 0);
my @partial;

sub consumed
{
	return $node->safe_psql('postgres',
		"SELECT COALESCE(sum(consumed_offset + 1), 0) FROM streamforge_kafka.subscriptions");
}

for my $round (1 .. 6)
{
	# the round's messages go in while the subscription is paused, so that
	# the worker has a backlog of batches when the interruption comes
	my $before = consumed();
	$node->safe_psql('postgres', "SELECT streamforge_kafka.pause('pc', 'ev')");
	for (1 .. 400)
	{
		my $m;
		if (@sent && rand() < 0.15)
		{
			$m = $sent[ int(rand(@sent)) ];    # a duplicate, same content
			$dups++;
		}
		else
		{
			my $i = scalar(@sent);
			$m = {
				id => "e$i",
				k => 'k' . int(rand(7)),
				t => 1000 + 3 * $i + int(rand(300)) - 150,
				v => 1 + int(rand(9)) };
			push @sent, $m;
		}
		my $part = int(rand(3));
		$kafka->produce('ev', $part, $m->{t}, undef,
			qq({"id":"$m->{id}","k":"$m->{k}","t":$m->{t},"v":$m->{v}}));
		$n++;
	}
	$kafka->flush;
	# a random point of the consumption: once a random number of the
	# round's messages is in (polled from one session, which also finds the
	# worker and terminates it: starting psql for each poll is too slow).
	# The session starts before the resume: on a loaded machine starting it
	# took longer than the worker needed for the whole round, so no
	# interruption came in the middle (seen in a full run at load 22).
	my $poll = $node->background_psql('postgres');
	$poll->query_safe('SELECT 1');
	$node->safe_psql('postgres', "SELECT streamforge_kafka.resume('pc', 'ev')");
	my $target = $before + 1 + int(rand(300));
	my $at = $before;
	for (1 .. 5000)
	{
		$at = $poll->query_safe(
			'SELECT COALESCE(sum(consumed_offset + 1), 0) FROM streamforge.partitions(\'pc\')');
		last if $at >= $target;
		select(undef, undef, undef, 0.005);
	}
	push @partial, $at if $at < $n;
	my $what = int(rand(3));
	if ($what == 0)
	{
		$poll->query_safe(
			"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'streamforge_kafka worker'");
		$poll->quit;
		note("round $round: worker terminated at $at of $n");
	}
	elsif ($what == 1)
	{
		my $pid = $poll->query_safe(
			"SELECT pid FROM pg_stat_activity WHERE backend_type = 'streamforge_kafka worker'");
		kill 'KILL', $pid if $pid;
		$poll->{run}->kill_kill;
		note("round $round: worker killed at $at of $n");
		# the postmaster restarts every process
		KafkaTest::wait_for($node, 'SELECT true', "server back after the kill in round $round");
	}
	else
	{
		$poll->{run}->kill_kill;
		$node->stop('immediate');
		$node->start;
		note("round $round: server stopped (immediate) at $at of $n");
	}
}

KafkaTest::wait_for($node, KafkaTest::caught_up_sql('pc', $n),
	"all $n messages consumed");
cmp_ok(scalar(@partial), '>', 0,
	scalar(@partial) . ' of 6 interruptions came in the middle of the consumption');

# the oracle: GROUP BY over the distinct messages
my %agg;
for my $m (@sent)
{
	my $ws = 100 * int($m->{t} / 100);
	my $a = $agg{"$m->{k}|$ws"} //= [ 0, 0 ];
	$a->[0]++;
	$a->[1] += $m->{v};
}
my $expected = join("\n",
	map { my ($k, $ws) = split /\|/; "$k|$ws|$agg{$_}[0]|$agg{$_}[1]" }
	  sort { my ($ka, $wa) = split /\|/, $a; my ($kb, $wb) = split /\|/, $b; $ka cmp $kb or $wa <=> $wb }
	  keys %agg);
my $got = $node->safe_psql('postgres',
	"SELECT key, window_start, count, sum FROM streamforge.live('pc') ORDER BY key COLLATE \"C\", window_start");
is($got, $expected, 'the pipeline equals a GROUP BY over the distinct messages');

my $stats = $node->safe_psql('postgres',
	"SELECT deliveries, duplicate_ids, offset_replays, late_events FROM streamforge.stats('pc')");
is($stats, "$n|$dups|0|0",
	'every message delivered once at its offset, the duplicates counted as such, no replay, nothing late');
KafkaTest::wait_for($node,
	"SELECT sum(lag) = 0 AND bool_and(worker_state = 'running') FROM streamforge_kafka.subscriptions",
	'no lag left, the worker runs');
is($node->safe_psql('postgres', 'SELECT count(*) FROM streamforge_kafka.rejected'),
	'0', 'nothing rejected');

$node->stop;
$kafka->stop;
done_testing();
