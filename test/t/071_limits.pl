# Resource limits: a batch of a million deliveries, a 1 MB key, a
# checkpoint of about a hundred MB (compressed; some hundreds of MB of
# document), statement_timeout and pg_cancel_backend() in the middle of
# ingest_batch (in the engine, and while waiting for the pipeline's lock as
# the extension's owner), checkpoint and restore.  Every call ends in
# success or a clean error; after an error the state is the last commit's,
# the caller's identity is intact, and the next call in the same session
# works.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('limits');
$node->init;
$node->append_conf('postgresql.conf', "max_wal_size = 4GB\n");
$node->start;
$node->safe_psql(
	'postgres', "
CREATE EXTENSION streamforge;
CREATE ROLE feeder;
GRANT USAGE ON SCHEMA streamforge TO feeder;
SELECT streamforge.create_pipeline('big', ARRAY['a', 'b'],
                                   ARRAY[streamforge.fixed('f', 1000)]);
-- every event of 'slow' enters 100000 buckets: a batch of 1000 deliveries
-- keeps the engine busy for a while
SELECT streamforge.create_pipeline('slow', ARRAY['a'],
                                   ARRAY[streamforge.sliding('s', 100000, 1)]);
SELECT streamforge.grant(p, 'feeder', 'ingest') FROM unnest(ARRAY['big', 'slow']) AS p;
-- a million deliveries, built beforehand so that the call spends its time
-- in streamforge: 64-byte event ids, 100000 keys of 32 bytes
CREATE TABLE batch AS
SELECT array_agg(ROW('a', i, md5(i::text) || md5((i + 1)::text),
                     md5((i % 100000)::text), i, i)::streamforge.delivery
                 ORDER BY i) AS d
  FROM generate_series(0, 999999) AS i;
CREATE TABLE slow_batch AS
SELECT array_agg(ROW('a', i, 'e' || i, 'k', i, i)::streamforge.delivery
                 ORDER BY i) AS d
  FROM generate_series(1, 1000) AS i;
GRANT SELECT ON batch, slow_batch TO feeder;
SELECT count(*) FROM streamforge.ingest('slow', 'a', 0, 'e0', 'k', 0, 0);
");

sub state_sql
{
	my ($p) = @_;
	return "SELECT s.deliveries, s.accepted, s.changes_emitted, s.live_buckets,
                   (SELECT string_agg(partition || '=' || consumed_offset, ',')
                      FROM streamforge.partitions('$p'))
              FROM streamforge.stats('$p') AS s";
}

# Issue $sql in session $s, interrupt it ('timeout': by the session's
# statement_timeout; 'cancel': pg_cancel_backend once the call has run for
# a second; 'lock': pg_cancel_backend once it waits for a lock), and return
# the error it got.
sub interrupted
{
	my ($s, $sql, $how) = @_;
	my $active =
	    "FROM pg_stat_activity WHERE state = 'active' "
	  . "AND query LIKE '%streamforge.%' AND pid <> pg_backend_pid()";

	$s->{stderr} = '';
	$s->query_until(qr/started/, "\\echo started\n$sql;\n");
	if ($how ne 'timeout')
	{
		$node->poll_query_until('postgres',
			"SELECT count(*) = 1 $active"
			  . ($how eq 'lock' ? " AND wait_event_type = 'Lock'" : ''))
		  or die "the call did not start";
		sleep(1) if $how eq 'cancel';
		$node->safe_psql('postgres', "SELECT pg_cancel_backend(pid) $active");
	}
	$s->query('SELECT 1');
	my $err = $s->{stderr};
	$s->{stderr} = '';
	return $err;
}

# One session does most of the work: a new backend has to rebuild a
# pipeline of a million deliveries from the tables first.
my $m = $node->background_psql('postgres');
# a timeout per query, not per session: the session lives for minutes
$m->set_query_timer_restart();

# --- a million deliveries in one call ---
is( $m->query_safe(
		"SELECT count(*) FROM streamforge.ingest_batch('big', (SELECT d FROM batch))"),
	'0',
	'a batch of a million deliveries succeeds');
my $state = $m->query_safe(state_sql('big'));
is($state, '1000000|1000000|0|1000000|a=999999,b=-1',
	'the million deliveries are all there');

# --- a 1 MB key and a 1 MB event id ---
is( $m->query_safe(
		"SELECT count(*) FROM streamforge.ingest('big', 'b', 0, repeat('e', 1048576), "
		  . "repeat('k', 1048576), 7, 1)"),
	'0',
	'a 1 MB key and event id are accepted');
is( $m->query_safe(
		"SELECT count(*) FROM streamforge.live('big') WHERE key = repeat('k', 1048576)"),
	'1',
	'and kept');
$state = $m->query_safe(state_sql('big'));

# --- interrupted in the engine, in the middle of a batch ---
my $s = $node->background_psql('postgres', on_error_stop => 0);
$s->set_query_timer_restart();
$s->query_safe('SET ROLE feeder');
my $slow = $s->query_safe(state_sql('slow'));
$s->query_safe("SET statement_timeout = '1s'");
like(
	interrupted(
		$s,
		"SELECT count(*) FROM streamforge.ingest_batch('slow', (SELECT d FROM slow_batch))",
		'timeout'),
	qr/canceling statement due to statement timeout/,
	'statement_timeout stops a batch in the engine');
$s->query_safe('RESET statement_timeout');
is($s->query_safe(state_sql('slow')),
	$slow, 'after the timeout the session sees the last committed state');

$s->query_safe('BEGIN');
is( $s->query_safe(
		"SELECT count(*) FROM streamforge.ingest('slow', 'a', 1, 'e1', 'k', 1, 1)"),
	'0',
	'a first call in a transaction succeeds');
like(
	interrupted(
		$s,
		"SELECT count(*) FROM streamforge.ingest_batch('slow', (SELECT d FROM slow_batch))",
		'cancel'),
	qr/canceling statement due to user request/,
	'pg_cancel_backend stops a batch in the engine');
$s->query('ROLLBACK');
$s->{stderr} = '';
is($s->query_safe(state_sql('slow')),
	$slow, 'the state is the last commit (the transaction is gone)');
is($s->query_safe('SELECT current_user'), 'feeder', 'the caller is still the caller');
is( $s->query_safe(
		"SELECT count(*) FROM streamforge.ingest('slow', 'a', 1, 'e1', 'k', 1, 1)"),
	'0',
	'the next call in the same session works');
is($node->safe_psql('postgres', state_sql('slow')),
	$s->query_safe(state_sql('slow')),
	'and is committed: a new session sees it');

# --- interrupted while waiting for the pipeline's lock, as the owner ---
$m->query_safe('BEGIN');
$m->query_safe("SELECT count(*) FROM streamforge.ingest('big', 'b', 1, 'b1', 'kb', 5, 1)");
$s->query_safe("SET statement_timeout = '1s'");
like(
	interrupted(
		$s,
		"SELECT count(*) FROM streamforge.ingest('big', 'b', 1, 'b1', 'kb', 5, 1)",
		'timeout'),
	qr/canceling statement due to statement timeout/,
	'statement_timeout stops a call waiting for the pipeline\'s lock');
$s->query_safe('RESET statement_timeout');
like(
	interrupted(
		$s,
		"SELECT count(*) FROM streamforge.ingest('big', 'b', 1, 'b1', 'kb', 5, 1)",
		'lock'),
	qr/canceling statement due to user request/,
	'pg_cancel_backend stops a call waiting for the pipeline\'s lock');
is($s->query_safe('SELECT current_user'), 'feeder',
	'the cancelled caller is still itself, not the extension\'s owner');
$m->query_safe('ROLLBACK');
is($m->query_safe(state_sql('big')), $state, 'nothing changed');

# --- a checkpoint of about a hundred MB; cancel in the middle of one ---
$s->query_safe('RESET ROLE');
like(
	interrupted($s, "SELECT octet_length(streamforge.checkpoint('big'))", 'cancel'),
	qr/canceling statement due to user request/,
	'pg_cancel_backend stops a checkpoint');
$m->query_safe("CREATE TABLE cps AS SELECT streamforge.checkpoint('big') AS cp");
cmp_ok($m->query_safe('SELECT octet_length(cp) FROM cps'),
	'>', 50 * 1024 * 1024, 'the checkpoint has more than 50 MB (compressed)');

# --- restore: cancelled, then complete ---
like(
	interrupted(
		$s, "SELECT streamforge.restore('big', (SELECT cp FROM cps))",
		'cancel'),
	qr/canceling statement due to user request/,
	'pg_cancel_backend stops a restore');
is($m->query_safe(state_sql('big')), $state, 'the cancelled restore changed nothing');
is($m->query_safe("SELECT streamforge.restore('big', (SELECT cp FROM cps))"),
	'', 'the restore then succeeds');
is($m->query_safe(state_sql('big')), $state,
	'the restored pipeline holds the same state');
is( $m->query_safe(
		"SELECT count(*) FROM streamforge.ingest('big', 'b', 1, 'b1', 'kb', 6, 1)"),
	'0',
	'and goes on');
$state = $m->query_safe(state_sql('big'));
is($node->safe_psql('postgres', state_sql('big')),
	$state, 'a new session rebuilds the same state from the tables');

$s->quit;
$m->quit;
$node->stop;
done_testing();
