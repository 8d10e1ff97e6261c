# An aggregate in a database updated from 0.1.0 through 0.2.0 to 0.3.0
# (issue 29): a database made at release 0.1.0 (built from its commit by
# scripts/test.sh, passed in SF_RELEASE_INSTALL) is updated to 0.2.0, where
# a table is attached to a pipeline with attach() of 0.2.0, then to 0.3.0.
# attach() has its one new signature (the update dropped the old one), the
# attachment of 0.2.0 goes on ingesting, and create_aggregate over the same
# table adds a second attachment, with its filter, whose views equal a plain
# GROUP BY; a dump of the updated database restores the aggregate with its
# index.  Then the update to 0.4.0 moves the aggregates' rows to tables of
# their own (issue 42 item 2), with the long keys' index and view (issue
# 38).  Without SF_RELEASE_INSTALL the test fails with the reason: it
# never skips.
use strict;
use warnings;

use File::Copy qw(copy);
use File::Path qw(make_path rmtree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use File::Basename qw(dirname);
use lib dirname(__FILE__);
use ReleaseUpgrade qw(release_upgrade);
use DumpRestore;

my ($install, $package_upgrade) = release_upgrade();

my $node = PostgreSQL::Test::Cluster->new('aggregate_upgrade', install_path => $install);
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION streamforge');
ok($package_upgrade->() >= 3, 'package upgrade: the new library and scripts are installed');
$node->safe_psql('postgres', "ALTER EXTENSION streamforge UPDATE TO '0.2.0'");
$node->safe_psql(
	'postgres', q{
SELECT streamforge.create_pipeline('pages', ARRAY['web'],
    ARRAY[streamforge.fixed('w', 60)], time_unit => interval '1 second');
CREATE TABLE visits (id bigserial PRIMARY KEY, page text NOT NULL, ok boolean NOT NULL,
                     ms integer NOT NULL, at timestamptz NOT NULL);
SELECT streamforge.attach('pages', 'visits', event_id => 'id', key => 'page', event_time => 'at');
INSERT INTO visits (page, ok, ms, at) VALUES ('/a', true, 10, '2026-11-30 12:00:00+00'),
                                             ('/b', false, 20, '2026-11-30 12:00:10+00');
});

$node->safe_psql('postgres', "ALTER EXTENSION streamforge UPDATE TO '0.3.0'");
is( $node->safe_psql('postgres',
		"SELECT pg_catalog.pg_get_function_identity_arguments(oid) FROM pg_proc WHERE proname = 'attach'"),
	'pipeline text, source regclass, event_id text, key text, event_time text, value text, partition text, filter text, measures text[]',
	'attach() has one signature, with the filter and the measures');
$node->safe_psql(
	'postgres', q{
SELECT streamforge.create_aggregate('page_ms', $$
    SELECT page, count(*) AS n, sum(ms) AS total_ms FROM visits WHERE ok
     GROUP BY page, streamforge.tumble(at, interval '1 minute')
$$);
INSERT INTO visits (page, ok, ms, at) VALUES ('/a', true, 5, '2026-11-30 12:00:30+00'),
                                             ('/b', false, 7, '2026-11-30 12:00:40+00'),
                                             ('/b', true, 9, '2026-11-30 12:01:40+00');
SELECT count(*) FROM streamforge.advance_ts('page_ms', 'default', '2026-11-30 12:05:00+00');
});
is( $node->safe_psql('postgres',
		"SELECT key, count FROM streamforge.live_ts('pages') ORDER BY key, window_start"),
	"/a|2\n/b|2\n/b|1", 'the attachment of 0.2.0 ingests every row');
my $oracle = q{SELECT page, date_bin('1 minute', at, '1970-01-01+00'), count(*), sum(ms)
  FROM visits WHERE ok AND id > 2 GROUP BY 1, 2 ORDER BY 1, 2};
my $view = q{SELECT page, window_start, n, total_ms FROM page_ms ORDER BY 1, 2};
is($node->safe_psql('postgres', $view), $node->safe_psql('postgres', $oracle),
	'the aggregate made after the update equals a GROUP BY over the rows since');

$node->safe_psql(
	'postgres', q{
SELECT streamforge.create_aggregate('page_stats', $$
    SELECT page, count(*) AS n, avg(ms) AS mean_ms, var_samp(ms) AS var_ms,
           max(id) AS last_id
      FROM visits GROUP BY page, streamforge.tumble(at, interval '1 minute')
$$);
INSERT INTO visits (page, ok, ms, at) VALUES ('/a', true, 8, '2026-11-30 12:00:31+00'),
                                             ('/a', false, 13, '2026-11-30 12:00:32+00');
});
# the attachment of 0.2.0 keeps its arguments (nine: bound to its pipeline),
# the measures one made since has eleven
is( $node->safe_psql('postgres',
		q{SELECT string_agg(pipeline || ':' || pg_catalog.cardinality(streamforge_internal.trigger_args(t.tgargs)), ' ' ORDER BY pipeline)
		    FROM streamforge.attachments AS a JOIN pg_trigger AS t ON t.tgname = a.trigger_name}),
	'page_ms:10 page_stats:11 pages:9',
	'the attachments keep their form, the measures one has its own');
is( $node->safe_psql('postgres', q{SELECT page, n, mean_ms, var_ms, last_id FROM page_stats_live ORDER BY page}),
	$node->safe_psql('postgres', q{SELECT page, count(*), avg(ms), var_samp(ms), max(id)
	    FROM visits WHERE id > 5 GROUP BY page ORDER BY page}),
	'an aggregate over two measures and a variance, made after the update');
is( $node->safe_psql('postgres',
		"SELECT key, count FROM streamforge.live_ts('pages') ORDER BY key, window_start"),
	"/a|4\n/b|2\n/b|1", 'and the attachment of 0.2.0 still ingests every row');
# page_stats emits its rows: the window of 12:00 is final
$node->safe_psql('postgres',
	q{SELECT count(*) FROM streamforge.advance_ts('page_stats', 'default', '2026-11-30 12:05:00+00')});

dump_restore($node, 'postgres', 'restored',
	dump => 'pg_dump of the updated database',
	restore => 'pg_restore of it');
is($node->safe_psql('restored', $view), $node->safe_psql('postgres', $view),
	'the restored aggregate has the same rows');
like(
	$node->safe_psql(
		'restored', q{EXPLAIN (COSTS OFF) SELECT * FROM page_ms WHERE page = '/a'}),
	qr/Index Scan using results_aggregate_/,
	'and its index');

# That dump restored into 0.4.0 (the installed default) keeps the
# aggregates' rows in streamforge.results; move_aggregate_results gives
# each its table, as the update does, and a session that wrote before the
# move writes to the table after it
is( $node->safe_psql('restored',
		q{SELECT (SELECT e.extversion FROM pg_extension AS e WHERE e.extname = 'streamforge') || ' '
		         || string_agg(g.name || ':' || (g.results_id IS NULL), ' ' ORDER BY g.name)
		    FROM streamforge.aggregate AS g}),
	'0.4.0 page_ms:true page_stats:true',
	'restored into 0.4.0, the aggregates of the dump have no table of their results');
my $restored_views = q{SET TimeZone = 'UTC';
  SELECT page, window_start, n, total_ms, final FROM page_ms ORDER BY 1, 2;
  SELECT page, window_start, n, mean_ms, var_ms, last_id, final FROM page_stats ORDER BY 1, 2};
# the writer emits a window, to streamforge.results, before the move
my $writer = $node->background_psql('restored');
$writer->query_safe(
	q{INSERT INTO visits (page, ok, ms, at) VALUES ('/d', true, 6, '2026-11-30 12:05:20+00');
	  SELECT count(*) FROM streamforge.advance_ts('page_ms', 'default', '2026-11-30 12:06:00+00')});
my $restored_before = $node->safe_psql('restored', $restored_views);
like($restored_before, qr/^\/d\|2026-11-30 12:05:00\+00\|1\|6\|f$/m,
	'the writer emitted its window (open: the watermark is at its end)');
my $moved_rows = $node->safe_psql('restored',
	q{SELECT count(*) FROM streamforge.results WHERE pipeline = 'page_ms'});
isnt($moved_rows, '0', 'page_ms has rows in streamforge.results');
$node->safe_psql('restored',
	q{CREATE ROLE mover; GRANT USAGE ON SCHEMA streamforge TO mover;
	  SELECT streamforge.grant('page_ms', 'mover', 'ingest');});
my ($ret, $out, $err) = $node->psql('restored',
	q{SET ROLE mover; SELECT streamforge.move_aggregate_results('page_ms')});
like($err, qr/permission denied/, 'moving needs admin');
is( $node->safe_psql('restored', q{SELECT streamforge.move_aggregate_results('page_ms')}),
	$moved_rows, 'move_aggregate_results moves page_ms\'s rows');
$node->safe_psql('restored', q{SELECT streamforge.move_aggregate_results('page_stats')});
($ret, $out, $err) = $node->psql('restored', q{SELECT streamforge.move_aggregate_results('page_ms')});
is($out, '0', 'a second move moves nothing');
like($err, qr/has the table of its results already/, 'and says so');
is($node->safe_psql('restored', $restored_views), $restored_before,
	'the views show the same rows after the move');
is( $node->safe_psql('restored',
		q{SELECT count(*) FROM streamforge.results WHERE pipeline IN ('page_ms', 'page_stats')}),
	'0', 'the moved aggregates\' rows left streamforge.results');
like(
	$node->safe_psql(
		'restored', q{SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT * FROM page_ms WHERE page = '/a'}),
	qr/Index Scan using a[0-9]+_keys on a[0-9]+/,
	'the moved view reads its table\'s index');
$writer->query_safe(
	q{INSERT INTO visits (page, ok, ms, at) VALUES ('/d', true, 7, '2026-11-30 12:06:30+00');
	  SELECT count(*) FROM streamforge.advance_ts('page_ms', 'default', '2026-11-30 12:10:00+00')});
$writer->quit;
is( $node->safe_psql('restored',
		q{SET TimeZone = 'UTC'; SELECT page, window_start, n, total_ms, final FROM page_ms
		   WHERE window_start >= '2026-11-30 12:05:00+00' ORDER BY 2}),
	"/d|2026-11-30 12:05:00+00|1|6|t\n/d|2026-11-30 12:06:00+00|1|7|t",
	'the session that wrote before the move writes to the table after it, and marks the moved row final');
is( $node->safe_psql('restored',
		q{SELECT count(*) FROM streamforge.results WHERE pipeline = 'page_ms'}),
	'0', 'and nothing to streamforge.results');

# 0.3.0 -> 0.4.0 (issue 38, issue 42 item 2): the rows of each aggregate
# of 0.3.0 move to a table of its own, typed as its view showed them; the
# partial indexes on streamforge.results go; the views keep their columns,
# owner and grants, and read the new table
my $stats_view = q{SELECT page, window_start, n, mean_ms, var_ms, last_id, final FROM page_stats ORDER BY 1, 2};
my $view_final = q{SELECT page, window_start, n, total_ms, final FROM page_ms ORDER BY 1, 2};
my $catalog = q{SELECT c.relname, c.relowner::regrole, c.relacl,
       (SELECT string_agg(a.attname || ':' || format_type(a.atttypid, a.atttypmod), ',' ORDER BY a.attnum)
          FROM pg_attribute AS a WHERE a.attrelid = c.oid AND a.attnum > 0)
  FROM pg_class AS c WHERE c.relname IN ('page_ms', 'page_stats') ORDER BY 1};
my %before = map { $_ => $node->safe_psql('postgres', $_) } ($view_final, $stats_view, $catalog);
isnt($before{$view_final}, '', 'page_ms has rows before the update');
isnt($before{$stats_view}, '', 'and page_stats');
$node->safe_psql('postgres', "ALTER EXTENSION streamforge UPDATE TO '0.4.0'");
is($node->safe_psql('postgres', $_), $before{$_}, "after the update to 0.4.0: $_")
  for ($view_final, $stats_view, $catalog);
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM streamforge.results WHERE pipeline IN ('page_ms', 'page_stats')}),
	'0', 'the aggregates\' rows left streamforge.results');
is( $node->safe_psql('postgres',
		q{SELECT string_agg(g.name || ':' || (SELECT count(*) FROM pg_class AS c
		      WHERE c.oid = streamforge_internal.aggregate_results_table(g.results_id)::regclass
		        AND c.relowner = (SELECT extowner FROM pg_extension WHERE extname = 'streamforge')), ' ' ORDER BY g.name)
		    FROM streamforge.aggregate AS g}),
	'page_ms:1 page_stats:1', 'each has its table, owned by the extension\'s owner');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_depend AS d JOIN streamforge.aggregate AS g
		      ON d.objid = streamforge_internal.aggregate_results_table(g.results_id)::regclass
		   WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'}),
	'0', 'the tables are not members of the extension (pg_dump writes them)');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_index AS i WHERE i.indrelid = 'streamforge.results'::regclass
		    AND i.indexrelid::regclass::text LIKE 'streamforge.results_aggregate%'}),
	'0', 'no aggregate\'s index is left on streamforge.results');
$node->safe_psql(
	'postgres', q{
INSERT INTO visits (page, ok, ms, at)
SELECT string_agg(md5(i::text), '' ORDER BY i), true, 3, '2026-11-30 12:06:10+00'
  FROM generate_series(1, 320) AS i;
INSERT INTO visits (page, ok, ms, at) VALUES ('/c', true, 4, '2026-11-30 12:07:10+00');
SELECT count(*) FROM streamforge.advance_ts('page_ms', 'default', '2026-11-30 12:10:00+00');
SELECT count(*) FROM streamforge.advance_ts('page_stats', 'default', '2026-11-30 12:10:00+00');
});
is( $node->safe_psql('postgres',
		q{SELECT octet_length(page), n, total_ms FROM page_ms WHERE window_start >= '2026-11-30 12:06:00+00' ORDER BY 1}),
	"2|1|4\n10240|1|3", 'a 10 kB key is emitted, and so is the next window');
# (rows 6 and 7, at 12:00, came after page_ms's watermark passed 12:05:
# late for it)
is( $node->safe_psql('postgres', $view),
	$node->safe_psql('postgres', q{SELECT page, date_bin('1 minute', at, '1970-01-01+00'), count(*), sum(ms)
	  FROM visits WHERE ok AND id > 2 AND id NOT IN (6, 7) GROUP BY 1, 2 ORDER BY 1, 2}),
	'the updated aggregate equals a GROUP BY over the rows since its creation');
like(
	$node->safe_psql(
		'postgres', q{SET enable_seqscan = off; EXPLAIN (COSTS OFF) SELECT * FROM page_ms WHERE page = '/a'}),
	qr/Index Scan using a[0-9]+_keys on a[0-9]+ .*a[0-9]+_long/s,
	'the updated view reads its table\'s indexes');

$node->stop;
done_testing();
