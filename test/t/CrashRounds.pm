# The crash driver shared by 020_crash.pl and 021_crash_parallel.pl
# (docs/semantics.md "Transactions"): a workload of deterministic
# pseudo-random rounds run once uninterrupted on pipeline "ref" and once on
# pipeline "crash" by a consumer whose backend is killed with SIGKILL in the
# middle of a transaction, whose server is stopped with "-m immediate" in
# the middle of one and right after a COMMIT, and which resumes each time
# from its committed source offsets (the partitions' consumed_offset),
# re-delivering a few events it had already delivered.
#
# Each round is one transaction: deliveries on partition a, on partition b,
# then a progress report (or idleness) per partition.  Round r is committed
# iff partition a consumed the last offset of round r's deliveries, which is
# how the consumer finds where to resume.
#
# A test says how a round is written as SQL, since the pipelines' modes take
# different call forms:
#   delivery   => sub ($part, $offset, [id, key, time, value]): one delivery's text
#   deliver    => sub ($p, [deliveries]): the statements delivering them
#   report     => sub ($p, ['advance', part, progress] | ['mark_idle', part]):
#                 one statement
#   redeliver  => sub ($p, [deliveries]): a query and the output that says
#                 it accepted nothing
#   state      => extra queries of a pipeline's state (a sub of $p), run
#                 before the common ones

package CrashRounds;

use strict;
use warnings;

use Test::More;

sub new
{
	my ($class, %args) = @_;
	my $self = bless {%args}, $class;
	$self->{rounds} = _make_rounds($args{delivery});
	return $self;
}

sub _make_rounds
{
	my ($delivery) = @_;
	my $seed = 20261129;
	my $rnd = sub {
		my $n = shift;
		$seed = ($seed * 1103515245 + 12345) % 2147483648;
		return int($seed / 65536) % $n;
	};

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
			my $n = $part eq 'a' ? 1 + $rnd->(4) : $rnd->(4);
			for (1 .. $n)
			{
				my $ev;
				if (@events && $rnd->(8) == 0)
				{
					# a duplicate of an earlier event, with its identity
					$ev = $events[ $rnd->(scalar @events) ];
				}
				else
				{
					$clock += $rnd->(4);
					my $time =
					  $clock - 12 + $rnd->(16) - ($rnd->(10) == 0 ? 40 : 0);
					$ev = [
						'e' . scalar(@events), 'k' . $rnd->(3),
						$time, $rnd->(100) - 50
					];
					push @events, $ev;
				}
				$offset{$part}++;
				push @d, $delivery->($part, $offset{$part}, $ev);
			}
			$batch{$part} = \@d;
		}
		my @reports;
		for my $part ('a', 'b')
		{
			if ($part eq 'b' && $r % 9 == 4)
			{
				push @reports, [ 'mark_idle', $part ];
			}
			else
			{
				$progress{$part} = $clock - 10 + $rnd->(6)
				  if $clock - 10 > $progress{$part};
				push @reports, [ 'advance', $part, $progress{$part} ];
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
	return \@rounds;
}

sub last_round { return $#{ $_[0]{rounds} }; }

# the statements of round $r on pipeline $p, or only its first $upto
sub round_sql
{
	my ($self, $p, $r, $upto) = @_;
	my $round = $self->{rounds}[$r];
	my @stmts;
	for my $part ('a', 'b')
	{
		next unless @{ $round->{$part} };
		push @stmts, $self->{deliver}->($p, $round->{$part});
	}
	push @stmts, $self->{report}->($p, $_) for @{ $round->{reports} };
	splice(@stmts, $upto) if defined $upto;
	return join("\n", @stmts);
}

# Run round $r in its own transaction in session $s; return its output.
# The crashing consumer compacts often, so that recovery also rebuilds from
# snapshots; the reference run never compacts.
sub run_round
{
	my ($self, $s, $p, $r) = @_;
	$s->query_safe('SET streamforge.compaction_threshold = '
		  . ($p eq 'crash' ? '0' : '-1'));
	$s->query_safe('BEGIN');
	my $out = $s->query_safe($self->round_sql($p, $r));
	$s->query_safe('COMMIT');
	return $out;
}

# the uninterrupted run: the outputs of its rounds
sub run_reference
{
	my ($self) = @_;
	my $s = $self->{node}->background_psql('postgres');
	my @log = map { $self->run_round($s, 'ref', $_) } 0 .. $self->last_round;
	$s->quit;
	return @log;
}

# where the consumer resumes: the first round not committed
sub resume_round
{
	my ($self) = @_;
	my $consumed = $self->{node}->safe_psql('postgres',
		"SELECT consumed_offset FROM streamforge.partitions('crash') "
		  . "WHERE partition = 'a'");
	my $r = 0;
	$r++
	  while $r <= $self->last_round
	  && $self->{rounds}[$r]{last_a} <= $consumed;
	return $r;
}

# Re-deliver the last events before round $r (already consumed): no-ops.
sub redeliver
{
	my ($self, $r) = @_;
	return if $r == 0;
	my @again = @{ $self->{rounds}[ $r - 1 ]{a} };
	@again = @again[ -2 .. -1 ] if @again > 2;
	my ($query, $nothing) = $self->{redeliver}->('crash', \@again);
	is($self->{node}->safe_psql('postgres', $query),
		$nothing, "re-delivering before round $r accepts nothing");
}

sub state_of
{
	my ($self, $p) = @_;
	my $extra = $self->{state} ? $self->{state}->($p) : '';
	return $self->{node}->safe_psql(
		'postgres', "$extra
		SELECT 'p', * FROM streamforge.partitions('$p');
		SELECT 'l', * FROM streamforge.live('$p');
		SELECT 'v', * FROM streamforge.visible('$p');
		SELECT 'x', * FROM streamforge.late_events('$p');
		SELECT 'w', streamforge.watermark('$p');");
}

# The crashing consumer, start to end; returns the outputs of the rounds it
# committed, in order.
sub run_crashes
{
	my ($self) = @_;
	my $node = $self->{node};
	my @log;

	# rounds 0..9 committed, then round 10 half done when the backend is
	# killed
	my $s = $node->background_psql('postgres');
	push @log, $self->run_round($s, 'crash', $_) for 0 .. 9;
	my $before = $self->state_of('crash');
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	$s->query_safe('BEGIN');
	my $lost = $s->query_safe($self->round_sql('crash', 10, 3));
	isnt($lost, undef, 'round 10 ran in the doomed transaction');
	kill 'KILL', $pid;
	eval { $s->quit };
	$node->poll_query_until('postgres', 'SELECT true')
	  or die 'the server did not recover after SIGKILL';

	is($self->state_of('crash'), $before,
		'after SIGKILL the state is the last committed one');
	my $r = $self->resume_round;
	is($r, 10, 'the consumer resumes at the first uncommitted round');
	$self->redeliver($r);

	# rounds 10..19, then a transaction with round 20 partly done when the
	# server stops in immediate mode
	$s = $node->background_psql('postgres');
	push @log, $self->run_round($s, 'crash', $_) for $r .. 19;
	$before = $self->state_of('crash');
	$s->query_safe('BEGIN');
	$s->query_safe($self->round_sql('crash', 20, 2));
	$node->stop('immediate');
	eval { $s->quit };
	$node->start;

	is($self->state_of('crash'), $before,
		'after an immediate stop the state is the last committed one');
	$r = $self->resume_round;
	is($r, 20, 'the consumer resumes at round 20');
	$self->redeliver($r);

	# a committed transaction survives an immediate stop right after COMMIT
	$s = $node->background_psql('postgres');
	push @log, $self->run_round($s, 'crash', $r);
	$node->stop('immediate');
	eval { $s->quit };
	$node->start;
	$r = $self->resume_round;
	is($r, 21, 'a commit just before an immediate stop is durable');
	$self->redeliver($r);

	# the rest, each round in a new connection
	for my $i ($r .. $self->last_round)
	{
		$s = $node->background_psql('postgres');
		push @log, $self->run_round($s, 'crash', $i);
		$s->quit;
	}
	return @log;
}

# What both tests check at the end besides the state: the crashing consumer
# compacted and replayed offsets, the reference did neither.
sub check_compacted_and_replayed
{
	my ($self) = @_;
	my $node = $self->{node};
	is( $node->safe_psql(
			'postgres',
			"SELECT string_agg(name || ':' || (snapshot_version > 0), ',' ORDER BY name) "
			  . "FROM streamforge.pipeline"),
		'crash:true,ref:false',
		'the crashing consumer compacted, the reference run did not');
	is( $node->safe_psql(
			'postgres',
			"SELECT a.offset_replays > 0 AND b.offset_replays = 0 "
			  . "FROM streamforge.stats('crash') a, streamforge.stats('ref') b"
		),
		't',
		'only the crashing consumer replayed offsets');
}

1;
