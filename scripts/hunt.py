#!/usr/bin/env python3
"""scripts/hunt.py: the mutants of scripts/mutate.sh's hunt mode.

Writes, on standard output, a mutant list in the format of
scripts/mutants.tsv (id, file, pattern, replacement, what it breaks) for
the lines that a git range added or changed in src/*.c, of five kinds:

  cmp     a comparison flipped: < <=, > >=, == != (each way)
  off1    an off-by-one at a bound: a comparison's integer constant moved
          by one, or a "+ 1" / "- 1" dropped
  carry   a carry or an accumulation dropped: a statement "x += e;",
          "x++;", or "x = x + e;" / "x = (T) ((U) x + e);" (over up to
          five lines), removed
  free    a free skipped: pfree, list_free(_deep), bms_free, MemoryContextDelete,
          MemoryContextReset, hash_destroy, SPI_freetuptable removed
  state   a SQLSTATE swapped: errcode(ERRCODE_X) becomes another errcode of
          the same file (the next one in alphabetical order), or
          ERRCODE_INTERNAL_ERROR when the file has only one

Usage: hunt.py ROOT RANGE [--kinds cmp,off1,...] [--max N] [--] [PATH...]
  ROOT   the checkout (git -C ROOT diff RANGE)
  RANGE  a git range (A..B, or A for A..the working tree)
  PATH   restrict to these files (default: every src/*.c the range touched);
         FILE:A-B restricts FILE to its lines A to B (may be repeated)
  --max  keep at most N mutants, spread evenly over the list (the same N
         gives the same mutants)

--equivalent FILE (default scripts/hunt-equivalent.tsv under ROOT, if it
exists) lists mutants argued equivalent in docs/mutation.md, one a line,
tab-separated: file, pattern, replacement (encoded as in the list), the
reason.  A written mutant with the same file, pattern and replacement gets
"equivalent: <reason>" as its description, so that mutate.sh leaves it out
of the kill rate (and --skip-equivalent skips it).

Each pattern is the changed line with as many neighbouring lines as make
it occur exactly once in the file as it is now (mutate.sh applies a
mutant only where its pattern occurs exactly once).  Lines inside
comments, Assert()s and elog(DEBUG...) are skipped; so are lines of
#define and #include.
"""
import re
import subprocess
import sys

KINDS_ALL = ["cmp", "off1", "carry", "free", "state"]


def enc(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def changed_lines(root, rng, paths):
    """{file: set(line numbers in the new version)}"""
    args = ["git", "-C", root, "diff", "-U0", "--no-color", rng, "--"]
    args += paths if paths else ["src/*.c", "src/**/*.c"]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    res = {}
    cur = None
    for line in out.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            cur = name[2:] if name.startswith("b/") else None
            if cur is not None and not cur.endswith(".c"):
                cur = None
            if cur is not None:
                res.setdefault(cur, set())
        elif line.startswith("@@") and cur is not None:
            m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            start = int(m.group(1))
            count = int(m.group(2)) if m.group(2) is not None else 1
            res[cur].update(range(start, start + count))
    return res


def code_mask(lines):
    """for each line: True if it is code (not inside a comment, a
    preprocessor line, an Assert or a DEBUG elog)"""
    mask = []
    in_comment = False
    for text in lines:
        s = text.strip()
        code = True
        if in_comment:
            code = False
            if "*/" in s:
                in_comment = False
        elif s.startswith("/*"):
            code = False
            if "*/" not in s:
                in_comment = True
        elif s.startswith("*") or s.startswith("//") or s.startswith("#"):
            code = False
        elif "Assert(" in s or "elog(DEBUG" in s or "StaticAssert" in s:
            code = False
        mask.append(code)
    return mask


def blank_strings(s):
    """s with the contents of string and character literals blanked"""
    out = []
    quote = None
    esc = False
    for ch in s:
        if quote:
            if esc:
                esc = False
                out.append(" ")
            elif ch == "\\":
                esc = True
                out.append(" ")
            elif ch == quote:
                quote = None
                out.append(ch)
            else:
                out.append(" ")
        else:
            if ch in "\"'":
                quote = ch
            out.append(ch)
    return "".join(out)


def strip_trailing_comment(s):
    i = s.find("/*")
    return s if i < 0 else s[:i]


CMP = [("<=", "<"), (">=", ">"), ("==", "!="), ("!=", "=="), ("<", "<="), (">", ">=")]
CMP_RE = re.compile(r"(?<![<>=!&|+\-*/%^-])(<=|>=|==|!=|<|>)(?![<>=])")
FREE_RE = re.compile(r"^\s*(pfree|list_free|list_free_deep|bms_free|MemoryContextDelete|"
                     r"MemoryContextReset|hash_destroy|SPI_freetuptable)\s*\(.*\);\s*$")
ACC_RE = re.compile(r"^\s*([A-Za-z_][\w.\->\[\]+ ]*?)\s*\+=\s*[^;]+;\s*$")
INC_RE = re.compile(r"^\s*([A-Za-z_][\w.\->\[\]+ ]*?)(\+\+|--);\s*$")
ASSIGN_RE = re.compile(r"^\s*([A-Za-z_][\w.\->\[\]+ ]*?)\s*=\s*(.+);\s*$")
ERRCODE_RE = re.compile(r"ERRCODE_[A-Z0-9_]+")


def mutations(text, kinds, errcodes):
    """(kind, new text, what) for one line of code"""
    code = blank_strings(strip_trailing_comment(text))
    res = []
    if "cmp" in kinds:
        for m in CMP_RE.finditer(code):
            op = m.group(1)
            # the lookarounds leave out ->, <<, >>, <<=, >>= and compound
            # assignments; string literals are blanked
            new = dict(CMP)[op]
            res.append(("cmp", text[:m.start()] + new + text[m.end():],
                        "comparison %s flipped to %s" % (op, new)))
    if "off1" in kinds:
        for m in re.finditer(r"(<=|>=|==|!=|<|>)\s*(-?\d+)\b(?![.\w])", code):
            n = int(m.group(2))
            for d in (1, -1):
                new = text[:m.start(2)] + str(n + d) + text[m.end(2):]
                res.append(("off1", new, "bound %s %d moved to %d" % (m.group(1), n, n + d)))
        for m in re.finditer(r"\s[+-] 1\b(?![.\w])", code):
            new = text[:m.start()] + text[m.end():]
            res.append(("off1", new, "%s dropped" % m.group(0).strip()))
    if "carry" in kinds:
        m = ACC_RE.match(code) or INC_RE.match(code)
        if m:
            indent = text[:len(text) - len(text.lstrip())]
            res.append(("carry", indent + ";", "accumulation %s dropped" % code.strip()))
        else:
            m = ASSIGN_RE.match(code)
            if m:
                lhs = m.group(1).strip()
                rhs = m.group(2)
                # x = x + e, or x = (T) ((U) x + e): the left side first
                if re.match(r"^[()\s\w]*?(?<![\w.>])" + re.escape(lhs) + r"\s*\+", rhs):
                    indent = text[:len(text) - len(text.lstrip())]
                    res.append(("carry", indent + ";", "accumulation %s dropped" % code.strip()))
    if "free" in kinds and FREE_RE.match(code):
        indent = text[:len(text) - len(text.lstrip())]
        res.append(("free", indent + ";", "%s skipped" % code.strip()))
    if "state" in kinds and "errcode(" in code:
        for m in ERRCODE_RE.finditer(code):
            cur = m.group(0)
            others = sorted(c for c in errcodes if c != cur)
            if others:
                nxt = next((c for c in others if c > cur), others[0])
            else:
                nxt = "ERRCODE_INTERNAL_ERROR"
            if nxt == cur:
                continue
            res.append(("state", text[:m.start()] + nxt + text[m.end():],
                        "SQLSTATE %s swapped for %s" % (cur, nxt)))
    return res


def unique_pattern(lines, i, new_line):
    """(pattern, replacement): line i with neighbours, unique in the file"""
    src = "\n".join(lines)
    lo, hi = i, i
    while True:
        pat = "\n".join(lines[lo:hi + 1])
        if src.count(pat) == 1:
            rep = "\n".join(lines[lo:i] + [new_line] + lines[i + 1:hi + 1])
            return pat, rep
        if lo == 0 and hi == len(lines) - 1:
            return None
        # grow downwards first, then upwards
        if hi < len(lines) - 1 and (hi - i) <= (i - lo):
            hi += 1
        elif lo > 0:
            lo -= 1
        else:
            hi += 1


def main(argv):
    kinds = list(KINDS_ALL)
    maxn = 0
    eqfile = None
    rest = []
    paths = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--kinds":
            kinds = argv[i + 1].split(",")
            bad = [k for k in kinds if k not in KINDS_ALL]
            if bad:
                sys.exit("unknown kind(s): %s (the kinds: %s)" % (",".join(bad), ",".join(KINDS_ALL)))
            i += 2
            continue
        if a == "--max":
            maxn = int(argv[i + 1])
            i += 2
            continue
        if a == "--equivalent":
            eqfile = argv[i + 1]
            i += 2
            continue
        if a == "--":
            paths = argv[i + 1:]
            break
        rest.append(a)
        i += 1
    if len(rest) < 2:
        sys.exit(__doc__)
    root, rng = rest[0], rest[1]
    paths += rest[2:]
    out = []
    ranges = {}
    plain = []
    for p in paths:
        m = re.match(r"^(.*):(\d+)-(\d+)$", p)
        if m:
            ranges.setdefault(m.group(1), []).append((int(m.group(2)), int(m.group(3))))
            if m.group(1) not in plain:
                plain.append(m.group(1))
        else:
            plain.append(p)
    for f, nums in sorted(changed_lines(root, rng, plain).items()):
        if f in ranges:
            nums = {n for n in nums if any(a <= n <= b for a, b in ranges[f])}
        try:
            with open("%s/%s" % (root, f)) as fh:
                lines = fh.read().split("\n")
        except FileNotFoundError:
            continue
        mask = code_mask(lines)
        errcodes = set(ERRCODE_RE.findall("\n".join(l for l, c in zip(lines, mask) if c)))
        base = f.rsplit("/", 1)[-1][:-2]
        n = 0
        for ln in sorted(nums):
            idx = ln - 1
            if idx < 0 or idx >= len(lines) or not mask[idx]:
                continue
            cands = mutations(lines[idx], kinds, errcodes)
            stmt = strip_trailing_comment(lines[idx]).rstrip()
            # a statement over several lines ("x = (T) ((U) x +\n y);"):
            # joined, and dropped whole
            if ("carry" in kinds and not stmt.endswith(";") and "=" in stmt
                    and re.match(r"^\s*[A-Za-z_][\w.\->\[\] +]*\s*=[^=]", stmt)):
                j = idx
                joined = stmt
                while not joined.endswith(";") and j + 1 < len(lines) and j - idx < 4:
                    j += 1
                    joined += " " + strip_trailing_comment(lines[j]).strip()
                if joined.endswith(";"):
                    for kind, new, what in mutations(joined, ["carry"], errcodes):
                        indent = lines[idx][:len(lines[idx]) - len(lines[idx].lstrip())]
                        pat = "\n".join(lines[idx:j + 1])
                        if "\n".join(lines).count(pat) == 1:
                            n += 1
                            out.append("\t".join(["h-%s-%d-%s-%d" % (base, ln, kind, n), f,
                                                   enc(pat), enc(indent + ";"),
                                                   "%s, line %d: %s" % (f, ln, what)]))
            for kind, new, what in cands:
                up = unique_pattern(lines, idx, new)
                if up is None:
                    continue
                n += 1
                mid = "h-%s-%d-%s-%d" % (base, ln, kind, n)
                out.append("\t".join([mid, f, enc(up[0]), enc(up[1]),
                                      "%s, line %d: %s" % (f, ln, what)]))
    if maxn and len(out) > maxn:
        step = len(out) / maxn
        out = [out[int(k * step)] for k in range(maxn)]
    # the mutants argued equivalent (docs/mutation.md)
    if eqfile is None:
        eqfile = "%s/scripts/hunt-equivalent.tsv" % root
        try:
            open(eqfile).close()
        except FileNotFoundError:
            eqfile = None
    if eqfile is not None:
        eq = {}
        with open(eqfile) as fh:
            for row in fh.read().split("\n"):
                if not row or row.startswith("#"):
                    continue
                cols = row.split("\t")
                if len(cols) != 4:
                    sys.exit("%s: not four tab-separated fields: %s" % (eqfile, row))
                eq[tuple(cols[:3])] = cols[3]
        for k, line in enumerate(out):
            cols = line.split("\t")
            why = eq.get(tuple(cols[1:4]))
            if why is not None:
                cols[4] = "equivalent: %s (%s)" % (why, cols[4])
                out[k] = "\t".join(cols)
    print("# generated by scripts/hunt.py %s (%s)" % (rng, ",".join(kinds)))
    for line in out:
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
