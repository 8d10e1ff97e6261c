# Keys are freed with the state that used them (issue 21, docs/semantics.md "Retention"): with a
# retention, a long-lived backend that feeds a pipeline with ever new keys
# must not keep every key it ever interned.  600,000 events, each with a key
# of its own, go through a pipeline with a small retention in one session;
# the pipeline's memory context must stay within 1.3x of its size after
# 200K (0.2.0 kept about key size + 40 bytes per distinct key forever:
# about 2.2x here).  Freeing keys changes no checkpoint: the feeding
# session's checkpoint is byte for byte a cold load's, and a freed key that
# comes back is a key like any other.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('key_memory');
$node->init;
$node->append_conf('postgresql.conf', "synchronous_commit = off\n");
$node->start;
$node->safe_psql(
	'postgres', "
CREATE EXTENSION streamforge;
CREATE FUNCTION pipeline_bytes() RETURNS bigint LANGUAGE sql AS \$\$
    SELECT coalesce(sum(total_bytes), 0)::bigint FROM pg_backend_memory_contexts
     WHERE name = 'streamforge pipeline' \$\$;
-- events from .. to - 1, event time = offset, a key per event; then the
-- partition reports progress up to the last event
CREATE FUNCTION feed(pl text, f bigint, t bigint) RETURNS void
LANGUAGE plpgsql AS \$\$
BEGIN
    PERFORM count(*) FROM streamforge.ingest_batch(pl,
        ARRAY(SELECT ROW('p', i, 'e' || i, 'key-' || i, i, 1)::streamforge.delivery
                FROM generate_series(f, t - 1) AS i ORDER BY i));
    PERFORM count(*) FROM streamforge.advance(pl, 'p', t - 1);
END \$\$;
SELECT streamforge.create_pipeline('keys', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('g', 3)],
    lateness => 10, retention => 100);
");

my $batch = 10000;
sub feed_to
{
	my ($s, $from, $to) = @_;
	for (my $i = $from; $i < $to; $i += $batch)
	{
		$s->query_safe("SELECT feed('keys', $i, $i + $batch)");
	}
}

my $s = $node->background_psql('postgres', timeout => 1800);

# after a warm-up (allocator blocks, table sizes), memory stays where it
# is, however many new keys come
feed_to($s, 0, 200000);
my $m200k = $s->query_safe('SELECT pipeline_bytes()');
my $peak = 0;
for (my $k = 200000; $k < 600000; $k += 100000)
{
	feed_to($s, $k, $k + 100000);
	my $m = $s->query_safe('SELECT pipeline_bytes()');
	note "pipeline memory after " . ($k + 100000) . " distinct keys: $m bytes";
	$peak = $m if $m > $peak;
}
note "pipeline memory: $m200k bytes after 200K distinct keys, at most $peak after";
is($s->query_safe("SELECT deliveries FROM streamforge.stats('keys')"),
	'600000', '600,000 events were delivered');
cmp_ok($peak, '<=', 1.3 * $m200k,
	'memory up to 600K distinct keys stays within 1.3x of memory after 200K');

# the state is untouched: the feeding session's checkpoint is a cold load's
my $warm = $s->query_safe("SELECT md5(streamforge.checkpoint('keys'))");
my $cold = $node->safe_psql('postgres',
	"SELECT md5(streamforge.checkpoint('keys'))");
is($warm, $cold, 'the checkpoint of the feeding session is a cold load\'s');

# keys long freed come back as new keys, next to live ones
$s->query_safe(
	"SELECT count(*) FROM streamforge.ingest('keys', 'p', 600000, 'again-1', 'key-5', 599995, 7)"
);
$s->query_safe(
	"SELECT count(*) FROM streamforge.ingest('keys', 'p', 600001, 'again-2', 'key-599999', 599999, 3)"
);
is( $s->query_safe(
		"SELECT string_agg(window_name || ' ' || key || ' ' || window_start || ' ' || count || ' ' || sum, ', ' ORDER BY window_name, key, window_start)
		   FROM streamforge.live('keys') WHERE key IN ('key-5', 'key-599999')"),
	'f key-5 599990 1 7, f key-599999 599990 2 4, g key-5 599995 1 7, g key-599999 599999 2 4',
	'a freed key that comes back aggregates like a new one');
$warm = $s->query_safe("SELECT md5(streamforge.checkpoint('keys'))");
$s->quit;
$cold = $node->safe_psql('postgres',
	"SELECT md5(streamforge.checkpoint('keys'))");
is($warm, $cold, 'and the checkpoints still agree');

$node->stop;
done_testing();
