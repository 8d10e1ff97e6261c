# Owners and grants survive pg_dump / pg_restore into another cluster whose
# roles have different OIDs: the privilege columns are regrole, so the dump
# names the roles and the restore maps the names to the new cluster's
# roles.  The restored pipeline admits and refuses the same roles.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $roles = "
CREATE ROLE alice LOGIN;
CREATE ROLE bob LOGIN;
CREATE ROLE carol LOGIN;
CREATE ROLE team NOLOGIN;
GRANT team TO carol;
";
my $usage = "GRANT USAGE ON SCHEMA streamforge TO alice, bob, carol, team;";

my $src = PostgreSQL::Test::Cluster->new('owners_src');
$src->init;
$src->start;
$src->safe_psql('postgres', $roles);
$src->safe_psql('postgres', 'CREATE EXTENSION streamforge');
$src->safe_psql('postgres', $usage);

# alice creates and feeds a pipeline with outputs; bob may read it, the
# team (and so carol) may ingest
$src->safe_psql(
	'postgres', "
SET ROLE alice;
SELECT streamforge.create_pipeline('owned', ARRAY['a'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.configure_outputs('owned');
SELECT streamforge.grant('owned', 'bob', 'read');
SELECT streamforge.grant('owned', 'team', 'ingest');
SELECT count(*) FROM streamforge.ingest('owned', 'a', 0, 'e0', 'k', 1, 5);
SELECT count(*) FROM streamforge.advance('owned', 'a', 10);
");

my $acl_sql = "SELECT owner::text, readers::text, ingesters::text, admins::text
                 FROM streamforge.pipeline WHERE name = 'owned'";
my $acl_before = $src->safe_psql('postgres', $acl_sql);
is($acl_before, 'alice|{bob}|{team}|{}', 'owner and grants before the dump');

my $dump = $src->basedir . '/owners.dump';
$src->command_ok(
	[ 'pg_dump', '-Fc', '-f', $dump, '-d', $src->connstr('postgres') ],
	'pg_dump');

# the other cluster has the same role names at other OIDs
my $dst = PostgreSQL::Test::Cluster->new('owners_dst');
$dst->init;
$dst->start;
$dst->safe_psql('postgres',
	"CREATE ROLE filler1; CREATE ROLE filler2; CREATE ROLE filler3; $roles");
$dst->safe_psql('postgres', 'CREATE DATABASE restored');
$dst->command_ok(
	[
		'pg_restore', '--exit-on-error', '-d',
		$dst->connstr('restored'), $dump
	],
	'pg_restore into another cluster');

isnt(
	$src->safe_psql('postgres', "SELECT 'alice'::regrole::oid"),
	$dst->safe_psql('postgres', "SELECT 'alice'::regrole::oid"),
	'the role alice has another OID in the second cluster');
is($dst->safe_psql('restored', $acl_sql),
	$acl_before, 'owner and grants name the same roles after the restore');

# the same roles are admitted and refused
$dst->safe_psql('restored', $usage);
sub try
{
	my ($role, $sql) = @_;
	my ($ret, $out, $err) =
	  $dst->psql('restored', "SET ROLE $role; $sql", on_error_stop => 1);
	return $ret == 0 ? "ok:$out" : ($err =~ /permission denied/ ? 'denied' : "error:$err");
}

is( try('alice', "SELECT count(*) FROM streamforge.ingest('owned', 'a', 1, 'e1', 'k', 12, 3)"),
	'ok:0', 'the owner ingests');
is( try('carol', "SELECT count(*) FROM streamforge.ingest('owned', 'a', 2, 'e2', 'k', 13, 4)"),
	'ok:0', 'a member of the ingesting team ingests');
is(try('bob', "SELECT count(*) FROM streamforge.advance('owned', 'a', 20)"),
	'denied', 'a reader may not advance');
is(try('bob', "SELECT streamforge.watermark('owned')"),
	'ok:10', 'a reader reads');
is(try('bob', "SELECT string_agg(seq::text, ',' ORDER BY seq) FROM streamforge.changelog"),
	'ok:1', 'a reader sees the pipeline\'s restored changelog');
is(try('team', "SELECT streamforge.drop_pipeline('owned')"),
	'denied', 'an ingester may not drop');
is(try('alice', "SELECT count(*) FROM streamforge.advance('owned', 'a', 20)"),
	'ok:1', 'the owner advances; outputs are written');
is( $dst->safe_psql('restored',
		"SELECT string_agg(seq || ':' || op || ':' || count, ',' ORDER BY seq) FROM streamforge.changelog"),
	'1:upsert:1,2:upsert:2',
	'the changelog goes on after the restored rows');

# the tables stay closed after the restore
is(try('alice', 'SELECT count(*) FROM streamforge.pipeline'),
	'denied', 'the pipeline table is closed after the restore');

done_testing();
