# Outputs across sessions (docs/outputs.md):
# - notifications on channel streamforge_changes reach other sessions when,
#   and only when, the write calls commit, with the documented payload;
# - a configuration change made by another session applies to a
#   long-lived session's next write call (the per-backend cache is
#   invalidated), also when that call waited for the configuring
#   transaction's lock, and after the pipeline was dropped and re-created.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('sink_sessions');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION streamforge');

sub sql { return $node->safe_psql('postgres', shift) }

# --- notifications ---

sql(q{SELECT streamforge.create_pipeline('n"1', ARRAY['a'],
          ARRAY[streamforge.fixed('f', 10)], 0);
      SELECT streamforge.configure_outputs('n"1')});

# payloads name the pipeline by id (0.3.0, issue 25: src/persist/notify.c)
my $nid = sql(q{SELECT pipeline_id FROM streamforge.notify_channel('n"1')});
my $nep = sql(q{SELECT epoch FROM streamforge.output_config WHERE pipeline = 'n"1'});
my $listener = $node->background_psql('postgres');
$listener->query_safe('LISTEN streamforge_changes');

# The notifications the listener received since the last call.
sub received
{
	my $out = $listener->query_safe('SELECT 1');
	my @payloads =
	  $out =~ /Asynchronous notification "streamforge_changes" with payload "(.*)" received/g;
	return join("\n", @payloads);
}

sql(q{SELECT count(*) FROM streamforge.ingest('n"1', 'a', 0, 'e0', 'k', 1, 1)});
is(received(), '', 'a call without changes notifies nothing');

sql(q{SELECT count(*) FROM streamforge.advance('n"1', 'a', 10)});
is(received(), qq({"pipeline_id": $nid, "epoch": $nep, "seq": 1, "late_seq": 0}),
	'a committed call notifies its pipeline and last seq');

sql(q{BEGIN;
      SELECT count(*) FROM streamforge.ingest('n"1', 'a', 1, 'e1', 'k', 11, 1);
      SELECT count(*) FROM streamforge.advance('n"1', 'a', 20);
      ROLLBACK});
is(received(), '', 'a rolled-back transaction notifies nothing');

sql(q{BEGIN;
      SELECT count(*) FROM streamforge.ingest('n"1', 'a', 1, 'e1', 'k', 11, 1);
      SAVEPOINT s;
      SELECT count(*) FROM streamforge.advance('n"1', 'a', 20);
      ROLLBACK TO SAVEPOINT s;
      SELECT count(*) FROM streamforge.advance('n"1', 'a', 30);
      SELECT count(*) FROM streamforge.ingest('n"1', 'a', 2, 'e2', 'k', 3, 1);
      COMMIT});
is( received(),
	qq({"pipeline_id": $nid, "epoch": $nep, "seq": 2, "late_seq": 0}\n)
	  . qq({"pipeline_id": $nid, "epoch": $nep, "seq": 2, "late_seq": 1}),
	'one notification per committed call with output, none for the rolled-back savepoint'
);

sql(q{SELECT streamforge.configure_outputs('n"1', notify => false);
      SELECT count(*) FROM streamforge.advance('n"1', 'a', 40)});
is(received(), '', 'notify off: no notification');
is( sql(q{SELECT count(*) FROM streamforge.ingest('n"1', 'a', 3, 'e3', 'k', 55, 1);
          SELECT count(*) FROM streamforge.advance('n"1', 'a', 60);
          SELECT max(seq) FROM streamforge.changelog WHERE pipeline = 'n"1'}),
	"0\n1\n3", 'notify off: the changelog still grows');
$listener->quit;

# --- configuration changes reach a long-lived session ---

sql(q{SELECT streamforge.create_pipeline('c', ARRAY['a'],
          ARRAY[streamforge.fixed('f', 10)], 0)});
my $writer = $node->background_psql('postgres');
my $next_offset = 0;
my $next_time = 0;

# One event in a new window and an advance that closes it: one change.
sub write_one
{
	my $sql =
	    "SELECT count(*) FROM streamforge.ingest('c', 'a', $next_offset, "
	  . "'e$next_offset', 'k', $next_time, 1);"
	  . "SELECT count(*) FROM streamforge.advance('c', 'a', "
	  . ($next_time + 10) . ");";
	$next_offset++;
	$next_time += 10;
	return $sql;
}

sub changelog_rows
{
	return sql("SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'c'");
}

$writer->query_safe(write_one());
is(changelog_rows(), '0', 'no outputs configured: nothing written');

sql(q{SELECT streamforge.configure_outputs('c')});
$writer->query_safe(write_one());
is(changelog_rows(), '1', 'outputs configured by another session apply to the next call');

sql(q{SELECT streamforge.disable_outputs('c')});
$writer->query_safe(write_one());
is(changelog_rows(), '1', 'outputs disabled by another session: nothing more written');

# The writer waits for the row lock of a transaction that turns the outputs
# on; once it commits, the writer's call must see the new configuration.
my $config = $node->background_psql('postgres');
$config->query_safe('BEGIN');
$config->query_safe(q{SELECT streamforge.configure_outputs('c')});
$writer->query_until(qr/started/, "\\echo started\n" . write_one() . "\n");
$node->poll_query_until('postgres',
	"SELECT count(*) = 1 FROM pg_stat_activity "
	  . "WHERE wait_event_type = 'Lock' AND query LIKE '%streamforge.ingest%'")
  or die 'the writer did not wait for the configuring transaction';
$config->query_safe('COMMIT');
$writer->query_safe('SELECT 1');
is(changelog_rows(), '2',
	'a call that waited for the configuring transaction writes the outputs');
is( sql(q{SELECT string_agg(seq::text, ',' ORDER BY seq) FROM streamforge.changelog
           WHERE pipeline = 'c'}),
	'2,4', 'the changelog holds the changes made while it was on, with their seq');

# Dropped and re-created by another session: the new pipeline has no
# outputs, whatever the writer had cached.
sql(q{SELECT streamforge.drop_pipeline('c');
      SELECT streamforge.create_pipeline('c', ARRAY['a'],
          ARRAY[streamforge.fixed('f', 10)], 0)});
$next_offset = 0;
$writer->query_safe(write_one());
is(changelog_rows(), '0', 'a re-created pipeline starts without outputs');
is(sql(q{SELECT count(*) FROM streamforge.results WHERE pipeline = 'c'}),
	'0', 'a re-created pipeline has no results');

$config->quit;
$writer->quit;
$node->stop;
done_testing();
