# Journal positions with several writers, random compaction thresholds and
# restores (issue 11, item 2).  Compaction and restore start a new journal
# epoch; every backend that follows the pipeline must catch up on exactly
# the rows written since it last looked, whoever wrote them.
#
# Phase 1 interleaves, at random, write calls (committed, rolled back, or
# partly rolled back to a savepoint), restores and reads of four sessions on
# pipeline "st", each session with its own random compaction threshold.
# Every committed call is also made, by one session that never compacts, on
# pipeline "ref" with the same definition: each call's returned changes and,
# after every step, every session's view of "st" must equal "ref" (offset
# replays excepted, since restore resets that counter).
#
# Phase 2 runs four writers at once on disjoint partitions, with small
# compaction thresholds and a restore-free reader, then checks every
# session's final view against "ref2", fed the same deliveries by one
# session.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $seed = $ENV{SF_SEED} // int(rand(1 << 30));
srand($seed);
note "seed $seed (set SF_SEED to repeat)";

my $node = PostgreSQL::Test::Cluster->new('journal_epochs');
$node->init;
$node->start;
$node->safe_psql(
	'postgres', "
CREATE EXTENSION streamforge;
SELECT streamforge.create_pipeline(n, ARRAY['a', 'b', 'c'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 4)], 5)
  FROM unnest(ARRAY['st', 'ref']) AS n;
");

my @thresholds = ('-1', '0', '1', '2', '64');
my @s;
for my $i (0 .. 3)
{
	my $b = $node->background_psql('postgres', timeout => 600);
	$b->query_safe('SET streamforge.compaction_threshold = '
		  . $thresholds[ int(rand(@thresholds)) ]);
	push @s, $b;
}
my $ref = $node->background_psql('postgres', timeout => 600);
$ref->query_safe('SET streamforge.compaction_threshold = -1');

# The whole observable state of a pipeline, as one string
sub view
{
	my ($sess, $p) = @_;
	return $sess->query_safe(
		"SELECT (SELECT string_agg(format('%s/%s/%s/%s', partition,
		        consumed_offset, progress, idle), ' ' ORDER BY partition)
		   FROM streamforge.partitions('$p'))
		 || ' | ' || (SELECT format('%s %s %s %s %s %s %s %s', deliveries,
		        accepted, duplicate_ids, late_events, changes_emitted,
		        live_buckets, visible_rows, idle_partitions)
		   FROM streamforge.stats('$p'))
		 || ' | ' || coalesce((SELECT string_agg(r::text, ' ' ORDER BY r::text)
		   FROM streamforge.live('$p') AS r), '')
		 || ' | ' || coalesce((SELECT string_agg(l::text, ' ' ORDER BY l::text)
		   FROM streamforge.late_events('$p') AS l), '')
		 || ' | ' || coalesce(streamforge.watermark('$p')::text, 'none')");
}

# The SQL of one random write call on pipeline $p (the same for st and ref)
my %next = (a => 0, b => 0, c => 0);
my $eid = 0;
my %events;
sub random_call
{
	my ($commit) = @_;
	my $part = (qw(a b c))[ int(rand(3)) ];
	my $r = rand();
	my $sql;
	if ($r < 0.6)
	{
		# a new event, a duplicate id at a new offset, or a replay
		my $off = $next{$part};
		my $id = 'e' . ($eid + 1);
		my ($t, $v) = (int(rand(200)), int(rand(100)));
		if ($r < 0.05 && $eid > 0)
		{
			# a duplicate: an earlier committed event at a new offset
			$id = 'e' . int(rand($eid) + 1);
			($t, $v) = @{ $events{$id} };
		}
		$sql = sub {
			"SELECT string_agg(c::text, ' ' ORDER BY c.seq) FROM
			   streamforge.ingest('$_[0]', '$part', $off, '$id', 'k'
			   || ($t % 3), $t, $v) AS c";
		};
		if ($commit)
		{
			$next{$part}++;
			if (!$events{$id})
			{
				$events{$id} = [ $t, $v ];
				$eid++;
			}
		}
	}
	elsif ($r < 0.9)
	{
		my $progress = int(rand(220));
		$sql = sub {
			"SELECT string_agg(c::text, ' ' ORDER BY c.seq) FROM
			   streamforge.advance('$_[0]', '$part', $progress) AS c";
		};
	}
	else
	{
		$sql = sub {
			"SELECT string_agg(c::text, ' ' ORDER BY c.seq) FROM
			   streamforge.mark_idle('$_[0]', '$part') AS c";
		};
	}
	return $sql;
}

my ($calls, $restores, $rollbacks, $mismatch) = (0, 0, 0, 0);
for my $step (1 .. 600)
{
	my $w = $s[ int(rand(@s)) ];
	my $r = rand();
	if ($r < 0.05)
	{
		# a restore of the current state: a new journal epoch
		$w->query_safe(
			"SELECT streamforge.restore('st', streamforge.checkpoint('st'))");
		$restores++;
	}
	elsif ($r < 0.1)
	{
		$w->query_safe('SET streamforge.compaction_threshold = '
			  . $thresholds[ int(rand(@thresholds)) ]);
	}
	elsif ($r < 0.2)
	{
		# rolled back: a call, or a compaction, that never happened
		my $sql = random_call(0) or next;
		$w->query_safe('BEGIN');
		$w->query_safe('SET LOCAL streamforge.compaction_threshold = 0');
		$w->query_safe($sql->('st'));
		$w->query_safe('ROLLBACK');
		$rollbacks++;
	}
	elsif ($r < 0.25)
	{
		# a call rolled back to a savepoint, then a committed one
		my $bad = random_call(0) or next;
		$w->query_safe('BEGIN');
		$w->query_safe('SAVEPOINT sp');
		$w->query_safe($bad->('st'));
		$w->query_safe('ROLLBACK TO SAVEPOINT sp');
		my $good = random_call(1) or do { $w->query_safe('COMMIT'); next };
		my $got = $w->query_safe($good->('st'));
		$w->query_safe('COMMIT');
		my $want = $ref->query_safe($good->('ref'));
		$mismatch++, diag("step $step: changes $got, expected $want")
		  if $got ne $want;
		$calls++;
	}
	else
	{
		my $sql = random_call(1) or next;
		my $got = $w->query_safe($sql->('st'));
		my $want = $ref->query_safe($sql->('ref'));
		$mismatch++, diag("step $step: changes $got, expected $want")
		  if $got ne $want;
		$calls++;
	}

	my $want = view($ref, 'ref');
	for my $i (0 .. $#s)
	{
		my $got = view($s[$i], 'st');
		$mismatch++, diag("step $step, session $i: $got\n  expected $want")
		  if $got ne $want;
	}
	last if $mismatch > 5;
}
note "$calls calls, $restores restores, $rollbacks rolled back";
cmp_ok($restores, '>', 0, 'restores were made');
is($mismatch, 0,
	'every call returned, and every session saw, what one writer sees');
my $snapshots = $node->safe_psql('postgres',
	"SELECT snapshot_version > 0 FROM streamforge.pipeline WHERE name = 'st'");
is($snapshots, 't', 'the pipeline was compacted or restored');

# Phase 2: four concurrent writers on disjoint partitions
$node->safe_psql(
	'postgres', "
SELECT streamforge.create_pipeline(n, ARRAY['w0', 'w1', 'w2', 'w3'],
    ARRAY[streamforge.fixed('f', 10)], 1000000)
  FROM unnest(ARRAY['cc', 'ref2']) AS n;
");
my @running;
for my $i (0 .. 3)
{
	my $b = $s[$i];
	$b->query_safe('SET streamforge.compaction_threshold = '
		  . (0, 1, 2, -1)[$i]);
	$b->query_until(
		qr/started/, "\\echo started
DO \$\$
BEGIN
    FOR i IN 0 .. 399 LOOP
        PERFORM streamforge.ingest('cc', 'w$i', i, 'w$i-' || i, 'k' || (i % 7),
                                   (i * 37 + $i) % 1000, i);
        IF i % 50 = 25 THEN
            PERFORM streamforge.partitions('cc');
        END IF;
    END LOOP;
END
\$\$;
");
	push @running, $b;
}
# wait for every writer (a query after the DO returns when it finished)
$_->query_safe('SELECT 1') for @running;
$ref->query_safe(
	"SELECT count(*) FROM generate_series(0, 3) AS w, generate_series(0, 399) AS i,
	   LATERAL streamforge.ingest('ref2', 'w' || w, i, 'w' || w || '-' || i,
	     'k' || (i % 7), (i * 37 + w) % 1000, i)");

my $want2 = $ref->query_safe(
	"SELECT string_agg(r::text, ' ' ORDER BY r::text) FROM streamforge.live('ref2') r");
my $bad2 = 0;
for my $i (0 .. 3)
{
	my $got = $s[$i]->query_safe(
		"SELECT string_agg(r::text, ' ' ORDER BY r::text) FROM streamforge.live('cc') r");
	my $offs = $s[$i]->query_safe(
		"SELECT string_agg(consumed_offset::text, ',' ORDER BY partition)
		   FROM streamforge.partitions('cc')");
	$bad2++, diag("session $i: offsets $offs") if $offs ne '399,399,399,399';
	$bad2++, diag("session $i: live differs") if $got ne $want2;
}
is($bad2, 0, 'after concurrent writers every session sees every delivery once');

$_->quit for @s, $ref;
$node->stop;
done_testing();
