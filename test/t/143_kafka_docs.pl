# docs/kafka.md runs (issue 28): its ```sql blocks, in order, in one
# database of a server that loads streamforge_kafka, against the mock
# cluster, whose bootstrap address stands for the page's brokers
# (kafka-1:9092 and kafka-2:9092); the topics the page subscribes to exist
# and hold a few messages, and what the page then reads must come out
# (test/t/080_docs.pl leaves the page to this test).
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use DocsBlocks qw(read_blocks);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KafkaTest;

my $kafka = KafkaTest->start;
my $bs = $kafka->{bootstrap};
$kafka->cmd('topic clicks 3');
$kafka->cmd('topic sensors 1');
my $t0 = 1_764_590_400_000;    # 2025-12-01 12:00 UTC, in ms
for my $i (0 .. 8)
{
	$kafka->produce('clicks', $i % 3, $t0 + 1000 * $i, undef,
		qq({"click":{"id":"c$i"},"page":"/p@{[ $i % 2 ]}","at":"@{[ $t0 + 1000 * $i ]}"}));
}
$kafka->produce('sensors', 0, 1000, undef, 's1,boiler,11,70');
$kafka->produce('sensors', 0, 1001, undef, 'not,a,number,x');
$kafka->produce('sensors', 0, 1002, undef, 's2,boiler,12,72');
$kafka->flush;

my $node = KafkaTest::node('kafka_docs');
$node->safe_psql('postgres', 'DROP EXTENSION streamforge_kafka; DROP EXTENSION streamforge');

my @blocks = read_blocks("$FindBin::RealBin/../../docs/kafka.md");
cmp_ok(scalar(grep { $_->{mode} eq '' } @blocks), '>=', 3, 'docs/kafka.md has SQL to run');
for my $n (1 .. @blocks)
{
	my $b = $blocks[ $n - 1 ];
	my $what = "docs/kafka.md block $n (line $b->{line})";
	if ($b->{mode} eq 'skip')
	{
		note("$what: not run (skip)");
		next;
	}
	(my $sql = $b->{sql}) =~ s/kafka-1:9092,kafka-2:9092|kafka-1:9092/$bs/g;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $sql, on_error_stop => 1);
	if ($b->{mode} eq 'error')
	{
		ok($ret != 0 && $stderr =~ /ERROR/, "$what fails, as documented");
	}
	else
	{
		is($ret, 0, "$what runs") or diag("block:\n$sql\nerror:\n$stderr");
	}
}

KafkaTest::wait_for($node, KafkaTest::caught_up_sql('kafka_clicks', 9),
	'the clicks are consumed');
is($node->safe_psql('postgres',
		q{SELECT key, count FROM streamforge.live('kafka_clicks') ORDER BY 1}),
	"/p0|5\n/p1|4", 'per page, one minute');
KafkaTest::wait_for($node,
	q{SELECT sum(clicks) = 9 FROM clicks_per_page_live},
	'the aggregate fed by subscribe_aggregate has the clicks');
is($node->safe_psql('postgres',
		q{SELECT page, clicks FROM clicks_per_page_live ORDER BY 1}),
	"/p0|5\n/p1|4", 'the aggregate: per page, one minute');
KafkaTest::wait_for($node,
	q{SELECT count(*) = 1 FROM streamforge_kafka.rejected WHERE topic = 'sensors'},
	'the bad reading is a dead letter');
KafkaTest::wait_for($node,
	q{SELECT accepted = 2 FROM streamforge.stats('kafka_readings')},
	'the good readings are in');

$node->stop;
$kafka->stop;
done_testing();
