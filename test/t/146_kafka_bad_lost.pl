# streamforge_kafka: bad input, retried errors and lost offsets (issue 43,
# items 4 and 5), against librdkafka's mock cluster.
#
# - Each kind of malformed message (wrong type, missing field, too deep,
#   too big for its type, bad encoding) goes to the dead letters with its
#   SQLSTATE, the error naming the field where there is one, through
#   subscribe's C mapping (cmap.c / json.c) and through an aggregate
#   subscription's rows made in C (aggrow.c); on_error 'stop' pauses.
# - A serialization failure (40001) and a deadlock (40P01) raised while a
#   batch goes in (here by the aggregate's WHERE, a function that raises
#   them while a flag is set) are retried: the worker fails and starts
#   again from the pipeline's offsets; nothing is dead-lettered, and once
#   the cause is gone every message is in.
# - Lost offsets: the mock cluster keeps 100,000 messages per partition,
#   so 130,000 messages move the partition's first offset past the
#   pipeline's next one: the subscription pauses ('offsets lost');
#   skip_lost_offsets records the range (partition, from, to, when, by
#   whom), only for a caller who may act for the subscription, and after
#   resume() the worker delivers the range with the next message: the
#   pipeline has exactly the messages the cluster still had.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KafkaTest;

my $kafka = KafkaTest->start;
my $node = KafkaTest::node('kafka_bad_lost');
my $bs = $kafka->{bootstrap};

sub sql { return $node->safe_psql('postgres', $_[0]); }

sub fails
{
	my ($q, $re, $what) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', $q);
	isnt($rc, 0, "$what: refused");
	like($err, $re, "$what: the error says why");
}

my $deep = ('[' x 100000) . (']' x 100000);

# ------------------------------------------------------------------
# Malformed messages, subscribe (C mapping), on_error 'skip'
# ------------------------------------------------------------------
$kafka->cmd('topic bad 1');
sql(q{SELECT streamforge.create_pipeline('pbad', ARRAY['bad-0'],
	ARRAY[streamforge.fixed('w', 1000)], lateness => 1000000)});
sql(qq{SELECT streamforge_kafka.subscribe('pbad', '$bs', 'bad',
	mapping => '{"event_id": "id", "value": "v"}', on_error => 'skip', max_wait => 20)});
$kafka->produce('bad', 0, 1000, 'k', '{"id":"a","v":1}');
$kafka->produce('bad', 0, 1001, 'k', '{"id":"b","v":"two"}');              # wrong type
$kafka->produce('bad', 0, 1002, 'k', '{"id":"c"}');                        # missing field
$kafka->produce('bad', 0, 1003, 'k', qq({"id":"d","v":$deep}));            # too deep
$kafka->produce('bad', 0, 1004, 'k', '{"id":"e","v":123456789012345678901234567890}');  # too big
$kafka->produce('bad', 0, 1005, 'k', "{\"id\":\"f\xff\",\"v\":1}");       # bad encoding
$kafka->produce('bad', 0, 1006, 'k', '{"id":"g","v":\u0031}');             # not JSON
$kafka->produce('bad', 0, 1007, 'k', '{"id":"h\u00e9","v":2}');            # a \u escape: good
$kafka->flush;
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('pbad', 8),
	'skip: the good messages and the bad offsets are consumed');
is(sql(q{SELECT "offset", sqlstate FROM streamforge_kafka.rejected WHERE pipeline = 'pbad' ORDER BY 1}),
	"1|22P02\n2|22004\n3|54001\n4|22003\n5|22021\n6|22P02",
	'skip: each malformed message is a dead letter with its SQLSTATE');
like(sql(q{SELECT error FROM streamforge_kafka.rejected WHERE pipeline = 'pbad' AND "offset" = 2}),
	qr/field "v" of value is missing/, 'the missing field is named');
is(sql(q{SELECT key, count, sum FROM streamforge.live('pbad')}), 'k|2|3',
	'the good messages are in, each once');
is(sql(q{SELECT paused, worker_state FROM streamforge_kafka.subscriptions WHERE pipeline = 'pbad'}),
	'f|running', 'skip: the subscription runs on');

# ------------------------------------------------------------------
# Malformed messages, an aggregate subscription (rows in C)
# ------------------------------------------------------------------
sql(q{CREATE TABLE clicks (id bigint PRIMARY KEY, page text NOT NULL, ms integer,
	at timestamptz NOT NULL)});
sql(q{CREATE TABLE retry_flag (code text)});
sql(q{CREATE FUNCTION flaky(p text) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
	DECLARE c text;
	BEGIN
		SELECT code INTO c FROM public.retry_flag LIMIT 1;
		IF c IS NOT NULL THEN
			RAISE EXCEPTION 'injected %', c USING ERRCODE = c;
		END IF;
		RETURN p <> 'bot';
	END $$});
sql(q{SELECT streamforge.create_aggregate('aclicks', $$
	SELECT page, count(*) AS n, sum(ms) AS total FROM clicks
	 WHERE public.flaky(page)
	 GROUP BY page, streamforge.tumble(at, interval '1 minute')
	$$, lateness => interval '1 day')});
$kafka->cmd('topic abad 1');
sql(qq{SELECT streamforge_kafka.subscribe_aggregate('aclicks', '$bs', 'abad',
	'{"id": "id", "page": "page", "ms": "ms", "at": "at"}', on_error => 'skip', max_wait => 20)});
my $at = '"at":"2026-12-01T00:00:01.5Z"';
$kafka->produce('abad', 0, 1000, undef, qq({"id":1,"page":"/a","ms":10,$at}));
$kafka->produce('abad', 0, 1001, undef, qq({"id":2,"page":"/a","ms":"ten",$at}));     # wrong type
$kafka->produce('abad', 0, 1002, undef, qq({"id":3,"ms":10,$at}));                    # missing
$kafka->produce('abad', 0, 1003, undef, qq({"id":4,"page":$deep,"ms":1,$at}));        # too deep
$kafka->produce('abad', 0, 1004, undef, qq({"id":5,"page":"/a","ms":99999999999,$at}));  # too big
$kafka->produce('abad', 0, 1005, undef, qq({"id":6,"page":"/\xff","ms":1,$at}));     # encoding
$kafka->produce('abad', 0, 1006, undef, qq({"id":7,"page":"/a","ms":5,"at":"2026-12-01 00:00:02+00"}));
$kafka->flush;
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('aclicks', 7),
	'aggregate, skip: the good messages and the bad offsets are consumed');
is(sql(q{SELECT "offset", sqlstate FROM streamforge_kafka.rejected WHERE pipeline = 'aclicks' ORDER BY 1}),
	"1|22P02\n2|22004\n3|54001\n4|22003\n5|22021",
	'aggregate: each malformed message is a dead letter with its SQLSTATE');
is(sql(q{SELECT error FROM streamforge_kafka.rejected WHERE pipeline = 'aclicks' AND "offset" IN (1, 2, 4) ORDER BY "offset"}),
	qq{field "ms": invalid input syntax for type integer: "ten"\n}
	  . qq{field "page" is missing from the message\n}
	  . qq{field "ms": value "99999999999" is out of range for type integer},
	'aggregate: the errors name the field');
is(sql(q{SELECT page, n, total FROM aclicks_live}), '/a|2|15',
	'aggregate: the good messages are in (ISO timestamps of both forms)');

# on_error 'stop' on the aggregate: a too-deep message pauses it
sql(q{SELECT streamforge_kafka.set_on_error('aclicks', 'abad', 'stop')});
$kafka->produce('abad', 0, 1007, undef, qq({"id":8,"page":$deep,"ms":1,$at}));
$kafka->flush;
KafkaTest::wait_for($node,
	q{SELECT paused AND worker_state = 'stopped' AND error LIKE 'message at offset 7 of partition 0: stack depth limit exceeded%' FROM streamforge_kafka.subscriptions WHERE pipeline = 'aclicks'},
	'stop: a malformed message pauses the subscription with its error');

# ------------------------------------------------------------------
# Serialization failures and deadlocks are retried, not dead-lettered
# ------------------------------------------------------------------
# (the too-deep message at offset 7 is read and rejected again at each
# start, its dead letter kept once, and delivered with the next good one)
sql(q{SELECT streamforge_kafka.set_on_error('aclicks', 'abad', 'skip');
	SELECT streamforge_kafka.resume('aclicks', 'abad')});
my $letters = sql(q{SELECT count(*) FROM streamforge_kafka.rejected WHERE pipeline = 'aclicks'});
for my $code (qw(40001 40P01))
{
	my $id = $code eq '40001' ? 100 : 200;
	sql(qq{INSERT INTO retry_flag VALUES ('$code')});
	$kafka->produce('abad', 0, 1100, undef, qq({"id":$id,"page":"/r","ms":1,$at}));
	$kafka->produce('abad', 0, 1101, undef, qq({"id":@{[$id + 1]},"page":"/r","ms":2,$at}));
	$kafka->flush;
	KafkaTest::wait_for($node,
		qq{SELECT worker_state = 'failed' AND last_error = 'injected $code' AND retries >= 2 FROM streamforge_kafka.subscriptions WHERE pipeline = 'aclicks'},
		"$code: the worker fails and is started again (retries counted)");
	is(sql(q{SELECT count(*) FROM streamforge_kafka.rejected WHERE pipeline = 'aclicks'}), $letters,
		"$code: no dead letter");
	is(sql(q{SELECT paused FROM streamforge_kafka.subscriptions WHERE pipeline = 'aclicks'}), 'f',
		"$code: the subscription is not paused");
	sql(q{DELETE FROM retry_flag});
	KafkaTest::wait_for($node,
		KafkaTest::caught_up_sql('aclicks', $code eq '40001' ? 10 : 12),
		"$code: once it clears, the retried batch goes in");
}
is(sql(q{SELECT n, total FROM aclicks_live WHERE page = '/r'}), '4|6',
	'the retried messages are in, each once');

# ------------------------------------------------------------------
# Lost offsets: skip_lost_offsets
# ------------------------------------------------------------------
$kafka->cmd('topic gone 1');
$kafka->cmd('gen gone 1 130000 10 1000000');
sql(q{SELECT streamforge.create_pipeline('pgone', ARRAY['gone-0'],
	ARRAY[streamforge.fixed('w', 1000000)], lateness => 1000000000)});
sql(qq{SELECT streamforge_kafka.subscribe('pgone', '$bs', 'gone',
	mapping => '{"event_id": "id", "key": "k", "event_time": "t", "value": "v"}',
	batch_size => 10000, max_wait => 20)});
KafkaTest::wait_for($node,
	q{SELECT paused AND worker_state = 'offsets lost' FROM streamforge_kafka.subscriptions WHERE pipeline = 'pgone'},
	'retention overtook the pipeline: the subscription pauses');
my $err = sql(q{SELECT error FROM streamforge_kafka.subscriptions WHERE pipeline = 'pgone'});
like($err, qr/^offsets lost in partition 0 of topic "gone": the next offset is 0, the partition holds offsets (\d+) to 129999/,
	'the error says where each side stands');
my ($first) = $err =~ /holds offsets (\d+) to/;
ok($first > 0, "the cluster's first offset is past the pipeline's next ($first)");

# who may call it
sql(q{CREATE ROLE mallory LOGIN});
my ($rc, $out, $stderr) = $node->psql('postgres',
	q{SELECT streamforge_kafka.skip_lost_offsets('pgone', 'gone', 0)},
	extra_params => [ '-U', 'mallory' ]);
isnt($rc, 0, 'a role without the subscriber\'s privileges cannot skip');
like($stderr, qr/pipeline "pgone" has no subscription to topic "gone"/,
	'it sees no such subscription');
fails(q{SELECT streamforge_kafka.skip_lost_offsets('pgone', 'gone', 3)},
	qr/topic "gone" has no partition 3 in this subscription/, 'a partition out of range');
is(sql(q{SELECT consumed_offset FROM streamforge.partitions('pgone')}), '-1',
	'the pipeline\'s offsets are untouched');

is(sql(q{SELECT streamforge_kafka.skip_lost_offsets('pgone', 'gone', 0)}), $first,
	'skip_lost_offsets returns the length of the lost range');
is(sql(q{SELECT kafka_partition, from_offset, to_offset, skipped_by, skipped_at <= now() FROM streamforge_kafka.skipped_offsets WHERE pipeline = 'pgone'}),
	'0|0|' . ($first - 1) . '|postgres|t', 'the range is recorded: partition, from, to, by whom, when');
is(sql(q{SELECT consumed_offset FROM streamforge.partitions('pgone')}), '-1',
	'the pipeline\'s offsets still are the source of truth');
($rc, $out, $stderr) = $node->psql('postgres',
	q{SELECT count(*) FROM streamforge_kafka.skipped_offsets}, extra_params => [ '-U', 'mallory' ]);
is($out, '0', 'another role does not see the record');

sql(q{SELECT streamforge_kafka.resume('pgone', 'gone')});
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('pgone', 130000),
	'resumed: the worker starts after the range and consumes the rest');
is(sql(q{SELECT sum(count), sum(sum) FROM streamforge.live('pgone')}),
	(130000 - $first) . '|' . (130000 - $first),
	'the pipeline has exactly the messages the cluster still had, each once');
is(sql(q{SELECT deliveries - accepted FROM streamforge.stats('pgone')}), $first,
	'the lost offsets were delivered as duplicates of the next message');

sql(q{SELECT streamforge_kafka.pause('pgone', 'gone')});
fails(q{SELECT streamforge_kafka.skip_lost_offsets('pgone', 'gone', 0)},
	qr/partition 0 of topic "gone" lost no offset/, 'nothing lost: refused');
sql(q{SELECT streamforge_kafka.resume('pgone', 'gone')});
fails(q{SELECT streamforge_kafka.skip_lost_offsets('pgone', 'gone', 0)},
	qr/is not paused/, 'a running subscription: refused');

$kafka->stop;
done_testing();
