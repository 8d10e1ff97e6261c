# streamforge_kafka: a broker outage and the recovery (issue 28, items 3
# and 5).  With every broker of the mock cluster down, the worker retries
# with a growing backoff, visible in the subscriptions view and in the log;
# when the cluster is back it goes on where the pipeline stands, and the
# messages produced meanwhile arrive once.  A shutdown during an outage
# stops the worker too.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KafkaTest;

my $kafka = KafkaTest->start;
$kafka->cmd('topic out 2');
my $node = KafkaTest::node('kafka_outage');
my $bs = $kafka->{bootstrap};

sub sql { return $node->safe_psql('postgres', $_[0]); }

sql(qq{SELECT streamforge.create_pipeline('po', ARRAY['out-0', 'out-1'],
		ARRAY[streamforge.fixed('w', 1000)], lateness => 1000000000);
	SELECT streamforge_kafka.subscribe('po', '$bs', 'out',
		mapping => '{"event_id": "id", "key": "k", "event_time": "t"}', max_wait => 20)});

my $n = 0;
sub send_some
{
	my ($count) = @_;
	for (1 .. $count)
	{
		$kafka->produce('out', $n % 2, 1000 + $n, undef,
			qq({"id":"m$n","k":"k@{[ $n % 4 ]}","t":@{[ 1000 + $n ]}}));
		$n++;
	}
	$kafka->flush;
}

send_some(100);
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('po', $n), 'before the outage: 100 consumed');

my $log_offset = -s $node->logfile;
$kafka->cmd('down');
KafkaTest::wait_for($node,
	q{SELECT bool_and(worker_state = 'retrying' AND retries >= 3 AND backoff_ms > 200 AND last_error IS NOT NULL) FROM streamforge_kafka.subscriptions WHERE pipeline = 'po'},
	'down: the view shows the retries and the growing backoff');
my $log = slurp_file($node->logfile, $log_offset);
like($log, qr/WARNING:  streamforge_kafka: subscription \d+: cannot reach "\Q$bs\E": .*\n.*DETAIL:  Attempt 2; the next in 400 ms\./,
	'down: the log has each attempt and its backoff');
is(sql(q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'streamforge_kafka worker'}),
	'1', 'down: the worker stays (and keeps its place)');

$kafka->cmd('up');
send_some(50);
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('po', $n), 'up: the messages sent after the recovery are consumed');
KafkaTest::wait_for($node,
	q{SELECT bool_and(worker_state = 'running' AND retries = 0 AND last_error IS NULL) FROM streamforge_kafka.subscriptions WHERE pipeline = 'po'},
	'up: the view shows the worker running again');
like(slurp_file($node->logfile, $log_offset), qr/is reachable again after \d+ attempts/,
	'up: the log says the cluster is back');

# a shutdown during an outage
$kafka->cmd('down');
KafkaTest::wait_for($node,
	q{SELECT bool_and(worker_state = 'retrying') FROM streamforge_kafka.subscriptions WHERE pipeline = 'po'},
	'down again');
$node->stop('fast');
pass('a fast shutdown during the outage stops the worker');
$kafka->cmd('up');
$node->start;
send_some(50);
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('po', $n), 'after the restart: everything consumed');

is(sql(q{SELECT deliveries, duplicate_ids, offset_replays FROM streamforge.stats('po')}),
	"$n|0|0", 'every message once');
is(sql(q{SELECT sum(count) FROM streamforge.live('po')}), $n, 'and counted once');

$node->stop;
$kafka->stop;
done_testing();
