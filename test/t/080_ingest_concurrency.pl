# Sources without offsets under concurrency (issue 14, items 2 and 3):
# eight writers at once, each transaction appending per row (with a retried
# request), appending a batch, or inserting into a table attached to the
# pipeline, and a quarter of them rolling back.  The extension assigns the
# offsets under the pipeline's lock, so no two writers collide, a rollback
# leaves no gap, and the final results equal a GROUP BY over the rows that
# committed.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SerialReplay;    # its pgbench
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('ingest_concurrency');
$node->init;
$node->append_conf('postgresql.conf', 'max_connections = 30');
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION streamforge;
SELECT streamforge.create_pipeline('conc', ARRAY['api', 'tbl'],
    ARRAY[streamforge.fixed('w', 10)]);
CREATE SEQUENCE ids;
-- what the API writers committed; retry rows are the retried requests
CREATE TABLE api_log (id text, k text, t bigint, v bigint, retry boolean);
-- the attached table
CREATE TABLE raw (id text PRIMARY KEY, k text NOT NULL, t bigint NOT NULL,
                  v integer NOT NULL);
SELECT streamforge.attach('conc', 'raw', event_id => 'id', key => 'k',
    event_time => 't', value => 'v', partition => '''tbl''');
});

# pgbench substitutes :name textually; ids come from a sequence, so every
# request has its own event id.
my $script = q{
\set t random(0, 300)
\set v random(-50, 50)
\set k random(0, 4)
\set mode random(0, 2)
\set fail random(0, 3)
BEGIN;
SELECT nextval('ids') AS n \gset
\if :mode = 0
SELECT count(*) FROM streamforge.append('conc', 'api', 'a:n', 'k:k', :t, :v);
INSERT INTO api_log VALUES ('a:n', 'k:k', :t, :v, false);
-- the same request again, as a client retrying after a lost reply
SELECT count(*) FROM streamforge.append('conc', 'api', 'a:n', 'k:k', :t, :v);
INSERT INTO api_log VALUES ('a:n', 'k:k', :t, :v, true);
\elif :mode = 1
WITH e AS (SELECT 'b:n-' || i AS id, 'k' || ((:k + i) % 5) AS k,
                  :t + 7 * i AS t, :v * i AS v
             FROM generate_series(1, 4) AS i),
     logged AS (INSERT INTO api_log SELECT id, k, t, v, false FROM e)
SELECT count(*) FROM streamforge.append_batch('conc',
    ARRAY(SELECT ROW('api', id, k, t, v)::streamforge.event FROM e ORDER BY id));
\else
INSERT INTO raw (id, k, t, v)
SELECT 'r:n-' || i, 'k' || ((:k + i) % 5), :t + 3 * i, :v - i
  FROM generate_series(1, 3) AS i;
\endif
\if :fail = 0
ROLLBACK;
\else
COMMIT;
\endif
};

SerialReplay::pgbench(
	$node,
	name => 'eight concurrent writers with random rollbacks',
	clients => 8,
	transactions => 60,
	script => $script);

# Something committed on each path, and something was rolled back.
my ($api, $retries, $tbl, $last_id) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT (SELECT count(*) FROM api_log WHERE NOT retry),
       (SELECT count(*) FROM api_log WHERE retry),
       (SELECT count(*) FROM raw),
       (SELECT last_value FROM ids)});
ok($api > 0 && $retries > 0 && $tbl > 0, "every path committed events ($api, $retries retries, $tbl rows)");
my $committed_txns = $node->safe_psql(
	'postgres', q{
SELECT count(DISTINCT substring(id FROM '^.:(\d+)')) FROM
  (SELECT id FROM api_log UNION ALL SELECT id FROM raw) AS c});
cmp_ok($committed_txns, '<', $last_id, 'some transactions rolled back');

# No collision, no gap, nothing lost: each partition consumed exactly the
# committed deliveries (a retried request takes its own offset).
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(partition || '=' || consumed_offset, ',' ORDER BY partition) "
		  . "FROM streamforge.partitions('conc')"),
	'api=' . ($api + $retries - 1) . ',tbl=' . ($tbl - 1),
	'offsets: one per committed delivery, without gaps');

# A retried request is a duplicate and counts once.
is($node->safe_psql('postgres', "SELECT duplicate_ids FROM streamforge.stats('conc')"),
	$retries, 'every retried request was a duplicate');

# The results equal a GROUP BY over the committed rows.
my $expected = $node->safe_psql(
	'postgres', q{
SELECT k, floor(t / 10.0)::bigint * 10 AS s, count(*), sum(v), min(v), max(v)
  FROM (SELECT k, t, v FROM api_log WHERE NOT retry
        UNION ALL SELECT k, t, v FROM raw) AS c
 GROUP BY 1, 2 ORDER BY 1, 2});
my $actual = $node->safe_psql(
	'postgres', q{
SELECT key, window_start, count, sum, min, max
  FROM streamforge.live('conc') ORDER BY 1, 2});
ok($expected ne '', 'there are results to compare');
is($actual, $expected, 'live() equals a GROUP BY over the committed rows');

# After a restart (state reloaded from the tables), the same.
$node->restart;
is($node->safe_psql('postgres',
		"SELECT key, window_start, count, sum, min, max FROM streamforge.live('conc') ORDER BY 1, 2"),
	$expected, 'and so does a new connection after a restart');

$node->stop;
done_testing();
