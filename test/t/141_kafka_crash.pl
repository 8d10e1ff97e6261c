# streamforge_kafka: exactly once through crashes (issue 28, item 5).
#
# Messages with duplicates (the same event produced again, at another
# offset, maybe of another partition) and out-of-order event times go into
# a 3-partition topic of the mock cluster while the worker consumes them in
# small batches (a random share of each round consumed first, then the rest
# held back by a lock on the subscription's row, so that the interruption
# comes in the middle whatever the load); the test then terminates the worker, kills it
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

sub produce_messages
{
	my ($count) = @_;
	for (1 .. $count)
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
	return;
}

for my $round (1 .. 6)
{
	# A random point of the consumption, whatever the load: the round's
	# first messages (a random number of them) go in and are consumed
	# whole; then a session holds the subscription's row (every batch of
	# the worker locks it FOR KEY SHARE first), the rest of the round goes
	# into Kafka, and once the worker waits for the row with a batch in
	# hand the interruption comes, either there or just after the row is
	# released, in the batches that follow.  Before, a poll raced the
	# worker, which on a loaded machine consumed the whole round first
	# ("0 of 6 interruptions came in the middle").
	my $first = 1 + int(rand(300));
	produce_messages($first);
	KafkaTest::wait_for($node, KafkaTest::caught_up_sql('pc', $n),
		"round $round: the first $first messages consumed");
	my $poll = $node->background_psql('postgres');
	$poll->query_safe('BEGIN');
	$poll->query_safe(
		"SELECT FROM streamforge_kafka.subscription WHERE pipeline = 'pc' FOR UPDATE");
	produce_messages(400 - $first);
	my $waiting = 0;
	for (1 .. 2000)
	{
		$waiting = $poll->query_safe(
			"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'streamforge_kafka worker' AND wait_event_type = 'Lock'");
		last if $waiting > 0;
		select(undef, undef, undef, 0.01);
	}
	my $at = $poll->query_safe(
		'SELECT COALESCE(sum(consumed_offset + 1), 0) FROM streamforge.partitions(\'pc\')');
	push @partial, $at if $at < $n && $waiting > 0;
	# half the time the worker goes on for up to 30 ms (a few batches of
	# 2) before the interruption, which then comes inside a batch
	if (rand() < 0.5)
	{
		$poll->query_safe('COMMIT');
		select(undef, undef, undef, rand(0.03));
	}
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
is(scalar(@partial), 6,
	scalar(@partial) . ' of 6 interruptions came in the middle of the consumption, the worker waiting with a batch');

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
