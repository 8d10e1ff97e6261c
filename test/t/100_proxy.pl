# Scale-out with streamforge_proxy on PL/Proxy (docs/scale-out.md): three
# data nodes and a router, each its own PostgreSQL instance.
#
# Cluster "streamforge": 4 shards (a power of two, PL/Proxy's rule) on 3
# nodes: node1 holds the databases sf0 and sf3, node2 sf1, node3 sf2.
# node1 also holds the database "single", where every workload runs
# directly on one streamforge, as the reference.
#
# (b) A pipeline sharded by source partition receives a seeded workload
#     whose keys each stay on one partition; after every round, visible(),
#     late_events() and watermark() through the router equal the single
#     node's.  node2 is stopped with -m immediate mid-stream: calls for the
#     partitions of shard 1 fail with 08006 naming the shard, the other
#     partitions go on; after a restart the consumer resumes from
#     partitions() through the router and converges exactly.
# (a) Pipelines placed by the hash of their name return exactly the changes
#     (seq included) of the single node, live only on their shard, and keep
#     working while another shard is down.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my @data;
for my $i (1 .. 3)
{
	my $n = PostgreSQL::Test::Cluster->new("data$i");
	$n->init;
	$n->start;
	push @data, $n;
}
my ($node1, $node2, $node3) = @data;
my %shard_node = (0 => $node1, 1 => $node2, 2 => $node3, 3 => $node1);
for my $s (0 .. 3)
{
	$shard_node{$s}->safe_psql('postgres', "CREATE DATABASE sf$s");
	$shard_node{$s}->safe_psql("sf$s", 'CREATE EXTENSION streamforge');
}
$node1->safe_psql('postgres', 'CREATE DATABASE single');
$node1->safe_psql('single', 'CREATE EXTENSION streamforge');

my $router = PostgreSQL::Test::Cluster->new('router');
# plproxy must be in the tree under test (scripts/test.sh copies the system
# tree after installing postgresql-15-plproxy)
my $sharedir = $router->config_data('--sharedir');
BAIL_OUT("plproxy is not installed in $sharedir/extension (postgresql-15-plproxy)")
  unless -f "$sharedir/extension/plproxy.control";
$router->init;
$router->start;
my $servers = join(",\n",
	map {
		my $n = $shard_node{$_};
		"p$_ 'host=" . $n->host . ' port=' . $n->port . " dbname=sf$_'"
	} 0 .. 3);
$router->safe_psql(
	'postgres', qq{
CREATE EXTENSION plproxy;
CREATE EXTENSION streamforge_proxy;
CREATE SERVER streamforge FOREIGN DATA WRAPPER plproxy OPTIONS (
$servers);
CREATE USER MAPPING FOR PUBLIC SERVER streamforge;
});
is($router->safe_psql('postgres', 'SELECT streamforge.shard_count()'),
	'4', 'the router sees the 4 shards of the SQL/MED server');

sub router { return $router->safe_psql('postgres', $_[0]); }
sub single { return $node1->safe_psql('single', $_[0]); }

# A call through the router that must fail: returns its stderr.
sub router_fails
{
	my ($sql) = @_;
	my ($ret, $out, $err) =
	  $router->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	return $ret != 0 ? $err : "succeeded unexpectedly: $out";
}

my $windows =
  "ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 10), "
  . "streamforge.session('s', 5)]";
my @parts = map { "p$_" } 0 .. 7;
my $parts_sql = 'ARRAY[' . join(', ', map { "'$_'" } @parts) . ']';

# --- placement of the partitions -------------------------------------

my %shard_of;
for my $p (@parts)
{
	$shard_of{$p} = router("SELECT streamforge.shard_of('$p')");
}
my %owned;
$owned{ $shard_of{$_} }++ for @parts;
is(scalar(keys %owned), 4, 'the 8 partitions are spread over all 4 shards');

# --- (b) one pipeline sharded by partition ----------------------------

router("SELECT streamforge.create_sharded_pipeline('shp', $parts_sql, $windows, 3)");
single("SELECT streamforge.create_pipeline('shp', $parts_sql, $windows, 3)");
for my $s (0 .. 3)
{
	is( $shard_node{$s}->safe_psql("sf$s",
			"SELECT count(*) FROM streamforge.partitions('shp')"),
		'8',
		"shard $s holds the sharded pipeline with all 8 partitions");
}
like(
	router_fails("SELECT streamforge.create_sharded_pipeline('shp', $parts_sql, $windows, 3)"),
	qr/42710/, 'a second create of the sharded pipeline is 42710');

# The workload: deterministic pseudo-random rounds.  Key k<i> always comes
# from partition p<i mod 8> (as with Kafka's default partitioner); a
# duplicate re-delivers an earlier event of the same partition.
my $seed = 20261130;
sub rnd
{
	my $n = shift;
	$seed = ($seed * 1103515245 + 12345) % 2147483648;
	return int($seed / 65536) % $n;
}

my %log;    # partition -> [ delivery SQL row at offset 0, 1, ... ]
my %events; # partition -> [ [id, key, time, value], ... ]
my @rounds;
my $clock = 0;
my $nevents = 0;
for my $r (0 .. 29)
{
	my %batch;
	$clock += 3 + rnd(5);
	for my $pi (0 .. 7)
	{
		my $p = $parts[$pi];
		my @d;
		for (1 .. rnd(4))
		{
			my $ev;
			if ($events{$p} && rnd(8) == 0)
			{
				$ev = $events{$p}[ rnd(scalar @{ $events{$p} }) ];
			}
			else
			{
				my $key = 'k' . ($pi + 8 * rnd(2));
				my $time = $clock - 8 + rnd(10) - (rnd(8) == 0 ? 30 : 0);
				$ev = [ 'e' . $nevents++, $key, $time, rnd(100) - 50 ];
				push @{ $events{$p} }, $ev;
			}
			my $off = scalar @{ $log{$p} // [] };
			my $row = "('$p', $off, '$ev->[0]', '$ev->[1]', $ev->[2], $ev->[3])";
			push @{ $log{$p} }, $row;
			push @d, $off;
		}
		$batch{$p} = \@d;
	}
	my %last = map { $_ => $#{ $log{$_} // [] } } @parts;
	my @reports;
	for my $p (@parts)
	{
		if ($r == 29 || rnd(12) == 0)
		{
			push @reports, "SELECT count(*) FROM streamforge.mark_idle('shp', '$p')";
		}
		else
		{
			my $t = $clock - rnd(6);
			push @reports, "SELECT count(*) FROM streamforge.advance('shp', '$p', $t)";
		}
	}
	push @rounds, { batch => \%batch, last => \%last, reports => \@reports };
}

sub batch_sql
{
	my ($p, @offsets) = @_;
	return undef unless @offsets;
	return "SELECT count(*) FROM streamforge.ingest_batch('shp', ARRAY["
	  . join(', ', map { $log{$p}[$_] } @offsets)
	  . ']::streamforge.delivery[])';
}

# Even rounds deliver one batch per partition; odd rounds one batch that
# spans every partition (split by shard in the router).
sub deliveries_sql
{
	my ($r) = @_;
	my $b = $rounds[$r]{batch};
	if ($r % 2 == 0)
	{
		return grep { defined } map { batch_sql($_, @{ $b->{$_} }) } @parts;
	}
	my @rows = map { my $p = $_; map { $log{$p}[$_] } @{ $b->{$p} } } @parts;
	return () unless @rows;
	return ("SELECT count(*) FROM streamforge.ingest_batch('shp', ARRAY["
		  . join(', ', @rows) . ']::streamforge.delivery[])');
}

my $visible_seen = 0;
sub compare
{
	my ($what) = @_;
	my $late =
	  "SELECT partition, source_offset, event_id, key, event_time, value, watermark "
	  . "FROM streamforge.late_events('shp') ORDER BY partition COLLATE \"C\", source_offset";
	my $visible = router("SELECT * FROM streamforge.visible('shp')");
	is($visible, single("SELECT * FROM streamforge.visible('shp')"),
		"$what: visible rows as on one node");
	$visible_seen += scalar(grep { /\|/ } split /\n/, $visible);
	is(router($late), single($late), "$what: late events as on one node");
	is(router("SELECT streamforge.watermark('shp')"),
		single("SELECT streamforge.watermark('shp')"),
		"$what: watermark as on one node");
}

# Round $refused: a batch spanning shards in which one shard's part is
# refused (a gap at the first delivery of one partition: SF001).  The caller
# gets the shard's SQLSTATE; the other shards' parts are committed; the
# same batch, corrected and sent again, converges.
sub refused_batch
{
	my ($r) = @_;
	my $b = $rounds[$r]{batch};
	my @with = grep { @{ $b->{$_} } } @parts;
	my ($bad) = grep { my $p = $_; grep { $shard_of{$_} != $shard_of{$p} } @with } @with;
	die "round $r has no batch spanning two shards" unless defined $bad;
	my @rows;
	for my $p (@parts)
	{
		for my $o (@{ $b->{$p} })
		{
			my $row = $log{$p}[$o];
			$row =~ s/^\('$p', $o,/('$p', @{[$o + 1]},/ if $p eq $bad && $o == $b->{$p}[0];
			push @rows, $row;
		}
	}
	return ($bad, "SELECT count(*) FROM streamforge.ingest_batch('shp', ARRAY["
		  . join(', ', @rows) . ']::streamforge.delivery[])');
}

my $outage = 17;
my $refused = 21;
for my $r (0 .. $#rounds)
{
	my @deliveries = deliveries_sql($r);
	single(join(";\n", @deliveries, @{ $rounds[$r]{reports} }));
	if ($r == $refused)
	{
		my ($bad, $sql) = refused_batch($r);
		my %before = map { split /\|/ } split /\n/,
		  router("SELECT partition, consumed_offset FROM streamforge.partitions('shp')");
		like(router_fails($sql), qr/SF001: .*REMOTE ERROR: +offset conflict on partition "$bad"/,
			"round $r: a batch spanning shards, refused by the shard of $bad: the caller gets SF001");
		my %after = map { split /\|/ } split /\n/,
		  router("SELECT partition, consumed_offset FROM streamforge.partitions('shp')");
		my $b = $rounds[$r]{batch};
		my @applied = grep { @{ $b->{$_} } && $after{$_} == $b->{$_}[-1] } @parts;
		my @kept = grep { $after{$_} == $before{$_} } @parts;
		ok( (grep { $shard_of{$_} != $shard_of{$bad} } @applied)
			  && !(grep { $shard_of{$_} == $shard_of{$bad} && @{ $b->{$_} } } @applied)
			  && (grep { $_ eq $bad } @kept),
			"round $r: the other shards applied their parts (@applied), the refusing shard none");
	}
	if ($r != $outage)
	{
		router(join(";\n", @deliveries, @{ $rounds[$r]{reports} }));
		compare("round $r");
		next;
	}

	# --- the outage: node2 (shard 1) stops mid-stream -----------------
	$node2->stop('immediate');
	my $b = $rounds[$r]{batch};
	my ($failed, $went_on) = (0, 0);
	for my $p (@parts)
	{
		my $sql = batch_sql($p, @{ $b->{$p} }) // next;
		if ($shard_of{$p} == 1)
		{
			like(router_fails($sql),
				qr/08006: could not reach shard 1 of cluster "streamforge"/,
				"round $r: the batch of $p (shard 1) fails with 08006 naming the shard");
			$failed++;
		}
		else
		{
			router($sql);
			$went_on++;
		}
	}
	ok($failed > 0 && $went_on > 0,
		"round $r: batches for shard 1 failed ($failed), the others went on ($went_on)");
	like(
		router_fails($rounds[$r]{reports}[0]),
		qr/08006: could not reach the shard in database "sf1"/,
		"round $r: a progress report, sent to every shard, fails naming the shard");
	like(router_fails("SELECT * FROM streamforge.visible('shp')"),
		qr/08006/, "round $r: reads of the sharded pipeline fail while a shard is down");

	# --- restart; the consumer resumes from partitions() ----------------
	$node2->start;
	my %consumed = map { split /\|/ } split /\n/,
	  router("SELECT partition, consumed_offset FROM streamforge.partitions('shp')");
	my @resume;
	for my $p (@parts)
	{
		my $last = $rounds[$r]{last}{$p};    # the source up to this round
		my $from = $consumed{$p} + 1;
		# re-deliver the offsets after the committed one, with one replay
		$from-- if $from > 0;
		my $sql = batch_sql($p, $from .. $last);
		push @resume, $sql if defined $sql;
	}
	ok(scalar(grep { /'p[0-9]'/ } @resume) > 0, "round $r: the consumer re-delivers");
	# The consumer rule after a failure (docs/scale-out.md): first
	# re-deliver every partition from partitions()' consumed_offset + 1,
	# then retry the failed progress report, then go on.  (Retrying the
	# report first would make the events shard 1 missed late there.)
	router(join(";\n", @resume, @{ $rounds[$r]{reports} }));
	compare("round $r, after the restart");
}

ok($visible_seen > 100, "the sharded pipeline's results were compared ($visible_seen visible rows)");
ok(router("SELECT count(*) FROM streamforge.late_events('shp')") > 5,
	'the sharded pipeline has late events');

# Every shard received only the deliveries of its own partitions.
for my $s (0 .. 3)
{
	my $mine = join(',', sort grep { $shard_of{$_} == $s } @parts);
	is( $shard_node{$s}->safe_psql(
			"sf$s",
			"SELECT string_agg(partition, ',' ORDER BY partition) "
			  . "FROM streamforge.partitions('shp') WHERE consumed_offset >= 0"),
		$mine,
		"shard $s consumed only its partitions ($mine)");
}
my $offsets = "SELECT string_agg(partition || ':' || consumed_offset, ',' ORDER BY partition COLLATE \"C\") "
  . "FROM streamforge.partitions('shp')";
is(router($offsets), single($offsets),
	'partitions(): consumed offsets as on one node');
is(router("SELECT accepted, late_events, live_buckets, visible_rows FROM streamforge.stats('shp')"),
	single("SELECT accepted, late_events, live_buckets, visible_rows FROM streamforge.stats('shp')"),
	'stats(): accepted, late, live and visible totals as on one node');

# --- (a) whole pipelines placed by the hash of their name --------------

my @placed = map { "pa$_" } 0 .. 7;
my %placed_on;
for my $pl (@placed)
{
	$placed_on{$pl} = router("SELECT streamforge.shard_of('$pl')");
	router("SELECT streamforge.create_pipeline('$pl', ARRAY['a', 'b'], $windows, 2)");
	single("SELECT streamforge.create_pipeline('$pl', ARRAY['a', 'b'], $windows, 2)");
}
my %used;
$used{ $placed_on{$_} }++ for @placed;
ok(scalar(keys %used) >= 3, 'the placed pipelines spread over at least 3 shards');
for my $pl (@placed[0 .. 1])
{
	for my $s (0 .. 3)
	{
		my ($ret) = $shard_node{$s}->psql("sf$s", "SELECT streamforge.watermark('$pl')");
		is($ret == 0 ? 1 : 0, $s == $placed_on{$pl} ? 1 : 0,
			"$pl exists on shard $s iff it is placed there");
	}
}

my $placed_changes = 0;
my $seq_changes =
  "seq, op, window_name, key, window_start, window_end, count, sum, min, max";
for my $r (0 .. 11)
{
	my $pl = $placed[ $r % 8 ];
	my $o = int($r / 8) * 3;
	my @calls = (
		"SELECT $seq_changes FROM streamforge.ingest_batch('$pl', ARRAY["
		  . join(', ',
			map { "('a', " . ($o + $_) . ", '$pl-$r-$_', 'k" . rnd(3) . "', " . (10 * $r + rnd(12)) . ', ' . rnd(9) . ')' }
			  0 .. 2)
		  . ']::streamforge.delivery[])',
		"SELECT $seq_changes FROM streamforge.ingest('$pl', 'b', " . int($r / 8) . ", 'b-$r', 'k1', " . (10 * $r - 5) . ', 7)',
		"SELECT $seq_changes FROM streamforge.advance('$pl', 'a', " . (10 * $r + 8) . ')',
		"SELECT $seq_changes FROM streamforge.advance('$pl', 'b', " . (10 * $r + 4) . ')');
	for my $c (@calls)
	{
		my $got = router($c);
		is($got, single($c), "placed $pl round $r: same changes as one node: " . substr($c, 0, 60));
		$placed_changes += scalar(grep { /\|/ } split /\n/, $got);
	}
	is(router("SELECT * FROM streamforge.visible('$pl')"),
		single("SELECT * FROM streamforge.visible('$pl')"),
		"placed $pl round $r: visible rows as on one node");
	my $late = "SELECT late_seq, partition, source_offset, event_id, key, event_time, value, watermark FROM streamforge.late_events('$pl')";
	is(router($late), single($late), "placed $pl round $r: late events as on one node");
	is(router("SELECT * FROM streamforge.partitions('$pl')"),
		single("SELECT * FROM streamforge.partitions('$pl')"),
		"placed $pl round $r: partitions as on one node");
}

# checkpoint, restore and inspect_checkpoint of a placed pipeline
my $ck = "SELECT encode(streamforge.checkpoint('pa0'), 'hex')";
is(router($ck), single($ck), 'checkpoint() of a placed pipeline: the bytes of one node');
router("SELECT streamforge.restore('pa1', decode('" . single("SELECT encode(streamforge.checkpoint('pa1'), 'hex')") . "', 'hex'))");
is(router("SELECT * FROM streamforge.visible('pa1')"), single("SELECT * FROM streamforge.visible('pa1')"),
	'restore() through the router: the placed pipeline has the restored state');
is(router("SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('pa2'))"),
	single("SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('pa2'))"),
	'inspect_checkpoint() through the router');

# checkpoint and restore of the sharded pipeline (issue 30): one document
# of every shard's checkpoint and the shard map; restore() brings every
# shard back to it, and refuses it for a pipeline of another shard map.
my $shp_visible = router("SELECT * FROM streamforge.visible('shp')");
my $shp_offsets = router("SELECT * FROM streamforge.partitions('shp')");
my $shp_ck = router("SELECT encode(streamforge.checkpoint('shp'), 'hex')");
is( router("SELECT d->>'format', d->>'shards', d->'shard_map'->>'p3', jsonb_array_length(d->'checkpoints') "
		  . "FROM (SELECT convert_from(decode('$shp_ck', 'hex'), 'UTF8')::jsonb d) x"),
	"streamforge_proxy sharded checkpoint|4|$shard_of{p3}|4",
	'checkpoint() of a sharded pipeline: one document with the shard map and 4 checkpoints');
router("SELECT count(*) FROM streamforge.ingest_batch('shp', ARRAY[('p0', "
	  . scalar(@{ $log{p0} }) . ", 'extra', 'k0', 1000, 5)]::streamforge.delivery[])");
isnt(router("SELECT * FROM streamforge.partitions('shp')"), $shp_offsets, 'a delivery after the checkpoint');
router("SELECT streamforge.restore('shp', decode('$shp_ck', 'hex'))");
is(router("SELECT * FROM streamforge.visible('shp')"), $shp_visible,
	'restore() of the sharded checkpoint: visible rows as at the checkpoint');
is(router("SELECT * FROM streamforge.partitions('shp')"), $shp_offsets,
	'restore() of the sharded checkpoint: every shard back at its offsets');
router("SELECT streamforge.create_sharded_pipeline('shp_other', ARRAY['p0', 'p1'], $windows, 3)");
like(router_fails("SELECT streamforge.restore('shp_other', decode('$shp_ck', 'hex'))"),
	qr/55000: the checkpoint is of another shard map/,
	'restore() refuses a sharded checkpoint of another shard map (55000)');
like(router_fails("SELECT streamforge.restore('shp', streamforge.checkpoint('pa0'))"),
	qr/22023: not a checkpoint of a sharded pipeline/,
	'restore() of a sharded pipeline refuses a single shard\'s checkpoint (22023)');
router("SELECT streamforge.drop_pipeline('shp_other')");

ok($placed_changes > 20, "the placed pipelines emitted changes ($placed_changes compared)");

# A shard down stops only the pipelines placed on it.
my ($on1) = grep { $placed_on{$_} == 1 } @placed;
my ($off1) = grep { $placed_on{$_} != 1 } @placed;
$node2->stop('immediate');
like(router_fails("SELECT * FROM streamforge.advance('$on1', 'a', 1000)"),
	qr/08006: could not reach shard 1 of cluster "streamforge"/,
	"$on1, placed on the stopped shard, fails with 08006");
is(router("SELECT count(*) >= 0 FROM streamforge.advance('$off1', 'a', 1000)"),
	't', "$off1, placed on another shard, goes on");
$node2->start;
is(router("SELECT streamforge.watermark('$on1') IS NOT NULL"), 't',
	"$on1 works again after the restart");

# --- create_pipeline's time_unit reaches the data nodes --------------------
router("SELECT streamforge.create_pipeline('tu', ARRAY['a'], $windows, time_unit => '1 second')");
router("SELECT streamforge.create_sharded_pipeline('tus', ARRAY['a'], $windows, time_unit => '1 ms')");
my $tu_shard = router("SELECT streamforge.shard_of('tu')");
is($shard_node{$tu_shard}->safe_psql("sf$tu_shard", "SELECT streamforge.time_unit('tu')"),
	'00:00:01', 'a placed pipeline gets its time_unit');
is(join(',', map { $shard_node{$_}->safe_psql("sf$_", "SELECT streamforge.time_unit('tus')") } 0 .. 3),
	join(',', ('00:00:00.001') x 4), 'a sharded pipeline gets its time_unit on every shard');

# --- and so does its retention ---------------------------------------------
router("SELECT streamforge.create_pipeline('tr', ARRAY['a'], $windows, 3, 50)");
router("SELECT streamforge.create_sharded_pipeline('trs', ARRAY['a'], $windows, retention => 70)");
my $tr_shard = router("SELECT streamforge.shard_of('tr')");
is($shard_node{$tr_shard}->safe_psql("sf$tr_shard",
		"SELECT (definition ->> 'lateness') || '/' || (definition ->> 'retention') FROM streamforge.pipeline WHERE name = 'tr'"),
	'3/50', 'a placed pipeline gets its lateness and retention');
is(join(',', map { $shard_node{$_}->safe_psql("sf$_",
		"SELECT definition ->> 'retention' FROM streamforge.pipeline WHERE name = 'trs'") } 0 .. 3),
	join(',', ('70') x 4), 'a sharded pipeline gets its retention on every shard');

# --- errors keep streamforge's SQLSTATEs through the router -------------
like(router_fails("SELECT * FROM streamforge.ingest(NULL, 'a', 0, 'x', 'k', 1, 1)"),
	qr/22004: pipeline must not be null/, 'a NULL pipeline is 22004');
like(router_fails("SELECT * FROM streamforge.ingest('shp', NULL, 0, 'x', 'k', 1, 1)"),
	qr/22004: partition must not be null/, 'a NULL partition of a sharded pipeline is 22004');
# The window constructors build their row in the router (generated from the
# node's, proxy/gen.pl); the shard that receives a window checks it, with
# streamforge's SQLSTATE, message and detail (0.3.0 checked it a second
# time in the router, in PL/pgSQL)
is(router("SELECT streamforge.fixed('f', 0)"), '(f,fixed,0,,)',
	'a window constructor builds its row in the router');
like(router_fails("SELECT streamforge.create_pipeline('badw', ARRAY['a'], ARRAY[streamforge.fixed('f', 0)])"),
	qr/22023: .*size of window "f" must be greater than zero\n.*DETAIL:  (?:Remote detail: )?The size given is 0\./,
	'create_pipeline: the shard checks the window like streamforge');
like(router_fails("SELECT streamforge.create_sharded_pipeline('badw', ARRAY['a'], ARRAY[streamforge.sliding('s', 10, 0)])"),
	qr/22023: .*step of window "s" must be greater than zero/, '... create_sharded_pipeline');
like(router_fails("SELECT streamforge.add_window('pa0', streamforge.session('g', -1))"),
	qr/22023: .*gap of window "g" must be greater than zero/, '... add_window');
like(router_fails("SELECT streamforge.create_pipeline('badw', ARRAY['a'], ARRAY[streamforge.sliding('s', 1000000, 1)])"),
	qr/22023: .*sliding window "s" puts each event into too many buckets/, '... its limits too');
like(router_fails("SELECT streamforge.create_pipeline('badw', ARRAY['a'], ARRAY[streamforge.fixed(NULL, 10)])"),
	qr/22004: .*window name must not be null/, '... and its NULLs');
is(router("SELECT count(*) FROM streamforge.sharded_pipelines WHERE pipeline = 'badw'")
	  . join('', map { $shard_node{$_}->safe_psql("sf$_", "SELECT count(*) FROM streamforge.pipeline_info WHERE name = 'badw'") } 0 .. 3),
	'00000', '... and nothing is created');
like(router_fails("SELECT streamforge.watermark('nosuch')"),
	qr/42704: .*pipeline "nosuch" does not exist/, 'an unknown pipeline is 42704');
like(router_fails("SELECT streamforge.create_pipeline('pa0', ARRAY['a'], $windows)"),
	qr/42710/, 'creating a placed pipeline twice is 42710');
like(router_fails("SELECT streamforge.create_pipeline('shp', ARRAY['a'], $windows)"),
	qr/42710: pipeline "shp" already exists/, 'a placed pipeline cannot take a sharded one\'s name');

# --- drop ----------------------------------------------------------------
router("SELECT streamforge.drop_pipeline('shp')");
is(router("SELECT count(*) FROM streamforge.sharded_pipelines WHERE pipeline = 'shp'"), '0',
	'drop_pipeline forgets the sharded pipeline');
for my $s (0 .. 3)
{
	my ($ret, $out, $err) =
	  $shard_node{$s}->psql("sf$s", "SELECT streamforge.watermark('shp')");
	like($err, qr/pipeline "shp" does not exist/,
		"the sharded pipeline is dropped on shard $s");
}

done_testing();
