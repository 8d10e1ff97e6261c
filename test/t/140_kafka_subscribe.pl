# streamforge_kafka: subscriptions, mappings, the view, privileges, bad
# messages in each mode, pause/resume and unsubscribe during a batch
# (issue 28, items 2-5), against librdkafka's mock cluster.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KafkaTest;

my $kafka = KafkaTest->start;
my $node = KafkaTest::node('kafka_subscribe');
my $bs = $kafka->{bootstrap};

sub sql { return $node->safe_psql('postgres', $_[0]); }

sub caught_up
{
	my ($pipeline, $total, $what) = @_;
	KafkaTest::wait_for($node, KafkaTest::caught_up_sql($pipeline, $total), $what);
}

# ------------------------------------------------------------------
# JSON with paths, a time unit: the Kafka timestamps in the pipeline's unit
# ------------------------------------------------------------------
$kafka->cmd('topic js 2');
sql(q{SELECT streamforge.create_pipeline('pj', ARRAY['js-0', 'js-1'],
	ARRAY[streamforge.fixed('w', 60)], lateness => 1000000,
	time_unit => interval '1 second')});
is(sql(qq{SELECT streamforge_kafka.subscribe('pj', '$bs', 'js',
	mapping => '{"event_id": "\$.meta.id", "key": "user", "value": "\$.n"}',
	batch_size => 5, max_wait => 20)}), '1', 'subscribe returns the subscription id');
# event_time: the Kafka timestamp (ms) in seconds
for my $i (0 .. 9)
{
	my $ts = 1_700_000_000_000 + $i * 1500;
	$kafka->produce('js', $i % 2, $ts, "key$i",
		qq({"meta":{"id":"j$i"},"user":"u@{[ $i % 3 ]}","n":$i}));
}
$kafka->flush;
caught_up('pj', 10, 'json: ten messages consumed');
is(sql(q{SELECT key, window_start, count, sum FROM streamforge.live('pj') ORDER BY 1, 2}),
	"u0|1699999980|4|18\nu1|1699999980|3|12\nu2|1699999980|3|15",
	'json: paths, plain keys and the Kafka timestamp in seconds');
is(sql(q{SELECT string_agg(partition || ':' || progress, ',' ORDER BY partition) FROM streamforge.partitions('pj')}),
	'js-0:1700000012,js-1:1700000013',
	'progress: the largest message timestamp of each partition, in seconds');
KafkaTest::wait_for($node,
	q{SELECT string_agg(kafka_partition || ':' || consumed_offset || ':' || high_watermark || ':' || lag, ',' ORDER BY kafka_partition) = '0:4:5:0,1:4:5:0' FROM streamforge_kafka.subscriptions WHERE pipeline = 'pj'},
	'the view: consumed offsets, high watermarks, no lag');

# ------------------------------------------------------------------
# CSV columns, out_of_orderness; text with the Kafka key and offsets
# ------------------------------------------------------------------
$kafka->cmd('topic cs 1');
sql(q{SELECT streamforge.create_pipeline('pcsv', ARRAY['c-0'],
	ARRAY[streamforge.fixed('w', 10)], lateness => 1000)});
sql(qq{SELECT streamforge_kafka.subscribe('pcsv', '$bs', 'cs', format => 'csv',
	mapping => '{"event_id": 1, "key": 2, "event_time": 3, "value": 4, "partition_prefix": "c-"}',
	out_of_orderness => 5, max_wait => 20)});
$kafka->produce('cs', 0, 100, undef, 'a,x,11,5');
$kafka->produce('cs', 0, 130, undef, 'b,y,12,6');
$kafka->produce('cs', 0, 120, undef, 'c,x,25,7');
$kafka->flush;
caught_up('pcsv', 3, 'csv: three messages consumed');
is(sql(q{SELECT key, window_start, count, sum FROM streamforge.live('pcsv') ORDER BY 1, 2}),
	"x|10|1|5\nx|20|1|7\ny|10|1|6", 'csv: columns by number');
is(sql(q{SELECT progress FROM streamforge.partitions('pcsv')}), '125',
	'progress: the largest Kafka timestamp minus out_of_orderness');

$kafka->cmd('topic tx 1');
sql(q{SELECT streamforge.create_pipeline('ptx', ARRAY['tx-0'],
	ARRAY[streamforge.fixed('w', 1000)], lateness => 1000000)});
sql(qq{SELECT streamforge_kafka.subscribe('ptx', '$bs', 'tx', format => 'text',
	mapping => '{"key": "payload", "value": "kafka_partition"}', max_wait => 20)});
$kafka->produce('tx', 0, 5000, 'ka', 'hello');
$kafka->produce('tx', 0, 5001, 'kb', 'hello');
$kafka->produce('tx', 0, 7000, 'kc', 'world');
$kafka->flush;
caught_up('ptx', 3, 'text: three messages consumed');
is(sql(q{SELECT key, window_start, count FROM streamforge.live('ptx') ORDER BY 1, 2}),
	"hello|5000|2\nworld|7000|1",
	'text: the payload as the key, the default event id topic/partition/offset');

# ------------------------------------------------------------------
# Arguments and mappings refused
# ------------------------------------------------------------------
my ($rc, $out, $err);
($rc, $out, $err) = $node->psql('postgres',
	qq{SELECT streamforge_kafka.subscribe('pj', '$bs', 'js', format => 'xml')});
like($err, qr/unknown format "xml"/, 'an unknown format is refused');
($rc, $out, $err) = $node->psql('postgres',
	qq{SELECT streamforge_kafka.subscribe('pj', '$bs', 'js', mapping => '{"evnt_id": "a"}')});
like($err, qr/unknown field "evnt_id" in mapping/, 'an unknown mapping field is refused');
($rc, $out, $err) = $node->psql('postgres',
	qq{SELECT streamforge_kafka.subscribe('pj', '$bs', 'js', mapping => '{"key": "\$.a["}')});
like($err, qr/syntax error/, 'an invalid JSON path is refused');
($rc, $out, $err) = $node->psql('postgres',
	qq{SELECT streamforge_kafka.subscribe('pj', '$bs', 'js', format => 'csv', mapping => '{"key": 0}')});
like($err, qr/column 0 of "key" is out of range/, 'a CSV column 0 is refused');
($rc, $out, $err) = $node->psql('postgres',
	qq{SELECT streamforge_kafka.subscribe('pj', '$bs', 'js', batch_size => 0)});
like($err, qr/batch_size 0 is out of range/, 'batch_size 0 is refused');
($rc, $out, $err) = $node->psql('postgres',
	qq{SELECT streamforge_kafka.subscribe('pj', '$bs', 'js')});
like($err, qr/duplicate key value violates unique constraint/,
	'a second subscription of a pipeline to the same topic is refused');
($rc, $out, $err) = $node->psql('postgres',
	qq{SELECT streamforge_kafka.subscribe('pj', '$bs', 'js', options => '{"no.such.option": "1"}')});
like($err, qr/invalid Kafka option "no.such.option"/, 'an unknown librdkafka option is refused');

# ------------------------------------------------------------------
# streamforge_kafka.max_workers bounds the workers: three run, a fourth
# subscription waits for one of them to go
# ------------------------------------------------------------------
sql(q{ALTER SYSTEM SET streamforge_kafka.max_workers = 3; SELECT pg_reload_conf()});
sleep(2);

# ------------------------------------------------------------------
# Privileges: the worker runs as the subscribing role
# ------------------------------------------------------------------
$kafka->cmd('topic pv 1');
sql(q{CREATE ROLE alice LOGIN; CREATE ROLE bob LOGIN;
	GRANT USAGE ON SCHEMA streamforge TO alice, bob;
	SELECT streamforge.create_pipeline('ppv', ARRAY['pv-0'],
		ARRAY[streamforge.fixed('w', 1000)], lateness => 1000000);
	SELECT streamforge.grant('ppv', 'alice', 'ingest');});
($rc, $out, $err) = $node->psql('postgres',
	qq{SET ROLE bob; SELECT streamforge_kafka.subscribe('ppv', '$bs', 'pv')});
like($err, qr/permission denied for pipeline "ppv"/,
	'a role without the ingest privilege cannot subscribe the pipeline');
sql(qq{SET ROLE alice; SELECT streamforge_kafka.subscribe('ppv', '$bs', 'pv', max_wait => 20)});
$kafka->produce('pv', 0, 1000, 'k', 'x');
$kafka->flush;
sleep(2);
is(sql(q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'streamforge_kafka worker'}),
	'3', 'max_workers 3: three workers run');
is(sql(q{SELECT consumed_offset, worker_state IS NULL FROM streamforge_kafka.subscriptions WHERE pipeline = 'ppv'}),
	'-1|t', 'max_workers 3: the fourth subscription has no worker yet');
sql(q{SELECT streamforge_kafka.unsubscribe('pj', 'js'); SELECT streamforge_kafka.unsubscribe('pcsv', 'cs');
	SELECT streamforge_kafka.unsubscribe('ptx', 'tx');});
caught_up('ppv', 1, 'the subscription of alice consumes once the others are gone');
sql(q{ALTER SYSTEM RESET streamforge_kafka.max_workers; SELECT pg_reload_conf()});
is(sql(q{SELECT usename FROM pg_stat_activity WHERE application_name = (SELECT 'streamforge_kafka worker ' || id FROM streamforge_kafka.subscription WHERE pipeline = 'ppv')}),
	'alice', 'its worker runs as alice');
# streamforge_kafka.fetch_nice (default 5): the worker's librdkafka threads
# run 5 nicer than its own thread, the one that maps and writes
my $wpid = sql(q{SELECT pid FROM pg_stat_activity WHERE application_name = (SELECT 'streamforge_kafka worker ' || id FROM streamforge_kafka.subscription WHERE pipeline = 'ppv')});
my ($main_nice, @thread_nice);
for my $stat (glob("/proc/$wpid/task/*/stat"))
{
	open(my $fh, '<', $stat) or next;
	my $line = <$fh>;
	close($fh);
	my ($tid) = $stat =~ m{/task/(\d+)/stat$};
	$line =~ s/^.*\) //;    # the fields after the command's name, state first
	my $nice = (split(/ /, $line))[16];
	if ($tid == $wpid) { $main_nice = $nice; }
	else { push @thread_nice, $nice; }
}
ok(defined($main_nice) && @thread_nice > 0
	  && !grep({ $_ != ($main_nice + 5 > 19 ? 19 : $main_nice + 5) } @thread_nice),
	'fetch_nice: every librdkafka thread of the worker runs 5 nicer than its own ('
	  . ($main_nice // '?') . ': ' . join(',', @thread_nice) . ')');
is(sql(q{SET ROLE bob; SELECT count(*) FROM streamforge_kafka.subscriptions WHERE pipeline = 'ppv'}),
	'0', 'bob does not see the subscription of alice');
($rc, $out, $err) = $node->psql('postgres', q{SET ROLE bob; SELECT streamforge_kafka.unsubscribe('ppv', 'pv')});
like($err, qr/has no subscription/, 'nor can he remove it');
($rc, $out, $err) = $node->psql('postgres',
	q{SET ROLE bob; UPDATE streamforge_kafka.subscription SET role = 'bob'::regrole::oid});
is(sql(q{SELECT role::regrole FROM streamforge_kafka.subscription WHERE pipeline = 'ppv'}),
	'alice', 'nor take it over');
sql(q{SELECT streamforge.revoke('ppv', 'alice', 'ingest')});
$kafka->produce('pv', 0, 1001, 'k', 'y');
$kafka->flush;
KafkaTest::wait_for($node,
	q{SELECT worker_state = 'failed' AND last_error LIKE 'permission denied for pipeline "ppv"%' FROM streamforge_kafka.subscriptions WHERE pipeline = 'ppv'},
	'after a revoke the worker fails with the error in the view');
is(sql(q{SELECT consumed_offset FROM streamforge.partitions('ppv')}), '0',
	'and ingests nothing');
sql(q{SELECT streamforge.grant('ppv', 'alice', 'ingest')});
caught_up('ppv', 2, 'after the grant the restarted worker goes on');

# ------------------------------------------------------------------
# Bad messages: on_error 'stop'
# ------------------------------------------------------------------
$kafka->cmd('topic bs 1');
sql(q{SELECT streamforge.create_pipeline('pbs', ARRAY['bs-0'],
	ARRAY[streamforge.fixed('w', 1000)], lateness => 1000000)});
sql(qq{SELECT streamforge_kafka.subscribe('pbs', '$bs', 'bs',
	mapping => '{"event_id": "id", "value": "v"}', on_error => 'stop', max_wait => 20)});
$kafka->produce('bs', 0, 1000, 'k', '{"id":"a","v":1}');
$kafka->produce('bs', 0, 1001, 'k', '{"id":"b","v":');
$kafka->produce('bs', 0, 1002, 'k', '{"id":"c","v":3}');
$kafka->flush;
KafkaTest::wait_for($node,
	q{SELECT paused AND error LIKE 'message at offset 1 of partition 0: invalid input syntax for type json%' AND worker_state = 'stopped' FROM streamforge_kafka.subscriptions WHERE pipeline = 'pbs'},
	'stop: the subscription stops with the error in the view');
is(sql(q{SELECT consumed_offset FROM streamforge.partitions('pbs')}), '0',
	'stop: the message before the bad one is consumed, the bad one is not');
is(sql(q{SELECT partition, "offset", convert_from(payload, 'UTF8'), sqlstate FROM streamforge_kafka.rejected WHERE pipeline = 'pbs'}),
	'0|1|{"id":"b","v":|22P02', 'stop: the bad message is in the dead-letter table');
is(sql(q{SELECT count(*) FROM pg_stat_activity WHERE application_name = 'streamforge_kafka worker ' || (SELECT id FROM streamforge_kafka.subscription WHERE pipeline = 'pbs')}),
	'0', 'stop: no worker runs');
# switched to skip and resumed: the bad offset is consumed without an event
sql(q{UPDATE streamforge_kafka.subscription SET on_error = 'skip' WHERE pipeline = 'pbs';
	SELECT streamforge_kafka.resume('pbs', 'bs')});
caught_up('pbs', 3, 'resumed with skip: the bad offset and the next are consumed');
is(sql(q{SELECT key, count, sum FROM streamforge.live('pbs')}), 'k|2|4',
	'the pipeline has the two good messages only');
is(sql(q{SELECT count(*) FROM streamforge_kafka.rejected WHERE pipeline = 'pbs'}), '1',
	'the dead letter is kept once');

# ------------------------------------------------------------------
# Bad messages: on_error 'skip' (mapping errors and a refused event)
# ------------------------------------------------------------------
$kafka->cmd('topic sk 1');
sql(q{SELECT streamforge.create_pipeline('psk', ARRAY['sk-0'],
	ARRAY[streamforge.fixed('w', 1000)], lateness => 1000000)});
sql(qq{SELECT streamforge_kafka.subscribe('psk', '$bs', 'sk',
	mapping => '{"event_id": "id", "value": "v"}', on_error => 'skip', max_wait => 20)});
$kafka->produce('sk', 0, 1000, 'k', '{"id":"a","v":1}');
$kafka->produce('sk', 0, 1001, 'k', '{"id":"b","v":"two"}');     # not a bigint
$kafka->produce('sk', 0, 1002, 'k', '{"id":"c","v":3}');
$kafka->produce('sk', 0, 1003, 'k', '{"id":"a","v":9}');         # SF002
$kafka->produce('sk', 0, 1004, 'k', '{"v":5}');                  # no event id
$kafka->flush;
KafkaTest::wait_for($node,
	q{SELECT count(*) = 3 FROM streamforge_kafka.rejected WHERE pipeline = 'psk'},
	'skip: three dead letters');
is(sql(q{SELECT "offset", sqlstate FROM streamforge_kafka.rejected WHERE pipeline = 'psk' ORDER BY 1}),
	"1|22P02\n3|SF002\n4|22004", 'skip: each with its offset and SQLSTATE');
is(sql(q{SELECT consumed_offset, lag FROM streamforge_kafka.subscriptions WHERE pipeline = 'psk'}),
	'2|2', 'skip: the bad messages at the end wait for the next good one (the lag counts them)');
$kafka->produce('sk', 0, 1005, 'k', '{"id":"d","v":4}');
$kafka->flush;
caught_up('psk', 6, 'skip: the next good message consumes the skipped offsets');
is(sql(q{SELECT key, count, sum FROM streamforge.live('psk')}), 'k|3|8',
	'skip: the pipeline has the good messages, each once');
is(sql(q{SELECT deliveries, accepted, duplicate_ids FROM streamforge.stats('psk')}), '6|3|3',
	'skip: a skipped offset is a delivery of the next good event, a duplicate');
is(sql(q{SELECT paused, worker_state FROM streamforge_kafka.subscriptions WHERE pipeline = 'psk'}),
	'f|running', 'skip: the subscription runs on');

# ------------------------------------------------------------------
# pause and resume
# ------------------------------------------------------------------
sql(q{SELECT streamforge_kafka.pause('psk', 'sk')});
KafkaTest::wait_for($node,
	q{SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'streamforge_kafka worker' AND application_name = 'streamforge_kafka worker ' || (SELECT id FROM streamforge_kafka.subscription WHERE pipeline = 'psk')},
	'pause: the worker stops');
$kafka->produce('sk', 0, 1006, 'k', '{"id":"e","v":1}');
$kafka->flush;
sleep(1);
is(sql(q{SELECT consumed_offset, lag FROM streamforge_kafka.subscriptions WHERE pipeline = 'psk'}),
	'5|0', 'paused: nothing is consumed (the lag is as last seen)');
sql(q{SELECT streamforge_kafka.resume('psk', 'sk')});
caught_up('psk', 7, 'resume: the worker consumes again');

# ------------------------------------------------------------------
# unsubscribe during a batch
# ------------------------------------------------------------------
$kafka->cmd('topic un 1');
sql(q{SELECT streamforge.create_pipeline('pun', ARRAY['un-0', 'other'],
	ARRAY[streamforge.fixed('w', 1000)], lateness => 1000000)});
# max_wait 2 s, batch_size 5: the five messages below make one batch
my $un_id = sql(qq{SELECT streamforge_kafka.subscribe('pun', '$bs', 'un', batch_size => 5, max_wait => 2000)});
$kafka->produce('un', 0, 1000, 'k', 'a');
$kafka->flush;
caught_up('pun', 1, 'unsubscribe: the first message is consumed');
# a session holds the pipeline's lock: the next batch waits in ingest_batch
my $locker = $node->background_psql('postgres');
$locker->query_safe(q{BEGIN; SELECT count(*) FROM streamforge.ingest('pun', 'other', 0, 'o', 'o', 1000, 1)});
$kafka->produce('un', 0, 1001 + $_, 'k', "b$_") for 0 .. 4;
$kafka->flush;
KafkaTest::wait_for($node,
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'streamforge_kafka worker' AND wait_event_type = 'Lock'},
	'unsubscribe: the worker waits in its batch');
my $unsub = $node->background_psql('postgres', wait => 0);
$unsub->query_until(qr/start/, "\\echo start\nSELECT streamforge_kafka.unsubscribe('pun', 'un');\n\\echo done\n");
KafkaTest::wait_for($node,
	q{SELECT count(*) = 1 FROM pg_stat_activity WHERE query LIKE '%unsubscribe(''pun''%' AND wait_event_type = 'Lock'},
	'unsubscribe waits for the batch');
$locker->query_safe('COMMIT');
$locker->quit;
$unsub->query_until(qr/done/, '');
$unsub->quit;
is(sql(q{SELECT consumed_offset FROM streamforge.partitions('pun') WHERE partition = 'un-0'}), '5',
	'unsubscribe: the batch it waited for committed whole');
KafkaTest::wait_for($node,
	qq{SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'streamforge_kafka worker $un_id'},
	'unsubscribe: its worker is gone');
$kafka->produce('un', 0, 2000, 'k', 'late');
$kafka->flush;
sleep(1);
is(sql(q{SELECT consumed_offset FROM streamforge.partitions('pun') WHERE partition = 'un-0'}), '5',
	'unsubscribe: nothing is consumed afterwards');
is(sql(q{SELECT count(*) FROM streamforge_kafka.subscriptions WHERE pipeline = 'pun'}), '0',
	'unsubscribe: the subscription is gone from the view');
ok($node->log_contains(qr/subscription \d+ was removed or paused, its worker stops|subscription \d+: the worker stops/),
	'the log says why the worker stopped');

# ------------------------------------------------------------------
# A clean shutdown with running workers
# ------------------------------------------------------------------
$node->stop('fast');
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no worker crashed');
$kafka->stop;
done_testing();
