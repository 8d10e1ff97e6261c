# Attachments of 0.2.0 through ALTER EXTENSION UPDATE to 0.3.0 (issue 21):
# a database made at release 0.1.0 (built from its commit by
# scripts/test.sh, passed in SF_RELEASE_INSTALL) is updated to 0.2.0, where
# tables are attached, one of them to a pipeline dropped since (0.2.0 left
# its triggers behind), then to 0.3.0.  The update binds every attachment to
# the id of the pipeline of its name (the orphan to none), keeps its
# mappings, and the attachments go on ingesting at the next offsets;
# drop_pipeline then detaches, and a pipeline re-created under the orphan's
# name receives nothing.  Without SF_RELEASE_INSTALL the test fails with the
# reason: it never skips.

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

my ($install, $package_upgrade) = release_upgrade();

my $node = PostgreSQL::Test::Cluster->new('attach_upgrade', install_path => $install);
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION streamforge');
ok($package_upgrade->() >= 3, 'package upgrade: the new library and scripts are installed');
$node->safe_psql('postgres', "ALTER EXTENSION streamforge UPDATE TO '0.2.0'");
$node->safe_psql(
	'postgres', q{
SELECT streamforge.create_pipeline('pages', ARRAY['web'],
    ARRAY[streamforge.fixed('w', 60)], time_unit => interval '1 second');
CREATE TABLE visits (id bigserial PRIMARY KEY, page text NOT NULL, at timestamptz NOT NULL);
SELECT streamforge.attach('pages', 'visits', event_id => 'id', key => 'page', event_time => 'at');
INSERT INTO visits (page, at) VALUES ('/a', '2026-11-30 12:00:00+00'), ('/b', '2026-11-30 12:00:10+00');
SELECT streamforge.create_pipeline('gone', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
CREATE TABLE left_behind (id integer, k text, t bigint);
SELECT streamforge.attach('gone', 'left_behind', 'id', 'k', 't');
SELECT streamforge.drop_pipeline('gone');
});
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_trigger WHERE tgrelid = 'left_behind'::regclass"),
	'2', '0.2.0 leaves the triggers of a dropped pipeline behind');

$node->safe_psql('postgres', "ALTER EXTENSION streamforge UPDATE TO '0.3.0'");
is( $node->safe_psql('postgres',
		"SELECT source, pipeline, pipeline_id IS NOT DISTINCT FROM streamforge_internal.pipeline_id(pipeline), "
		  . "pipeline_id FROM streamforge.attachments ORDER BY source::text"),
	"left_behind|gone|f|0\nvisits|pages|t|1",
	'the update binds each attachment to its pipeline, the orphan to none');
is( $node->safe_psql('postgres',
		"SELECT tgname, tgnargs, pg_catalog.pg_get_triggerdef(oid) ~ 'AFTER UPDATE .* REFERENCING OLD TABLE AS old_rows FOR EACH ROW WHEN' "
		  . "FROM pg_trigger WHERE tgrelid = 'visits'::regclass ORDER BY tgname"),
	"streamforge_attach_b3b32a2d422265cd|9|f\nstreamforge_attach_b3b32a2d422265cd_update|9|t",
	'with the triggers attach() makes now');
$node->safe_psql('postgres',
	"INSERT INTO visits (page, at) VALUES ('/c', '2026-11-30 12:01:00+00')");
is( $node->safe_psql('postgres',
		"SELECT consumed_offset FROM streamforge.partitions('pages')"),
	'2', 'the updated attachment ingests at the next offset');
is( $node->safe_psql('postgres',
		"SELECT key, count FROM streamforge.live_ts('pages') ORDER BY key"),
	"/a|1\n/b|1\n/c|1", 'with its mappings unchanged');
my ($ret, $out, $err) = $node->psql('postgres', 'ALTER TABLE visits DROP COLUMN page');
isnt($ret, 0, 'a column the mappings read cannot be dropped');

# the orphan: a pipeline of the same name receives nothing
$node->safe_psql('postgres',
	"SELECT streamforge.create_pipeline('gone', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)])");
($ret, $out, $err) = $node->psql('postgres', "INSERT INTO left_behind VALUES (1, 'k', 1)");
like($err, qr/pipeline "gone" attached to table public.left_behind was dropped/,
	'the orphan refuses inserts');
is( $node->safe_psql('postgres', "SELECT deliveries FROM streamforge.stats('gone')"),
	'0', 'the re-created pipeline received nothing');

# drop_pipeline detaches now
$node->safe_psql('postgres', "SELECT streamforge.drop_pipeline('pages')");
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_trigger WHERE tgrelid = 'visits'::regclass"),
	'0', 'drop_pipeline detaches');
$node->safe_psql('postgres',
	"INSERT INTO visits (page, at) VALUES ('/d', '2026-11-30 12:02:00+00')");

$node->stop;
done_testing();
