/*-------------------------------------------------------------------------
 *
 * persist_int.h
 *	  Declarations shared by the files of src/persist/ and nobody else.
 *	  Files outside src/persist/ use persist/persist.h only
 *	  (test/run.d/layers.sh checks it).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/persist/persist_int.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_PERSIST_INT_H
#define SF_PERSIST_INT_H

#include "persist/persist.h"

/* acl.c */
extern void sf_acl_copy(SfAcl *dst, const SfAcl *src, MemoryContext cxt);

/* catalog.c: the "did you mean" hint of an unknown pipeline */
extern char *similar_pipelines(const char *name);

#endif							/* SF_PERSIST_INT_H */
