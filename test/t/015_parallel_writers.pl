# Several writers of one parallel pipeline at once (issue 46, build plan
# step 5; the differential test of docs/design/parallel-writers.md, section
# 12): six pgbench clients on four partitions, each transaction inserting a
# few rows into the pipeline's attached table (some of them event ids that
# another transaction delivers too, with the same content: duplicates
# within and across partitions, in flight or committed), sometimes
# reporting its partition's progress, and a quarter of them rolling back.
# The commit order is the order of the head entries (streamforge.journal,
# never compacted here: its rows carry their transaction's xid).  The
# reference replays the committed transactions in that order into a serial
# pipeline with the same definition; the checkpoints (but for the
# "writers" key), the changelogs with their seq, the results and the late
# outputs must be equal.
#
# A second run (par2, five partitions) adds what a commit order read from
# the journal cannot show: a compaction at nearly every commit
# (compaction_threshold = 0 in the writers' sessions), so that open
# writers re-execute on a compacted head at their COMMIT; half of the
# transactions at REPEATABLE READ; savepoints rolled back; mark_idle; and
# a DISCARD ALL now and then.  Its commit order is the order of the
# transactions' commit timestamps (track_commit_timestamp; the head lock
# is held until the commit is visible, so they are the head's order), its
# reference the serial pipeline ser2; pgbench retries a transaction that
# fails with 40001 (a claim that meets a compaction since the
# transaction's first write, which only the commit re-executes).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('parallel_writers');
$node->init;
$node->append_conf('postgresql.conf',
	"max_connections = 30\nstreamforge.compaction_threshold = -1\n"
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
-- the rows and reports of every transaction, in order (id), with its xid
CREATE TABLE raw (id bigint PRIMARY KEY DEFAULT nextval('ids'), eid text NOT NULL,
                  part text NOT NULL, k text NOT NULL, t bigint NOT NULL,
                  v bigint NOT NULL);
CREATE TABLE reports (id bigint PRIMARY KEY DEFAULT nextval('ids'),
                      part text NOT NULL, progress bigint NOT NULL);
CREATE TABLE raw_s (eid text, part text, k text, t bigint, v bigint);
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
INSERT INTO raw (eid, part, k, t, v)
SELECT 'e' || m, 'p' || (:client_id % 4), 'k' || (m % 3), ev_time(m), m % 7
  FROM (SELECT CASE WHEN :dup = 0 AND i = 1 THEN greatest(1, :base - 30) ELSE :base + i END AS m
          FROM generate_series(1, :n) AS i) AS s;
\if :adv = 0
INSERT INTO reports (part, progress) VALUES ('p' || (:client_id % 4), :base - 20);
SELECT count(*) FROM streamforge.advance('par', 'p' || (:client_id % 4), :base - 20);
\endif
\if :fail = 0
ROLLBACK;
\else
COMMIT;
\endif
};

$node->pgbench(
	'--no-vacuum --client=6 --jobs=2 --transactions=80',
	0,
	[qr{processed: 480/480}],
	[qr{^$}],
	'six concurrent writers of one parallel pipeline with random rollbacks',
	{ '015_parallel_writers' => $script });

# The serial reference: the committed transactions in the order of their
# head entries, each one's rows and reports in their order.
$node->safe_psql(
	'postgres', q{
DO $$
DECLARE
    tx record;
    op record;
BEGIN
    FOR tx IN SELECT j.xmin::text::bigint AS x FROM streamforge.journal j
                JOIN streamforge.pipeline p ON p.id = j.pipeline_id
               WHERE p.name = 'par' ORDER BY j.pos LOOP
        FOR op IN SELECT id, eid, part, k, t, v, NULL::bigint AS progress
                    FROM raw WHERE xmin::text::bigint = tx.x
                  UNION ALL
                  SELECT id, NULL, part, NULL, NULL, NULL, progress
                    FROM reports WHERE xmin::text::bigint = tx.x
                  ORDER BY id LOOP
            IF op.eid IS NOT NULL THEN
                INSERT INTO raw_s VALUES (op.eid, op.part, op.k, op.t, op.v);
            ELSE
                PERFORM count(*) FROM streamforge.advance('ser', op.part, op.progress);
            END IF;
        END LOOP;
    END LOOP;
END $$;
});

my ($entries, $rows, $dups, $late) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT (SELECT count(*) FROM streamforge.journal j JOIN streamforge.pipeline p
          ON p.id = j.pipeline_id WHERE p.name = 'par'),
       (SELECT count(*) FROM raw),
       (SELECT duplicate_ids FROM streamforge.stats('par')),
       (SELECT late_events FROM streamforge.stats('par'))});
note "head entries $entries, rows $rows, duplicates $dups, late $late";
cmp_ok($entries, '>', 200, 'most transactions committed, each one head entry');
cmp_ok($dups, '>', 0, 'some deliveries were duplicates');
cmp_ok($late, '>', 0, 'some events were late');

# The parallel pipeline $par equals the serial pipeline $ser given the
# committed transactions in commit order: the checkpoint (but for the
# writers key), the changelog with seq, the results and the late output.
sub equal_to_serial
{
	my ($par, $ser, $what) = @_;
	is( $node->safe_psql(
			'postgres', qq{
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('$ser'))::jsonb =
       streamforge.inspect_checkpoint(streamforge.checkpoint('$par'))::jsonb
         #- '{definition,writers}'}),
		't',
		"${what}checkpoint equals the serial run in commit order");

	for my $q (
		[
			'changelog',
			'seq, op, window_name, key, window_start, window_end, count, sum, min, max'
		],
		[
			'results',
			'window_name, key, window_start, window_end, count, sum, min, max, seq, final'
		],
		[
			'late_output',
			'late_seq, partition, source_offset, event_id, key, event_time, value, watermark'
		])
	{
		my ($table, $cols) = @$q;
		is( $node->safe_psql(
				'postgres', qq{
SELECT count(*) FROM (
    (SELECT $cols FROM streamforge.$table WHERE pipeline = '$par'
     EXCEPT ALL SELECT $cols FROM streamforge.$table WHERE pipeline = '$ser')
    UNION ALL
    (SELECT $cols FROM streamforge.$table WHERE pipeline = '$ser'
     EXCEPT ALL SELECT $cols FROM streamforge.$table WHERE pipeline = '$par')) d}),
			'0',
			"${what}$table equals the serial run's");
	}
}

equal_to_serial('par', 'ser', 'the ');

cmp_ok(
	$node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'par'}),
	'>', 0,
	'the changelog is not empty');

# a new connection loads head and lanes from the tables: the same state
is( $node->safe_psql(
		'postgres', q{
SELECT streamforge.inspect_checkpoint(streamforge.checkpoint('ser'))::jsonb =
       streamforge.inspect_checkpoint(streamforge.checkpoint('par'))::jsonb
         #- '{definition,writers}'}),
	't',
	'a load from the tables gives the same checkpoint');


# ---- the second run: compaction, REPEATABLE READ, savepoints, mark_idle
$node->safe_psql(
	'postgres', q{
CREATE TABLE raw2 (id bigint PRIMARY KEY DEFAULT nextval('ids'), eid text NOT NULL,
                   part text NOT NULL, k text NOT NULL, t bigint NOT NULL,
                   v bigint NOT NULL);
-- progress NULL: a mark_idle
CREATE TABLE reports2 (id bigint PRIMARY KEY DEFAULT nextval('ids'),
                       part text NOT NULL, progress bigint);
CREATE TABLE raw2_s (eid text, part text, k text, t bigint, v bigint);
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
INSERT INTO raw2 (eid, part, k, t, v)
SELECT 'x' || m, 'p' || (:client_id % 5), 'k' || (m % 3), ev_time(m), m % 7
  FROM generate_series(:base + 100000, :base + 100002) AS m;
ROLLBACK TO s;
\endif
INSERT INTO raw2 (eid, part, k, t, v)
SELECT 'e' || m, 'p' || (:client_id % 5), 'k' || (m % 3), ev_time(m), m % 7
  FROM (SELECT CASE WHEN :dup = 0 AND i = 1 THEN greatest(1, :base - 30) ELSE :base + i END AS m
          FROM generate_series(1, :n) AS i) AS s;
\if :adv = 0
INSERT INTO reports2 (part, progress) VALUES ('p' || (:client_id % 5), :base - 20);
SELECT count(*) FROM streamforge.advance('par2', 'p' || (:client_id % 5), :base - 20);
\elif :adv = 1
INSERT INTO reports2 (part, progress) VALUES ('p' || (:client_id % 5), NULL);
SELECT count(*) FROM streamforge.mark_idle('par2', 'p' || (:client_id % 5));
\endif
\if :fail = 0
ROLLBACK;
\else
COMMIT;
\endif
};

$node->pgbench(
	'--no-vacuum --client=6 --jobs=2 --transactions=60 --max-tries=20',
	0,
	[qr{processed: 360/360}],
	[qr{^$}],
	'six writers with compactions, REPEATABLE READ, savepoints and mark_idle',
	{ '015_parallel_writers_2' => $script2 });

# the reference: every committed row and report in commit order (a
# subtransaction's rows carry its own xid, with its transaction's commit
# timestamp), each transaction's in their order
$node->safe_psql(
	'postgres', q{
DO $$
DECLARE
    op record;
BEGIN
    FOR op IN SELECT id, eid, part, k, t, v, NULL::bigint AS progress,
                     pg_xact_commit_timestamp(xmin) AS ts
                FROM raw2
              UNION ALL
              SELECT id, NULL, part, NULL, NULL, NULL, progress,
                     pg_xact_commit_timestamp(xmin)
                FROM reports2
              ORDER BY ts, id LOOP
        IF op.eid IS NOT NULL THEN
            INSERT INTO raw2_s VALUES (op.eid, op.part, op.k, op.t, op.v);
        ELSIF op.progress IS NOT NULL THEN
            PERFORM count(*) FROM streamforge.advance('ser2', op.part, op.progress);
        ELSE
            PERFORM count(*) FROM streamforge.mark_idle('ser2', op.part);
        END IF;
    END LOOP;
END $$;
});

my ($txs, $snap, $dups2, $late2) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT (SELECT count(DISTINCT pg_xact_commit_timestamp(xmin)) FROM raw2),
       (SELECT snapshot IS NOT NULL FROM streamforge.pipeline WHERE name = 'par2'),
       (SELECT duplicate_ids FROM streamforge.stats('par2')),
       (SELECT late_events FROM streamforge.stats('par2'))});
note "committed transactions $txs, duplicates $dups2, late $late2";
cmp_ok($txs, '>', 150, 'most transactions of the second run committed');
is($snap, 't', 'the second run compacted');
cmp_ok($dups2, '>', 0, 'some deliveries of the second run were duplicates');
cmp_ok($late2, '>', 0, 'some events of the second run were late');
cmp_ok(
	$node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM streamforge.changelog WHERE pipeline = 'par2'}),
	'>', 0,
	'the second run\'s changelog is not empty');

equal_to_serial('par2', 'ser2', 'the second run\'s ');

$node->stop;
done_testing();
