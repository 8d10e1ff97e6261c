# Memory used by a call is released when it ends: a million calls leave the
# backend's memory where it was.  Replayed deliveries, reads and failing
# calls add no state, so the backend's whole memory (every memory context)
# must stay flat; new deliveries legitimately grow the pipeline's own
# context ("streamforge pipeline"), so there everything else must stay
# flat.  Memory is sampled from pg_backend_memory_contexts between batches
# of calls, in one session, and also inside one long transaction.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('memory');
$node->init;
$node->start;
$node->safe_psql(
	'postgres', "
CREATE EXTENSION streamforge;
SELECT streamforge.create_pipeline('mem', ARRAY['a', 'b'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 5)]);
SELECT streamforge.configure_outputs('mem');
SELECT count(*) FROM streamforge.ingest('mem', 'a', 0, 'e0', 'k', 1, 1);
SELECT count(*) FROM streamforge.ingest('mem', 'b', 0, 'e1', 'k', 2, 1);
SELECT streamforge.create_pipeline('grow', ARRAY['a'],
    ARRAY[streamforge.fixed('f', 10), streamforge.session('s', 5)]);
SELECT streamforge.configure_outputs('grow');
");

my $s = $node->background_psql('postgres', timeout => 900);
$s->query_safe(
	"CREATE FUNCTION pg_temp.backend_bytes(pipelines boolean) RETURNS bigint
	 LANGUAGE sql AS \$\$
	   SELECT sum(total_bytes)::bigint FROM pg_backend_memory_contexts
	    WHERE pipelines OR name <> 'streamforge pipeline' \$\$");

# 100000 replayed deliveries; every hundredth iteration also a replay in a
# batch, a watermark read and a live() read; and twice a failing call (an
# offset conflict, caught in a subtransaction: the next call rebuilds the
# pipeline from the tables)
my $no_state_batch = "
DO \$\$
BEGIN
    FOR i IN 1 .. 100000 LOOP
        PERFORM streamforge.ingest('mem', 'a', 0, 'e0', 'k', 1, 1);
        IF i % 100 = 0 THEN
            PERFORM streamforge.ingest_batch('mem',
                ARRAY[ROW('b', 0, 'e1', 'k', 2, 1)]::streamforge.delivery[]);
            PERFORM streamforge.watermark('mem');
            PERFORM count(*) FROM streamforge.live('mem');
        END IF;
        IF i % 50000 = 0 THEN
            BEGIN
                PERFORM streamforge.ingest('mem', 'a', 0, 'e0', 'k', 1, 2);
            EXCEPTION WHEN sqlstate 'SF001' THEN
                NULL;
            END;
        END IF;
    END LOOP;
END
\$\$";

my @total;
for my $batch (1 .. 10)
{
	$s->query_safe($no_state_batch);
	push @total, $s->query_safe('SELECT pg_temp.backend_bytes(true)');
}
note "backend memory after each batch of 100000 calls: @total";
is($s->query_safe("SELECT offset_replays FROM streamforge.stats('mem')"),
	'1010000', 'a million and more replayed deliveries were made');
# (the first batches make one-time allocations: a cache's next block, a
# plan kept on first use; a leak grows every batch, so the last six
# batches, 600000 calls, must add nothing)
cmp_ok($total[9] - $total[3], '<=', 64 * 1024,
	'a million calls that add no state leave the backend\'s memory flat');

# the same inside one transaction (nothing is released by a commit)
$s->query_safe('CREATE TEMP TABLE samples (i int, bytes bigint)');
$s->query_safe(
	"DO \$\$
BEGIN
    FOR i IN 1 .. 100000 LOOP
        PERFORM streamforge.ingest('mem', 'a', 0, 'e0', 'k', 1, 1);
        PERFORM streamforge.watermark('mem');
        IF i % 10000 = 0 THEN
            INSERT INTO samples VALUES (i, pg_temp.backend_bytes(true));
        END IF;
    END LOOP;
END
\$\$");
my $samples = $s->query_safe(
	'SELECT string_agg(bytes::text, \' \' ORDER BY i) FROM samples');
note "backend memory inside one transaction: $samples";
is( $s->query_safe(
		'SELECT max(bytes) - min(bytes) <= 64 * 1024 FROM samples WHERE i >= 20000'),
	't',
	'100000 calls in one transaction leave the backend\'s memory flat');

# new deliveries: the pipeline grows, nothing else does
my @other;
for my $batch (0 .. 5)
{
	my $from = $batch * 10000;
	$s->query_safe(
		"DO \$\$
BEGIN
    FOR i IN $from .. $from + 9999 LOOP
        PERFORM streamforge.ingest('grow', 'a', i, 'g' || i, 'k' || (i % 100), i, 1);
        IF i % 100 = 99 THEN
            PERFORM streamforge.advance('grow', 'a', i);
        END IF;
    END LOOP;
END
\$\$");
	push @other, $s->query_safe('SELECT pg_temp.backend_bytes(false)');
}
note "backend memory outside pipeline contexts after each batch of 10000 deliveries: @other";
is($s->query_safe("SELECT deliveries FROM streamforge.stats('grow')"),
	'60000', 'the deliveries were made');
cmp_ok($s->query_safe("SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'grow'"),
	'>', 1000, 'with outputs written');
cmp_ok($other[5] - $other[1], '<=', 64 * 1024,
	'new deliveries grow nothing but the pipeline\'s own memory');

$s->quit;
$node->stop;
done_testing();
