# streamforge_kafka: a topic feeds a query-defined aggregate (issue 43,
# items 1 and 2; issue 45, items 3 and 4 for Kafka), against librdkafka's
# mock cluster.
#
# The same job (create_aggregate with WHERE, FILTER, several aggregates,
# stddev, a nullable measure, a composite key whose parts hold commas and
# quotes) is made twice over two tables of the same shape: one fed by
# INSERTs, one by a topic through subscribe_aggregate.  After finish() on
# both, their views are identical, and they agree with the plain query.
# Messages that do not match the WHERE consume their offsets (also at the
# end of a partition), bad messages go to the dead letters with the field
# named, and subscribe refuses what it cannot feed, creating nothing.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KafkaTest;

my $kafka = KafkaTest->start;
my $node = KafkaTest::node('kafka_aggregate');
my $bs = $kafka->{bootstrap};

sub sql { return $node->safe_psql('postgres', $_[0]); }

sub fails
{
	my ($q, $re, $what) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', $q);
	isnt($rc, 0, "$what: refused");
	like($err, $re, "$what: the error says why");
}

for my $t (qw(clicks_sql clicks_kafka))
{
	sql(qq{CREATE TABLE $t (id bigint PRIMARY KEY, page text NOT NULL,
		country text NOT NULL, status text NOT NULL, ms integer,
		clicked_at timestamptz NOT NULL)});
	my $name = $t eq 'clicks_sql' ? 'agg_sql' : 'agg_kafka';
	sql(qq{SELECT streamforge.create_aggregate('$name', \$\$
		SELECT page, country, count(*) AS n, sum(ms) AS total, avg(ms) AS mean,
		       stddev_samp(ms) AS sd, max(ms) AS slowest,
		       count(*) FILTER (WHERE status = 'err') AS errors
		  FROM $t
		 WHERE status <> 'bot'
		 GROUP BY page, country, streamforge.tumble(clicked_at, interval '1 minute')
	\$\$, lateness => interval '1 day')});
}

# ------------------------------------------------------------------
# Refused up front, nothing created
# ------------------------------------------------------------------
$kafka->cmd('topic clicks 2');
sql(q{SELECT streamforge.create_pipeline('pm', ARRAY['p0'],
	ARRAY[streamforge.fixed('w', 60)], lateness => 0,
	measures => ARRAY['a', 'b'], aggregates => ARRAY['sum(a)'])});
fails(qq{SELECT streamforge_kafka.subscribe('pm', '$bs', 'clicks')},
	qr/pipeline "pm" has 2 measures: subscribe cannot feed it/,
	'subscribe of a measures pipeline');
fails(qq{SELECT streamforge_kafka.subscribe('agg_kafka', '$bs', 'clicks')},
	qr/pipeline "agg_kafka" is an aggregate made by create_aggregate.*HINT:.*subscribe_aggregate/s,
	'subscribe of an aggregate');
fails(qq{SELECT streamforge_kafka.subscribe_aggregate('pm', '$bs', 'clicks', '{"a": "a"}')},
	qr/"pm" is not an aggregate made by streamforge.create_aggregate/,
	'subscribe_aggregate of a pipeline');
fails(qq{SELECT streamforge_kafka.subscribe_aggregate('agg_kafka', '$bs', 'clicks',
	'{"page": "page", "nope": "x"}')},
	qr/table clicks_kafka of aggregate "agg_kafka" has no column "nope"/,
	'a column the table does not have');
fails(qq{SELECT streamforge_kafka.subscribe_aggregate('agg_kafka', '$bs', 'clicks',
	'{"page": "page", "country": "c", "status": "s", "clicked_at": "at"}')},
	qr/the mapping leaves out column "ms", which aggregate "agg_kafka" reads/,
	'a column the aggregate reads, not mapped');
fails(qq{SELECT streamforge_kafka.subscribe_aggregate('agg_kafka', '$bs', 'clicks',
	'{"page": "page", "country": "c", "status": "s", "clicked_at": "at", "ms": "\$x"}')},
	qr/field "\$x" of column "ms" is not a path of keys/,
	'a field that is no path of keys');
fails(qq{SELECT streamforge_kafka.subscribe_aggregate('agg_kafka', '$bs', 'clicks',
	'{"page": 1}', format => 'text')},
	qr/format "text" cannot feed an aggregate/,
	'format text');
sql(q{CREATE TABLE tp (id bigint PRIMARY KEY, page text NOT NULL, at timestamptz NOT NULL)});
sql(q{SELECT streamforge.create_aggregate('agg_part', $$
	SELECT page, count(*) AS n FROM tp GROUP BY page, streamforge.tumble(at, interval '1 minute')
$$, partitions => ARRAY['clicks-1'])});
fails(qq{SELECT streamforge_kafka.subscribe_aggregate('agg_part', '$bs', 'clicks',
	'{"page": "page", "at": "at"}')},
	qr/partition "clicks-1" of aggregate "agg_part" receives the rows of its table/,
	'a topic partition that the table feeds too (item 6)');
sql(q{CREATE TABLE tq (id bigint PRIMARY KEY, page text NOT NULL, at timestamptz NOT NULL)});
sql(q{SELECT streamforge.create_aggregate('agg_expr', $$
	SELECT page, count(*) AS n FROM tq GROUP BY page, streamforge.tumble(at, interval '1 minute')
$$, partitions => ARRAY['a', 'b'], partition => $$CASE WHEN id % 2 = 0 THEN 'a' ELSE 'b' END$$)});
fails(qq{SELECT streamforge_kafka.subscribe_aggregate('agg_expr', '$bs', 'clicks',
	'{"page": "page", "at": "at"}')},
	qr/aggregate "agg_expr" routes the rows of its table by an expression/,
	'an aggregate whose table is routed by an expression (item 6)');
is(sql(q{SELECT count(*) FROM streamforge_kafka.subscription}), '0',
	'no subscription was created');
is(sql(q{SELECT count(*) FROM streamforge.partitions('agg_kafka')}), '1',
	'no partition was added to the aggregate');

# ------------------------------------------------------------------
# The same events, by INSERT and by the topic
# ------------------------------------------------------------------
is(sql(qq{SELECT streamforge_kafka.subscribe_aggregate('agg_kafka', '$bs', 'clicks',
	'{"id": "id", "page": "page", "country": "\$.geo.country", "status": "status",
	  "ms": "ms", "clicked_at": "at"}',
	batch_size => 7, max_wait => 20, on_error => 'skip')}), '1',
	'subscribe_aggregate returns the subscription id');

my @pages = ('/home', '/a,b', '/q"uote', '/{x}', '/home');
my @countries = ('fr', 'de', 'x,y');
my @status = ('ok', 'ok', 'err', 'bot', 'ok');
my $t0 = 1_796_083_200_000;    # 2026-12-01 00:00:00 UTC, in ms
my @values;
my $n = 120;
for my $i (0 .. $n - 1)
{
	my $page = $pages[($i * 7) % @pages];
	my $country = $countries[($i * 5) % @countries];
	my $st = $status[$i % @status];
	$st = 'ok' if $i >= $n - 2;
	my $ms = $i % 11 == 0 ? undef : ($i * 37) % 500;
	my $at = $t0 + $i * 1733;
	my $part = ($i * 3) % 2;
	my $s = int($at / 1000);
	my @tm = gmtime($s);
	my $iso = sprintf('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', $tm[5] + 1900, $tm[4] + 1,
		$tm[3], $tm[2], $tm[1], $tm[0], $at % 1000);
	(my $jpage = $page) =~ s/"/\\"/g;
	(my $jcountry = $country) =~ s/"/\\"/g;
	my $jms = defined $ms ? $ms : 'null';
	$kafka->produce('clicks', $part, $at, "k$i",
		qq({"id": $i, "page": "$jpage", "geo": {"country": "$jcountry"}, "status": "$st", "ms": $jms, "at": "$iso"}));
	(my $qpage = $page) =~ s/'/''/g;
	push @values, "($i, '$qpage', '$country', '$st', " . ($ms // 'NULL') . ", '$iso')";
}
# a partition that ends with messages that do not match
$kafka->produce('clicks', 0, $t0 + 500_000, 'kb1',
	qq({"id": 1000, "page": "/home", "geo": {"country": "fr"}, "status": "bot", "ms": 1, "at": "2026-12-01T00:03:00Z"}));
$kafka->produce('clicks', 0, $t0 + 500_001, 'kb2',
	qq({"id": 1001, "page": "/home", "geo": {"country": "fr"}, "status": "bot", "ms": 2, "at": "2026-12-01T00:03:01Z"}));
$kafka->flush;
push @values, "(1000, '/home', 'fr', 'bot', 1, '2026-12-01T00:03:00Z')",
  "(1001, '/home', 'fr', 'bot', 2, '2026-12-01T00:03:01Z')";
sql('INSERT INTO clicks_sql VALUES ' . join(', ', @values));

KafkaTest::wait_for($node,
	q{SELECT count(*) = 2 AND sum(consumed_offset + 1) = 120 FROM streamforge_kafka.subscriptions WHERE pipeline = 'agg_kafka'},
	'the topic is consumed but the two trailing messages that do not match');
is(sql(q{SELECT string_agg(kafka_partition || ':' || consumed_offset || ':' || high_watermark || ':' || lag, ',' ORDER BY kafka_partition) FROM streamforge_kafka.subscriptions WHERE pipeline = 'agg_kafka'}),
	'0:59:62:2,1:59:60:0',
	'the non-matching messages at the end of partition 0 are pending (lag 2)');

# one more matching message delivers the pending offsets
$kafka->produce('clicks', 0, $t0 + 500_002, 'kc',
	qq({"id": 1002, "page": "/home", "geo": {"country": "fr"}, "status": "ok", "ms": 3, "at": "2026-12-01T00:03:02Z"}));
$kafka->flush;
sql(q{INSERT INTO clicks_sql VALUES (1002, '/home', 'fr', 'ok', 3, '2026-12-01T00:03:02Z')});
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('agg_kafka', 123),
	'a matching message consumes the pending offsets');

sub view
{
	my ($name, $suffix) = @_;
	return sql(qq{SELECT page, country, window_start, window_end, n, total, mean, sd, slowest, errors
		FROM ${name}$suffix ORDER BY page, country, window_start});
}
my $live_sql = view('agg_sql', '_live');
cmp_ok(length($live_sql), '>', 100, 'the aggregate fed by INSERT has live rows');
is(view('agg_kafka', '_live'), $live_sql, 'the live views are identical');
sql(q{SELECT count(*) FROM streamforge.finish('agg_sql')});
sql(q{SELECT count(*) FROM streamforge.finish('agg_kafka')});
my $final = view('agg_sql', '');
cmp_ok(scalar(split /\n/, $final), '>', 10, 'the aggregate fed by INSERT has results');
is(view('agg_kafka', ''), $final, 'the views of results are identical');
is(sql(q{SELECT string_agg(format('%s|%s|%s|%s|%s|%s', page, country, window_start, n, total, errors), E'\n' ORDER BY page, country, window_start) FROM agg_kafka}),
	sql(q{SELECT string_agg(format('%s|%s|%s|%s|%s|%s', page, country, w, n, total, errors), E'\n' ORDER BY page, country, w)
		FROM (SELECT page, country, streamforge.tumble(clicked_at, interval '1 minute') AS w,
		             count(*) AS n, sum(ms) AS total, count(*) FILTER (WHERE status = 'err') AS errors
		        FROM clicks_sql WHERE status <> 'bot'
		       GROUP BY 1, 2, 3) AS q}),
	'the topic gives what the plain query gives over the same rows');

# ------------------------------------------------------------------
# A join with a dimension table (issue 47), fed by a topic: the worker
# evaluates the attachment's expressions, the dimension's look-ups
# included, in C for each row (aggrow.c); a dimension row changed
# between two batches is seen by the events consumed after the change,
# as by the rows inserted after it
# ------------------------------------------------------------------
sql(q{CREATE TABLE sections (page text PRIMARY KEY, section text NOT NULL)});
sql(q{INSERT INTO sections VALUES ('/home', 'front'), ('/a,b', 'misc'), ('/q"uote', 'misc')});
for my $t (qw(jclicks_sql jclicks_kafka))
{
	sql(qq{CREATE TABLE $t (id bigint PRIMARY KEY, page text NOT NULL, ms integer,
		clicked_at timestamptz NOT NULL)});
	my $name = $t eq 'jclicks_sql' ? 'jagg_sql' : 'jagg_kafka';
	sql(qq{SELECT streamforge.create_aggregate('$name', \$\$
		SELECT d.section, count(*) AS n, sum(c.ms) AS total, max(c.ms) AS slowest
		  FROM $t c LEFT JOIN sections d ON d.page = c.page
		 WHERE c.ms IS DISTINCT FROM 13
		 GROUP BY d.section, streamforge.tumble(c.clicked_at, interval '1 minute')
	\$\$, lateness => interval '1 day')});
}
$kafka->cmd('topic jclicks 2');
sql(qq{SELECT streamforge_kafka.subscribe_aggregate('jagg_kafka', '$bs', 'jclicks',
	'{"id": "id", "page": "page", "ms": "ms", "clicked_at": "at"}',
	batch_size => 5, max_wait => 20)});
my @jvalues;
sub jround
{
	my ($from, $to) = @_;
	my @v;
	for my $i ($from .. $to)
	{
		my $page = $pages[($i * 3) % @pages];
		my $ms = $i % 7 == 0 ? undef : ($i * 13) % 40;
		my $at = $t0 + $i * 2011;
		my @tm = gmtime(int($at / 1000));
		my $iso = sprintf('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', $tm[5] + 1900, $tm[4] + 1,
			$tm[3], $tm[2], $tm[1], $tm[0], $at % 1000);
		(my $jpage = $page) =~ s/"/\\"/g;
		$kafka->produce('jclicks', $i % 2, $at, "j$i",
			qq({"id": $i, "page": "$jpage", "ms": ) . ($ms // 'null') . qq(, "at": "$iso"}));
		(my $qpage = $page) =~ s/'/''/g;
		push @v, "($i, '$qpage', " . ($ms // 'NULL') . ", '$iso')";
	}
	$kafka->flush;
	sql('INSERT INTO jclicks_sql VALUES ' . join(', ', @v));
	push @jvalues, @v;
	return;
}
jround(0, 39);
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('jagg_kafka', 40),
	'the join aggregate consumes the first 40 messages');
# '/{x}' has no section (LEFT: a NULL group); '/a,b' moves to another one
sql(q{UPDATE sections SET section = 'moved' WHERE page = '/a,b'});
jround(40, 79);
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('jagg_kafka', 80),
	'the join aggregate consumes the next 40 messages');
sub jview
{
	my ($name) = @_;
	return sql(qq{SELECT section, window_start, n, total, slowest FROM ${name}_live
		ORDER BY section NULLS FIRST, window_start});
}
my $jlive = jview('jagg_sql');
like($jlive, qr/^\|/m, 'the join aggregate fed by INSERT has a NULL group');
like($jlive, qr/^moved\|/m, 'and rows of the changed section');
like($jlive, qr/^misc\|/m, 'and rows of the old one');
is(jview('jagg_kafka'), $jlive, 'the join aggregates fed by INSERT and by the topic are identical');
# its worker's slot goes back (streamforge_kafka.max_workers: 4)
sql(q{SELECT streamforge_kafka.unsubscribe('jagg_kafka', 'jclicks')});

# ------------------------------------------------------------------
# Bad messages: dead letters that name the field (on_error skip)
# ------------------------------------------------------------------
$kafka->produce('clicks', 1, $t0 + 600_000, 'b1',
	qq({"id": 2000, "page": "/home", "geo": {"country": "fr"}, "status": "ok", "ms": "slow", "at": "2026-12-01T00:10:00Z"}));
$kafka->produce('clicks', 1, $t0 + 600_001, 'b2',
	qq({"id": 2001, "geo": {"country": "fr"}, "status": "ok", "ms": 1, "at": "2026-12-01T00:10:00Z"}));
$kafka->produce('clicks', 1, $t0 + 600_002, 'b3',
	qq({"id": 2002, "page": "/home", "geo": {"country": "fr"}, "status": "ok", "ms": 1, "at": "not a time"}));
$kafka->produce('clicks', 1, $t0 + 600_003, 'b4', qq({"id": 2003, "page": ));
$kafka->produce('clicks', 1, $t0 + 600_004, 'b5',
	qq({"id": 2004, "page": "/home", "geo": "fr", "status": "ok", "ms": 1, "at": "2026-12-01T00:10:00Z"}));
$kafka->produce('clicks', 1, $t0 + 600_005, 'g1',
	qq({"id": 2005, "page": "/home", "geo": {"country": "fr"}, "status": "ok", "ms": 1, "at": "2026-12-01T00:10:00Z"}));
$kafka->flush;
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('agg_kafka', 129),
	'the bad messages are skipped, the good one after them consumed');
is(sql(q{SELECT string_agg("offset" || ' ' || sqlstate || ' ' || error, E'\n' ORDER BY "offset") FROM streamforge_kafka.rejected WHERE pipeline = 'agg_kafka'}),
	join("\n",
		'60 22P02 field "ms": invalid input syntax for type integer: "slow"',
		'61 22004 field "page" is missing from the message',
		'62 22007 field "at": invalid input syntax for type timestamp with time zone: "not a time"',
		'63 22P02 invalid input syntax for type json',
		'64 22004 field "$.geo.country" is missing from the message'),
	'each bad message is a dead letter; the error names the field');

# ------------------------------------------------------------------
# out_of_orderness as an interval (issue 45, item 3)
# ------------------------------------------------------------------
$kafka->cmd('topic secs 1');
sql(q{SELECT streamforge.create_pipeline('psec', ARRAY['secs-0'],
	ARRAY[streamforge.fixed('w', 60)], lateness => 0, time_unit => interval '1 second')});
sql(qq{SELECT streamforge_kafka.subscribe('psec', '$bs', 'secs',
	out_of_orderness => interval '5 minutes', max_wait => 20)});
is(sql(q{SELECT out_of_orderness FROM streamforge_kafka.subscription WHERE pipeline = 'psec'}),
	'300', 'an interval is stored in the pipeline\'s units');
fails(qq{SELECT streamforge_kafka.subscribe('pm', '$bs', 'secs', out_of_orderness => interval '1 second')},
	qr/out_of_orderness is an interval but pipeline "pm" has no time unit/,
	'an interval on a pipeline without a time unit');

# ------------------------------------------------------------------
# subscribe's mapping: a missing field is named (issue 45, item 4)
# ------------------------------------------------------------------
$kafka->cmd('topic old 1');
sql(q{SELECT streamforge.create_pipeline('pold', ARRAY['old-0'],
	ARRAY[streamforge.fixed('w', 60)], lateness => 1000000)});
sql(qq{SELECT streamforge_kafka.subscribe('pold', '$bs', 'old',
	mapping => '{"key": "user", "value": "\$.n"}', on_error => 'skip', max_wait => 20)});
$kafka->produce('old', 0, 1000, undef, '{"n": 1}');
$kafka->produce('old', 0, 1001, undef, '{"user": "u"}');
$kafka->produce('old', 0, 1002, undef, '{"user": "u", "n": 2}');
$kafka->flush;
KafkaTest::wait_for($node, KafkaTest::caught_up_sql('pold', 3), 'pold: consumed');
is(sql(q{SELECT string_agg("offset" || ' ' || sqlstate || ' ' || error, E'\n' ORDER BY "offset") FROM streamforge_kafka.rejected WHERE pipeline = 'pold'}),
	"0 22004 field \"user\" of key is missing from the message or null\n"
	  . "1 22004 field \"\$.n\" of value is missing from the message or null",
	'a missing field of the mapping is named');

# ------------------------------------------------------------------
# The table of a subscribed aggregate (issue 43, item 6): its rows go to
# the aggregate's own partition, never to a topic's
# ------------------------------------------------------------------
my $before = sql(q{SELECT string_agg(partition || ':' || consumed_offset, ',' ORDER BY partition) FROM streamforge.partitions('agg_kafka') WHERE partition <> 'default'});
sql(q{INSERT INTO clicks_kafka VALUES (5000, '/t', 'fr', 'ok', 1, '2026-12-01T00:20:00Z')});
is(sql(q{SELECT string_agg(partition || ':' || consumed_offset, ',' ORDER BY partition) FROM streamforge.partitions('agg_kafka') WHERE partition <> 'default'}),
	$before, 'a row inserted into the table consumes no offset of a topic partition');
is(sql(q{SELECT consumed_offset FROM streamforge.partitions('agg_kafka') WHERE partition = 'default'}),
	'0', 'it went to the aggregate\'s own partition');

# ------------------------------------------------------------------
# The aggregate's expressions run as its table's owner, restricted: a
# superuser who subscribes the aggregate of a role without privileges does
# not run that role's code as a superuser (as logical replication applies
# as the table's owner), in the rows made in C (a text column) and in the
# mapping statement (a varchar(20) column keeps it)
# ------------------------------------------------------------------
sql(q{CREATE ROLE kown;
	GRANT USAGE ON SCHEMA streamforge TO kown;
	CREATE SCHEMA kown AUTHORIZATION kown;
	SET ROLE kown;
	SET search_path = kown;
	CREATE TABLE kown.log (who text, what text);
	CREATE FUNCTION kown.note() RETURNS void LANGUAGE plpgsql AS $f$
	BEGIN
	    BEGIN
	        EXECUTE 'UNLISTEN kown_nothing';
	        INSERT INTO kown.log VALUES (current_user, 'unrestricted');
	    EXCEPTION WHEN insufficient_privilege THEN
	        INSERT INTO kown.log VALUES (current_user, SQLERRM);
	    END;
	END $f$;
	-- immutable by its declaration, not by what it calls
	CREATE FUNCTION kown.k(p text) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $f$
	BEGIN
	    PERFORM kown.note();
	    RETURN p;
	END $f$;
	CREATE TABLE kown.t1 (id bigint PRIMARY KEY, page text NOT NULL, at timestamptz NOT NULL);
	CREATE TABLE kown.t2 (id bigint PRIMARY KEY, page varchar(20) NOT NULL, at timestamptz NOT NULL);
	SELECT streamforge.create_aggregate('kown1', $$
	    SELECT kown.k(page) AS page, count(*) AS n FROM kown.t1
	     GROUP BY kown.k(page), streamforge.tumble(at, interval '1 minute') $$, lateness => interval '1 day');
	SELECT streamforge.create_aggregate('kown2', $$
	    SELECT kown.k(page) AS page, count(*) AS n FROM kown.t2
	     GROUP BY kown.k(page), streamforge.tumble(at, interval '1 minute') $$, lateness => interval '1 day');
	RESET ROLE;});
# a role with admin on the aggregate but not the owner's privileges would
# have the owner's code run with rights it does not have: refused up front
sql(q{CREATE ROLE ksub LOGIN;
	GRANT USAGE ON SCHEMA streamforge TO ksub;
	SET ROLE kown;
	SELECT streamforge.grant_privilege('kown1', 'ksub', 'admin');
	RESET ROLE;});
{
	my ($rc, $out, $err) = $node->psql('postgres',
		qq{SELECT streamforge_kafka.subscribe_aggregate('kown1', '$bs', 'kown',
			'{"id": "id", "page": "page", "at": "at"}', partition_prefix => 'ksub-')},
		extra_params => [ '-U', 'ksub' ]);
	isnt($rc, 0, 'a subscriber without the privileges of the table\'s owner: refused');
	like($err, qr/permission denied to feed the aggregate of table "t1".*DETAIL:  Its expressions run as role "kown"/s,
		'the error names the owner');
	is(sql(q{SELECT count(*) FROM streamforge_kafka.subscription WHERE pipeline = 'kown1'}), '0',
		'nothing was created');
}
$kafka->cmd('topic kown 1');
$kafka->produce('kown', 0, $t0 + $_, "o$_",
	qq({"id": $_, "page": "/p$_", "at": "2026-12-01T00:00:0${_}Z"})) for 1 .. 3;
$kafka->flush;
for my $a (qw(kown1 kown2))
{
	sql(qq{SELECT streamforge_kafka.subscribe_aggregate('$a', '$bs', 'kown',
		'{"id": "id", "page": "page", "at": "at"}', max_wait => 20,
		partition_prefix => '$a-')});
	KafkaTest::wait_for($node, KafkaTest::caught_up_sql($a, 3), "$a: consumed");
	# its worker slot for the next (streamforge_kafka.max_workers is 4)
	is(sql(qq{SELECT count(*) FROM streamforge_kafka.subscriptions
		WHERE pipeline = '$a' AND (error IS NOT NULL OR paused)}), '0', "$a: no error");
	sql(qq{SELECT streamforge_kafka.unsubscribe('$a', 'kown')});
}
is(sql(q{SELECT string_agg(who || ': ' || what || ' x' || n, ', ' ORDER BY who, what)
	FROM (SELECT who, what, count(*) AS n FROM kown.log GROUP BY 1, 2) AS l}),
	'kown: cannot execute UNLISTEN within security-restricted operation x6',
	'the key function ran as the table\'s owner, restricted, on both paths');
is(sql(q{SELECT string_agg(page || '=' || n, ',' ORDER BY page) FROM kown.kown1_live}),
	'/p1=1,/p2=1,/p3=1', 'kown1: the rows made in C');
is(sql(q{SELECT string_agg(page || '=' || n, ',' ORDER BY page) FROM kown.kown2_live}),
	'/p1=1,/p2=1,/p3=1', 'kown2: the mapping statement');

# ------------------------------------------------------------------
# Lost offsets (issue 43, item 5): the cluster no longer has the next
# offset (here the pipeline is past the topic's end, as after a topic is
# recreated; retention gives the same error): the subscription pauses with
# a clear state instead of restarting every second
# ------------------------------------------------------------------
$kafka->cmd('topic lost 1');
sql(q{SELECT streamforge.create_pipeline('plost', ARRAY['lost-0'],
	ARRAY[streamforge.fixed('w', 60)], lateness => 1000000)});
sql(q{SELECT count(*) FROM streamforge.ingest_batch('plost', ARRAY(
	SELECT ROW('lost-0', i, 'e' || i, 'k', 1, 1)::streamforge.delivery
	  FROM generate_series(0, 9) AS i))});
$kafka->produce('lost', 0, 1000, undef, '{"n": 1}');
$kafka->flush;
sql(qq{SELECT streamforge_kafka.subscribe('plost', '$bs', 'lost', max_wait => 20)});
KafkaTest::wait_for($node,
	q{SELECT paused AND worker_state = 'offsets lost' FROM streamforge_kafka.subscriptions WHERE pipeline = 'plost'},
	'lost offsets: the subscription is paused, its state says why');
like(sql(q{SELECT error FROM streamforge_kafka.subscriptions WHERE pipeline = 'plost'}),
	qr/^offsets lost in partition 0 of topic "lost": the next offset is 10, the partition holds offsets 0 to 0/,
	'the error says where each side stands');
is(sql(q{SELECT consumed_offset FROM streamforge.partitions('plost')}), '9',
	'the pipeline\'s offsets are untouched');

$kafka->stop;
done_testing();
