/*
 * worker.h: what the two halves of a subscription's worker share.
 *
 *   worker.c   start (read and check the subscription, the consumer),
 *              status, outages, the main loop
 *   batch.c    collect a batch, map and ingest it in one transaction, bad
 *              messages, watermarks, lost offsets
 */
#ifndef SFK_WORKER_H
#define SFK_WORKER_H

#include "kafka.h"

/* The subscription, as read at start (lives in TopMemoryContext). */
typedef struct SfkSub
{
	int32		id;
	Oid			role;
	bool		superuser;		/* whether role was one at start */
	char	   *pipeline;
	char	   *brokers;
	char	   *topic;
	char	   *format;
	char	   *prefix;
	bool		stop_on_error;
	int			batch_size;
	int			max_wait;
	int64		ooo;
	int			nparts;
	int64		unit_us;
	Jsonb	   *mapping;
	Jsonb	   *options;
	SPIPlanPtr	plan;
	bool		aggregate;		/* feeds an aggregate (aggmap.c) */
	Oid			agg_relid;		/* its table: its owner runs its expressions */
	bool		cmap;			/* mapped in C (cmap.c) */
	bool		aggrow;			/* an aggregate's rows made in C (aggrow.c) */
	bool		measures;		/* its pipeline has measures */
	int		   *trailing;		/* non-matching offsets left by a run */
	char	  **pnames;			/* pipeline partition of each Kafka partition */
	int64	   *consumed;		/* the pipeline's consumed offset */
	int64	   *pending;		/* skipped offsets after it, not consumed yet */
	int64	   *progress;		/* progress last reported, or INT64_MIN */
	int64	   *hw_saved;		/* high watermark last recorded, or -1 */
	int			retries;		/* failures before this start */
	int			worker;			/* this worker: 0 .. nworkers - 1 */
	int			workers;		/* the subscription's workers when it started */
	int			nworkers;		/* least(workers, nparts) */
} SfkSub;

/* whether this worker reads Kafka partition k */
#define SFK_OWNS(k) (SFK_OWNER((k), sfk_sub.nworkers) == sfk_sub.worker)

extern SfkSub sfk_sub;
extern rd_kafka_t *sfk_consumer;
extern int	sfk_lost_part;
extern char sfk_lost_reason[512];
extern bool sfk_outage;
extern char sfk_outage_reason[512];

/* worker.c */
extern void sfk_begin_tx(const char *what);
extern void sfk_commit_tx(void);
extern bool sfk_subscription_active(void);
extern void sfk_put_status(const char *state, const char *error, int retries,
						   int backoff_ms);
extern void sfk_stop_subscription(const char *error);
extern void sfk_pause_subscription(const char *error, const char *state);

/* batch.c */
extern int	sfk_collect(Msg *msgs);
extern bool sfk_run_batch(Msg *msgs, int n, MemoryContext batchcxt);
extern void sfk_stop_lost_offsets(void);

#endif							/* SFK_WORKER_H */
