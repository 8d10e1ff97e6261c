# streamforge_kafka: several workers per subscription (issue 46, must-show
# 5; docs/design/parallel-writers.md, section 10; docs/kafka.md, "Several
# workers").
#
# A 6-partition topic of the mock cluster feeds a parallel pipeline through
# a subscription with 3 workers (worker w reads the partitions k with
# k % 3 = w) and, as the reference, a serial pipeline through a
# subscription with one worker.  Messages with duplicates (the same event
# again, at another offset, often of a partition another worker reads:
# in flight on two lanes at once) and out-of-order times go in over six
# rounds; in each round, once a random share of it is consumed, the test
# holds the subscription's row so that every worker stops at its next
# batch with the rest of the round still in Kafka, then terminates one
# worker, kills one (SIGKILL: the postmaster restarts every process) or
# stops the server with -m immediate; two rounds change the number of
# workers (3 -> 2 -> 3: the partitions move between workers; in the second,
# a batch of a partition that moves is held in flight by a claim on its
# lane, so the new worker of the partition must wait for it).  At the end
# the parallel pipeline must equal the serial one and a GROUP BY over the
# distinct messages, every offset delivered once (no replay), and the
# subscriptions view must show each worker with the partitions it reads.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KafkaTest;

my $seed = $ENV{SF_KAFKA_SEED} // 4646;
note("seed $seed (SF_KAFKA_SEED)");
srand($seed);

my $kafka = KafkaTest->start;
$kafka->cmd('topic ev 6');
my $node = KafkaTest::node('kafka_workers',
	conf => "streamforge_kafka.max_workers = 8\n");
my $bs = $kafka->{bootstrap};
my @parts = map { "'ev-$_'" } 0 .. 5;
my $mapping = '{"event_id": "id", "key": "k", "event_time": "t", "value": "v"}';

sub sql { return $node->safe_psql('postgres', $_[0]); }

sql(qq{
	SELECT streamforge.create_pipeline('pw', ARRAY[@{[join(', ', @parts)]}],
		ARRAY[streamforge.fixed('w', 100)], lateness => 1000000000, writers => 'parallel');
	SELECT streamforge.create_pipeline('ps', ARRAY[@{[join(', ', @parts)]}],
		ARRAY[streamforge.fixed('w', 100)], lateness => 1000000000);
});

# --- what is refused ----------------------------------------------------
my ($ret, $out, $err) = $node->psql('postgres', qq{
	SELECT streamforge_kafka.subscribe('ps', '$bs', 'ev', mapping => '$mapping', workers => 2)});
like($err, qr/pipeline "ps" has one writer at a time: its subscriptions have one worker/,
	'workers => 2 on a serial pipeline is refused');
like($err, qr/HINT:  Create the pipeline with streamforge.create_pipeline\(..., writers => 'parallel'\)/,
	'the hint names writers => parallel');
($ret, $out, $err) = $node->psql('postgres', qq{
	SELECT streamforge_kafka.subscribe('pw', '$bs', 'ev', mapping => '$mapping', workers => 0)});
like($err, qr/workers 0 is out of range/, 'workers => 0 is refused');
($ret, $out, $err) = $node->psql('postgres', qq{
	SELECT streamforge_kafka.subscribe('pw', '$bs', 'ev', mapping => '$mapping', workers => 65)});
like($err, qr/workers 65 is out of range/, 'workers => 65 is refused');
is(sql('SELECT count(*) FROM streamforge_kafka.subscription'), '0', 'nothing subscribed');

sql(qq{
	SELECT streamforge_kafka.subscribe('ps', '$bs', 'ev', mapping => '$mapping',
		batch_size => 7, max_wait => 20);
	SELECT streamforge_kafka.subscribe('pw', '$bs', 'ev', mapping => '$mapping',
		batch_size => 5, max_wait => 20, workers => 3);
});
($ret, $out, $err) = $node->psql('postgres',
	"SELECT streamforge_kafka.set_workers('ps', 'ev', 2)");
like($err, qr/pipeline "ps" has one writer at a time/, 'set_workers refuses a serial pipeline too');
is(sql("SELECT workers FROM streamforge_kafka.subscription ORDER BY pipeline"), "1\n3",
	'the subscriptions keep 1 and 3 workers');

my $pw_id = sql("SELECT id FROM streamforge_kafka.subscription WHERE pipeline = 'pw'");

# the workers of pw running, n of them, each reading the partitions k % n
sub workers_ok
{
	my ($n) = @_;
	return "SELECT count(*) = 6 AND bool_and(worker = kafka_partition % $n) "
	  . "AND bool_and(worker_state = 'running') AND count(DISTINCT worker_pid) = $n "
	  . "AND (SELECT count(*) = $n FROM pg_stat_activity "
	  . "     WHERE backend_type = 'streamforge_kafka worker' "
	  . "       AND application_name ~ '^streamforge_kafka worker $pw_id(\\.[0-9]+)?\$') "
	  . "FROM streamforge_kafka.subscriptions WHERE pipeline = 'pw'";
}
KafkaTest::wait_for($node, workers_ok(3), '3 workers read pw, worker w the partitions k % 3 = w');

my (@sent, @middle);
my ($n, $dups) = (0, 0);

sub consumed
{
	my ($p) = @_;
	return sql("SELECT COALESCE(sum(consumed_offset + 1), 0) FROM streamforge.partitions('$p')");
}

sub produce
{
	my ($count, $first_part) = @_;
	for (1 .. $count)
	{
		my $m;
		if (@sent && rand() < 0.15)
		{
			# the same event again, same content; at another offset, of a
			# partition chosen at random: often another worker's
			$m = $sent[ int(rand(@sent)) ];
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
		my $part = $first_part // int(rand(6));
		undef $first_part;
		$kafka->produce('ev', $part, $m->{t}, undef,
			qq({"id":"$m->{id}","k":"$m->{k}","t":$m->{t},"v":$m->{v}}));
		$n++;
	}
	$kafka->flush;
	return;
}

my $nworkers = 3;
for my $round (1 .. 6)
{
	# a first share of the round, consumed whole
	my $first = 1 + int(rand(250));
	produce($first);
	KafkaTest::wait_for($node, "SELECT COALESCE(sum(consumed_offset + 1), 0) = $n FROM streamforge.partitions('pw')",
		"round $round: the first $first messages consumed by the workers");

	if ($round == 5)
	{
		# 2 -> 3 workers while worker 0 of 2 has a batch of partition 2 in
		# flight: a session claims the lane of ev-2 (an uncommitted delivery,
		# rolled back later), so that worker 0's batch waits inside its
		# ingest; partition 2 moves to worker 2 of 3, which must wait for
		# worker 0 to commit and exit (the partition's lock) before it reads
		# the offsets: else it would read them before that batch commits and
		# deliver its messages again (offset replays)
		my $claim = $node->background_psql('postgres');
		$claim->query_safe('BEGIN');
		$claim->query_safe("SELECT streamforge.ingest_count('pw', 'ev-2', "
			  . "(SELECT consumed_offset + 1 FROM streamforge.partitions('pw') WHERE partition = 'ev-2'), "
			  . "'claim', 'k', 1000, 1)");
		produce(300 - $first, 2);
		KafkaTest::wait_for($node,
			"SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
			  . "AND application_name = 'streamforge_kafka worker $pw_id'",
			'round 5: worker 0 of 2 waits for the lane of ev-2 inside its batch');
		my $at = consumed('pw');
		push @middle, $at if $at < $n;
		sql("SELECT streamforge_kafka.set_workers('pw', 'ev', 3)");
		KafkaTest::wait_for($node,
			"SELECT count(*) = 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
			  . "AND application_name = 'streamforge_kafka worker $pw_id.2'",
			'round 5: worker 2 of 3 started and waits for partition 2');
		$claim->query_safe('ROLLBACK');
		$claim->quit;
		$nworkers = 3;
		note("round $round: workers set to 3 at $at of $n, partition 2 in flight");
		KafkaTest::wait_for($node, workers_ok($nworkers),
			"round $round: 3 workers read pw again, worker w the partitions k % 3 = w");
		next;
	}

	# the rest waits in Kafka while a session holds the subscription's row
	# (each batch of every worker locks it FOR KEY SHARE first): the
	# interruption comes in the middle of the round, whatever the load
	my $hold = $node->background_psql('postgres');
	$hold->query_safe('BEGIN');
	$hold->query_safe("SELECT FROM streamforge_kafka.subscription WHERE id = $pw_id FOR UPDATE");
	produce(300 - $first);
	# a worker with a batch in hand waits for the row
	my $waiting = 0;
	for (1 .. 2000)
	{
		$waiting = $hold->query_safe(
			"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'streamforge_kafka worker' "
			  . "AND wait_event_type = 'Lock' AND application_name ~ '^streamforge_kafka worker $pw_id(\\.[0-9]+)?\$'");
		last if $waiting > 0;
		select(undef, undef, undef, 0.01);
	}
	my $at = $hold->query_safe("SELECT COALESCE(sum(consumed_offset + 1), 0) FROM streamforge.partitions('pw')");
	push @middle, $at if $at < $n;

	my $victim = int(rand($nworkers));
	my $app = "streamforge_kafka worker $pw_id" . ($victim ? ".$victim" : '');
	my $what = $round == 3 ? 3 : int(rand(3));
	if ($what == 0)
	{
		$hold->query_safe("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '$app'");
		$hold->query_safe('COMMIT');
		$hold->quit;
		note("round $round: worker $victim terminated at $at of $n");
	}
	elsif ($what == 1)
	{
		my $pid = $hold->query_safe("SELECT pid FROM pg_stat_activity WHERE application_name = '$app'");
		kill 'KILL', $pid if $pid;
		$hold->{run}->kill_kill;
		note("round $round: worker $victim killed at $at of $n");
		KafkaTest::wait_for($node, 'SELECT true', "server back after the kill in round $round");
	}
	elsif ($what == 2)
	{
		$hold->{run}->kill_kill;
		$node->stop('immediate');
		$node->start;
		note("round $round: server stopped (immediate) at $at of $n");
	}
	else
	{
		# the number of workers changes (3 -> 2) while the batches wait: the
		# workers see it at their next batch and stop, the new set waits
		# for the partitions that move
		$nworkers = 2;
		$hold->query_safe('COMMIT');
		$hold->quit;
		sql("SELECT streamforge_kafka.set_workers('pw', 'ev', $nworkers)");
		note("round $round: workers set to $nworkers at $at of $n");
	}
	KafkaTest::wait_for($node, workers_ok($nworkers),
		"round $round: $nworkers workers read pw again, worker w the partitions k % $nworkers = w");
}

KafkaTest::wait_for($node, KafkaTest::caught_up_sql('pw', $n), "all $n messages consumed into pw");
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('ps', $n), "all $n messages consumed into ps");
is(scalar(@middle), 6, 'each interruption came in the middle of its round');

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
my $live = "SELECT key, window_start, count, sum FROM streamforge.live('%s') ORDER BY key COLLATE \"C\", window_start";
my $got = sql(sprintf($live, 'pw'));
is($got, $expected, 'the parallel pipeline equals a GROUP BY over the distinct messages');
is($got, sql(sprintf($live, 'ps')), 'and the serial pipeline fed by one worker');

my $stats = "SELECT deliveries, duplicate_ids, offset_replays, late_events FROM streamforge.stats('%s')";
is(sql(sprintf($stats, 'pw')), "$n|$dups|0|0",
	'every message delivered once at its offset, the duplicates counted once, no replay, nothing late');
is(sql(sprintf($stats, 'ps')), "$n|$dups|0|0", 'the same in the serial pipeline');
is(sql("SELECT count(*) FROM streamforge_kafka.worker_status WHERE subscription = $pw_id"),
	'3', 'one status row per worker');
KafkaTest::wait_for($node,
	"SELECT sum(lag) = 0 AND bool_and(worker_state = 'running') FROM streamforge_kafka.subscriptions",
	'no lag left, every worker runs');
is(sql('SELECT count(*) FROM streamforge_kafka.rejected'), '0', 'nothing rejected');

$node->stop;
$kafka->stop;
done_testing();
