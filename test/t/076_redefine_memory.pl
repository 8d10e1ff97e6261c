# A definition change is refused by streamforge.max_live_buckets before it
# builds the buckets it would pass the cap with (issue 21): the issue's case,
# 45 events and add_window(sliding('s', 100000, 1)) under the default cap of
# 4,000,000, made 4.5 million buckets and 3.6 GB of backend memory in 0.2.0.
# Now it is refused with 54000 and the backend's peak memory (VmHWM, Linux)
# barely moves; so is the higher lateness that would bring back as many
# finalized buckets; the pipeline is unchanged and keeps working.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

plan skip_all => 'needs /proc/<pid>/status (Linux)' unless -r '/proc/self/status';

my $node = PostgreSQL::Test::Cluster->new('redefine_memory');
$node->init;
$node->start;
$node->safe_psql(
	'postgres', "
CREATE EXTENSION streamforge;
SELECT streamforge.create_pipeline('big', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 10)]);
SELECT count(*) FROM streamforge.ingest_batch('big', (SELECT array_agg(
    ROW('p', i, 'e' || i, 'k' || i, i * 1000000, 1)::streamforge.delivery
    ORDER BY i) FROM generate_series(0, 44) i));
-- 45 events of one key, 100000 buckets each, finalized one after the other
SELECT streamforge.create_pipeline('old', ARRAY['p'],
    ARRAY[streamforge.sliding('s', 100000, 1)]);
DO \$\$
BEGIN
    FOR i IN 0 .. 44 LOOP
        PERFORM streamforge.ingest('old', 'p', i, 'e' || i, 'k', i * 1000000, 1);
        PERFORM streamforge.advance('old', 'p', i * 1000000 + 100001);
    END LOOP;
END
\$\$;
");

my $s = $node->background_psql('postgres', timeout => 600);
my $pid = $s->query_safe('SELECT pg_backend_pid()');

# the backend's peak resident memory, in kB
sub peak_kb
{
	open(my $fh, '<', "/proc/$pid/status") or die "cannot read /proc/$pid/status: $!";
	while (<$fh>)
	{
		return $1 if /^VmHWM:\s+(\d+)\s+kB/;
	}
	die "no VmHWM in /proc/$pid/status";
}

# load both pipelines first, so that their own state is in the peak
$s->query_safe("SELECT streamforge.stats('big'), streamforge.stats('old')");
my $before = peak_kb();
my $big_cp = $s->query_safe("SELECT md5(streamforge.checkpoint('big'))");
my $old_cp = $s->query_safe("SELECT md5(streamforge.checkpoint('old'))");

$s->query_safe(
	"CREATE FUNCTION pg_temp.try(stmt text) RETURNS text LANGUAGE plpgsql AS \$\$
	 BEGIN EXECUTE stmt; RETURN 'ok';
	 EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END \$\$");

my $t0 = time;
like(
	$s->query_safe(
		"SELECT pg_temp.try(\$q\$SELECT * FROM streamforge.add_window('big', streamforge.sliding('s', 100000, 1))\$q\$)"
	),
	qr/^54000: pipeline "big" would have more than 4000000 live buckets/,
	'45 events plus add_window(sliding(100000, 1)): refused with 54000');
like(
	$s->query_safe(
		"SELECT pg_temp.try(\$q\$SELECT * FROM streamforge.set_lateness('old', 100000000)\$q\$)"
	),
	qr/^54000: pipeline "old" would have more than 4000000 live buckets/,
	'a lateness bringing back 4.5 million finalized buckets: refused with 54000');
my $secs = time - $t0;
my $after = peak_kb();
note "backend peak memory: $before kB before, $after kB after, $secs s";
cmp_ok($after - $before, '<=', 64 * 1024,
	'the refused changes did not build the buckets (peak memory within 64 MB)');
cmp_ok($secs, '<=', 30, 'and were refused quickly');

is($s->query_safe("SELECT md5(streamforge.checkpoint('big'))"),
	$big_cp, 'pipeline big is unchanged');
is($s->query_safe("SELECT md5(streamforge.checkpoint('old'))"),
	$old_cp, 'pipeline old is unchanged');
is( $s->query_safe(
		"SELECT count(*) FROM streamforge.add_window('big', streamforge.sliding('t', 1000, 1))"
	),
	'0',
	'a change within the cap still works');
is($s->query_safe("SELECT live_buckets FROM streamforge.stats('big')"),
	'45045', 'with the buckets it should have');

$s->quit;
$node->stop;
done_testing();
