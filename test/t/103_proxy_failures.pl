# The failure modes of a router cluster (issue 30, item 3; docs/scale-out.md,
# "Failures"): two data nodes, four shards (node1: sf0 and sf2, node2: sf1
# and sf3), a router whose cluster bounds every remote call
# (connect_timeout in the connect strings, the server option query_timeout:
# they bound a node that answers slowly or not at all at the network level,
# not one whose processes are stopped: 3. below).
#
#   1. a batch spanning shards refused by two of them: the caller gets the
#      error of the refusing part that comes first in the array; when it
#      arrives, the other shards have applied their parts and the refusing
#      ones nothing; the corrected batch converges;
#   2. a connection that a restarted data node closed: the next call on a
#      warm router session is retried on a new connection and succeeds
#      (an append, not idempotent, is not retried: it fails with 57P01);
#   3. a hung data node (every process stopped with SIGSTOP): PL/Proxy's
#      timeouts and statement_timeout do not end a call to it (PL/Proxy
#      2.10 checks timeouts only on socket events, and sends a cancel
#      request that blocks); the documented watchdog query (terminating
#      the router backend) does; after SIGCONT calls succeed;
#   4. create_sharded_pipeline with a node down changes nothing; a create
#      that an earlier call left half-made is finished by calling it again;
#      drop_pipeline with a node down keeps the router's row and is finished
#      by calling it again; repair_sharded_pipeline finishes either.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

my $node1 = PostgreSQL::Test::Cluster->new('data1');
my $node2 = PostgreSQL::Test::Cluster->new('data2');
my %shard_node = (0 => $node1, 1 => $node2, 2 => $node1, 3 => $node2);
for my $n ($node1, $node2)
{
	$n->init;
	$n->start;
}
for my $s (0 .. 3)
{
	$shard_node{$s}->safe_psql('postgres', "CREATE DATABASE sf$s");
	$shard_node{$s}->safe_psql("sf$s", 'CREATE EXTENSION streamforge');
}

my $router = PostgreSQL::Test::Cluster->new('router');
my $sharedir = $router->config_data('--sharedir');
BAIL_OUT("plproxy is not installed in $sharedir/extension (postgresql-15-plproxy)")
  unless -f "$sharedir/extension/plproxy.control";
$router->init;
$router->start;
my $servers = join(",\n",
	map {
		my $n = $shard_node{$_};
		"p$_ 'host=" . $n->host . ' port=' . $n->port . " dbname=sf$_ connect_timeout=3'"
	} 0 .. 3);
$router->safe_psql(
	'postgres', qq{
CREATE EXTENSION plproxy;
CREATE EXTENSION streamforge_proxy;
CREATE SERVER streamforge FOREIGN DATA WRAPPER plproxy OPTIONS (
    query_timeout '3',
$servers);
CREATE USER MAPPING FOR PUBLIC SERVER streamforge;
});

sub router { return $router->safe_psql('postgres', $_[0]); }

# A psql session on the router: returns (stdout, stderr); never hangs the
# test (the guard is not a measurement).
sub session
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $router->psql(
		'postgres', "\\set VERBOSITY verbose\n$sql",
		timeout => 180, on_error_stop => 0);
	return ($out, $err);
}

sub router_fails
{
	my ($sql) = @_;
	my ($out, $err) = session($sql);
	return $err ne '' ? $err : "succeeded: $out";
}

my $windows = "ARRAY[streamforge.fixed('f', 10)]";
my @parts = map { "q$_" } 0 .. 11;
my $parts_sql = 'ARRAY[' . join(', ', map { "'$_'" } @parts) . ']';
my %shard_of = map { $_ => router("SELECT streamforge.shard_of('$_')") } @parts;
my %by_shard;
push @{ $by_shard{ $shard_of{$_} } }, $_ for @parts;
is(scalar(keys %by_shard), 4, 'the partitions are spread over the 4 shards');

# --- 1. a spanning batch refused by two shards ----------------------------

router("SELECT streamforge.create_sharded_pipeline('b', $parts_sql, $windows)");
my ($gap) = $by_shard{1}[0];           # refused by shard 1: an offset gap, SF001
# a partition the pipeline lacks, owned by shard 2: refused there
my $unknown = router("SELECT n FROM (SELECT 'x' || i AS n FROM generate_series(0, 200) i) s "
	  . "WHERE streamforge.shard_of(n, 4) = 2 ORDER BY n LIMIT 1");
my @rows = map { "('$_', " . ($_ eq $gap ? 1 : 0) . ", 'e-$_', 'k-$_', 5, 1)" } @parts;
splice @rows, 3, 0, "('$unknown', 0, 'e-u', 'k-u', 5, 1)";
my $batch = "SELECT count(*) FROM streamforge.ingest_batch('b', ARRAY[" . join(', ', @rows) . ']::streamforge.delivery[])';
my ($codes_gap) = router_fails(
	"SELECT streamforge.create_pipeline('ref', ARRAY['$gap'], $windows); "
	  . "SELECT count(*) FROM streamforge.ingest('ref', '$gap', 1, 'e', 'k', 5, 1)") =~ /ERROR:  (\w{5}):/;
my ($codes_unknown) = router_fails(
	"SELECT count(*) FROM streamforge.ingest('ref', '$unknown', 0, 'e', 'k', 5, 1)") =~ /ERROR:  (\w{5}):/;
router("SELECT streamforge.drop_pipeline('ref')");
isnt($codes_gap, $codes_unknown, "the two refusals have different SQLSTATEs ($codes_gap, $codes_unknown)");
my @order = map { $_ } @parts;
splice @order, 3, 0, $unknown;
my %owner = (%shard_of, $unknown => 2);
my ($first1) = grep { $owner{ $order[$_] } == 1 } 0 .. $#order;
my ($first2) = grep { $owner{ $order[$_] } == 2 } 0 .. $#order;
my $expected = $first1 < $first2 ? $codes_gap : $codes_unknown;
my ($code) = router_fails($batch) =~ /ERROR:  (\w{5}):/;
is($code, $expected,
	'a batch refused by two shards raises the error of the refusing part that comes first in the array');
# and the mirror image: the other part first
my @mirror = ((grep { $owner{$_} == 2 } @order), (grep { $owner{$_} != 2 } @order));
my %row = map { $_ => "('$_', " . ($_ eq $gap ? 1 : 0) . ", 'e-$_', 'k-$_', 5, 1)" } @parts;
$row{$unknown} = "('$unknown', 0, 'e-u', 'k-u', 5, 1)";
my ($code2) = router_fails("SELECT count(*) FROM streamforge.ingest_batch('b', ARRAY["
	  . join(', ', map { $row{$_} } @mirror) . ']::streamforge.delivery[])') =~ /ERROR:  (\w{5}):/;
is($code2, $codes_unknown, '... whichever the shards are (the unknown partition first: its error)');
# When the error reaches the caller, every other shard has applied its
# part (each part was sent again alone: a replay where it had committed),
# the refusing shards nothing: a read right after the error is final.
my %consumed = map { split /\|/ } split /\n/,
  router("SELECT partition, consumed_offset FROM streamforge.partitions('b')");
is(join(',', map { "$_:$consumed{$_}" } sort @parts),
	join(',', map { "$_:" . ($shard_of{$_} == 1 || $shard_of{$_} == 2 ? -1 : 0) } sort @parts),
	'right after the error: shards 0 and 3 applied their parts, the refusing shards 1 and 2 nothing');
# corrected: the committed parts are replays
@rows = map { "('$_', 0, 'e-$_', 'k-$_', 5, 1)" } @parts;
router("SELECT count(*) FROM streamforge.ingest_batch('b', ARRAY[" . join(', ', @rows) . ']::streamforge.delivery[])');
is(router("SELECT count(*) FROM streamforge.partitions('b') WHERE consumed_offset = 0"),
	scalar(@parts), 'the corrected batch, sent again, converges');
is(router("SELECT accepted, offset_replays >= " . (@{ $by_shard{0} } + @{ $by_shard{3} }) . " FROM streamforge.stats('b')"),
	scalar(@parts) . '|t', 'every event accepted once; the parts already committed were offset replays');

# --- 2. a connection that a restarted node closed ----------------------------

my ($on2) = grep { router("SELECT streamforge.shard_of('$_')") == 1 } map { "pl$_" } 0 .. 30;
router("SELECT streamforge.create_pipeline('$on2', ARRAY['a'], $windows)");
my $psql2 = $node2->config_data('--bindir') . '/psql';
my $kill_sf1 = "\\! $psql2 -X -h " . $node2->host . ' -p ' . $node2->port
  . " -d postgres -Atc \"SELECT count(pg_terminate_backend(pid)) > 0 FROM pg_stat_activity WHERE datname = 'sf1'\"";
my ($out, $err) = session(
	qq{SELECT count(*) FROM streamforge.advance('$on2', 'a', 1);
$kill_sf1
SELECT count(*) AS after_kill FROM streamforge.advance('$on2', 'a', 2);
SELECT streamforge.watermark('$on2') AS w;
$kill_sf1
SELECT 'partitions', count(*) FROM streamforge.partitions('$on2');
$kill_sf1
SELECT count(*) FROM streamforge.append('$on2', 'a', 'x', 'k', 5, 1);
SELECT 'end', streamforge.watermark('$on2');
});
is($out, "0\nt\n0\n2\nt\npartitions|1\nt\nend|2",
	'a warm router session: each call after the node closed its connection is retried and succeeds');
like($err, qr/57P01: .*REMOTE FATAL: +terminating connection due to administrator command/,
	'an append is not retried (it is not idempotent): it fails with the node\'s 57P01');
is(scalar(() = $err =~ /ERROR:/g), 1, 'only the append failed');

# a node restarted with -m fast between two calls of a session
my $pg_ctl = $node2->config_data('--bindir') . '/pg_ctl';
($out, $err) = session(
	qq{SELECT count(*) FROM streamforge.advance('$on2', 'a', 3);
\\! $pg_ctl -D @{[ $node2->data_dir ]} -l @{[ $node2->logfile ]} -m fast -w restart >/dev/null
SELECT count(*) FROM streamforge.advance('$on2', 'a', 4);
SELECT streamforge.watermark('$on2');
});
is($out, "0\n0\n4", 'a warm router session after a restart of the node: the calls succeed');
is($err =~ /ERROR/ ? $err : '', '', 'no error after the restart');

# --- 3. a hung node ---------------------------------------------------------

my $pmfile = $node2->data_dir . '/postmaster.pid';
# the shell command that sends a signal to every process of node2
sub signal_node2
{
	my ($sig) = @_;
	return "pm=\$(head -1 $pmfile); kill -$sig \$pm \$(ps -o pid= --ppid \$pm)";
}
my $stopped = 0;
END { system('sh', '-c', signal_node2('CONT')) if $stopped; }
$stopped = 1;
# PL/Proxy (2.10) checks its connect and query timeouts only when one of
# the call's connections has an event: a node whose processes are stopped
# sends none, so neither timeout fires.  What bounds a call to a hung node
# is the router's statement_timeout (57014; docs/scale-out.md, "A hung
# node"), and terminating the router backend (the watchdog query there).
system_or_bail('sh', '-c', signal_node2('STOP'));
my ($in, $bg_out, $bg_err) = ('', '', '');
my $bg = IPC::Run::start(
	[
		'psql', '-XAtq', '-d', $router->connstr('postgres'),
		'-c', "SET statement_timeout = '4s'",
		'-c', "SELECT count(*) FROM streamforge.advance('$on2', 'a', 6)"
	],
	'<', \$in, '>', \$bg_out, '2>', \$bg_err,
	IPC::Run::timeout(180));
my $waiting = "SELECT pid FROM pg_stat_activity WHERE state = 'active' "
  . "AND query LIKE '%advance(''$on2'', ''a'', 6)%' AND pid <> pg_backend_pid()";
my $pid = '';
for (1 .. 300)
{
	$pid = router($waiting);
	last if $pid ne '';
	sleep 0.1;
}
isnt($pid, '', 'a call to the hung node is waiting');
my ($on1) = grep { router("SELECT streamforge.shard_of('$_')") == 0 } map { "pl$_" } 0 .. 30;
router("SELECT streamforge.create_pipeline('$on1', ARRAY['a'], $windows)");
is(router("SELECT count(*) FROM streamforge.advance('$on1', 'a', 1)"), '0',
	'calls to the other node go on meanwhile');
$bg->finish;
like($bg_err, qr/canceling statement due to statement timeout/,
	'statement_timeout ends the call to the hung node (57014)');
# the same call, ended by the watchdog query of docs/scale-out.md
($in, $bg_out, $bg_err) = ('', '', '');
$bg = IPC::Run::start(
	[
		'psql', '-XAtq', '-d', $router->connstr('postgres'),
		'-c', "SELECT count(*) FROM streamforge.advance('$on2', 'a', 6)"
	],
	'<', \$in, '>', \$bg_out, '2>', \$bg_err,
	IPC::Run::timeout(180));
$pid = '';
for (1 .. 300)
{
	$pid = router($waiting);
	last if $pid ne '';
	sleep 0.1;
}
isnt($pid, '', 'a call without statement_timeout to the hung node is waiting');
sleep 1;
is(router(<<"EOT"), '1', 'the watchdog query finds it');
SELECT count(pg_terminate_backend(a.pid))
  FROM pg_stat_activity a
 WHERE a.backend_type = 'client backend' AND a.state = 'active'
   AND a.query_start < pg_catalog.now() - interval '1 second'
   AND a.query ~ 'streamforge\\.' AND a.pid <> pg_backend_pid()
EOT
$bg->finish;
like($bg_err, qr/terminating connection due to administrator command/,
	'... and ends it: the caller gets 57P01');
system_or_bail('sh', '-c', signal_node2('CONT'));
$stopped = 0;
is(router("SELECT count(*) FROM streamforge.advance('$on2', 'a', 6)"), '0',
	'the node continued: calls succeed');

# --- 4. create, drop and repair with a node down ------------------------------

$node2->stop('immediate');
like(router_fails("SELECT streamforge.create_sharded_pipeline('c', $parts_sql, $windows)"),
	qr/08006/, 'create_sharded_pipeline with a node down: 08006');
$node2->start;
is(router("SELECT count(*) FROM streamforge.sharded_pipelines WHERE pipeline = 'c'"), '0',
	'... no router row');
is(join(',', map { $shard_node{$_}->safe_psql("sf$_", "SELECT count(*) FROM streamforge.pipeline WHERE name = 'c'") } 0 .. 3),
	'0,0,0,0', '... and no shard has it');

# a create left half-made (shards 0 and 1 have it, as after a call that
# failed between them): called again, it finishes
for my $s (0, 1)
{
	$shard_node{$s}->safe_psql("sf$s", "SELECT streamforge.create_pipeline('c', $parts_sql, $windows)");
}
router("SELECT streamforge.create_sharded_pipeline('c', $parts_sql, $windows)");
is(join(',', map { $shard_node{$_}->safe_psql("sf$_", "SELECT count(*) FROM streamforge.pipeline WHERE name = 'c'") } 0 .. 3),
	'1,1,1,1', 'create_sharded_pipeline again finishes a half-made create');
$shard_node{2}->safe_psql('sf2', "SELECT streamforge.create_pipeline('c2', ARRAY['other'], $windows)");
like(router_fails("SELECT streamforge.create_sharded_pipeline('c2', $parts_sql, $windows)"),
	qr/42710: pipeline "c2" already exists on shard 2/,
	'a shard with another pipeline of that name: 42710');
is(router("SELECT count(*) FROM streamforge.sharded_pipelines WHERE pipeline = 'c2'"), '0',
	'... and the router lists nothing');

# drop with a node down: the router keeps its row; called again, it finishes
$node2->stop('immediate');
like(router_fails("SELECT streamforge.drop_pipeline('c')"), qr/08006/,
	'drop_pipeline with a node down: 08006');
$node2->start;
is(router("SELECT count(*) FROM streamforge.sharded_pipelines WHERE pipeline = 'c'"), '1',
	'... the router keeps its row');
router("SELECT streamforge.drop_pipeline('c')");
is(router("SELECT count(*) FROM streamforge.sharded_pipelines WHERE pipeline = 'c'")
	  . join(',', map { $shard_node{$_}->safe_psql("sf$_", "SELECT count(*) FROM streamforge.pipeline WHERE name = 'c'") } 0 .. 3),
	'00,0,0,0', 'drop_pipeline again finishes it');
# a drop left half-made (shards 1 and 2 dropped it, as after a call that
# failed after them): called again, it finishes
router("SELECT streamforge.create_sharded_pipeline('c', $parts_sql, $windows)");
$shard_node{$_}->safe_psql("sf$_", "SELECT streamforge.drop_pipeline('c')") for 1, 2;
router("SELECT streamforge.drop_pipeline('c')");
is(router("SELECT count(*) FROM streamforge.sharded_pipelines WHERE pipeline = 'c'")
	  . join(',', map { $shard_node{$_}->safe_psql("sf$_", "SELECT count(*) FROM streamforge.pipeline WHERE name = 'c'") } 0 .. 3),
	'00,0,0,0', 'drop_pipeline finishes a half-made drop');

# repair: a listed pipeline missing on some shards is created there with
# the definition of the others; an unlisted half-made one is listed too
router("SELECT streamforge.create_sharded_pipeline('r', $parts_sql, $windows, 7, 50)");
$shard_node{$_}->safe_psql("sf$_", "SELECT streamforge.drop_pipeline('r')") for 1, 2;
is(router("SELECT string_agg(shard || ':' || action, ',' ORDER BY shard) FROM streamforge.repair_sharded_pipeline('r')"),
	'0:present,1:created,2:created,3:present', 'repair_sharded_pipeline creates the missing shards');
is(join(',', map { $shard_node{$_}->safe_psql("sf$_", "SELECT (definition ->> 'lateness') || '/' || (definition ->> 'retention') FROM streamforge.pipeline WHERE name = 'r'") } 0 .. 3),
	'7/50,7/50,7/50,7/50', '... with the definition of the others');
for my $s (1, 3)
{
	$shard_node{$s}->safe_psql("sf$s", "SELECT streamforge.create_pipeline('h', $parts_sql, $windows)");
}
is(router("SELECT string_agg(shard || ':' || action, ',' ORDER BY shard) FROM streamforge.repair_sharded_pipeline('h')"),
	'0:created,1:present,2:created,3:present', 'repair_sharded_pipeline of an unlisted half-made create');
is(router("SELECT shards FROM streamforge.sharded_pipelines WHERE pipeline = 'h'"), '4', '... lists it');
is(router("SELECT string_agg(shard || ':' || action, ',' ORDER BY shard) FROM streamforge.repair_sharded_pipeline('h', drop => true)"),
	'0:dropped,1:dropped,2:dropped,3:dropped', 'repair_sharded_pipeline(drop => true) drops it everywhere');
is(router("SELECT count(*) FROM streamforge.sharded_pipelines WHERE pipeline = 'h'"), '0', '... and forgets it');
like(router_fails("SELECT * FROM streamforge.repair_sharded_pipeline('$on2')"),
	qr/42704: pipeline "$on2" is not a sharded pipeline/, 'a placed pipeline is not repaired');

done_testing();
