--
-- identity_growth: the event_id table grows without a pause (issue 39):
-- 256 segments chosen by the hash, each grown in one call at its own load
-- (64% to 80%).  Which event ids are known must never differ from the
-- plain-SQL reference, across every segment's growths.
--
-- Random batches of 1 .. 2,000 deliveries, 70% new event ids and 30%
-- redeliveries of random earlier ids (some from the same batch), until
-- the segments have doubled several times (8 slots each at first: the
-- growths are spread over every batch).  After every batch the pipeline's counters must
-- equal the reference: every redelivery recognised, no new event taken
-- for a known one.  Then a reconnect (cold load) and every event id
-- delivered once more: all duplicates.
--
-- The second pipeline has a retention (identities forgotten behind the
-- watermark: tombstones, deletes, and segments rehashed in place); its redeliveries come from the ids its horizon still
-- covers, so a redelivery taken for a new event would be late (or one
-- identity too many); its windows are finalised as the watermark passes,
-- so only its counters are compared.
--
\set VERBOSITY terse
SELECT streamforge.create_pipeline('idg', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 1000)], 1000000000000);

CREATE FUNCTION idg_delivery(off bigint, n bigint) RETURNS streamforge.delivery
LANGUAGE sql IMMUTABLE AS $$
    SELECT ROW('p', off, 'e' || n, 'k' || (n % 7), n, n % 100 + 1)::streamforge.delivery $$;

CREATE PROCEDURE idg_run(pl text, nbatches int, retention bigint)
LANGUAGE plpgsql AS $$
DECLARE
    nxt bigint := 0;		-- ids 0 .. nxt - 1 delivered so far
    off bigint := 0;
    dups bigint := 0;
    sz int;
    n bigint;
    lo bigint;
    arr streamforge.delivery[];
    s record;
    want_sum numeric := 0;		-- each id counted once: sum of (n % 100 + 1)
    got_sum numeric;
BEGIN
    FOR b IN 1 .. nbatches LOOP
        sz := 1 + floor(random() * 2000)::int;
        arr := '{}';
        lo := CASE WHEN retention IS NULL THEN 0
                   ELSE greatest(0, nxt - 1 - retention / 2) END;
        FOR e IN 1 .. sz LOOP
            IF nxt = lo OR random() < 0.7 THEN
                n := nxt;
                nxt := nxt + 1;
                want_sum := want_sum + n % 100 + 1;
            ELSE
                n := lo + floor(random() * (nxt - lo))::bigint;
                dups := dups + 1;
            END IF;
            arr := arr || idg_delivery(off, n);
            off := off + 1;
        END LOOP;
        PERFORM count(*) FROM streamforge.ingest_batch(pl, arr);
        IF retention IS NOT NULL THEN
            PERFORM count(*) FROM streamforge.advance(pl, 'p', nxt - 1);
        END IF;
        SELECT * INTO s FROM streamforge.stats(pl);
        SELECT sum(r.sum) INTO got_sum FROM streamforge.live(pl) r;
        IF retention IS NULL AND
           (s.accepted <> nxt OR s.remembered_identities <> nxt OR
            s.duplicate_ids <> dups OR s.deliveries <> off OR
            got_sum <> want_sum) THEN
            RAISE EXCEPTION 'batch %: accepted % remembered % duplicates % sum % (want %, %, %, %)',
                b, s.accepted, s.remembered_identities, s.duplicate_ids, got_sum,
                nxt, dups, off, want_sum;
        END IF;
        IF retention IS NOT NULL AND
           (s.late_events <> 0 OR s.deliveries <> off OR
            s.remembered_identities <> nxt - greatest(0, nxt - 1 - retention)) THEN
            RAISE EXCEPTION 'batch %: late % remembered % (want 0, %)',
                b, s.late_events, s.remembered_identities,
                nxt - greatest(0, nxt - 1 - retention);
        END IF;
    END LOOP;
    RAISE NOTICE '%: % batches, % deliveries, % event ids, % redeliveries recognised',
        pl, nbatches, off, nxt, dups;
END $$;

SELECT setseed(0.39);
CALL idg_run('idg', 100, NULL);
SELECT deliveries, accepted, duplicate_ids, remembered_identities
  FROM streamforge.stats('idg');

-- a cold load, then every event id once more: all duplicates, no change
\c -
\set VERBOSITY terse
SELECT count(*) AS changes
  FROM streamforge.ingest_batch('idg',
       ARRAY(SELECT idg_delivery(s.deliveries + i, i)
               FROM streamforge.stats('idg') s,
                    generate_series(0, s.accepted - 1) i ORDER BY i));
SELECT deliveries, accepted, duplicate_ids, remembered_identities
  FROM streamforge.stats('idg');

-- with retention: forgotten identities leave tombstones in either table
SELECT streamforge.create_pipeline('idr', ARRAY['p'],
    ARRAY[streamforge.fixed('f', 1000)], 0, retention => 40000);
SELECT setseed(0.93);
CALL idg_run('idr', 250, 40000);
SELECT late_events, remembered_identities, remembered_identities < deliveries AS forgot
  FROM streamforge.stats('idr');

SELECT streamforge.drop_pipeline('idg');
SELECT streamforge.drop_pipeline('idr');
DROP PROCEDURE idg_run;
DROP FUNCTION idg_delivery;
