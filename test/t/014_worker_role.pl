# The background snapshot worker (issue 39; src/persist/coldload.c,
# worker_role) connects as the extension's owner, the role every statement
# of the extension runs as, not as the bootstrap superuser; when that role
# cannot log in (PostgreSQL 15 refuses a background worker such a
# connection too) it falls back to the bootstrap superuser, so that the
# snapshot is still stored.  The worker's DEBUG1 message names the role it
# connected as.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('worker_role');
$node->init;
$node->append_conf('postgresql.conf', "log_min_messages = debug1\n");
$node->start;
my $boot = $node->safe_psql('postgres', 'SELECT current_user');
$node->safe_psql('postgres', "CREATE ROLE sfowner LOGIN SUPERUSER");
$node->safe_psql('postgres', "CREATE EXTENSION streamforge",
	extra_params => [ '-U', 'sfowner' ]);
is( $node->safe_psql(
		'postgres',
		"SELECT pg_get_userbyid(extowner) FROM pg_extension WHERE extname = 'streamforge'"),
	'sfowner',
	'the extension belongs to sfowner');
$node->safe_psql('postgres', "
SELECT streamforge.create_pipeline(n, ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])
  FROM unnest(ARRAY['a', 'b']) AS n");

# one write that asks for a background snapshot (a budget of 0), then wait
# for the snapshot row at position -1
sub snapshot_by
{
	my ($pl) = @_;
	my $offset = -s $node->logfile;
	$node->safe_psql('postgres', "
SET streamforge.background_compaction_ms = 0;
SELECT count(*) FROM streamforge.ingest_batch('$pl',
    ARRAY(SELECT ROW('p', i, 'e' || i, 'k', i, 1)::streamforge.delivery
            FROM generate_series(0, 99) AS i))");
	$node->poll_query_until('postgres', "
SELECT count(*) = 1 FROM streamforge.journal j JOIN streamforge.pipeline p
    ON p.id = j.pipeline_id WHERE p.name = '$pl' AND j.pos = -1")
	  or die "no background snapshot of $pl";
	my $log = slurp_file($node->logfile, $offset);
	return $log =~ /background snapshot of pipeline "$pl" at position 1 \(\d+ bytes\), connected as role "([^"]+)"/
	  ? $1
	  : '(no message)';
}

is(snapshot_by('a'), 'sfowner', 'the worker connects as the extension\'s owner');

# an owner that may not log in: the bootstrap superuser, and the snapshot
# is stored all the same
$node->safe_psql('postgres', "ALTER ROLE sfowner NOLOGIN");
is(snapshot_by('b'), $boot, 'an owner without LOGIN: the bootstrap superuser');

# the stored snapshots load: the state of a new connection is the writer's
$node->safe_psql('postgres', "ALTER ROLE sfowner LOGIN");
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(x::text, ',' ORDER BY x::text) FROM streamforge.live('a') x"),
	$node->safe_psql(
		'postgres',
		"SELECT string_agg(x::text, ',' ORDER BY x::text) FROM streamforge.live('b') x"),
	'both pipelines load the same state');

$node->stop;
done_testing();
