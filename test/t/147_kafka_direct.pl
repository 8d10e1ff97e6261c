# streamforge_kafka: the core's C write entry (issue 43, item 3; src/api/
# direct.h, kafka/src/direct.c) gives what the ingest_batch statement gave.
#
# The same topics are consumed twice, once with
# streamforge_kafka.direct_ingest on (the default: a batch mapped in C goes
# to streamforge's C entry, no array, no statement) and once with it off
# (the ingest_batch / ingest_measures_batch statement of 0.3.0), into twin
# pipelines and twin aggregates, all outputs on.  The messages cross window
# boundaries in batches of 50 and hold what goes wrong inside the write
# (an event id re-sent with other content, SF002; a late event; a
# duplicate) and in the mapping (a missing field), so that the errors come
# from the core in the middle of a batch: the twins must have the same
# state, changelog, results, late output and dead letters.  The aggregate
# filters rows with its WHERE (the rows it drops are delivered with the
# next of their partition, as the same event at lower offsets) and has
# nullable measures.  The server log shows which way each worker took,
# and a role without EXECUTE on ingest_batch gets the statement's
# permission error, not a write through the C entry.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use KafkaTest;

my $kafka = KafkaTest->start;
my $node = KafkaTest::node('kafka_direct',
	conf => "log_min_messages = debug1\nstreamforge_kafka.max_workers = 8\n");
my $bs = $kafka->{bootstrap};

sub sql { return $node->safe_psql('postgres', $_[0]); }

# ------------------------------------------------------------------
# The messages: a simple topic and a clickstream topic, 2 partitions
# ------------------------------------------------------------------
# One partition each: an identity conflict, a late event and the changes'
# order depend on how two partitions interleave, which is the cluster's
# (tests 140 and 145 compare several partitions with their SQL twins).
$kafka->cmd('topic dd 1');
$kafka->cmd('topic dc 1');
my ($nd, $nc) = (0, 0);
my $seed = 4711;
sub rnd { $seed = ($seed * 1103515245 + 12345) % 2147483648; return $seed % $_[0]; }
my @sent;
for my $i (1 .. 600)
{
	my $part = 0;
	my ($id, $v) = ($i, rnd(9) - 2);
	my $t = 1000 + $i * 17 + rnd(400);
	$t -= 5000 if $i % 97 == 0;                  # late: beyond the lateness
	my $k = ('a', 'b,c', 'q"x', '{d}', ' e')[ rnd(5) ];
	(my $kj = $k) =~ s/"/\\"/g;
	if ($i % 53 == 0 && @sent)                   # a duplicate: the same again
	{
		my $d = $sent[ rnd(scalar @sent) ];
		$kafka->produce('dd', $d->[0], 1, undef, $d->[1]);
		$nd++;
		next;
	}
	if ($i % 61 == 0)                            # an id re-sent with another value
	{
		$id = $i - 3;
		$v = 1000 + $i;
	}
	my $msg = $i % 89 == 0
	  ? qq({"id":"$id","k":"$kj","t":$t})         # missing "v"
	  : qq({"id":"$id","k":"$kj","t":$t,"v":$v});
	$kafka->produce('dd', $part, 1, undef, $msg);
	push @sent, [ $part, $msg ];
	$nd++;
}
for my $i (1 .. 600)
{
	my $part = 0;
	my $page = ('/a', '/b', 'bot', '/c,d')[ rnd(4) ];
	$page = '/a' if $i == 600;    # rows the WHERE drops go in with the next one
	my $ms = rnd(5) == 0 ? 'null' : rnd(1000);
	my $sec = $i * 2 + rnd(20);
	$sec -= 600 if $i % 101 == 0;                # late
	my $at = sprintf('"2026-12-01T00:%02d:%02dZ"', int($sec / 60) % 60, $sec % 60);
	$at = '"2026-12-01T00:00:00Z"' if $sec < 0;
	$kafka->produce('dc', $part, 1, undef, qq({"id":$i,"page":"$page","ms":$ms,"at":$at}));
	$nc++;
}
# A composite key (text, a nullable text, a nullable integer) whose
# elements need array_out's quoting, and a WHERE that is NULL for some
# rows: with the C entry the worker writes the key from its elements and
# the event id from the integer (aggrow.c), without it the expression's
# array and array_out do; ISO times with and without the fast path's form.
$kafka->cmd('topic dk 1');
my $nk = 0;
{
	my @pages = ('"p"', '"a b"', '"q\\"x"', '"back\\\\slash"', '"{br}"', '""',
		'"NULL"', '"null"', '"x,y"', '"tab\\t"', '"\\u00e9t\\u00e9"', '"\\u00e9"');
	my @countries = ('"fr"', 'null', '"N\\"y"', '"de"');
	my @codes = (42, -5, 'null', 7, 0, 123456789);
	my @ats = ('2026-12-01T00:%02d:%02dZ', '2026-12-01T00:%02d:%02d.5Z',
		'2026-12-01T00:%02d:%02d.123456+00:00', '2026-12-01T02:%02d:%02d+02:00',
		'2026-12-01 00:%02d:%02dZ', '2026-12-01T00:%02d:%02d.1234567Z');
	for my $i (1 .. 400)
	{
		my $sec = $i * 3 + rnd(30);
		my $at = sprintf($ats[ rnd(scalar @ats) ], int($sec / 60) % 60, $sec % 60);
		my ($page, $country, $code) =
		  ($pages[ rnd(scalar @pages) ], $countries[ rnd(scalar @countries) ], $codes[ rnd(scalar @codes) ]);
		$code = 42 if $i == 400;    # rows the WHERE drops go in with the next one
		$kafka->produce('dk', 0, 1, undef,
			qq({"id":$i,"page":$page,"country":$country,"code":$code,"at":"$at"}));
		$nk++;
	}
}
$kafka->flush;

sql(q{CREATE TABLE clicks_on (id bigint PRIMARY KEY, page text NOT NULL, ms integer,
	at timestamptz NOT NULL)});
sql(q{CREATE TABLE clicks_off (LIKE clicks_on INCLUDING ALL)});
for my $w (qw(on off))
{
	sql(qq{SELECT streamforge.create_pipeline('p$w', ARRAY['dd-0'],
		ARRAY[streamforge.fixed('w', 1000), streamforge.sliding('s', 2000, 1000)],
		lateness => 2000);
		SELECT streamforge.configure_outputs('p$w')});
	sql(qq{SELECT streamforge.create_aggregate('a$w', \$\$
		SELECT page, count(*) AS n, sum(ms) AS total, max(ms) AS slowest FROM clicks_$w
		 WHERE page <> 'bot'
		 GROUP BY page, streamforge.tumble(at, interval '1 minute')
		\$\$, lateness => interval '2 minutes');
		SELECT streamforge.configure_outputs('a$w')});
	sql(qq{CREATE TABLE keys_$w (id bigint PRIMARY KEY, page text NOT NULL, country text,
		code integer, at timestamptz NOT NULL);
		SELECT streamforge.create_aggregate('k$w', \$\$
		SELECT page, country, code, count(*) AS n, sum(code) AS total FROM keys_$w
		 WHERE code <> 7
		 GROUP BY page, country, code, streamforge.tumble(at, interval '1 minute')
		\$\$, lateness => interval '2 minutes');
		SELECT streamforge.configure_outputs('k$w')});
}

sub consume
{
	my ($w) = @_;
	sql(qq{SELECT streamforge_kafka.subscribe('p$w', '$bs', 'dd',
		mapping => '{"event_id": "id", "key": "k", "event_time": "t", "value": "v"}',
		on_error => 'skip', batch_size => 50, max_wait => 20)});
	sql(qq{SELECT streamforge_kafka.subscribe_aggregate('a$w', '$bs', 'dc',
		'{"id": "id", "page": "page", "ms": "ms", "at": "at"}',
		on_error => 'skip', batch_size => 50, max_wait => 20)});
	KafkaTest::wait_for($node, KafkaTest::caught_up_sql("p$w", $nd),
		"direct_ingest $w: the simple topic is consumed");
	sql(qq{SELECT streamforge_kafka.subscribe_aggregate('k$w', '$bs', 'dk',
		'{"id": "id", "page": "page", "country": "country", "code": "code", "at": "at"}',
		on_error => 'skip', batch_size => 50, max_wait => 20)});
	KafkaTest::wait_for($node, KafkaTest::caught_up_sql("a$w", $nc),
		"direct_ingest $w: the clickstream topic is consumed");
	KafkaTest::wait_for($node, KafkaTest::caught_up_sql("k$w", $nk),
		"direct_ingest $w: the composite keys' topic is consumed");
	return;
}

my $log_at = -s $node->logfile;
consume('on');
my $log = slurp_file($node->logfile, $log_at);
like($log, qr/streamforge_kafka: subscription \d+: batches go to streamforge's C write entry/,
	'direct_ingest on: the workers take the C entry');

sql(q{ALTER SYSTEM SET streamforge_kafka.direct_ingest = off; SELECT pg_reload_conf()});
$node->poll_query_until('postgres', 'SHOW streamforge_kafka.direct_ingest', 'off');
$log_at = -s $node->logfile;
consume('off');
$log = slurp_file($node->logfile, $log_at);
unlike($log, qr/batches go to streamforge's C write entry/,
	'direct_ingest off: the workers keep the statement');

# ------------------------------------------------------------------
# The twins are equal
# ------------------------------------------------------------------
sub rows
{
	my ($q) = @_;
	return sql(qq{SELECT string_agg(r::text, E'\\n' ORDER BY r::text) FROM ($q) AS r});
}
my %q = (
	'live state' => q{SELECT window_name, key, window_start, count, sum, min, max
		FROM streamforge.live('P')},
	'changelog' => q{SELECT seq, op, window_name, key, window_start, count, sum, min, max
		FROM streamforge.changelog WHERE pipeline = 'P'},
	'results' => q{SELECT window_name, key, window_start, count, sum, min, max
		FROM streamforge.results WHERE pipeline = 'P'},
	'late output' => q{SELECT late_seq, event_id, key, event_time, value
		FROM streamforge.late_output WHERE pipeline = 'P'},
	'dead letters' => q{SELECT partition, "offset", sqlstate, replace(error, pipeline, '<pipeline>')
		FROM streamforge_kafka.rejected WHERE pipeline = 'P'});
for my $what (sort keys %q)
{
	(my $on = $q{$what}) =~ s/'P'/'pon'/g;
	(my $off = $q{$what}) =~ s/'P'/'poff'/g;
	my $a = rows($on);
	isnt($a, '', "simple: $what is not empty");
	is($a, rows($off), "simple: the same $what either way");
}
like(rows(q{SELECT sqlstate FROM streamforge_kafka.rejected WHERE pipeline = 'pon'}),
	qr/SF002.*22004|22004.*SF002/s,
	'simple: an identity conflict (in the write) and a missing field (in the mapping) are dead letters');

my %a = (
	'view' => q{SELECT page, window_start, n, total, slowest FROM A_live},
	'late rows' => q{SELECT * FROM A_late},
	'changelog' => q{SELECT c.seq, c.op, c.key, c.window_start, c.count
		FROM streamforge.changelog AS c WHERE c.pipeline = 'A'},
	'dead letters' => q{SELECT partition, "offset", sqlstate, replace(error, pipeline, '<pipeline>')
		FROM streamforge_kafka.rejected WHERE pipeline = 'A'});
for my $what (sort keys %a)
{
	my ($on, $off) = ($a{$what}, $a{$what});
	$on =~ s/\bA_/aon_/g;
	$on =~ s/'A'/'aon'/g;
	$off =~ s/\bA_/aoff_/g;
	$off =~ s/'A'/'aoff'/g;
	my $x = rows($on);
	isnt($x, '', "aggregate: $what is not empty") if $what eq 'view';
	is($x, rows($off), "aggregate: the same $what either way");
}
is(sql(q{SELECT count(*) FROM aon_live WHERE page = 'bot'}), '0',
	'aggregate: the WHERE applies');

my %k = (
	'view' => q{SELECT page, country, code, window_start, n, total FROM K_live},
	'keys' => q{SELECT key, window_start, count FROM streamforge.live('K')},
	'dead letters' => q{SELECT partition, "offset", sqlstate, replace(error, pipeline, '<pipeline>')
		FROM streamforge_kafka.rejected WHERE pipeline = 'K'});
for my $what (sort keys %k)
{
	my ($on, $off) = ($k{$what}, $k{$what});
	$on =~ s/\bK_/kon_/g;
	$on =~ s/'K'/'kon'/g;
	$off =~ s/\bK_/koff_/g;
	$off =~ s/'K'/'koff'/g;
	my $x = rows($on);
	isnt($x, '', "composite key: $what is not empty") if $what ne 'dead letters';
	is($x, rows($off), "composite key: the same $what either way");
}
is( sql(
		q(SELECT count(DISTINCT l.key) FILTER (WHERE l.key LIKE '%"%'), count(*) FILTER (WHERE l.key LIKE '%,NULL,%'),
		count(*) FILTER (WHERE l.key LIKE '%"NULL"%') > 0 AND count(*) FILTER (WHERE l.key LIKE '{""%') > 0
		FROM streamforge.live('kon') AS l)) =~ /^([1-9]\d*)\|([1-9]\d*)\|t$/
	? 'quoted' : 'not',
	'quoted',
	'composite key: elements quoted as array_out quotes them, NULL elements bare');
is(sql(q{SELECT count(*) FROM kon_live WHERE code = 7 OR code IS NULL}), '0',
	'composite key: the WHERE applies, NULL as false');

# ------------------------------------------------------------------
# EXECUTE on ingest_batch is still the statement's check
# ------------------------------------------------------------------
$log_at = -s $node->logfile;
sql(q{ALTER SYSTEM RESET streamforge_kafka.direct_ingest; SELECT pg_reload_conf();
	CREATE ROLE feeder LOGIN;
	GRANT USAGE ON SCHEMA streamforge, streamforge_kafka TO feeder;
	SELECT streamforge.create_pipeline('pnox', ARRAY['dd-0'],
		ARRAY[streamforge.fixed('w', 1000)], lateness => 2000);
	SELECT streamforge.grant_privilege('pnox', 'feeder', 'ingest');
	REVOKE EXECUTE ON FUNCTION streamforge.ingest_batch(text, streamforge.delivery[]) FROM PUBLIC});
$node->safe_psql('postgres', qq{SELECT streamforge_kafka.subscribe('pnox', '$bs', 'dd',
	mapping => '{"event_id": "id", "key": "k", "event_time": "t", "value": "v"}',
	on_error => 'skip', max_wait => 20)}, extra_params => [ '-U', 'feeder' ]);
my $denied = 0;
for (1 .. 600)
{
	$denied = 1, last
	  if slurp_file($node->logfile, $log_at) =~
	  /ERROR:  permission denied for function ingest_batch/;
	usleep(100_000);
}
ok($denied, 'without EXECUTE on ingest_batch the worker fails as the statement did');
is(sql(q{SELECT count(*) FROM streamforge.live('pnox')}), '0',
	'without EXECUTE nothing is written');
sql(q{GRANT EXECUTE ON FUNCTION streamforge.ingest_batch(text, streamforge.delivery[]) TO PUBLIC});
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('pnox', $nd),
	'with EXECUTE again the subscription catches up');
is(rows(q{SELECT window_name, key, window_start, count, sum FROM streamforge.live('pnox')}),
	rows(q{SELECT window_name, key, window_start, count, sum FROM streamforge.live('pon')
		WHERE window_name = 'w'}),
	'and has what the others have');

$kafka->stop;
done_testing();
