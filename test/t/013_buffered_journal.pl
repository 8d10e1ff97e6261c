# Buffered journal entries (persist.c stores a transaction's top-level
# write calls before commit or PREPARE TRANSACTION) keep today's crash and
# two-phase guarantees: a prepared transaction survives a crash with all of
# its calls and commits or rolls back as one; a backend killed in the middle
# of a transaction of buffered calls leaves nothing behind; a committed one
# survives an immediate shutdown.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('buffered');
$node->init;
$node->append_conf('postgresql.conf', 'max_prepared_transactions = 5');
$node->start;
$node->safe_psql(
	'postgres', "
CREATE EXTENSION streamforge;
SELECT streamforge.create_pipeline(n, ARRAY['p'], ARRAY[streamforge.fixed('w', 10)])
  FROM unnest(ARRAY['two', 'roll', 'kill', 'done']) AS n;
");

sub state
{
	my ($p) = @_;
	return $node->safe_psql('postgres',
		"SELECT p.consumed_offset || ' ' || s.deliveries || ' '
		        || coalesce((SELECT sum(sum) FROM streamforge.live('$p')), 0)
		   FROM streamforge.partitions('$p') p, streamforge.stats('$p') s");
}

# 500 per-row calls in one transaction (more than one flush of the buffer)
sub calls
{
	my ($p) = @_;
	return "SELECT count(*) FROM generate_series(0, 499) AS i,
	          LATERAL streamforge.ingest('$p', 'p', i, 'e' || i, 'k', i, 1);";
}

$node->safe_psql('postgres', "BEGIN; " . calls('two') . " PREPARE TRANSACTION 'two';");
$node->safe_psql('postgres', "BEGIN; " . calls('roll') . " PREPARE TRANSACTION 'roll';");
is(state('two'), '-1 0 0', 'a prepared transaction is invisible');
$node->safe_psql('postgres', "BEGIN; " . calls('done') . " COMMIT;");

# a backend killed in the middle of a transaction of buffered calls
my $victim = $node->background_psql('postgres');
$victim->query_safe('BEGIN');
$victim->query_safe(calls('kill'));
my $pid = $victim->query_safe('SELECT pg_backend_pid()');

$node->stop('immediate');
$node->start;
eval { $victim->quit };

is(state('kill'), '-1 0 0', 'a killed transaction left nothing');
is(state('done'), '499 500 500', 'a committed transaction survived');
is(state('two'), '-1 0 0', 'the prepared transaction is still invisible');
$node->safe_psql('postgres', "COMMIT PREPARED 'two'");
$node->safe_psql('postgres', "ROLLBACK PREPARED 'roll'");
is(state('two'), '499 500 500', 'COMMIT PREPARED stores every call');
is(state('roll'), '-1 0 0', 'ROLLBACK PREPARED stores none');
cmp_ok(
	$node->safe_psql(
		'postgres',
		"SELECT count(*) FROM streamforge.journal j JOIN streamforge.pipeline p
		   ON p.id = j.pipeline_id WHERE p.name = 'two'"),
	'<', 100,
	'the calls were stored in far fewer rows than calls');
# and the stored rows load in a new backend and go on from there
$node->safe_psql('postgres',
	"SELECT count(*) FROM streamforge.ingest('two', 'p', 500, 'e500', 'k', 500, 1)");
is(state('two'), '500 501 501', 'a new call continues after them');

$node->stop;
done_testing();
