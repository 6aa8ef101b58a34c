/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * Internals of the eager runtime shared by its source files.
 */
#ifndef EAGER_INTERNAL_H
#define EAGER_INTERNAL_H

#include "eager.h"

#define EAGER_MAX_DEVICES	16
#define EAGER_MAX_STREAMS	64	/* live streams per device (use masks) */
#define EAGER_CMDBUF_SIZE	(256 * 1024)
#define EAGER_CMDBUFS		8	/* per stream, in flight or recording */
#define EAGER_BLOCK_FENCES	4	/* streams remembered at free, inline */
#define EAGER_TS_SLOTS		512	/* timing events per device */
#define EAGER_SCALAR_SLOTS	8	/* f32 constants per stream */
#define EAGER_NUM_CLASSES	48	/* size classes: 2^12 .. 2^59 */

struct eager_backend;

/* Where a stream stood when a block was freed. */
struct eager_use {
	eager_stream_t *stream;
	uint64_t seqno;
};

/* A device buffer of one size class, held by a tensor or cached. */
struct eager_block {
	struct eager_pool *pool;
	trn_bo_t *bo;
	uint64_t va;
	void *map;			/* staging pool: CPU mapping */
	uint64_t size;			/* class size */
	uint64_t requested;
	unsigned int cls;
	bool in_use;
	uint64_t use_mask;		/* stream ids that used it */
	struct eager_use uses[EAGER_BLOCK_FENCES];	/* set at free */
	unsigned int nuses;
	struct eager_block *next;	/* free list of its class */
	struct eager_block *all_next;	/* every block of the pool */
};

/*
 * A caching pool of device buffers. Device memory (HBM) blocks may be
 * reused at once by the stream that freed them (stream order protects
 * them); staging blocks are written by the host, so they wait for every
 * job that used them (strict).
 */
struct eager_pool {
	struct eager_backend *be;
	uint32_t placement;
	bool strict;
	struct eager_block *free_list[EAGER_NUM_CLASSES];
	struct eager_block *all;
	struct eager_memory_stats st;
};

#define EAGER_OP_MARKS		64	/* op names remembered per job */

/* Where the commands of a named op begin in a command buffer. */
struct eager_op_mark {
	uint32_t offset;
	const char *name;
};

struct eager_cmdbuf {
	trn_cmdbuf_t *cb;
	uint64_t seqno;			/* job that ran it, 0: none */
	bool checked;			/* its job's status was looked at */
	/* Consecutive ops of one name share a mark; beyond the last: lost. */
	struct eager_op_mark marks[EAGER_OP_MARKS];
	unsigned int nmarks;
};

struct eager_stream {
	struct eager_backend *be;
	unsigned int id;		/* bit in eager_block.use_mask */
	trn_queue_t *q;
	struct eager_cmdbuf cbs[EAGER_CMDBUFS];
	unsigned int ncbs, cur;
	uint64_t submitted;		/* seqno of our latest job */
	int error;			/* sticky: first failed job's error */
	uint64_t error_seq;		/* its job's seqno (a lost job's: next) */
	const char *error_op;		/* the op that failed, if named */
	/* The job being recorded: buffers it uses (deduplicated). */
	trn_bo_t **bos;
	size_t nbos, cap_bos;
	trn_bo_t **bo_set;		/* open addressing, size set_cap */
	size_t set_cap;
	/* Operands of the op being recorded, re-listed after a flush. */
	trn_bo_t *op_bos[8];
	unsigned int op_nbos;
	struct trn_fence waits[EAGER_MAX_STREAMS];
	unsigned int nwaits;
	struct eager_block *scalars;	/* EAGER_SCALAR_SLOTS f32 constants */
	unsigned int next_scalar;
	struct eager_stream_stats st;
};

struct eager_event {
	struct eager_backend *be;
	struct eager_event *next;	/* be->events */
	struct eager_event **pprev;
	uint32_t flags;
	bool recorded;
	eager_stream_t *stream;		/* NULL: never recorded, or its stream
					 * was destroyed (after finishing) */
	uint64_t seqno;
	int ts_slot;			/* timing: slot in be->ts_map, else -1 */
};

struct eager_backend {
	unsigned int index;
	trn_device_t *dev;
	struct trn_device_info info;
	struct eager_pool hbm;
	struct eager_pool staging;
	eager_stream_t *streams[EAGER_MAX_STREAMS];
	eager_stream_t *default_stream;
	eager_stream_t *current;
	trn_bo_t *ts_bo;		/* timing events' timestamps (host) */
	volatile uint64_t *ts_map;
	bool ts_used[EAGER_TS_SLOTS];
	struct eager_event *events;	/* every live event, to detach them
					 * from a stream that goes away */
	int has_transpose;		/* -1 unknown */
};

/* device.c */
int eager_backend_get(struct eager_device dev, struct eager_backend **out);
/* The backend of trn:N and its current stream (-ENODEV without one). */
int eager_backend_stream(struct eager_device dev, struct eager_backend **be,
			 eager_stream_t **s);

/* alloc.c */
void eager_pool_init(struct eager_pool *p, struct eager_backend *be,
		     uint32_t placement, bool strict);
void eager_pool_fini(struct eager_pool *p);
int eager_block_alloc(struct eager_pool *p, eager_stream_t *s, uint64_t size,
		      struct eager_block **out);
void eager_block_free(struct eager_block *b);
void eager_pool_forget_stream(struct eager_pool *p, eager_stream_t *s);
int eager_pool_release(struct eager_pool *p, bool wait);

/* stream.c */
int eager_stream_new(struct eager_backend *be, uint32_t core,
		     eager_stream_t **out);
void eager_stream_free(eager_stream_t *s);
uint64_t eager_stream_tail(const eager_stream_t *s);
int eager_seqno_status(eager_stream_t *s, uint64_t seqno);
int eager_flush(eager_stream_t *s, int reason);
int eager_sync(eager_stream_t *s);
int eager_wait(eager_stream_t *s);
void eager_op_begin(eager_stream_t *s);
int eager_op_use(eager_stream_t *s, struct eager_block *b);
int eager_op_use_bo(eager_stream_t *s, trn_bo_t *bo);
int eager_op_end(eager_stream_t *s);
trn_cmdbuf_t *eager_cmdbuf(eager_stream_t *s);
int eager_emit_retry(eager_stream_t *s);
int eager_scalar(eager_stream_t *s, float value, uint64_t *va);
int eager_scalar_bits(eager_stream_t *s, uint32_t bits, uint64_t *va);

enum { EAGER_FLUSH_DRY, EAGER_FLUSH_FULL, EAGER_FLUSH_SYNC };

/*
 * Record one command on @s into @ret: on -ENOSPC the stream is flushed
 * (its buffer is full) and the command recorded again into the next
 * buffer; @call must therefore name the buffer as eager_cmdbuf(s).
 */
#define EAGER_EMIT(ret, s, call)					\
	do {								\
		(ret) = (call);						\
		if ((ret) == -ENOSPC && !((ret) = eager_emit_retry(s)))	\
			(ret) = (call);					\
		if (!(ret)) {						\
			(s)->st.commands++;				\
			(s)->st.pending_commands++;			\
		}							\
	} while (0)

/* tensor.c */
int eager_tensor_new(struct eager_device dev, enum eager_dtype dtype,
		     int ndim, const int64_t *shape, eager_tensor_t **out);

#endif /* EAGER_INTERNAL_H */
