# Crash safety (docs/semantics.md "Transactions"): a backend killed with SIGKILL in the
# middle of a transaction, and a server stopped with "-m immediate", lose
# exactly the uncommitted work.  A consumer that resumes from its committed
# source offsets (the partitions' consumed_offset), re-delivering a few
# events it had already delivered, ends with exactly the changes, late
# events and state of an uninterrupted run.
#
# The workload and the crashing consumer are CrashRounds.pm's (shared with
# 021_crash_parallel.pl): here each round's deliveries on a partition are one
# ingest_batch, whose returned changes make the logs compared.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use CrashRounds;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
# the test framework turns this off; a killed backend must not end the server
$node->append_conf('postgresql.conf', 'restart_after_crash = on');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION streamforge');

for my $p ('ref', 'crash')
{
	$node->safe_psql('postgres',
		"SELECT streamforge.create_pipeline('$p', ARRAY['a', 'b'], "
		  . "ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 10), "
		  . "streamforge.session('s', 5)], 2)");
}

my $batch = sub {
	my ($p, $d) = @_;
	return "SELECT * FROM streamforge.ingest_batch('$p', ARRAY["
	  . join(', ', @$d) . "]);";
};
my $rounds = CrashRounds->new(
	node => $node,
	delivery => sub {
		my ($part, $offset, $ev) = @_;
		return "ROW('$part', $offset, '$ev->[0]', '$ev->[1]', "
		  . "$ev->[2], $ev->[3])::streamforge.delivery";
	},
	deliver => $batch,
	report => sub {
		my ($p, $rep) = @_;
		return $rep->[0] eq 'advance'
		  ? "SELECT * FROM streamforge.advance('$p', '$rep->[1]', $rep->[2]);"
		  : "SELECT * FROM streamforge.mark_idle('$p', '$rep->[1]');";
	},
	redeliver => sub { return ($batch->(@_), '') });

# --- the uninterrupted run ---

my $ref_log = join("\n", grep { $_ ne '' } $rounds->run_reference);
ok(scalar(split /\n/, $ref_log) > 50, 'the reference run emits changes');
ok( $node->safe_psql('postgres',
		"SELECT count(*) > 0 FROM streamforge.late_events('ref')") eq 't',
	'the reference run has late events');

# --- the crashing consumer ---

my $crash_log = join("\n", grep { $_ ne '' } $rounds->run_crashes);
is($crash_log, $ref_log,
	'the committed changes equal those of the uninterrupted run');
is($rounds->state_of('crash'), $rounds->state_of('ref'),
	'the final state equals that of the uninterrupted run');
is( $node->safe_psql(
		'postgres',
		"SELECT streamforge.checkpoint('crash') = streamforge.checkpoint('ref')"
	),
	't',
	'the checkpoints are identical');
$rounds->check_compacted_and_replayed;

$node->stop;
done_testing();
