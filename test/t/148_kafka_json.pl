# streamforge_kafka: the worker's one-pass JSON scan (kafka/src/json.c,
# issue 43 item 3) reads what jsonb reads, message by message.
#
# An aggregate subscription maps five fields (a nested path, two columns of
# the same field, an ISO time) from messages that each hold one case of
# what the scan reads itself (escapes, raw UTF-8, nested paths, JSON null,
# numbers, whitespace) or leaves to jsonb (a \u escape, an exponent, a
# duplicate key, a wanted object, nesting deeper than the scan's 32) or
# must refuse (bad UTF-8 in a wanted value, in a value nobody reads, in a
# member's name, cut in the middle of a character; a control character;
# a bad escape; trailing bytes; a missing field; a path through a
# non-object).  The same payloads are read in SQL with jsonb (convert_from,
# ::jsonb, #> and #>>) into the twin aggregate's table: both aggregates'
# views are equal, and the worker's dead letters are the messages that
# SQL refuses, with the same SQLSTATE, the missing field named.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KafkaTest;

my $kafka = KafkaTest->start;
my $node = KafkaTest::node('kafka_json');
my $bs = $kafka->{bootstrap};

sub sql { return $node->safe_psql('postgres', $_[0]); }

my $at = '"at":"2026-12-01T00:00:01.5Z"';
my $deep = ('[' x 40) . (']' x 40);
my @cases = (
	# read by the scan
	qq({"id":1,"a":{"b":"plain"},"t":"x",$at}),
	qq({"id":2,"a":{"b":"q\\"b\\\\s\\/l\\bf\\fn\\nr\\rt\\t"},"t":"esc",$at}),
	qq({"id":3,"a":{"b":"caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80"},"t":"utf8",$at}),
	qq({"id":4,"a":{"b":null},"t":null,$at}),
	qq({"id":5,"a":{"c":1,"b":"later","d":[1,{"b":2}]},"t":"nested",$at}),
	qq({"id":6,"a":{"b":1.50},"t":-12,$at}),
	qq({"id":7,"a":{"b":true},"t":false,$at}),
	qq( \t{ "id" : 8 , "a" : { "b" : "ws" } , "t" : "" , $at } \t),
	qq({"cl\xc3\xa9":"\xc3\xa9","id":9,"a":{"b":"utf8 name"},"t":"0.0",$at}),
	qq({"id":10,"a":{"b":"x"},"t":"-0.25","z":{"y":[true,null,"s",-1.5]},$at}),
	# left to jsonb
	qq({"id":11,"a":{"b":"caf\\u00e9 \\ud83d\\ude00"},"t":"u",$at}),
	qq({"id":12,"a":{"b":1e3},"t":-0,$at}),
	qq({"id":13,"a":{"b":"first"},"t":"dup","a":{"b":"second"},$at}),
	qq({"id":14,"a":{"b":{"c":[1,"two"]}},"t":"object",$at}),
	qq({"id":15,"a":{"b":"deep"},"t":"d","deep":$deep,$at}),
	qq({"id":16,"t":"t1","t":"t2","a":{"b":"dup t"},$at}),
	# refused
	qq({"id":17,"a":{"b":"bad\xff"},"t":"enc",$at}),
	qq({"id":18,"a":{"b":"x"},"t":"enc2","other":"\xc3\x28",$at}),
	qq({"id":19,"\xe9":1,"a":{"b":"x"},"t":"enc3",$at}),
	qq({"id":20,"a":{"b":"cut\xe2\x82"},"t":"enc4",$at}),
	qq({"id":21,"a":{"b":"ctl\x01"},"t":"ctl",$at}),
	qq({"id":22,"a":{"b":"bad \\x escape"},"t":"esc",$at}),
	qq({"id":23,"a":{"b":"x"},"t":"trailing",$at} x),
	qq({"id":24,"a":{"b":"no t"},$at}),
	qq({"id":25,"a":"not an object","t":"path",$at}),
	qq({"id":26,"a":[{"b":"array"}],"t":"path2",$at}),
	qq([{"id":27}]),
	qq({"id":28,"a":{"b":"nul \\u0000"},"t":"nul",$at}),
	qq({"id":29,"a":{"b":"open),
	qq({"id":31,"a":{"b":"esc\\n\xff"},"t":"enc5",$at}),
	qq({"id":32,"a":{"b":"first"},"t":"dup2","a":{"c":2},$at}),
	# the last: a partition's refused messages at its end stay pending
	qq({"id":30,"a":{"b":"last"},"t":"ok",$at}));

$kafka->cmd('topic js 1');
$kafka->produce('js', 0, 1000 + $_, undef, $cases[$_]) for 0 .. $#cases;
$kafka->flush;

for my $w (qw(kafka sql))
{
	sql(qq{CREATE TABLE j_$w (id bigint PRIMARY KEY, s text, t text, u text,
		at timestamptz NOT NULL);
		SELECT streamforge.create_aggregate('a$w', \$\$
		SELECT s, t, u, count(*) AS n FROM j_$w
		 GROUP BY s, t, u, streamforge.tumble(at, interval '1 minute')
		\$\$, lateness => interval '1 day')});
}
sql(qq{SELECT streamforge_kafka.subscribe_aggregate('akafka', '$bs', 'js',
	'{"id": "id", "s": "\$.a.b", "t": "t", "u": "t", "at": "at"}',
	on_error => 'skip', max_wait => 20)});

# jsonb's reading of the same payloads, or the SQLSTATE of its refusal
sql(q{CREATE TABLE msgs (o bigint, m bytea)});
sql('INSERT INTO msgs VALUES '
	  . join(', ', map { "($_, '\\x" . unpack('H*', $cases[$_]) . "')" } 0 .. $#cases));
sql(q{CREATE FUNCTION read_msg(m bytea, OUT j jsonb, OUT state text) LANGUAGE plpgsql AS $$
	BEGIN
		j := convert_from(m, 'UTF8')::jsonb;
		IF jsonb_typeof(j) <> 'object' THEN
			state := '22023';
		ELSIF j #> '{id}' IS NULL OR j #> '{a,b}' IS NULL OR j #> '{t}' IS NULL
				OR j #> '{at}' IS NULL THEN
			state := '22004';
		END IF;
	EXCEPTION WHEN OTHERS THEN
		state := SQLSTATE;
	END $$});
sql(q{CREATE TABLE expect AS SELECT o, (read_msg(m)).* FROM msgs});
sql(q{INSERT INTO j_sql SELECT (j->>'id')::bigint, j #>> '{a,b}', j->>'t', j->>'t',
	(j->>'at')::timestamptz FROM expect WHERE state IS NULL ORDER BY o});

KafkaTest::wait_for($node, KafkaTest::caught_up_sql('akafka', scalar @cases),
	'every message is consumed or dead-lettered');

is(sql(q{SELECT count(*) FROM expect WHERE state IS NULL}), '17',
	'jsonb reads 17 of the messages');
is(sql(q{SELECT string_agg("offset" || ' ' || sqlstate, ',' ORDER BY "offset")
		FROM streamforge_kafka.rejected WHERE pipeline = 'akafka'}),
	sql(q{SELECT string_agg(o || ' ' || state, ',' ORDER BY o) FROM expect
		WHERE state IS NOT NULL}),
	'the dead letters are the messages jsonb refuses, with its SQLSTATE');
is(sql(q{SELECT error FROM streamforge_kafka.rejected WHERE pipeline = 'akafka'
		AND "offset" = 23}),
	'field "t" is missing from the message', 'the missing field is named');
is(sql(q{SELECT error FROM streamforge_kafka.rejected WHERE pipeline = 'akafka'
		AND "offset" = 24}),
	'field "$.a.b" is missing from the message', 'a path through a string is missing');

sub view
{
	return sql(qq{SELECT string_agg(format('%s|%s|%s|%s', s, t, u, n), E'\\n' ORDER BY s, t, u)
		FROM a$_[0]_live});
}
my $twin = view('sql');
is(sql(q{SELECT count(*) FROM asql_live}), '17', 'the twin has a row per message jsonb reads');
is(view('kafka'), $twin, 'the worker read each field as jsonb reads it');
like($twin, qr/^q"b\\s\/l\x08f\x0cn\nr\rt\t\|esc\|esc\|1$/m, 'the escapes, decoded');
like($twin, qr/^second\|dup\|dup\|1$/m, 'a duplicate member: the last');
like($twin, qr/^1\.50\|-12\|-12\|1$/m, 'numbers as written');

done_testing();
