# Installing and updating the router extension streamforge_proxy into a
# schema someone else prepared (issue 21 item 1 for the router;
# proxy/streamforge_proxy--0.3.0.sql, docs/scale-out.md, docs/security.md
# "Threat model").
#
# The attack: a role with CREATE on the router database (here its owner,
# not a superuser) creates the schema streamforge before the extension is
# installed and puts a look-alike in it: streamforge.fixed(text, integer),
# which streamforge.fixed('f', 10) calls rather than the extension's
# fixed(text, bigint).  0.2.0 (its frozen script is still installable)
# installed into that schema, and the first superuser who built a window
# definition on the router as the docs do made the role superuser.  0.3.0
# refuses the schema (42501 for its owner or a CREATE grant, 42P06 for an
# object that is not the extension's, streamforge's own included), and so
# does the update 0.2.0 -> 0.3.0, after which the catalog equals a fresh
# 0.3.0 install.  The router also no longer lets PL/Proxy fall back to the
# functions plproxy.get_cluster_*() of a schema anyone could make when the
# SQL/MED server streamforge is missing.  In every case the role stays
# without superuser.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('router');
my $sharedir = $node->config_data('--sharedir');
BAIL_OUT("plproxy is not installed in $sharedir/extension (postgresql-15-plproxy)")
  unless -f "$sharedir/extension/plproxy.control";
$node->init;
$node->start;
$node->safe_psql('postgres', q{
CREATE ROLE app LOGIN;
CREATE DATABASE attack OWNER app;
CREATE DATABASE attack020 OWNER app;
CREATE DATABASE granted;
CREATE DATABASE withcore;
CREATE DATABASE compat OWNER app;
CREATE DATABASE compat020 OWNER app;
CREATE DATABASE upd;
CREATE DATABASE captured OWNER app;
CREATE DATABASE fresh;
});
$node->safe_psql($_, 'CREATE EXTENSION plproxy')
  for qw(attack attack020 granted withcore compat compat020 upd captured fresh);

# The look-alike: a better match for streamforge.fixed('f', 10) than the
# extension's fixed(text, bigint); it makes its owner superuser when a
# superuser calls it.
my $lookalike = q{
CREATE FUNCTION streamforge.fixed(name text, size integer) RETURNS text
LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE 'ALTER ROLE app SUPERUSER';
    RETURN name;
END $f$;
};
my $call = q{SELECT streamforge.fixed('f', 10)};

sub is_super
{
	return $node->safe_psql('postgres', "SELECT rolsuper FROM pg_roles WHERE rolname = 'app'");
}

sub extversion
{
	my ($db) = @_;
	return $node->safe_psql($db,
		"SELECT coalesce((SELECT extversion FROM pg_extension WHERE extname = 'streamforge_proxy'), 'none')");
}

# Runs $sql in $db (as $user, default the bootstrap superuser) with the
# SQLSTATE in the messages; returns (exit code, stderr).
sub run_sql
{
	my ($db, $sql, $user) = @_;
	my ($ret, $stdout, $stderr) = $node->psql($db, "\\set VERBOSITY verbose\n$sql",
		$user ? (extra_params => [ '-U', $user ]) : ());
	return ($ret, $stderr);
}

sub as_app { $node->safe_psql($_[0], $_[1], extra_params => [ '-U', 'app' ]); }

# ------------------------------------------------------------------
# The attack works on 0.2.0: the test reproduces it.
# ------------------------------------------------------------------
as_app('attack020', "CREATE SCHEMA streamforge;\n$lookalike");
$node->safe_psql('attack020', "CREATE EXTENSION streamforge_proxy VERSION '0.2.0'");
$node->safe_psql('attack020', $call);
is(is_super(), 't', '0.2.0 installed into the attacker\'s schema: a superuser\'s fixed() makes the role superuser');
$node->safe_psql('postgres', 'ALTER ROLE app NOSUPERUSER');

# ------------------------------------------------------------------
# CREATE EXTENSION (0.3.0)
# ------------------------------------------------------------------
# 1. The attack, as the database's owner.
as_app('attack', "CREATE SCHEMA streamforge;\n$lookalike");
my ($ret, $err) = run_sql('attack', 'CREATE EXTENSION streamforge_proxy');
isnt($ret, 0, 'CREATE EXTENSION streamforge_proxy into a schema the attacker made is refused');
like($err,
	qr/ERROR:  42501: schema "streamforge" is owned by role "app", which is neither a superuser nor the owner of extension "streamforge_proxy"/,
	'... with 42501 naming the schema and its owner');
like($err, qr/DETAIL:  The owner of a schema can drop and replace the objects in it/, '... a detail');
like($err, qr/HINT:  Find out who created the schema and why/, '... and a hint');
is(extversion('attack'), 'none', '... and nothing is installed');
is(is_super(), 'f', 'the attacker is not superuser');

# 2. A superuser's schema with CREATE granted to the attacker, then with
# the look-alike left in it.
$node->safe_psql('granted', 'CREATE SCHEMA streamforge; GRANT CREATE, USAGE ON SCHEMA streamforge TO app');
as_app('granted', $lookalike);
($ret, $err) = run_sql('granted', 'CREATE EXTENSION streamforge_proxy');
like($err, qr/ERROR:  42501: schema "streamforge" grants CREATE to app/,
	'CREATE EXTENSION into a schema that grants CREATE to another role is refused (42501)');
like($err, qr/HINT:  Revoke it \(REVOKE CREATE ON SCHEMA streamforge FROM app\)/, '... with the REVOKE in the hint');
$node->safe_psql('granted', 'REVOKE CREATE ON SCHEMA streamforge FROM app');
($ret, $err) = run_sql('granted', 'CREATE EXTENSION streamforge_proxy');
like($err,
	qr/ERROR:  42P06: schema "streamforge" contains function streamforge.fixed\((?:pg_catalog\.)?text,(?:pg_catalog\.)?integer\), which is not a member of extension "streamforge_proxy"/,
	'once revoked, the look-alike left in it refuses CREATE EXTENSION (42P06)');
is(extversion('granted'), 'none', '... and nothing is installed');
$node->safe_psql('granted', 'DROP FUNCTION streamforge.fixed(text, integer)');
($ret, $err) = run_sql('granted', 'CREATE EXTENSION streamforge_proxy');
is($ret, 0, '... and it goes through once the schema is empty') or diag($err);
is(is_super(), 'f', 'the attacker is not superuser');

# 3. Next to streamforge (the same schema): refused with a clear error.
$node->safe_psql('withcore', 'CREATE EXTENSION streamforge');
($ret, $err) = run_sql('withcore', 'CREATE EXTENSION streamforge_proxy');
like($err,
	qr/ERROR:  42P06: schema "streamforge" contains \w+ streamforge.*?, which is not a member of extension "streamforge_proxy"/,
	'CREATE EXTENSION streamforge_proxy next to streamforge is refused (42P06)');

# ------------------------------------------------------------------
# PL/Proxy's compat mode: without the SQL/MED server "streamforge",
# PL/Proxy calls plproxy.get_cluster_version() and the like from a schema
# "plproxy", which the database's owner may make.
# ------------------------------------------------------------------
my $compat = q{
CREATE SCHEMA plproxy;
CREATE FUNCTION plproxy.get_cluster_version(cluster text) RETURNS integer
LANGUAGE plpgsql AS $f$
BEGIN
    RAISE NOTICE 'look-alike runs as %, superuser %', current_user,
        (SELECT rolsuper FROM pg_roles WHERE rolname = current_user);
    EXECUTE 'ALTER ROLE app SUPERUSER';
    RETURN 1;
END $f$;
CREATE FUNCTION plproxy.get_cluster_partitions(cluster text) RETURNS SETOF text
LANGUAGE sql AS $f$ SELECT 'dbname=postgres'::text $f$;
CREATE FUNCTION plproxy.get_cluster_config(cluster text, OUT key text, OUT val text) RETURNS SETOF record
LANGUAGE sql AS $f$ SELECT 'connect_timeout'::text, '1'::text $f$;
};
# (PL/Proxy fails later, rolling back the ALTER ROLE: the notice shows that
# the attacker's code ran as superuser)
as_app('compat020', $compat);
$node->safe_psql('compat020', "CREATE EXTENSION streamforge_proxy VERSION '0.2.0'");
($ret, $err) = run_sql('compat020', q{SELECT streamforge.inspect_checkpoint('\x00'::bytea)});
like($err, qr/NOTICE:  00000: look-alike runs as \w+, superuser t/,
	"0.2.0: a superuser's inspect_checkpoint() runs the plproxy schema's function as superuser");

as_app('compat', $compat);
$node->safe_psql('compat', 'CREATE EXTENSION streamforge_proxy');
for my $sql (q{SELECT streamforge.inspect_checkpoint('\x00'::bytea)},
	q{SELECT streamforge.create_pipeline('x', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)])},
	q{SELECT streamforge.watermark('x')})
{
	($ret, $err) = run_sql('compat', $sql);
	like($err, qr/ERROR:  55000: cluster "streamforge" is not configured/,
		"without the SQL/MED server, $sql is refused (55000) before PL/Proxy runs");
	unlike($err, qr/look-alike runs/, '... and the look-alike does not run');
}
is(is_super(), 'f', 'the attacker is not superuser');

# ------------------------------------------------------------------
# ALTER EXTENSION streamforge_proxy UPDATE from 0.2.0
# ------------------------------------------------------------------
# upd: installed cleanly at 0.2.0, then CREATE granted to the attacker, who
# plants the look-alike.
$node->safe_psql('upd', "CREATE EXTENSION streamforge_proxy VERSION '0.2.0'");
$node->safe_psql('upd', 'GRANT USAGE, CREATE ON SCHEMA streamforge TO app');
as_app('upd', $lookalike);
($ret, $err) = run_sql('upd', 'ALTER EXTENSION streamforge_proxy UPDATE');
like($err, qr/ERROR:  42501: schema "streamforge" grants CREATE to app/,
	'the update from 0.2.0 refuses a schema that grants CREATE (42501)');
$node->safe_psql('upd', 'REVOKE CREATE ON SCHEMA streamforge FROM app');
($ret, $err) = run_sql('upd', 'ALTER EXTENSION streamforge_proxy UPDATE');
like($err,
	qr/ERROR:  42P06: schema "streamforge" contains function streamforge.fixed\((?:pg_catalog\.)?text,(?:pg_catalog\.)?integer\), which is not a member of extension "streamforge_proxy"/,
	'... and one with the planted look-alike (42P06)');
like($err, qr/DETAIL:  The schema holds 1 object that the extension did not create/, '... counted in the detail');
is(extversion('upd'), '0.2.0', '... and the extension stays at 0.2.0');
$node->safe_psql('upd', 'DROP FUNCTION streamforge.fixed(text, integer); REVOKE ALL ON SCHEMA streamforge FROM app');
($ret, $err) = run_sql('upd', 'ALTER EXTENSION streamforge_proxy UPDATE');
is($ret, 0, '... and goes through once the look-alike is dropped') or diag($err);
is(extversion('upd'), '0.4.0', '... to 0.4.0, through 0.3.0');

# captured: 0.2.0 was installed into the attacker's schema.
as_app('captured', 'CREATE SCHEMA streamforge');
$node->safe_psql('captured', "CREATE EXTENSION streamforge_proxy VERSION '0.2.0'");
($ret, $err) = run_sql('captured', 'ALTER EXTENSION streamforge_proxy UPDATE');
like($err, qr/ERROR:  42501: schema "streamforge" is owned by role "app"/,
	"the update in the attacker's schema is refused (42501)");
is(extversion('captured'), '0.2.0', '... and the extension stays at 0.2.0');
is(is_super(), 'f', 'the attacker never became superuser');

# The catalog: updated against fresh.
$node->safe_psql('fresh', 'CREATE EXTENSION streamforge_proxy');
my $updated = $node->safe_psql('upd', catalog_query());
my $fresh = $node->safe_psql('fresh', catalog_query());
cmp_ok(scalar(split /\n/, $fresh), '>', 60, 'the catalog query sees the extension');
is_lines($updated, $fresh, 'an updated 0.2.0 router has exactly the objects of a fresh 0.4.0 one');

# ALTER EXTENSION streamforge_proxy UPDATE from 0.3.0 (issue 41: the
# window constructors generated from the data node's, px_check_window
# dropped); the router's table keeps its rows
$node->safe_psql('postgres', 'CREATE DATABASE upd030');
$node->safe_psql('upd030', "CREATE EXTENSION plproxy; CREATE EXTENSION streamforge_proxy VERSION '0.3.0'");
$node->safe_psql('upd030', "INSERT INTO streamforge.sharded_pipelines VALUES ('kept', 2)");
is($node->safe_psql('upd030', "SELECT count(*) FROM pg_proc WHERE proname = 'px_check_window'"), '1',
	'0.3.0 checks windows in the router (px_check_window)');
($ret, $err) = run_sql('upd030', 'ALTER EXTENSION streamforge_proxy UPDATE');
is($ret, 0, 'the update from 0.3.0 goes through') or diag($err);
is(extversion('upd030'), '0.4.0', '... to 0.4.0');
is_lines($node->safe_psql('upd030', catalog_query()), $fresh,
	'an updated 0.3.0 router has exactly the objects of a fresh 0.4.0 one (px_check_window gone)');
is($node->safe_psql('upd030', 'SELECT pipeline || shards FROM streamforge.sharded_pipelines'), 'kept2',
	'... and keeps its sharded pipelines');
is($node->safe_psql('upd030', "SELECT streamforge.sliding('w', 10, 0)"), '(w,sliding,10,0,)',
	"... and the generated constructors (the shard checks the window)");
like($fresh, qr/^function: streamforge\.px_ingest\(.* language plproxy .*$/m,
	'... the PL/Proxy functions included');
# (the window constructors, generated for every kind of the node: proxy/gen.pl)
unlike($fresh,
	qr/^function: (?!streamforge\.(?:name_hash|shard_of)\()(?!\S+ args \(name text,[^)]*\) returns streamforge\.window_def kind f volatility i .* config - .* language sql ).* config - /m,
	'every function but the qualified SQL ones pins its search_path');
like($fresh, qr/^function: streamforge\.fixed\(text,bigint\) .* config - .* language sql /m,
	'... which include the window constructors');

# A data node behind the updated router: the PL/Proxy functions with their
# SET search_path work.
my $data = PostgreSQL::Test::Cluster->new('data');
$data->init;
$data->start;
$data->safe_psql('postgres', 'CREATE EXTENSION streamforge');
$node->safe_psql('upd', 'CREATE SERVER streamforge FOREIGN DATA WRAPPER plproxy OPTIONS (p0 '
	  . "'host=" . $data->host . ' port=' . $data->port . " dbname=postgres');"
	  . 'CREATE USER MAPPING FOR PUBLIC SERVER streamforge;');
$node->safe_psql('upd', q{
SELECT streamforge.create_sharded_pipeline('s', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
SELECT streamforge.create_pipeline('x', ARRAY['p'], ARRAY[streamforge.fixed('f', 10)]);
});
is($node->safe_psql('upd', q{
SELECT count(*) FROM streamforge.ingest('x', 'p', 0, 'e0', 'k', 5, 1);
SELECT count(*) FROM streamforge.ingest('s', 'p', 0, 'e0', 'k', 5, 1);
SELECT key, count FROM streamforge.live('x');
SELECT key, count FROM streamforge.live('s');
}), "0\n0\nk|1\nk|1", 'the updated router places, shards, ingests and reads');
is(is_super(), 'f', 'the role is not superuser');

$data->stop;
$node->stop;
done_testing();

# is() for many lines: on failure, lists the lines only one side has.
sub is_lines
{
	my ($got, $want, $name) = @_;
	return pass($name) if $got eq $want;
	my %g = map { $_ => 1 } split /\n/, $got;
	my %w = map { $_ => 1 } split /\n/, $want;
	fail($name);
	diag("only in the updated database:\n  " . join("\n  ", grep { !$w{$_} } split /\n/, $got));
	diag("only in the fresh database:\n  " . join("\n  ", grep { !$g{$_} } split /\n/, $want));
	return 0;
}

# One line per property of every object of the extension (as in
# test/t/090_upgrade.pl), named so that a difference says which object.
sub catalog_query
{
	return q{
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'streamforge_proxy'),
members AS (
    SELECT d.classid, d.objid
      FROM pg_depend d, ext
     WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid
       AND d.deptype = 'e'),
ns AS (SELECT oid FROM pg_namespace WHERE nspname = 'streamforge'),
funcs AS (SELECT p.* FROM pg_proc p, ns WHERE p.pronamespace = ns.oid),
rels AS (SELECT c.* FROM pg_class c, ns WHERE c.relnamespace = ns.oid),
types AS (SELECT t.* FROM pg_type t, ns WHERE t.typnamespace = ns.oid)
SELECT line FROM (
    SELECT 'extension: ' || e.extname || ' schema ' || e.extnamespace::regnamespace
           || ' relocatable ' || e.extrelocatable
           || ' config ' || coalesce((SELECT string_agg(c::regclass::text || '=' || coalesce(e.extcondition[i], ''), ',' ORDER BY c::regclass::text)
                                        FROM unnest(e.extconfig) WITH ORDINALITY AS u(c, i)), '-') AS line
      FROM pg_extension e WHERE e.extname = 'streamforge_proxy'
    UNION ALL
    SELECT 'member: ' || pg_describe_object(classid, objid, 0) FROM members
    UNION ALL
    SELECT 'schema: ' || nspname || ' owner ' || nspowner::regrole
      FROM pg_namespace WHERE oid IN (SELECT oid FROM ns)
    UNION ALL
    SELECT 'function: ' || p.oid::regprocedure || ' args (' || pg_get_function_arguments(p.oid)
           || ') returns ' || pg_get_function_result(p.oid)
           || ' kind ' || p.prokind::text || ' volatility ' || p.provolatile::text || ' parallel ' || p.proparallel::text
           || ' strict ' || p.proisstrict || ' secdef ' || p.prosecdef || ' leakproof ' || p.proleakproof
           || ' cost ' || p.procost || ' rows ' || p.prorows
           || ' config ' || coalesce(p.proconfig::text, '-')
           || ' acl ' || coalesce(p.proacl::text, '-')
           || ' language ' || (SELECT lanname FROM pg_language WHERE oid = p.prolang)
           || ' body md5 ' || md5(coalesce(p.prosrc, '') || '|' || coalesce(p.probin, ''))
           || ' comment ' || coalesce(obj_description(p.oid, 'pg_proc'), '-')
      FROM funcs p
    UNION ALL
    SELECT 'type: ' || format_type(t.oid, NULL) || ' kind ' || t.typtype::text
           || ' acl ' || coalesce(t.typacl::text, '-')
           || ' comment ' || coalesce(obj_description(t.oid, 'pg_type'), '-')
      FROM types t WHERE t.typtype <> 'b' OR t.typelem = 0
    UNION ALL
    SELECT 'relation: ' || c.oid::regclass || ' kind ' || c.relkind::text
           || ' acl ' || coalesce(c.relacl::text, '-')
           || ' comment ' || coalesce(obj_description(c.oid, 'pg_class'), '-')
      FROM rels c
    UNION ALL
    SELECT 'column: ' || c.oid::regclass || ' #' || row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum)
           || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
           || ' notnull ' || a.attnotnull
           || ' default ' || coalesce(pg_get_expr(ad.adbin, ad.adrelid), '-')
           || ' acl ' || coalesce(a.attacl::text, '-')
      FROM rels c JOIN pg_attribute a ON a.attrelid = c.oid
      LEFT JOIN pg_attrdef ad ON ad.adrelid = c.oid AND ad.adnum = a.attnum
     WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p', 'v', 'm', 'c', 'f')
    UNION ALL
    SELECT 'constraint: ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
           || ' deferrable ' || condeferrable
      FROM pg_constraint WHERE connamespace IN (SELECT oid FROM ns)
    UNION ALL
    SELECT 'index: ' || pg_get_indexdef(i.indexrelid)
      FROM pg_index i JOIN rels c ON c.oid = i.indrelid
) AS l
ORDER BY line COLLATE "C";
};
}
