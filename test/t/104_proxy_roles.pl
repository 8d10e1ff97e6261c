# The router's roles (issue 37, finding 14; docs/scale-out.md, "One
# mapping per router role"): one data node with two shards, a router set up
# as the docs show, with one user mapping per router role.
#
#   1. dashboard (read on the data node) acts on the shards as itself: its
#      ingest and its drop are refused there (0.3.0's example mapped PUBLIC
#      to collector, so dashboard could drop collector's pipelines);
#   2. a role without DELETE on streamforge.sharded_pipelines calling
#      drop_pipeline gets 42501 before any shard is called: the pipeline is
#      still on every shard and listed (0.3.0 dropped it on every shard,
#      then failed on the router's row);
#   3. repair_sharded_pipeline(drop => true) checks DELETE first too;
#   4. with DELETE granted, drop_pipeline drops it everywhere.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('data');
$node->init;
$node->start;
for my $s (0, 1)
{
	$node->safe_psql('postgres', "CREATE DATABASE sf$s");
	$node->safe_psql("sf$s", 'CREATE EXTENSION streamforge');
}
$node->safe_psql('postgres', 'CREATE ROLE rt_collector LOGIN; CREATE ROLE rt_dashboard LOGIN');
for my $s (0, 1)
{
	$node->safe_psql("sf$s",
		'GRANT USAGE ON SCHEMA streamforge TO rt_collector, rt_dashboard');
}

my $router = PostgreSQL::Test::Cluster->new('router');
my $sharedir = $router->config_data('--sharedir');
BAIL_OUT("plproxy is not installed in $sharedir/extension (postgresql-15-plproxy)")
  unless -f "$sharedir/extension/plproxy.control";
$router->init;
$router->start;
my $servers = join(",\n",
	map { "p$_ 'host=" . $node->host . ' port=' . $node->port . " dbname=sf$_ connect_timeout=5'" }
	  0, 1);
# as docs/scale-out.md shows it: one mapping per router role
$router->safe_psql(
	'postgres', qq{
CREATE EXTENSION plproxy;
CREATE EXTENSION streamforge_proxy;
CREATE SERVER streamforge FOREIGN DATA WRAPPER plproxy OPTIONS (
$servers);
CREATE ROLE rt_collector LOGIN;
CREATE ROLE rt_dashboard LOGIN;
CREATE USER MAPPING FOR rt_collector SERVER streamforge OPTIONS (user 'rt_collector', password 'unused');
CREATE USER MAPPING FOR rt_dashboard SERVER streamforge OPTIONS (user 'rt_dashboard', password 'unused');
GRANT USAGE ON FOREIGN SERVER streamforge TO rt_collector, rt_dashboard;
GRANT USAGE ON SCHEMA streamforge TO rt_collector, rt_dashboard;
GRANT INSERT ON streamforge.sharded_pipelines TO rt_collector;
});

# a psql session on the router as a role: (stdout, stderr)
sub as_role
{
	my ($role, $sql) = @_;
	my ($ret, $out, $err) = $router->psql(
		'postgres', "SET ROLE $role;\n\\set VERBOSITY verbose\n$sql",
		timeout => 120, on_error_stop => 0);
	return ($out, $err);
}

sub on_shards
{
	my ($sql) = @_;
	return join(',', map { $node->safe_psql("sf$_", $sql) } 0, 1);
}

my $windows = "ARRAY[streamforge.fixed('f', 10)]";
my ($out, $err) = as_role('rt_collector',
	"SELECT streamforge.create_sharded_pipeline('clicks', ARRAY['a', 'b', 'c', 'd'], $windows)");
is($err, '', 'rt_collector creates a sharded pipeline through the router');
is(on_shards("SELECT owner FROM streamforge.pipeline WHERE name = 'clicks'"),
	'rt_collector,rt_collector', 'the pipeline is rt_collector\'s on both shards');
($out, $err) = as_role('rt_collector', "SELECT streamforge.grant('clicks', 'rt_dashboard', 'read')");
is($err, '', 'rt_collector grants read to rt_dashboard through the router');

# --- 1. dashboard acts as itself on the shards -----------------------------
($out, $err) = as_role('rt_dashboard', "SELECT count(*) FROM streamforge.stats('clicks')");
is($err, '', 'rt_dashboard reads the pipeline (read)');
($out, $err) = as_role('rt_dashboard',
	"SELECT count(*) FROM streamforge.ingest('clicks', 'a', 0, 'e', 'k', 5, 1)");
like($err, qr/42501: .*permission denied for pipeline "clicks"/,
	'rt_dashboard may not ingest: the shard checks rt_dashboard, not rt_collector');
($out, $err) = as_role('rt_dashboard', "SELECT streamforge.drop_pipeline('clicks')");
like($err, qr/42501/, 'rt_dashboard may not drop the pipeline');
is(on_shards("SELECT count(*) FROM streamforge.pipeline WHERE name = 'clicks'"),
	'1,1', 'the pipeline is still on both shards');

# --- 2. drop_pipeline without DELETE on sharded_pipelines ------------------
($out, $err) = as_role('rt_collector', "SELECT streamforge.drop_pipeline('clicks')");
like($err, qr/42501: permission denied for table sharded_pipelines/,
	'drop_pipeline without DELETE on sharded_pipelines: 42501');
like($err, qr/nothing was changed on any shard/, '... and the detail says nothing changed');
is(on_shards("SELECT count(*) FROM streamforge.pipeline WHERE name = 'clicks'"),
	'1,1', 'the pipeline is still on both shards (0.3.0 dropped it there first)');
is($router->safe_psql('postgres',
		"SELECT count(*) FROM streamforge.sharded_pipelines WHERE pipeline = 'clicks'"),
	'1', 'and still listed on the router');

# --- 3. repair(drop => true) checks first too ------------------------------
($out, $err) = as_role('rt_collector',
	"SELECT * FROM streamforge.repair_sharded_pipeline('clicks', drop => true)");
like($err, qr/42501: permission denied for table sharded_pipelines/,
	'repair_sharded_pipeline(drop => true) without DELETE: 42501');
is(on_shards("SELECT count(*) FROM streamforge.pipeline WHERE name = 'clicks'"),
	'1,1', 'the pipeline is still on both shards after the refused repair');

# --- 4. with DELETE, the drop goes through ---------------------------------
$router->safe_psql('postgres', 'GRANT DELETE ON streamforge.sharded_pipelines TO rt_collector');
($out, $err) = as_role('rt_collector', "SELECT streamforge.drop_pipeline('clicks')");
is($err, '', 'with DELETE granted, rt_collector drops the pipeline');
is(on_shards("SELECT count(*) FROM streamforge.pipeline WHERE name = 'clicks'"),
	'0,0', 'gone from both shards');
is($router->safe_psql('postgres', 'SELECT count(*) FROM streamforge.sharded_pipelines'),
	'0', 'and from the router');

done_testing();
