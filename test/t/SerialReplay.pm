# The serial replay shared by the randomized tests of parallel pipelines
# (issue 46; docs/design/parallel-writers.md section 12, "The differential
# test", and 8.2): the sessions of a test log every call that succeeded,
# in its (sub)transaction, so that what a rollback or a rolled-back
# savepoint undoes is not in the log; afterwards the committed calls are
# replayed in commit order into pipelines of the same definition, whose
# names the test maps, and the pipelines compared.
#
# The commit order is the order of the transactions' commit timestamps
# (track_commit_timestamp must be on): a transaction that writes a
# pipeline holds its lock (a serial pipeline's row lock, a parallel one's
# head lock) until its commit is visible, so two transactions that wrote
# one pipeline commit at different timestamps, in the order they took the
# lock, which is the order of their effects.  A subtransaction's rows
# carry its own xid, with its top transaction's commit timestamp; the
# calls of one transaction replay in the order they were logged (id).
# (The head's journal would give the order too, but a compaction empties
# it; streamforge_internal.head_commits, which the design names for this,
# is not built.)
#
# In SQL (schema replay):
#   replay.run(tag, sql)    execute sql and log it (a call to replay)
#   replay.log(tag, sql)    log sql without executing it (the caller did)
#   replay.snap(tag, pipeline)  take pipeline's checkpoint into replay.snaps
#                           with the bounds of its place in the commit
#                           order (its id); in a transaction that wrote
#                           nothing, at READ COMMITTED
# From Perl:
#   install($node)          create them
#   replay($node, $tag, \@map, $watch)  replay the tag's committed calls,
#                           each one's SQL with the identifiers of @map
#                           (pairs from => to) replaced; after each
#                           transaction, if $watch is given and a
#                           checkpoint of replay.snaps may have been taken
#                           there, keep that pipeline's checkpoint as a
#                           point of the replay; every call must succeed as
#                           it did
#   equal($node, $par, $ser, $what, %opt)  checkpoint (but for the writers
#                           key), changelog with seq, results and late
#                           output of $par equal $ser's (outputs => 0: the
#                           checkpoint only)
#   snapshots($node, $tag, $what)  each replay.snaps checkpoint equals a
#                           point of the replay within its bounds; and the
#                           copy the test restored it into gave it back
#   pgbench($node, %o), pgbench_start($node, %o), pgbench_wait($b)  the
#                           sessions: pgbench in the foreground or the
#                           background, every transaction checked to run

package SerialReplay;

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

sub install
{
	my ($node) = @_;
	is($node->safe_psql('postgres', 'SHOW track_commit_timestamp'),
		'on', 'the serial replay has the commit timestamps');
	$node->safe_psql(
		'postgres', q{
CREATE SCHEMA replay;
CREATE SEQUENCE replay.ids;
-- a call that succeeded, in its (sub)transaction (xmin)
CREATE TABLE replay.calls (id bigint PRIMARY KEY DEFAULT nextval('replay.ids'),
                           tag text NOT NULL, sql text NOT NULL);
-- a checkpoint taken by a transaction that wrote nothing, and its place in
-- the commit order: after every transaction committed at or before seen
-- (visible to the statement before it), before every one committed after
-- hi (taken after it); copy: the checkpoint of the copy it was restored into
CREATE TABLE replay.snaps (id bigint PRIMARY KEY DEFAULT nextval('replay.ids'),
                           tag text NOT NULL, pipeline text NOT NULL,
                           seen timestamptz, cp bytea NOT NULL,
                           hi timestamptz NOT NULL, copy jsonb);
-- the replay after its k-th transaction (committed at ts, the next one at
-- next) of a tag, kept where a checkpoint of replay.snaps may be
CREATE TABLE replay.points (tag text, k int, ts timestamptz, next timestamptz,
                            cp jsonb, PRIMARY KEY (tag, k));
-- a call that failed in the replay
CREATE TABLE replay.errors (tag text, id bigint, sql text, state text, message text);

CREATE FUNCTION replay.log(tag text, sql text) RETURNS void LANGUAGE sql
    BEGIN ATOMIC INSERT INTO replay.calls (tag, sql) VALUES (tag, sql); END;

CREATE FUNCTION replay.run(tag text, sql text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE sql;
    PERFORM replay.log(tag, sql);
END $$;

CREATE FUNCTION replay.seen(tag text) RETURNS timestamptz LANGUAGE sql
    RETURN (SELECT max(pg_xact_commit_timestamp(c.xmin)) FROM replay.calls c
             WHERE c.tag = seen.tag);

-- three statements: the commit timestamps the first sees are in the
-- checkpoint the second takes, which is visible before the third; returns
-- the row's id
CREATE FUNCTION replay.snap(tag text, pipeline text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    s timestamptz := replay.seen(tag);
    c bytea := streamforge.checkpoint(pipeline);
    id bigint;
BEGIN
    INSERT INTO replay.snaps (tag, pipeline, seen, cp, hi)
    VALUES (tag, pipeline, s, c, clock_timestamp()) RETURNING snaps.id INTO id;
    RETURN id;
END $$;

-- the checkpoint as compared: without the writers key
CREATE FUNCTION replay.cp(c bytea) RETURNS jsonb LANGUAGE sql
    RETURN streamforge.inspect_checkpoint(c)::jsonb #- '{definition,writers}';

CREATE FUNCTION replay.mapped(sql text, map text[]) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. coalesce(array_length(map, 1), 0) / 2 LOOP
        sql := regexp_replace(sql, '\m' || map[2 * i - 1] || '\M', map[2 * i], 'g');
    END LOOP;
    RETURN sql;
END $$;

-- keep watch's state after the k-th transaction (committed at ts, the
-- next at next) if a checkpoint of replay.snaps may have been taken there
CREATE PROCEDURE replay.point(tag text, watch text, k int, ts timestamptz,
                              next timestamptz) LANGUAGE sql
BEGIN ATOMIC
    INSERT INTO replay.points
    SELECT tag, k, ts, next, replay.cp(streamforge.checkpoint(watch))
     WHERE EXISTS (SELECT 1 FROM replay.snaps s
                    WHERE s.tag = point.tag AND point.ts < s.hi
                      AND (s.seen IS NULL OR point.next > s.seen));
END;

CREATE PROCEDURE replay.replay(tag text, map text[], watch text) LANGUAGE plpgsql AS $$
DECLARE
    c record;
    k int := 0;
    prev timestamptz := '-infinity';
    cur timestamptz;
BEGIN
    FOR c IN SELECT l.id, l.sql, pg_xact_commit_timestamp(l.xmin) AS ts
               FROM replay.calls l WHERE l.tag = replay.tag
              ORDER BY 3, 1 LOOP
        IF c.ts IS NULL THEN
            RAISE EXCEPTION 'call % has no commit timestamp', c.id;
        END IF;
        IF cur IS DISTINCT FROM c.ts THEN
            -- a transaction of its own: the calls of one committed
            -- transaction replay in one
            IF cur IS NOT NULL THEN
                COMMIT;
                k := k + 1;
                prev := cur;
            END IF;
            IF watch IS NOT NULL THEN
                CALL replay.point(tag, watch, k, prev, c.ts);
            END IF;
            cur := c.ts;
        END IF;
        BEGIN
            EXECUTE replay.mapped(c.sql, map);
        EXCEPTION WHEN OTHERS THEN
            INSERT INTO replay.errors VALUES (tag, c.id, c.sql, SQLSTATE, SQLERRM);
        END;
    END LOOP;
    COMMIT;
    IF cur IS NOT NULL THEN
        k := k + 1;
        prev := cur;
    END IF;
    IF watch IS NOT NULL THEN
        CALL replay.point(tag, watch, k, prev, 'infinity');
    END IF;
END $$;
});
	return;
}

# Replay the committed calls of $tag, each transaction a transaction of
# its own (a checkpoint is taken between them), into the pipelines @$map
# names; returns the number of transactions.
sub replay
{
	my ($node, $tag, $map, $watch) = @_;
	my $arr = 'ARRAY[' . join(', ', map { "'$_'" } @$map) . ']::text[]';
	my $w = defined $watch ? "'$watch'" : 'NULL';
	$node->safe_psql('postgres', "CALL replay.replay('$tag', $arr, $w)");
	my ($errors, $first) = split /\|/, $node->safe_psql(
		'postgres', qq{
SELECT count(*), min(state || ' ' || message || ': ' || sql)
  FROM replay.errors WHERE tag = '$tag'});
	is($errors, '0', "every call of $tag succeeds in the serial replay")
	  or diag "first: $first";
	return $node->safe_psql(
		'postgres', qq{
SELECT count(DISTINCT pg_xact_commit_timestamp(xmin)) FROM replay.calls
 WHERE tag = '$tag'});
}

sub equal
{
	my ($node, $par, $ser, $what, %opt) = @_;
	is( $node->safe_psql(
			'postgres', qq{
SELECT replay.cp(streamforge.checkpoint('$ser')) =
       replay.cp(streamforge.checkpoint('$par'))}),
		't',
		"${what}checkpoint equals the serial run in commit order");
	return if defined $opt{outputs} && !$opt{outputs};

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
	return;
}

# Every checkpoint of replay.snaps of $tag is a state of the serial replay
# (replay.points, kept by replay() with $watch) at a place its bounds
# allow: after every transaction it saw, before every one committed after
# it; and the copy it was restored into (replay.snaps.copy, filled by the
# test) took it whole.
sub snapshots
{
	my ($node, $tag, $what) = @_;
	my ($n, $placed, $copied, $copy_ok) = split /\|/, $node->safe_psql(
		'postgres', qq{
WITH s AS MATERIALIZED (SELECT seen, hi, copy, replay.cp(cp) AS cp
                          FROM replay.snaps WHERE tag = '$tag')
SELECT count(*),
       count(*) FILTER (WHERE EXISTS (
           SELECT 1 FROM replay.points p
            WHERE p.tag = '$tag' AND p.cp = s.cp
              AND p.ts < s.hi AND (s.seen IS NULL OR p.next > s.seen))),
       count(s.copy),
       count(*) FILTER (WHERE s.copy = s.cp)
  FROM s});
	note "${what}checkpoints $n, restored into a copy $copied";
	cmp_ok($n, '>', 0, "${what}checkpoints were taken");
	is($placed, $n,
		"${what}every checkpoint is the serial replay's state at a place in the commit order its transaction allows"
	);
	is($copy_ok, $copied, "${what}every copy restored from one equals it");
	return;
}

# pgbench on $node, in the background: $o{clients} sessions of
# $o{transactions} transactions each of $o{script}, with --random-seed
# $o{seed} (when given), -D for each of %{$o{define}} and the options of
# @{$o{options}}; pgbench_wait() checks that every transaction ran.
sub pgbench_start
{
	my ($node, %o) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir;
	PostgreSQL::Test::Utils::append_to_file("$dir/script.sql", $o{script});
	my ($out, $err) = ('', '');
	my @cmd = (
		'pgbench', '--no-vacuum',
		"--client=$o{clients}", '--jobs=' . ($o{clients} > 1 ? 2 : 1),
		"--transactions=$o{transactions}",
		(defined $o{seed} ? ("--random-seed=$o{seed}") : ()),
		(map { ('-D', "$_=$o{define}{$_}") } sort keys %{ $o{define} // {} }),
		@{ $o{options} // [] },
		'-f', "$dir/script.sql", '-h', $node->host, '-p', $node->port,
		'postgres');
	return {
		run => IPC::Run::start(\@cmd, '>', \$out, '2>', \$err),
		out => \$out,
		err => \$err,
		n => $o{clients} * $o{transactions},
		name => $o{name}
	};
}

sub pgbench_wait
{
	my ($b) = @_;
	my $status = $b->{run}->finish;
	my ($out, $err, $n) = (${ $b->{out} }, ${ $b->{err} }, $b->{n});
	ok( $status
		  && $out =~ qr{processed: $n/$n}
		  && $err =~ qr{^(pgbench: setting random seed to \d+\s*)?$},
		$b->{name})
	  or diag "stdout: $out\nstderr: $err";
	return;
}

sub pgbench
{
	pgbench_wait(pgbench_start(@_));
	return;
}

1;
