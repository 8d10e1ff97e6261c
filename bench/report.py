#!/usr/bin/env python3
"""bench/report.py: turn one benchmark run into JSON, a PNG chart and a summary.

Called by bench/run.sh with the scratch directory of the run.  Reads
samples.json, state.json, verify.json (exported from the bench schema),
work/counts.txt (the generator's counts), lat/*.<pid> (pgbench transaction
logs) and profile-*.txt (optional perf reports); writes
<results>/<name>.json, <results>/latest.json, <results>/<name>.png,
<results>/latest.png, and prints the summary table that docs/performance.md
quotes.
"""

import argparse
import glob
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys

SHAPES = ["fixed", "fixed_sliding_session", "session"]

TARGETS = {
    "ingest_batch_fixed_events_per_s": 1_000_000,
    "ingest_batch_all_events_per_s": 300_000,
    "speedup_vs_plain_sql": 20,
    "slowdown_vs_floor": 3,
    "commit_latency_ms": 2,
    "memory_bytes_per_live_bucket": 150,
}


def median(xs):
    return statistics.median(xs) if xs else None


def pct(xs, p):
    """The p-th percentile (nearest rank) of xs."""
    if not xs:
        return None
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def kv(items):
    out = {}
    for it in items or []:
        k, _, v = it.partition("=")
        try:
            out[k] = int(v)
        except ValueError:
            out[k] = v
    return out


def machine():
    m = {"nproc": os.cpu_count(), "kernel": platform.release()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    m["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    m["ram_bytes"] = int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        m["loadavg_at_end"] = open("/proc/loadavg").read().split()[:3]
    except OSError:
        pass
    return m


def load_json(path):
    try:
        with open(path) as f:
            txt = f.read().strip()
        return json.loads(txt) if txt else []
    except (OSError, ValueError):
        return []


def throughput(samples):
    """Medians per (test, shape, batch_size, limit) over the repetitions."""
    groups = {}
    for s in samples:
        if s["test"] in ("sf_build",) or s["rep"] == 0:
            continue
        extra = s.get("extra") or {}
        key = (s["test"], s["shape"], s["batch_size"], extra.get("limit"))
        groups.setdefault(key, []).append(s)
    med = []
    for (test, shape, bs, lim), ss in sorted(groups.items(), key=lambda kv: str(kv[0])):
        row = {"test": test, "shape": shape, "batch_size": bs, "limit": lim,
               "reps": len(ss), "events": ss[0]["events"]}
        if test == "sf_burst_advance":
            row["advance_s"] = median([x["control_s"] for x in ss])
            row["changes"] = median([x["changes"] for x in ss])
            row["live_buckets_before"] = median(
                [int(x["extra"]["live_buckets_before"]) for x in ss])
            row["changes_per_s"] = row["changes"] / row["advance_s"] if row["advance_s"] else None
            row["samples_advance_s"] = [x["control_s"] for x in ss]
        else:
            ing = [x["events"] / x["ingest_s"] for x in ss if x["ingest_s"]]
            e2e = [x["events"] / (x["ingest_s"] + x["control_s"] + x["commit_s"])
                   for x in ss if x["ingest_s"]]
            row["events_per_s"] = median(ing)
            row["events_per_s_end_to_end"] = median(e2e)
            row["ingest_s"] = median([x["ingest_s"] for x in ss])
            row["control_s"] = median([x["control_s"] for x in ss])
            row["commit_s"] = median([x["commit_s"] for x in ss])
            row["changes"] = ss[0]["changes"]
            row["samples_events_per_s"] = ing
        med.append(row)
    return med


def find(med, test, shape=None, bs=None):
    for r in med:
        if r["test"] == test and (shape is None or r["shape"] == shape) \
                and (bs is None or r["batch_size"] == bs):
            return r
    return None


def latency(scratch, warm, states):
    runs = []
    for path in sorted(glob.glob(os.path.join(scratch, "lat", "*-sync_*.*"))):
        base = os.path.basename(path)
        if base.endswith(".out"):
            continue
        label, _, rest = base.partition("-sync_")
        sync = rest.split(".")[0]
        us = []
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3:
                    us.append(int(parts[2]))
        measured = us[warm:]
        ms = [u / 1000.0 for u in measured]
        st = next((s for s in states if s["label"] == label), {})
        runs.append({
            "label": label, "synchronous_commit": sync,
            "history_deliveries": st.get("deliveries"),
            "live_buckets": st.get("live_buckets"),
            "first_transaction_ms": us[0] / 1000.0 if us else None,
            "transactions": len(ms),
            "median_ms": median(ms), "p95_ms": pct(ms, 95), "p99_ms": pct(ms, 99),
            "max_ms": max(ms) if ms else None,
            "mean_ms": statistics.fmean(ms) if ms else None,
            "samples_us": measured,
        })
    return runs


def per_unit(states):
    by = {s["label"]: s for s in states}
    out = {}
    closed = sorted((s for s in states if s["label"].startswith("history_")
                     and s["label"].endswith("_closed")),
                    key=lambda s: s["deliveries"])
    if len(closed) >= 2:
        a, b = closed[-2], closed[-1]
        dd = b["deliveries"] - a["deliveries"]
        out["checkpoint_bytes_per_delivery"] = (b["checkpoint_bytes"] - a["checkpoint_bytes"]) / dd
        out["memory_bytes_per_delivery"] = (b["memory_bytes"] - a["memory_bytes"]) / dd
        out["per_delivery_from"] = [a["label"], b["label"]]
        out["checkpoint_bytes_per_delivery_at_largest"] = b["checkpoint_bytes"] / b["deliveries"]
        out["memory_bytes_per_delivery_at_largest"] = b["memory_bytes"] / b["deliveries"]
    if "burst_live" in by and "burst_closed" in by:
        a, b = by["burst_closed"], by["burst_live"]
        db = b["live_buckets"] - a["live_buckets"]
        if db:
            # the live pipeline has the extra deliveries of one latency run
            # over the closed one: none (both are measured around the same
            # history), so the difference is the buckets alone
            dd = b["deliveries"] - a["deliveries"]
            cdel = out.get("checkpoint_bytes_per_delivery", 0) * dd
            mdel = out.get("memory_bytes_per_delivery", 0) * dd
            out["checkpoint_bytes_per_live_bucket"] = (b["checkpoint_bytes"] - a["checkpoint_bytes"] - cdel) / db
            out["memory_bytes_per_live_bucket"] = (b["memory_bytes"] - a["memory_bytes"] - mdel) / db
            out["per_live_bucket_from"] = [a["label"], b["label"], db]
    return out


def fmt(x, nd=0):
    if x is None:
        return "n/a"
    if isinstance(x, float) and nd:
        return f"{x:,.{nd}f}"
    return f"{x:,.0f}"


def chart(res, out_png, scratch):
    gp = shutil.which("gnuplot")
    if not gp:
        print("gnuplot not found: no chart", file=sys.stderr)
        return False
    med = res["throughput"]["medians"]
    tdat = os.path.join(scratch, "throughput.dat")
    with open(tdat, "w") as f:
        f.write("label fixed fixed_sliding_session session\n")
        rows = [("ingest_batch 10000", "sf_batch", 10000),
                ("ingest_batch 100", "sf_batch", 100),
                ("ingest_batch 1", "sf_batch", 1),
                ("per-row ingest", "sf_row", 1)]
        for label, test, bs in rows:
            vals = []
            for shape in SHAPES:
                r = find(med, test, shape, bs)
                vals.append(str(r["events_per_s"]) if r and r["events_per_s"] else "NaN")
            f.write('"%s" %s\n' % (label, " ".join(vals)))
        pf = find(med, "plain_fixed")
        pfs = find(med, "plain_fixed_sliding")
        f.write('"plain SQL upsert" %s %s NaN\n' % (
            pf["events_per_s"] if pf else "NaN", pfs["events_per_s"] if pfs else "NaN"))
        fl = find(med, "floor", None, 10000)
        f.write('"floor (unnest+sum) 10000" %s NaN NaN\n' % (fl["events_per_s"] if fl else "NaN"))
    ldat = os.path.join(scratch, "latency.dat")
    with open(ldat, "w") as f:
        for sync in ("on", "off"):
            f.write("# synchronous_commit=%s\n" % sync)
            for r in res["latency"]["runs"]:
                if r["synchronous_commit"] == sync and r["label"].startswith("history_"):
                    f.write("%s %s %s\n" % (r["history_deliveries"], r["median_ms"], r["p95_ms"]))
            f.write("\n\n")
        for sync in ("on", "off"):
            f.write("# burst synchronous_commit=%s\n" % sync)
            for r in res["latency"]["runs"]:
                if r["synchronous_commit"] == sync and r["label"] == "burst_live":
                    f.write("%s %s %s\n" % (r["history_deliveries"], r["median_ms"], r["p95_ms"]))
            f.write("\n\n")
        for sync in ("on", "off"):
            f.write("# commit floor (one-row INSERT) synchronous_commit=%s\n" % sync)
            for r in res["latency"]["runs"]:
                if r["synchronous_commit"] == sync and r["label"] == "commit_floor":
                    f.write("500 %s %s\n2000000 %s %s\n" % (r["median_ms"], r["p95_ms"],
                                                           r["median_ms"], r["p95_ms"]))
            f.write("\n\n")
    title = "streamforge %s (%s, %s cores, %s)" % (
        res["git_sha"], res["machine"].get("cpu_model", "?"), res["machine"]["nproc"],
        res["started"])
    script = f"""
set terminal pngcairo size 1400,600 font "DejaVu Sans,10" noenhanced
set output "{out_png}"
set multiplot layout 1,2 title "{title}"
set title "Throughput (events/s, median of {res['params']['reps']} runs)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [1000:*]
set ytics ("1k" 1000, "10k" 10000, "100k" 100000, "1M" 1000000, "10M" 10000000)
set xtics rotate by -20 scale 0 offset -2,0
set key top left
set grid ytics
set arrow 1 from graph 0, first 1000000 to graph 1, first 1000000 nohead dt 2 lc rgb "#cc0000"
set label 1 "target 1M/s (fixed)" at graph 0.45, first 1300000 tc rgb "#cc0000"
plot "{tdat}" using 2:xtic(1) title "fixed", "" using 3 title "fixed+sliding+session", "" using 4 title "session"
unset arrow 1
unset label 1
set title "Commit latency of a one-event transaction (pgbench, ms)"
set style data linespoints
set ytics auto
set format y "%g"
set logscale xy
set xrange [500:2000000]
set yrange [*:*]
set xtics norotate offset 0,0 ("1k" 1000, "10k" 10000, "100k" 100000, "1M" 1000000)
set xlabel "delivered events in history"
set ylabel "ms"
set key outside bottom center horizontal maxrows 3 width -2
set arrow 2 from graph 0, first 2 to graph 1, first 2 nohead dt 2 lc rgb "#cc0000"
set label 2 "target 2 ms" at graph 0.99, first 2.4 right tc rgb "#cc0000"
plot "{ldat}" index 0 using 1:2 title "median, sync commit on" lw 2 pt 7, \\
     "" index 0 using 1:3 title "p95, sync commit on" dt 2 pt 7, \\
     "" index 1 using 1:2 title "median, sync commit off" lw 2 pt 5, \\
     "" index 1 using 1:3 title "p95, sync commit off" dt 2 pt 5, \\
     "" index 2 using 1:2 title "median, all buckets live (on)" pt 9 ps 2, \\
     "" index 3 using 1:2 title "median, all buckets live (off)" pt 11 ps 2, \\
     "" index 4 using 1:2 title "median, one-row INSERT (on)" with lines dt 3 lc rgb "#555555", \\
     "" index 5 using 1:2 title "median, one-row INSERT (off)" with lines dt 4 lc rgb "#999999"
unset multiplot
"""
    sp = os.path.join(scratch, "chart.gp")
    with open(sp, "w") as f:
        f.write(script)
    r = subprocess.run([gp, sp], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr, file=sys.stderr)
        return False
    return True


def markdown(res):
    """The tables that docs/performance.md quotes, as Markdown."""
    med = res["throughput"]["medians"]
    m = res["machine"]
    out = []
    out.append("Run `%s` (%s mode, %s repetitions), commit %s, %s, %s cores, %.1f GiB RAM, %s.\n" % (
        res["name"], res["mode"], res["params"].get("reps"), res["git_sha"],
        m.get("cpu_model", "?"), m.get("nproc"), m.get("ram_bytes", 0) / 2**30,
        (res.get("postgres_version") or "").split(" on ")[0]))
    out.append("| target | goal | measured | |")
    out.append("|---|---|---|---|")
    for t in res["targets"]:
        v = t["measured"]
        vs = "n/a" if v is None else ("%.2f" % v if v < 1000 else fmt(v))
        out.append("| %s | %s | %s | %s |" % (t["name"], t["target"], vs,
                                             {True: "met", False: "**missed**", None: "?"}[t["met"]]))
    out.append("")
    out.append("Throughput, median events/s (ingest calls only / end-to-end with advances and commits):\n")
    out.append("| driver | batch | fixed | fixed+sliding+session | session |")
    out.append("|---|---|---|---|---|")
    for label, test, bs in (("ingest_batch", "sf_batch", 10000), ("ingest_batch", "sf_batch", 100),
                            ("ingest_batch", "sf_batch", 1), ("ingest per row", "sf_row", 1)):
        cells = []
        for shape in SHAPES:
            r = find(med, test, shape, bs)
            cells.append("%s / %s" % (fmt(r["events_per_s"]), fmt(r["events_per_s_end_to_end"])) if r else "n/a")
        out.append("| %s | %s | %s |" % (label, fmt(bs), " | ".join(cells)))
    pf, pfs = find(med, "plain_fixed"), find(med, "plain_fixed_sliding")
    out.append("| plain-SQL upsert | 10,000 | %s | %s (fixed+sliding only) | |" % (
        "%s / %s" % (fmt(pf["events_per_s"]), fmt(pf["events_per_s_end_to_end"])) if pf else "n/a",
        "%s / %s" % (fmt(pfs["events_per_s"]), fmt(pfs["events_per_s_end_to_end"])) if pfs else "n/a"))
    for bs in (10000, 100, 1):
        fl = find(med, "floor", None, bs)
        if fl:
            out.append("| floor: unnest + sum | %s | %s | | |" % (fmt(bs), fmt(fl["events_per_s"])))
    fr = find(med, "floor_row")
    if fr:
        out.append("| floor: read the rows | 1 | %s | | |" % fmt(fr["events_per_s"]))
    out.append("")
    r = res["ratios"]
    out.append("Ratios: streamforge over the plain-SQL upsert, fixed window: %.1fx (end-to-end %.1fx); "
               "fixed+sliding+session over plain fixed+sliding: %.1fx (end-to-end %.1fx). "
               "Time of ingest_batch over the floor's, batch 10,000: fixed %.1fx, "
               "fixed+sliding+session %.1fx, session %.1fx; batch 100: %.1fx, %.1fx, %.1fx; "
               "batch 1: %.1fx, %.1fx, %.1fx.\n" % (
                   r.get("sf_batch_fixed_over_plain_fixed", 0),
                   r.get("sf_batch_fixed_over_plain_fixed_end_to_end", 0),
                   r.get("sf_batch_all_over_plain_fixed_sliding", 0),
                   r.get("sf_batch_all_over_plain_fixed_sliding_end_to_end", 0),
                   *[r.get("floor_over_sf_batch_%s_%d" % (sh, bs), 0)
                     for bs in (10000, 100, 1) for sh in SHAPES]))
    for b in res["advance_burst"]:
        out.append("Burst: one advance emits and finalizes %s live buckets in %.2f s (%s buckets/s, median).\n" % (
            fmt(b["live_buckets_before"]), b["advance_s"], fmt(b["changes_per_s"])))
    out.append("Commit latency of a one-event transaction, ms (median / p95 / p99), warm connection:\n")
    out.append("| state | delivered events | live buckets | synchronous_commit=on | off | first transaction (load), ms |")
    out.append("|---|---|---|---|---|---|")
    runs = res["latency"]["runs"]
    labels = []
    for x in runs:
        if x["label"] not in labels:
            labels.append(x["label"])
    order = sorted(labels, key=lambda l: (l == "commit_floor", l == "burst_live",
                                          next(x["history_deliveries"] or 0 for x in runs if x["label"] == l)))
    for l in order:
        on = next((x for x in runs if x["label"] == l and x["synchronous_commit"] == "on"), None)
        off = next((x for x in runs if x["label"] == l and x["synchronous_commit"] == "off"), None)
        any_ = on or off
        name = {"commit_floor": "one-row INSERT (no streamforge)",
                "burst_live": "burst, every bucket live"}.get(l, l.replace("history_", "history "))
        out.append("| %s | %s | %s | %s | %s | %s |" % (
            name, fmt(any_["history_deliveries"]), fmt(any_["live_buckets"]),
            "%.3f / %.3f / %.3f" % (on["median_ms"], on["p95_ms"], on["p99_ms"]) if on else "",
            "%.3f / %.3f / %.3f" % (off["median_ms"], off["p95_ms"], off["p99_ms"]) if off else "",
            "%.0f" % max(x["first_transaction_ms"] for x in (on, off) if x)))
    out.append("")
    u = res["per_unit"]
    if u:
        out.append("State: checkpoint %.1f bytes per delivered event and %.1f per live bucket; "
                   "backend memory %.1f bytes per remembered delivery and %.1f per live bucket.\n" % (
                       u.get("checkpoint_bytes_per_delivery", 0), u.get("checkpoint_bytes_per_live_bucket", 0),
                       u.get("memory_bytes_per_delivery", 0), u.get("memory_bytes_per_live_bucket", 0)))
        out.append("| pipeline | delivered events | live buckets | memory, bytes | checkpoint, bytes | load, s | checkpoint(), s |")
        out.append("|---|---|---|---|---|---|---|")
        for st in res["state"]:
            out.append("| %s | %s | %s | %s | %s | %.2f | %.2f |" % (
                st["label"], fmt(st["deliveries"]), fmt(st["live_buckets"]), fmt(st["memory_bytes"]),
                fmt(st["checkpoint_bytes"]), st["load_s"], st["checkpoint_s"]))
        out.append("")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scratch")
    ap.add_argument("--results")
    ap.add_argument("--name")
    ap.add_argument("--latest", default="latest",
                    help="base name of the copies of the newest results")
    ap.add_argument("--meta", action="append")
    ap.add_argument("--param", action="append")
    ap.add_argument("--replot", nargs=2, metavar=("JSON", "PNG"),
                    help="only redraw the chart of a results file")
    ap.add_argument("--markdown", metavar="JSON",
                    help="only print the Markdown tables of a results file")
    a = ap.parse_args()
    if a.markdown:
        with open(a.markdown) as f:
            sys.stdout.write(markdown(json.load(f)))
        return
    if a.replot:
        import tempfile
        with open(a.replot[0]) as f:
            res = json.load(f)
        with tempfile.TemporaryDirectory() as d:
            sys.exit(0 if chart(res, a.replot[1], d) else 1)
    if not (a.scratch and a.results and a.name):
        ap.error("--scratch, --results and --name are required")

    meta = kv(a.meta)
    params = kv(a.param)
    samples = load_json(os.path.join(a.scratch, "samples.json"))
    states = load_json(os.path.join(a.scratch, "state.json"))
    verify = load_json(os.path.join(a.scratch, "verify.json"))
    counts = {}
    try:
        counts = kv(open(os.path.join(a.scratch, "work", "counts.txt")).read().split())
    except OSError:
        pass

    med = throughput(samples)
    lat = latency(a.scratch, int(params.get("latency_warmup", 0)), states)
    units = per_unit(states)

    ratios = {}
    for shape in SHAPES:
        for bs in (10000, 100, 1):
            sf = find(med, "sf_batch", shape, bs)
            fl = find(med, "floor", None, bs)
            if sf and fl and sf["events_per_s"]:
                ratios[f"floor_over_sf_batch_{shape}_{bs}"] = fl["events_per_s"] / sf["events_per_s"]
        sr = find(med, "sf_row", shape, 1)
        fr = find(med, "floor_row", None, 1)
        if sr and fr and sr["events_per_s"]:
            ratios[f"floor_over_sf_row_{shape}"] = fr["events_per_s"] / sr["events_per_s"]
    pf = find(med, "plain_fixed")
    pfs = find(med, "plain_fixed_sliding")
    sff = find(med, "sf_batch", "fixed", 10000)
    sfa = find(med, "sf_batch", "fixed_sliding_session", 10000)
    if pf and sff:
        ratios["sf_batch_fixed_over_plain_fixed"] = sff["events_per_s"] / pf["events_per_s"]
        ratios["sf_batch_fixed_over_plain_fixed_end_to_end"] = \
            sff["events_per_s_end_to_end"] / pf["events_per_s_end_to_end"]
    if pfs and sfa:
        ratios["sf_batch_all_over_plain_fixed_sliding"] = sfa["events_per_s"] / pfs["events_per_s"]
        ratios["sf_batch_all_over_plain_fixed_sliding_end_to_end"] = \
            sfa["events_per_s_end_to_end"] / pfs["events_per_s_end_to_end"]

    def worst_latency(field, sync):
        xs = [r[field] for r in lat if r["synchronous_commit"] == sync
              and r["label"] != "commit_floor" and r[field] is not None]
        return max(xs) if xs else None

    targets = []

    def target(name, goal, measured, ok):
        targets.append({"name": name, "target": goal, "measured": measured,
                        "met": None if measured is None else bool(ok(measured))})

    target("ingest_batch events/s, one fixed window (batch 10000)", ">= 1,000,000",
           sff and sff["events_per_s"], lambda m: m >= 1_000_000)
    target("ingest_batch events/s, fixed + sliding + session (batch 10000)", ">= 300,000",
           sfa and sfa["events_per_s"], lambda m: m >= 300_000)
    target("speed-up over the plain-SQL upsert (fixed window, batch 10000)", ">= 20x",
           ratios.get("sf_batch_fixed_over_plain_fixed"), lambda m: m >= 20)
    target("time of ingest_batch / time of the floor (fixed, batch 10000)", "<= 3x",
           ratios.get("floor_over_sf_batch_fixed_10000"), lambda m: m <= 3)
    target("one-event commit, worst median over histories (ms, synchronous_commit=on)", "< 2 ms",
           worst_latency("median_ms", "on"), lambda m: m < 2)
    target("one-event commit, worst p95 over histories (ms, synchronous_commit=on)", "< 2 ms",
           worst_latency("p95_ms", "on"), lambda m: m < 2)
    target("one-event commit, worst median over histories (ms, synchronous_commit=off)", "< 2 ms",
           worst_latency("median_ms", "off"), lambda m: m < 2)
    target("backend memory per live bucket (bytes)", "<= 150",
           units.get("memory_bytes_per_live_bucket"), lambda m: m <= 150)

    profiles = {}
    for p in glob.glob(os.path.join(a.scratch, "profile-*.txt")):
        shape = os.path.basename(p)[len("profile-"):-len(".txt")]
        profiles[shape] = [ln.rstrip() for ln in open(p) if ln.strip()]

    res = {
        "name": a.name,
        "started": meta.get("started"),
        "mode": meta.get("mode"),
        "git_sha": str(meta.get("git_sha")),
        "git_dirty_files": meta.get("git_dirty_files"),
        "postgres_version": meta.get("postgres_version"),
        "duration_s": meta.get("seconds"),
        "library_md5": meta.get("library_md5"),
        "machine": machine(),
        "params": params,
        "workload": counts,
        "throughput": {"medians": med, "samples": samples},
        "advance_burst": [r for r in med if r["test"] == "sf_burst_advance"],
        "ratios": ratios,
        "verify_plain_sql": verify,
        "latency": {"runs": lat},
        "state": states,
        "per_unit": units,
        "targets": targets,
        "profiles": profiles,
    }
    os.makedirs(a.results, exist_ok=True)
    out = os.path.join(a.results, a.name + ".json")
    with open(out, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    shutil.copyfile(out, os.path.join(a.results, a.latest + ".json"))
    png = os.path.join(a.results, a.name + ".png")
    if chart(res, png, a.scratch):
        shutil.copyfile(png, os.path.join(a.results, a.latest + ".png"))

    md = markdown(res)
    with open(os.path.join(a.results, a.name + ".md"), "w") as f:
        f.write(md)
    shutil.copyfile(os.path.join(a.results, a.name + ".md"),
                    os.path.join(a.results, a.latest + ".md"))

    # summary
    print()
    print("Throughput (median events/s; ingest calls only | with advances and commits)")
    print("  %-26s %-22s %8s %14s %14s" % ("driver", "shape", "batch", "events/s", "end-to-end"))
    for r in med:
        if r["test"] == "sf_burst_advance" or r["test"] == "sf_verify":
            continue
        print("  %-26s %-22s %8s %14s %14s" % (r["test"], r["shape"], r["batch_size"],
                                              fmt(r["events_per_s"]), fmt(r["events_per_s_end_to_end"])))
    for r in res["advance_burst"]:
        print("  advance closing everything: %s changes from %s live buckets in %.3f s (%s changes/s)" % (
            fmt(r["changes"]), fmt(r["live_buckets_before"]), r["advance_s"], fmt(r["changes_per_s"])))
    print()
    print("Ratios")
    for k, v in sorted(ratios.items()):
        print("  %-52s %8.2f" % (k, v))
    print()
    print("Commit latency of a one-event transaction (ms)")
    print("  %-22s %5s %10s %12s %8s %8s %8s %8s" % ("state", "sync", "history", "live buckets",
                                                  "median", "p95", "p99", "max"))
    for r in lat:
        print("  %-22s %5s %10s %12s %8.3f %8.3f %8.3f %8.3f" % (
            r["label"], r["synchronous_commit"], fmt(r["history_deliveries"]),
            fmt(r["live_buckets"]), r["median_ms"], r["p95_ms"], r["p99_ms"], r["max_ms"]))
    print()
    print("State sizes")
    for s in states:
        print("  %-22s deliveries=%-9s live_buckets=%-9s memory=%-12s checkpoint=%-12s load=%.3fs" % (
            s["label"], s["deliveries"], s["live_buckets"], s["memory_bytes"],
            s["checkpoint_bytes"], s["load_s"]))
    for k, v in units.items():
        print("  %-44s %s" % (k, ("%.1f" % v) if isinstance(v, float) else v))
    print()
    print("Targets")
    for t in targets:
        m = t["measured"]
        print("  [%s] %-78s target %-14s measured %s" % (
            {True: "met ", False: "MISS", None: " ?  "}[t["met"]], t["name"], t["target"],
            "n/a" if m is None else ("%.2f" % m if m < 1000 else fmt(m))))
    print()
    print("results: %s" % out)


if __name__ == "__main__":
    main()
