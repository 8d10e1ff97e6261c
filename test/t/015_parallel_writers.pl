# Several writers of one parallel pipeline at once (issue 46, must-show 1;
# the differential test of docs/design/parallel-writers.md, section 12).
# Each run has pgbench clients write one parallel pipeline at once, in
# random transactions, every call through replay.run, which logs it in its
# (sub)transaction (SerialReplay.pm); afterwards the committed calls are
# replayed in commit order (the order of the commit timestamps) into a
# serial pipeline with the same definition, and the checkpoints (but for
# the "writers" key), the changelogs with their seq, the results and the
# late outputs must be equal.
#
# Run 1 (par, four partitions, six clients: two pairs share a partition
# and wait for its claim): each transaction inserts a few rows into the
# pipeline's attached table (some of them event ids another transaction
# delivers too, with the same content: duplicates within and across
# partitions, in flight or committed), sometimes reports its partition's
# progress, and a quarter of them roll back.  The head's journal is never
# compacted here, so its order (its rows carry their transaction's xid)
# is checked against the commit timestamps' order.
#
# Run 2 (par2, five partitions) adds a compaction at nearly every commit
# (compaction_threshold = 0 in the writers' sessions), so that open writers
# re-execute on a compacted head at their COMMIT; half of the transactions
# at REPEATABLE READ; savepoints rolled back; mark_idle; and a DISCARD ALL
# now and then.  pgbench retries a transaction that fails with 40001 (a
# claim that meets a compaction since the transaction's first write, which
# only the commit re-executes).
#
# Run 3 (par3) draws its partition and session counts from the seed
# (SF_SEED; printed): two pgbench processes at once, one of them
# reconnecting for every transaction (-C), the other's sessions loading
# cold now and then (DISCARD ALL, streamforge.cache_size = 0); calls of
# 1-40 rows crossing window boundaries, advance, mark_idle, tick,
# tick_pipelines, finish near the end (deliveries may follow it in its
# transaction) and once after, savepoints rolled back and kept,
# compactions, REPEATABLE READ; and transactions that take the pipeline's
# checkpoint, which must equal the serial replay's state at a place in the
# commit order that transaction allows, and restore it into a copy, which
# must give it back.  (tick with an idle_timeout is not tested: a parallel
# pipeline cannot have one yet.)

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SerialReplay;
use Test::More;

my $seed = $ENV{SF_SEED} // 46015;
note "seed $seed (set SF_SEED to change it)";
srand($seed);

my $node = PostgreSQL::Test::Cluster->new('parallel_writers');
$node->init;
$node->append_conf('postgresql.conf',
	"max_connections = 40\nstreamforge.compaction_threshold = -1\n"
	  . "track_commit_timestamp = on");
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION streamforge;
CREATE SEQUENCE ids;
-- an event's content is a function of its number n, so two deliveries of
-- n are duplicates; every 13th event is 60 behind (late once the
-- watermark passed it)
CREATE FUNCTION ev_time(n bigint) RETURNS bigint LANGUAGE sql IMMUTABLE
    RETURN CASE WHEN n % 13 = 0 THEN n - 150 ELSE n + (n * 37) % 23 - 11 END;
CREATE TABLE raw (eid text, part text, k text, t bigint, v bigint);
CREATE TABLE raw_s (LIKE raw);
SELECT streamforge.create_pipeline(p, ARRAY['p0', 'p1', 'p2', 'p3'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 10)], 5,
    writers => w)
  FROM (VALUES ('par', 'parallel'), ('ser', 'serial')) AS v(p, w);
SELECT streamforge.configure_outputs('par');
SELECT streamforge.configure_outputs('ser');
SELECT streamforge.attach('par', 'raw', event_id => 'eid', key => 'k',
    event_time => 't', value => 'v', partition => 'part');
SELECT streamforge.attach('ser', 'raw_s', event_id => 'eid', key => 'k',
    event_time => 't', value => 'v', partition => 'part');
});
SerialReplay::install($node);

# The committed calls of run $tag replayed into $ser (by @map), then
# compared with $par.
sub replay_and_compare
{
	my ($tag, $par, $ser, $map, $what, $watch) = @_;
	my $txs = SerialReplay::replay($node, $tag, $map, $watch);
	my ($dups, $late, $changes) = split /\|/, $node->safe_psql(
		'postgres', qq{
SELECT (SELECT duplicate_ids FROM streamforge.stats('$par')),
       (SELECT late_events FROM streamforge.stats('$par')),
       (SELECT count(*) FROM streamforge.changelog WHERE pipeline = '$par')});
	note "${what}committed transactions $txs, duplicates $dups, late $late, changes $changes";
	cmp_ok($dups, '>', 0, "${what}some deliveries were duplicates");
	cmp_ok($late, '>', 0, "${what}some events were late");
	cmp_ok($changes, '>', 0, "${what}changelog is not empty");
	SerialReplay::equal($node, $par, $ser, $what);
	return $txs;
}

# :client_id picks the partition (clients 4 and 5 share p0 and p1 with
# clients 0 and 1: they wait for the claim).  An event number is new, or,
# one time in five, one of the last 30 (a duplicate, maybe in flight).
my $script = q{
\set n random(1, 6)
\set dup random(0, 4)
\set adv random(0, 1)
\set fail random(0, 3)
BEGIN;
SELECT nextval('ids') AS base \gset
SELECT replay.run('r1', $$
INSERT INTO raw (eid, part, k, t, v)
SELECT 'e' || m, 'p' || (:client_id % 4), 'k' || (m % 3), ev_time(m), m % 7
  FROM (SELECT CASE WHEN :dup = 0 AND i = 1 THEN greatest(1, :base - 30) ELSE :base + i END AS m
          FROM generate_series(1, :n) AS i) AS s$$);
\if :adv = 0
SELECT replay.run('r1', $$SELECT count(*) FROM streamforge.advance('par', 'p' || (:client_id % 4), :base - 20)$$);
\endif
\if :fail = 0
ROLLBACK;
\else
COMMIT;
\endif
};

SerialReplay::pgbench(
	$node,
	name => 'run 1: six concurrent writers with random rollbacks',
	clients => 6,
	transactions => 80,
	seed => $seed,
	script => $script);

my $txs = replay_and_compare('r1', 'par', 'ser', [qw(par ser raw raw_s)], 'run 1: ');
cmp_ok($txs, '>', 200, 'run 1: most transactions committed');

# the head entries' order (the journal's rows carry their transaction's
# xid) is the commit timestamps' order
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT array_agg(j.xmin::text::bigint ORDER BY j.pos)
          FROM streamforge.journal j JOIN streamforge.pipeline p ON p.id = j.pipeline_id
         WHERE p.name = 'par') =
       (SELECT array_agg(x ORDER BY ts)
          FROM (SELECT DISTINCT xmin::text::bigint AS x, pg_xact_commit_timestamp(xmin) AS ts
                  FROM replay.calls WHERE tag = 'r1') c)}),
	't',
	'run 1: one head entry per committed transaction, in commit timestamp order');

# a new connection loads head and lanes from the tables: the same state
SerialReplay::equal($node, 'par', 'ser', 'run 1, loaded anew: ', outputs => 0);


# ---- run 2: compaction, REPEATABLE READ, savepoints, mark_idle
$node->safe_psql(
	'postgres', q{
CREATE TABLE raw2 (LIKE raw);
CREATE TABLE raw2_s (LIKE raw);
SELECT streamforge.create_pipeline(p, ARRAY['p0', 'p1', 'p2', 'p3', 'p4'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 10)], 5,
    writers => w)
  FROM (VALUES ('par2', 'parallel'), ('ser2', 'serial')) AS v(p, w);
SELECT streamforge.configure_outputs('par2');
SELECT streamforge.configure_outputs('ser2');
SELECT streamforge.attach('par2', 'raw2', event_id => 'eid', key => 'k',
    event_time => 't', value => 'v', partition => 'part');
SELECT streamforge.attach('ser2', 'raw2_s', event_id => 'eid', key => 'k',
    event_time => 't', value => 'v', partition => 'part');
});

# client 5 shares p0 with client 0 (claim waits); a transaction may run at
# REPEATABLE READ, roll a savepoint back, report progress or mark its
# partition idle
my $script2 = q{
\set n random(1, 8)
\set dup random(0, 4)
\set adv random(0, 2)
\set fail random(0, 5)
\set rr random(0, 1)
\set sp random(0, 3)
\set cold random(0, 9)
\if :cold = 0
DISCARD ALL;
\endif
SET streamforge.compaction_threshold = 0;
\if :rr = 0
BEGIN ISOLATION LEVEL REPEATABLE READ;
\else
BEGIN;
\endif
SELECT nextval('ids') AS base \gset
\if :sp = 0
SAVEPOINT s;
SELECT replay.run('r2', $$
INSERT INTO raw2 (eid, part, k, t, v)
SELECT 'x' || m, 'p' || (:client_id % 5), 'k' || (m % 3), ev_time(m), m % 7
  FROM generate_series(:base + 100000, :base + 100002) AS m$$);
ROLLBACK TO s;
\endif
SELECT replay.run('r2', $$
INSERT INTO raw2 (eid, part, k, t, v)
SELECT 'e' || m, 'p' || (:client_id % 5), 'k' || (m % 3), ev_time(m), m % 7
  FROM (SELECT CASE WHEN :dup = 0 AND i = 1 THEN greatest(1, :base - 30) ELSE :base + i END AS m
          FROM generate_series(1, :n) AS i) AS s$$);
\if :adv = 0
SELECT replay.run('r2', $$SELECT count(*) FROM streamforge.advance('par2', 'p' || (:client_id % 5), :base - 20)$$);
\elif :adv = 1
SELECT replay.run('r2', $$SELECT count(*) FROM streamforge.mark_idle('par2', 'p' || (:client_id % 5))$$);
\endif
\if :fail = 0
ROLLBACK;
\else
COMMIT;
\endif
};

SerialReplay::pgbench(
	$node,
	name =>
	  'run 2: six writers with compactions, REPEATABLE READ, savepoints and mark_idle',
	clients => 6,
	transactions => 60,
	seed => $seed,
	options => ['--max-tries=20'],
	script => $script2);

is($node->safe_psql('postgres',
		q{SELECT snapshot IS NOT NULL FROM streamforge.pipeline WHERE name = 'par2'}),
	't', 'run 2: compacted');
$txs = replay_and_compare('r2', 'par2', 'ser2', [qw(par2 ser2 raw2 raw2_s)], 'run 2: ');
cmp_ok($txs, '>', 150, 'run 2: most transactions committed');


# ---- run 3: random counts, reconnects and cold loads, multi-row calls
# across windows, tick, finish, checkpoints restored into copies
my $nparts = 4 + int(rand(5));     # 4..8 partitions
my $clients_a = 2 + int(rand(3));  # 2..4 sessions, loading cold now and then
my $clients_c = 1 + int(rand(2));  # 1..2 sessions reconnecting every transaction
my $per_client = 40;
my $per_client_c = 15;    # a reconnect is slow: they end with the others
note "run 3: $nparts partitions, $clients_a + $clients_c sessions";
my $parts = join(', ', map { "'p$_'" } 0 .. $nparts - 1);
$node->safe_psql(
	'postgres', qq{
CREATE TABLE raw3 (LIKE raw);
CREATE TABLE raw3_s (LIKE raw);
SELECT streamforge.create_pipeline(p, ARRAY[$parts],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 10)], 5,
    writers => w)
  FROM (VALUES ('par3', 'parallel'), ('ser3', 'serial')) AS v(p, w);
SELECT streamforge.create_pipeline('cpy3_' || c, ARRAY[$parts],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 10)], 5,
    writers => 'parallel')
  FROM generate_series(0, $clients_a + $clients_c - 1) AS c;
SELECT streamforge.configure_outputs('par3');
SELECT streamforge.configure_outputs('ser3');
SELECT streamforge.attach('par3', 'raw3', event_id => 'eid', key => 'k',
    event_time => 't', value => 'v', partition => 'part');
SELECT streamforge.attach('ser3', 'raw3_s', event_id => 'eid', key => 'k',
    event_time => 't', value => 'v', partition => 'part');
});

# :me (0 ..) is the session over both processes, its partition me % parts
# (sessions beyond the partitions share one and wait for its claim).  One
# transaction in eight only takes the checkpoint (in a transaction of its
# own: it must not write the pipeline) and restores it into the session's
# copy.  Event numbers are :base * 50 + 1 .. 40: one call's rows span up to
# about five windows; one time in five a call's first event is a
# duplicate of one of an earlier transaction's (maybe in flight, maybe
# rolled back), with the same content.  finish only near the end.
my $script3 = q{
\set me :client_id + :first
\set part :me % :parts
\set n random(1, 40)
\set dup random(0, 4)
\set back random(1, 30)
\set op random(0, 9)
\set op2 random(0, 9)
\set fail random(0, 5)
\set rr random(0, 2)
\set sp random(0, 5)
\set cold random(0, 9)
\set compact random(0, 3)
\set snap random(0, 7)
\set fin random(0, 15)
\if :cold = 0
DISCARD ALL;
\elif :cold = 1
SET streamforge.cache_size = 0;
\else
RESET streamforge.cache_size;
\endif
\if :compact = 0
SET streamforge.compaction_threshold = 0;
\else
RESET streamforge.compaction_threshold;
\endif
SELECT nextval('ids') AS base \gset
\if :snap = 0
SELECT replay.snap('r3', 'par3') AS sid \gset
SELECT streamforge.restore('cpy3_' || :me, cp) FROM replay.snaps WHERE id = :sid;
UPDATE replay.snaps SET copy = replay.cp(streamforge.checkpoint('cpy3_' || :me)) WHERE id = :sid;
\else
\if :rr = 0
BEGIN ISOLATION LEVEL REPEATABLE READ;
\else
BEGIN;
\endif
\if :sp = 0
SAVEPOINT s;
SELECT replay.run('r3', $$
INSERT INTO raw3 (eid, part, k, t, v)
SELECT 'x' || m, 'p' || :part, 'k' || (m % 5), ev_time(m), m % 7
  FROM generate_series(:base * 50 + 1, :base * 50 + 3) AS m$$);
ROLLBACK TO s;
\elif :sp = 1
SAVEPOINT s;
SELECT replay.run('r3', $$SELECT count(*) FROM streamforge.advance('par3', 'p' || :part, :base * 50 - 250)$$);
RELEASE s;
\endif
SELECT replay.run('r3', $$
INSERT INTO raw3 (eid, part, k, t, v)
SELECT 'e' || m, 'p' || :part, 'k' || (m % 5), ev_time(m), m % 7
  FROM (SELECT CASE WHEN :dup = 0 AND i = 1 THEN greatest(1, :base - :back) * 50 + i
                    ELSE :base * 50 + i END AS m
          FROM generate_series(1, :n) AS i) AS s$$);
\if :op = 0
SELECT replay.run('r3', $$SELECT count(*) FROM streamforge.mark_idle('par3', 'p' || :part)$$);
\elif :op < 4
SELECT replay.run('r3', $$SELECT count(*) FROM streamforge.advance('par3', 'p' || :part, :base * 50 - 200)$$);
\elif :op = 4
SELECT replay.run('r3', $$SELECT count(*) FROM streamforge.tick('par3')$$);
\elif :op = 5
SELECT replay.run('r3', $$SELECT count(*) FROM streamforge.tick_pipelines(ARRAY['par3'])$$);
\endif
\if :fin = 0 AND :base > :late
SELECT replay.run('r3', $$SELECT count(*) FROM streamforge.finish('par3')$$);
\endif
\if :op2 = 0
SELECT replay.run('r3', $$
INSERT INTO raw3 (eid, part, k, t, v)
SELECT 'e' || m, 'p' || :part, 'k' || (m % 5), ev_time(m), m % 7
  FROM generate_series(:base * 50 + 41, :base * 50 + 49) AS m$$);
\endif
\if :fail = 0
ROLLBACK;
\else
COMMIT;
\endif
\endif
};

my $base0 = $node->safe_psql('postgres', q{SELECT last_value FROM ids});
my $late =
  $base0 + int(0.85 * ($clients_a * $per_client + $clients_c * $per_client_c));
my @run3;
for my $g ([ $clients_a, 0, $per_client, [] ],
	[ $clients_c, $clients_a, $per_client_c, ['-C'] ])
{
	my ($c, $first, $txs, $extra) = @$g;
	push @run3,
	  SerialReplay::pgbench_start(
		$node,
		name => "run 3: $c sessions" . (@$extra ? ', reconnecting' : ''),
		clients => $c,
		transactions => $txs,
		seed => $seed + $first,
		define => { first => $first, parts => $nparts, late => $late },
		options => [ '--max-tries=20', @$extra ],
		script => $script3);
}
SerialReplay::pgbench_wait($_) for @run3;

# finish once more after the last commit, and deliveries after it in its
# transaction (late) and in the next
$node->safe_psql(
	'postgres', q{
BEGIN;
SELECT replay.run('r3', $$SELECT count(*) FROM streamforge.finish('par3')$$);
SELECT replay.run('r3', $$INSERT INTO raw3 VALUES ('z1', 'p0', 'k1', 7, 2), ('z2', 'p1', 'k2', 1000000000, 3)$$);
COMMIT;
SELECT replay.run('r3', $$INSERT INTO raw3 VALUES ('z3', 'p0', 'k1', 5, 1)$$);
});

my ($finishes, $snaps, $compacted) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT (SELECT count(*) FROM replay.calls WHERE tag = 'r3' AND sql LIKE '%finish%'),
       (SELECT count(*) FROM replay.snaps WHERE tag = 'r3'),
       (SELECT snapshot IS NOT NULL FROM streamforge.pipeline WHERE name = 'par3')});
note "run 3: finish calls $finishes, checkpoints $snaps";
is($compacted, 't', 'run 3: compacted');
$txs = replay_and_compare('r3', 'par3', 'ser3', [qw(par3 ser3 raw3 raw3_s)],
	'run 3: ', 'ser3');
cmp_ok($txs, '>', ($clients_a * $per_client + $clients_c * $per_client_c) / 2,
	'run 3: most transactions committed');
SerialReplay::snapshots($node, 'r3', 'run 3: ');
SerialReplay::equal($node, 'par3', 'ser3', 'run 3, loaded anew: ', outputs => 0);

$node->stop;
done_testing();
