// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Command buffers: a cached host buffer mapped for the CPU, filled with
 * the ISA's commands (struct trn_cmd_* of the uAPI, little endian).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trn_accel.h"
#include "trn_isa.h"

/*
 * trnhal.h spells some uAPI enumerators as macros of the same name; take
 * the uAPI's values before it hides them, to check that they agree.
 */
enum {
	UAPI_UNARY_COPY = TRN_UNARY_COPY,
	UAPI_UNARY_RELU_GRAD = TRN_UNARY_RELU_GRAD,
	UAPI_UNARY_NEG = TRN_UNARY_NEG,
	UAPI_UNARY_ABS = TRN_UNARY_ABS,
	UAPI_UNARY_RELU = TRN_UNARY_RELU,
	UAPI_UNARY_GELU = TRN_UNARY_GELU,
	UAPI_UNARY_EXP = TRN_UNARY_EXP,
	UAPI_UNARY_RECIP = TRN_UNARY_RECIP,
	UAPI_UNARY_SQRT = TRN_UNARY_SQRT,
	UAPI_UNARY_TANH = TRN_UNARY_TANH,
	UAPI_UNARY_LOG = TRN_UNARY_LOG,
	UAPI_UNARY_ERF = TRN_UNARY_ERF,
	UAPI_UNARY_GELU_ERF = TRN_UNARY_GELU_ERF,
	UAPI_UNARY_GELU_ERF_GRAD = TRN_UNARY_GELU_ERF_GRAD,
	UAPI_BINARY_ADD = TRN_BINARY_ADD,
	UAPI_BINARY_SUB = TRN_BINARY_SUB,
	UAPI_BINARY_MUL = TRN_BINARY_MUL,
	UAPI_BINARY_DIV = TRN_BINARY_DIV,
	UAPI_BINARY_MAX = TRN_BINARY_MAX,
	UAPI_BINARY_MIN = TRN_BINARY_MIN,
	UAPI_REDUCE_SUM = TRN_REDUCE_SUM,
	UAPI_REDUCE_MAX = TRN_REDUCE_MAX,
};

#include "trnhal.h"
#include "internal.h"

_Static_assert(TRN_UNARY_COPY == UAPI_UNARY_COPY, "unary op");
_Static_assert(TRN_UNARY_NEG == UAPI_UNARY_NEG, "unary op");
_Static_assert(TRN_UNARY_ABS == UAPI_UNARY_ABS, "unary op");
_Static_assert(TRN_UNARY_RELU == UAPI_UNARY_RELU, "unary op");
_Static_assert(TRN_UNARY_GELU == UAPI_UNARY_GELU, "unary op");
_Static_assert(TRN_UNARY_EXP == UAPI_UNARY_EXP, "unary op");
_Static_assert(TRN_UNARY_RECIP == UAPI_UNARY_RECIP, "unary op");
_Static_assert(TRN_UNARY_SQRT == UAPI_UNARY_SQRT, "unary op");
_Static_assert(TRN_UNARY_TANH == UAPI_UNARY_TANH, "unary op");
_Static_assert(TRN_UNARY_RELU_GRAD == UAPI_UNARY_RELU_GRAD, "unary op");
_Static_assert(TRN_UNARY_LOG == UAPI_UNARY_LOG, "unary op");
_Static_assert(TRN_UNARY_ERF == UAPI_UNARY_ERF, "unary op");
_Static_assert(TRN_UNARY_GELU_ERF == UAPI_UNARY_GELU_ERF, "unary op");
_Static_assert(TRN_UNARY_GELU_ERF_GRAD == UAPI_UNARY_GELU_ERF_GRAD,
	       "unary op");
_Static_assert(TRN_BINARY_ADD == UAPI_BINARY_ADD, "binary op");
_Static_assert(TRN_BINARY_SUB == UAPI_BINARY_SUB, "binary op");
_Static_assert(TRN_BINARY_MUL == UAPI_BINARY_MUL, "binary op");
_Static_assert(TRN_BINARY_DIV == UAPI_BINARY_DIV, "binary op");
_Static_assert(TRN_BINARY_MAX == UAPI_BINARY_MAX, "binary op");
_Static_assert(TRN_BINARY_MIN == UAPI_BINARY_MIN, "binary op");
_Static_assert(TRN_REDUCE_SUM == UAPI_REDUCE_SUM, "reduce op");
_Static_assert(TRN_REDUCE_MAX == UAPI_REDUCE_MAX, "reduce op");
/*
 * The flag macros (TRN_MATMUL_*, TRN_ELEM_*, TRN_BINARY_B_PER_ROW,
 * TRN_NUM_SEMAPHORES, TRN_ISA_MAX_DIM) are defined by both headers; the
 * compiler rejects a redefinition that differs. Values checked anyway:
 */
_Static_assert(TRN_MATMUL_BF16 == (1U << 0), "matmul flag");
_Static_assert(TRN_MATMUL_ACCUMULATE == (1U << 1), "matmul flag");
_Static_assert(TRN_ELEM_DST_BF16 == (1U << 0), "element flag");
_Static_assert(TRN_BINARY_B_PER_ROW == (1U << 1), "binary flag");
_Static_assert(TRN_ELEM_SRC_U8 == (1U << 2), "unary flag");
_Static_assert(TRN_NUM_SEMAPHORES == 256, "semaphores");
_Static_assert(TRN_ISA_MAX_DIM == (1U << 16), "dimension");

#define DEFAULT_CAPACITY	(64 * 1024)

/*
 * Command sizes: whole 8-byte words (the header counts them) and no padding
 * of the compiler's, so an initializer zeroes every byte it does not set.
 */
_Static_assert(sizeof(struct trn_cmd_nop) == 8, "nop");
_Static_assert(sizeof(struct trn_cmd_write) == 24, "write");
_Static_assert(sizeof(struct trn_cmd_fill) == 24, "fill");
_Static_assert(sizeof(struct trn_cmd_copy) == 56, "copy");
_Static_assert(sizeof(struct trn_cmd_timestamp) == 16, "timestamp");
_Static_assert(sizeof(struct trn_cmd_sem) == 16, "sem");
_Static_assert(sizeof(struct trn_cmd_call) == 24, "call");
_Static_assert(sizeof(struct trn_cmd_matmul) == 64, "matmul");
_Static_assert(sizeof(struct trn_cmd_unary) == 48, "unary");
_Static_assert(sizeof(struct trn_cmd_binary) == 64, "binary");
_Static_assert(sizeof(struct trn_cmd_reduce) == 40, "reduce");

struct trn_cmdbuf {
	trn_bo_t *bo;			/* holds the device reference */
	uint8_t *map;
	uint64_t va;
	size_t capacity;
	size_t size;			/* bytes recorded */
};

TRN_PUBLIC int trn_cmdbuf_create(trn_device_t *dev, size_t capacity,
				 trn_cmdbuf_t **out)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	trn_cmdbuf_t *cb;
	void *map;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev)
		return -EINVAL;
	if (trn_handle_stale(dev))
		return -ECHILD;
	if (!capacity)
		capacity = DEFAULT_CAPACITY;
	/* One job runs at most this much (CALL could go further: not yet). */
	if (capacity > DRM_TRN_JOB_MAX_CMD_SIZE)
		return -E2BIG;
	capacity = (capacity + page - 1) & ~(page - 1);

	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return -ENOMEM;
	/* Cached: the CPU writes commands, the device reads them coherently. */
	ret = trn_bo_create(dev, capacity, TRN_PLACEMENT_HOST, 0, 0, &cb->bo);
	if (ret)
		goto err;
	ret = trn_bo_map(cb->bo, &map);
	if (ret)
		goto err;
	cb->map = map;
	cb->va = trn_bo_va(cb->bo);
	cb->capacity = capacity;
	*out = cb;
	return 0;
err:
	trn_bo_free(cb->bo);
	free(cb);
	return ret;
}

TRN_PUBLIC void trn_cmdbuf_destroy(trn_cmdbuf_t *cb)
{
	if (!cb)
		return;
	/* The last reference of the buffer unmaps it too (even in a child). */
	if (!trn_handle_stale(trn_bo_device(cb->bo)))
		trn_bo_unmap(cb->bo);
	trn_bo_free(cb->bo);
	free(cb);
}

TRN_PUBLIC void trn_cmdbuf_reset(trn_cmdbuf_t *cb)
{
	if (cb)
		cb->size = 0;
}

TRN_PUBLIC size_t trn_cmdbuf_size(const trn_cmdbuf_t *cb)
{
	return cb ? cb->size : 0;
}

TRN_PUBLIC size_t trn_cmdbuf_capacity(const trn_cmdbuf_t *cb)
{
	return cb ? cb->capacity : 0;
}

TRN_PUBLIC uint64_t trn_cmdbuf_va(const trn_cmdbuf_t *cb)
{
	if (!cb || trn_handle_stale(trn_bo_device(cb->bo)))
		return 0;
	return cb->va;
}

TRN_PUBLIC uint64_t trn_cmdbuf_tail_va(const trn_cmdbuf_t *cb)
{
	if (!cb || trn_handle_stale(trn_bo_device(cb->bo)))
		return 0;
	return cb->va + cb->size;
}

TRN_PUBLIC trn_bo_t *trn_cmdbuf_bo(trn_cmdbuf_t *cb)
{
	return cb ? cb->bo : NULL;
}

/*
 * Append @cmd, a struct trn_cmd_* of @len bytes, after filling in its
 * header: the word every command starts with. In a forked child the
 * mapping is still shared with the parent's buffer: writing there would
 * corrupt the parent's commands.
 */
static int emit(trn_cmdbuf_t *cb, uint32_t op, uint32_t flags, void *cmd,
		size_t len)
{
	uint32_t *header = cmd;

	if (!cb)
		return -EINVAL;
	if (trn_handle_stale(trn_bo_device(cb->bo)))
		return -ECHILD;
	if (cb->capacity - cb->size < len)
		return -ENOSPC;
	*header = htole32(TRN_CMD_HEADER(op, flags, len / 8));
	memcpy(cb->map + cb->size, cmd, len);
	cb->size += len;
	return 0;
}

static bool bad_dim(uint32_t d)
{
	return !d || d > TRN_ISA_MAX_DIM;
}

/* UNARY, BINARY and REDUCE: an op of their enum, flags, and 2-D sizes. */
static bool bad_elem(uint32_t op, uint32_t last_op, uint32_t flags,
		     uint32_t valid_flags, uint32_t rows, uint32_t cols)
{
	return op > last_op || flags & ~valid_flags || bad_dim(rows) ||
	       bad_dim(cols);
}

TRN_PUBLIC int trn_cmd_nop(trn_cmdbuf_t *cb)
{
	struct trn_cmd_nop c = { 0 };

	return emit(cb, TRN_OP_NOP, 0, &c, sizeof(c));
}

static int cmd_write(trn_cmdbuf_t *cb, uint32_t flags, uint64_t dst,
		     uint64_t value)
{
	struct trn_cmd_write c = { .dst = htole64(dst),
				   .value = htole64(value) };

	return emit(cb, TRN_OP_WRITE, flags, &c, sizeof(c));
}

TRN_PUBLIC int trn_cmd_write32(trn_cmdbuf_t *cb, uint64_t dst, uint32_t value)
{
	return cmd_write(cb, 0, dst, value);
}

TRN_PUBLIC int trn_cmd_write64(trn_cmdbuf_t *cb, uint64_t dst, uint64_t value)
{
	return cmd_write(cb, TRN_WRITE_64, dst, value);
}

TRN_PUBLIC int trn_cmd_fill(trn_cmdbuf_t *cb, uint64_t dst, uint32_t pattern,
			    uint64_t size)
{
	struct trn_cmd_fill c = {
		.pattern = htole32(pattern),
		.dst = htole64(dst),
		.size = htole64(size),
	};

	return emit(cb, TRN_OP_FILL, 0, &c, sizeof(c));
}

TRN_PUBLIC int trn_cmd_copy2d(trn_cmdbuf_t *cb, uint64_t dst,
			      uint64_t dst_pitch, uint64_t src,
			      uint64_t src_pitch, uint64_t width,
			      uint64_t height)
{
	struct trn_cmd_copy c = {
		.dst = htole64(dst), .dst_pitch = htole64(dst_pitch),
		.src = htole64(src), .src_pitch = htole64(src_pitch),
		.width = htole64(width), .height = htole64(height),
	};

	return emit(cb, TRN_OP_COPY, 0, &c, sizeof(c));
}

TRN_PUBLIC int trn_cmd_copy(trn_cmdbuf_t *cb, uint64_t dst, uint64_t src,
			    uint64_t size)
{
	/* One row; pitches equal to the row are valid whatever the rules. */
	return trn_cmd_copy2d(cb, dst, size, src, size, size, 1);
}

TRN_PUBLIC int trn_cmd_timestamp(trn_cmdbuf_t *cb, uint64_t dst)
{
	struct trn_cmd_timestamp c = { .dst = htole64(dst) };

	return emit(cb, TRN_OP_TIMESTAMP, 0, &c, sizeof(c));
}

static int cmd_sem(trn_cmdbuf_t *cb, uint32_t op, uint32_t sem,
		   uint64_t value)
{
	struct trn_cmd_sem c = { .sem = htole32(sem), .value = htole64(value) };

	if (sem >= TRN_NUM_SEMAPHORES)
		return -EINVAL;
	return emit(cb, op, 0, &c, sizeof(c));
}

TRN_PUBLIC int trn_cmd_sem_signal(trn_cmdbuf_t *cb, uint32_t sem,
				  uint64_t value)
{
	return cmd_sem(cb, TRN_OP_SEM_SIGNAL, sem, value);
}

TRN_PUBLIC int trn_cmd_sem_wait(trn_cmdbuf_t *cb, uint32_t sem,
				uint64_t value)
{
	return cmd_sem(cb, TRN_OP_SEM_WAIT, sem, value);
}

TRN_PUBLIC int trn_cmd_call(trn_cmdbuf_t *cb, uint64_t va, uint64_t size)
{
	struct trn_cmd_call c = { .va = htole64(va), .size = htole64(size) };

	/* Commands are whole 8-byte words starting 8-byte aligned. */
	if (!size || size % 8 || va % 8)
		return -EINVAL;
	return emit(cb, TRN_OP_CALL, 0, &c, sizeof(c));
}

#define MATMUL_FLAGS	(TRN_MATMUL_BF16 | TRN_MATMUL_ACCUMULATE | \
			 TRN_MATMUL_TRANSPOSE_A | TRN_MATMUL_TRANSPOSE_B)

TRN_PUBLIC int trn_cmd_matmul(trn_cmdbuf_t *cb, const struct trn_matmul *mm)
{
	struct trn_cmd_matmul c;

	if (!mm || mm->flags & ~MATMUL_FLAGS ||
	    bad_dim(mm->m) || bad_dim(mm->n) || bad_dim(mm->k) ||
	    (uint64_t)mm->k * mm->n * 4 > TRN_ISA_MAX_MATMUL_B_BYTES)
		return -EINVAL;
	c = (struct trn_cmd_matmul){
		.m = htole32(mm->m), .n = htole32(mm->n), .k = htole32(mm->k),
		.a = htole64(mm->a), .lda = htole64(mm->lda),
		.b = htole64(mm->b), .ldb = htole64(mm->ldb),
		.c = htole64(mm->c), .ldc = htole64(mm->ldc),
	};
	return emit(cb, TRN_OP_MATMUL, mm->flags, &c, sizeof(c));
}

/*
 * Element-wise commands: each operand next to its row pitch, as in the
 * arguments (the structs hold the addresses first, then the pitches).
 */
TRN_PUBLIC int trn_cmd_unary(trn_cmdbuf_t *cb, uint32_t op, uint32_t flags,
			     uint32_t rows, uint32_t cols, uint64_t dst,
			     uint64_t dst_pitch, uint64_t src,
			     uint64_t src_pitch)
{
	struct trn_cmd_unary c = {
		.op = htole32(op), .rows = htole32(rows), .cols = htole32(cols),
		.dst = htole64(dst), .dst_pitch = htole64(dst_pitch),
		.src = htole64(src), .src_pitch = htole64(src_pitch),
	};

	if (bad_elem(op, TRN_UNARY_GELU_ERF_GRAD, flags,
		     TRN_ELEM_DST_BF16 | TRN_ELEM_SRC_U8, rows, cols))
		return -EINVAL;
	return emit(cb, TRN_OP_UNARY, flags, &c, sizeof(c));
}

TRN_PUBLIC int trn_cmd_binary(trn_cmdbuf_t *cb, uint32_t op, uint32_t flags,
			      uint32_t rows, uint32_t cols, uint64_t dst,
			      uint64_t dst_pitch, uint64_t a, uint64_t a_pitch,
			      uint64_t b, uint64_t b_pitch)
{
	struct trn_cmd_binary c = {
		.op = htole32(op), .rows = htole32(rows), .cols = htole32(cols),
		.dst = htole64(dst), .dst_pitch = htole64(dst_pitch),
		.a = htole64(a), .a_pitch = htole64(a_pitch),
		.b = htole64(b), .b_pitch = htole64(b_pitch),
	};

	if (bad_elem(op, TRN_BINARY_MIN, flags,
		     TRN_ELEM_DST_BF16 | TRN_BINARY_B_PER_ROW, rows, cols))
		return -EINVAL;
	return emit(cb, TRN_OP_BINARY, flags, &c, sizeof(c));
}

/* REDUCE writes one f32 per row: dst has no pitch. */
TRN_PUBLIC int trn_cmd_reduce(trn_cmdbuf_t *cb, uint32_t op, uint32_t rows,
			      uint32_t cols, uint64_t dst, uint64_t src,
			      uint64_t src_pitch)
{
	struct trn_cmd_reduce c = {
		.op = htole32(op), .rows = htole32(rows), .cols = htole32(cols),
		.dst = htole64(dst),
		.src = htole64(src), .src_pitch = htole64(src_pitch),
	};

	if (bad_elem(op, TRN_REDUCE_MAX, 0, 0, rows, cols))
		return -EINVAL;
	return emit(cb, TRN_OP_REDUCE, 0, &c, sizeof(c));
}
