# Bounded state (issue 13, docs/semantics.md "Retention"): with a retention, a pipeline's memory
# depends on the live buckets and on what the horizon still covers, not on
# how many events it has seen.  About a million events at a steady
# event-time rate go into a fixed + sliding + session pipeline with a small
# retention; the pipeline's memory context ("streamforge pipeline") after
# 1M events must stay within 1.2x of its size after 200K, in the session
# that fed it and after a cold load in a new one.  The same feed without
# retention grows (so the measurement can see growth).  Memory only: times
# are measured by bench/soak.sh.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('retention_memory');
$node->init;
$node->append_conf('postgresql.conf', "synchronous_commit = off\n");
$node->start;
$node->safe_psql(
	'postgres', "
CREATE EXTENSION streamforge;
CREATE FUNCTION pipeline_bytes() RETURNS bigint LANGUAGE sql AS \$\$
    SELECT coalesce(sum(total_bytes), 0)::bigint FROM pg_backend_memory_contexts
     WHERE name = 'streamforge pipeline' \$\$;
-- events from .. to - 1, event time = offset, ten keys; then the
-- partition reports progress up to the last event
CREATE FUNCTION feed(pl text, f bigint, t bigint) RETURNS void
LANGUAGE plpgsql AS \$\$
BEGIN
    PERFORM count(*) FROM streamforge.ingest_batch(pl,
        ARRAY(SELECT ROW('p', i, 'e' || i, 'k' || (i % 10), i, 1)::streamforge.delivery
                FROM generate_series(f, t - 1) AS i ORDER BY i));
    PERFORM count(*) FROM streamforge.advance(pl, 'p', t - 1);
END \$\$;
SELECT streamforge.create_pipeline(n, ARRAY['p'],
    ARRAY[streamforge.fixed('f', 100), streamforge.sliding('s', 200, 50),
          streamforge.session('g', 5)],
    lateness => 100, retention => r)
  FROM (VALUES ('soak', 1000), ('keep', NULL)) AS v(n, r);
");

my $batch = 10000;
sub feed_to
{
	my ($s, $pl, $from, $to) = @_;
	for (my $i = $from; $i < $to; $i += $batch)
	{
		$s->query_safe("SELECT feed('$pl', $i, $i + $batch)");
	}
}

my $s = $node->background_psql('postgres', timeout => 1800);

feed_to($s, 'soak', 0, 200000);
my $m200k = $s->query_safe('SELECT pipeline_bytes()');
feed_to($s, 'soak', 200000, 1000000);
my $m1m = $s->query_safe('SELECT pipeline_bytes()');
note "pipeline memory with retention: $m200k bytes after 200K events, $m1m after 1M";
is($s->query_safe("SELECT deliveries FROM streamforge.stats('soak')"),
	'1000000', 'a million events were delivered');
cmp_ok(
	$s->query_safe(
		"SELECT remembered_identities FROM streamforge.stats('soak')"),
	'<=', 1100 + $batch,
	'only what the horizon covers is remembered');
cmp_ok($m1m, '<=', 1.2 * $m200k,
	'memory after 1M events is within 1.2x of memory after 200K');
$s->quit;

# a cold load in a new session holds no more
my $cold = $node->safe_psql('postgres',
	"SELECT streamforge.watermark('soak'); SELECT pipeline_bytes()");
$cold = (split /\n/, $cold)[1];
note "pipeline memory after a cold load: $cold bytes";
cmp_ok($cold, '<=', 1.2 * $m200k,
	'a cold load after 1M events holds no more than the feeding session after 200K');

# without retention the same feed grows: the bound above is not vacuous
$s = $node->background_psql('postgres', timeout => 1800);
feed_to($s, 'keep', 0, 200000);
my $k200k = $s->query_safe('SELECT pipeline_bytes()');
feed_to($s, 'keep', 200000, 400000);
my $k400k = $s->query_safe('SELECT pipeline_bytes()');
note "pipeline memory without retention: $k200k bytes after 200K events, $k400k after 400K";
cmp_ok($k400k, '>', 1.5 * $k200k, 'without retention, memory grows with history');
$s->quit;

$node->stop;
done_testing();
