/*
 * test/asan/preload.c: preloaded after the ASan runtime into the (not
 * instrumented) server by scripts/test.sh --asan (scripts/memcheck.sh).
 *
 * The runtime, preloaded, initializes at the first malloc.  In the Debian
 * server that is in the constructor of libgpg-error, inside glibc's
 * bindtextdomain(), which holds the gettext lock for writing.  The
 * runtime's initialization looks up swift_demangle with dlsym(); when that
 * fails, dlerror() translates its message and takes the same lock for
 * reading, which leaves the lock broken: the server then hangs at its own
 * bindtextdomain() in main().  Defining the symbol makes the lookup
 * succeed, so nothing is translated during the initialization.  The
 * runtime never calls it for C code (only for Swift-mangled names).
 */
#include <stddef.h>

char	   *swift_demangle(const char *mangled, size_t mangled_len,
						   char *out, size_t *out_len, unsigned int flags);

char *
swift_demangle(const char *mangled, size_t mangled_len,
			   char *out, size_t *out_len, unsigned int flags)
{
	return NULL;
}
