#!/usr/bin/env python3
"""bench/gen_workload.py: the seeded synthetic clickstream of the benchmark.

Writes two CSV files (no header) into the output directory:

  deliveries.csv  arrival, partition, source_offset, event_id, key,
                  event_time, value
                  -- one row per delivery, in arrival order (the order the
                     driver hands them to streamforge);
  control.csv     seq, after_arrival, op, partition, progress
                  -- op is 'advance' or 'idle'; a control operation runs after
                     the delivery numbered after_arrival (always the last one
                     of a tick) and before the next one.

The model (Nexmark-like, see docs/performance.md):
  * unique events arrive at one per millisecond of event time; keys follow a
    Zipf law (exponent --zipf) over --keys keys, so a few keys are hot;
  * arrival is out of order within a bound: event_time = now - U[0, disorder);
  * about 1% of the events are late on purpose (event_time behind the
    watermark by more than the allowed lateness);
  * about 2% of the deliveries are duplicates: an earlier event (same
    event_id, key, time, value) delivered again at a new offset;
  * now and then a partition replays its last deliveries at their original
    offsets (a consumer restart);
  * 4 partitions; every --tick arrivals each active partition reports its
    progress (its highest event time minus the disorder bound); partition p3
    receives nothing from 40% to 55% of the stream: it is marked idle at the
    first tick after it fell silent and reactivated by its next advance.

Only random.Random.random() is used, whose sequence is stable across Python
versions, so a seed always gives byte-identical files.
"""

import argparse
import bisect
import csv
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--arrivals", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=20260101)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--zipf", type=float, default=1.1)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--tick", type=int, default=10_000,
                    help="arrivals between two rounds of advances")
    ap.add_argument("--disorder", type=int, default=2_000,
                    help="out-of-order bound, ms of event time")
    ap.add_argument("--lateness", type=int, default=1_000,
                    help="the pipeline's allowed lateness (ms)")
    ap.add_argument("--late-frac", type=float, default=0.01)
    ap.add_argument("--dup-frac", type=float, default=0.02)
    ap.add_argument("--replay-prob", type=float, default=1 / 25_000,
                    help="chance per arrival that a replay starts")
    ap.add_argument("--t0", type=int, default=1_767_225_600_000,
                    help="event time of the first event (ms)")
    args = ap.parse_args()

    import random
    rng = random.Random(args.seed)
    rnd = rng.random

    # Zipf: cumulative weights of ranks 1..keys; a key is the rank's name.
    cum = []
    total = 0.0
    for r in range(1, args.keys + 1):
        total += 1.0 / (r ** args.zipf)
        cum.append(total)

    def zipf_key():
        i = bisect.bisect_left(cum, rnd() * total)
        return "user%d" % (min(i, args.keys - 1) + 1)

    nparts = args.partitions
    parts = ["p%d" % i for i in range(nparts)]
    idle_part = nparts - 1
    idle_from = int(args.arrivals * 0.40)
    idle_to = int(args.arrivals * 0.55)

    consumed = [-1] * nparts        # last offset per partition
    history = [[] for _ in range(nparts)]   # deliveries per partition
    max_time = [None] * nparts      # highest on-time event time seen
    progress = [None] * nparts      # last reported progress
    idle = [False] * nparts
    events = []                     # unique events: (id, key, time, value)
    unique = 0
    replay_left = 0
    replay_part = 0
    replay_pos = 0

    os.makedirs(args.out, exist_ok=True)
    fd = open(os.path.join(args.out, "deliveries.csv"), "w", newline="")
    fc = open(os.path.join(args.out, "control.csv"), "w", newline="")
    wd = csv.writer(fd, lineterminator="\n")
    wc = csv.writer(fc, lineterminator="\n")
    cseq = 0
    counts = {"unique": 0, "late": 0, "duplicate": 0, "replayed": 0}

    def active(i, arrival):
        return not (i == idle_part and idle_from <= arrival < idle_to)

    for arrival in range(args.arrivals):
        if replay_left > 0:
            # replay: the same delivery again at its original offset
            part = replay_part
            off, ev = history[part][replay_pos]
            replay_pos += 1
            replay_left -= 1
            counts["replayed"] += 1
        else:
            cands = [i for i in range(nparts) if active(i, arrival)]
            part = cands[int(rnd() * len(cands))]
            u = rnd()
            if u < args.dup_frac and len(events) > 100:
                # a redelivery of a recent event, at a new offset
                back = 1 + int(rnd() * min(5000, len(events) - 1))
                ev = events[-back]
                counts["duplicate"] += 1
            else:
                now = args.t0 + unique
                unique += 1
                key = zipf_key()
                value = 1 + int(rnd() * 1000)
                if u < args.dup_frac + args.late_frac:
                    # behind any watermark by more than the lateness
                    t = (now - args.disorder - args.lateness - args.tick
                         - int(rnd() * 30_000))
                    counts["late"] += 1
                else:
                    t = now - int(rnd() * args.disorder)
                    if max_time[part] is None or t > max_time[part]:
                        max_time[part] = t
                ev = ("ev%d" % unique, key, t, value)
                events.append(ev)
                counts["unique"] += 1
            consumed[part] += 1
            off = consumed[part]
            history[part].append((off, ev))
            # sometimes a consumer restarts: replay the last deliveries
            if rnd() < args.replay_prob and len(history[part]) > 200:
                replay_part = part
                replay_left = 20 + int(rnd() * 180)
                replay_pos = len(history[part]) - replay_left
        wd.writerow((arrival, parts[part], off, ev[0], ev[1], ev[2], ev[3]))

        if (arrival + 1) % args.tick == 0:
            for i in range(nparts):
                if not active(i, arrival):
                    if not idle[i]:
                        cseq += 1
                        wc.writerow((cseq, arrival, "idle", parts[i], ""))
                        idle[i] = True
                    continue
                if max_time[i] is None:
                    continue
                pr = max_time[i] - args.disorder
                if progress[i] is None or pr > progress[i] or idle[i]:
                    cseq += 1
                    wc.writerow((cseq, arrival, "advance", parts[i], pr))
                    progress[i] = pr if progress[i] is None else max(pr, progress[i])
                    idle[i] = False
    fd.close()
    fc.close()
    counts["arrivals"] = args.arrivals
    counts["control_ops"] = cseq
    print(" ".join("%s=%d" % kv for kv in counts.items()), file=sys.stderr)


if __name__ == "__main__":
    main()
