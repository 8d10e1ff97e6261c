# create_aggregate (issue 29) under concurrency: six writers insert into the
# aggregate's table at once, matching and non-matching rows, some in a
# savepoint they roll back, a quarter of the transactions rolled back
# whole, some reporting progress.  Afterwards the aggregate's views equal a
# plain GROUP BY over the committed matching rows, and the pipeline has
# seen exactly those rows.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SerialReplay;    # its pgbench
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('aggregate_concurrency');
$node->init;
$node->append_conf('postgresql.conf', 'max_connections = 30');
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION streamforge;
CREATE TABLE clicks (id bigserial PRIMARY KEY, page text NOT NULL,
                     status text NOT NULL, amount integer NOT NULL,
                     at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('conc_agg', $$
    SELECT page, count(*) AS clicks, sum(amount) AS revenue, max(amount) AS top
      FROM clicks WHERE status = 'ok'
     GROUP BY page, streamforge.tumble(at, interval '10 seconds')
$$, lateness => interval '1 day');
});

my $script = q{
\set s random(0, 300)
\set a random(-50, 50)
\set p random(0, 4)
\set fail random(0, 3)
\set sp random(0, 2)
\set adv random(0, 5)
BEGIN;
INSERT INTO clicks (page, status, amount, at)
SELECT '/p' || ((:p + i) % 5), CASE WHEN i % 3 = 0 THEN 'error' ELSE 'ok' END,
       :a + i, timestamptz '2026-11-30 12:00:00+00' + (:s + i) * interval '1 second'
  FROM generate_series(1, 4) AS i;
\if :sp = 0
SAVEPOINT s;
INSERT INTO clicks (page, status, amount, at)
VALUES ('/rolled-back', 'ok', 1000, timestamptz '2026-11-30 12:00:00+00' + :s * interval '1 second');
ROLLBACK TO SAVEPOINT s;
\endif
\if :adv = 0
SELECT count(*) FROM streamforge.advance_ts('conc_agg', 'default',
    timestamptz '2026-11-30 12:00:00+00' + :s * interval '1 second');
\endif
\if :fail = 0
ROLLBACK;
\else
COMMIT;
\endif
};

SerialReplay::pgbench(
	$node,
	name => 'six concurrent writers with savepoints and random rollbacks',
	clients => 6,
	transactions => 50,
	script => $script);

my ($rows, $matching) = split /\|/, $node->safe_psql('postgres',
	q{SELECT count(*), count(*) FILTER (WHERE status = 'ok') FROM clicks});
ok($rows > 400 && $rows < 1200, "some transactions committed ($rows rows)");
is($node->safe_psql('postgres', q{SELECT count(*) FROM clicks WHERE page = '/rolled-back'}),
	'0', 'no row of a rolled-back savepoint');
is( $node->safe_psql(
		'postgres', q{SELECT deliveries FROM streamforge.stats('conc_agg')}),
	$matching,
	'the pipeline received exactly the committed matching rows');
is( $node->safe_psql(
		'postgres',
		q{SELECT consumed_offset + 1 FROM streamforge.partitions('conc_agg')}),
	$matching, 'at consecutive offsets: a rollback leaves no gap');

my $oracle = q{
SELECT page, date_bin('10 seconds', at, '1970-01-01+00') AS window_start,
       count(*) AS clicks, sum(amount) AS revenue, max(amount) AS top
  FROM clicks WHERE status = 'ok'
 GROUP BY page, date_bin('10 seconds', at, '1970-01-01+00')
};
my $diff = qq{
SELECT count(*) FROM (
    (SELECT page, window_start, clicks, revenue, top FROM %s EXCEPT ALL $oracle)
    UNION ALL
    ($oracle EXCEPT ALL SELECT page, window_start, clicks, revenue, top FROM %s)) AS d
};
is($node->safe_psql('postgres', sprintf($diff, 'conc_agg_live', 'conc_agg_live')),
	'0', 'the live view equals a GROUP BY over the committed matching rows');

# every window emitted: the results view equals it too
$node->safe_psql('postgres',
	q{SELECT count(*) FROM streamforge.advance_ts('conc_agg', 'default', '2026-11-30 13:00:00+00')});
is($node->safe_psql('postgres', sprintf($diff, 'conc_agg', 'conc_agg')),
	'0', 'the results view equals a GROUP BY over the committed matching rows');
ok($node->safe_psql('postgres', 'SELECT count(*) FROM conc_agg') > 20,
	'with many windows');

$node->stop;
done_testing();
