-- bench/sql/bench.sql: tables and drivers of the streamforge benchmark.
--
-- Loaded by bench/run.sh into a throwaway database after CREATE EXTENSION
-- streamforge.  Everything lives in the schema "bench":
--
--   staging    the workload's deliveries (columns of streamforge.delivery
--              plus the arrival order), loaded from deliveries.csv;
--   control    the advances and mark_idle calls, each after a given arrival;
--   param      the workload's parameters (tick, lateness, window sizes);
--   batches    the deliveries pre-built into streamforge.delivery[] arrays,
--              per batch size, so that timing covers the calls and not the
--              array construction (stored uncompressed: a batch is fetched
--              without decompression);
--   sample     one row per measured run.
--
-- bench.run_stream() replays the workload through one driver, one
-- transaction per tick (the deliveries of a tick, then its control
-- operations, then COMMIT), and times each call with clock_timestamp().
-- The drivers:
--   sf_batch     streamforge.ingest_batch, one call per batch;
--   sf_row       streamforge.ingest per row from the staging table
--                (SELECT ... CROSS JOIN LATERAL streamforge.ingest(...));
--   sf_verify    like sf_batch, keeping every change in bench.changes;
--   sf_burst     like sf_batch without any control operation (every bucket
--                stays live); bench.burst_advance() then closes them all;
--   plain_fixed  what a user writes without streamforge: deduplication by
--                event_id, the late test against a watermark kept in a table,
--                INSERT ... ON CONFLICT DO UPDATE into a fixed-window table;
--   plain_fixed_sliding  the same, plus the sliding windows through
--                generate_series;
--   floor        only passing the same batches through SQL (unnest, sum);
--   floor_row    only reading the same rows from the staging table.

\set ON_ERROR_STOP 1
SET client_min_messages TO warning;
DROP SCHEMA IF EXISTS bench CASCADE;
CREATE SCHEMA bench;

CREATE TABLE bench.staging (
    arrival bigint PRIMARY KEY,
    partition text COLLATE "C" NOT NULL,
    source_offset bigint NOT NULL,
    event_id text NOT NULL,
    key text COLLATE "C" NOT NULL,
    event_time bigint NOT NULL,
    value bigint NOT NULL
);

CREATE TABLE bench.control (
    seq int PRIMARY KEY,
    after_arrival bigint NOT NULL,
    op text NOT NULL CHECK (op IN ('advance', 'idle')),
    partition text NOT NULL,
    progress bigint
);
CREATE INDEX ON bench.control (after_arrival);

CREATE TABLE bench.param (
    name text PRIMARY KEY,
    value bigint NOT NULL
);

CREATE TABLE bench.batches (
    batch_size int NOT NULL,
    batch_no bigint NOT NULL,
    seg int NOT NULL,
    n int NOT NULL,
    arr streamforge.delivery[] NOT NULL,
    PRIMARY KEY (batch_size, batch_no)
);
ALTER TABLE bench.batches ALTER COLUMN arr SET STORAGE EXTERNAL;
CREATE INDEX ON bench.batches (batch_size, seg, batch_no);

CREATE TABLE bench.sample (
    id serial PRIMARY KEY,
    test text NOT NULL,
    shape text,
    batch_size int,
    rep int,
    events bigint,              -- deliveries handed over
    ingest_s float8,            -- time inside the ingest calls
    control_s float8,           -- time inside advance / mark_idle
    commit_s float8,            -- time of the COMMITs
    wall_s float8,              -- the whole run, loop overhead included
    calls bigint,
    changes bigint,             -- rows returned by the calls
    extra jsonb
);

CREATE TABLE bench.changes (LIKE streamforge.change);

-- The commit-latency floor: one-row INSERT transactions (commit_floor.pgbench)
CREATE TABLE bench.commit_floor (n bigint PRIMARY KEY, event_id text NOT NULL);

-- The plain-SQL pipeline's tables
CREATE TABLE bench.plain_event (
    event_id text PRIMARY KEY,
    key text COLLATE "C" NOT NULL,
    event_time bigint NOT NULL,
    value bigint NOT NULL
);
CREATE TABLE bench.plain_late (
    event_id text NOT NULL,
    key text NOT NULL,
    event_time bigint NOT NULL,
    value bigint NOT NULL,
    watermark bigint NOT NULL
);
CREATE TABLE bench.plain_clock (
    partition text PRIMARY KEY,
    progress bigint,
    idle boolean NOT NULL DEFAULT false
);
CREATE TABLE bench.plain_fixed (
    key text COLLATE "C" NOT NULL,
    wstart bigint NOT NULL,
    cnt bigint NOT NULL,
    sm numeric NOT NULL,
    mn bigint NOT NULL,
    mx bigint NOT NULL,
    PRIMARY KEY (key, wstart)
);
CREATE TABLE bench.plain_sliding (LIKE bench.plain_fixed INCLUDING ALL);

-- The three pipeline shapes
CREATE FUNCTION bench.windows(shape text) RETURNS streamforge.window_def[]
LANGUAGE sql STABLE AS $$
    SELECT CASE shape
        WHEN 'fixed' THEN ARRAY[
            streamforge.fixed('tumble', p.fixed_size)]
        WHEN 'fixed_sliding_session' THEN ARRAY[
            streamforge.fixed('tumble', p.fixed_size),
            streamforge.sliding('hop', 5 * p.slide_step, p.slide_step),
            streamforge.session('visit', p.session_gap)]
        WHEN 'session' THEN ARRAY[
            streamforge.session('visit', p.session_gap)]
    END
    FROM (SELECT max(value) FILTER (WHERE name = 'fixed_size') AS fixed_size,
                 max(value) FILTER (WHERE name = 'slide_step') AS slide_step,
                 max(value) FILTER (WHERE name = 'session_gap') AS session_gap
            FROM bench.param) p
$$;

CREATE FUNCTION bench.param(n text) RETURNS bigint
LANGUAGE sql STABLE AS $$ SELECT value FROM bench.param WHERE name = n $$;

-- Pre-build the delivery arrays of one batch size over arrivals [0, lim).
CREATE FUNCTION bench.build_batches(bs int, lim bigint) RETURNS bigint
LANGUAGE sql AS $$
    DELETE FROM bench.batches WHERE batch_size = bs;
    INSERT INTO bench.batches (batch_size, batch_no, seg, n, arr)
    SELECT bs, arrival / bs, (arrival / bench.param('tick'))::int, count(*),
           array_agg(row(partition, source_offset, event_id, key, event_time,
                         value)::streamforge.delivery ORDER BY arrival)
      FROM bench.staging
     WHERE arrival < lim
     GROUP BY arrival / bs, arrival / bench.param('tick');
    SELECT count(*) FROM bench.batches WHERE batch_size = bs;
$$;

-- A fresh pipeline "bench" of the given shape
CREATE FUNCTION bench.fresh_pipeline(pname text, shape text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM streamforge.pipeline WHERE name = pname) THEN
        PERFORM streamforge.drop_pipeline(pname);
    END IF;
    PERFORM streamforge.create_pipeline(pname,
        ARRAY(SELECT DISTINCT partition FROM bench.staging
               WHERE arrival < 100000 ORDER BY 1),
        bench.windows(shape), bench.param('lateness'));
END
$$;

-- Total bytes of the memory contexts of the (single) cached pipeline
CREATE FUNCTION bench.pipeline_memory() RETURNS bigint
LANGUAGE sql AS $$
    SELECT coalesce(sum(total_bytes), 0)::bigint
      FROM pg_backend_memory_contexts
     WHERE name = 'streamforge pipeline' OR parent = 'streamforge pipeline'
$$;

CREATE PROCEDURE bench.run_stream(test text, shape text, bs int, rep int,
                                  lim bigint, pname text DEFAULT 'bench',
                                  commit_every int DEFAULT 0)
LANGUAGE plpgsql AS $$
DECLARE
    tick bigint := bench.param('tick');
    lat bigint := bench.param('lateness');
    fsize bigint := bench.param('fixed_size');
    sstep bigint := bench.param('slide_step');
    ssize bigint := 5 * bench.param('slide_step');
    nseg int := ceil(lim::numeric / tick)::int;
    is_sf boolean := test LIKE 'sf%';
    since_commit int := 0;
    is_plain boolean := test LIKE 'plain%';
    s int;
    r record;
    t0 timestamptz;
    wall0 timestamptz;
    t_ingest float8 := 0;
    t_control float8 := 0;
    t_commit float8 := 0;
    ncalls bigint := 0;
    nchanges bigint := 0;
    nevents bigint := 0;
    c bigint;
    sm numeric;
    wm bigint;
    extra jsonb := '{}';
    wal0 pg_lsn;
    dummy int;
BEGIN
    IF is_sf THEN
        PERFORM bench.fresh_pipeline(pname, shape);
        TRUNCATE bench.changes;
    ELSIF is_plain THEN
        TRUNCATE bench.plain_event, bench.plain_late, bench.plain_clock,
                 bench.plain_fixed, bench.plain_sliding;
        INSERT INTO bench.plain_clock (partition)
            SELECT DISTINCT partition FROM bench.staging;
    END IF;
    COMMIT;
    wall0 := clock_timestamp();
    wal0 := pg_current_wal_lsn();

    FOR s IN 0 .. nseg - 1 LOOP
        IF test IN ('sf_batch', 'sf_build', 'sf_burst') THEN
            FOR r IN SELECT b.arr, b.n FROM bench.batches b
                      WHERE b.batch_size = bs AND b.seg = s
                        AND b.batch_no * bs < lim
                      ORDER BY b.batch_no LOOP
                t0 := clock_timestamp();
                SELECT count(*) INTO c
                  FROM streamforge.ingest_batch(pname, r.arr);
                t_ingest := t_ingest
                    + extract(epoch FROM clock_timestamp() - t0);
                ncalls := ncalls + 1;
                nchanges := nchanges + c;
                nevents := nevents + r.n;
                -- optionally a transaction per commit_every calls
                since_commit := since_commit + 1;
                IF commit_every > 0 AND since_commit >= commit_every THEN
                    t0 := clock_timestamp();
                    COMMIT;
                    t_commit := t_commit
                        + extract(epoch FROM clock_timestamp() - t0);
                    since_commit := 0;
                END IF;
            END LOOP;
        ELSIF test = 'sf_verify' THEN
            FOR r IN SELECT b.arr, b.n FROM bench.batches b
                      WHERE b.batch_size = bs AND b.seg = s
                        AND b.batch_no * bs < lim
                      ORDER BY b.batch_no LOOP
                t0 := clock_timestamp();
                INSERT INTO bench.changes
                    SELECT * FROM streamforge.ingest_batch(pname, r.arr);
                GET DIAGNOSTICS c = ROW_COUNT;
                t_ingest := t_ingest
                    + extract(epoch FROM clock_timestamp() - t0);
                ncalls := ncalls + 1;
                nchanges := nchanges + c;
                nevents := nevents + r.n;
            END LOOP;
        ELSIF test = 'floor' THEN
            FOR r IN SELECT b.arr, b.n FROM bench.batches b
                      WHERE b.batch_size = bs AND b.seg = s
                        AND b.batch_no * bs < lim
                      ORDER BY b.batch_no LOOP
                t0 := clock_timestamp();
                SELECT count(*), sum(d.value) INTO c, sm FROM unnest(r.arr) d;
                t_ingest := t_ingest
                    + extract(epoch FROM clock_timestamp() - t0);
                ncalls := ncalls + 1;
                nevents := nevents + r.n;
            END LOOP;
        ELSIF test = 'sf_row' THEN
            t0 := clock_timestamp();
            SELECT count(*) INTO c
              FROM (SELECT * FROM bench.staging
                     WHERE arrival >= s * tick
                       AND arrival < least((s + 1) * tick, lim)
                     ORDER BY arrival) d
             CROSS JOIN LATERAL streamforge.ingest(pname, d.partition,
                    d.source_offset, d.event_id, d.key, d.event_time,
                    d.value) ch;
            t_ingest := t_ingest + extract(epoch FROM clock_timestamp() - t0);
            ncalls := ncalls + least((s + 1) * tick, lim) - s * tick;
            nchanges := nchanges + c;
            nevents := nevents + least((s + 1) * tick, lim) - s * tick;
        ELSIF test = 'floor_row' THEN
            t0 := clock_timestamp();
            SELECT count(*), sum(d.value) INTO c, sm
              FROM (SELECT * FROM bench.staging
                     WHERE arrival >= s * tick
                       AND arrival < least((s + 1) * tick, lim)
                     ORDER BY arrival) d;
            t_ingest := t_ingest + extract(epoch FROM clock_timestamp() - t0);
            nevents := nevents + c;
        ELSIF test = 'floor_row_lateral' THEN
            -- the executor's own cost of a per-row LATERAL call: a scalar
            -- C function (int8abs) in FROM takes the same path as a
            -- set-returning one (a FunctionScan, ExecMakeTableFunctionResult
            -- and a tuplestore per outer row; the executor makes one for an
            -- empty materialized result too), with no work of its own.
            -- Not generate_series: its value-per-call set-up (a memory
            -- context per call, SRF_FIRSTCALL_INIT) costs more than
            -- streamforge.ingest's materialized empty result.
            t0 := clock_timestamp();
            SELECT count(*) INTO c
              FROM (SELECT * FROM bench.staging
                     WHERE arrival >= s * tick
                       AND arrival < least((s + 1) * tick, lim)
                     ORDER BY arrival) d
             CROSS JOIN LATERAL pg_catalog.abs(d.source_offset) g;
            t_ingest := t_ingest + extract(epoch FROM clock_timestamp() - t0);
            ncalls := ncalls + least((s + 1) * tick, lim) - s * tick;
            nevents := nevents + least((s + 1) * tick, lim) - s * tick;
        ELSIF test IN ('plain_row_upsert', 'sf_count', 'floor_row_loop') THEN
            -- per event: the upsert a PL/pgSQL loop or trigger would run
            -- (no deduplication, as bench/perrow.sh), or ingest_count, or
            -- (the loop's own cost) a C function as a simple expression
            t0 := clock_timestamp();
            FOR r IN SELECT * FROM bench.staging
                      WHERE arrival >= s * tick
                        AND arrival < least((s + 1) * tick, lim)
                      ORDER BY arrival LOOP
                IF test = 'sf_count' THEN
                    dummy := streamforge.ingest_count(pname, r.partition,
                        r.source_offset, r.event_id, r.key, r.event_time,
                        r.value);
                ELSIF test = 'floor_row_loop' THEN
                    dummy := pg_catalog.length(r.event_id);
                ELSE
                    INSERT INTO bench.plain_fixed AS a
                    VALUES (r.key,
                            r.event_time - ((r.event_time % fsize) + fsize) % fsize,
                            1, r.value, r.value, r.value)
                    ON CONFLICT (key, wstart) DO UPDATE
                       SET cnt = a.cnt + 1, sm = a.sm + excluded.sm,
                           mn = least(a.mn, excluded.mn),
                           mx = greatest(a.mx, excluded.mx);
                END IF;
            END LOOP;
            t_ingest := t_ingest + extract(epoch FROM clock_timestamp() - t0);
            ncalls := ncalls + least((s + 1) * tick, lim) - s * tick;
            nevents := nevents + least((s + 1) * tick, lim) - s * tick;
        ELSIF test IN ('plain_groupby_fixed', 'plain_groupby_sliding') THEN
            -- the batched GROUP BY upsert alone: no deduplication, no late
            -- events, one window (issue 23's baselines)
            FOR r IN SELECT b.arr, b.n FROM bench.batches b
                      WHERE b.batch_size = bs AND b.seg = s
                        AND b.batch_no * bs < lim
                      ORDER BY b.batch_no LOOP
                t0 := clock_timestamp();
                IF test = 'plain_groupby_fixed' THEN
                    INSERT INTO bench.plain_fixed AS a
                    SELECT d.key,
                           d.event_time - ((d.event_time % fsize) + fsize) % fsize,
                           count(*), sum(d.value), min(d.value), max(d.value)
                      FROM unnest(r.arr) d
                     GROUP BY 1, 2
                    ON CONFLICT (key, wstart) DO UPDATE
                       SET cnt = a.cnt + excluded.cnt,
                           sm = a.sm + excluded.sm,
                           mn = least(a.mn, excluded.mn),
                           mx = greatest(a.mx, excluded.mx);
                ELSE
                    INSERT INTO bench.plain_sliding AS a
                    SELECT d.key, st,
                           count(*), sum(d.value), min(d.value), max(d.value)
                      FROM unnest(r.arr) d
                     CROSS JOIN LATERAL generate_series(
                           (d.event_time - ssize)
                             - (((d.event_time - ssize) % sstep) + sstep) % sstep
                             + sstep,
                           d.event_time - ((d.event_time % sstep) + sstep) % sstep,
                           sstep) st
                     GROUP BY 1, 2
                    ON CONFLICT (key, wstart) DO UPDATE
                       SET cnt = a.cnt + excluded.cnt,
                           sm = a.sm + excluded.sm,
                           mn = least(a.mn, excluded.mn),
                           mx = greatest(a.mx, excluded.mx);
                END IF;
                GET DIAGNOSTICS c = ROW_COUNT;
                t_ingest := t_ingest
                    + extract(epoch FROM clock_timestamp() - t0);
                ncalls := ncalls + 1;
                nchanges := nchanges + c;
                nevents := nevents + r.n;
            END LOOP;
        ELSIF is_plain THEN
            FOR r IN SELECT b.arr, b.n FROM bench.batches b
                      WHERE b.batch_size = bs AND b.seg = s
                        AND b.batch_no * bs < lim
                      ORDER BY b.batch_no LOOP
                t0 := clock_timestamp();
                IF test = 'plain_fixed' THEN
                    WITH ins AS (
                        INSERT INTO bench.plain_event AS e
                        SELECT d.event_id, d.key, d.event_time, d.value
                          FROM unnest(r.arr) d
                        ON CONFLICT (event_id) DO NOTHING
                        RETURNING e.*),
                    late AS (
                        INSERT INTO bench.plain_late
                        SELECT i.*, wm FROM ins i
                         WHERE i.event_time + lat < wm),
                    fx AS (
                        INSERT INTO bench.plain_fixed AS a
                        SELECT i.key,
                               i.event_time - ((i.event_time % fsize) + fsize) % fsize,
                               count(*), sum(i.value), min(i.value), max(i.value)
                          FROM ins i
                         WHERE wm IS NULL OR i.event_time + lat >= wm
                         GROUP BY 1, 2
                        ON CONFLICT (key, wstart) DO UPDATE
                           SET cnt = a.cnt + excluded.cnt,
                               sm = a.sm + excluded.sm,
                               mn = least(a.mn, excluded.mn),
                               mx = greatest(a.mx, excluded.mx)
                        RETURNING 1)
                    SELECT count(*) INTO c FROM fx;
                ELSE
                    WITH ins AS (
                        INSERT INTO bench.plain_event AS e
                        SELECT d.event_id, d.key, d.event_time, d.value
                          FROM unnest(r.arr) d
                        ON CONFLICT (event_id) DO NOTHING
                        RETURNING e.*),
                    late AS (
                        INSERT INTO bench.plain_late
                        SELECT i.*, wm FROM ins i
                         WHERE i.event_time + lat < wm),
                    fx AS (
                        INSERT INTO bench.plain_fixed AS a
                        SELECT i.key,
                               i.event_time - ((i.event_time % fsize) + fsize) % fsize,
                               count(*), sum(i.value), min(i.value), max(i.value)
                          FROM ins i
                         WHERE wm IS NULL OR i.event_time + lat >= wm
                         GROUP BY 1, 2
                        ON CONFLICT (key, wstart) DO UPDATE
                           SET cnt = a.cnt + excluded.cnt,
                               sm = a.sm + excluded.sm,
                               mn = least(a.mn, excluded.mn),
                               mx = greatest(a.mx, excluded.mx)
                        RETURNING 1),
                    sl AS (
                        INSERT INTO bench.plain_sliding AS a
                        SELECT i.key, st,
                               count(*), sum(i.value), min(i.value), max(i.value)
                          FROM ins i
                         CROSS JOIN LATERAL generate_series(
                               (i.event_time - ssize)
                                 - (((i.event_time - ssize) % sstep) + sstep) % sstep
                                 + sstep,
                               i.event_time - ((i.event_time % sstep) + sstep) % sstep,
                               sstep) st
                         WHERE wm IS NULL OR i.event_time + lat >= wm
                         GROUP BY 1, 2
                        ON CONFLICT (key, wstart) DO UPDATE
                           SET cnt = a.cnt + excluded.cnt,
                               sm = a.sm + excluded.sm,
                               mn = least(a.mn, excluded.mn),
                               mx = greatest(a.mx, excluded.mx)
                        RETURNING 1)
                    SELECT (SELECT count(*) FROM fx) + (SELECT count(*) FROM sl)
                      INTO c;
                END IF;
                t_ingest := t_ingest
                    + extract(epoch FROM clock_timestamp() - t0);
                ncalls := ncalls + 1;
                nchanges := nchanges + c;
                nevents := nevents + r.n;
            END LOOP;
        END IF;

        -- the tick's control operations
        IF test <> 'sf_burst' THEN
            FOR r IN SELECT * FROM bench.control
                      WHERE after_arrival >= s * tick
                        AND after_arrival < least((s + 1) * tick, lim)
                      ORDER BY seq LOOP
                t0 := clock_timestamp();
                IF is_sf AND r.op = 'advance' THEN
                    IF test = 'sf_verify' THEN
                        INSERT INTO bench.changes SELECT * FROM
                            streamforge.advance(pname, r.partition, r.progress);
                        GET DIAGNOSTICS c = ROW_COUNT;
                    ELSE
                        SELECT count(*) INTO c FROM
                            streamforge.advance(pname, r.partition, r.progress);
                    END IF;
                    nchanges := nchanges + c;
                ELSIF is_sf THEN
                    IF test = 'sf_verify' THEN
                        INSERT INTO bench.changes SELECT * FROM
                            streamforge.mark_idle(pname, r.partition);
                        GET DIAGNOSTICS c = ROW_COUNT;
                    ELSE
                        SELECT count(*) INTO c FROM
                            streamforge.mark_idle(pname, r.partition);
                    END IF;
                    nchanges := nchanges + c;
                ELSIF is_plain THEN
                    -- the user's own clock: progress never decreases, an
                    -- advance reactivates, the watermark is the minimum
                    -- over non-idle partitions and never decreases
                    IF r.op = 'advance' THEN
                        UPDATE bench.plain_clock
                           SET progress = greatest(progress, r.progress),
                               idle = false
                         WHERE partition = r.partition;
                    ELSE
                        UPDATE bench.plain_clock SET idle = true
                         WHERE partition = r.partition;
                    END IF;
                    SELECT CASE WHEN count(*) > 0
                                 AND count(*) = count(progress)
                                THEN greatest(wm, min(progress)) ELSE wm END
                      INTO wm
                      FROM bench.plain_clock WHERE NOT idle;
                END IF;
                t_control := t_control
                    + extract(epoch FROM clock_timestamp() - t0);
            END LOOP;
        END IF;
        t0 := clock_timestamp();
        COMMIT;
        t_commit := t_commit + extract(epoch FROM clock_timestamp() - t0);
    END LOOP;

    IF is_sf THEN
        SELECT to_jsonb(st) INTO extra FROM streamforge.stats(pname) st;
    ELSIF is_plain THEN
        extra := jsonb_build_object(
            'unique_events', (SELECT count(*) FROM bench.plain_event),
            'late_events', (SELECT count(*) FROM bench.plain_late),
            'fixed_rows', (SELECT count(*) FROM bench.plain_fixed),
            'sliding_rows', (SELECT count(*) FROM bench.plain_sliding),
            'watermark', wm);
    END IF;
    INSERT INTO bench.sample (test, shape, batch_size, rep, events, ingest_s,
                              control_s, commit_s, wall_s, calls, changes,
                              extra)
    VALUES (test, shape, bs, rep, nevents, t_ingest, t_control, t_commit,
            extract(epoch FROM clock_timestamp() - wall0), ncalls, nchanges,
            extra || jsonb_build_object('wal_bytes',
                                        pg_wal_lsn_diff(pg_current_wal_lsn(), wal0),
                                        'pipeline', pname,
                                        'commit_every', commit_every,
                                        'limit', lim));
    COMMIT;
END
$$;

-- After an sf_burst run: every partition reports a progress beyond the last
-- event, which makes every live bucket ready (emitted) and then finalized.
-- Times the advances; the changes are the closed buckets.
CREATE PROCEDURE bench.burst_advance(pname text, shape text, rep int,
                                     n_events bigint)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    c bigint;
    total bigint := 0;
    live_before bigint;
    horizon bigint;
    r record;
BEGIN
    SELECT live_buckets INTO live_before FROM streamforge.stats(pname);
    SELECT max(event_time) + 100 * bench.param('session_gap')
               + 100 * bench.param('fixed_size') + 1000000000
      INTO horizon FROM bench.staging;
    t0 := clock_timestamp();
    FOR r IN SELECT partition FROM streamforge.partitions(pname) LOOP
        SELECT count(*) INTO c
          FROM streamforge.advance(pname, r.partition, horizon);
        total := total + c;
    END LOOP;
    COMMIT;
    INSERT INTO bench.sample (test, shape, batch_size, rep, events, ingest_s,
                              control_s, commit_s, wall_s, calls, changes,
                              extra)
    VALUES ('sf_burst_advance', shape, NULL, rep, n_events, NULL,
            extract(epoch FROM clock_timestamp() - t0), NULL, NULL,
            4, total,
            jsonb_build_object('live_buckets_before', live_before,
                               'live_buckets_after',
                               (SELECT live_buckets
                                  FROM streamforge.stats(pname))));
    COMMIT;
END
$$;

-- Compare the plain-SQL tables with streamforge's final results of the
-- sf_verify run: for every address, the live bucket if it is still live,
-- else the last upsert emitted for it (a finalized bucket was emitted and
-- forgotten without a retraction).  Returns the number of mismatching rows
-- per window (0 when identical) and the row counts.  live() is read once
-- into a temporary table, so that everything else is a sort or hash join.
CREATE FUNCTION bench.verify_plain()
RETURNS TABLE (window_name text, sf_rows bigint, plain_rows bigint,
               mismatches bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('client_min_messages', 'warning', true);
    DROP TABLE IF EXISTS pg_temp.vf_sf, pg_temp.vf_plain;
    CREATE TEMP TABLE vf_sf AS
    SELECT DISTINCT ON (u.window_name, u.key, u.window_start, u.window_end)
           u.window_name, u.key, u.window_start, u.count, u.sum, u.min,
           u.max, u.op
      FROM (SELECT l.window_name, l.key, l.window_start, l.window_end,
                   l.count, l.sum, l.min, l.max, 'upsert' AS op,
                   0 AS prio, 0::bigint AS seq
              FROM streamforge.live('bench') l
            UNION ALL
            SELECT c.window_name, c.key, c.window_start, c.window_end,
                   c.count, c.sum, c.min, c.max, c.op, 1, c.seq
              FROM bench.changes c) u
     WHERE u.window_name IN ('tumble', 'hop')
     ORDER BY u.window_name, u.key, u.window_start, u.window_end,
              u.prio, u.seq DESC;
    DELETE FROM vf_sf WHERE op <> 'upsert';
    ALTER TABLE vf_sf DROP COLUMN op;
    CREATE TEMP TABLE vf_plain AS
    SELECT 'tumble'::text AS window_name, key, wstart, cnt, sm, mn, mx
      FROM bench.plain_fixed
    UNION ALL
    SELECT 'hop', key, wstart, cnt, sm, mn, mx FROM bench.plain_sliding;
    RETURN QUERY
    WITH diff AS (
        (SELECT * FROM vf_sf EXCEPT ALL SELECT * FROM vf_plain)
        UNION ALL
        (SELECT * FROM vf_plain EXCEPT ALL SELECT * FROM vf_sf))
    SELECT w.name,
           (SELECT count(*) FROM vf_sf f WHERE f.window_name = w.name),
           (SELECT count(*) FROM vf_plain f WHERE f.window_name = w.name),
           (SELECT count(*) FROM diff d WHERE d.window_name = w.name)
      FROM (VALUES ('tumble'), ('hop')) w(name);
END
$$;

-- Memory and checkpoint size of one pipeline, as a fresh backend loads it:
-- call this as the first streamforge call of a new connection (bench/run.sh
-- compacts the pipeline first with restore(checkpoint()), so that loading
-- is a decode of the snapshot, without journal replay).
CREATE TABLE bench.state (
    id serial PRIMARY KEY,
    label text NOT NULL,
    pipeline text NOT NULL,
    shape text,
    deliveries bigint,
    accepted bigint,
    late_events bigint,
    live_buckets bigint,
    memory_bytes bigint,        -- "streamforge pipeline" context(s)
    pipeline_contexts int,
    checkpoint_bytes bigint,
    load_s float8,              -- first call: load from the tables
    checkpoint_s float8         -- streamforge.checkpoint()
);

CREATE FUNCTION bench.measure_state(label text, pname text, shape text)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    t_load float8;
    t_ck float8;
    mem bigint;
    nctx int;
    ck bigint;
    st record;
BEGIN
    t0 := clock_timestamp();
    PERFORM streamforge.watermark(pname);
    t_load := extract(epoch FROM clock_timestamp() - t0);
    mem := bench.pipeline_memory();
    SELECT count(*) INTO nctx FROM pg_backend_memory_contexts
     WHERE name = 'streamforge pipeline';
    SELECT * INTO st FROM streamforge.stats(pname);
    t0 := clock_timestamp();
    ck := octet_length(streamforge.checkpoint(pname));
    t_ck := extract(epoch FROM clock_timestamp() - t0);
    INSERT INTO bench.state (label, pipeline, shape, deliveries, accepted,
                             late_events, live_buckets, memory_bytes,
                             pipeline_contexts, checkpoint_bytes, load_s,
                             checkpoint_s)
    VALUES (label, pname, shape, st.deliveries, st.accepted, st.late_events,
            st.live_buckets, mem, nctx, ck, t_load, t_ck);
END
$$;

-- Replace the stored snapshot + journal by one snapshot of the same state
CREATE FUNCTION bench.compact(pname text) RETURNS void
LANGUAGE sql AS $$
    SELECT streamforge.restore(pname, streamforge.checkpoint(pname))
$$;

-- Every partition reports a progress beyond the last event (no timing):
-- all buckets close and are finalized.
CREATE FUNCTION bench.close_all(pname text) RETURNS bigint
LANGUAGE sql AS $$
    SELECT count(*)
      FROM streamforge.partitions(pname) p,
           LATERAL streamforge.advance(pname, p.partition,
               (SELECT max(event_time) FROM bench.staging)
               + 100 * bench.param('session_gap')
               + 100 * bench.param('fixed_size') + 1000000000) c
$$;
