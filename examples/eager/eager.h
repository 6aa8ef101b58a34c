/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * eager.h - a small eager tensor runtime on libtrnhal: what a framework
 * backend (think PyTorch's `model.to("trn")`) needs from the layer below.
 * Tensors on `cpu` or `trn:N`, a caching device allocator, streams and
 * events, and operations recorded eagerly into command buffers that are
 * flushed asynchronously. See Documentation/eager.md.
 *
 * Conventions as in libtrnhal: functions return 0 (or a documented
 * non-negative value) on success and a negative errno on failure. The
 * library is single-threaded: one thread drives it at a time.
 */
#ifndef EAGER_H
#define EAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <trnhal.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- devices ---- */

enum eager_device_type {
	EAGER_CPU = 0,
	EAGER_TRN = 1,
};

/* A device: `cpu`, or `trn:N`, the N-th trn device of trn_device_list(). */
struct eager_device {
	enum eager_device_type type;
	unsigned int index;
};

#define EAGER_DEVICE_CPU	((struct eager_device){ EAGER_CPU, 0 })
#define EAGER_DEVICE_TRN(n)	((struct eager_device){ EAGER_TRN, (n) })

/* Parse "cpu", "trn" (= trn:0) or "trn:N". -EINVAL otherwise. */
int eager_device_parse(const char *text, struct eager_device *dev);

/* "cpu" or "trn:N" into @buf (at least 16 bytes); returns @buf. */
const char *eager_device_name(struct eager_device dev, char *buf,
			      size_t size);

/* Number of trn devices (trn:0 .. trn:count-1); 0 or a negative errno. */
int eager_device_count(size_t *count);

/*
 * The libtrnhal device behind trn:N (opened on first use by any function
 * taking that device). For tests and interoperation; do not close it.
 */
int eager_device_handle(struct eager_device dev, trn_device_t **out);

/*
 * Whether trn:N runs MATMUL's TRANSPOSE_A/B flags (probed once when the
 * device is first used); without them transposed operands are
 * materialised with 2-D copies. 1 yes, 0 no, negative errno.
 * EAGER_NO_TRANSPOSE=1 in the environment forces the copies.
 */
int eager_device_has_transpose(struct eager_device dev);

/*
 * The TRN_CAP_* bits of trn:N (trn_device_info(), read when the device
 * was opened) into @caps; 0 or a negative errno.
 */
int eager_device_capabilities(struct eager_device dev, uint64_t *caps);

/*
 * Synchronise every stream of the device, then free everything the
 * library holds for every device (caches, streams, staging). Tensors,
 * streams and events still alive must not be used afterwards.
 */
void eager_shutdown(void);

/* ---- tensors ---- */

enum eager_dtype {
	EAGER_F32 = 0,
	EAGER_BF16 = 1,
};

size_t eager_dtype_size(enum eager_dtype dtype);
const char *eager_dtype_name(enum eager_dtype dtype);

#define EAGER_MAX_DIMS	4

struct eager_block;

/*
 * A tensor: contiguous, row-major, owning its storage. Fields are read
 * only. Operations see a tensor as a matrix of rows x cols where cols is
 * the last dimension and rows the product of the others (1 for 1-D).
 */
typedef struct eager_tensor {
	struct eager_device device;
	enum eager_dtype dtype;
	int ndim;				/* 1 to EAGER_MAX_DIMS */
	int64_t shape[EAGER_MAX_DIMS];
	int64_t strides[EAGER_MAX_DIMS];	/* in elements */
	int64_t numel;
	uint64_t nbytes;
	void *host;				/* cpu: the data */
	struct eager_block *block;		/* trn: device memory */
	uint64_t va;				/* trn: device address */
} eager_tensor_t;

/* Uninitialised tensor of @ndim dimensions @shape on @dev. */
int eager_empty(struct eager_device dev, enum eager_dtype dtype, int ndim,
		const int64_t *shape, eager_tensor_t **out);

/* Tensor filled with zeros (on trn: a FILL on the current stream). */
int eager_zeros(struct eager_device dev, enum eager_dtype dtype, int ndim,
		const int64_t *shape, eager_tensor_t **out);

/*
 * Tensor on @dev holding a copy of @data (@dtype's element layout, shape
 * @shape). On trn the data goes through a host staging buffer and a
 * device COPY on the current stream; the call returns once it is staged.
 */
int eager_from_host(struct eager_device dev, enum eager_dtype dtype,
		    int ndim, const int64_t *shape, const void *data,
		    eager_tensor_t **out);

/*
 * `t.to(dev)`: a new tensor on @dev with @t's contents. cpu -> trn and
 * trn -> trn are device COPYs on the current stream (of the destination,
 * resp. of the device); trn -> cpu copies into staging, waits for the
 * stream and returns the data (synchronous, like `.cpu()`).
 */
int eager_to(const eager_tensor_t *t, struct eager_device dev,
	     eager_tensor_t **out);

/* Copy @t's bytes to host memory @dst (t.nbytes); synchronous. */
int eager_read(const eager_tensor_t *t, void *dst);

/* Copy @t's values to host memory as f32 (bf16 widened); synchronous. */
int eager_read_f32(const eager_tensor_t *t, float *dst);

/* Free the tensor; device memory goes back to the caching allocator. */
void eager_free(eager_tensor_t *t);

int64_t eager_rows(const eager_tensor_t *t);
int64_t eager_cols(const eager_tensor_t *t);

/* f32 <-> bf16 on the host: round to nearest even, NaN stays NaN. */
uint16_t eager_f32_to_bf16(float f);
float eager_bf16_to_f32(uint16_t h);

/* ---- the caching device allocator ---- */

/*
 * Figures of trn:N's allocator, in bytes where sizes. A block's size is
 * its size class: the request rounded up to a power of two, at least
 * EAGER_MIN_BLOCK.
 */
#define EAGER_MIN_BLOCK	4096

struct eager_memory_stats {
	uint64_t allocated;		/* in blocks held by tensors */
	uint64_t requested;		/* what those tensors asked for */
	uint64_t reserved;		/* in device buffers (used + cached) */
	uint64_t cached;		/* reserved - allocated */
	uint64_t peak_allocated;
	uint64_t peak_reserved;
	uint64_t allocs;		/* allocations served */
	uint64_t frees;
	uint64_t cache_hits;		/* served from a cached block */
	uint64_t cache_misses;		/* needed a new device buffer */
	uint64_t buffers_created;	/* trn_bo_create() calls that worked */
	uint64_t buffers_released;	/* cached buffers given back */
	uint64_t oom_retries;		/* allocations retried after release */
	uint64_t blocks_cached;		/* blocks in the cache now */
};

int eager_memory_stats(struct eager_device dev,
		       struct eager_memory_stats *stats);

/* Reset peak_allocated and peak_reserved to the current values. */
int eager_memory_reset_peak(struct eager_device dev);

/*
 * Give every cached block's device buffer back (after waiting for the
 * jobs that used them). Blocks held by tensors are untouched.
 */
int eager_empty_cache(struct eager_device dev);

/* ---- streams and events ---- */

typedef struct eager_stream eager_stream_t;
typedef struct eager_event eager_event_t;

/*
 * A stream: one libtrnhal queue (on NeuronCore @core of the device) and
 * the command buffers its operations are recorded into. Operations of a
 * stream run in the order they were issued.
 */
int eager_stream_create(struct eager_device dev, uint32_t core,
			eager_stream_t **out);

/* Synchronise the stream, then destroy it. NULL is a no-op. */
void eager_stream_destroy(eager_stream_t *s);

/*
 * The stream operations on @dev are recorded to: the one set with
 * eager_set_current_stream(), else the device's default stream (core 0,
 * created on first use). NULL only if the device cannot be opened.
 */
eager_stream_t *eager_current_stream(struct eager_device dev);

/* The device's default stream (created on first use); NULL as above. */
eager_stream_t *eager_default_stream(struct eager_device dev);

/* Make @s its device's current stream (NULL: back to the default). */
int eager_set_current_stream(struct eager_device dev, eager_stream_t *s);

/* Submit what is recorded on @s now (a no-op when nothing is). */
int eager_stream_flush(eager_stream_t *s);

/*
 * Flush, then wait until everything issued on @s has run. Returns the
 * error of a failed job of the stream since the last synchronisation
 * (-EILSEQ, -EFAULT, ...) or 0.
 */
int eager_stream_synchronize(eager_stream_t *s);

/*
 * 1 while work issued on @s is pending, 0 when all has finished, negative
 * errno if a job failed. Flushes recorded work first (so that it can
 * finish); otherwise reads completion records only, no system call.
 */
int eager_stream_query(eager_stream_t *s);

/* Synchronise every stream of @dev; the first error met, or 0. */
int eager_synchronize(struct eager_device dev);

/*
 * Name the operations recorded from now on (a string that outlives them,
 * e.g. a literal; NULL: none), so that a failure can say which one failed.
 * One name for the process: the runtime is single-threaded.
 */
void eager_set_op_name(const char *name);

/*
 * The name of the operation whose job failed, as of the last
 * synchronisation of @s that returned an error (NULL: not named). Found
 * from the failing command's offset in its job where the queue reports
 * it; otherwise the job's first named operation.
 */
const char *eager_stream_error_op(eager_stream_t *s);

/* Counters of a stream (see Documentation/eager.md, flush policy). */
struct eager_stream_stats {
	uint64_t ops;			/* operations recorded */
	uint64_t commands;		/* device commands recorded */
	uint64_t jobs;			/* jobs submitted */
	uint64_t flush_dry;		/* flushed: the queue had run dry */
	uint64_t flush_full;		/* flushed: command buffer full */
	uint64_t flush_sync;		/* flushed: a synchronisation point */
	uint64_t pending_commands;	/* recorded, not yet submitted */
};

int eager_stream_stats(eager_stream_t *s, struct eager_stream_stats *st);

/* The stream's queue, and the fence of the latest job submitted. */
trn_queue_t *eager_stream_queue(eager_stream_t *s);
struct trn_fence eager_stream_last_fence(eager_stream_t *s);

/* Event flags. */
#define EAGER_EVENT_TIMING	(1U << 0)	/* records a device timestamp */

int eager_event_create(struct eager_device dev, uint32_t flags,
		       eager_event_t **out);
void eager_event_destroy(eager_event_t *e);

/*
 * Capture @s's position: the event completes when everything issued on
 * @s so far has run. A timing event also records a TIMESTAMP command that
 * stores the device clock into a small buffer of the device. Recording
 * again moves the event.
 */
int eager_event_record(eager_event_t *e, eager_stream_t *s);

/*
 * Make work issued on @s after this call wait for @e: the next job of @s
 * takes @e's fence as an in-fence (the device orders them; the host does
 * not wait). Work recorded on @s before the call is flushed first so that
 * it does not wait.
 */
int eager_stream_wait_event(eager_stream_t *s, eager_event_t *e);

/*
 * 1 pending, 0 complete (also: never recorded), negative errno if its job
 * failed. No system call once the event's job has been submitted; a
 * still recorded-only event's stream is flushed first.
 */
int eager_event_query(eager_event_t *e);

/* Wait for the event; its job's error or 0. */
int eager_event_synchronize(eager_event_t *e);

/*
 * Device time between two timing events (@end's timestamp minus
 * @start's), in ns; waits for both. -EINVAL if either is not a recorded
 * timing event.
 */
int eager_event_elapsed_ns(eager_event_t *start, eager_event_t *end,
			   uint64_t *ns);

/* Raw device timestamp of a completed timing event (ns since device start). */
int eager_event_timestamp(eager_event_t *e, uint64_t *ns);

/* ---- operations (Documentation/eager.md has the exact semantics) ---- */

/*
 * All operands are tensors of one trn device; operations are recorded on
 * that device's current stream and return once recorded (-EINVAL for
 * shapes, dtypes or devices that do not fit; device errors show at the
 * next synchronisation). Outputs are given, PyTorch `out=` style, and may
 * be an input where stated.
 */

/* Matmul flags. */
#define EAGER_TRANS_A		(1U << 0)	/* a is stored [k][m] */
#define EAGER_TRANS_B		(1U << 1)	/* b is stored [n][k] */
#define EAGER_ACCUMULATE	(1U << 2)	/* out += a @ b */

/*
 * out[m][n] (f32) = op(a)[m][k] @ op(b)[k][n]; a and b 2-D, both f32 or
 * both bf16. op(x) is x, or x transposed with EAGER_TRANS_*.
 */
int eager_matmul(eager_tensor_t *out, const eager_tensor_t *a,
		 const eager_tensor_t *b, uint32_t flags);

/*
 * out = a op b, f32 inputs; out f32 or bf16 (rounded). b is a tensor of
 * a's shape, or broadcast: [cols] (one row added to every row, e.g. a
 * bias), [rows][1] (one value per row), or a single element. out may be a.
 */
int eager_add(eager_tensor_t *out, const eager_tensor_t *a,
	      const eager_tensor_t *b);
int eager_sub(eager_tensor_t *out, const eager_tensor_t *a,
	      const eager_tensor_t *b);
int eager_mul(eager_tensor_t *out, const eager_tensor_t *a,
	      const eager_tensor_t *b);
int eager_div(eager_tensor_t *out, const eager_tensor_t *a,
	      const eager_tensor_t *b);
/* IEEE maximum / minimum (a NaN operand gives NaN); broadcasts as above. */
int eager_maximum(eager_tensor_t *out, const eager_tensor_t *a,
		  const eager_tensor_t *b);
int eager_minimum(eager_tensor_t *out, const eager_tensor_t *a,
		  const eager_tensor_t *b);

/* out = x * alpha (alpha as f32). out may be x. */
int eager_scale(eager_tensor_t *out, const eager_tensor_t *x, float alpha);

/* out = x + value, x / value, max(x, value), min(x, value). out may be x. */
int eager_add_scalar(eager_tensor_t *out, const eager_tensor_t *x,
		     float value);
int eager_div_scalar(eager_tensor_t *out, const eager_tensor_t *x,
		     float value);
int eager_max_scalar(eager_tensor_t *out, const eager_tensor_t *x,
		     float value);
int eager_min_scalar(eager_tensor_t *out, const eager_tensor_t *x,
		     float value);

/* Element-wise out = f(x); x f32, out f32 or bf16; out may be x. */
int eager_relu(eager_tensor_t *out, const eager_tensor_t *x);
int eager_gelu(eager_tensor_t *out, const eager_tensor_t *x);
int eager_exp(eager_tensor_t *out, const eager_tensor_t *x);
int eager_neg(eager_tensor_t *out, const eager_tensor_t *x);
int eager_abs(eager_tensor_t *out, const eager_tensor_t *x);
int eager_sqrt(eager_tensor_t *out, const eager_tensor_t *x);
int eager_recip(eager_tensor_t *out, const eager_tensor_t *x);
int eager_tanh(eager_tensor_t *out, const eager_tensor_t *x);

/*
 * out = ln x, erf x, x Phi(x) (GELU, erf form: PyTorch's default); as
 * above. -EOPNOTSUPP where the device lacks TRN_CAP_LOG_ERF.
 */
int eager_log(eager_tensor_t *out, const eager_tensor_t *x);
int eager_erf(eager_tensor_t *out, const eager_tensor_t *x);
int eager_gelu_erf(eager_tensor_t *out, const eager_tensor_t *x);

/* out = 1 / (1 + e^-x), f32 only (four in-place steps). out may be x. */
int eager_sigmoid(eager_tensor_t *out, const eager_tensor_t *x);

/*
 * out = grad * (x > 0 ? 1 : 0), all f32 of one shape (x: the input of
 * relu, or its output: same mask). out may be grad or x.
 */
int eager_relu_backward(eager_tensor_t *out, const eager_tensor_t *grad,
			const eager_tensor_t *x);

/*
 * out = grad * d/dx (x Phi(x)), all f32 of one shape; out may be grad or
 * x. -EOPNOTSUPP without TRN_CAP_LOG_ERF.
 */
int eager_gelu_erf_backward(eager_tensor_t *out, const eager_tensor_t *grad,
			    const eager_tensor_t *x);

/* Row-wise softmax over the last dimension; f32. out may be x. */
int eager_softmax(eager_tensor_t *out, const eager_tensor_t *x);

/*
 * Softmax, except that a row of only -inf gives zeros instead of NaN
 * (PyTorch's _safe_softmax, what attention uses for fully masked rows);
 * every other row bit for bit as eager_softmax(). f32; out may be x.
 */
int eager_safe_softmax(eager_tensor_t *out, const eager_tensor_t *x);

/*
 * Row-wise log_softmax over the last dimension, x - max - ln(sum(e^(x -
 * max))); f32. out may be x. -EOPNOTSUPP without TRN_CAP_LOG_ERF.
 */
int eager_log_softmax(eager_tensor_t *out, const eager_tensor_t *x);

/*
 * Sum of a 2-D view: dim -1 (last): out[rows] = sum over columns;
 * dim 0: out[cols] = sum over rows (a matmul with a vector of ones). f32.
 */
int eager_sum(eager_tensor_t *out, const eager_tensor_t *x, int dim);

/* out[rows] = IEEE maximum over the columns of a 2-D view (NaN wins). f32. */
int eager_amax(eager_tensor_t *out, const eager_tensor_t *x);

/*
 * Every element of t = value (bf16: rounded to nearest even). Nothing
 * outside t is written, also where a bf16 view starts or ends mid-word.
 */
int eager_fill(eager_tensor_t *t, float value);

/* out = x, same dtype and number of elements (shape may differ). */
int eager_copy(eager_tensor_t *out, const eager_tensor_t *x);

/* out = x converted to out's dtype (f32 <-> bf16, rounding to nearest). */
int eager_cast(eager_tensor_t *out, const eager_tensor_t *x);

/* out[c][r] = x[r][c], 2-D, any dtype (2-D copies). */
int eager_transpose(eager_tensor_t *out, const eager_tensor_t *x);

/* SGD step: w -= lr * g, f32 of one shape. */
int eager_sgd(eager_tensor_t *w, const eager_tensor_t *g, float lr);

/* ---- for framework glue (pytorch/, Documentation/pytorch.md) ---- */

/*
 * @size bytes of trn:N's caching allocator, a block as eager's own tensors
 * get, reusable at once by the current stream; eager_raw_free() gives it
 * back (its device memory stays cached).
 */
int eager_raw_alloc(struct eager_device dev, uint64_t size,
		    struct eager_block **out);
void eager_raw_free(struct eager_block *b);

/*
 * @size bytes of pinned host memory of trn:N, for a framework's pinned
 * memory allocator: a mapped host buffer of the staging pool, *@cpu its
 * CPU address. eager_raw_copy() moves bytes between it and that device's
 * blocks with the device's COPY alone, no staging copy. eager_raw_free()
 * gives it back; the pool hands it out again only once every job that
 * used it has finished (the CPU writes it at once).
 */
int eager_pinned_alloc(struct eager_device dev, uint64_t size,
		       struct eager_block **out, void **cpu);
uint64_t eager_block_va(const struct eager_block *b);
struct eager_device eager_block_device(const struct eager_block *b);

/*
 * Fill @t as a contiguous tensor header over @b from byte @offset on, for
 * the operations above. @t does not own @b: never eager_free() it.
 * -ERANGE if the tensor does not fit in the block.
 */
int eager_view(struct eager_block *b, uint64_t offset, enum eager_dtype dtype,
	       int ndim, const int64_t *shape, eager_tensor_t *t);

/*
 * Bytes between host memory and a block, and between two blocks of one
 * device, on the current stream. A write is staged through pinned host
 * memory and returns once staged; a read waits for the stream.
 */
int eager_raw_write(struct eager_block *b, uint64_t offset, const void *src,
		    uint64_t size);
int eager_raw_read(struct eager_block *b, uint64_t offset, void *dst,
		   uint64_t size);
int eager_raw_copy(struct eager_block *dst, uint64_t dst_offset,
		   struct eager_block *src, uint64_t src_offset, uint64_t size);

/*
 * Elements of @elem_size bytes between two blocks of one device, each side
 * in its own layout: element (i0, ..., in) of @shape moves from byte
 * @src_offset + (sum of ik * @src_strides[k]) * @elem_size of @src to the
 * same place by @dst_strides in @dst. Strides in elements, 0 allowed on
 * the source (a broadcast), up to EAGER_COPY_MAX_DIMS dims. As COPY 2-D
 * commands on the current stream: the innermost dim if both sides are
 * dense in it is each row, the longest other dim the rows of a command,
 * one command per index of the rest; -E2BIG (nothing recorded) if that
 * takes more than @max_cmds commands. -EINVAL if an operand leaves its
 * block, a destination stride is 0, or the two overlap.
 */
#define EAGER_COPY_MAX_DIMS	16
int eager_raw_copy_strided(struct eager_block *dst, uint64_t dst_offset,
			   const int64_t *dst_strides, struct eager_block *src,
			   uint64_t src_offset, const int64_t *src_strides,
			   int ndim, const int64_t *shape, uint64_t elem_size,
			   uint64_t max_cmds);

/*
 * Bytes as numbers: the @count bytes at @src_offset of @src become @count
 * f32 at @dst_offset of @dst, each the value of its byte (0 to 255,
 * exact), as UNARY commands with TRN_ELEM_SRC_U8 on the current stream
 * (rows of 2^16 bytes: one command per 2^32 bytes of whole rows, one for
 * the shorter rest). -EOPNOTSUPP where the device lacks TRN_CAP_SRC_U8,
 * -EINVAL if an operand leaves its block, @dst_offset is not a multiple
 * of 4, or the two overlap; nothing is recorded then.
 */
int eager_raw_bytes_to_f32(struct eager_block *dst, uint64_t dst_offset,
			   struct eager_block *src, uint64_t src_offset,
			   uint64_t count);

/*
 * MLP benchmark hook for tools/trn-bench: @passes forward passes of the
 * demo's 784-512-512-10 MLP (batch 64) on trn:0; operations per second.
 */
int eager_bench_mlp(size_t passes, double *ops_per_s);

#ifdef __cplusplus
}
#endif

#endif /* EAGER_H */
