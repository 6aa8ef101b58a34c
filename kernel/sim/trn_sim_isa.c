// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * The simulated NeuronCore's command-stream interpreter, ISA v1
 * (Documentation/isa.md). It decodes and executes the commands of one job,
 * reaching device memory only through &struct trn_sim_exec_ops, so the same
 * code runs on a ring of the simulator (through its MMU) and in KUnit (on a
 * flat buffer).
 *
 * A job runs in slices: trn_sim_exec_run() does about @budget units of
 * work and returns, keeping its place (the CALL stack, the command being
 * executed and a cursor into it), so that the engine can serve the other
 * rings of the NeuronCore in between. Operands are staged row by row
 * through a bounce buffer; the floating point of trn_sim_math.c runs
 * between kernel_fpu_begin() and kernel_fpu_end() on at most
 * TRN_SIM_FPU_ELEMS elements (TRN_SIM_FPU_MACS multiply-adds) at a time,
 * never across a memory access.
 */

#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/fpu.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wordpart.h>

#include <asm/byteorder.h>

#include <kunit/visibility.h>

#include "trn_sim_isa.h"

/* Bytes a COPY or FILL moves per memory access. */
#define TRN_SIM_CHUNK		SZ_64K
/* Budget units charged for fetching a command, and per row of an op. */
#define TRN_SIM_CMD_COST	64
#define TRN_SIM_ROW_COST	16
/* Most elements, and multiply-adds, per kernel_fpu_begin() section. */
#define TRN_SIM_FPU_ELEMS	4096U
#define TRN_SIM_FPU_MACS	65536U
/* Most f32 values of a MATMUL's panel of transposed A. */
#define TRN_SIM_APANEL_ELEMS	SZ_256K
/*
 * Columns of a transposed B staged per pass: at most 16, at most 512 KiB
 * of them in the bounce buffer.
 */
#define TRN_SIM_BT_COLS		16U
#define TRN_SIM_BT_ELEMS	SZ_128K

/* What executing (part of) a command came to. */
enum {
	TRN_SIM_OP_DONE,	/* finished; on to the next command */
	TRN_SIM_OP_MORE,	/* budget spent; resume at the cursor */
	TRN_SIM_OP_BLOCKED,	/* SEM_WAIT not satisfied */
	TRN_SIM_OP_FAIL,	/* the job fails with x->status */
};

/**
 * struct trn_sim_opdesc - static facts of an opcode
 * @words: size of its command in 8-byte words (NOP: the minimum); 0 for
 *         opcodes that do not exist
 * @flags: the header flags it accepts
 */
struct trn_sim_opdesc {
	u8 words;
	u8 flags;
};

static const struct trn_sim_opdesc trn_sim_opdescs[] = {
	[TRN_OP_NOP] = { 1, 0 },
	[TRN_OP_WRITE] = { sizeof(struct trn_cmd_write) / 8, TRN_WRITE_64 },
	[TRN_OP_FILL] = { sizeof(struct trn_cmd_fill) / 8, 0 },
	[TRN_OP_COPY] = { sizeof(struct trn_cmd_copy) / 8, 0 },
	[TRN_OP_TIMESTAMP] = { sizeof(struct trn_cmd_timestamp) / 8, 0 },
	[TRN_OP_SEM_SIGNAL] = { sizeof(struct trn_cmd_sem) / 8, 0 },
	[TRN_OP_SEM_WAIT] = { sizeof(struct trn_cmd_sem) / 8, 0 },
	[TRN_OP_CALL] = { sizeof(struct trn_cmd_call) / 8, 0 },
	[TRN_OP_MATMUL] = { sizeof(struct trn_cmd_matmul) / 8,
			    TRN_MATMUL_BF16 | TRN_MATMUL_ACCUMULATE |
			    TRN_MATMUL_TRANSPOSE_A | TRN_MATMUL_TRANSPOSE_B },
	[TRN_OP_UNARY] = { sizeof(struct trn_cmd_unary) / 8,
			   TRN_ELEM_DST_BF16 },
	[TRN_OP_BINARY] = { sizeof(struct trn_cmd_binary) / 8,
			    TRN_ELEM_DST_BF16 | TRN_BINARY_B_PER_ROW },
	[TRN_OP_REDUCE] = { sizeof(struct trn_cmd_reduce) / 8, 0 },
};

/* Command fields are stored as fetched: little endian. */
static inline u32 cmd_u32(u32 v)
{
	return le32_to_cpu((__force __le32)v);
}

static inline u64 cmd_u64(u64 v)
{
	return le64_to_cpu((__force __le64)v);
}

static int trn_sim_fail(struct trn_sim_exec *x, u32 status)
{
	x->status = status;
	return TRN_SIM_OP_FAIL;
}

/* A memory access failed: -EFAULT is the job's MMU fault, else the device's. */
static int trn_sim_mem_fail(struct trn_sim_exec *x, int err)
{
	return trn_sim_fail(x, err == -EFAULT ? DRM_TRN_STATUS_MMU_FAULT :
						DRM_TRN_STATUS_ABORTED);
}

static void *trn_sim_scratch_get(struct trn_sim_exec *x, size_t size)
{
	struct trn_sim_scratch *s = x->scratch;

	size = max_t(size_t, size, TRN_SIM_CHUNK);
	if (s->size < size) {
		kvfree(s->buf);
		s->buf = kvmalloc(size, GFP_KERNEL);
		s->size = s->buf ? size : 0;
	}
	return s->buf;
}

/**
 * trn_sim_scratch_init() - prepare a NeuronCore's bounce buffer
 * @s: the buffer, zeroed
 *
 * Return: 0 or -ENOMEM.
 */
int trn_sim_scratch_init(struct trn_sim_scratch *s)
{
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_scratch_init);

/**
 * trn_sim_exec_init() - prepare the execution state of a ring
 * @x: the state, zeroed
 *
 * Return: 0 or -ENOMEM.
 */
int trn_sim_exec_init(struct trn_sim_exec *x)
{
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_exec_init);

/**
 * trn_sim_exec_fini() - free what trn_sim_exec_init() prepared
 * @x: the state, released
 */
void trn_sim_exec_fini(struct trn_sim_exec *x)
{
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_exec_fini);

/**
 * trn_sim_scratch_free() - free a bounce buffer
 * @s: the buffer; no execution uses it any more
 */
void trn_sim_scratch_free(struct trn_sim_scratch *s)
{
	kvfree(s->buf);
	s->buf = NULL;
	s->size = 0;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_scratch_free);

/**
 * trn_sim_f32_to_bf16() - round an f32 to bf16, to nearest, ties to even
 * @f: f32 bits
 *
 * Overflow gives infinity; a NaN stays a NaN of the same sign, quieted.
 *
 * Return: bf16 bits.
 */
u16 trn_sim_f32_to_bf16(u32 f)
{
	if ((f & 0x7fffffff) > 0x7f800000)
		return (f >> 16) | 0x0040;
	return (f + 0x7fff + ((f >> 16) & 1)) >> 16;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_f32_to_bf16);

/*
 * Turn @n elements as read from memory into f32 bits in CPU order, in
 * place: f32 (little endian), or bf16 widened exactly (the bf16 values
 * occupy the first 2 * @n bytes of @buf).
 */
static void trn_sim_widen(u32 *buf, u32 n, bool bf16)
{
	const __le16 *h = (const __le16 *)buf;
	u32 i;

	if (bf16) {
		/* Backwards: element i is read before bytes 4i.. are written. */
		for (i = n; i--;)
			buf[i] = (u32)le16_to_cpu(h[i]) << 16;
		return;
	}
	for (i = 0; i < n; i++)
		buf[i] = le32_to_cpu((__force __le32)buf[i]);
}

/*
 * Turn @n f32 results in CPU order into what memory gets, in place: f32
 * (little endian), or bf16 rounded to nearest even in the first 2 * @n
 * bytes. Returns the byte count.
 */
static size_t trn_sim_narrow(u32 *buf, u32 n, bool bf16)
{
	__le16 *h = (__le16 *)buf;
	u32 i;

	if (bf16) {
		/* Forwards: bytes 2i.. are written after element i was read. */
		for (i = 0; i < n; i++)
			h[i] = cpu_to_le16(trn_sim_f32_to_bf16(buf[i]));
		return (size_t)n * 2;
	}
	for (i = 0; i < n; i++)
		buf[i] = (__force u32)cpu_to_le32(buf[i]);
	return (size_t)n * 4;
}

static bool trn_sim_dims_ok(u32 a, u32 b)
{
	return a && b && a <= TRN_ISA_MAX_DIM && b <= TRN_ISA_MAX_DIM;
}

/*
 * Read @n elements at @va into @buf as f32 in CPU order (bf16 widened).
 * A failed access fails the job. Inlined: called once or twice per row,
 * and with a constant @bf16 the f32 conversion compiles to nothing.
 */
static __always_inline int trn_sim_read_f32(struct trn_sim_exec *x, u64 va,
					    u32 *buf, u32 n, bool bf16)
{
	int ret = x->ops->read(x, va, buf, (size_t)n * (bf16 ? 2 : 4));

	if (ret)
		return trn_sim_mem_fail(x, ret);
	trn_sim_widen(buf, n, bf16);
	return TRN_SIM_OP_DONE;
}

/* Store @n f32 results at @va, as f32 or bf16; @buf is narrowed in place. */
static __always_inline int trn_sim_write_f32(struct trn_sim_exec *x, u64 va,
					     u32 *buf, u32 n, bool bf16)
{
	int ret = x->ops->write(x, va, buf, trn_sim_narrow(buf, n, bf16));

	return ret ? trn_sim_mem_fail(x, ret) : TRN_SIM_OP_DONE;
}

/*
 * Row x->cursor of @rows is done: charge @cost for it and move on. False
 * when the budget is spent and rows remain, so the command resumes there.
 */
static bool trn_sim_next_row(struct trn_sim_exec *x, u32 rows, long *budget,
			     long cost)
{
	x->cursor++;
	*budget -= cost + TRN_SIM_ROW_COST;
	if (x->cursor < rows && *budget <= 0)
		return false;
	cond_resched();
	return true;
}

static int trn_sim_op_write(struct trn_sim_exec *x, u32 flags)
{
	const struct trn_cmd_write *c = &x->cmd.write;
	u64 dst = cmd_u64(c->dst), value = cmd_u64(c->value);
	bool wide = flags & TRN_WRITE_64;
	__le64 v64 = cpu_to_le64(value);
	__le32 v32 = cpu_to_le32(lower_32_bits(value));
	int ret;

	if (c->pad || (!wide && upper_32_bits(value)))
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ARG);
	if (dst & (wide ? 7 : 3))
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ALIGN);
	if (wide)
		ret = x->ops->write(x, dst, &v64, sizeof(v64));
	else
		ret = x->ops->write(x, dst, &v32, sizeof(v32));
	return ret ? trn_sim_mem_fail(x, ret) : TRN_SIM_OP_DONE;
}

static int trn_sim_op_fill(struct trn_sim_exec *x, long *budget)
{
	const struct trn_cmd_fill *c = &x->cmd.fill;
	u64 dst = cmd_u64(c->dst), size = cmd_u64(c->size);
	size_t i, len;
	u32 *buf;
	int ret;

	if ((dst | size) & 3)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ALIGN);
	if (!size)
		return TRN_SIM_OP_DONE;
	buf = trn_sim_scratch_get(x, TRN_SIM_CHUNK);
	if (!buf)
		return trn_sim_fail(x, DRM_TRN_STATUS_ABORTED);
	/* The pattern is kept as fetched, little endian. */
	for (i = 0; i < TRN_SIM_CHUNK / 4; i++)
		buf[i] = c->pattern;

	while (x->cursor < size) {
		len = min_t(u64, size - x->cursor, TRN_SIM_CHUNK);
		ret = x->ops->write(x, dst + x->cursor, buf, len);
		if (ret)
			return trn_sim_mem_fail(x, ret);
		x->cursor += len;
		*budget -= len;
		if (x->cursor < size && *budget <= 0)
			return TRN_SIM_OP_MORE;
		cond_resched();
	}
	return TRN_SIM_OP_DONE;
}

static int trn_sim_op_copy(struct trn_sim_exec *x, long *budget)
{
	const struct trn_cmd_copy *c = &x->cmd.copy;
	u64 dst = cmd_u64(c->dst), src = cmd_u64(c->src);
	u64 width = cmd_u64(c->width), height = cmd_u64(c->height);
	u64 dpitch = cmd_u64(c->dst_pitch), spitch = cmd_u64(c->src_pitch);
	size_t len;
	void *buf;
	int ret;

	if (c->pad)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ARG);
	if (!width || !height)
		return TRN_SIM_OP_DONE;
	/* A device that can copy directly moves every byte once. */
	buf = x->ops->copy ? NULL : trn_sim_scratch_get(x, TRN_SIM_CHUNK);
	if (!x->ops->copy && !buf)
		return trn_sim_fail(x, DRM_TRN_STATUS_ABORTED);

	/* cursor: row; cursor_off: bytes of that row already copied. */
	while (x->cursor < height) {
		u64 s = src + x->cursor * spitch + x->cursor_off;
		u64 d = dst + x->cursor * dpitch + x->cursor_off;

		len = min_t(u64, width - x->cursor_off, TRN_SIM_CHUNK);
		if (x->ops->copy) {
			ret = x->ops->copy(x, d, s, len);
		} else {
			ret = x->ops->read(x, s, buf, len);
			if (!ret)
				ret = x->ops->write(x, d, buf, len);
		}
		if (ret)
			return trn_sim_mem_fail(x, ret);
		x->cursor_off += len;
		*budget -= len + TRN_SIM_ROW_COST;
		if (x->cursor_off == width) {
			x->cursor++;
			x->cursor_off = 0;
		}
		if (x->cursor < height && *budget <= 0)
			return TRN_SIM_OP_MORE;
		cond_resched();
	}
	return TRN_SIM_OP_DONE;
}

static int trn_sim_op_timestamp(struct trn_sim_exec *x)
{
	const struct trn_cmd_timestamp *c = &x->cmd.timestamp;
	u64 dst = cmd_u64(c->dst);
	__le64 now;
	int ret;

	if (c->pad)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ARG);
	if (dst & 7)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ALIGN);
	now = cpu_to_le64(x->ops->clock(x));
	ret = x->ops->write(x, dst, &now, sizeof(now));
	return ret ? trn_sim_mem_fail(x, ret) : TRN_SIM_OP_DONE;
}

static int trn_sim_op_sem(struct trn_sim_exec *x, bool wait)
{
	const struct trn_cmd_sem *c = &x->cmd.sem;
	u32 sem = cmd_u32(c->sem);
	u64 value = cmd_u64(c->value);

	if (sem >= TRN_NUM_SEMAPHORES)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ARG);
	if (!x->sems)
		return trn_sim_fail(x, DRM_TRN_STATUS_ABORTED);
	if (!wait) {
		x->sems[sem] += value;
		return TRN_SIM_OP_DONE;
	}
	return x->sems[sem] >= value ? TRN_SIM_OP_DONE : TRN_SIM_OP_BLOCKED;
}

static int trn_sim_op_call(struct trn_sim_exec *x, struct trn_sim_frame *f,
			   u32 words)
{
	const struct trn_cmd_call *c = &x->cmd.call;
	u64 va = cmd_u64(c->va), size = cmd_u64(c->size);

	if (c->pad)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ARG);
	if (((va | size) & 7) || !size)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ALIGN);
	if (x->depth > TRN_ISA_MAX_CALL_DEPTH)
		return trn_sim_fail(x, DRM_TRN_STATUS_CALL_DEPTH);
	/* Return to the command after the CALL. */
	f->pc += (u64)words * 8;
	x->stack[x->depth].va = va;
	x->stack[x->depth].size = size;
	x->stack[x->depth].pc = 0;
	x->depth++;
	return TRN_SIM_OP_DONE;
}

/*
 * Read B into x->stage, k rows of n f32 values, whichever way it is stored,
 * and make room for a panel of @apanel more values after it.
 */
static int trn_sim_stage_b(struct trn_sim_exec *x, u64 b, u64 ldb, u32 k,
			   u32 n, u32 flags, size_t apanel)
{
	bool bf16 = flags & TRN_MATMUL_BF16;
	u32 kk, j0, jn, jj, cols;
	u32 *buf, *row;
	int ret;

	x->stage = kvmalloc_array((size_t)k * n + apanel, sizeof(u32),
				  GFP_KERNEL);
	if (!x->stage)
		return trn_sim_fail(x, DRM_TRN_STATUS_ABORTED);
	if (!(flags & TRN_MATMUL_TRANSPOSE_B)) {
		for (kk = 0; kk < k; kk++) {
			row = x->stage + (size_t)kk * n;
			ret = trn_sim_read_f32(x, b + kk * ldb, row, n, bf16);
			if (ret != TRN_SIM_OP_DONE)
				return ret;
			cond_resched();
		}
		return TRN_SIM_OP_DONE;
	}

	/*
	 * Stored as n rows of k: read a few of them (columns of B) into the
	 * bounce buffer, then write them across the staged rows, a short
	 * contiguous run per row, so that the multiply reads B row-wise.
	 */
	cols = clamp(TRN_SIM_BT_ELEMS / k, 1U, TRN_SIM_BT_COLS);
	buf = trn_sim_scratch_get(x, (size_t)cols * k * 4);
	if (!buf)
		return trn_sim_fail(x, DRM_TRN_STATUS_ABORTED);
	for (j0 = 0; j0 < n; j0 += jn) {
		jn = min(n - j0, cols);
		for (jj = 0; jj < jn; jj++) {
			ret = trn_sim_read_f32(x, b + (u64)(j0 + jj) * ldb,
					       buf + (size_t)jj * k, k, bf16);
			if (ret != TRN_SIM_OP_DONE)
				return ret;
		}
		for (kk = 0; kk < k; kk++) {
			row = x->stage + (size_t)kk * n + j0;
			for (jj = 0; jj < jn; jj++)
				row[jj] = buf[(size_t)jj * k + kk];
		}
		cond_resched();
	}
	return TRN_SIM_OP_DONE;
}

/*
 * Transposed A: read rows @i0 to @i0 + @rows - 1 of A (columns of what is
 * stored, k rows of m) into @panel, k rows of @pitch f32 values.
 */
static int trn_sim_stage_at(struct trn_sim_exec *x, u32 *panel, u32 pitch,
			    u64 a, u64 lda, u32 i0, u32 rows, u32 k, bool bf16)
{
	u32 es = bf16 ? 2 : 4, kk;
	int ret;

	for (kk = 0; kk < k; kk++) {
		ret = trn_sim_read_f32(x, a + kk * lda + (u64)i0 * es,
				       panel + (size_t)kk * pitch, rows, bf16);
		if (ret != TRN_SIM_OP_DONE)
			return ret;
	}
	return TRN_SIM_OP_DONE;
}

static int trn_sim_op_matmul(struct trn_sim_exec *x, u32 flags, long *budget)
{
	const struct trn_cmd_matmul *c = &x->cmd.matmul;
	u32 m = cmd_u32(c->m), n = cmd_u32(c->n), k = cmd_u32(c->k);
	u64 a = cmd_u64(c->a), b = cmd_u64(c->b), cc = cmd_u64(c->c);
	u64 lda = cmd_u64(c->lda), ldb = cmd_u64(c->ldb);
	u64 ldc = cmd_u64(c->ldc);
	bool bf16 = flags & TRN_MATMUL_BF16;
	bool ta = flags & TRN_MATMUL_TRANSPOSE_A;
	u32 es = bf16 ? 2 : 4, k0, k1, step, prows = 0, i, p0, pn, kk;
	u32 *arow, *crow, *panel = NULL;
	int ret;

	if (!trn_sim_dims_ok(m, n) || !trn_sim_dims_ok(k, 1) ||
	    (u64)k * n * 4 > TRN_ISA_MAX_MATMUL_B_BYTES)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ARG);
	if (((a | lda | b | ldb) & (es - 1)) || ((cc | ldc) & 3))
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ALIGN);
	if (!kernel_fpu_available())
		return trn_sim_fail(x, DRM_TRN_STATUS_ABORTED);

	/*
	 * A transposed is staged a panel of prows rows at a time (rows p0 to
	 * p0 + pn - 1, p0 a multiple of prows), behind B in x->stage, so
	 * that it survives between slices; each row of A is then gathered
	 * from the panel into the bounce buffer.
	 */
	if (ta)
		prows = clamp(TRN_SIM_APANEL_ELEMS / k, 1U, m);
	if (!x->stage) {
		ret = trn_sim_stage_b(x, b, ldb, k, n, flags,
				      (size_t)k * prows);
		if (ret != TRN_SIM_OP_DONE)
			return ret;
		*budget -= (long)k * n * es;
	}
	if (ta)
		panel = x->stage + (size_t)k * n;
	arow = trn_sim_scratch_get(x, ((size_t)k + n) * 4);
	if (!arow)
		return trn_sim_fail(x, DRM_TRN_STATUS_ABORTED);
	crow = arow + k;
	step = max(TRN_SIM_FPU_MACS / n, 1U);

	while (x->cursor < m) {
		i = x->cursor;
		if (ta) {
			p0 = i - i % prows;
			pn = min(prows, m - p0);
			/* The panel is read when its first row comes up. */
			if (i == p0) {
				ret = trn_sim_stage_at(x, panel, prows, a, lda,
						       p0, pn, k, bf16);
				if (ret != TRN_SIM_OP_DONE)
					return ret;
				*budget -= (long)k * pn * es;
			}
			for (kk = 0; kk < k; kk++)
				arow[kk] = panel[(size_t)kk * prows + i - p0];
		} else {
			ret = trn_sim_read_f32(x, a + i * lda, arow, k, bf16);
			if (ret != TRN_SIM_OP_DONE)
				return ret;
		}
		if (flags & TRN_MATMUL_ACCUMULATE) {
			ret = trn_sim_read_f32(x, cc + i * ldc, crow, n, false);
			if (ret != TRN_SIM_OP_DONE)
				return ret;
		} else {
			memset(crow, 0, (size_t)n * 4);	/* +0.0f */
		}
		for (k0 = 0; k0 < k; k0 = k1) {
			k1 = k0 + min(step, k - k0);
			kernel_fpu_begin();
			trn_sim_math_matmul_row(crow, arow, x->stage, k0, k1, n);
			kernel_fpu_end();
		}
		ret = trn_sim_write_f32(x, cc + i * ldc, crow, n, false);
		if (ret != TRN_SIM_OP_DONE)
			return ret;
		if (!trn_sim_next_row(x, m, budget, (long)n * k))
			return TRN_SIM_OP_MORE;
	}
	kvfree(x->stage);
	x->stage = NULL;
	return TRN_SIM_OP_DONE;
}

/**
 * struct trn_sim_rows - an elementwise command (UNARY, BINARY or REDUCE)
 * @dst: device address of row 0 of the results
 * @dpitch: bytes from one row of results to the next
 * @src: device addresses of row 0 of the operands (the second: BINARY's b)
 * @spitch: their row pitches
 * @rows: rows, as fetched
 * @cols: f32 values per row of the first operand, as fetched
 * @bn: f32 values per row of the second operand: @cols, 1 (one per row),
 *      or 0 where there is no second operand
 * @op: the operation, as fetched
 * @last_op: the highest valid @op
 * @bf16: results are stored as bf16
 * @fold: one result per row (REDUCE) rather than one per value
 * @cost: budget units charged per column of a row
 */
struct trn_sim_rows {
	u64 dst;
	u64 dpitch;
	u64 src[2];
	u64 spitch[2];
	u32 rows;
	u32 cols;
	u32 bn;
	u32 op;
	u32 last_op;
	bool bf16;
	bool fold;
	u32 cost;
};

/*
 * The arithmetic of the elementwise commands, on values @i to @i + @n - 1
 * of row @a (and of @b), between kernel_fpu_begin() and kernel_fpu_end().
 * Results go to @a.
 */
static void trn_sim_unary_fpu(const struct trn_sim_rows *r, u32 *a,
			      const u32 *b, u32 i, u32 n)
{
	trn_sim_math_unary(r->op, a + i, a + i, n);
}

static void trn_sim_binary_fpu(const struct trn_sim_rows *r, u32 *a,
			       const u32 *b, u32 i, u32 n)
{
	/* One b for the row; a row of one column works either way. */
	bool scalar = r->bn == 1;

	trn_sim_math_binary(r->op, a + i, a + i, scalar ? b : b + i, n,
			    scalar);
}

/* f32 -infinity: MAX folds every value into it, a first NaN included. */
#define TRN_SIM_F32_NEG_INF	0xff800000U

/*
 * The reduction so far is kept in a[0], which only the first section
 * reads: SUM starts from +0; MAX from -infinity, so that a row of one NaN
 * comes out quieted like any other first NaN.
 */
static void trn_sim_reduce_fpu(const struct trn_sim_rows *r, u32 *a,
			       const u32 *b, u32 i, u32 n)
{
	if (i)
		a[0] = trn_sim_math_reduce(r->op, a[0], a + i, n);
	else
		a[0] = trn_sim_math_reduce(r->op, r->op == TRN_REDUCE_MAX ?
					   TRN_SIM_F32_NEG_INF : 0, a, n);
}

/*
 * Check and run an elementwise command from row x->cursor on: read each
 * row's operands, compute with @fpu a section of at most TRN_SIM_FPU_ELEMS
 * values at a time, write the results. Inlined into each command so that
 * @fpu is a direct call in the hot loop.
 */
static __always_inline int
trn_sim_rows_run(struct trn_sim_exec *x, const struct trn_sim_rows *r,
		 void (*fpu)(const struct trn_sim_rows *r, u32 *a,
			     const u32 *b, u32 i, u32 n),
		 long *budget)
{
	u32 *a, *b, i, n;
	int ret;

	if (r->op > r->last_op || !trn_sim_dims_ok(r->rows, r->cols))
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ARG);
	if (((r->src[0] | r->spitch[0] | r->src[1] | r->spitch[1]) & 3) ||
	    ((r->dst | r->dpitch) & (r->bf16 ? 1 : 3)))
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ALIGN);
	if (!kernel_fpu_available())
		return trn_sim_fail(x, DRM_TRN_STATUS_ABORTED);
	/* A second operand is staged behind the first, room for @cols. */
	a = trn_sim_scratch_get(x, (size_t)r->cols * (r->bn ? 8 : 4));
	if (!a)
		return trn_sim_fail(x, DRM_TRN_STATUS_ABORTED);
	b = a + r->cols;

	while (x->cursor < r->rows) {
		ret = trn_sim_read_f32(x, r->src[0] + x->cursor * r->spitch[0],
				       a, r->cols, false);
		if (ret == TRN_SIM_OP_DONE && r->bn)
			ret = trn_sim_read_f32(x, r->src[1] +
					       x->cursor * r->spitch[1],
					       b, r->bn, false);
		if (ret != TRN_SIM_OP_DONE)
			return ret;
		for (i = 0; i < r->cols; i += n) {
			n = min(r->cols - i, TRN_SIM_FPU_ELEMS);
			kernel_fpu_begin();
			fpu(r, a, b, i, n);
			kernel_fpu_end();
		}
		ret = trn_sim_write_f32(x, r->dst + x->cursor * r->dpitch, a,
					r->fold ? 1 : r->cols, r->bf16);
		if (ret != TRN_SIM_OP_DONE)
			return ret;
		if (!trn_sim_next_row(x, r->rows, budget,
				      (long)r->cols * r->cost))
			return TRN_SIM_OP_MORE;
	}
	return TRN_SIM_OP_DONE;
}

static int trn_sim_op_unary(struct trn_sim_exec *x, u32 flags, long *budget)
{
	const struct trn_cmd_unary *c = &x->cmd.unary;
	const struct trn_sim_rows r = {
		.dst = cmd_u64(c->dst),
		.dpitch = cmd_u64(c->dst_pitch),
		.src = { cmd_u64(c->src) },
		.spitch = { cmd_u64(c->src_pitch) },
		.rows = cmd_u32(c->rows),
		.cols = cmd_u32(c->cols),
		.op = cmd_u32(c->op),
		.last_op = TRN_UNARY_RELU_GRAD,
		.bf16 = flags & TRN_ELEM_DST_BF16,
		.cost = 8,
	};

	return trn_sim_rows_run(x, &r, trn_sim_unary_fpu, budget);
}

static int trn_sim_op_binary(struct trn_sim_exec *x, u32 flags, long *budget)
{
	const struct trn_cmd_binary *c = &x->cmd.binary;
	u32 cols = cmd_u32(c->cols);
	const struct trn_sim_rows r = {
		.dst = cmd_u64(c->dst),
		.dpitch = cmd_u64(c->dst_pitch),
		.src = { cmd_u64(c->a), cmd_u64(c->b) },
		.spitch = { cmd_u64(c->a_pitch), cmd_u64(c->b_pitch) },
		.rows = cmd_u32(c->rows),
		.cols = cols,
		.bn = flags & TRN_BINARY_B_PER_ROW ? 1 : cols,
		.op = cmd_u32(c->op),
		.last_op = TRN_BINARY_MIN,
		.bf16 = flags & TRN_ELEM_DST_BF16,
		.cost = 12,
	};

	return trn_sim_rows_run(x, &r, trn_sim_binary_fpu, budget);
}

static int trn_sim_op_reduce(struct trn_sim_exec *x, long *budget)
{
	const struct trn_cmd_reduce *c = &x->cmd.reduce;
	const struct trn_sim_rows r = {
		.dst = cmd_u64(c->dst),
		.dpitch = 4,
		.src = { cmd_u64(c->src) },
		.spitch = { cmd_u64(c->src_pitch) },
		.rows = cmd_u32(c->rows),
		.cols = cmd_u32(c->cols),
		.op = cmd_u32(c->op),
		.last_op = TRN_REDUCE_MAX,
		.fold = true,
		.cost = 4,
	};

	return trn_sim_rows_run(x, &r, trn_sim_reduce_fpu, budget);
}

/*
 * Fetch and decode the command at the frame's pc into x->cmd, checking
 * what the header alone decides: size, opcode, flags.
 */
static int trn_sim_fetch(struct trn_sim_exec *x, struct trn_sim_frame *f)
{
	const struct trn_sim_opdesc *d;
	u32 hdr, op, words;
	__le64 first;
	int ret;

	ret = x->ops->read(x, f->va + f->pc, &first, sizeof(first));
	if (ret)
		return trn_sim_mem_fail(x, ret);
	hdr = lower_32_bits(le64_to_cpu(first));
	op = TRN_CMD_OPCODE(hdr);
	words = TRN_CMD_WORDS(hdr);

	if (!words || words > (f->size - f->pc) / 8)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_SIZE);
	if (op >= ARRAY_SIZE(trn_sim_opdescs) || !trn_sim_opdescs[op].words)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_OPCODE);
	d = &trn_sim_opdescs[op];
	if (op != TRN_OP_NOP && words != d->words)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_SIZE);
	if (TRN_CMD_FLAGS(hdr) & ~d->flags)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ARG);

	memset(&x->cmd, 0, sizeof(x->cmd));
	x->cmd.words[0] = (__force u64)first;
	/* A NOP's body is never fetched. */
	if (op != TRN_OP_NOP && words > 1) {
		ret = x->ops->read(x, f->va + f->pc + 8, &x->cmd.words[1],
				   (words - 1) * 8);
		if (ret)
			return trn_sim_mem_fail(x, ret);
	}
	x->in_cmd = true;
	x->cursor = 0;
	x->cursor_off = 0;
	return TRN_SIM_OP_DONE;
}

static int trn_sim_execute(struct trn_sim_exec *x, struct trn_sim_frame *f,
			   long *budget)
{
	u32 hdr = cmd_u32(x->cmd.header);
	u32 flags = TRN_CMD_FLAGS(hdr);

	switch (TRN_CMD_OPCODE(hdr)) {
	case TRN_OP_NOP:
		return TRN_SIM_OP_DONE;
	case TRN_OP_WRITE:
		return trn_sim_op_write(x, flags);
	case TRN_OP_FILL:
		return trn_sim_op_fill(x, budget);
	case TRN_OP_COPY:
		return trn_sim_op_copy(x, budget);
	case TRN_OP_TIMESTAMP:
		return trn_sim_op_timestamp(x);
	case TRN_OP_SEM_SIGNAL:
		return trn_sim_op_sem(x, false);
	case TRN_OP_SEM_WAIT:
		return trn_sim_op_sem(x, true);
	case TRN_OP_CALL:
		return trn_sim_op_call(x, f, TRN_CMD_WORDS(hdr));
	case TRN_OP_MATMUL:
		return trn_sim_op_matmul(x, flags, budget);
	case TRN_OP_UNARY:
		return trn_sim_op_unary(x, flags, budget);
	case TRN_OP_BINARY:
		return trn_sim_op_binary(x, flags, budget);
	case TRN_OP_REDUCE:
		return trn_sim_op_reduce(x, budget);
	}
	return trn_sim_fail(x, DRM_TRN_STATUS_BAD_OPCODE);
}

/**
 * trn_sim_exec_release() - drop what an execution holds between slices
 * @x: the execution, finished or abandoned
 */
void trn_sim_exec_release(struct trn_sim_exec *x)
{
	kvfree(x->stage);
	x->stage = NULL;
	x->in_cmd = false;
	x->depth = 0;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_exec_release);

/**
 * trn_sim_exec_start() - begin a job
 * @x: zeroed or released execution state; @ops, @sems and @scratch set
 * @va: device address of the job's commands
 * @size: their size in bytes
 *
 * A command buffer that is not 8-byte aligned, not a multiple of 8 bytes
 * or empty fails the job at once with %DRM_TRN_STATUS_BAD_ALIGN.
 */
void trn_sim_exec_start(struct trn_sim_exec *x, u64 va, u64 size)
{
	trn_sim_exec_release(x);
	x->retired = 0;
	x->status = DRM_TRN_STATUS_OK;
	x->error_offset = 0;
	x->error_cmd_va = 0;
	x->fault_va = 0;
	if (((va | size) & 7) || !size) {
		x->status = DRM_TRN_STATUS_BAD_ALIGN;
		x->error_cmd_va = va;
		return;
	}
	x->stack[0].va = va;
	x->stack[0].size = size;
	x->stack[0].pc = 0;
	x->depth = 1;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_exec_start);

/**
 * trn_sim_exec_run() - run a job for a while
 * @x: the job, started with trn_sim_exec_start()
 * @budget: work units it may use; decreased by what it used
 *
 * Executes commands until the job finishes, fails, blocks in SEM_WAIT or
 * has used up @budget (a command that is started makes progress even
 * without budget, so repeated calls always finish a job that does not
 * block). May sleep.
 *
 * Return: &enum trn_sim_run.
 */
enum trn_sim_run trn_sim_exec_run(struct trn_sim_exec *x, long *budget)
{
	struct trn_sim_frame *f;
	u32 hdr;
	int ret;

	while (x->depth) {
		f = &x->stack[x->depth - 1];
		if (!x->in_cmd) {
			if (f->pc == f->size) {
				x->depth--;	/* return from a CALL */
				continue;
			}
			if (*budget <= 0)
				return TRN_SIM_RUN_YIELD;
			ret = trn_sim_fetch(x, f);
			if (ret != TRN_SIM_OP_DONE)
				goto fail;
			*budget -= TRN_SIM_CMD_COST;
		}

		hdr = cmd_u32(x->cmd.header);
		ret = trn_sim_execute(x, f, budget);
		switch (ret) {
		case TRN_SIM_OP_DONE:
			if (TRN_CMD_OPCODE(hdr) != TRN_OP_CALL)
				f->pc += (u64)TRN_CMD_WORDS(hdr) * 8;
			x->in_cmd = false;
			x->retired++;
			break;
		case TRN_SIM_OP_MORE:
			return TRN_SIM_RUN_YIELD;
		case TRN_SIM_OP_BLOCKED:
			return TRN_SIM_RUN_BLOCKED;
		default:
			goto fail;
		}
	}
	return TRN_SIM_RUN_DONE;

fail:
	x->error_offset = f->pc;
	x->error_cmd_va = f->va + f->pc;
	trn_sim_exec_release(x);
	return TRN_SIM_RUN_DONE;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_exec_run);
