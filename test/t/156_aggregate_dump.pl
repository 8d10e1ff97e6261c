# pg_dump and pg_restore of a database with an aggregate (issue 29): the
# pipeline, its attachment with the filter, the views, the registry row
# and (0.4.0, issue 42 item 2) the table of its results with its rows and
# indexes, which pg_dump writes like a user's table (the registry's
# trigger finds it made and makes nothing) come over; the restored
# table's rows are not ingested twice, and new inserts go on.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DumpRestore;

my $node = PostgreSQL::Test::Cluster->new('aggregate_dump');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql(
	'src', q{
CREATE EXTENSION streamforge;
CREATE ROLE reader;
CREATE TABLE visits (id bigserial PRIMARY KEY, page text NOT NULL,
                     ok boolean NOT NULL, at timestamptz NOT NULL);
SELECT streamforge.create_aggregate('pages', $$
    SELECT page, count(*) AS n FROM visits WHERE ok
     GROUP BY page, streamforge.tumble(at, interval '1 minute')
$$, lateness => interval '10 seconds');
SELECT streamforge.grant('pages', 'reader', 'read');
INSERT INTO visits (page, ok, at)
SELECT '/p' || (g % 3), g % 4 <> 0, timestamptz '2026-11-30 12:00:00+00' + g * interval '7 seconds'
  FROM generate_series(1, 40) AS g;
SELECT count(*) FROM streamforge.advance_ts('pages', 'default', '2026-11-30 12:03:00+00');
});

my $state = q{
SET TimeZone = 'UTC';
SELECT * FROM pages ORDER BY page, window_start;
SELECT * FROM pages_live ORDER BY page, window_start;
SELECT * FROM streamforge.partitions('pages');
SELECT name, query FROM streamforge.pipeline_info;
SELECT source, pipeline, partition, event_id, key, event_time, value, filter FROM streamforge.attachments;
SELECT pg_get_indexdef(indexrelid) FROM pg_index
 WHERE indexrelid::regclass::text LIKE 'streamforge_results.%' ORDER BY 1;
SELECT c.relname, c.relowner::regrole, c.relacl FROM pg_class AS c
 WHERE c.relnamespace = 'streamforge_results'::regnamespace ORDER BY 1;
SELECT count(*) FROM pg_index WHERE indrelid = 'streamforge.results'::regclass
   AND indexrelid::regclass::text LIKE 'streamforge.results_aggregate_%';
SET ROLE reader;
SELECT count(*) FROM pages;
};
my $before = $node->safe_psql('src', $state);
like($before, qr/CREATE INDEX a1_keys ON streamforge_results\.a1 /, 'the aggregate has its table and index');
like($before, qr/GROUP BY page, streamforge\.tumble/, 'pipeline_info shows the query');

dump_restore($node, 'src', 'dst',
	dump => 'pg_dump of a database with an aggregate',
	restore => 'pg_restore into a new database');
is($node->safe_psql('dst', $state), $before,
	'same views, offsets, query, attachment, index and readers after the restore');

like(
	$node->safe_psql(
		'dst', q{SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT * FROM pages WHERE page = '/p1'
		AND window_start >= '2026-11-30 12:00:00+00'}),
	qr/Index Scan using a1_keys on a1/,
	'the restored view uses the restored index');

$node->safe_psql('dst', q{
INSERT INTO visits (page, ok, at) VALUES ('/new', true, '2026-11-30 12:10:00+00'),
                                         ('/new', false, '2026-11-30 12:10:01+00');
});
is( $node->safe_psql('dst', q{SELECT n FROM pages_live WHERE page = '/new'}),
	'1', 'the restored attachment ingests new matching rows');

$node->safe_psql('dst', q{SELECT streamforge.drop_aggregate('pages')});
is( $node->safe_psql(
		'dst', q{SELECT count(*) FROM pg_class WHERE relname LIKE 'pages%'
		    OR relnamespace = 'streamforge_results'::regnamespace}),
	'0', 'drop_aggregate after a restore drops the views, the table and its indexes');
is($node->safe_psql('src', $state), $before, 'the source database is unchanged');

$node->stop;
done_testing();
