# The whole API through the router (issue 30, item 1; docs/scale-out.md,
# "What is routed, and how to add a function").
#
# 1. The router's functions are the data node's: every function of the
#    extension streamforge on a data node is in the router's schema
#    streamforge with the same arguments (names, types, defaults) and
#    result, except those proxy/api.tsv declares "node" (deliberately not
#    routed); the router's other public functions are exactly those it
#    declares "router".  A function added to sql/objects/*.sql without a
#    line in proxy/api.tsv already fails the build (proxy/gen.pl); this
#    checks the installed catalogs.
# 2. Every generated routing kind works on a placed and on a sharded
#    pipeline: the calls return what one node returns for the same calls
#    (placed: the same rows, seq included; sharded: the same results, since
#    every key stays on one partition).
#
# One data node with the shard databases sf0 and sf1 and the reference
# database "single"; a router of 2 shards.

use strict;
use warnings;

use File::Basename;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $top = dirname(__FILE__) . '/../..';

my $node = PostgreSQL::Test::Cluster->new('data');
$node->init;
$node->start;
for my $db (qw(sf0 sf1 single))
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION streamforge');
}

my $router = PostgreSQL::Test::Cluster->new('router');
my $sharedir = $router->config_data('--sharedir');
BAIL_OUT("plproxy is not installed in $sharedir/extension (postgresql-15-plproxy)")
  unless -f "$sharedir/extension/plproxy.control";
$router->init;
$router->start;
my $connstr = 'host=' . $node->host . ' port=' . $node->port;
$router->safe_psql(
	'postgres', qq{
CREATE EXTENSION plproxy;
CREATE EXTENSION streamforge_proxy;
CREATE SERVER streamforge FOREIGN DATA WRAPPER plproxy OPTIONS (
    p0 '$connstr dbname=sf0', p1 '$connstr dbname=sf1');
CREATE USER MAPPING FOR PUBLIC SERVER streamforge;
});

sub router { return $router->safe_psql('postgres', $_[0]); }
sub single { return $node->safe_psql('single', $_[0]); }

sub router_fails
{
	my ($sql) = @_;
	my ($ret, $out, $err) =
	  $router->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	return $ret != 0 ? $err : "succeeded unexpectedly: $out";
}

# --- 1. the function lists -------------------------------------------------

my (%kind, @decl);
open(my $fh, '<', "$top/proxy/api.tsv") or die "proxy/api.tsv: $!";
while (<$fh>)
{
	next if /^\s*(#|$)/;
	my ($name, $kind) = split;
	$kind{$name} = $kind;
}
close $fh;

my $signatures = q{
SELECT p.proname || '(' || pg_get_function_arguments(p.oid) || ') ' || pg_get_function_result(p.oid)
  FROM pg_proc p
 WHERE p.pronamespace = 'streamforge'::regnamespace AND p.proname !~ '^px_'
   -- aggregates (max_by, min_by, approx_percentile) only spell a
   -- create_aggregate query of the data node: the router has none
   AND p.prokind <> 'a'
   AND EXISTS (SELECT FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
                WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
                  AND e.extname IN ('streamforge', 'streamforge_proxy'))
 ORDER BY 1};
my %on_node = map { $_ => 1 } split /\n/, single($signatures);
my %on_router = map { $_ => 1 } split /\n/, router($signatures);
sub fname { my ($s) = @_; $s =~ /^(\w+)\(/; return $1; }

my @node_only = sort grep { !$on_router{$_} } keys %on_node;
my @router_only = sort grep { !$on_node{$_} } keys %on_router;
is( join("\n", grep { ($kind{ fname($_) } // '') ne 'node' } @node_only),
	'',
	'every function of the data node is in the router with the same arguments, defaults and result, but those proxy/api.tsv declares "node"'
);
is( join("\n", grep { ($kind{ fname($_) } // '') ne 'router' } @router_only),
	'',
	'the router has no public function of its own but those proxy/api.tsv declares "router"');
# (by name: a function declared "node" may have several overloads,
# advance_to_now and schedule_advance since 0.4.0)
my %node_only_names = map { fname($_) => 1 } @node_only;
is( join(',', sort keys %node_only_names),
	join(',', sort grep { $kind{$_} eq 'node' } keys %kind),
	'the functions not routed are exactly those declared "node"');
is( join(',', sort map { fname($_) } @router_only),
	join(',', sort grep { $kind{$_} eq 'router' } keys %kind),
	"the router's own functions are exactly those declared \"router\"");
# the docs' lists of what is not routed are api.tsv's "node" lines
my ($readme_not) = slurp_file("$top/docs/reference.md") =~ /^Not routed \([^\n]*?\): ([^\n]*?)\. `change`/m;
is(join(',', sort(($readme_not // '') =~ /`(\w+)`/g)),
	join(',', sort grep { $kind{$_} eq 'node' } keys %kind),
	"docs/reference.md's list of functions not routed is proxy/api.tsv's \"node\" lines");
my ($docs_not) = slurp_file("$top/docs/scale-out.md") =~ /^Deliberately not routed (.*?)\n\n/ms;
is(join(',', sort(($docs_not // '') =~ /`(\w+)`/g)),
	join(',', sort grep { $kind{$_} eq 'node' } keys %kind),
	"docs/scale-out.md's list of functions not routed is proxy/api.tsv's \"node\" lines");
cmp_ok(scalar(grep { $on_router{$_} } keys %on_node), '>=', 55,
	'the router routes the data node\'s API (at least 55 functions)');

# --- the window constructors ------------------------------------------------
# proxy/gen.pl generates them (kind window) from the node's functions bound
# to sf_window_ctor, which the regress test ops_registry ties to the node's
# operations table: the router's are exactly the kinds of
# streamforge_internal.window_kinds(), with its params; each builds the row
# the node's builds, and the shard that receives a bad one refuses it with
# the node constructor's SQLSTATE, message and detail.
sub single_fails
{
	my ($sql) = @_;
	my ($ret, $out, $err) = $node->psql('single', "\\set VERBOSITY verbose\n$sql");
	return $ret != 0 ? $err : "succeeded unexpectedly: $out";
}
my @kinds = split /\n/,
  single("SELECT kind || ':' || array_to_string(params, ',') FROM streamforge_internal.window_kinds() ORDER BY kind");
cmp_ok(scalar(@kinds), '>=', 3, 'the node has window kinds (' . join(' ', @kinds) . ')');
is( router(q{SELECT string_agg(p.proname || ':' || array_to_string(p.proargnames[2:], ','), E'\n' ORDER BY p.proname)
  FROM pg_proc p
 WHERE p.pronamespace = 'streamforge'::regnamespace AND p.prorettype = 'streamforge.window_def'::regtype
   AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'sql')}),
	join("\n", @kinds),
	"the router's window constructors are the node's window kinds, with their params");
for my $k (@kinds)
{
	my ($kind, $params) = split /:/, $k;
	my @names = split /,/, $params;
	my @vals = (20, 5, 3)[ 0 .. $#names ];
	my $ctor = "streamforge.$kind('w', " . join(', ', @vals) . ')';
	is(router("SELECT $ctor"), single("SELECT $ctor"), "$kind: the router's row is the node's");
	for my $i (0 .. $#names)
	{
		my @bad = @vals;
		$bad[$i] = 0;
		my $bad = "streamforge.$kind('w', " . join(', ', @bad) . ')';
		my ($state, $msg, $detail) =
		  single_fails("SELECT $bad") =~ /ERROR:  (\w{5}): ([^\n]*)\n(?:DETAIL:  ([^\n]*))?/;
		my $want = "ERROR:  \Q$state\E: .*\Q$msg\E\n";
		$want .= "(?:.*\n)*?DETAIL:  .*\Q$detail\E" if defined $detail;
		like(
			router_fails("SELECT streamforge.create_pipeline('badw', ARRAY['p0'], ARRAY[$bad])"),
			qr/$want/,
			"$kind, $names[$i] 0: create_pipeline through the router refuses it with the node constructor's $state: $msg");
	}
}

# --- 2. every routing kind, placed and sharded -------------------------------

my $windows = "ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 5)]";
my @parts = map { "p$_" } 0 .. 3;
my $parts_sql = 'ARRAY[' . join(', ', map { "'$_'" } @parts) . ']';
my %shard_of = map { $_ => router("SELECT streamforge.shard_of('$_')") } @parts;
ok((grep { $shard_of{$_} == 0 } @parts) && (grep { $shard_of{$_} == 1 } @parts),
	'the partitions are spread over both shards');

# placed: one pipeline on each shard
my ($pl0) = grep { router("SELECT streamforge.shard_of('$_')") == 0 } map { "pl$_" } 0 .. 20;
my ($pl1) = grep { router("SELECT streamforge.shard_of('$_')") == 1 } map { "pl$_" } 0 .. 20;

my $changes = 'seq, op, window_name, key, window_start, window_end, count, sum, min, max';
my $results = 'window_name, key, window_start, window_end, count, sum, min, max';
# The calls: each is run on the router and on the single node; for a
# placed pipeline the changes (seq included) must be equal, for the sharded
# one the changes without seq (seq is per shard), in address order.
sub calls
{
	my ($pl) = @_;
	return (
		"SELECT $changes FROM streamforge.ingest('$pl', 'p0', 0, 'a0', 'k0', 1, 5)",
		"SELECT streamforge.ingest_count('$pl', 'p1', 0, 'b0', 'k1', 2, 6)",
		"SELECT $changes FROM streamforge.append('$pl', 'p2', 'c0', 'k2', 3, 7)",
		"SELECT $changes FROM streamforge.append_ts('$pl', 'p3', 'd0', 'k3', 'epoch'::timestamptz + interval '4 ms', 8)",
		"SELECT $changes FROM streamforge.ingest_ts('$pl', 'p0', 1, 'a1', 'k0', 'epoch'::timestamptz + interval '6 ms', 1)",
		"SELECT $changes FROM streamforge.ingest_batch('$pl', ARRAY[('p0', 2, 'a2', 'k0', 7, 2), ('p1', 1, 'b1', 'k1', 8, 3), ('p2', 1, 'c1', 'k2', 9, 4)]::streamforge.delivery[])",
		"SELECT $changes FROM streamforge.append_batch('$pl', ARRAY[('p3', 'd1', 'k3', 11, 1), ('p1', 'b2', 'k1', 12, 2), ('p0', 'a3', 'k0', 13, 3)]::streamforge.event[])",
		"SELECT $changes FROM streamforge.ingest_json('$pl', '[{\"partition\": \"p2\", \"source_offset\": 2, \"event_id\": \"c2\", \"key\": \"k2\", \"event_time\": 14, \"value\": 9}, {\"partition\": \"p3\", \"source_offset\": 2, \"event_id\": \"d2\", \"key\": \"k3\", \"event_time\": 15, \"value\": 1}]')",
		map({ "SELECT $changes FROM streamforge.advance('$pl', '$_', 20)" } @parts[0 .. 2]),
		"SELECT $changes FROM streamforge.advance_ts('$pl', 'p3', 'epoch'::timestamptz + interval '21 ms')",
		"SELECT $changes FROM streamforge.mark_idle('$pl', 'p3')",
		"SELECT $changes FROM streamforge.add_window('$pl', streamforge.fixed_interval('g', interval '20 ms'))",
		"SELECT $changes FROM streamforge.set_lateness('$pl', 4)",
		"SELECT $changes FROM streamforge.set_retention('$pl', 100)",
		"SELECT $changes FROM streamforge.add_partition('$pl', 'p9')",
		"SELECT $changes FROM streamforge.drop_window('$pl', 's')",
		"SELECT $changes FROM streamforge.ingest('$pl', 'p1', 3, 'b3', 'k1', 30, 4)",
		"SELECT $changes FROM streamforge.advance('$pl', 'p1', 45)",
		"SELECT $results, avg FROM streamforge.visible_avg('$pl')",
		"SELECT $results, avg FROM streamforge.live_avg('$pl')",
		"SELECT $results FROM streamforge.visible_ts('$pl')",
		"SELECT $results FROM streamforge.live_ts('$pl')",
		"SELECT $results FROM streamforge.live('$pl')",
		"SELECT partition, source_offset, event_id, key, event_time, value, watermark FROM streamforge.late_events('$pl') ORDER BY partition, source_offset",
		"SELECT streamforge.watermark_ts('$pl')",
		"SELECT streamforge.time_unit('$pl')",
		"SELECT streamforge.has_pipeline_privilege('$pl', 'admin')",
		"SELECT streamforge.require_privilege('$pl', 'read')",
		"SELECT streamforge.configure_outputs('$pl', changelog => true, results => true, late => true)",
		"SELECT $changes FROM streamforge.ingest('$pl', 'p2', 3, 'c3', 'k2', 50, 2)",
		"SELECT $changes FROM streamforge.advance('$pl', 'p2', 70)",
		"SELECT streamforge.resync_outputs('$pl')",
		"SELECT streamforge.trim_results('$pl')",
		"SELECT streamforge.grant('$pl', 'reader', 'read')",
		"SELECT streamforge.has_pipeline_privilege('$pl', 'read', 'reader')",
		"SELECT streamforge.revoke('$pl', 'reader', 'read')",
		"SELECT streamforge.disable_outputs('$pl')",
		"SELECT $results FROM streamforge.visible('$pl')");
}
$node->safe_psql('postgres', 'CREATE ROLE reader');
$router->safe_psql('postgres', 'CREATE ROLE reader');

for my $pl ($pl0, $pl1)
{
	router("SELECT streamforge.create_pipeline('$pl', $parts_sql, $windows, 2, time_unit => '1 ms')");
	single("SELECT streamforge.create_pipeline('$pl', $parts_sql, $windows, 2, time_unit => '1 ms')");
	for my $c (calls($pl))
	{
		is(router($c), single($c), "placed $pl: $c");
	}
	is(router("SELECT streamforge.trim_changelog('$pl', 2)"),
		single("SELECT streamforge.trim_changelog('$pl', 2)"), "placed $pl: trim_changelog");
	is(router("SELECT streamforge.trim_late_output('$pl', 1)"),
		single("SELECT streamforge.trim_late_output('$pl', 1)"), "placed $pl: trim_late_output");
	is($node->safe_psql("sf" . router("SELECT streamforge.shard_of('$pl')"),
			"SELECT count(*) FROM streamforge.partitions('$pl')"),
		'5', "placed $pl lives on its shard");
}

router("SELECT streamforge.create_sharded_pipeline('sh', $parts_sql, $windows, 2, time_unit => '1 ms')");
single("SELECT streamforge.create_pipeline('sh', $parts_sql, $windows, 2, time_unit => '1 ms')");
for my $c (calls('sh'))
{
	my $sql = $c;
	# changes: without seq, in address order (seq and the grouping by
	# shard are per shard)
	$sql = "SELECT op, window_name, key, window_start, window_end, count, sum, min, max FROM ($c) x "
	  . "ORDER BY window_name COLLATE \"C\", key COLLATE \"C\", window_start, op"
	  if $c =~ /^SELECT seq,/;
	is(router($sql), single($sql), "sharded: $c");
}
like(router_fails("SELECT streamforge.trim_changelog('sh', 2)"),
	qr/0A000: trim_changelog of a sharded pipeline is not supported through the router/,
	'trim_changelog of a sharded pipeline: 0A000 (seq is per shard)');
for my $s (0, 1)
{
	my $mine = join(',', sort grep { $shard_of{$_} == $s } @parts);
	is( $node->safe_psql("sf$s",
			"SELECT string_agg(partition, ',' ORDER BY partition) FROM streamforge.partitions('sh') WHERE consumed_offset >= 0"),
		$mine,
		"sharded: shard $s consumed only its partitions ($mine), append and JSON batches included");
}
is( $node->safe_psql('sf0', "SELECT count(*) FROM streamforge.partitions('sh') WHERE partition = 'p9'")
	  . $node->safe_psql('sf1', "SELECT count(*) FROM streamforge.partitions('sh') WHERE partition = 'p9'"),
	'11', 'sharded: add_partition reached every shard');

# --- create_sharded_pipeline takes every option of create_pipeline (issue
# 41: 0.3.0's lacked emit, out_of_orderness, idle_timeout, measures and
# aggregates), and compares the shards' definition documents
is(router("SELECT pg_get_function_arguments('streamforge.create_sharded_pipeline'::regproc)"),
	single("SELECT pg_get_function_arguments('streamforge.create_pipeline'::regproc)"),
	'create_sharded_pipeline has the arguments and defaults of the node\'s create_pipeline');
is(router("SELECT pg_get_function_arguments('streamforge.definition_of'::regproc)"),
	single("SELECT pg_get_function_arguments('streamforge.create_pipeline'::regproc)"),
	'the router\'s definition_of has them too');
my $opts = "2, emit => 'final', out_of_orderness => 3, idle_timeout => '1 hour', "
  . "measures => ARRAY['a', 'b NULL'], aggregates => ARRAY['sum(a)', 'max(b)']";
router("SELECT streamforge.create_sharded_pipeline('shm', $parts_sql, $windows, $opts)");
single("SELECT streamforge.create_pipeline('shm', $parts_sql, $windows, $opts)");
my $want = single("SELECT streamforge.definition('shm')");
like($want, qr/"emit": "final".*"measures": \["a", "b NULL"\].*"aggregates": \["sum\(a\)", "max\(b\)"\].*"idle_timeout": "P0DT3600S", "out_of_orderness": 3/,
	'the reference has every option');
for my $s (0, 1)
{
	is($node->safe_psql("sf$s", "SELECT streamforge.definition('shm')"), $want,
		"create_sharded_pipeline: shard $s has every option");
}
is(router("SELECT streamforge.definition('shm')"), $want, 'definition() through the router');
is(router("SELECT streamforge.definition_of('x', $parts_sql, $windows, $opts)"), $want,
	'definition_of() through the router');
# a create the router forgot (half-made): the same call finishes it, a call
# with another option finds the shards' other definition
router("DELETE FROM streamforge.sharded_pipelines WHERE pipeline = 'shm'");
router("SELECT streamforge.create_sharded_pipeline('shm', $parts_sql, $windows, $opts)");
is(router("SELECT count(*) FROM streamforge.sharded_pipelines WHERE pipeline = 'shm'"), '1',
	'create_sharded_pipeline again with the same options finishes a half-made create');
router("DELETE FROM streamforge.sharded_pipelines WHERE pipeline = 'shm'");
like(router_fails("SELECT streamforge.create_sharded_pipeline('shm', $parts_sql, $windows, 2, emit => 'final', out_of_orderness => 4, idle_timeout => '1 hour', measures => ARRAY['a', 'b NULL'], aggregates => ARRAY['sum(a)', 'max(b)'])"),
	qr/42710: pipeline "shm" already exists on shard 0.*DETAIL:  It has another definition/s,
	'another out_of_orderness is another definition: 42710');
# the node's checks of the options come before anything is created
like(router_fails("SELECT streamforge.create_sharded_pipeline('shx', $parts_sql, $windows, emit => 'often')"),
	qr/22023: .*unknown emit mode "often"/, 'a bad emit mode: 22023 from the node');
is(router("SELECT count(*) FROM streamforge.sharded_pipelines WHERE pipeline = 'shx'")
	  . $node->safe_psql('sf0', "SELECT count(*) FROM streamforge.pipeline_info WHERE name = 'shx'"),
	'00', 'and nothing is created');

# --- the aggregates of issue 44 (item 5) through the router: placed and
# sharded pipelines with count_distinct, approx_count_distinct, max_by,
# min_by and the percentiles give one node's rows (every key stays on one
# partition), through late corrections, a session merge, a checkpoint and
# its restore
my $aggs = "measures => ARRAY['u', 'v NULL'], aggregates => ARRAY['count', "
  . "'count_distinct(u)', 'approx_count_distinct(u)', 'max_by(u, v)', 'min_by(u, v)', "
  . "'percentile_cont(v, 0.9)', 'percentile_disc(u, 0.5)', 'approx_percentile(v, 0.99)']";
my ($pla) = grep { router("SELECT streamforge.shard_of('$_')") == 1 } map { "pa$_" } 0 .. 20;
router("SELECT streamforge.create_sharded_pipeline('sha', $parts_sql, $windows, 300, $aggs)");
router("SELECT streamforge.create_pipeline('$pla', $parts_sql, $windows, 300, $aggs)");
single("SELECT streamforge.create_pipeline('$_', $parts_sql, $windows, 300, $aggs)") for ('sha', $pla);
my $mchanges = 'op, window_name, key, window_start, window_end, count, aggregates';
# 300 events per key (k_i on p_i), sessions that merge, out of order;
# then late events into emitted windows
my $batch = sub {
	my ($pl, $from, $to, $late) = @_;
	return "SELECT $mchanges FROM streamforge.ingest_measures_batch('$pl', ARRAY("
	  . "SELECT ROW('p' || (i % 4), i / 4, 'e' || i, 'k' || (i % 4), "
	  . ($late ? "(i * 7) % 200" : "(i * 37) % 200")
	  . ", ARRAY[(i * 13) % 97, CASE WHEN i % 11 = 0 THEN NULL ELSE (i * i) % 100003 - 50000 END])::streamforge.measures_delivery "
	  . "FROM generate_series($from, $to) AS i ORDER BY i)) ORDER BY window_name, key, window_start, window_end, seq";
};
for my $pl ('sha', $pla)
{
	for my $c ($batch->($pl, 0, 1199, 0),
		map({ "SELECT op, window_name, key, window_start, window_end, count FROM streamforge.advance('$pl', '$_', 215) ORDER BY window_name, key, window_start, window_end, seq" } @parts),
		$batch->($pl, 1200, 1299, 1),
		"SELECT window_name, key, window_start, window_end, count, aggregates FROM streamforge.live_aggregates('$pl')",
		"SELECT window_name, key, window_start, window_end, count, aggregates FROM streamforge.visible_aggregates('$pl')")
	{
		is(router($c), single($c), "issue 44 aggregates, $pl: $c");
	}
	my $before = router("SELECT window_name, key, window_start, window_end, count, aggregates FROM streamforge.live_aggregates('$pl')");
	router("SELECT streamforge.restore('$pl', streamforge.checkpoint('$pl'))");
	is(router("SELECT window_name, key, window_start, window_end, count, aggregates FROM streamforge.live_aggregates('$pl')"),
		$before, "issue 44 aggregates, $pl: a checkpoint through the router restores");
}

# the stateless functions run on any shard
for my $c (
	"SELECT streamforge.sliding_interval('w', interval '1 s', interval '100 ms')",
	"SELECT streamforge.session_interval('w', interval '5 s')",
	"SELECT streamforge.interval_to_units(interval '3 s', interval '1 ms')",
	"SELECT streamforge.time_to_units('epoch'::timestamptz + interval '5 s', interval '1 ms')",
	"SELECT streamforge.units_to_time(5000, interval '1 ms')",
	"SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('$pl0')) IS NOT NULL")
{
	is(router($c), single($c), "any shard: $c");
}

# errors keep their SQLSTATE through the generated wrappers
like(router_fails("SELECT * FROM streamforge.append('sh', NULL, 'x', 'k', 1, 1)"),
	qr/22004: partition must not be null/, 'a NULL partition of a sharded pipeline is 22004');
like(router_fails("SELECT * FROM streamforge.append_batch('sh', NULL)"),
	qr/22004: events must not be null/, 'a NULL batch of a sharded pipeline is 22004');
like(router_fails("SELECT * FROM streamforge.ingest_json('sh', '{\"not\": \"an array\"}')"),
	qr/REMOTE ERROR/, 'a JSON batch that is not an array goes to a shard, which refuses it');
like(router_fails("SELECT * FROM streamforge.set_lateness('nosuch', 1)"),
	qr/42704: .*pipeline "nosuch" does not exist/, 'an unknown pipeline is 42704');

done_testing();
