# shellcheck shell=bash
# scripts/memcheck.sh: the memory-checking modes of scripts/test.sh
# (sourced by it, not run): --valgrind and --asan.  docs/testing.md says
# what each catches and what it cannot.
#
# Both work on the private PostgreSQL tree of the run (scripts/lib.sh,
# sf_private_tree): its bin/postgres is renamed postgres.real and replaced
# by a wrapper script, so every server the suite starts from that tree
# (pg_regress's and pg_isolation_regress's temporary instances, TAP
# clusters) runs under the tool, and nothing outside the scratch directory
# changes.  The wrapper runs initdb's bootstrap and single-user runs
# (--boot, --single) and the version checks (-V, --version, -C) without the
# tool: streamforge is not loaded there, and valgrind would make initdb take
# minutes.
#
#   valgrind  memcheck on the Debian server binary, with
#             test/valgrind.supp (PostgreSQL 15's suppressions); one log per
#             process in $SF_MC_LOGDIR.  An error whose report (its stack, or
#             with --track-origins the stack of the allocation an
#             uninitialised value came from) has a frame in streamforge is a
#             finding and fails the run; an error inside PostgreSQL alone is
#             listed, and does not fail it.  A process that valgrind saw die
#             of SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT is a finding too.
#   asan      the extension rebuilt in the scratch copy with
#             -fsanitize=address,undefined (gcc, the server's compiler); the
#             server runs with gcc's libasan preloaded (and
#             test/asan/preload.c, which lets it start).  Any report of
#             AddressSanitizer or UBSan, in any server process, is a finding.

# Flags of the --asan build (added to CFLAGS and LDFLAGS through PGXS's
# COPT).  -fno-sanitize-recover: a UBSan report ends the backend, so a test
# shows it too.  -Wno-error: gcc's flow warnings can change with the
# instrumentation, and the normal build (-Werror) is the one that judges
# warnings; today this build has none.
SF_ASAN_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -Wno-error"
SF_ASAN_RUNTIME=
SF_VALGRIND_SUPP=$SF_ROOT/test/valgrind.supp

# Packages the modes need besides the suite's.
sf_mc_packages() {
	case "$1" in
	valgrind) echo valgrind ;;
	asan) echo gcc ;;
	esac
}

# Rebuild the extension in the scratch copy $1 with the sanitizers (the
# checkout's own build is untouched).  Dies on failure.
sf_mc_asan_build() {
	local dir=$1 cc
	cc=$(sf_make_var "$dir" CC)
	SF_ASAN_RUNTIME=$($cc -print-file-name=libasan.so)
	[ -f "$SF_ASAN_RUNTIME" ] || sf_die "$cc has no libasan.so (print-file-name gave \"$SF_ASAN_RUNTIME\")"
	# -print-file-name gives the linker script's directory; the runtime to
	# preload is the shared object it names.
	SF_ASAN_RUNTIME=$(readlink -f "$SF_ASAN_RUNTIME")
	sf_say "asan: rebuilding in $dir with $cc $SF_ASAN_CFLAGS"
	make -C "$dir" clean >/dev/null 2>&1
	make -C "$dir" -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG" \
		COPT="$SF_ASAN_CFLAGS" >"$dir/asan-build.log" 2>&1 || {
		tail -n 40 "$dir/asan-build.log"
		sf_die "the sanitizer build failed ($dir/asan-build.log)"
	}
	local module
	module=$(sf_make_var "$dir" MODULE_big).so
	[ "$(nm -D "$dir/$module" | grep -c " U __asan_init$")" -eq 1 ] ||
		sf_die "$dir/$module is not instrumented (no __asan_init)"
	# preloaded after the runtime: test/asan/preload.c says why
	$cc -shared -fPIC -O1 -o "$dir/test/asan/libsfpreload.so" "$dir/test/asan/preload.c" ||
		sf_die "building test/asan/preload.c failed"
	SF_ASAN_RUNTIME="$SF_ASAN_RUNTIME $dir/test/asan/libsfpreload.so"
}

# Replace bin/postgres of the private tree whose bindir is $1 by the wrapper
# of mode $2, logging into $3.
sf_mc_wrap_server() {
	local bindir=$1 mode=$2 logdir=$3 run
	mv "$bindir/postgres" "$bindir/postgres.real" || sf_die "cannot move $bindir/postgres"
	case "$mode" in
	valgrind)
		run="exec valgrind --quiet --trace-children=yes --track-origins=yes \\
	--read-var-info=no --leak-check=no --num-callers=40 --fullpath-after= \\
	--gen-suppressions=all --suppressions=$SF_VALGRIND_SUPP \\
	--error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END \\
	--log-file=$logdir/%p.log \"\$real\" \"\$@\""
		;;
	asan)
		# exec -a: the server takes its own path (recorded in postmaster.opts,
		# which "pg_ctl restart" runs again) from argv[0], so that a restart
		# comes back through this wrapper.  Valgrind cannot pass an argv[0]:
		# a server that "pg_ctl restart" started runs without it.
		run="export LD_PRELOAD='$SF_ASAN_RUNTIME'
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1:detect_odr_violation=0:log_path=$logdir/asan
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$logdir/ubsan
exec -a \"\$0\" \"\$real\" \"\$@\""
		;;
	*) sf_die "unknown memcheck mode \"$mode\"" ;;
	esac
	cat >"$bindir/postgres" <<EOF
#!/bin/bash
# scripts/memcheck.sh: postgres under $mode (the real binary is postgres.real)
real="\$(dirname "\$0")/postgres.real"
for a in "\$@"; do
	case "\$a" in
	--boot | --single | -V | --version | -C) exec "\$real" "\$@" ;;
	esac
done
$run
EOF
	chmod 755 "$bindir/postgres"
}

# Scan the logs in $1 for mode $2, of the build in directory $3, with the
# run's servers' logs under directory $4 (--asan).  Prints a
# summary (and the reports that are findings, into $1/findings.txt as
# well); returns non-zero when there is a finding.
sf_mc_scan() {
	local logdir=$1 mode=$2 build=$3
	case "$mode" in
	valgrind) sf_mc_scan_valgrind "$logdir" "$build" ;;
	asan) sf_mc_scan_asan "$logdir" "$4" ;;
	esac
}

# A frame of streamforge reads "fn (/build/dir/src/file.c:line)" with its
# debug information (--fullpath-after= gives the whole path) or
# "(in .../streamforge-<version>.so)" without (or streamforge.so, the
# compat library of the older versions' SQL).
sf_mc_scan_valgrind() {
	local logdir=$1 build=$2 logs files
	mapfile -t files < <(find "$logdir" -name '*.log' | sort)
	logs=${#files[@]}
	# Split every log into its error blocks; each block is one error.
	awk -v findings="$logdir/findings.txt" -v others="$logdir/postgres-only.txt" \
		-v counts="$logdir/counts" -v src="($build/src/" '
		FNR == 1 { file = FILENAME }
		/VALGRINDERROR-BEGIN/ { inblk = 1; blk = ""; next }
		/VALGRINDERROR-END/ {
			inblk = 0
			if (blk ~ /streamforge(-[0-9.]+)?\.so/ || index(blk, src) > 0) {
				nf++; print "==== " file > findings; print blk > findings
			} else {
				no++; print "==== " file > others; print blk > others
			}
			next
		}
		inblk { blk = blk $0 "\n"; next }
		/Process terminating with default action of signal (4|6|7|8|11) / {
			nf++; print "==== " file > findings; print $0 > findings
			stack = 20; next
		}
		stack > 0 { stack--; print $0 > findings; if (stack == 0) print "" > findings }
		END { printf "%d %d\n", nf, no > counts }
	' /dev/null "${files[@]}"
	local nf no
	read -r nf no <"$logdir/counts"
	sf_say "valgrind: $logs process logs, $nf findings (errors in streamforge, crashes), $no errors inside PostgreSQL alone (not counted)"
	if [ "$no" -gt 0 ]; then
		echo "    PostgreSQL-only errors: $logdir/postgres-only.txt; the first:"
		sed -n '1,/^$/p' "$logdir/postgres-only.txt" | head -n 30 | sed 's/^/    /'
	fi
	if [ "$nf" -gt 0 ]; then
		sf_say "valgrind findings ($logdir/findings.txt):"
		cat "$logdir/findings.txt"
		return 1
	fi
	return 0
}

# ASan writes its reports to log_path; UBSan's (its handlers are in the
# same runtime) go to the server's stderr, that is its log, as one line
# "file:line:col: runtime error: ...": both are findings.
sf_mc_scan_asan() {
	local logdir=$1 serverlogs=$2 f n=0
	: >"$logdir/findings.txt"
	for f in "$logdir"/asan.* "$logdir"/ubsan.*; do
		[ -s "$f" ] || continue
		n=$((n + 1))
		{
			echo "==== $f"
			cat "$f"
		} >>"$logdir/findings.txt"
	done
	while IFS= read -r f; do
		grep -qE 'runtime error:|ERROR: [A-Za-z]+Sanitizer' "$f" || continue
		n=$((n + $(grep -cE 'runtime error:|ERROR: [A-Za-z]+Sanitizer' "$f")))
		{
			echo "==== $f"
			grep -E -A20 'runtime error:|ERROR: [A-Za-z]+Sanitizer' "$f"
		} >>"$logdir/findings.txt"
	done < <(find "$serverlogs" -path "$logdir" -prune -o -path '*/log/*' -name '*.log' -print 2>/dev/null)
	sf_say "asan: $n sanitizer reports"
	if [ "$n" -gt 0 ]; then
		cat "$logdir/findings.txt"
		return 1
	fi
	return 0
}
