# A low-privilege fuzz driver (issue 37, must-show 5): a role with nothing
# but USAGE on the extensions' schemas calls every function the catalog
# lists for streamforge, streamforge_proxy and streamforge_kafka (where
# built) with hostile arguments: another role's pipeline names, NULLs,
# extreme integers, crafted jsonb (forged specs naming temporary domains,
# deep nesting, librdkafka options that run commands or open files) and
# bytea, the extension's own tables as regclass, temporary domains as
# regtype, names with quotes and newlines.  It asserts that
#   - the role's attributes and memberships are unchanged;
#   - no file named by a hostile argument appears (the canaries are paths
#     outside the data directory);
#   - no backend crashed: the postmaster did not restart and the log has
#     no "terminated by signal";
#   - every refusal has a SQLSTATE other than XX000 (internal_error), but
#     PL/Proxy's own errors in the router's internal px_* functions called
#     directly (PL/Proxy reports everything as XX000; the public functions
#     check the cluster first and answer 55000), which are counted apart.
# Seeded: SF_FUZZ_SEED=<n> repeats a run; the seed is printed.  Bounded:
# a fixed number of calls per function, statement_timeout 5s each.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $seed = $ENV{SF_FUZZ_SEED} // (time() % 1000000);
srand($seed);
diag("161_lowpriv_fuzz seed: $seed (SF_FUZZ_SEED=$seed repeats this run)");
my $calls_per_function = 5;
my $started = time();

my $node = PostgreSQL::Test::Cluster->new('fuzz');
$node->init;
$node->start;
my $sharedir = $node->config_data('--sharedir');
my $have_kafka = -f "$sharedir/extension/streamforge_kafka.control";
# The Kafka options are the Kafka round's (issue 37, findings 2 and 12):
# hostile librdkafka options only once its 0.4.0 is installed.
my $kafka_fixed = -f "$sharedir/extension/streamforge_kafka--0.3.0--0.4.0.sql";
my $canary_dir = PostgreSQL::Test::Utils::tempdir();
chmod 0777, $canary_dir;
my $canary = "$canary_dir/sf_fuzz_${seed}";

$node->safe_psql('postgres', q{
CREATE EXTENSION streamforge;
CREATE ROLE fuzz_victim;
CREATE ROLE fuzz_role LOGIN;
GRANT USAGE ON SCHEMA streamforge TO fuzz_victim, fuzz_role;
CREATE SCHEMA victim AUTHORIZATION fuzz_victim;
SET ROLE fuzz_victim;
SET search_path = victim;
CREATE TABLE victim.victim_table (id bigserial PRIMARY KEY, page text NOT NULL,
                                  amount integer NOT NULL, t timestamptz NOT NULL);
SELECT streamforge.create_pipeline('victim_pl', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT count(*) FROM streamforge.ingest('victim_pl', 'p', 0, 'e', 'k', 5, 7);
SELECT streamforge.configure_outputs('victim_pl', changelog => true, results => true);
SELECT streamforge.create_aggregate('victim_agg', $$SELECT page, count(*) AS n, sum(amount) AS s
  FROM victim.victim_table GROUP BY page, streamforge.tumble(t, interval '1 minute')$$);
INSERT INTO victim.victim_table (page, amount, t) VALUES ('/v', 3, '2026-01-01 00:00:10+00');
RESET ROLE;
RESET search_path;
});
$node->safe_psql('postgres', 'CREATE EXTENSION streamforge_kafka; GRANT USAGE ON SCHEMA streamforge_kafka TO fuzz_role')
  if $have_kafka;
note('streamforge_kafka is not built: its functions are not fuzzed') unless $have_kafka;
$node->safe_psql('postgres', 'CREATE DATABASE router');
$node->safe_psql('router', q{
CREATE EXTENSION plproxy;
CREATE EXTENSION streamforge_proxy;
GRANT USAGE ON SCHEMA streamforge TO fuzz_role;
});

my $role_sql = q{
SELECT r.rolsuper, r.rolinherit, r.rolcreaterole, r.rolcreatedb, r.rolcanlogin,
       r.rolreplication, r.rolbypassrls, r.rolconfig,
       (SELECT string_agg(m.roleid::regrole::text, ',' ORDER BY 1) FROM pg_auth_members m
         WHERE m.member = r.oid),
       (SELECT string_agg(m.member::regrole::text, ',' ORDER BY 1) FROM pg_auth_members m
         WHERE m.roleid = r.oid)
  FROM pg_roles r WHERE r.rolname = 'fuzz_role'};
my $role_before = $node->safe_psql('postgres', $role_sql);
my $start_time = $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my $log_offset = -s $node->logfile;

# ------------------------------------------------------------------
# Hostile values per type
# ------------------------------------------------------------------
sub rand_bytes
{
	my ($n) = @_;
	return "'\\x" . join('', map { sprintf('%02x', int(rand(256))) } 1 .. $n) . "'";
}
my $forged_spec = q{'{"window": "tumble", "keys": [{"part": 1, "name": "k", "type": "pg_temp.fuzz_dom", "indexable": true}], "aggregates": [{"func": "sum", "name": "s", "type": "pg_temp.fuzz_dom", "member": "a1"}], "measures": true}'};
my $forged_plan = q{'{"relid": 1259, "relation": "pg_catalog.pg_class", "window": {"kind": "tumble", "time": "now()", "precision_us": 1, "size_us": 60000000}, "keys": [{"expr": "pg_temp.fuzz_f(relname)", "name": "k", "type": "pg_temp.fuzz_dom", "immutable_input": true}], "aggregates": [{"func": "count", "arg": null, "name": "n", "type": "bigint", "arg_not_null": true}], "where": "pg_temp.fuzz_f(relname)"}'};
my @kafka_options = $kafka_fixed
  ? (qq{'{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": "GSSAPI", "sasl.kerberos.kinit.cmd": "touch ${canary}_kinit"}'},
	qq{'{"plugin.library.paths": "${canary}_lib", "debug": "all", "client.id": "x\\ny"}'},
	qq{'{"ssl.ca.location": "/etc/shadow", "log_level": "7"}'})
  : ();
my %values = (
	'text' => [ "'victim_pl'", "'victim_agg'", 'NULL', "''", q{'a''b"c;--'}, "E'line1\\nline2'",
		"repeat('x', 100000)", "'streamforge.pipeline'", "'%I%s%L'", "'fuzz_own'",
		"'${canary}_text'", "E'\\\\x00'", "'SELECT pg_catalog.pg_sleep(0)'" ],
	'name' => [ "'fuzz_victim'", "'fuzz_role'", "'public'", 'NULL', "'no such role'", "current_user" ],
	'bigint' => [ '0', '-1', 'NULL', '9223372036854775807', '(-9223372036854775807 - 1)', '1' ],
	'integer' => [ '0', '-1', 'NULL', '2147483647', '(-2147483647 - 1)', '1' ],
	'smallint' => [ '0', '-1', 'NULL', '32767', '(-32767 - 1)' ],
	'boolean' => [ 'true', 'false', 'NULL' ],
	'interval' => [ "'1 second'", "'-1 day'", "'178000000 years'", 'NULL', "'1 microsecond'" ],
	'timestamp with time zone' => [ "'infinity'", "'-infinity'", "'2026-01-01 00:00:00+00'", 'NULL', "'4713-01-01 BC'" ],
	'jsonb' => [ "'{}'", "'[]'", 'NULL', "'null'", $forged_spec, $forged_plan,
		"('[' || repeat('[', 2000) || repeat(']', 2000) || ']')",
		qq{'{"partition": "p", "event_id": "e", "key": "k", "event_time": 1, "value": 1}'},
		qq{'[{"partition": "p", "offset": -1, "event_id": null}]'}, @kafka_options ],
	'bytea' => [ 'NULL', "'\\x'", rand_bytes(64), "'\\x1f8b08000000000000ff'", rand_bytes(2000),
		"convert_to('{\"format\": 1}', 'UTF8')" ],
	'regclass' => [ "'streamforge.pipeline'", "'streamforge.journal'", "'victim.victim_table'", "'streamforge.results'",
		"'pg_authid'", 'NULL', "'pg_temp.fuzz_tab'" ],
	'regtype' => [ "'pg_temp.fuzz_dom'", "'text'", 'NULL', "'pg_temp.fuzz_dom[]'" ],
	'text[]' => [ "ARRAY['a', NULL]", "'{}'", 'NULL', "ARRAY['victim_pl']", "ARRAY[E'\\n', '''']" ],
	'smallint[]' => [ "'{}'", 'NULL', "ARRAY[-1, 32767]" ],
	'integer[]' => [ "'{}'", 'NULL', "ARRAY[-1, 2147483647]" ],
	'bigint[]' => [ "'{}'", 'NULL', "ARRAY[-1, 9223372036854775807]" ],
	'streamforge.window_def' => [ "streamforge.fixed('w', 10)", 'NULL', "streamforge.sliding('s', 100000, 1)" ],
	'streamforge.window_def[]' => [ "ARRAY[streamforge.fixed('w', 10)]", "'{}'", 'NULL',
		"ARRAY[streamforge.sliding('s', 100000, 1), streamforge.sliding('t', 100000, 1)]" ],
	'regrole' => [ "'fuzz_victim'", 'NULL', "'fuzz_role'" ],
	'oid' => [ '0', 'NULL', '4294967295', '1259' ],
);

# the functions of the three extensions, with their argument types
sub functions_of
{
	my ($db, @exts) = @_;
	my $list = join(', ', map { "'$_'" } @exts);
	my $out = $node->safe_psql($db, qq{
SET search_path = pg_catalog;
SELECT p.oid::regprocedure, p.prorettype = 'trigger'::regtype, e.extname,
       coalesce(array_to_string(p.proargnames, ','), '')
  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid
 WHERE e.extname IN ($list) AND p.prokind = 'f'
 ORDER BY 1::text});
	my @f;
	for my $l (split /\n/, $out)
	{
		my @fields = split /\|/, $l;
		push @f, { sig => $fields[0], trigger => $fields[1] eq 't', ext => $fields[2],
			names => [ split /,/, $fields[3] // '' ] };
	}
	return @f;
}

# one call of a function: SQL text
sub call_sql
{
	my ($f, $all_null) = @_;
	my ($qname, $args) = $f->{sig} =~ /^(.*?)\((.*)\)$/ or die "bad signature $f->{sig}";
	my @types = $args eq '' ? () : split /,(?![^(]*\))/, $args;
	my @argsql;
	my $kafka = $f->{ext} eq 'streamforge_kafka';
	for my $i (0 .. $#types)
	{
		my $t = $types[$i];
		my $vals = $values{$t};
		my $v = 'NULL';
		if (!$all_null && $vals)
		{
			$v = $vals->[ int(rand(@$vals)) ];
			# a Kafka broker list is never a reachable address (each
			# metadata request waits up to 10 s)
			$v = 'NULL' if $kafka && ($f->{names}[$i] // '') eq 'brokers';
		}
		push @argsql, "($v)::$t";
	}
	return "SELECT count(*) FROM (SELECT $qname(" . join(', ', @argsql) . ')) AS fuzz_call;';
}

my $prelude = q{
SET statement_timeout = '5s';
CREATE TEMP TABLE fuzz_tab (id integer);
CREATE FUNCTION pg_temp.fuzz_f(text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE 'ALTER ROLE fuzz_role SUPERUSER';
    RETURN true;
EXCEPTION WHEN insufficient_privilege THEN RETURN true;
END $$;
CREATE DOMAIN pg_temp.fuzz_dom AS text CHECK (pg_temp.fuzz_f(VALUE));
\set VERBOSITY verbose
\set SHOW_CONTEXT never
};

my %seen_state;
my $plproxy_internal = 0;
my @internal;
my $ncalls = 0;
for my $db_exts ([ 'postgres', 'streamforge', ($have_kafka ? 'streamforge_kafka' : ()) ],
	[ 'router', 'streamforge_proxy' ])
{
	my ($db, @exts) = @$db_exts;
	my @fns = functions_of($db, @exts);
	ok(@fns > 0, "$db: the catalog lists " . scalar(@fns) . ' functions of ' . join(', ', @exts));
	my @calls;
	for my $f (@fns)
	{
		my $n = $f->{ext} eq 'streamforge_kafka' ? 2 : $calls_per_function;
		push @calls, call_sql($f, 1);
		push @calls, call_sql($f, 0) for 2 .. $n;
	}
	my $script = $prelude . join("\n", @calls) . "\n";
	my $first_line = () = $prelude =~ /\n/g;
	my ($ret, $out, $err) = $node->psql(
		$db, $script,
		extra_params => [ '-U', 'fuzz_role' ],
		on_error_stop => 0,
		timeout => 600);
	$ncalls += @calls;
	for my $l (split /\n/, $err)
	{
		if ($l =~ /^psql:<stdin>:(\d+): (?:ERROR|FATAL):\s+(\w{5}): (.*)/)
		{
			my ($line, $state, $msg) = ($1, $2, $3);
			my $call = $calls[ $line - $first_line - 1 ] // "line $line";
			# PL/Proxy's own errors are XX000: the router's internal
			# PL/Proxy functions (px_*), called directly, reach PL/Proxy
			# without the checks of the public functions (55000 for a
			# missing cluster); counted apart, and only from PL/Proxy
			if ($state eq 'XX000' && $msg =~ /^(?:Pl\/Proxy|PL\/Proxy|plproxy)/i
				&& $call =~ /streamforge\.px_\w+\(/)
			{
				$plproxy_internal++;
				next;
			}
			$seen_state{$state}++;
			push @internal, "$state ($msg) at: $call" if $state eq 'XX000';
		}
		elsif ($l =~ /server closed the connection|terminated abnormally|connection to server was lost/)
		{
			push @internal, "$db: $l";
		}
	}
}
note("$plproxy_internal calls of the router's internal PL/Proxy functions ended in PL/Proxy's own XX000");
note("$ncalls calls; SQLSTATEs of the refusals: "
	  . join(' ', map { "$_=$seen_state{$_}" } sort keys %seen_state));

is(scalar(@internal), 0, 'no call ended in XX000 or a lost connection')
  or diag(join("\n", @internal[ 0 .. ($#internal < 20 ? $#internal : 19) ]));
is($node->safe_psql('postgres', $role_sql), $role_before,
	"fuzz_role's attributes and memberships are unchanged (not a superuser)");
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'), $start_time,
	'the postmaster did not restart (no backend crashed)');
my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/terminated by signal|server process .* was terminated/,
	'the server log shows no crashed backend');
opendir my $d, $canary_dir or die $!;
my @files = grep { !/^\.\.?$/ } readdir $d;
closedir $d;
is(join(' ', @files), '', "no file appeared where the hostile arguments point ($canary_dir)");
ok(!-e "/tmp/sf_fuzz_${seed}_kinit", 'no kinit canary in /tmp');
is($node->safe_psql('postgres', q{SELECT count(*) FROM streamforge.pipeline WHERE name = 'victim_pl'}),
	'1', "the victim's pipeline is still there");
is($node->safe_psql('postgres', q{SELECT owner FROM streamforge.pipeline WHERE name = 'victim_pl'}),
	'fuzz_victim', "and still the victim's");
my $took = time() - $started;
note("took ${took}s");
ok($took < 120, "bounded: ${took}s");

done_testing();
