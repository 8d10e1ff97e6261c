#!/usr/bin/env bash
# test/run.d/layers.sh: the layer rule of src/ (src/README.md).
#
#   engine  <  codec  <  persist  <  api
#
# Fails on
#   - an #include of a header of a higher layer, of another folder's
#     private header (*_int.h), or of one of our headers without its folder
#     ("engine.h" instead of "engine/engine.h");
#   - fmgr.h, funcapi.h, executor/spi.h, access/xact.h or utils/guc.h in
#     engine/ or codec/, included directly or through another header (the
#     transitive check needs pg_config and a C compiler; skipped without);
#   - SPI (an SPI_ name or executor/spi.h) outside persist/;
#   - PG_FUNCTION_INFO_V1, PG_FUNCTION_ARGS or PG_MODULE_MAGIC outside api/;
#   - a .c or .h file over 1,000 lines, except those listed in
#     SIZE_EXCEPTIONS below (reported, not failed);
#   - an extern declaration or a prototype of a non-static function at file
#     scope of a .c file (they belong in the folder's header);
#   - in kafka/ (streamforge_kafka, checked when the tree itself is): a .c
#     or .h file over 1,000 lines (no exceptions), an extern declaration in
#     a .c file (they belong in kafka/src/kafka.h or worker.h);
#   - a call against the layer order, and any file-level call cycle: read
#     from the built objects (nm), an undefined symbol of one object that
#     another object defines is an edge between their files.  make brings
#     the objects up to date first;
#   - rule "kinds" (issue 41): outside the window module (engine/
#     window_ops.h, window_kinds.c, window.c, session.c), an SF_WINDOW_*
#     kind constant or a comparison of a window's kind; outside the
#     aggregate module (engine/agg_ops.h, agg_funcs.c, aggregates.c), an
#     SF_AGG_* function constant or a comparison of an aggregate's func;
#     outside both, a string literal equal to a registry name or marker
#     (read from the tables' .name and .marker initializers), but for the
#     NAME_LITERAL_EXCEPTIONS below.  A new kind or function then needs no
#     edit outside its module for the code to find it.
#
# file:literal pairs the "kinds" rule allows, each with its reason:
#   codec/codec_parse.c, codec_write.c "count" "max" "min" "sum": the keys
#     of every checkpoint row's classic aggregate (docs/checkpoint-format.md),
#     a format's spelling, not the functions';
#   api/aggregate_sql.c "session": the SQL name streamforge.session of the
#     constructor, renamed to the session marker in the raw parse tree;
#   persist/sink_rows.c "count" "max" "min" "sum": the columns of
#     streamforge.changelog and streamforge.results (sql/schema/20_tables.sql)
#     that the bulk insert fills by name, a table's spelling, not the
#     functions';
#   persist/sink_typed.c "count" "max" "min" "sum": the same columns of the
#     table of an aggregate's results (sql/objects/66_aggregates_views.sql,
#     aggregate_make_table), matched by name.
NAME_LITERAL_EXCEPTIONS="codec/codec_parse.c:count codec/codec_parse.c:max
codec/codec_parse.c:min codec/codec_parse.c:sum codec/codec_write.c:count
codec/codec_write.c:max codec/codec_write.c:min codec/codec_write.c:sum
api/aggregate_sql.c:session persist/sink_rows.c:count persist/sink_rows.c:max
persist/sink_rows.c:min persist/sink_rows.c:sum persist/sink_typed.c:count
persist/sink_typed.c:max persist/sink_typed.c:min persist/sink_typed.c:sum"

# Usage: test/run.d/layers.sh [SRC_DIR]   (default: $SF_ROOT/src or ./src)
# Exit status 1 on any finding.
set -euo pipefail
root=${SF_ROOT:-$(pwd)}
src=${1:-$root/src}
PG_CONFIG=${PG_CONFIG:-pg_config}

# Files over 1,000 lines that are known and due to be split (issue 22,
# phase B).  Keep this list short, and remove a file once it is split.
SIZE_EXCEPTIONS=""

command -v python3 >/dev/null || { echo "layers.sh: python3 is needed" >&2; exit 1; }
[ -d "$src/engine" ] || { echo "layers.sh: no $src/engine" >&2; exit 1; }

# Objects for the call graph: build them if any is missing or stale (only
# when checking the tree itself; a SRC_DIR argument is checked as it is)
objs=yes
if [ $# -eq 0 ]; then
	targets=()
	for c in "$src"/*/*.c; do
		targets+=("${c#"$root"/}")
	done
	targets=("${targets[@]/%.c/.o}")
	log=$(mktemp)
	if ! make -s -C "$root" -j2 PG_CONFIG="$PG_CONFIG" "${targets[@]}" >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		echo "layers.sh: the build failed" >&2
		exit 1
	fi
	rm -f "$log"
else
	ls "$src"/*/*.o >/dev/null 2>&1 || objs=no
fi

# Compiler and include path for the transitive header check
cc=""
incdir=""
if command -v "$PG_CONFIG" >/dev/null 2>&1; then
	cc=$("$PG_CONFIG" --cc 2>/dev/null | awk '{print $1}')
	incdir=$("$PG_CONFIG" --includedir-server 2>/dev/null)
	command -v "$cc" >/dev/null 2>&1 || cc=""
fi

# streamforge_kafka: the file-size rule, no extern declaration in a .c file
kafka_bad=0
if [ $# -eq 0 ] && [ -d "$root/kafka/src" ]; then
	nk=0
	for f in "$root"/kafka/src/*.c "$root"/kafka/src/*.h "$root"/kafka/tools/*.c; do
		[ -f "$f" ] || continue
		nk=$((nk + 1))
		n=$(wc -l <"$f")
		if [ "$n" -gt 1000 ]; then
			echo "layers: ${f#"$root"/}: $n lines, more than 1000"
			kafka_bad=1
		fi
		case "$f" in
			*.c)
				if grep -qE '^extern[[:space:]]' "$f"; then
					echo "layers: ${f#"$root"/}: an extern declaration in a .c file (it belongs in kafka/src/kafka.h or worker.h)"
					kafka_bad=1
				fi
				;;
		esac
	done
	echo "layers: kafka/: $nk files, $([ "$kafka_bad" -eq 0 ] && echo 'within the file rules' || echo 'problems found')"
fi

status=0
python3 - "$src" "$SIZE_EXCEPTIONS" "$objs" "$cc" "$incdir" "$NAME_LITERAL_EXCEPTIONS" <<'EOF' || status=$?
import os, re, subprocess, sys
from collections import defaultdict

src, size_exceptions, objs, cc, incdir, name_exceptions = sys.argv[1:7]
LAYERS = ['engine', 'codec', 'persist', 'api']
RANK = {l: i for i, l in enumerate(LAYERS)}
PURE = ('engine', 'codec')
FORBIDDEN = ['fmgr.h', 'funcapi.h', 'executor/spi.h', 'access/xact.h', 'utils/guc.h']
MAX_LINES = 1000
exceptions = set(size_exceptions.split())

bad = 0
def report(msg):
    global bad
    bad = 1
    print('layers: ' + msg)

files = []
for layer in sorted(os.listdir(src)):
    d = os.path.join(src, layer)
    if not os.path.isdir(d):
        continue
    if layer not in RANK:
        report('%s/: not a layer (expected %s)' % (layer, ', '.join(LAYERS)))
        continue
    for f in sorted(os.listdir(d)):
        if f.endswith('.c') or f.endswith('.h'):
            files.append(layer + '/' + f)
ours = {os.path.basename(f) for f in files}

def strip_comments(text):
    """Comments and string/char literals blanked, newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(c + ' ' * (min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)

def strip_comments_only(text):
    """Comments blanked, string and char literals kept, newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)

# rule "kinds": the modules, and the registry's names read from its tables
WINDOW_MODULE = {'engine/window_ops.h', 'engine/window_kinds.c', 'engine/window.c', 'engine/session.c'}
AGG_MODULE = {'engine/agg_ops.h', 'engine/agg_funcs.c', 'engine/aggregates.c'}
WINDOW_ALLOWED = {'SF_WINDOW_NKINDS', 'SF_WINDOW_ASSIGNED', 'SF_WINDOW_MERGING'}
AGG_ALLOWED = {'SF_AGG_NFUNCS'}
registry_names = set()
for reg in ('engine/window_kinds.c', 'engine/agg_funcs.c'):
    if not os.path.exists(os.path.join(src, reg)):
        report('%s: missing: the "kinds" rule reads the registry from it' % reg)
        continue
    regtext = open(os.path.join(src, reg), encoding='utf-8', errors='replace').read()
    found_names = re.findall(r'\.(?:name|marker)\s*=\s*"([a-z_]+)"', regtext)
    if not found_names:
        report('%s: no .name = "..." initializer found' % reg)
    registry_names.update(found_names)
literal_exceptions = set(name_exceptions.split())

def check_kinds(f, code, code_strings):
    def line(pos):
        return code.count('\n', 0, pos) + 1
    if f not in WINDOW_MODULE:
        for m in re.finditer(r'\bSF_WINDOW_[A-Z_]+\b', code):
            if m.group(0) not in WINDOW_ALLOWED:
                report('%s:%d: %s: window kinds are named in the window module only (window_ops.h)' % (f, line(m.start()), m.group(0)))
        for m in re.finditer(r'(?:\b(?:w|wd|x|y|a|b)->kind|windows\[[^]]*\]\.kind)\s*[!=]=', code):
            report('%s:%d: %s: compare window kinds in the window module (sf_window_merges, sf_window_def_same, the ops\' facts)' % (f, line(m.start()), m.group(0).strip()))
    if f not in AGG_MODULE:
        for m in re.finditer(r'\bSF_AGG_[A-Z_]+\b', code):
            if m.group(0) not in AGG_ALLOWED:
                report('%s:%d: %s: aggregate functions are named in the aggregate module only (agg_ops.h)' % (f, line(m.start()), m.group(0)))
        for m in re.finditer(r'(?:->|\.)func\s*[!=]=', code):
            report('%s:%d: %s: compare aggregate functions in the aggregate module (the ops\' facts)' % (f, line(m.start()), m.group(0).strip()))
    if f not in WINDOW_MODULE and f not in AGG_MODULE:
        for m in re.finditer(r'"([a-z_]+)"', code_strings):
            lit = m.group(1)
            if lit in registry_names and '%s:%s' % (f, lit) not in literal_exceptions:
                report('%s:%d: "%s": a window kind or aggregate function name outside its module (use the registry; or list it in NAME_LITERAL_EXCEPTIONS with its reason)' % (f, line(m.start()), lit))

for f in files:
    own = f.split('/')[0]
    path = os.path.join(src, f)
    text = open(path, encoding='utf-8', errors='replace').read()
    nlines = text.count('\n')
    code = strip_comments(text)
    check_kinds(f, code, strip_comments_only(text))

    # size
    if nlines > MAX_LINES:
        if f in exceptions:
            print('layers: note: %s has %d lines (a known exception, SIZE_EXCEPTIONS)' % (f, nlines))
        else:
            report('%s: %d lines, more than %d' % (f, nlines, MAX_LINES))
    elif f in exceptions:
        print('layers: note: %s has %d lines now: remove it from SIZE_EXCEPTIONS' % (f, nlines))

    # includes (read from the original text: the code has strings blanked)
    for m in re.finditer(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', text, re.M):
        inc = m.group(1)
        top = inc.split('/')[0] if '/' in inc else None
        if top in RANK:
            if RANK[top] > RANK[own]:
                report('%s: includes "%s", a header of %s/, which is above %s/' % (f, inc, top, own))
            if inc.endswith('_int.h') and top != own:
                report('%s: includes "%s", private to %s/' % (f, inc, top))
            if not os.path.exists(os.path.join(src, inc)):
                report('%s: includes "%s", which does not exist' % (f, inc))
        elif '/' not in inc and inc in ours:
            report('%s: includes "%s" without its folder (write "<layer>/%s")' % (f, inc, inc))
        if own in PURE and inc in FORBIDDEN:
            report('%s: includes "%s": %s/ uses no fmgr, SPI, transaction or GUC header' % (f, inc, own))

    # SPI, fmgr entry points
    if own != 'persist':
        for m in re.finditer(r'\bSPI_\w+|executor/spi\.h', code + '\n'.join(re.findall(r'#\s*include\s*"[^"]*"', text))):
            report('%s: %s: SPI is for persist/ only' % (f, m.group(0)))
            break
    if own != 'api':
        for what in ('PG_FUNCTION_INFO_V1', 'PG_FUNCTION_ARGS', 'PG_MODULE_MAGIC'):
            if re.search(r'\b%s\b' % what, code):
                report('%s: %s: SQL-callable functions are for api/ only' % (f, what))

    # extern declarations and prototypes at file scope of a .c file
    if f.endswith('.c'):
        # drop preprocessor lines (with their continuations)
        body = re.sub(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), code, flags=re.M)
        depth = 0
        paren = 0
        stmt_start = 0
        i = 0
        line_of = lambda pos: body.count('\n', 0, pos) + 1
        while i < len(body):
            ch = body[i]
            if ch == '(':
                paren += 1
            elif ch == ')':
                paren -= 1
            elif ch == '{':
                if depth == 0:
                    head = body[stmt_start:i].strip()
                    is_function = paren == 0 and re.search(r'\)\s*(\w+\s*(\([^()]*\))?\s*)*$', head) and '=' not in head
                    # skip the body
                    d = 0
                    j = i
                    while j < len(body):
                        if body[j] == '{':
                            d += 1
                        elif body[j] == '}':
                            d -= 1
                            if d == 0:
                                break
                        j += 1
                    i = j
                    if is_function:
                        stmt_start = i + 1
                    i += 1
                    continue
            elif ch == ';' and depth == 0 and paren == 0:
                stmt = ' '.join(body[stmt_start:i].split())
                pos = stmt_start + len(body[stmt_start:i]) - len(body[stmt_start:i].lstrip())
                if re.match(r'extern\b', stmt):
                    report('%s:%d: extern declaration in a .c file (put it in a header): %s' % (f, line_of(pos), stmt[:70]))
                elif (not re.match(r'(static|typedef|PG_FUNCTION_INFO_V1|PG_MODULE_MAGIC)\b', stmt)
                      and '(' in stmt and '=' not in stmt
                      and re.match(r'[\w\s\*]+?\b\w+\s*\(', stmt)):
                    report('%s:%d: prototype in a .c file (put it in a header, or make it static): %s' % (f, line_of(pos), stmt[:70]))
                stmt_start = i + 1
            i += 1

# forbidden headers reached through other headers
if cc and incdir:
    for f in files:
        own = f.split('/')[0]
        if own not in PURE or not f.endswith('.c'):
            continue
        r = subprocess.run([cc, '-M', '-I', src, '-I', incdir, os.path.join(src, f)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            report('%s: %s -M failed: %s' % (f, cc, r.stderr.strip()[:200]))
            continue
        deps = r.stdout.replace('\\\n', ' ').split()
        for h in FORBIDDEN:
            if any(dep.endswith('/' + h) for dep in deps):
                report('%s: reaches "%s" through its includes: %s/ uses no fmgr, SPI, transaction or GUC header' % (f, h, own))
else:
    print('layers: note: no pg_config or compiler: transitive header check skipped')

# the call graph, from the objects
if objs == 'yes':
    defs = {}
    undef = defaultdict(set)
    for f in files:
        if not f.endswith('.c'):
            continue
        o = os.path.join(src, f[:-2] + '.o')
        if not os.path.exists(o):
            report('%s: no object %s to read calls from' % (f, o))
            continue
        out = subprocess.run(['nm', o], capture_output=True, text=True, check=True).stdout
        for l in out.splitlines():
            p = l.split()
            if len(p) == 3 and p[1] in 'TDBRCGSV':
                defs[p[2]] = f
            elif len(p) == 2 and p[0] == 'U':
                undef[f].add(p[1])
    graph = defaultdict(set)
    for f, syms in undef.items():
        for s in sorted(syms):
            g = defs.get(s)
            if g is None or g == f:
                continue
            graph[f].add(g)
            lf, lg = f.split('/')[0], g.split('/')[0]
            if RANK[lg] > RANK[lf]:
                report('%s uses %s of %s: %s/ is above %s/' % (f, s, g, lg, lf))
    # file-level cycles (Tarjan)
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))
    for v in sorted(set(graph) | set(defs.values())):
        if v not in index:
            visit(v)
    for comp in found:
        report('call cycle between files: %s' % ', '.join(comp))
else:
    print('layers: note: no objects in %s: call graph not checked' % src)

print('layers: %d files, %s' % (len(files), 'problems found' if bad else 'the layer rule holds'))
sys.exit(bad)
EOF
[ "$kafka_bad" -eq 0 ] || status=1
exit "$status"
