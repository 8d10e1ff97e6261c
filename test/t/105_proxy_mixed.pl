# A rolling upgrade of a scaled-out deployment (docs/scale-out.md,
# "Upgrading"): the data nodes are updated to this version first, the
# router still runs streamforge_proxy 0.3.0 (its frozen script, installed
# as an old router was); then the router is updated.  At each stage a
# pipeline placed by its name's hash and a pipeline sharded by partition
# get the same calls as a single node of this version (writes in rows and
# in batches spanning shards, advances, reads, checkpoint and restore), and
# answer the same; the pipelines made before the router's update keep
# working after it.
#
# One instance holds the two shards (databases sf0 and sf1), the single
# node (database single) and the router (database router): the router
# reaches the shards through PL/Proxy's connection strings as it would
# other hosts.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('mixed');
my $sharedir = $node->config_data('--sharedir');
BAIL_OUT("plproxy is not installed in $sharedir/extension (postgresql-15-plproxy)")
  unless -f "$sharedir/extension/plproxy.control";
$node->init;
$node->start;
for my $db (qw(sf0 sf1 single))
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION streamforge');
}
$node->safe_psql('postgres', 'CREATE DATABASE router');
my $servers = join(",\n",
	map { "p$_ 'host=" . $node->host . ' port=' . $node->port . " dbname=sf$_'" } 0 .. 1);
$node->safe_psql(
	'router', qq{
CREATE EXTENSION plproxy;
CREATE EXTENSION streamforge_proxy VERSION '0.3.0';
CREATE SERVER streamforge FOREIGN DATA WRAPPER plproxy OPTIONS (
$servers);
CREATE USER MAPPING FOR PUBLIC SERVER streamforge;
});
is($node->safe_psql('router',
		q{SELECT extversion FROM pg_extension WHERE extname = 'streamforge_proxy'}),
	'0.3.0', 'the router runs streamforge_proxy 0.3.0');
is($node->safe_psql('sf0',
		q{SELECT extversion FROM pg_extension WHERE extname = 'streamforge'}),
	'0.4.0', 'the data nodes run streamforge 0.4.0');

sub router { return $node->safe_psql('router', $_[0]); }
sub single { return $node->safe_psql('single', $_[0]); }

# Both answer the same to $q (on the router and on the single node)
sub same
{
	my ($q, $what) = @_;
	my $want = single($q);
	is(router($q), $want, $what);
	return $want;
}

my $windows = q{ARRAY[streamforge.fixed('f', 10), streamforge.sliding('s', 20, 10)]};
my $parts = q{ARRAY['a', 'b', 'c', 'd']};

# Rows $from .. $from + $n - 1 of a pipeline whose row 0 is $origin (every
# partition's offsets follow on, from 0; 'a' from 1: its offset 0 is the
# ingest of one row): they span every partition, and so both shards of a
# sharded pipeline; each key stays on one partition (docs/scale-out.md)
sub batch
{
	my ($p, $from, $n, $origin) = @_;
	my @rows;
	for my $i ($from .. $from + $n - 1)
	{
		my $part = (qw(a b c d))[ $i % 4 ];
		my $off = int(($i - $origin) / 4) + ($part eq 'a' ? 1 : 0);
		my $t = $i * 3 - ($i % 7 == 0 ? 25 : 0);    # a few late ones
		# a key stays on one partition, as a sharded pipeline needs
		push @rows, "ROW('$part', $off, 'e$i', '$part" . ($i % 3) . "', $t, " . ($i % 11) . ")";
	}
	return "SELECT count(*) FROM streamforge.ingest_batch('$p', ARRAY["
	  . join(', ', @rows) . ']::streamforge.delivery[])';
}

# The calls of one stage on pipelines $h (placed by hash) and $s (sharded)
sub workload
{
	my ($h, $s, $stage, $from) = @_;
	router("SELECT streamforge.create_pipeline('$h', $parts, $windows, 5)");
	router("SELECT streamforge.create_sharded_pipeline('$s', $parts, $windows, 5)");
	single("SELECT streamforge.create_pipeline('$_', $parts, $windows, 5)") for ($h, $s);
	for my $p ($h, $s)
	{
		same("SELECT count(*) FROM streamforge.ingest('$p', 'a', 0, 'x0', 'a1', 1, 4)",
			"$stage $p: ingest");
		same(batch($p, $from, 60, $from), "$stage $p: ingest_batch across partitions");
		same("SELECT count(*) FROM streamforge.advance('$p', '$_', 90)", "$stage $p: advance $_")
		  for qw(a b c d);
		same(batch($p, $from + 60, 40, $from), "$stage $p: a second batch, with late events");
		same("SELECT key, window_name, window_start, window_end, count, sum, min, max "
			  . "FROM streamforge.visible('$p') ORDER BY 1, 2, 3",
			"$stage $p: visible");
		same("SELECT key, window_name, window_start, count "
			  . "FROM streamforge.live('$p') ORDER BY 1, 2, 3",
			"$stage $p: live");
		same("SELECT event_id, event_time FROM streamforge.late_events('$p') ORDER BY 1",
			"$stage $p: late_events");
		same("SELECT streamforge.watermark('$p')", "$stage $p: watermark");
		same("SELECT partition, consumed_offset FROM streamforge.partitions('$p') ORDER BY 1",
			"$stage $p: partitions");
	}
	# checkpoint and restore of the pipeline placed by hash, into a new one
	for my $q ("SELECT streamforge.create_pipeline('${h}_r', $parts, $windows, 5)",
		"SELECT streamforge.restore('${h}_r', streamforge.checkpoint('$h'))")
	{
		router($q);
		single($q);
	}
	same("SELECT key, window_name, window_start, count FROM streamforge.live('${h}_r') ORDER BY 1, 2, 3",
		"$stage ${h}_r: restored from a checkpoint");
}

workload('h1', 's1', 'router 0.3.0', 0);

$node->safe_psql('router', 'ALTER EXTENSION streamforge_proxy UPDATE');
is(router(q{SELECT extversion FROM pg_extension WHERE extname = 'streamforge_proxy'}),
	'0.4.0', 'the router is updated');

# the pipelines of the first stage, through the updated router
for my $p (qw(h1 s1))
{
	same(batch($p, 100, 32, 0), "updated router, $p: more events");
	same("SELECT key, window_name, window_start, window_end, count, sum "
		  . "FROM streamforge.visible('$p') ORDER BY 1, 2, 3",
		"updated router, $p: visible");
}
workload('h2', 's2', 'router 0.4.0', 200);

done_testing();
