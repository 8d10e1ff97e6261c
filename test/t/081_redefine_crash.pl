# Definition changes are crash safe (docs/management.md): a committed
# add_window, add_partition, drop_window or set_lateness survives an
# immediate stop and a killed backend, an uncommitted one leaves no trace,
# and processing goes on from the new definition exactly as in a pipeline
# that never crashed.  The same for a large change, whose snapshot is
# stored beside the pipeline's row before the lock (issue 39).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('redefine');
$node->init;
$node->append_conf('postgresql.conf', 'restart_after_crash = on');
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION streamforge');

sub state_of
{
	my $p = shift;
	return $node->safe_psql(
		'postgres', "
		SELECT 'd', partitions, windows, lateness FROM streamforge.pipeline_info WHERE name = '$p';
		SELECT 'p', * FROM streamforge.partitions('$p');
		SELECT 'l', * FROM streamforge.live('$p');
		SELECT 'v', * FROM streamforge.visible('$p');
		SELECT 'x', * FROM streamforge.late_events('$p');
		SELECT 's', * FROM streamforge.stats('$p');
		SELECT 'w', streamforge.watermark('$p');");
}

# the same calls on two pipelines; 'crash' is interrupted in between
my @calls = (
	"SELECT count(*) FROM streamforge.ingest_batch('%s', ARRAY["
	  . join(', ',
		map { "ROW('a', $_, 'e$_', 'k" . ($_ % 3) . "', " . (3 * $_) . ", $_)" }
		  0 .. 19)
	  . "]::streamforge.delivery[])",
	"SELECT count(*) FROM streamforge.advance('%s', 'a', 30)",
	"SELECT count(*) FROM streamforge.add_window('%s', streamforge.session('s', 4))",
	"SELECT count(*) FROM streamforge.add_partition('%s', 'b')",
	"SELECT count(*) FROM streamforge.set_lateness('%s', 2)",
	"SELECT count(*) FROM streamforge.ingest('%s', 'a', 20, 'x', 'k1', 61, 7)",
	"SELECT count(*) FROM streamforge.advance('%s', 'b', 50)",
	"SELECT count(*) FROM streamforge.drop_window('%s', 'f')",
	"SELECT count(*) FROM streamforge.advance('%s', 'a', 70)",
	"SELECT count(*) FROM streamforge.ingest('%s', 'b', 0, 'y', 'k2', 66, 3)");

for my $p ('ref', 'crash')
{
	$node->safe_psql('postgres',
		"SELECT streamforge.create_pipeline('$p', ARRAY['a'], "
		  . "ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 10)], 10)");
}
$node->safe_psql('postgres', sprintf($_, 'ref')) for @calls;
my $ref = state_of('ref');
like($ref, qr/\{"s: session\(4\)","sl: sliding\(20, 10\)"\}/,
	'the reference ends with the changed definition');

# calls 0..3 committed; call 4 (set_lateness) in a transaction when the
# server stops in immediate mode
$node->safe_psql('postgres', sprintf($_, 'crash')) for @calls[ 0 .. 3 ];
my $before = state_of('crash');
my $s = $node->background_psql('postgres');
$s->query_safe('BEGIN');
$s->query_safe(sprintf($calls[4], 'crash'));
$s->query_safe(sprintf($calls[7], 'crash'));
$node->stop('immediate');
eval { $s->quit };
$node->start;
is(state_of('crash'), $before,
	'after an immediate stop the committed definition changes are there, the uncommitted ones are not');

# call 4 committed right before an immediate stop
$s = $node->background_psql('postgres');
$s->query_safe(sprintf($calls[4], 'crash'));
$node->stop('immediate');
eval { $s->quit };
$node->start;
like(state_of('crash'), qr/^d\|\{a,b\}\|.*\|2$/m,
	'a definition change committed just before an immediate stop is durable');

# call 7 (drop_window) in a backend that is killed before COMMIT
$node->safe_psql('postgres', sprintf($_, 'crash')) for @calls[ 5 .. 6 ];
$before = state_of('crash');
$s = $node->background_psql('postgres');
my $pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe('BEGIN');
$s->query_safe(sprintf($calls[7], 'crash'));
kill 'KILL', $pid;
eval { $s->quit };
$node->poll_query_until('postgres', 'SELECT true')
  or die 'the server did not recover after SIGKILL';
is(state_of('crash'), $before,
	'after SIGKILL the uncommitted drop_window left no trace');

# the rest, each in a new connection: the same end state as the reference
# (apart from offset_replays, which no call here makes)
$node->safe_psql('postgres', sprintf($_, 'crash')) for @calls[ 7 .. $#calls ];
my $crash = state_of('crash');
is($crash, $ref, 'the interrupted pipeline ends exactly like the reference');

# and a restart rebuilds it from storage alone
$node->restart;
is(state_of('crash'), $ref, 'after a restart the state is rebuilt identically');

# A change whose snapshot is large (over 256 kB) writes it to
# streamforge.stored_snapshot before it takes the lock (issue 39): the
# same guarantees.  'where' says where the committed snapshot is, and how
# many stored snapshots the pipeline has.
my $where_sql = q{
	SELECT CASE WHEN p.snapshot IS NOT NULL THEN 'row'
	            WHEN EXISTS (SELECT 1 FROM streamforge.stored_snapshot AS s
	                          WHERE s.pipeline_id = p.id
	                            AND s.snapshot_version = p.snapshot_version)
	            THEN 'stored' ELSE 'none' END
	       || ' ' || (SELECT count(*) FROM streamforge.stored_snapshot AS s
	                   WHERE s.pipeline_id = p.id)
	  FROM streamforge.pipeline AS p WHERE p.name = 'big'};
my $big_state = q{SELECT md5(streamforge.checkpoint('big')), streamforge.watermark('big')};
$node->safe_psql('postgres', q{
SELECT streamforge.create_pipeline('big', ARRAY['p', 'q'],
    ARRAY[streamforge.fixed('m', 60), streamforge.session('v', 30)], 100);
SELECT count(*) FROM streamforge.ingest_batch('big', ARRAY(
    SELECT ROW(CASE WHEN i % 2 = 0 THEN 'p' ELSE 'q' END, i / 2, 'e' || i,
               'k' || (i * 7919 % 1000), i / 100 + (i * 31 % 50), i % 97)::streamforge.delivery
      FROM generate_series(0, 39999) AS i));
SELECT count(*) FROM streamforge.advance('big', 'p', 300);
SELECT count(*) FROM streamforge.advance('big', 'q', 300);
SELECT count(*) FROM streamforge.add_window('big', streamforge.fixed('h', 600));
});
is($node->safe_psql('postgres', $where_sql), 'stored 1',
	'a large change stores its snapshot beside the row');
$before = $node->safe_psql('postgres', $big_state);

# uncommitted (its snapshot is written, the lock taken) when the backend is
# killed, then when the server stops in immediate mode
$s = $node->background_psql('postgres');
$pid = $s->query_safe('SELECT pg_backend_pid()');
$s->query_safe('BEGIN');
$s->query_safe("SELECT count(*) FROM streamforge.set_lateness('big', 200)");
kill 'KILL', $pid;
eval { $s->quit };
$node->poll_query_until('postgres', 'SELECT true')
  or die 'the server did not recover after SIGKILL';
is($node->safe_psql('postgres', $big_state), $before,
	'after SIGKILL the uncommitted large change left the state as it was');
is($node->safe_psql('postgres', $where_sql), 'stored 1',
	'and the snapshot it stored is gone');
$s = $node->background_psql('postgres');
$s->query_safe('BEGIN');
$s->query_safe("SELECT count(*) FROM streamforge.set_lateness('big', 200)");
$node->stop('immediate');
eval { $s->quit };
$node->start;
is($node->safe_psql('postgres', $big_state), $before,
	'after an immediate stop too');

# committed right before an immediate stop: durable, and loaded by a new
# backend as the backend that made it had it
$s = $node->background_psql('postgres');
$s->query_safe("SELECT count(*) FROM streamforge.set_lateness('big', 200)");
my $after = $s->query_safe($big_state);
$node->stop('immediate');
eval { $s->quit };
$node->start;
isnt($after, $before, 'the large change changed the state');
is($node->safe_psql('postgres', $big_state), $after,
	'a large change committed just before an immediate stop is durable');
is($node->safe_psql('postgres', $where_sql), 'stored 1',
	'from the snapshot it stored, which replaced the one before');

$node->stop;
done_testing();
