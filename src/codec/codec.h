/*-------------------------------------------------------------------------
 *
 * codec.h
 *	  The public interface of the codec (src/codec/): a pipeline's state as
 *	  bytes and back.
 *
 * Three formats: the canonical checkpoint (codec.c with codec_write.c,
 * codec_parse.c, codec_validate.c and codec_derive.c, over the canonical
 * JSON of canonjson.c; docs/semantics.md, Checkpoints), the binary snapshot persist.c
 * stores (snapshot.c), and the journal entries of write calls (journal.c:
 * encoders and replay; storing them is persist.c's).
 * The codec sits above the engine and below persistence: it uses
 * engine/engine.h only, and no fmgr, SPI, transaction or GUC header
 * (test/run.d/layers.sh checks it).  codec_int.h is private to src/codec/.
 *
 * Copyright (c) 2026, the streamforge authors
 *
 * IDENTIFICATION
 *	  src/codec/codec.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SF_CODEC_H
#define SF_CODEC_H

#include "engine/engine.h"
#include "codec/options.h"

/* codec.c: checkpoint bytes <-> state */
extern int	sf_max_checkpoint_size;
extern bytea *sf_checkpoint_encode(SfPipeline *p);
extern SfPipeline *sf_checkpoint_decode(MemoryContext parent,
										const SfPipelineDef *def,
										const char *data, Size len);
extern SfPipeline *sf_checkpoint_restore(MemoryContext parent,
										 const SfPipelineDef *def,
										 const char *data, Size len);
extern char *sf_checkpoint_document(const char *data, Size len);
extern void sf_check_checkpoint_size(const char *data, Size len);

/* snapshot.c: the persisted snapshot (binary; from 0.1.0, a checkpoint) */
extern bytea *sf_snapshot_encode(SfPipeline *p);
extern uint32 sf_snapshot_version(const SfPipeline *p);
extern SfPipeline *sf_snapshot_decode(MemoryContext parent,
									  const SfPipelineDef *def,
									  const char *data, Size len);

/*
 * journal.c: the journal entries a write call appends, and their replay.
 * The encoders initialize buf and leave its first VARHDRSZ bytes free: the
 * entry is buf->data + VARHDRSZ, buf->len - VARHDRSZ bytes, and setting the
 * header (SET_VARSIZE(buf->data, buf->len)) makes it a bytea in place.
 */
extern void sf_journal_encode_ingest(StringInfo buf, SfPipeline *p,
									 const SfDelivery *d,
									 const SfDeliveryHash *h, int n);
extern void sf_journal_encode_ingest_measures(StringInfo buf, SfPipeline *p,
											  const SfDelivery *d,
											  const SfDeliveryHash *h, int n,
											  const int64 *measures);
extern void sf_journal_encode_advance(StringInfo buf, SfPipeline *p,
									  const char *partition, int64 progress);
extern void sf_journal_encode_mark_idle(StringInfo buf, SfPipeline *p,
										const char *partition);
extern void sf_journal_replay(SfPipeline *p, const char *data, Size len);
extern void sf_journal_replay_to(SfPipeline *p, const char *data, Size len,
								 void (*deliver) (void *arg,
												  const SfDelivery *d,
												  const int64 *mv),
								 void *arg);
extern bytea *sf_journal_sequence(const char *entries, Size len, int count);

/*
 * parallel_codec.c: a parallel pipeline's head entries (format 5), lane K
 * entries (format 6), head and lane snapshots (versions 4 and 5), and the
 * checkpoint of head and lanes (issue 46)
 */
struct SfHead;
struct SfTxn;
struct SfHeadEntry;
struct SfLaneK;
extern void sf_head_entry_encode(StringInfo buf, const SfPipelineDef *def,
								 const struct SfHeadEntry *e);
extern struct SfHeadEntry *sf_head_entry_decode(const SfPipelineDef *def,
												const char *data, Size len);
extern void sf_head_entry_replay(struct SfHead *h, const char *data,
								 Size len, SfChangeList *out);
extern bool sf_lane_k_encode(StringInfo buf, struct SfHead *h,
							 const struct SfTxn *t,
							 const struct SfHeadEntry *e, int pi);
extern struct SfLaneK *sf_lane_k_decode(const SfPipelineDef *def,
										const char *data, Size len);
struct SfLaneLoad;
extern void sf_lane_entry_replay(struct SfLaneLoad *l, const char *data,
								 Size len);
extern bytea *sf_lane_snapshot_encode(struct SfHead *h, int pi);
extern bytea *sf_head_snapshot_encode(struct SfHead *h);
extern struct SfHead *sf_head_snapshot_decode(MemoryContext parent,
											  const SfPipelineDef *def,
											  const char *data, Size len,
											  const char *const *lanes,
											  const Size *lane_lens);
extern bytea *sf_head_checkpoint_encode(struct SfHead *h);
extern struct SfHead *sf_head_checkpoint_restore(MemoryContext parent,
												 const SfPipelineDef *def,
												 const char *data, Size len);

/* canonjson.c: the decimal spelling of an int128 */
extern char *sf_int128_out(int128 v);

#endif							/* SF_CODEC_H */
