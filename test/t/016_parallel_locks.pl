# No deadlock by design (issue 46 must-show 4, build plan step 7; the
# randomized test of docs/design/parallel-writers.md 8.2): sixteen pgbench
# clients run random transactions over three pipelines, pl_a and pl_b
# parallel and pl_s serial, each mixing deliveries (multi-row inserts into
# the pipelines' attached tables), advances, finish, lock_pipelines with
# and without partitions, tick_pipelines, on the serial pipeline a
# definition change (set_lateness), and on any of them compact,
# grant/revoke and a checkpoint/restore (a parallel pipeline's act at
# commit under its head lock, build plan step 7), with checkpoints of any of them, savepoints that roll back and whole
# rollbacks, in random orders; deadlock_timeout is 10 ms, so a deadlock
# would be found quickly.  Every call runs in a subtransaction that
# catches its error and counts it (in sequences: they survive rollbacks).
# Asserted: no deadlock (no 40P01 caught, none in the server log); every
# 55P03 came from a call that claimed out of order, i.e. a lock ranked
# below one its transaction already held ((pipeline name, lane): lane -1
# for the serial pipeline), tracked per transaction with set_config;
# at the end each pipeline's checkpoint loads in a new connection and its
# partitions have consumed as many offsets as its attached table holds
# committed rows; and each pipeline equals the serial replay of the calls
# that succeeded in committed transactions (SerialReplay.pm: call() logs
# each one in its subtransaction), in commit order, into serial copies of
# the three pipelines (sr_a, sr_b, sr_s).  The errors calls raise (other than 55P03) are written
# to the server log (RAISE LOG).  Bounded by a number of transactions, not by time.

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SerialReplay;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('parallel_locks');
$node->init;
$node->append_conf('postgresql.conf',
	    "max_connections = 40\ndeadlock_timeout = 10ms\n"
	  . "streamforge.compaction_threshold = -1\nlog_lock_waits = off\n"
	  . "track_commit_timestamp = on");
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION streamforge;
CREATE SEQUENCE ids;
CREATE SEQUENCE c_55p03;       -- 55P03 of an out-of-order call
CREATE SEQUENCE bad_55p03;     -- 55P03 of a call in order: a defect
CREATE SEQUENCE c_40p01;       -- deadlocks: a defect
CREATE SEQUENCE c_other;       -- any other error a call raised
CREATE SEQUENCE c_ooo;         -- calls made out of order
SELECT streamforge.create_pipeline(p, ARRAY['p0', 'p1', 'p2', 'p3'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 10)], 5,
    writers => w)
  FROM (VALUES ('pl_a', 'parallel'), ('pl_b', 'parallel'), ('pl_s', 'serial')) AS v(p, w);
CREATE TABLE src_pl_a (eid text, part text, k text, t bigint, v bigint);
CREATE TABLE src_pl_b (LIKE src_pl_a);
CREATE TABLE src_pl_s (LIKE src_pl_a);
SELECT streamforge.attach(p, ('src_' || p)::regclass, event_id => 'eid', key => 'k',
    event_time => 't', value => 'v', partition => 'part')
  FROM unnest(ARRAY['pl_a', 'pl_b', 'pl_s']) AS u(p);

-- the rank of the lock of lane lane of pipeline p (lane -1: a serial
-- pipeline's), as text in the lock order (COLLATE "C")
CREATE FUNCTION rnk(p text, lane int) RETURNS text LANGUAGE sql IMMUTABLE
    RETURN p || ':' || lpad((lane + 1)::text, 3, '0');

-- the highest rank this transaction holds ('' for none)
CREATE FUNCTION held() RETURNS text LANGUAGE sql
    RETURN coalesce(current_setting('sf16.held', true), '');

-- one call: run sql, which claims the locks ranked ranks, in a
-- subtransaction; count its error, if any
CREATE FUNCTION call(sql text, ranks text[]) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    h text := held();
    ooo boolean := EXISTS (SELECT 1 FROM unnest(ranks) AS r(x)
                            WHERE r.x COLLATE "C" < h COLLATE "C");
    top text := (SELECT max(r.x COLLATE "C") FROM unnest(ranks) AS r(x));
BEGIN
    IF ooo THEN PERFORM nextval('c_ooo'); END IF;
    BEGIN
        EXECUTE sql;
        PERFORM replay.log('l', sql);    -- the oracle's (SerialReplay.pm)
        IF top IS NOT NULL AND top COLLATE "C" > h COLLATE "C" THEN
            PERFORM set_config('sf16.held', top, true);
        END IF;
        RETURN true;
    EXCEPTION WHEN OTHERS THEN
        IF SQLSTATE = '55P03' AND ooo THEN
            PERFORM nextval('c_55p03');
        ELSIF SQLSTATE = '55P03' THEN
            PERFORM nextval('bad_55p03');
            RAISE LOG 'in-order 55P03: % (held %, ranks %)', SQLERRM, h, ranks;
        ELSIF SQLSTATE = '40P01' THEN
            PERFORM nextval('c_40p01');
        ELSE
            PERFORM nextval('c_other');
            RAISE LOG 'call error % %: %', SQLSTATE, SQLERRM, sql;
        END IF;
        RETURN false;
    END;
END $$;

-- a random call
CREATE FUNCTION one_call() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r int := floor(random() * 100);
    pipes text[] := ARRAY['pl_a', 'pl_b', 'pl_s'];
    p text := pipes[1 + floor(random() * 3)::int];
    lane int := floor(random() * 4);
    n bigint := nextval('ids');
    rk text := CASE WHEN p = 'pl_s' THEN rnk(p, -1) ELSE rnk(p, lane) END;
    sub text[];
    parts text[];
    ranks text[];
BEGIN
    IF r < 40 THEN
        -- 1-5 rows into one partition; every 11th event 60 behind
        PERFORM call(format(
            'INSERT INTO %I SELECT ''e'' || m, %L, ''k'' || (m %% 3), '
            'CASE WHEN m %% 11 = 0 THEN m - 60 ELSE m END, m %% 7 '
            'FROM generate_series(%s, %s) AS m',
            'src_' || p, 'p' || lane, n * 10, n * 10 + floor(random() * 5)),
            ARRAY[rk]);
    ELSIF r < 55 THEN
        PERFORM call(format(
            'SELECT count(*) FROM streamforge.advance(%L, %L, %s)',
            p, 'p' || lane, n * 10 - 40),
            CASE WHEN p = 'pl_s' THEN ARRAY[rk] ELSE ARRAY[]::text[] END);
    ELSIF r < 56 THEN
        PERFORM call(format('SELECT count(*) FROM streamforge.finish(%L)', p),
            CASE WHEN p = 'pl_s' THEN ARRAY[rk] ELSE ARRAY[]::text[] END);
    ELSIF r < 65 THEN
        sub := ARRAY(SELECT x FROM unnest(pipes) AS x WHERE random() < 0.6
                      ORDER BY random());
        IF random() < 0.5 THEN
            parts := NULL;
        ELSE
            parts := ARRAY(SELECT 'p' || i FROM generate_series(0, 3) AS i
                            WHERE random() < 0.5 ORDER BY random());
        END IF;
        ranks := ARRAY(SELECT CASE WHEN x = 'pl_s' THEN rnk(x, -1) ELSE rnk(x, i) END
                         FROM unnest(sub) AS x, generate_series(0, 3) AS i
                        WHERE x = 'pl_s' OR parts IS NULL OR 'p' || i = ANY (parts));
        PERFORM call(format('SELECT streamforge.lock_pipelines(%L, %L)', sub, parts),
            ranks);
    ELSIF r < 70 THEN
        PERFORM call('SELECT count(*) FROM streamforge.tick_pipelines(ARRAY[''pl_s'', ''pl_b'', ''pl_a''])',
            ARRAY[rnk('pl_s', -1)]);
    ELSIF r < 73 THEN
        PERFORM call(format('SELECT streamforge.set_lateness(''pl_s'', %s)',
                            floor(random() * 20)), ARRAY[rnk('pl_s', -1)]);
    ELSIF r < 75 THEN
        -- a parallel pipeline's: its lane -1 claim, the row at commit
        PERFORM call(format('SELECT streamforge.%s(%L, ''public'', ''read'')',
                            CASE WHEN random() < 0.5 THEN 'grant' ELSE 'revoke' END, p),
            ARRAY[rnk(p, -1)]);
    ELSIF r < 78 THEN
        -- a parallel pipeline's: its lanes only if free (no wait)
        PERFORM call(format('SELECT streamforge.compact(%L, 0)', p), ARRAY[rnk(p, -1)]);
    ELSIF r < 85 THEN
        PERFORM call(format('SELECT octet_length(streamforge.checkpoint(%L)::text)', p),
            ARRAY[]::text[]);
    ELSIF r < 90 AND p = 'pl_s' THEN
        -- its own state, read under its lock (a checkpoint read before
        -- would lose what commits while restore waits for the lock)
        IF call('SELECT streamforge.lock_pipelines(ARRAY[''pl_s''])',
                ARRAY[rnk('pl_s', -1)]) THEN
            PERFORM call('SELECT streamforge.restore(''pl_s'', streamforge.checkpoint(''pl_s''))',
                ARRAY[rnk('pl_s', -1)]);
        END IF;
    ELSIF r < 90 THEN
        -- a parallel pipeline's restore claims every lane at the call and
        -- is installed at commit: the second one's checkpoint, read under
        -- the first one's claims, holds every committed delivery (both
        -- are installed, in order); if it fails, the first goes too
        ranks := ARRAY(SELECT rnk(p, i) FROM generate_series(-1, 3) AS i);
        BEGIN
            IF call(format('SELECT streamforge.restore(%L, streamforge.checkpoint(%L))', p, p),
                    ranks) AND
               NOT call(format('SELECT streamforge.restore(%L, streamforge.checkpoint(%L))', p, p),
                        ranks) THEN
                RAISE EXCEPTION 'undo the first restore' USING ERRCODE = 'P0002';
            END IF;
        EXCEPTION WHEN SQLSTATE 'P0002' THEN
            NULL;
        END;
    ELSE
        -- a savepoint that rolls back: its claims go with it
        BEGIN
            PERFORM one_call();
            PERFORM one_call();
            RAISE EXCEPTION 'roll back to the savepoint' USING ERRCODE = 'P0001';
        EXCEPTION WHEN SQLSTATE 'P0001' THEN
            NULL;
        END;
    END IF;
END $$;

CREATE FUNCTION job() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. 1 + floor(random() * 5)::int LOOP
        PERFORM one_call();
    END LOOP;
END $$;
});

# the oracle: serial copies of the three pipelines, with tables of their own
SerialReplay::install($node);
$node->safe_psql(
	'postgres', q{
SELECT streamforge.create_pipeline(p, ARRAY['p0', 'p1', 'p2', 'p3'],
    ARRAY[streamforge.fixed('f', 10), streamforge.sliding('sl', 20, 10)], 5)
  FROM unnest(ARRAY['sr_a', 'sr_b', 'sr_s']) AS u(p);
CREATE TABLE src_sr_a (LIKE src_pl_a);
CREATE TABLE src_sr_b (LIKE src_pl_a);
CREATE TABLE src_sr_s (LIKE src_pl_a);
SELECT streamforge.attach(p, ('src_' || p)::regclass, event_id => 'eid', key => 'k',
    event_time => 't', value => 'v', partition => 'part')
  FROM unnest(ARRAY['sr_a', 'sr_b', 'sr_s']) AS u(p);
});

my $script = q{
\set fail random(0, 4)
BEGIN;
SELECT job();
\if :fail = 0
ROLLBACK;
\else
COMMIT;
\endif
};

my $clients = 16;
my $per_client = 40;
my $total = $clients * $per_client;
# (--max-tries: a parallel pipeline's restore fails at COMMIT with 40001
# when a head-only commit, which claims nothing, landed on the pipeline
# after the call: exclusive.c's restore_at_commit; pgbench runs such a
# transaction again)
$node->pgbench(
	"--no-vacuum --client=$clients --jobs=2 --transactions=$per_client --max-tries=20",
	0,
	[qr{processed: $total/$total}],
	[qr{^$}],
	'sixteen sessions of random transactions over two parallel and one serial pipeline',
	{ '016_parallel_locks' => $script });

my ($n55, $bad, $dl, $other, $ooo) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM c_55p03),
       (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM bad_55p03),
       (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM c_40p01),
       (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM c_other),
       (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM c_ooo)});
note "55P03 $n55, out-of-order calls $ooo, other errors $other";
is($dl, '0', 'no call raised 40P01');
is($bad, '0', 'every 55P03 came from a call that claimed out of order');
cmp_ok($ooo, '>', 0, 'some calls claimed out of order');
cmp_ok($n55, '>', 0, 'some out-of-order claims met a holder: 55P03');
my $log = slurp_file($node->logfile);
unlike($log, qr/deadlock detected/, 'no deadlock in the server log');

# the end state: a new connection loads every pipeline; its consumed
# offsets are the committed rows of its attached table
for my $p ('pl_a', 'pl_b', 'pl_s')
{
	is( $node->safe_psql(
			'postgres', qq{
SELECT octet_length(streamforge.checkpoint('$p')::text) > 0,
       (SELECT sum(consumed_offset + 1) FROM streamforge.partitions('$p')) =
       (SELECT count(*) FROM src_$p)}),
		't|t',
		"$p loads, with an offset per committed row");
}

# the oracle: the committed calls replayed in commit order into the
# serial copies give the same pipelines
my $txs = SerialReplay::replay($node, 'l',
	[qw(pl_a sr_a pl_b sr_b pl_s sr_s src_pl_a src_sr_a src_pl_b src_sr_b src_pl_s src_sr_s)]);
note "committed transactions with calls: $txs";
cmp_ok($txs, '>', 100, 'most transactions committed calls');
for my $p ('a', 'b', 's')
{
	SerialReplay::equal($node, "pl_$p", "sr_$p", "pl_$p: ", outputs => 0);
}

$node->stop;
done_testing();
