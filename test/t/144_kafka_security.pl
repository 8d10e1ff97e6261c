# streamforge_kafka 0.4.0, issue 37: the Kafka findings of the attack on
# 0.3.0, performed as the roles they need, first against release 0.3.0
# (its binaries, SF_RELEASE_INSTALL_0_3_0, which scripts/test.sh builds),
# where each one succeeds, then against this build, where each one is
# refused; and the update 0.3.0 -> 0.4.0 against a fresh 0.4.0 (catalog).
#
#   finding 2   a role with no grant runs a command as postgres through
#               topic_partitions' options (sasl.kerberos.kinit.cmd)
#   finding 12  ... and floods and forges the server log (debug, client.id
#               with a newline)
#   finding 3   a role inserts a subscription with kafka_partitions
#               2^31-1: its worker fails allocating, at every restart
#   finding 7   one role's subscriptions take every worker slot
#   finding 8   a non-superuser's subscription with on_error 'skip' stops
#               at the first bad message (it may not write the dead letter)
#   finding 9   a message nested 20,000 deep (54001) stops any
#               subscription, whatever on_error says
# And: a stored subscription whose options its role may not set (a row
# written before 0.4.0, or changed by hand) is refused by its worker.
use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use KafkaTest;

my $old_install = $ENV{SF_RELEASE_INSTALL_0_3_0} // '';
if ($old_install eq '' || !-x "$old_install/bin/postgres")
{
	fail('release 0.3.0 is installed for the comparison');
	diag($ENV{SF_RELEASE_ERROR_0_3_0}
		  || 'SF_RELEASE_INSTALL_0_3_0 is not set: run this test through scripts/test.sh, which builds the release');
	done_testing();
	exit 1;
}

my $kafka = KafkaTest->start;
my $bs = $kafka->{bootstrap};
$kafka->cmd("topic $_ 1") for qw(ev dl deep s1 s2 s3 s4 hx);
$kafka->produce('ev', 0, 1000, 'k', '{"id":"e0","v":1}');
# finding 8: good, bad, good
$kafka->produce('dl', 0, 1000, 'k', '{"id":"a","v":1}');
$kafka->produce('dl', 0, 1001, 'k', '{"id":"b","v":');
$kafka->produce('dl', 0, 1002, 'k', '{"id":"c","v":3}');
# finding 9: good, 20,000 levels deep, good
$kafka->produce('deep', 0, 1000, 'k', '{"id":"a","v":1}');
$kafka->produce('deep', 0, 1001, 'k', '{"id":"b","v":1,"x":' . ('[' x 20000) . (']' x 20000) . '}');
$kafka->produce('deep', 0, 1002, 'k', '{"id":"c","v":3}');
$kafka->produce("s$_", 0, 1000, 'k', '{"id":"a","v":1}') for 1 .. 4;
$kafka->flush;

sub run_sql
{
	my ($node, $sql, $user) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', $sql,
		$user ? (extra_params => [ '-U', $user ]) : ());
	return ($ret, $out, $err);
}

sub log_since
{
	my ($node, $offset) = @_;
	return slurp_file($node->logfile, $offset);
}

# The same attacks on both; $old: release 0.3.0.
sub attack
{
	my ($node, $old) = @_;
	my $v = $old ? '0.3.0' : '0.4.0';
	my $sql = sub { $node->safe_psql('postgres', $_[0]) };
	my $dir = $node->basedir;
	my ($ret, $out, $err);

	$sql->(q{
		CREATE ROLE mallory LOGIN; CREATE ROLE carol LOGIN; CREATE ROLE dave LOGIN;
		GRANT USAGE ON SCHEMA streamforge TO carol, dave;
	});

	# ----------------------------------------------------------------
	# Finding 2: a command through topic_partitions, as a role with no
	# grant at all.
	# ----------------------------------------------------------------
	my $pwned = "$dir/pwned_by_mallory";
	($ret, $out, $err) = run_sql($node,
		qq{SELECT streamforge_kafka.topic_partitions('$bs', 'ev', '{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "GSSAPI", "sasl.kerberos.kinit.cmd": "touch $pwned"}')},
		'mallory');
	if ($old)
	{
		ok(-e $pwned, "$v: a role with no grant runs a command as postgres through topic_partitions (finding 2)");
	}
	else
	{
		like($err, qr/permission denied for function topic_partitions/,
			"$v: topic_partitions is not EXECUTE-able by a role with no grant");
		ok(!-e $pwned, "$v: ... and no command ran");
	}

	# ----------------------------------------------------------------
	# Finding 12: librdkafka's debug output in the server log, and a
	# client.id with a newline forging log lines.
	# ----------------------------------------------------------------
	my $offset = -s $node->logfile;
	my $forge = q{SELECT streamforge_kafka.topic_partitions('%s', 'ev', '{"debug": "all", "client.id": "x\nFORGED_BY_%s"}')};
	($ret, $out, $err) = run_sql($node, sprintf($forge, $bs, 'MALLORY'), 'mallory');
	if ($old)
	{
		is($out, '1', "$v: a role with no grant sets debug and client.id");
		like(log_since($node, $offset), qr/^FORGED_BY_MALLORY/m,
			"$v: ... and forges lines of the server log (finding 12)");
	}
	else
	{
		unlike(log_since($node, $offset), qr/^FORGED_BY_MALLORY|librdkafka/m,
			"$v: the role with no grant writes nothing to the log");
		# a superuser may set both: the lines go through ereport,
		# sanitized and rate-limited
		$offset = -s $node->logfile;
		is($sql->(sprintf($forge, $bs, 'SUPERUSER')), '1', "$v: a superuser may set debug");
		my $log = log_since($node, $offset);
		unlike($log, qr/^FORGED_BY_SUPERUSER/m, "$v: ... its client.id's newline forges no log line");
		my $lines = () = $log =~ /streamforge_kafka: librdkafka \S+ \d+ /g;
		ok($lines >= 5 && $lines <= 20,
			"$v: ... and librdkafka's lines are logged through ereport, at most 20 per 10 s ($lines)");
		like($log, qr/LOG:  streamforge_kafka: librdkafka x\?FORGED_BY_SUPERUSER#producer-\d+ 7 /,
			"$v: ... with the control characters replaced");
	}

	# ----------------------------------------------------------------
	# Finding 8: carol (no superuser) subscribes with on_error 'skip'.
	# ----------------------------------------------------------------
	$sql->(q{
		SELECT streamforge.create_pipeline('pd', ARRAY['dl-0'], ARRAY[streamforge.fixed('w', 1000)], lateness => 1000000);
		SELECT streamforge.grant('pd', 'carol', 'ingest');
	});
	$node->safe_psql('postgres',
		qq{SELECT streamforge_kafka.subscribe('pd', '$bs', 'dl', mapping => '{"event_id": "id", "value": "v"}', on_error => 'skip', max_wait => 20)},
		extra_params => [ '-U', 'carol' ]);
	if ($old)
	{
		KafkaTest::wait_for($node,
			q{SELECT worker_state = 'failed' AND last_error LIKE 'permission denied for table rejected%' FROM streamforge_kafka.subscriptions WHERE pipeline = 'pd'},
			"$v: a non-superuser's worker fails writing the dead letter (finding 8)");
		is($sql->(q{SELECT consumed_offset <= 0 FROM streamforge.partitions('pd')}), 't',
			"$v: ... and consumes nothing from the bad message on, also with on_error 'skip'");
	}
	else
	{
		KafkaTest::wait_for($node, KafkaTest::caught_up_sql('pd', 3),
			"$v: a non-superuser's subscription with on_error 'skip' goes past the bad message");
		is($sql->(q{SELECT "offset", sqlstate, role::regrole FROM streamforge_kafka.rejected WHERE pipeline = 'pd'}),
			'1|22P02|carol', "$v: ... whose dead letter the extension wrote");
		is($node->safe_psql('postgres', q{SELECT count(*) FROM streamforge_kafka.rejected},
				extra_params => [ '-U', 'carol' ]),
			'1', "$v: ... which carol reads");
		is($sql->(q{SELECT key, count, sum FROM streamforge.live('pd')}), 'k|2|4',
			"$v: ... and the good messages are in");
	}
	$sql->(q{SELECT streamforge_kafka.unsubscribe('pd', 'dl')});

	# ----------------------------------------------------------------
	# Finding 9: a message nested 20,000 levels deep, on_error 'skip'.
	# ----------------------------------------------------------------
	$sql->(q{
		SELECT streamforge.create_pipeline('pz', ARRAY['deep-0'], ARRAY[streamforge.fixed('w', 1000)], lateness => 1000000);
	});
	$sql->(qq{SELECT streamforge_kafka.subscribe('pz', '$bs', 'deep', mapping => '{"event_id": "id", "value": "v"}', on_error => 'skip', max_wait => 20)});
	if ($old)
	{
		KafkaTest::wait_for($node,
			q{SELECT worker_state = 'failed' AND last_error LIKE 'stack depth limit exceeded%' FROM streamforge_kafka.subscriptions WHERE pipeline = 'pz'},
			"$v: a deeply nested message fails the worker, on_error 'skip' notwithstanding (finding 9)");
		is($sql->(q{SELECT consumed_offset <= 0 FROM streamforge.partitions('pz')}), 't',
			"$v: ... and the subscription consumes nothing from that message on");
	}
	else
	{
		KafkaTest::wait_for($node, KafkaTest::caught_up_sql('pz', 3),
			"$v: a deeply nested message is skipped");
		is($sql->(q{SELECT "offset", sqlstate FROM streamforge_kafka.rejected WHERE pipeline = 'pz'}),
			'1|54001', "$v: ... as a dead letter with 54001");
		is($sql->(q{SELECT key, count, sum FROM streamforge.live('pz')}), 'k|2|4',
			"$v: ... and the good messages are in");
	}
	$sql->(q{SELECT streamforge_kafka.unsubscribe('pz', 'deep')});

	# ----------------------------------------------------------------
	# Finding 3: a subscription row with kafka_partitions 2^31-1, inserted
	# by a role with USAGE on streamforge and a pipeline of its own.
	# ----------------------------------------------------------------
	$sql->(q{GRANT USAGE ON SCHEMA streamforge TO mallory});
	$node->safe_psql('postgres',
		q{SELECT streamforge.create_pipeline('ph', ARRAY['hx-0'], ARRAY[streamforge.fixed('w', 1000)])},
		extra_params => [ '-U', 'mallory' ]);
	my $hostile = qq{INSERT INTO streamforge_kafka.subscription (pipeline, brokers, topic, format,
		partition_prefix, kafka_partitions, batch_size, max_wait, role)
		VALUES ('ph', '$bs', 'hx', 'json', 'hx-', 2147483647, 10, 10, 'mallory'::regrole::oid)};
	$offset = -s $node->logfile;
	($ret, $out, $err) = run_sql($node, $hostile, 'mallory');
	if ($old)
	{
		is($ret, 0, "$v: a role inserts a subscription row by hand");
		ok($node->wait_for_log(qr/invalid memory alloc request size/, $offset),
			"$v: ... whose worker allocates for its 2^31-1 partitions (finding 3)");
	}
	else
	{
		like($err, qr/permission denied for table subscription/,
			"$v: a role cannot insert a subscription row");
		# the same row, inserted by a superuser: refused before any allocation
		$sql->($hostile);
		ok($node->wait_for_log(qr/streamforge_kafka: subscription \d+ is refused: kafka_partitions 2147483647 is out of range \(1 \.\. 10000\)/, $offset),
			"$v: a superuser's hand-inserted row with kafka_partitions 2^31-1 is refused by its worker with a log line");
		KafkaTest::wait_for($node,
			q{SELECT paused AND error LIKE 'subscription refused by its worker: kafka_partitions 2147483647 is out of range%' FROM streamforge_kafka.subscription WHERE pipeline = 'ph'},
			"$v: ... and stopped with the reason");
		unlike(log_since($node, $offset), qr/invalid memory alloc request size/, "$v: ... nothing was allocated for it");
	}
	$sql->(q{DELETE FROM streamforge_kafka.subscription WHERE pipeline = 'ph'});

	# ----------------------------------------------------------------
	# Finding 7: max_workers 3; carol has three subscriptions, dave one.
	# ----------------------------------------------------------------
	$sql->(q{ALTER SYSTEM SET streamforge_kafka.max_workers = 3; SELECT pg_reload_conf()});
	for my $i (1 .. 4)
	{
		my $who = $i < 4 ? 'carol' : 'dave';
		$sql->(qq{SELECT streamforge.create_pipeline('p$i', ARRAY['s$i-0'], ARRAY[streamforge.fixed('w', 1000)], lateness => 1000000);
			SELECT streamforge.grant('p$i', '$who', 'ingest');});
		$node->safe_psql('postgres',
			qq{SELECT streamforge_kafka.subscribe('p$i', '$bs', 's$i', mapping => '{"event_id": "id", "value": "v"}', max_wait => 20)},
			extra_params => [ '-U', $who ]);
	}
	my $workers = q{SELECT string_agg(usename || ':' || n, ',' ORDER BY usename) FROM (SELECT usename, count(*) AS n FROM pg_stat_activity WHERE backend_type = 'streamforge_kafka worker' GROUP BY usename) AS w};
	if ($old)
	{
		KafkaTest::wait_for($node, qq{SELECT ($workers) = 'carol:3'},
			"$v: carol's subscriptions take every worker slot (finding 7)");
		sleep(2);
		is($sql->(q{SELECT worker_state IS NULL FROM streamforge_kafka.subscriptions WHERE pipeline = 'p4'}),
			't', "$v: ... and dave's never starts");
	}
	else
	{
		KafkaTest::wait_for($node, qq{SELECT ($workers) = 'carol:2,dave:1'},
			"$v: max_workers_per_role 2: carol's third subscription waits, dave's runs");
		KafkaTest::wait_for($node, KafkaTest::caught_up_sql('p4', 1), "$v: ... and consumes");
	}
	$sql->(qq{SELECT streamforge_kafka.unsubscribe('p$_', 's$_')}) for 1 .. 4;

	# ----------------------------------------------------------------
	# 0.4.0: a stored subscription is checked against the privileges of
	# the role it records, whoever wrote it.
	# ----------------------------------------------------------------
	return if $old;
	$offset = -s $node->logfile;
	$node->safe_psql('postgres',
		qq{SELECT streamforge_kafka.subscribe('pd', '$bs', 'dl', max_wait => 20, on_error => 'skip')},
		extra_params => [ '-U', 'carol' ]);
	KafkaTest::wait_for($node, KafkaTest::caught_up_sql('pd', 3), "$v: carol's new subscription runs");
	$sql->(q{SELECT streamforge_kafka.pause('pd', 'dl')});
	KafkaTest::wait_for($node,
		q{SELECT count(*) = 0 FROM pg_stat_activity WHERE application_name = 'streamforge_kafka worker ' || (SELECT id FROM streamforge_kafka.subscription WHERE pipeline = 'pd')},
		"$v: paused, its worker stops");
	$sql->(q{UPDATE streamforge_kafka.subscription SET options = '{"debug": "all"}' WHERE pipeline = 'pd';
		SELECT streamforge_kafka.resume('pd', 'dl');});
	ok($node->wait_for_log(qr/streamforge_kafka: subscription \d+ is refused: Kafka option "debug" may be set by a superuser only \(42501\)/, $offset),
		"$v: a stored option its role may not set is refused by the worker at start");
	KafkaTest::wait_for($node,
		q{SELECT paused AND error LIKE '%Kafka option "debug" may be set by a superuser only%' FROM streamforge_kafka.subscription WHERE pipeline = 'pd'},
		"$v: ... and the subscription is stopped with the reason");
	# carol switches to on_error 'stop' and back herself (set_on_error), and
	# cannot change another role's subscription
	$node->safe_psql('postgres', q{SELECT streamforge_kafka.set_on_error('pd', 'dl', 'stop')},
		extra_params => [ '-U', 'carol' ]);
	is($sql->(q{SELECT on_error FROM streamforge_kafka.subscription WHERE pipeline = 'pd'}), 'stop',
		"$v: set_on_error changes the subscriber's own subscription");
	($ret, $out, $err) = run_sql($node, q{SELECT streamforge_kafka.set_on_error('pd', 'dl', 'skip')}, 'dave');
	like($err, qr/pipeline "pd" has no subscription to topic "dl"/, "$v: ... and not another role's");
	($ret, $out, $err) = run_sql($node, q{SELECT streamforge_kafka.unsubscribe('pd', 'dl')}, 'mallory');
	like($err, qr/pipeline "pd" has no subscription to topic "dl"/, "$v: nor does unsubscribe");
	is($sql->(q{SELECT count(*) FROM streamforge_kafka.subscription WHERE pipeline = 'pd'}), '1',
		"$v: ... the subscription is still there");
	return;
}

# ------------------------------------------------------------------
# Release 0.3.0: the attacks succeed.
# ------------------------------------------------------------------
my $old = KafkaTest::node('kafka_sec_030', install_path => $old_install);
is($old->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'streamforge_kafka'}),
	'0.3.0', 'the release node runs streamforge_kafka 0.3.0');
attack($old, 1);
$old->stop('fast');

# ------------------------------------------------------------------
# This build: refused.
# ------------------------------------------------------------------
my $node = KafkaTest::node('kafka_sec_040');
is($node->safe_psql('postgres', q{SELECT extversion FROM pg_extension WHERE extname = 'streamforge_kafka'}),
	'0.4.0', 'this build installs streamforge_kafka 0.4.0');
attack($node, 0);

# ------------------------------------------------------------------
# The update 0.3.0 -> 0.4.0: the catalog of a fresh 0.4.0, and PUBLIC
# loses its writes.
# ------------------------------------------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE upd; CREATE DATABASE fresh;');
$node->safe_psql('upd', q{CREATE EXTENSION streamforge; CREATE EXTENSION streamforge_kafka VERSION '0.3.0';});
is($node->safe_psql('upd', q{SELECT has_table_privilege('mallory', 'streamforge_kafka.subscription', 'INSERT')}),
	't', 'at 0.3.0 PUBLIC may insert subscriptions');
$node->safe_psql('upd', q{ALTER EXTENSION streamforge_kafka UPDATE});
$node->safe_psql('fresh', q{CREATE EXTENSION streamforge; CREATE EXTENSION streamforge_kafka;});
my $updated = $node->safe_psql('upd', catalog_query());
my $fresh = $node->safe_psql('fresh', catalog_query());
cmp_ok(scalar(split /\n/, $fresh), '>', 60, 'the catalog query sees the extension');
is_lines($updated, $fresh, 'an updated 0.3.0 streamforge_kafka has exactly the catalog of a fresh 0.4.0 one');
is($node->safe_psql('upd', q{SELECT count(*) FROM pg_class c, aclexplode(c.relacl) a
	WHERE c.relnamespace = 'streamforge_kafka'::regnamespace AND a.grantee = 0 AND a.privilege_type <> 'SELECT'}),
	'0', 'after the update PUBLIC writes no table of streamforge_kafka');
is($node->safe_psql('upd', q{SELECT has_function_privilege('mallory', 'streamforge_kafka.topic_partitions(text, text, jsonb)', 'EXECUTE')}),
	'f', '... and may not call topic_partitions');

# docs/security.md's inventory of streamforge_kafka is the catalog's: every
# PUBLIC grant on the schema and its relations, every function PUBLIC may
# execute, every SECURITY DEFINER function.
my @inventory;
{
	open my $fh, '<', "$FindBin::RealBin/../../docs/security.md" or die "docs/security.md: $!";
	my $in = 0;
	while (my $line = <$fh>)
	{
		if ($line =~ /^### Inventory: streamforge_kafka\s*$/) { $in = 1; next; }
		last if $in && $line =~ /^#/;
		next unless $in && $line =~ /^\| `([^`]+)` \| ([^|]+?) \| ([^|]+?) \|/;
		push @inventory, "$1 | $3";
	}
	close $fh;
}
my $granted = $node->safe_psql('fresh', q{
SELECT line FROM (
    SELECT n.nspname || ' | ' || string_agg(a.privilege_type, ', ' ORDER BY a.privilege_type) || ' to PUBLIC' AS line
      FROM pg_namespace n, aclexplode(n.nspacl) a
     WHERE n.nspname = 'streamforge_kafka' AND a.grantee = 0 GROUP BY n.nspname
    UNION ALL
    SELECT c.oid::regclass || ' | ' || string_agg(a.privilege_type, ', ' ORDER BY a.privilege_type) || ' to PUBLIC'
      FROM pg_class c, aclexplode(c.relacl) a
     WHERE c.relnamespace = 'streamforge_kafka'::regnamespace AND a.grantee = 0 GROUP BY c.oid
    UNION ALL
    SELECT p.oid::regprocedure || ' | '
           || CASE WHEN has_function_privilege('public', p.oid, 'EXECUTE') THEN 'EXECUTE to PUBLIC' ELSE 'SECURITY DEFINER' END
      FROM pg_proc p
     WHERE p.pronamespace = 'streamforge_kafka'::regnamespace
       AND (p.prosecdef OR p.proacl IS NULL
            OR EXISTS (SELECT FROM aclexplode(p.proacl) a WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'))
) AS l ORDER BY 1});
is_lines(join("\n", sort @inventory), join("\n", sort split /\n/, $granted),
	'docs/security.md\'s inventory of streamforge_kafka lists every PUBLIC grant and PUBLIC-executable function');

$node->stop('fast');
unlike(slurp_file($node->logfile), qr/terminated by signal|PANIC/, 'no process crashed');
$kafka->stop;
done_testing();

# is() for many lines: on failure, lists the lines only one side has.
sub is_lines
{
	my ($got, $want, $name) = @_;
	return pass($name) if $got eq $want;
	my %g = map { $_ => 1 } split /\n/, $got;
	my %w = map { $_ => 1 } split /\n/, $want;
	fail($name);
	diag("only in the updated database:\n  " . join("\n  ", grep { !$w{$_} } split /\n/, $got));
	diag("only in the fresh database:\n  " . join("\n  ", grep { !$g{$_} } split /\n/, $want));
	return 0;
}

# One line per property of every object of the extension (as in
# test/t/101_proxy_takeover.pl), policies included.
sub catalog_query
{
	return q{
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'streamforge_kafka'),
members AS (
    SELECT d.classid, d.objid
      FROM pg_depend d, ext
     WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid
       AND d.deptype = 'e'),
ns AS (SELECT oid FROM pg_namespace WHERE nspname = 'streamforge_kafka'),
funcs AS (SELECT p.* FROM pg_proc p, ns WHERE p.pronamespace = ns.oid),
rels AS (SELECT c.* FROM pg_class c, ns WHERE c.relnamespace = ns.oid),
types AS (SELECT t.* FROM pg_type t, ns WHERE t.typnamespace = ns.oid)
SELECT line FROM (
    SELECT 'extension: ' || e.extname || ' version ' || e.extversion || ' schema ' || e.extnamespace::regnamespace
           || ' relocatable ' || e.extrelocatable
           || ' config ' || coalesce((SELECT string_agg(c::regclass::text || '=' || coalesce(e.extcondition[i], ''), ',' ORDER BY c::regclass::text)
                                        FROM unnest(e.extconfig) WITH ORDINALITY AS u(c, i)), '-') AS line
      FROM pg_extension e WHERE e.extname = 'streamforge_kafka'
    UNION ALL
    SELECT 'member: ' || pg_describe_object(classid, objid, 0) FROM members
    UNION ALL
    SELECT 'schema: ' || nspname || ' acl ' || coalesce(nspacl::text, '-')
      FROM pg_namespace WHERE oid IN (SELECT oid FROM ns)
    UNION ALL
    SELECT 'function: ' || p.oid::regprocedure || ' args (' || pg_get_function_arguments(p.oid)
           || ') returns ' || pg_get_function_result(p.oid)
           || ' kind ' || p.prokind::text || ' volatility ' || p.provolatile::text || ' parallel ' || p.proparallel::text
           || ' strict ' || p.proisstrict || ' secdef ' || p.prosecdef || ' leakproof ' || p.proleakproof
           || ' cost ' || p.procost || ' rows ' || p.prorows
           || ' config ' || coalesce(p.proconfig::text, '-')
           || ' acl ' || coalesce(p.proacl::text, '-')
           || ' language ' || (SELECT lanname FROM pg_language WHERE oid = p.prolang)
           || ' body md5 ' || md5(coalesce(p.prosrc, '') || '|' || coalesce(p.probin, ''))
           || ' comment ' || coalesce(obj_description(p.oid, 'pg_proc'), '-')
      FROM funcs p
    UNION ALL
    SELECT 'type: ' || format_type(t.oid, NULL) || ' kind ' || t.typtype::text
           || ' acl ' || coalesce(t.typacl::text, '-')
      FROM types t WHERE t.typtype <> 'b' OR t.typelem = 0
    UNION ALL
    SELECT 'relation: ' || c.oid::regclass || ' kind ' || c.relkind::text
           || ' acl ' || coalesce(c.relacl::text, '-')
           || ' rls ' || c.relrowsecurity || ' force ' || c.relforcerowsecurity
           || ' options ' || coalesce(c.reloptions::text, '-')
           || ' comment ' || coalesce(obj_description(c.oid, 'pg_class'), '-')
      FROM rels c
    UNION ALL
    SELECT 'view: ' || c.oid::regclass || ' ' || md5(pg_get_viewdef(c.oid))
      FROM rels c WHERE c.relkind = 'v'
    UNION ALL
    SELECT 'column: ' || c.oid::regclass || ' #' || row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum)
           || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
           || ' notnull ' || a.attnotnull || ' identity ' || a.attidentity::text
           || ' default ' || coalesce(pg_get_expr(ad.adbin, ad.adrelid), '-')
           || ' acl ' || coalesce(a.attacl::text, '-')
      FROM rels c JOIN pg_attribute a ON a.attrelid = c.oid
      LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
     WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p', 'v', 'm', 'c', 'f')
    UNION ALL
    SELECT 'constraint: ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
           || ' deferrable ' || condeferrable
      FROM pg_constraint WHERE connamespace IN (SELECT oid FROM ns)
    UNION ALL
    SELECT 'index: ' || pg_get_indexdef(i.indexrelid)
      FROM pg_index i JOIN rels c ON c.oid = i.indrelid
    UNION ALL
    SELECT 'policy: ' || pol.polrelid::regclass || ' ' || pol.polname || ' cmd ' || pol.polcmd::text
           || ' permissive ' || pol.polpermissive
           || ' roles ' || pol.polroles::text
           || ' using ' || coalesce(pg_get_expr(pol.polqual, pol.polrelid), '-')
           || ' check ' || coalesce(pg_get_expr(pol.polwithcheck, pol.polrelid), '-')
      FROM pg_policy pol JOIN rels c ON c.oid = pol.polrelid
) AS l
ORDER BY line COLLATE "C";
};
}
