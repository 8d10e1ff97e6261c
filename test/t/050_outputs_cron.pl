# Scheduled advances with a real pg_cron (docs/outputs.md): runs every SQL
# block of docs/recipe-clicks-per-minute.md in order (the recipe itself
# waits for the job's first run before step 6), then checks that the
# minutes the job closed are in the results table and the changelog, with
# consecutive seq, and that the results table is exactly the changelog
# applied.  Then: rescheduling, unscheduling, and drop_pipeline removing the
# jobs of the pipeline.
#
# pg_cron 1.4 (Debian 12) schedules with minute granularity, so the wait
# for the job's first run is bounded by a minute plus a margin (the
# recipe's wait gives up after 120 s).

use strict;
use warnings;

use File::Basename qw(dirname);
use lib dirname(__FILE__);
use DocsBlocks qw(read_blocks);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $sharedir = `pg_config --sharedir`;
chomp $sharedir;
plan skip_all => 'pg_cron is not installed (Debian package postgresql-15-cron)'
  unless -f "$sharedir/extension/pg_cron.control";

my $recipe = dirname(__FILE__) . '/../../docs/recipe-clicks-per-minute.md';
open my $fh, '<', $recipe or die "could not open $recipe: $!";
my $doc = do { local $/; <$fh> };
close $fh;
my @blocks = $doc =~ /^```sql\n(.*?)^```$/gms;
cmp_ok(scalar @blocks, '>=', 8, 'the recipe has its SQL blocks');

my $node = PostgreSQL::Test::Cluster->new('cron');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 20
});
$node->start;

# Run the recipe, block by block, each in a session of its own.
ok((grep { /\bpg_sleep\(/ } @blocks), 'the recipe waits for the job before step 6');
my %out;
for my $i (0 .. $#blocks)
{
	my $sql = $blocks[$i];
	my ($ret, $stdout, $stderr) =
	  $node->psql('postgres', $sql, on_error_stop => 1);
	is($ret, 0, "recipe block " . ($i + 1) . " runs")
	  or diag("block:\n$sql\nerror:\n$stderr");
	$out{$i} = $stdout;
	note("block " . ($i + 1) . " returned:\n$stdout");
	# The recipe waits for the job itself (step 6), as a reader running it
	# by hand must: once that block returns, the job has run.
	if ($sql =~ /\bpg_sleep\(/)
	{
		is( $node->safe_psql('postgres',
				"SELECT EXISTS (SELECT 1 FROM streamforge.changelog "
				  . "WHERE pipeline = 'clicks')"),
			't',
			"the recipe's wait returned once the pg_cron job had advanced the pipeline");
	}
}

# The job ran and succeeded.
my $job = $node->safe_psql('postgres',
	"SELECT jobid FROM cron.job WHERE jobname = "
	  . "streamforge.advance_job_name('clicks', 'web')");
is($job, '', 'the recipe unscheduled its job');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FILTER (WHERE status = 'succeeded') >= 1 "
		  . "AND count(*) FILTER (WHERE status = 'failed') = 0 "
		  . "FROM cron.job_run_details "
		  . "WHERE command LIKE '%advance_to_now(''clicks'', ''web'', 5000, ''ms'')%'"
	),
	't',
	'every run of the job succeeded');

# The changelog: consecutive seq from 1, the closed minutes upserted, and
# the correction (a retraction and an upsert of the same minute).
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) = max(seq) AND min(seq) = 1 "
		  . "FROM streamforge.changelog WHERE pipeline = 'clicks'"),
	't',
	'changelog seq is consecutive from 1');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM streamforge.changelog "
		  . "WHERE pipeline = 'clicks' AND op = 'retract' AND key = '/home'"),
	'1',
	'the late click retracted its minute once');

# The results table is the changelog applied, holds every accepted click
# once, and only closed minutes.
is( $node->safe_psql(
		'postgres', q{
SELECT count(*)
  FROM (SELECT DISTINCT ON (window_name, key, window_start, window_end) *
          FROM streamforge.changelog WHERE pipeline = 'clicks'
         ORDER BY window_name, key, window_start, window_end, seq DESC) AS l
  FULL JOIN (SELECT * FROM streamforge.results WHERE pipeline = 'clicks') AS r
    ON (l.window_name, l.key, l.window_start, l.window_end)
     = (r.window_name, r.key, r.window_start, r.window_end)
 WHERE (l.op = 'upsert') IS DISTINCT FROM (r.pipeline IS NOT NULL)
    OR (l.op = 'upsert'
        AND (l.count, l.sum, l.min, l.max, l.seq)
            IS DISTINCT FROM (r.count, r.sum, r.min, r.max, r.seq))}),
	'0',
	'results equal the changelog applied');
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(key || '=' || n, ',' ORDER BY key) FROM "
		  . "(SELECT key, sum(count) AS n FROM streamforge.results "
		  . "WHERE pipeline = 'clicks' GROUP BY key) AS t"),
	'/home=4,/pricing=2',
	'results count every accepted click once');
is( $node->safe_psql(
		'postgres',
		"SELECT bool_and(window_end <= streamforge.watermark('clicks')) "
		  . "FROM streamforge.results WHERE pipeline = 'clicks'"),
	't',
	'results hold closed minutes only');
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(event_id, ',') FROM streamforge.late_output "
		  . "WHERE pipeline = 'clicks'"),
	'click-0042',
	'the click from an hour ago is in the late output');
my ($correction) = grep { $blocks[$_] =~ /click-1006/ } 0 .. $#blocks;
like($out{$correction}, qr/retract\|\/home.*\n.*upsert\|\/home/,
	'the late click returned a retraction and an upsert');

# Scheduling again replaces the job; unscheduling reports what it did.
my $id1 = $node->safe_psql('postgres',
	"SELECT streamforge.schedule_advance('clicks', 'web', '*/5 * * * *')");
my $id2 = $node->safe_psql('postgres',
	"SELECT streamforge.schedule_advance('clicks', 'web', '*/2 * * * *', 1, 's')"
);
is($id1, $id2, 'scheduling a partition again keeps its job');
is( $node->safe_psql(
		'postgres',
		"SELECT pipeline || ' ' || partition || ' ' || schedule || ' ' || command "
		  . "FROM streamforge.scheduled_advances()"),
	"clicks web */2 * * * * SELECT pg_catalog.count(*) FROM "
	  . "streamforge.advance_to_now('clicks', 'web', 1, 's')",
	'the job advances with the new schedule, delay and unit');
is($node->safe_psql('postgres', "SELECT streamforge.unschedule_advance('clicks', 'web')"),
	't', 'unschedule_advance removes the job');
is($node->safe_psql('postgres', "SELECT streamforge.unschedule_advance('clicks', 'web')"),
	'f', 'a second unschedule_advance finds nothing');

# Bad arguments fail at scheduling time, not at every run.
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"SELECT streamforge.schedule_advance('clicks', 'nope', '* * * * *')");
like($stderr, qr/partition "nope" does not exist/, 'unknown partition');
($ret, $stdout, $stderr) = $node->psql('postgres',
	"SELECT streamforge.schedule_advance('nope', 'web', '* * * * *')");
like($stderr, qr/pipeline "nope" does not exist/, 'unknown pipeline');
($ret, $stdout, $stderr) = $node->psql('postgres',
	"SELECT streamforge.schedule_advance('clicks', 'web', '* * * * *', 0, 'h')");
like($stderr, qr/unknown time unit "h"/, 'unknown unit');
($ret, $stdout, $stderr) = $node->psql('postgres',
	"SELECT streamforge.schedule_advance('clicks', 'web', 'every tuesday')");
isnt($ret, 0, 'pg_cron rejects a bad schedule');
is($node->safe_psql('postgres', 'SELECT count(*) FROM cron.job'),
	'0', 'no job was left behind');

# drop_pipeline removes the pipeline's jobs, and only those.
$node->safe_psql(
	'postgres', q{
SELECT streamforge.create_pipeline('other', ARRAY['p'], ARRAY[streamforge.fixed('w', 10)]);
SELECT streamforge.schedule_advance('clicks', 'web', '* * * * *');
SELECT streamforge.schedule_advance('other', 'p', '* * * * *');
SELECT streamforge.drop_pipeline('clicks');
});
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(pipeline || '/' || partition, ',') "
		  . "FROM streamforge.scheduled_advances()"),
	'other/p',
	'drop_pipeline removed the jobs of the dropped pipeline only');
is( $node->safe_psql(
		'postgres',
		"SELECT (SELECT count(*) FROM streamforge.changelog) + "
		  . "(SELECT count(*) FROM streamforge.results) + "
		  . "(SELECT count(*) FROM streamforge.late_output)"),
	'0',
	'drop_pipeline removed the outputs of the pipeline');

# Jobs of whole pipelines (0.4.0, issue 45 item 1): one job per set of
# pipelines, whatever their order, that runs advance_to_now(pipelines,
# delay) or tick_pipelines(pipelines) over every partition, those added
# later included.  Rather than wait for pg_cron's minute, each job's
# command is run as pg_cron would run it, from cron.job (pg_cron may run
# them too meanwhile: they only advance and tick; the per-partition job of
# cj_z, whose partitions must stay unadvanced, is due on January 1st only).
$node->safe_psql(
	'postgres', q{
SELECT streamforge.create_pipeline(n, ARRAY['a', 'b'],
         ARRAY[streamforge.fixed_interval('w', '1 minute')],
         time_unit => '1 millisecond', idle_timeout => '1 hour')
  FROM unnest(ARRAY['cj_x', 'cj_y', 'cj_z']) AS u(n);
SELECT streamforge.schedule_advance(ARRAY['cj_y', 'cj_x'], '* * * * *', '5 seconds');
SELECT streamforge.schedule_advance(ARRAY['cj_x', 'cj_y', 'cj_x'], '*/2 * * * *', '10 seconds');
SELECT streamforge.schedule_tick(ARRAY['cj_z', 'cj_x'], '* * * * *');
SELECT streamforge.schedule_advance('cj_z', 'a', '0 0 1 1 *', '1 minute');
SELECT count(*) FROM streamforge.add_partition('cj_x', 'c');
});
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(kind || ' ' || pipelines::text || ' ' || coalesce(partition, '-') "
		  . "|| ' ' || schedule, ', ' ORDER BY kind, pipelines::text) FROM streamforge.scheduled_jobs() "
		  . "WHERE pipelines && ARRAY['cj_x', 'cj_y', 'cj_z']"),
	'advance {cj_z} a 0 0 1 1 *, advance_to_now {cj_x,cj_y} - */2 * * * *, tick {cj_x,cj_z} - * * * * *',
	'one job per set of pipelines, in any order; scheduling the set again replaced it');
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(command, E'\\n' ORDER BY jobname) FROM cron.job "
		  . "WHERE jobname NOT LIKE 'streamforge.advance [%'"),
	"SELECT pg_catalog.count(*) FROM streamforge.advance_to_now('{cj_x,cj_y}'::text[], '10000000 microseconds'::interval)\n"
	  . "SELECT pg_catalog.count(*) FROM streamforge.tick_pipelines('{cj_x,cj_z}'::text[])",
	'the commands of the jobs');
# run each command as pg_cron would, each its own transaction
for my $cmd (split /\n/, $node->safe_psql('postgres',
	"SELECT command FROM cron.job WHERE jobname NOT LIKE 'streamforge.advance [%' ORDER BY jobname"))
{
	$node->safe_psql('postgres', $cmd);
}
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(u.n || '/' || t.partition || '=' || (t.progress IS NOT NULL), ',' ORDER BY 1) "
		  . "FROM unnest(ARRAY['cj_x', 'cj_y', 'cj_z']) AS u(n), streamforge.partitions(u.n) AS t"),
	'cj_x/a=true,cj_x/b=true,cj_x/c=true,cj_y/a=true,cj_y/b=true,cj_z/a=false,cj_z/b=false',
	'the advance job advanced every partition of its pipelines, the one added after scheduling too');
# drop_pipeline: a job of the dropped pipeline alone goes, a job of several
# is scheduled again for the others, with its schedule and delay
$node->safe_psql('postgres', q{
SELECT streamforge.schedule_advance(ARRAY['cj_y'], '*/3 * * * *');
SELECT streamforge.drop_pipeline('cj_y');
});
is( $node->safe_psql(
		'postgres',
		"SELECT string_agg(kind || ' ' || pipelines::text || ' ' || schedule || ' ' || command, E'\\n' "
		  . "ORDER BY kind, pipelines::text) FROM streamforge.scheduled_jobs() WHERE kind <> 'advance'"),
	"advance_to_now {cj_x} */2 * * * * SELECT pg_catalog.count(*) FROM streamforge.advance_to_now('{cj_x}'::text[], '10000000 microseconds'::interval)\n"
	  . "tick {cj_x,cj_z} * * * * * SELECT pg_catalog.count(*) FROM streamforge.tick_pipelines('{cj_x,cj_z}'::text[])",
	'drop_pipeline removed the job of the dropped pipeline alone and scheduled the others again without it');
is($node->safe_psql('postgres', "SELECT streamforge.unschedule_tick(ARRAY['cj_x', 'cj_z'])"),
	't', 'unschedule_tick removes the job');
is($node->safe_psql('postgres', "SELECT streamforge.unschedule_tick(ARRAY['cj_z', 'cj_x'])"),
	'f', 'a second unschedule_tick finds nothing');
is($node->safe_psql('postgres', "SELECT streamforge.unschedule_advance(ARRAY['cj_x'])"),
	't', 'unschedule_advance(pipelines) removes the job');
$node->safe_psql('postgres', q{
SELECT streamforge.drop_pipeline(n) FROM unnest(ARRAY['cj_x', 'cj_z']) AS u(n);
});
is($node->safe_psql('postgres', "SELECT count(*) FROM streamforge.scheduled_jobs() WHERE pipelines && ARRAY['cj_x', 'cj_y', 'cj_z']"),
	'0', 'no job of the dropped pipelines is left');

# The blocks of the README and of docs/*.md that need pg_cron (marked
# <!-- docs-test: pg_cron -->; test/t/080_docs.pl runs the others; the
# recipe ran whole above).  They schedule jobs; they only have to run here,
# and their jobs are removed afterwards.
my $top = dirname(__FILE__) . '/../..';
my $ncron = 0;
for my $file ("$top/README.md", grep { !/recipe-clicks-per-minute\.md$/ } sort glob("$top/docs/*.md"))
{
	(my $name = $file) =~ s{^\Q$top\E/}{};
	for my $b (grep { $_->{mode} eq 'pg_cron' } read_blocks($file))
	{
		$ncron++;
		($ret, $stdout, $stderr) =
		  $node->psql('postgres', $b->{sql}, on_error_stop => 1);
		is($ret, 0, "$name block at line $b->{line} runs")
		  or diag("block:\n$b->{sql}\nerror:\n$stderr");
	}
}
cmp_ok($ncron, '>=', 3, 'the README and docs/outputs.md have blocks that need pg_cron');
$node->safe_psql('postgres',
	"SELECT cron.unschedule(jobid) FROM cron.job WHERE jobname LIKE 'streamforge.advance%' OR jobname LIKE 'streamforge.tick [%'");

$node->stop;
done_testing();
