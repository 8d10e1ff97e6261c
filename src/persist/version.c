/*-------------------------------------------------------------------------
 *
 * version.c
 *	  The library's version against the installed extension's.
 *
 * After a package upgrade, a backend that loaded the library before it
 * keeps running the old code until it ends, while new backends load the
 * new library and may write journal rows and snapshots in formats the old
 * code does not know.  A library serves SQL definitions of its own version
 * or older (between the package upgrade and ALTER EXTENSION UPDATE the
 * database keeps the previous version's definitions, which keep working),
 * but not newer ones: those mean that this backend runs a library older
 * than the one the database was updated for, and its only remedy is to
 * reconnect.  sf_check_library_version() says so, before the old code can
 * misread anything newer as corruption.
 *
 * Cost: one catalog lookup per backend, and again after an invalidation of
 * pg_proc (ALTER EXTENSION UPDATE replaces functions) or of the catalog
 * caches as a whole; acl.c calls it when it revalidates the extension's
 * owner, which every call needs first.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/version.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "engine/engine.h"
#include "persist/persist.h"
#include "persist/persist_int.h"

#ifndef SF_LIBRARY_VERSION
#error "SF_LIBRARY_VERSION must be defined (the Makefile passes the control file's default_version)"
#endif
#ifndef SF_LIBRARY_NAME
#error "SF_LIBRARY_NAME must be defined (the Makefile passes MODULE_big)"
#endif

/*
 * This library was loaded next to another streamforge library (module.c's
 * _PG_init), which is allowed only inside CREATE or ALTER EXTENSION.
 */
bool		sf_foreign_library = false;

static bool version_checked = false;
static bool version_callback_registered = false;

static void
version_inval(Datum arg, int cacheid, uint32 hashvalue)
{
	version_checked = false;
}

/*
 * Parse "major.minor.patch" (missing parts are 0) into v; false if s is
 * not of that form (a development version string is then not compared).
 */
static bool
parse_version(const char *s, int v[3])
{
	int			i;

	for (i = 0; i < 3; i++)
		v[i] = 0;
	for (i = 0; i < 3; i++)
	{
		int			n = 0;
		int			digits = 0;

		while (*s >= '0' && *s <= '9' && digits < 6)
		{
			n = n * 10 + (*s - '0');
			s++;
			digits++;
		}
		if (digits == 0)
			return false;
		v[i] = n;
		if (*s == '\0')
			return true;
		if (*s != '.')
			return false;
		s++;
	}
	return false;
}

/* The installed version of extension streamforge (palloc'd), or NULL if none */
char *
sf_installed_version(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	char	   *result = NULL;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("streamforge"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, Anum_pg_extension_extversion,
									 RelationGetDescr(rel), &isnull);

		if (!isnull)
			result = text_to_cstring(DatumGetTextPP(d));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return result;
}

/*
 * The error of a library loaded next to another streamforge library: each
 * version has its own (docs/packaging.md, "The libraries"), and a backend
 * that used one cannot use the other, except in the update script that
 * moves the database from the one to the other.
 */
void
sf_foreign_library_error(void)
{
	ereport(ERROR,
			errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			errmsg("this session has loaded another version of the streamforge library"),
			errdetail("Library \"%s\" cannot be used next to it.", SF_LIBRARY_NAME),
			errhint("Reconnect.  If the server preloads \"streamforge\", remove it from "
					"shared_preload_libraries or session_preload_libraries."));
}

/*
 * Refuse to go on if the database's streamforge is newer than this
 * backend's library (see the header comment), or if this library was
 * loaded next to another one outside an extension script.
 */
void
sf_check_library_version(void)
{
	char	   *installed;
	int			lib[3];
	int			ext[3];

	if (unlikely(sf_foreign_library) && !creating_extension)
		sf_foreign_library_error();
	if (version_checked)
		return;
	if (!version_callback_registered)
	{
		CacheRegisterSyscacheCallback(PROCOID, version_inval, (Datum) 0);
		version_callback_registered = true;
	}
	/* an update script runs under the version it installs */
	if (creating_extension)
		return;
	installed = sf_installed_version();
	if (installed != NULL &&
		parse_version(SF_LIBRARY_VERSION, lib) &&
		parse_version(installed, ext) &&
		(ext[0] > lib[0] ||
		 (ext[0] == lib[0] && (ext[1] > lib[1] ||
							   (ext[1] == lib[1] && ext[2] > lib[2])))))
		ereport(ERROR,
				errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				errmsg("this session runs streamforge library %s, older than the installed extension version %s",
					   SF_LIBRARY_VERSION, installed),
				errdetail("The session loaded the library before the package was upgraded; "
						  "it cannot read what the new library writes."),
				errhint("Reconnect to load the new library."));
	version_checked = true;
}
