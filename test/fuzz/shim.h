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

/* the input with its checksums made right (malloc'd; NULL: not possible) */
extern uint8_t *shim_snapshot_fixed(const uint8_t *data, size_t size);
extern uint8_t *shim_checkpoint_fixed(const uint8_t *data, size_t size,
									   size_t *outsize);

#endif							/* SF_FUZZ_SHIM_H */
