#!/usr/bin/env python3
"""bench/callgrind_report.py: instructions per event from callgrind files.

Reads the callgrind.out files that bench/callgrind.sh wrote (one per source
tree and workload) and writes a JSON file and a Markdown table: for every
workload, instructions per event of the measured entry function (inclusive),
of the commit-time flush, and of the components.  Usage (callgrind.sh runs
it):

  callgrind_report.py --out-json F --out-md F [--meta k=v ...]
      RUN ...          RUN = label:sha:workload:events:entry:callgrind-file

How the numbers are made (docs/performance.md, "Instruction counts"):
  * callgrind collects only inside the workload's entry function (the C
    symbol behind the SQL function: sf_ingest_batch, sf_ingest,
    sf_ingest_count) and inside the transaction callbacks sf_xact_callback
    and sf_precommit_callback (0.2.0 and later store the buffered journal
    there, before commit; 0.4.0 in the pre-commit driver), and
    its counters are zeroed just before the measured statement, so the
    warm-up calls of the same backend are not counted;
  * names are merged over GCC's split parts (foo.cold, foo.part.0,
    foo.isra.0, foo.constprop.0, foo.localalias) and callgrind's recursion
    levels (foo'2);
  * the inclusive cost of a set of functions is the sum of the call costs
    of the calls into the set from functions outside it: nothing is counted
    twice when set members call each other;
  * a component is such a set (COMPONENTS below); names that a tree does not
    have simply contribute nothing, and a component none of whose functions
    was called is reported as blank, not as 0.
"""

import argparse
import json
import re
import sys
from collections import defaultdict

# Component -> (functions counted wherever they are called from,
#               functions counted only when the entry function (or its
#               in-tree glue, ENTRY_GLUE) calls them directly).
# The second list covers trees whose entry function unpacks inline
# (0.1.0: sf_ingest_batch runs deconstruct_array and heap_deform_tuple
# itself): there only those callees are counted, not the inlined loop, so
# the figure is a lower bound (marked in the table).
COMPONENTS = {
    "unpack": (
        ["sf_unpack_deliveries", "sf_unpack_events"],
        ["text_bytes", "sf_text_bytes", "DatumGetHeapTupleHeader",
         "deconstruct_array", "heap_deform_tuple", "text_to_cstring",
         "pg_detoast_datum", "pg_detoast_datum_packed",
         "lookup_rowtype_tupdesc_copy", "get_typlenbyvalalign",
         # 0.3.0 per-row calls: the call site's kept names (api/api.h)
         "sf_kept_text_add", "__memcmp_avx2_movbe", "memcmp"],
    ),
    # open: finding the pipeline, its lock and the cache check, per call
    "open": (
        ["sf_persist_open"],
        [],
    ),
    "engine": (
        ["sf_engine_ingest", "sf_engine_ingest_hashed",
         "sf_delivery_prefetch"],
        [],
    ),
    # encode: the journal encoders, minus the store they call (0.1.0 to
    # 0.3.0: sf_journal_ingest encodes and calls sf_persist_write_journal;
    # the layers tree: sf_persist_journal_ingest calls
    # sf_journal_encode_ingest, then sf_persist_write_journal, then frees
    # the buffer, as sf_journal_ingest did: the wrapper counts as encode)
    "journal_encode": (
        ["sf_journal_ingest", "sf_journal_advance", "sf_journal_mark_idle",
         "sf_journal_encode_ingest", "sf_journal_encode_advance",
         "sf_journal_encode_mark_idle", "journal_begin",
         "journal_partition_index", "sf_persist_journal_ingest",
         "sf_persist_journal_advance", "sf_persist_journal_mark_idle"],
        [],
    ),
    # store: the write of the journal entry (buffering, and the SPI INSERT
    # of the journal row, TOAST included) in the call and at commit; in the
    # layers tree write_journal (static, out of line), which the wrappers
    # sf_persist_journal_* call and which buffers or stores the entry
    "journal_store": (
        ["sf_persist_write_journal", "sf_pending_write",
         "sf_pending_write_all", "sf_pending_add", "write_journal"],
        [],
    ),
}
# The entry functions and their in-tree helpers whose direct calls of
# PostgreSQL's argument and array decoding count as unpack (the helpers are
# inlined in some trees and out of line in others: the layers tree has
# sf_pipeline_arg and sf_text_arg).  Their own instructions count as other.
ENTRY_GLUE = ["sf_ingest_batch", "sf_ingest", "sf_ingest_count",
              "sf_ingest_deliveries", "sf_append_deliveries", "ingest_one",
              # the write core (0.4.0, issue 41): the entry points above are
              # its aliases; write_call and write_row are inlined into them
              "sf_write_array", "sf_write_batch", "ingest_loop", "append_loop",
              "measures_loop", "unpack_measures", "sf_write_json",
              "sf_ingest_measures_batch", "measures_batch",
              # api.h's per-row helper, out of line once six forms use it
              "sf_arg_pipeline_row",
              "pipeline_arg", "sf_pipeline_arg", "text_arg", "sf_text_arg",
              "check_not_null", "sf_check_not_null"]
# the transaction callbacks: the buffered journal's store before commit
# (sf_xact_callback) and, since 0.4.0, the pre-commit driver that stores it
# and runs the parallel pipelines' sequencers (sf_precommit_callback)
COMMIT_FNS = ("sf_xact_callback", "sf_precommit_callback")

SUFFIX = re.compile(r"(\.(cold|part\.\d+|isra\.\d+|constprop\.\d+|"
                    r"localalias|lto_priv\.\d+))+$")


def norm(name):
    name = name.split("'")[0]
    return SUFFIX.sub("", name)


def parse(path):
    """self cost per function and call cost per (caller, callee), merged
    names; returns (self, edges, calls, total)."""
    names = {}
    selfc = defaultdict(int)
    edges = defaultdict(int)
    ncalls = defaultdict(int)
    fn = None
    cfn = None
    pending_call = None
    total = None

    def name_of(val):
        m = re.match(r"\((\d+)\)(?: (.*))?$", val)
        if not m:
            return norm(val)
        if m.group(2) is not None:
            names[m.group(1)] = norm(m.group(2))
        return names[m.group(1)]

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending_call is not None:
                    if pending_call != fn:
                        edges[(fn, pending_call)] += cost
                    pending_call = None
                else:
                    selfc[fn] += cost
                continue
            key, _, val = line.partition("=")
            if key == "fn":
                fn = name_of(val)
            elif key == "cfn":
                cfn = name_of(val)
            elif key == "calls":
                pending_call = cfn
                if cfn != fn:
                    ncalls[(fn, cfn)] += int(val.split()[0])
            elif line.startswith("totals:") or line.startswith("summary:"):
                total = int(line.split(":", 1)[1].split()[0])
    return selfc, edges, ncalls, total


def inclusive_set(members, edges, selfc, roots=()):
    """cost of the calls into the set from outside; plus, for a member that
    is a collection root (called from code that was not collected), its own
    cost and its calls out of the set."""
    members = set(members)
    cost = sum(c for (a, b), c in edges.items()
               if b in members and a not in members)
    for r in roots:
        if r in members:
            cost += selfc.get(r, 0) + sum(
                c for (a, b), c in edges.items()
                if a == r and b not in members)
    return cost


def analyse(path, entry, events):
    selfc, edges, ncalls, total = parse(path)
    called = {b for (_, b) in edges} | set(selfc)

    def root_incl(f):
        # a root's callers were not collected: its cost is its own plus its
        # calls (recursive calls were merged into the function itself)
        return selfc.get(f, 0) + sum(c for (a, b), c in edges.items()
                                     if a == f and b != f)

    entry_ir = root_incl(entry)
    commit_ir = sum(root_incl(f) for f in COMMIT_FNS)
    comp = {}
    lower_bound = {}
    for name, (anywhere, direct) in COMPONENTS.items():
        present = [f for f in anywhere if f in called]
        cost = inclusive_set(present, edges, selfc) if present else 0
        used_direct = False
        if direct:
            glue = set(ENTRY_GLUE) - set(anywhere)
            d = sum(c for (a, b), c in edges.items()
                    if a in glue and b in direct)
            if d and not present:
                used_direct = True
            cost += d
        if not present and not used_direct:
            comp[name] = None
            continue
        comp[name] = cost
        # a batch whose array is unpacked inline: only the callees count
        lower_bound[name] = used_direct and entry == "sf_ingest_batch"
    # the encoders call the store: their figure excludes it
    enc = [f for f in COMPONENTS["journal_encode"][0] if f in called]
    sto = set(COMPONENTS["journal_store"][0])
    if comp.get("journal_encode") is not None:
        comp["journal_encode"] -= sum(c for (a, b), c in edges.items()
                                      if a in enc and b in sto)
    known = sum(v for v in comp.values() if v is not None)
    comp["other"] = entry_ir + commit_ir - known
    entry_calls = sum(n for (a, b), n in ncalls.items() if b == entry)
    return {
        "events": events,
        "entry": entry,
        "entry_calls": entry_calls or None,
        "collected_ir": total,
        "entry_ir": entry_ir,
        "commit_ir": commit_ir,
        "components_ir": comp,
        "lower_bound": [k for k, v in lower_bound.items() if v],
        "per_event": {
            "total": (entry_ir + commit_ir) / events,
            "entry": entry_ir / events,
            "commit": commit_ir / events,
            **{k: (None if v is None else v / events)
               for k, v in comp.items()},
        },
    }


ROWS = [
    ("total", "total (call + commit flush)"),
    ("entry", "the call itself (inclusive)"),
    ("commit", "commit-time journal flush"),
    ("unpack", "unpack (array or arguments)"),
    ("open", "pipeline open (lookup, lock, cache check)"),
    ("engine", "engine"),
    ("journal_encode", "journal encode"),
    ("journal_store", "journal store"),
    ("other", "other (call glue, sink, result rows)"),
]

WORKLOAD_TITLES = {
    "batch_fixed": "ingest_batch, fixed window",
    "batch_fss": "ingest_batch, fixed + sliding + session",
    "row_fixed": "per-row ingest (LATERAL), fixed window",
    "count_fixed": "ingest_count in a PL/pgSQL loop, fixed window",
    "stmt_batch_fixed": "the whole statement SELECT count(*) FROM "
                        "ingest_batch(...), fixed window, no advances",
    "stmt_floor": "the whole statement SELECT count(*), sum(value) FROM "
                  "unnest(...) (the floor of bench/targets.sh)",
}


def fmt(v):
    return "" if v is None else f"{v:,.0f}"


def markdown(result):
    refs = result["refs"]
    m = result["meta"]
    lines = [f"Instructions per event (callgrind, `bench/callgrind.sh`), "
             f"{m.get('started', '?')}: "
             + ", ".join(f"{r['label']} = {r['sha']}" for r in refs)
             + f"; ingest_batch workloads {m.get('batches', '?')} batches of "
             f"{m.get('batch_size', '?')}, per-row workloads "
             f"{m.get('rows', '?')} calls, seed {m.get('seed', '?')}.", ""]
    first = refs[0]["label"]
    head = "| instructions/event | " + " | ".join(
        f"{r['label']} ({r['sha'][:8]})" for r in refs)
    ratio_cols = [r["label"] for r in refs[1:]]
    head += "".join(f" | {l} / {first}" for l in ratio_cols) + " |"
    sep = "|---|" + "---:|" * (len(refs) + len(ratio_cols))
    for w, wres in result["workloads"].items():
        ev = next((wres[r["label"]]["events"] for r in refs
                   if wres.get(r["label"])), None)
        lines.append(f"**{WORKLOAD_TITLES.get(w, w)}** ({w}, "
                     f"{ev:,} events" if ev else f"**{w}**")
        lines[-1] += ")" if ev else ""
        lines.append("")
        lines.append(head)
        lines.append(sep)
        for key, title in ROWS:
            cells = []
            base = wres.get(first)
            basev = base["per_event"].get(key) if base else None
            for r in refs:
                x = wres.get(r["label"])
                v = x["per_event"].get(key) if x else None
                s = fmt(v)
                if x and key in x["lower_bound"] and s:
                    s = "≥" + s
                cells.append(s)
            for r in refs[1:]:
                x = wres.get(r["label"])
                v = x["per_event"].get(key) if x else None
                cells.append("" if v is None or not basev
                             else f"{v / basev:.3f}")
            lines.append(f"| {title} | " + " | ".join(cells) + " |")
        lines.append("")
    lines.append("Blank: the tree has no such function or workload.  "
                 "≥: the tree unpacks inline in the entry function; only "
                 "the PostgreSQL functions it calls are counted.")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-json", required=True)
    ap.add_argument("--out-md", required=True)
    ap.add_argument("--meta", action="append", default=[])
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()
    result = {"meta": dict(m.split("=", 1) for m in a.meta), "refs": [],
              "workloads": {}}
    seen = set()
    for run in a.runs:
        label, sha, workload, events, entry, path = run.split(":", 5)
        if label not in seen:
            seen.add(label)
            result["refs"].append({"label": label, "sha": sha})
        wl = result["workloads"].setdefault(workload, {})
        if path == "-":
            wl[label] = None
            continue
        wl[label] = analyse(path, entry, int(events))
        wl[label]["callgrind_file"] = path.rsplit("/", 1)[-1]
    with open(a.out_json, "w") as f:
        json.dump(result, f, indent=1, sort_keys=False)
        f.write("\n")
    md = markdown(result)
    with open(a.out_md, "w") as f:
        f.write(md)
    sys.stdout.write(md)


if __name__ == "__main__":
    main()
