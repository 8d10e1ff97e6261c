# Crash safety of a parallel pipeline (issue 46, build plan step 4; the
# pattern of 020_crash.pl, whose workload and crashing consumer this test
# shares through CrashRounds.pm): a backend killed with SIGKILL in the middle
# of a transaction, and a server stopped with "-m immediate", lose exactly
# the uncommitted work of a pipeline with writers => 'parallel', whose lane
# rows, head entry, outputs and compactions are written by the sequencer at
# COMMIT.  The reference is a serial pipeline with the same definition.  A
# consumer that resumes from its committed source offsets, re-delivering a
# few events it had already delivered, ends with exactly the changes (the
# changelog with seq), late events and state of an uninterrupted run.
#
# Write calls on a parallel pipeline return no rows (docs/design/
# parallel-writers.md §14), so each delivery is one call of the count form,
# which both modes take, and the outputs are compared through the changelog
# and late_output tables.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CrashRounds;

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

my $rounds = CrashRounds->new(
	node => $node,
	delivery => sub {
		my ($part, $offset, $ev) = @_;
		return "'$part', $offset, '$ev->[0]', '$ev->[1]', "
		  . "$ev->[2], $ev->[3]";
	},
	# one delivery per call: the count form, which both modes take
	deliver => sub {
		my ($p, $d) = @_;
		return map { "SELECT streamforge.ingest_count('$p', $_);" } @$d;
	},
	report => sub {
		my ($p, $rep) = @_;
		return $rep->[0] eq 'advance'
		  ? "SELECT count(*) >= 0 FROM streamforge.advance('$p', '$rep->[1]', $rep->[2]);"
		  : "SELECT count(*) >= 0 FROM streamforge.mark_idle('$p', '$rep->[1]');";
	},
	redeliver => sub {
		my ($p, $d) = @_;
		return (
			"SELECT sum(n) FROM (VALUES "
			  . join(', ', map { "(streamforge.ingest_count('$p', $_))" } @$d)
			  . ") AS v(n)",
			'0');
	},
	state => sub {
		my $p = shift;
		return "
		SELECT 'c', seq, op, window_name, key, window_start, window_end, count,
		       sum, min, max FROM streamforge.changelog WHERE pipeline = '$p'
		 ORDER BY seq;
		SELECT 'o', late_seq, partition, source_offset, event_id, watermark
		  FROM streamforge.late_output WHERE pipeline = '$p' ORDER BY late_seq;";
	});

# --- the uninterrupted run ---

$rounds->run_reference;
ok( $node->safe_psql('postgres',
		"SELECT count(*) > 50 FROM streamforge.changelog WHERE pipeline = 'ref'") eq 't',
	'the reference run emits changes');
ok( $node->safe_psql('postgres',
		"SELECT count(*) > 0 FROM streamforge.late_events('ref')") eq 't',
	'the reference run has late events');

# --- the crashing consumer ---

$rounds->run_crashes;
is($rounds->state_of('crash'), $rounds->state_of('ref'),
	'the final state and outputs (changelog with seq, late output) equal those of the uninterrupted run');
is( $node->safe_psql(
		'postgres',
		"SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('crash'))::jsonb "
		  . "#- '{definition,writers}' = "
		  . "streamforge.inspect_checkpoint(streamforge.checkpoint('ref'))::jsonb"
	),
	't',
	'the checkpoints are identical but for the writers key');
$rounds->check_compacted_and_replayed;

$node->stop;
done_testing();
