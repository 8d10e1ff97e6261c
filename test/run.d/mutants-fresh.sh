#!/usr/bin/env bash
# test/run.d/mutants-fresh.sh: every mutant of the campaign lists
# (scripts/mutants*.tsv, docs/mutation.md) still applies to today's code:
# its file exists and its pattern occurs exactly once, as scripts/mutate.sh
# requires to apply it (it counts the others "stale", and a stale mutant
# tests nothing).  Ids are unique over all lists, and each mutant says what
# it breaks.  Runs from the repository's top directory; no build needed.
set -euo pipefail
root=${SF_ROOT:-$(pwd)}
python3 - "$root" <<'PY'
import glob, os, sys

root = sys.argv[1]


def dec(s):
    # scripts/mutate.sh's apply_mutant: \n, \t and \\ escapes
    return s.replace('\\\\', '\0').replace('\\n', '\n').replace('\\t', '\t').replace('\0', '\\')


bad, seen, total = [], {}, 0
for lst in sorted(glob.glob(os.path.join(root, 'scripts', 'mutants*.tsv'))):
    name = os.path.basename(lst)
    if name == 'mutants-caught.tsv':    # a record of caught ones, not a list
        continue
    for n, line in enumerate(open(lst, encoding='utf-8'), 1):
        if not line.strip() or line.startswith('#'):
            continue
        f = line.rstrip('\n').split('\t')
        where = f"{name}:{n}"
        if len(f) != 5 or not all(f):
            bad.append(f"{where}: not five non-empty fields (id, file, pattern, replacement, what it breaks)")
            continue
        total += 1
        mid, path, pat = f[0], f[1], dec(f[2])
        if mid in seen:
            bad.append(f"{where}: id {mid} is also at {seen[mid]}")
        seen[mid] = where
        src = os.path.join(root, path)
        if not os.path.isfile(src):
            bad.append(f"{where}: {mid}: {path} does not exist")
            continue
        c = open(src, encoding='utf-8').read().count(pat)
        if c != 1:
            bad.append(f"{where}: {mid}: its pattern occurs {c} times in {path}, not once")
for b in bad:
    print("mutants-fresh:", b)
if bad:
    print(f"mutants-fresh: {len(bad)} of {total} mutants are stale: re-target them (docs/mutation.md)")
    sys.exit(1)
print(f"mutants-fresh: all {total} mutants apply to today's code")
PY
