# Installing and updating into schemas someone else prepared (issue 21,
# item 1; sql/schema/00_guard.sql, docs/security.md "Threat model").
#
# The attack: a role with CREATE on the database (here its owner, not a
# superuser) creates the schema streamforge before the extension is
# installed and puts a look-alike nextval(text) in it.  CREATE EXTENSION
# used that schema, and the install script's unqualified
# DEFAULT nextval('streamforge.pipeline_id_seq') bound to the look-alike,
# which ran as the next caller of create_pipeline: as superuser, whoever
# installed or used the extension.  Release 0.1.0 (built by scripts/test.sh,
# SF_RELEASE_INSTALL, as for test/t/090_upgrade.pl) shows the attack
# working; the new version refuses:
#   - CREATE EXTENSION into a streamforge schema owned by a role that is not
#     a superuser, or that grants CREATE to another role, or that holds an
#     object that is not the extension's (42501, 42501, 42P06);
#   - CREATE EXTENSION with a streamforge_internal schema that exists
#     already (42P06);
#   - ALTER EXTENSION UPDATE from 0.1.0 (the frozen 0.1.0 -> 0.2.0 script
#     and on to the new version) and from 0.2.0 under the same rules;
# and in each case the attacker's function never runs (the role stays
# without superuser).  An empty schema made by a superuser is accepted,
# and an update repairs a default that 0.1.0 bound to a look-alike once the
# administrator has removed it.

use strict;
use warnings;

use File::Copy qw(copy);
use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $release = $ENV{SF_RELEASE_VERSION} // '0.1.0';
my $old_install = $ENV{SF_RELEASE_INSTALL} // '';

# The look-alike of the issue: it makes its owner superuser when a
# superuser (or the extension's owner, running create_pipeline's queries)
# calls it.
sub lookalike
{
	my ($role, $schema, $name) = @_;
	$schema //= 'streamforge';
	$name //= 'nextval';
	return qq{
CREATE FUNCTION $schema.$name(seq text) RETURNS bigint LANGUAGE plpgsql AS \$f\$
BEGIN
    EXECUTE 'ALTER ROLE $role SUPERUSER';
    RETURN pg_catalog.nextval(seq::pg_catalog.regclass);
END \$f\$;
};
}

sub is_super
{
	my ($node, $role) = @_;
	return $node->safe_psql('postgres', "SELECT rolsuper FROM pg_roles WHERE rolname = '$role'");
}

sub extversion
{
	my ($node, $db) = @_;
	return $node->safe_psql($db,
		"SELECT coalesce((SELECT extversion FROM pg_extension WHERE extname = 'streamforge'), 'none')");
}

# Runs $sql in $db (as $user, default the bootstrap superuser) with the
# SQLSTATE in the messages; returns (exit code, stderr).
sub run_sql
{
	my ($node, $db, $sql, $user) = @_;
	my ($ret, $stdout, $stderr) = $node->psql($db, "\\set VERBOSITY verbose\n$sql",
		$user ? (extra_params => [ '-U', $user ]) : ());
	return ($ret, $stderr);
}

# The default of pipeline.id, and the functions it calls that are not
# built in (a dependency on pg_catalog's nextval is not recorded: it is
# pinned).
my $default_fn = q{
SELECT pg_get_expr(ad.adbin, ad.adrelid) || ' calls '
       || coalesce((SELECT string_agg(p.oid::regprocedure::text, ', ')
                      FROM pg_depend d JOIN pg_proc p ON p.oid = d.refobjid
                     WHERE d.classid = 'pg_attrdef'::regclass AND d.objid = ad.oid
                       AND d.refclassid = 'pg_proc'::regclass), 'only built-in functions')
  FROM pg_attrdef ad
 WHERE ad.adrelid = 'streamforge.pipeline'::regclass AND ad.adnum = 1
};
my $default_ok = q{nextval('streamforge.pipeline_id_seq'::regclass) calls only built-in functions};

# ------------------------------------------------------------------
# CREATE EXTENSION on the new version
# ------------------------------------------------------------------
my $node = PostgreSQL::Test::Cluster->new('takeover');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
CREATE ROLE app LOGIN;
CREATE DATABASE appdb OWNER app;
CREATE DATABASE appdb2 OWNER app;
CREATE DATABASE granted;
CREATE DATABASE filled;
CREATE DATABASE legit;
CREATE DATABASE plain;
});

# 1. The attack of the issue, as the database's owner.
$node->safe_psql('appdb', "CREATE SCHEMA streamforge;\n" . lookalike('app'),
	extra_params => [ '-U', 'app' ]);
my ($ret, $err) = run_sql($node, 'appdb', 'CREATE EXTENSION streamforge');
isnt($ret, 0, 'CREATE EXTENSION into a schema the attacker made is refused');
like($err,
	qr/ERROR:  42501: schema "streamforge" is owned by role "app", which is neither a superuser nor the owner of extension "streamforge"/,
	'... with 42501 naming the schema and its owner');
like($err, qr/DETAIL:  The owner of a schema can drop and replace the objects in it/, '... a detail');
like($err, qr/HINT:  Find out who created the schema and why/, '... and a hint');
is(extversion($node, 'appdb'), 'none', '... and nothing is installed');
($ret, $err) = run_sql($node, 'appdb',
	q{SELECT streamforge.create_pipeline('x', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])}, 'app');
isnt($ret, 0, 'the attacker cannot call create_pipeline');
is(is_super($node, 'app'), 'f', 'the attacker is not superuser');

# 2. A pre-created streamforge_internal, with a look-alike in it.
$node->safe_psql('appdb2', "CREATE SCHEMA streamforge_internal;\n"
	  . lookalike('app', 'streamforge_internal', 'unit_us'),
	extra_params => [ '-U', 'app' ]);
($ret, $err) = run_sql($node, 'appdb2', 'CREATE EXTENSION streamforge');
isnt($ret, 0, 'CREATE EXTENSION with a pre-created streamforge_internal is refused');
like($err,
	qr/ERROR:  42P06: schema "streamforge_internal" already exists and is not a member of extension "streamforge"/,
	'... with 42P06 naming the schema');
like($err, qr/DETAIL:  streamforge creates this schema itself\.  One made by someone else \(here owned by role "app"\)/,
	'... and a detail naming its owner');
is(extversion($node, 'appdb2'), 'none', '... and nothing is installed');
is($node->safe_psql('appdb2', "SELECT count(*) FROM pg_namespace WHERE nspname = 'streamforge'"),
	'0', '... not even the schema streamforge');
is(is_super($node, 'app'), 'f', 'the attacker is not superuser');

# 3. A schema a superuser made, but with CREATE granted to the attacker.
$node->safe_psql('granted', 'CREATE SCHEMA streamforge; GRANT CREATE, USAGE ON SCHEMA streamforge TO app');
$node->safe_psql('granted', lookalike('app'), extra_params => [ '-U', 'app' ]);
($ret, $err) = run_sql($node, 'granted', 'CREATE EXTENSION streamforge');
like($err, qr/ERROR:  42501: schema "streamforge" grants CREATE to app/,
	'CREATE EXTENSION into a schema that grants CREATE to another role is refused (42501)');
like($err, qr/HINT:  Revoke it \(REVOKE CREATE ON SCHEMA streamforge FROM app\)/, '... with the REVOKE in the hint');
$node->safe_psql('granted', 'REVOKE CREATE ON SCHEMA streamforge FROM app');
($ret, $err) = run_sql($node, 'granted', 'CREATE EXTENSION streamforge');
like($err,
	qr/ERROR:  42P06: schema "streamforge" contains function streamforge.nextval\((?:pg_catalog\.)?text\), which is not a member of extension "streamforge"/,
	'once revoked, the look-alike left in it still refuses CREATE EXTENSION (42P06)');
like($err, qr/DETAIL:  The schema holds 1 object that the extension did not create/, '... counted in the detail');
is(extversion($node, 'granted'), 'none', '... and nothing is installed');
is(is_super($node, 'app'), 'f', 'the attacker is not superuser');

# 4. A superuser's schema holding another object (a table: it has no
# function, but the rule is that the schema holds only the extension).
$node->safe_psql('filled', 'CREATE SCHEMA streamforge; CREATE TABLE streamforge.notes (t text)');
($ret, $err) = run_sql($node, 'filled', 'CREATE EXTENSION streamforge');
like($err, qr/ERROR:  42P06: schema "streamforge" contains table streamforge.notes, which is not a member/,
	'a superuser schema holding a table of its own is refused');

# 5. An empty schema made by a superuser beforehand is fine, and so is the
# plain case; the default calls pg_catalog's nextval.
$node->safe_psql('legit', 'CREATE SCHEMA streamforge; GRANT USAGE ON SCHEMA streamforge TO app');
($ret, $err) = run_sql($node, 'legit', 'CREATE EXTENSION streamforge');
is($ret, 0, 'CREATE EXTENSION into an empty schema a superuser made succeeds') or diag($err);
($ret, $err) = run_sql($node, 'legit',
	q{SELECT streamforge.create_pipeline('x', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])}, 'app');
is($ret, 0, '... and another role creates a pipeline in it') or diag($err);
is($node->safe_psql('legit', $default_fn), $default_ok,
	"... whose id comes from pg_catalog's nextval");
is(is_super($node, 'app'), 'f', 'the role is not superuser');
($ret, $err) = run_sql($node, 'plain', "CREATE EXTENSION streamforge;\nSELECT streamforge.create_pipeline('x', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])");
is($ret, 0, 'CREATE EXTENSION in a database without the schemas succeeds') or diag($err);
# inside a transaction that made the schema, and under a savepoint too
($ret, $err) = run_sql($node, 'plain', q{
DROP EXTENSION streamforge; DROP SCHEMA streamforge;
BEGIN; CREATE SCHEMA streamforge; SAVEPOINT s; CREATE EXTENSION streamforge; COMMIT;
});
is($ret, 0, "CREATE EXTENSION after a superuser's CREATE SCHEMA in the same transaction succeeds") or diag($err);
($ret, $err) = run_sql($node, 'plain', q{
DROP EXTENSION streamforge; DROP SCHEMA streamforge;
BEGIN; CREATE SCHEMA streamforge AUTHORIZATION app; CREATE EXTENSION streamforge; COMMIT;
});
like($err, qr/ERROR:  42501: schema "streamforge" is owned by role "app"/,
	'... but not into a schema made for another role in the same transaction');
$node->stop;

# ------------------------------------------------------------------
# ALTER EXTENSION UPDATE from the release
# ------------------------------------------------------------------
if ($old_install eq '' || !-x "$old_install/bin/postgres")
{
	fail("release $release is installed for the update cases");
	diag($ENV{SF_RELEASE_ERROR}
		  || 'SF_RELEASE_INSTALL is not set (run this test through scripts/test.sh, which builds the release)');
	done_testing();
	exit 1;
}

# A copy of the release's private tree, which gets the new version's files
# the way test/t/090_upgrade.pl's package upgrade installs them.
my $tmp = PostgreSQL::Test::Utils::tempdir();
my $pkgroot = "$tmp/pkg";
my ($old_share) = `$old_install/bin/pg_config --sharedir` =~ /(.*)/;
my ($prefix, $libsuffix) = $old_install =~ m{^(.*)(/usr/lib/postgresql/[^/]+)$}
  or die "unexpected layout of $old_install";
my ($sharesuffix) = $old_share =~ m{^\Q$prefix\E(/.*)$}
  or die "unexpected layout of $old_share";
make_path("$pkgroot/usr/lib/postgresql", "$pkgroot/usr/share/postgresql");
system('cp', '-a', $old_install, "$pkgroot$libsuffix") == 0 or die "cp failed";
system('cp', '-a', $old_share, "$pkgroot$sharesuffix") == 0 or die "cp failed";
my $install = "$pkgroot$libsuffix";
my $ext_dir = "$pkgroot$sharesuffix/extension";
my $lib_dir = `$install/bin/pg_config --pkglibdir`;
chomp $lib_dir;
my $new_share = `pg_config --sharedir`;
chomp $new_share;
my $new_lib = `pg_config --pkglibdir`;
chomp $new_lib;

sub package_upgrade
{
	my $stage = "$tmp/stage";
	my $testdir = $ENV{TESTDIR} // '.';
	system("make -s -C '$testdir' PG_CONFIG=pg_config DESTDIR='$stage' install >'$tmp/stage.log' 2>&1") == 0
	  or die "make install into $stage failed: see $tmp/stage.log";
	for my $pair ([ "$stage$new_share/extension", $ext_dir ], [ "$stage$new_lib", $lib_dir ])
	{
		my ($from, $to) = @$pair;
		opendir my $d, $from or die "$from: $!";
		for my $f (grep { -f "$from/$_" } readdir $d)
		{
			copy("$from/$f", "$to/$f.new") or die "copy $from/$f: $!";
			chmod((stat "$from/$f")[2] & 07777, "$to/$f.new");
			rename("$to/$f.new", "$to/$f") or die "rename to $to/$f: $!";
		}
		closedir $d;
	}
}

my $old = PostgreSQL::Test::Cluster->new('release', install_path => $install);
$old->init;
$old->start;
$old->safe_psql('postgres', q{
CREATE ROLE app LOGIN;
CREATE ROLE app0 LOGIN;
CREATE DATABASE demo OWNER app0;
CREATE DATABASE captured OWNER app;
CREATE DATABASE internal OWNER app;
CREATE DATABASE upd_granted;
CREATE DATABASE at020;
});

# The attack works on the release: the test reproduces it.
$old->safe_psql('demo', "CREATE SCHEMA streamforge;\n" . lookalike('app0'), extra_params => [ '-U', 'app0' ]);
$old->safe_psql('demo', 'CREATE EXTENSION streamforge');
$old->safe_psql('demo', q{SELECT streamforge.create_pipeline('x', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])},
	extra_params => [ '-U', 'app0' ]);
is(is_super($old, 'app0'), 't', "release $release: the attack of the issue makes the role superuser");
$old->safe_psql('postgres', 'ALTER ROLE app0 NOSUPERUSER');

# Databases at the release, each prepared by the attacker in one way.
# captured: the release was installed into the attacker's schema, so its
# default calls the look-alike (nobody has created a pipeline yet).
$old->safe_psql('captured', "CREATE SCHEMA streamforge;\n" . lookalike('app'), extra_params => [ '-U', 'app' ]);
$old->safe_psql('captured', 'CREATE EXTENSION streamforge');
like($old->safe_psql('captured', $default_fn), qr/ calls streamforge\.nextval\((?:pg_catalog\.)?text\)$/,
	"release $release installed into the attacker's schema: the default calls the look-alike");
# internal: the update from 0.1.0 creates streamforge_internal; the
# attacker (the database's owner) made it first.
$old->safe_psql('internal', 'CREATE EXTENSION streamforge');
$old->safe_psql('internal', "CREATE SCHEMA streamforge_internal;\n"
	  . lookalike('app', 'streamforge_internal', 'unit_us'), extra_params => [ '-U', 'app' ]);
# upd_granted: an administrator granted CREATE on the schema to the
# attacker, who planted a look-alike.
$old->safe_psql('upd_granted', 'CREATE EXTENSION streamforge; GRANT USAGE, CREATE ON SCHEMA streamforge TO app');
$old->safe_psql('upd_granted', lookalike('app'), extra_params => [ '-U', 'app' ]);
$old->safe_psql('at020', 'CREATE EXTENSION streamforge; GRANT USAGE ON SCHEMA streamforge TO app');

package_upgrade();

# internal: the frozen 0.1.0 -> 0.2.0 script refuses, and so does the
# whole chain.
for my $to ("TO '0.2.0'", '')
{
	($ret, $err) = run_sql($old, 'internal', "ALTER EXTENSION streamforge UPDATE $to");
	like($err,
		qr/ERROR:  42P06: schema "streamforge_internal" already exists and is not a member of extension "streamforge"/,
		"ALTER EXTENSION UPDATE $to with a pre-created streamforge_internal is refused (42P06)");
}
is(extversion($old, 'internal'), $release, '... and the extension stays at the release');

# upd_granted: refused while the attacker may create objects, then while
# the look-alike is there; fine once it is gone.
($ret, $err) = run_sql($old, 'upd_granted', 'ALTER EXTENSION streamforge UPDATE');
like($err, qr/ERROR:  42501: schema "streamforge" grants CREATE to app/,
	'ALTER EXTENSION UPDATE with CREATE on the schema granted to another role is refused (42501)');
$old->safe_psql('upd_granted', 'REVOKE CREATE ON SCHEMA streamforge FROM app');
($ret, $err) = run_sql($old, 'upd_granted', 'ALTER EXTENSION streamforge UPDATE');
like($err, qr/ERROR:  42P06: schema "streamforge" contains function streamforge.nextval\((?:pg_catalog\.)?text\), which is not a member/,
	'ALTER EXTENSION UPDATE with a look-alike in the schema is refused (42P06)');
is(extversion($old, 'upd_granted'), $release, '... and the extension stays at the release');
$old->safe_psql('upd_granted', 'DROP FUNCTION streamforge.nextval(text)');
($ret, $err) = run_sql($old, 'upd_granted', 'ALTER EXTENSION streamforge UPDATE');
is($ret, 0, '... and goes through once the look-alike is dropped') or diag($err);
($ret, $err) = run_sql($old, 'upd_granted',
	q{SELECT streamforge.create_pipeline('x', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])}, 'app');
is($ret, 0, 'after the update the role creates a pipeline') or diag($err);

# captured: refused while the attacker owns the schema, then while the
# look-alike is in it; once the administrator has dropped it (CASCADE drops
# the default bound to it), the update brings back pg_catalog's nextval.
($ret, $err) = run_sql($old, 'captured', 'ALTER EXTENSION streamforge UPDATE');
like($err, qr/ERROR:  42501: schema "streamforge" is owned by role "app"/,
	"ALTER EXTENSION UPDATE in the attacker's schema is refused (42501)");
$old->safe_psql('captured', 'ALTER SCHEMA streamforge OWNER TO CURRENT_USER');
($ret, $err) = run_sql($old, 'captured', 'ALTER EXTENSION streamforge UPDATE');
like($err, qr/ERROR:  42P06: schema "streamforge" contains function streamforge.nextval\((?:pg_catalog\.)?text\)/,
	'... and then because of the look-alike');
is(extversion($old, 'captured'), $release, '... and the extension stays at the release');
$old->safe_psql('captured', 'DROP FUNCTION streamforge.nextval(text) CASCADE');
($ret, $err) = run_sql($old, 'captured', 'ALTER EXTENSION streamforge UPDATE');
is($ret, 0, '... and goes through once the look-alike is dropped') or diag($err);
is($old->safe_psql('captured', $default_fn), $default_ok,
	"the update binds the default to pg_catalog's nextval again");
$old->safe_psql('captured', 'GRANT USAGE ON SCHEMA streamforge TO app');
($ret, $err) = run_sql($old, 'captured',
	q{SELECT streamforge.create_pipeline('x', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])}, 'app');
is($ret, 0, '... and the role creates a pipeline') or diag($err);

# at020: updated to 0.2.0 cleanly, then the attacker gets CREATE and plants
# a function: the update from 0.2.0 refuses too.
($ret, $err) = run_sql($old, 'at020', "ALTER EXTENSION streamforge UPDATE TO '0.2.0'");
is($ret, 0, 'a clean database updates to 0.2.0') or diag($err);
$old->safe_psql('at020', 'GRANT CREATE ON SCHEMA streamforge TO app');
$old->safe_psql('at020', lookalike('app', 'streamforge', 'octet_length'), extra_params => [ '-U', 'app' ]);
($ret, $err) = run_sql($old, 'at020', 'ALTER EXTENSION streamforge UPDATE');
like($err, qr/ERROR:  42501: schema "streamforge" grants CREATE to app/,
	'the update from 0.2.0 refuses a schema that grants CREATE');
$old->safe_psql('at020', 'REVOKE CREATE ON SCHEMA streamforge FROM app');
($ret, $err) = run_sql($old, 'at020', 'ALTER EXTENSION streamforge UPDATE');
like($err, qr/ERROR:  42P06: schema "streamforge" contains function streamforge.octet_length\((?:pg_catalog\.)?text\)/,
	'... and one with a look-alike');
is(extversion($old, 'at020'), '0.2.0', '... and the extension stays at 0.2.0');

is(is_super($old, 'app'), 'f', 'the attacker never became superuser');
$old->stop;
done_testing();
