# pg_dump and pg_restore of a database with a table attached to a pipeline
# (issue 14, item 3): the pipeline's state and the attachment come over;
# restoring the table's rows ingests nothing twice (pg_restore creates
# triggers after the data); inserts into the restored table go on from the
# restored offsets.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DumpRestore;

my $node = PostgreSQL::Test::Cluster->new('attach_dump');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql(
	'src', q{
CREATE EXTENSION streamforge;
SELECT streamforge.create_pipeline('pages', ARRAY['web'],
    ARRAY[streamforge.fixed_interval('per_minute', interval '1 minute')],
    time_unit => interval '1 second');
CREATE TABLE visits (id bigserial PRIMARY KEY, page text NOT NULL,
                     at timestamptz NOT NULL);
SELECT streamforge.attach('pages', 'visits', event_id => 'id', key => 'page',
    event_time => 'at');
INSERT INTO visits (page, at)
SELECT '/p' || (g % 3), timestamptz '2026-11-30 12:00:00+00' + g * interval '7 seconds'
  FROM generate_series(1, 40) AS g;
});

my $state = q{
SELECT * FROM streamforge.live_ts('pages');
SELECT * FROM streamforge.partitions('pages');
SELECT deliveries, accepted, duplicate_ids FROM streamforge.stats('pages');
SELECT source, pipeline, partition, event_id, key, event_time, value FROM streamforge.attachments;
SELECT streamforge.time_unit('pages');
};
my $before = $node->safe_psql('src', $state);
like($before, qr/web\|39\|\|f/, 'forty rows ingested');

dump_restore($node, 'src', 'dst',
	dump => 'pg_dump of a database with an attached table',
	restore => 'pg_restore into a new database');

is($node->safe_psql('dst', $state), $before,
	'same results, offsets, attachment and time unit after the restore');

# inserting into the restored table goes on where the dump left off
$node->safe_psql('dst',
	"INSERT INTO visits (page, at) VALUES ('/new', '2026-11-30 12:10:00+00')");
is( $node->safe_psql(
		'dst',
		"SELECT consumed_offset FROM streamforge.partitions('pages')"),
	'40', 'the restored attachment ingests new rows at the next offset');
is( $node->safe_psql(
		'dst',
		"SELECT count FROM streamforge.live_ts('pages') WHERE key = '/new' "
		  . "AND window_start = '2026-11-30 12:10:00+00'"),
	'1', 'with its timestamp converted');
is($node->safe_psql('src', $state), $before, 'the source database is unchanged');

$node->stop;
done_testing();
