# restore() of a large state: a million deliveries, whose binary snapshot
# (src/codec/snapshot.c) is larger than the 32 MB up to which glibc may serve an
# allocation from its heap, so the snapshot's memory is unmapped when SPI's
# context goes.  0.2.0 read the snapshot's length after SPI_finish() and
# crashed the backend here (found by bench/run.sh); small states never
# showed it, because their freed memory stays mapped.  Checks that the
# backend survives, that the restored state equals the checkpointed one,
# and that a new connection loads it.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('restore_large');
$node->init;
$node->append_conf('postgresql.conf', "max_wal_size = 4GB\n");
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION streamforge;
SELECT streamforge.create_pipeline('big', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 1000), streamforge.session('s', 5)]);
SELECT count(*) FROM streamforge.ingest_batch('big', ARRAY(
    SELECT ROW(CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END, i / 2,
               'event-' || i, 'key-' || (i % 1000), i, i % 97)::streamforge.delivery
      FROM generate_series(0, 999999) AS i ORDER BY i));
SELECT count(*) FROM streamforge.advance('big', 'a', 400000);
SELECT count(*) FROM streamforge.advance('big', 'b', 400000);
});

my $state = q{
SELECT (s).deliveries, (s).accepted, (s).live_buckets, (s).visible_rows,
       streamforge.watermark('big'),
       (SELECT md5(string_agg(r::text, ',' ORDER BY r::text))
          FROM streamforge.live('big') AS r)
  FROM (SELECT streamforge.stats('big') AS s) AS x};
my $before = $node->safe_psql('postgres', $state);
like($before, qr/^1000000\|1000000\|/, 'a million deliveries');

# the restore writes a binary snapshot of more than 32 MB
my ($rc, $out, $err) = $node->psql('postgres',
	"SELECT streamforge.restore('big', streamforge.checkpoint('big'))");
is($rc, 0, 'restore of its own checkpoint succeeds') or diag($err);
cmp_ok(
	$node->safe_psql('postgres',
		"SELECT octet_length(snapshot) FROM streamforge.pipeline WHERE name = 'big'"),
	'>', 32 * 1024 * 1024,
	'the stored snapshot is larger than 32 MB');
is($node->safe_psql('postgres', "SELECT count(*) FROM streamforge.journal"),
	'0', 'the journal is empty after the restore');
is($node->safe_psql('postgres', $state), $before,
	'a new connection loads the restored state unchanged');

# and the restoring session itself goes on with the restored state
is( $node->safe_psql(
		'postgres', q{
SELECT streamforge.restore('big', streamforge.checkpoint('big'));
SELECT count(*) FROM streamforge.ingest('big', 'a', 500000, 'new', 'k', 999999, 1);
SELECT (streamforge.stats('big')).deliveries}),
	"\n0\n1000001",
	'the restoring session goes on ingesting');

$node->stop;
done_testing();
