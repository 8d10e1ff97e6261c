# Durable outputs survive crashes exactly like the state (docs/outputs.md):
# after "pg_ctl stop -m immediate" between calls, and with a transaction
# open at the crash, the changelog, results and late output of a pipeline
# agree with its restored state, hold exactly the committed calls, and go
# on without a gap.  A reference pipeline that runs the same committed
# calls without crashing ends with the same outputs, row for row.
#
# The same for a parallel pipeline (issue 46, build plan step 6; its
# outputs are written at commit by the sequencer), fed the same batches by
# multi-row inserts into its attached table (the array forms that return
# rows are refused on a parallel pipeline): with a transaction of its own
# open at crash 1, its outputs agree with its state and equal the
# reference's, seq for seq.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('sink_crash');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION streamforge');

for my $p ('ref', 'crash', 'par')
{
	my $writers = $p eq 'par' ? 'parallel' : 'serial';
	$node->safe_psql(
		'postgres',
		"SELECT streamforge.create_pipeline('$p', ARRAY['a', 'b'], "
		  . "ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 10), "
		  . "streamforge.session('s', 5)], 3, writers => '$writers'); "
		  . "SELECT streamforge.configure_outputs('$p')");
}
$node->safe_psql(
	'postgres', qq{
CREATE TABLE src_par (eid text, part text, k text, t bigint, v bigint);
SELECT streamforge.attach('par', 'src_par'::regclass, event_id => 'eid', key => 'k',
                          event_time => 't', value => 'v', partition => 'part')});

# --- a deterministic pseudo-random workload: one transaction per round ---
my $seed = 6;
sub rnd
{
	my $n = shift;
	$seed = ($seed * 1103515245 + 12345) % 2147483648;
	return int($seed / 65536) % $n;
}

my @rounds;
my @prounds;    # the same calls for par
my %offset = (a => -1, b => -1);
my $clock = 0;
for my $r (0 .. 39)
{
	my @calls;
	my @pcalls;
	for my $part ('a', 'b')
	{
		my @d;
		my @rows;
		for (1 .. 1 + rnd(5))
		{
			$clock += rnd(3);
			my $t = $clock - rnd(12) - (rnd(8) == 0 ? 30 : 0);
			$offset{$part}++;
			my $k = rnd(3);
			my $v = rnd(200) - 100;
			push @d,
			  "ROW('$part', $offset{$part}, 'e$part$offset{$part}', 'k$k', "
			  . "$t, $v)::streamforge.delivery";
			# the attached table takes the partition's next offset: the same
			push @rows, "('e$part$offset{$part}', '$part', 'k$k', $t, $v)";
		}
		push @calls,
		  "SELECT count(*) FROM streamforge.ingest_batch('%p', ARRAY["
		  . join(', ', @d) . "])";
		push @pcalls, "INSERT INTO src_par VALUES " . join(', ', @rows);
	}
	for my $part ('a', 'b')
	{
		push @calls,
		  "SELECT count(*) FROM streamforge.advance('%p', '$part', "
		  . ($clock - rnd(4)) . ")";
		push @pcalls, $calls[-1];
	}
	push @rounds, \@calls;
	push @prounds, \@pcalls;
}

sub round_sql
{
	my ($r, $p) = @_;
	my $calls = $p eq 'par' ? $prounds[$r] : $rounds[$r];
	return join(";\n", map { (my $s = $_) =~ s/%p/$p/g; $s } @{$calls})
	  . ";\n";
}

sub run_round
{
	my ($r, $p) = @_;
	$node->safe_psql('postgres', "BEGIN;\n" . round_sql($r, $p) . "COMMIT;");
}

# The outputs of pipeline $p agree with its state.
sub check_outputs
{
	my ($p, $what) = @_;

	is( $node->safe_psql(
			'postgres',
			"SELECT count(*) = (streamforge.stats('$p')).changes_emitted "
			  . "AND count(*) = coalesce(max(seq), 0) "
			  . "AND coalesce(min(seq), 1) = 1 "
			  . "FROM streamforge.changelog WHERE pipeline = '$p'"),
		't',
		"$what: changelog seq is 1 .. the pipeline's seq, without a gap");
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(*)
  FROM (SELECT DISTINCT ON (window_name, key, window_start, window_end) *
          FROM streamforge.changelog WHERE pipeline = '$p'
         ORDER BY window_name, key, window_start, window_end, seq DESC) AS l
  FULL JOIN (SELECT * FROM streamforge.results WHERE pipeline = '$p') AS r
    ON (l.window_name, l.key, l.window_start, l.window_end)
     = (r.window_name, r.key, r.window_start, r.window_end)
 WHERE (l.op = 'upsert') IS DISTINCT FROM (r.pipeline IS NOT NULL)
    OR (l.op = 'upsert'
        AND (l.count, l.sum, l.min, l.max, l.seq)
            IS DISTINCT FROM (r.count, r.sum, r.min, r.max, r.seq))}),
		'0',
		"$what: results are the changelog applied");
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(*)
  FROM streamforge.visible('$p') AS v
  LEFT JOIN streamforge.results AS r
    ON r.pipeline = '$p'
   AND (v.window_name, v.key, v.window_start, v.window_end, v.count, v.sum, v.min, v.max)
     = (r.window_name, r.key, r.window_start, r.window_end, r.count, r.sum, r.min, r.max)
 WHERE r.pipeline IS NULL}),
		'0',
		"$what: every visible row is in the results");
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(*)
  FROM streamforge.late_events('$p') AS e
  FULL JOIN (SELECT * FROM streamforge.late_output WHERE pipeline = '$p') AS l
    ON l.late_seq = e.late_seq
 WHERE (e.partition, e.source_offset, e.event_id, e.key, e.event_time, e.value, e.watermark)
       IS DISTINCT FROM
       (l.partition, l.source_offset, l.event_id, l.key, l.event_time, l.value, l.watermark)}),
		'0',
		"$what: the late output equals late_events()");
}

# The outputs of crash and par are the reference's.
sub check_same
{
	my $what = shift;
	my %dump;
	for my $p ('ref', 'crash', 'par')
	{
		$dump{$p} = $node->safe_psql(
			'postgres', qq{
SELECT 'c', seq, op, window_name, key, window_start, window_end, count, sum, min, max
  FROM streamforge.changelog WHERE pipeline = '$p'
UNION ALL
SELECT 'r', seq, '', window_name, key, window_start, window_end, count, sum, min, max
  FROM streamforge.results WHERE pipeline = '$p'
UNION ALL
SELECT 'l', late_seq, partition, event_id, key, source_offset, event_time, value, watermark, NULL, NULL
  FROM streamforge.late_output WHERE pipeline = '$p'
ORDER BY 1, 2, 4, 5, 6});
	}
	ok(length($dump{ref}) > 0, "$what: the reference has outputs");
	is($dump{crash}, $dump{ref}, "$what: outputs equal the reference's");
	is($dump{par}, $dump{ref},
		"$what: the parallel pipeline's outputs equal the reference's");
}

for my $r (0 .. 14)
{
	run_round($r, $_) for ('ref', 'crash', 'par');
}
my $seq_before = $node->safe_psql('postgres',
	"SELECT max(seq) FROM streamforge.changelog WHERE pipeline = 'crash'");
cmp_ok($seq_before, '>', 0, 'the workload made changes');

# Crash 1: a transaction with round 15 is open (its calls done, not
# committed) when the server stops without a shutdown checkpoint.
my $open = $node->background_psql('postgres');
$open->query_safe('BEGIN');
$open->query_safe(round_sql(15, 'crash'));
cmp_ok(
	$open->query_safe(
		"SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'crash'"),
	'>', $seq_before,
	'the open transaction wrote to the changelog');
# and one of par: its outputs are written at its commit, so none yet
my $popen = $node->background_psql('postgres');
$popen->query_safe('BEGIN');
$popen->query_safe(round_sql(15, 'par'));
is( $popen->query_safe(
		"SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'par'"),
	$node->safe_psql('postgres',
		"SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'par'"),
	'the open transaction of the parallel pipeline wrote no outputs yet');
$node->stop('immediate');
$open->{run}->kill_kill;
$popen->{run}->kill_kill;
$node->start;

is($node->safe_psql('postgres',
		"SELECT max(seq) FROM streamforge.changelog WHERE pipeline = 'crash'"),
	$seq_before, 'after crash 1: the uncommitted changes are gone');
is($node->safe_psql('postgres',
		"SELECT max(seq) FROM streamforge.changelog WHERE pipeline = 'par'"),
	$seq_before, 'after crash 1: the parallel pipeline\'s changes are those of crash');
check_outputs($_, 'after crash 1') for ('crash', 'par');
check_same('after crash 1');

# Go on: the next change continues the seq without a gap.
for my $r (15 .. 29)
{
	run_round($r, $_) for ('ref', 'crash', 'par');
}
check_outputs($_, 'after more rounds') for ('crash', 'par');

# Crash 2: between calls, nothing open.
$node->stop('immediate');
$node->start;
check_outputs($_, 'after crash 2') for ('crash', 'par');
check_same('after crash 2');

# Finish, closing every window, and compare once more.
for my $r (30 .. 39)
{
	run_round($r, $_) for ('ref', 'crash', 'par');
}
for my $p ('ref', 'crash', 'par')
{
	$node->safe_psql('postgres',
		"SELECT count(*) FROM streamforge.advance('$p', 'a', 100000); "
		  . "SELECT count(*) FROM streamforge.advance('$p', 'b', 100000)");
}
$node->stop('immediate');
$node->start;
check_outputs($_, 'at the end') for ('crash', 'par');
check_same('at the end');
is($node->safe_psql('postgres', "SELECT count(*) FROM streamforge.visible('crash')"),
	'0', 'at the end every window is finalized');
is($node->safe_psql('postgres', "SELECT count(*) FROM streamforge.visible('par')"),
	'0', 'at the end every window of the parallel pipeline is finalized');
cmp_ok(
	$node->safe_psql('postgres',
		"SELECT count(*) FROM streamforge.results WHERE pipeline = 'crash'"),
	'>', 0,
	'at the end the results table keeps the finalized rows');
cmp_ok(
	$node->safe_psql('postgres',
		"SELECT count(*) FROM streamforge.late_output WHERE pipeline = 'crash'"),
	'>', 0,
	'the workload had late events');

$node->stop;
done_testing();
