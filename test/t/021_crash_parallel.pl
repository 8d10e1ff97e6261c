# Crash safety of a parallel pipeline (issue 46, build plan step 4; the
# pattern of 020_crash.pl): a backend killed with SIGKILL in the middle of a
# transaction, and a server stopped with "-m immediate", lose exactly the
# uncommitted work of a pipeline with writers => 'parallel', whose lane rows,
# head entry, outputs and compactions are written by the sequencer at
# COMMIT.  The reference is a serial pipeline with the same definition.  A consumer that resumes from its committed
# source offsets (the partitions' consumed_offset), re-delivering a few
# events it had already delivered, ends with exactly the changes, late
# events and state of an uninterrupted run.
#
# The workload is a fixed list of rounds; each round is one transaction:
# an ingest_batch on partition a, one on partition b, then a progress report
# (or idleness) per partition.  Round r is committed iff partition a consumed
# the last offset of round r's batch, which is how the consumer finds where
# to resume.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('crash_parallel');
$node->init;
# the test framework turns this off; a killed backend must not end the server
$node->append_conf('postgresql.conf', 'restart_after_crash = on');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION streamforge');

for my $p ('ref', 'crash')
{
	my $writers = $p eq 'crash' ? 'parallel' : 'serial';
	$node->safe_psql('postgres',
		"SELECT streamforge.create_pipeline('$p', ARRAY['a', 'b'], "
		  . "ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 10), "
		  . "streamforge.session('s', 5)], 2, writers => '$writers')");
	$node->safe_psql('postgres',
		"SELECT streamforge.configure_outputs('$p')");
}

# --- the workload: deterministic pseudo-random rounds ---

my $seed = 20261129;
sub rnd
{
	my $n = shift;
	$seed = ($seed * 1103515245 + 12345) % 2147483648;
	return int($seed / 65536) % $n;
}

my @rounds;
my %offset = (a => -1, b => -1);
my %progress = (a => 0, b => 0);
my @events;    # every event delivered so far: [id, key, time, value]
my $clock = 0;
for my $r (0 .. 29)
{
	my %batch;
	for my $part ('a', 'b')
	{
		my @d;
		my $n = $part eq 'a' ? 1 + rnd(4) : rnd(4);
		for (1 .. $n)
		{
			my $ev;
			if (@events && rnd(8) == 0)
			{
				# a duplicate of an earlier event, with its identity
				$ev = $events[ rnd(scalar @events) ];
			}
			else
			{
				$clock += rnd(4);
				my $time = $clock - 12 + rnd(16) - (rnd(10) == 0 ? 40 : 0);
				$ev = [ 'e' . scalar(@events), 'k' . rnd(3), $time, rnd(100) - 50 ];
				push @events, $ev;
			}
			$offset{$part}++;
			push @d, "'$part', $offset{$part}, '$ev->[0]', '$ev->[1]', "
			  . "$ev->[2], $ev->[3]";
		}
		$batch{$part} = \@d;
	}
	my @reports;
	for my $part ('a', 'b')
	{
		if ($part eq 'b' && $r % 9 == 4)
		{
			push @reports, ['mark_idle', $part];
		}
		else
		{
			$progress{$part} = $clock - 10 + rnd(6)
			  if $clock - 10 > $progress{$part};
			push @reports, ['advance', $part, $progress{$part}];
		}
	}
	push @rounds,
	  {
		a => $batch{a},
		b => $batch{b},
		last_a => $offset{a},
		reports => \@reports
	  };
}

# the statements of round $r on pipeline $p, or only its first $upto
sub round_sql
{
	my ($p, $r, $upto) = @_;
	my $round = $rounds[$r];
	my @stmts;
	for my $part ('a', 'b')
	{
		# one delivery per call: the count form, which both modes take
		push @stmts, "SELECT streamforge.ingest_count('$p', $_);"
		  for @{ $round->{$part} };
	}
	for my $rep (@{ $round->{reports} })
	{
		push @stmts,
		  $rep->[0] eq 'advance'
		  ? "SELECT count(*) >= 0 FROM streamforge.advance('$p', '$rep->[1]', $rep->[2]);"
		  : "SELECT count(*) >= 0 FROM streamforge.mark_idle('$p', '$rep->[1]');";
	}
	splice(@stmts, $upto) if defined $upto;
	return join("\n", @stmts);
}

# Run round $r in its own transaction in session $s; return its output.
# The crashing consumer compacts often, so that recovery also rebuilds from
# snapshots; the reference run never compacts.
sub run_round
{
	my ($s, $p, $r) = @_;
	$s->query_safe('SET streamforge.compaction_threshold = '
		  . ($p eq 'crash' ? '0' : '-1'));
	$s->query_safe('BEGIN');
	my $out = $s->query_safe(round_sql($p, $r));
	$s->query_safe('COMMIT');
	return $out;
}

# --- the uninterrupted run ---

my @ref_log;
my $s = $node->background_psql('postgres');
push @ref_log, run_round($s, 'ref', $_) for 0 .. $#rounds;
$s->quit;
ok( $node->safe_psql('postgres',
		"SELECT count(*) > 50 FROM streamforge.changelog WHERE pipeline = 'ref'") eq 't',
	'the reference run emits changes');
ok( $node->safe_psql('postgres',
		"SELECT count(*) > 0 FROM streamforge.late_events('ref')") eq 't',
	'the reference run has late events');

# --- the crashing consumer ---

# where the consumer resumes: the first round not committed
sub resume_round
{
	my $consumed = $node->safe_psql('postgres',
		"SELECT consumed_offset FROM streamforge.partitions('crash') "
		  . "WHERE partition = 'a'");
	my $r = 0;
	$r++ while $r < @rounds && $rounds[$r]{last_a} <= $consumed;
	return $r;
}

# Re-deliver the last events before round $r (already consumed): no-ops.
sub redeliver
{
	my ($r) = @_;
	return if $r == 0;
	my @again = @{ $rounds[ $r - 1 ]{a} };
	@again = @again[ -2 .. -1 ] if @again > 2;
	my $out = $node->safe_psql('postgres',
		"SELECT sum(n) FROM (VALUES "
		  . join(', ', map { "(streamforge.ingest_count('crash', $_))" } @again)
		  . ") AS v(n)");
	is($out, '0', "re-delivering before round $r accepts nothing");
}

sub state_of
{
	my $p = shift;
	return $node->safe_psql(
		'postgres', "
		SELECT 'c', seq, op, window_name, key, window_start, window_end, count,
		       sum, min, max FROM streamforge.changelog WHERE pipeline = '$p'
		 ORDER BY seq;
		SELECT 'o', late_seq, partition, source_offset, event_id, watermark
		  FROM streamforge.late_output WHERE pipeline = '$p' ORDER BY late_seq;
		SELECT 'p', * FROM streamforge.partitions('$p');
		SELECT 'l', * FROM streamforge.live('$p');
		SELECT 'v', * FROM streamforge.visible('$p');
		SELECT 'x', * FROM streamforge.late_events('$p');
		SELECT 'w', streamforge.watermark('$p');");
}

my @crash_log;
my $crash_state_before;

# rounds 0..9 committed, then round 10 half done when the backend is killed
$s = $node->background_psql('postgres');
push @crash_log, run_round($s, 'crash', $_) for 0 .. 9;
$crash_state_before = state_of('crash');
my $pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe('BEGIN');
my $lost = $s->query_safe(round_sql('crash', 10, 3));
isnt($lost, undef, 'round 10 ran in the doomed transaction');
kill 'KILL', $pid;
eval { $s->quit };
$node->poll_query_until('postgres', 'SELECT true')
  or die 'the server did not recover after SIGKILL';

is(state_of('crash'), $crash_state_before,
	'after SIGKILL the state is the last committed one');
my $r = resume_round();
is($r, 10, 'the consumer resumes at the first uncommitted round');
redeliver($r);

# rounds 10..19, then a transaction with round 20 partly done when the
# server stops in immediate mode
$s = $node->background_psql('postgres');
push @crash_log, run_round($s, 'crash', $_) for $r .. 19;
$crash_state_before = state_of('crash');
$s->query_safe('BEGIN');
$s->query_safe(round_sql('crash', 20, 2));
$node->stop('immediate');
eval { $s->quit };
$node->start;

is(state_of('crash'), $crash_state_before,
	'after an immediate stop the state is the last committed one');
$r = resume_round();
is($r, 20, 'the consumer resumes at round 20');
redeliver($r);

# a committed transaction survives an immediate stop right after COMMIT
$s = $node->background_psql('postgres');
push @crash_log, run_round($s, 'crash', $r);
$node->stop('immediate');
eval { $s->quit };
$node->start;
$r = resume_round();
is($r, 21, 'a commit just before an immediate stop is durable');
redeliver($r);

# the rest, each round in a new connection
for my $i ($r .. $#rounds)
{
	$s = $node->background_psql('postgres');
	push @crash_log, run_round($s, 'crash', $i);
	$s->quit;
}

is(state_of('crash'), state_of('ref'),
	'the final state and outputs (changelog with seq, late output) equal those of the uninterrupted run');
is( $node->safe_psql(
		'postgres',
		"SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('crash'))::jsonb "
		  . "#- '{definition,writers}' = "
		  . "streamforge.inspect_checkpoint(streamforge.checkpoint('ref'))::jsonb"
	),
	't',
	'the checkpoints are identical but for the writers key');
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(name || ':' || (snapshot_version > 0), ',' ORDER BY name) "
		  . "FROM streamforge.pipeline"),
	'crash:true,ref:false',
	'the crashing consumer compacted, the reference run did not');
is( $node->safe_psql(
		'postgres',
		"SELECT a.offset_replays > 0 AND b.offset_replays = 0 "
		  . "FROM streamforge.stats('crash') a, streamforge.stats('ref') b"),
	't',
	'only the crashing consumer replayed offsets');

$node->stop;
done_testing();
