/*-------------------------------------------------------------------------
 *
 * shim.h
 *	  What the fuzz harness reads back from the backend shim (shim.c).
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  test/fuzz/shim.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_FUZZ_SHIM_H
#define SF_FUZZ_SHIM_H

/* SQLSTATE, message and detail of the last ERROR raised */
extern int	shim_sqlerrcode;
extern char shim_message[1024];
extern char shim_detail[1024];

#endif							/* SF_FUZZ_SHIM_H */
