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
 * rings of the NeuronCore in between. Operands are staged through the
 * NeuronCore's SRAM (&struct trn_sim_scratch, allocated when the device is
 * created): executing never allocates memory, because the engine runs on
 * the way to signalling DMA fences, where an allocation that waits for
 * reclaim could wait for those very fences. A MATMUL whose B does not fit
 * is tiled (trn_sim_mm_plan()). The floating point of trn_sim_math.c runs
 * between kernel_fpu_begin() and kernel_fpu_end() on at most
 * TRN_SIM_FPU_ELEMS elements (TRN_SIM_FPU_MACS multiply-adds) at a time,
 * never across a memory access.
 */

#include <linux/bits.h>
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/fpu.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/wordpart.h>

#include <asm/byteorder.h>

#include <kunit/visibility.h>

#include "../trn_isa_check.h"
#include "trn_sim_isa.h"

/* Bytes a COPY or FILL moves per memory access (at most the SRAM). */
#define TRN_SIM_CHUNK		SZ_64K
/* Budget units charged for fetching a command, and per row of an op. */
#define TRN_SIM_CMD_COST	64
#define TRN_SIM_ROW_COST	16
/* Most elements, and multiply-adds, per kernel_fpu_begin() section. */
#define TRN_SIM_FPU_ELEMS	4096U
#define TRN_SIM_FPU_MACS	65536U
/* How much dearer than EXP a value of ERF, GELU_ERF or GELU_ERF_GRAD is. */
#define TRN_SIM_SERIES_COST	8U
/*
 * Transposed B is staged TRN_SIM_BT_COLS stored rows (columns of B) at a
 * time, at most TRN_SIM_BT_CHUNK values of each per read.
 */
#define TRN_SIM_BT_COLS		16U
#define TRN_SIM_BT_CHUNK	1024U

static unsigned int sram_kib = TRN_SIM_SRAM_MIN / SZ_1K;
module_param(sram_kib, uint, 0644);
MODULE_PARM_DESC(sram_kib,
		 "SRAM of each NeuronCore of devices created afterwards, in KiB (1024 to 262144; default 1024)");

/* What executing (part of) a command came to. */
enum {
	TRN_SIM_OP_DONE,	/* finished; on to the next command */
	TRN_SIM_OP_MORE,	/* budget spent; resume at the cursor */
	TRN_SIM_OP_BLOCKED,	/* SEM_WAIT not satisfied */
	TRN_SIM_OP_FAIL,	/* the job fails with x->status */
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

/*
 * The SRAM for anything but a MATMUL's tiles: @size bytes of it, or NULL if
 * it is smaller (only a test's can be). Tiles staged there are gone.
 */
static void *trn_sim_scratch_get(struct trn_sim_exec *x, size_t size)
{
	struct trn_sim_scratch *s = x->scratch;

	s->owner = 0;
	return size <= s->size ? s->buf : NULL;
}

/* Bytes a COPY or FILL moves per access: TRN_SIM_CHUNK, or all the SRAM. */
static size_t trn_sim_chunk(struct trn_sim_exec *x)
{
	return min_t(size_t, TRN_SIM_CHUNK, round_down(x->scratch->size, 4));
}

/**
 * trn_sim_scratch_init_size() - allocate an SRAM of a given size
 * @s: the SRAM, zeroed
 * @size: bytes, a multiple of 4 from 4 KiB to %TRN_SIM_SRAM_MAX; below
 *        %TRN_SIM_SRAM_MIN some commands do not fit (they fail with
 *        %DRM_TRN_STATUS_ABORTED), which only tests want
 *
 * Return: 0, -EINVAL for a bad @size, or -ENOMEM.
 */
int trn_sim_scratch_init_size(struct trn_sim_scratch *s, size_t size)
{
	if (size < SZ_4K || size > TRN_SIM_SRAM_MAX || size % 4)
		return -EINVAL;
	s->buf = kvzalloc(size, GFP_KERNEL);
	if (!s->buf)
		return -ENOMEM;
	s->size = size;
	s->last_id = 0;
	s->owner = 0;
	s->b_tile = U64_MAX;
	s->a_group = U64_MAX;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_scratch_init_size);

/**
 * trn_sim_scratch_init() - allocate a NeuronCore's SRAM
 * @s: the SRAM, zeroed
 *
 * Its size is the module parameter sram_kib, within %TRN_SIM_SRAM_MIN and
 * %TRN_SIM_SRAM_MAX. Called in process context when a device is created;
 * nothing allocates afterwards.
 *
 * Return: 0 or -ENOMEM.
 */
int trn_sim_scratch_init(struct trn_sim_scratch *s)
{
	size_t kib = clamp_t(size_t, READ_ONCE(sram_kib),
			     TRN_SIM_SRAM_MIN / SZ_1K,
			     TRN_SIM_SRAM_MAX / SZ_1K);

	return trn_sim_scratch_init_size(s, kib * SZ_1K);
}
EXPORT_SYMBOL_IF_KUNIT(trn_sim_scratch_init);

/**
 * trn_sim_exec_init() - prepare the execution state of a ring
 * @x: the state, zeroed
 *
 * There is nothing to prepare: an execution holds no memory of its own
 * (everything it stages is in its NeuronCore's SRAM, and what must survive
 * between slices is re-staged), so that a device with many rings costs
 * nothing per ring.
 *
 * Return: 0.
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
 * trn_sim_scratch_free() - free an SRAM
 * @s: the SRAM; no execution uses it any more
 */
void trn_sim_scratch_free(struct trn_sim_scratch *s)
{
	kvfree(s->buf);
	s->buf = NULL;
	s->size = 0;
	s->owner = 0;
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

/* An unsigned byte as f32 bits, exactly: integer arithmetic, no FPU. */
static u32 trn_sim_u8_to_f32(u8 v)
{
	u32 e;

	if (!v)
		return 0;
	e = fls(v) - 1;
	return (127 + e) << 23 | (((u32)v << (23 - e)) & 0x7fffff);
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

/*
 * Read @n bytes at @va into @buf as f32 in CPU order, each the value of
 * its byte. A failed access fails the job.
 */
static int trn_sim_read_u8_f32(struct trn_sim_exec *x, u64 va, u32 *buf,
			       u32 n)
{
	const u8 *bytes = (const u8 *)buf;
	int ret = x->ops->read(x, va, buf, n);
	u32 i;

	if (ret)
		return trn_sim_mem_fail(x, ret);
	/* Backwards: byte i is read before bytes 4i.. are written. */
	for (i = n; i--;)
		buf[i] = trn_sim_u8_to_f32(bytes[i]);
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
static bool trn_sim_next_row(struct trn_sim_exec *x, u64 rows, long *budget,
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
	size_t i, len, chunk = trn_sim_chunk(x);
	u32 *buf;
	int ret;

	if ((dst | size) & 3)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ALIGN);
	if (!size)
		return TRN_SIM_OP_DONE;
	buf = trn_sim_scratch_get(x, chunk);
	if (!buf || !chunk)
		return trn_sim_fail(x, DRM_TRN_STATUS_ABORTED);
	/* The pattern is kept as fetched, little endian. */
	for (i = 0; i < chunk / 4; i++)
		buf[i] = c->pattern;

	while (x->cursor < size) {
		len = min_t(u64, size - x->cursor, chunk);
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
	size_t len, chunk;
	void *buf;
	int ret;

	if (c->pad)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ARG);
	if (!width || !height)
		return TRN_SIM_OP_DONE;
	/* A device that can copy directly moves every byte once. */
	chunk = x->ops->copy ? TRN_SIM_CHUNK : trn_sim_chunk(x);
	buf = x->ops->copy ? NULL : trn_sim_scratch_get(x, chunk);
	if (!x->ops->copy && (!buf || !chunk))
		return trn_sim_fail(x, DRM_TRN_STATUS_ABORTED);

	/* cursor: row; cursor_off: bytes of that row already copied. */
	while (x->cursor < height) {
		u64 s = src + x->cursor * spitch + x->cursor_off;
		u64 d = dst + x->cursor * dpitch + x->cursor_off;

		len = min_t(u64, width - x->cursor_off, chunk);
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
	u32 status = trn_isa_check_call(va, size, c->pad, x->depth);

	if (status != DRM_TRN_STATUS_OK)
		return trn_sim_fail(x, status);
	/* Return to the command after the CALL. */
	f->pc += (u64)words * 8;
	x->stack[x->depth].va = va;
	x->stack[x->depth].size = size;
	x->stack[x->depth].pc = 0;
	x->depth++;
	return TRN_SIM_OP_DONE;
}

/**
 * struct trn_sim_mm - a MATMUL, and how it is tiled in the SRAM
 * @a: device address of A
 * @b: device address of B
 * @c: device address of C
 * @lda: row pitch of A as stored
 * @ldb: row pitch of B as stored
 * @ldc: row pitch of C
 * @m: rows of C
 * @n: columns of C
 * @k: columns of A, rows of B
 * @es: element size of A and B in bytes
 * @bf16: A and B are bf16
 * @ta: A is stored transposed (k rows of m)
 * @tb: B is stored transposed (n rows of k)
 * @acc: C is added to
 * @rowwise: rows of C overlap and B has several tiles: each step computes
 *           a whole row of C, staging every tile, in the order of rows
 * @jpanels: tiles across n
 * @jn: columns per tile (the last ones may have fewer)
 * @kpanels: tiles across k; between them, a step's row of C (@rowwise) or
 *           else C itself holds the partial sums
 * @kp: rows of B per tile (the last ones may have fewer)
 * @rows: rows of transposed A staged per group
 * @tchunk: with @tb, values of a stored row read at a time
 * @tile: the tile of B staged: its rows, packed
 * @arow: the part of row i of A that the tile needs
 * @group: with @ta, a group of rows of A as stored (@kp rows of @rows
 *         values); @arow itself when @rows is 1
 * @cbuf: row i of C, for the columns of the step
 * @tmp: with @tb, %TRN_SIM_BT_COLS times @tchunk values
 */
struct trn_sim_mm {
	u64 a, b, c;
	u64 lda, ldb, ldc;
	u32 m, n, k;
	u32 es;
	bool bf16, ta, tb, acc;
	bool rowwise;
	u32 jpanels, jn, kpanels, kp;
	u32 rows, tchunk;
	u32 *tile, *arow, *group, *cbuf, *tmp;
};

/*
 * Whether @rows rows of @bytes bytes, @pitch apart (modulo 2^64), are
 * disjoint (or all in one place if @same is allowed): then the order in
 * which parts of different rows are written does not matter.
 */
static bool trn_sim_rows_apart(u64 pitch, u32 rows, u64 bytes, bool same)
{
	u64 span;

	if (rows == 1)
		return true;
	if (!pitch)
		return same;
	if (pitch < bytes || check_mul_overflow((u64)rows - 1, pitch, &span))
		return false;
	return span <= U64_MAX - bytes + 1;
}

/*
 * With tiles of @kp rows of B: the columns that fit in an SRAM of @e
 * values next to what else a step needs (part of a row of A, a group of
 * rows of transposed A taking up to an eighth of the SRAM, the row of C,
 * all of it with @whole_row, and the staging room of a transposed B).
 */
static size_t trn_sim_mm_room(struct trn_sim_mm *mm, size_t e, u32 kp,
			      bool whole_row)
{
	size_t fixed;

	mm->kp = kp;
	mm->rows = mm->ta ? clamp_t(size_t, e / 8 / kp, 1, mm->m) : 1;
	mm->tchunk = mm->tb ? min_t(size_t, kp, clamp_t(size_t, e / 256, 16,
						       TRN_SIM_BT_CHUNK)) : 0;
	fixed = kp + (mm->rows > 1 ? (size_t)mm->rows * kp : 0) +
		(size_t)TRN_SIM_BT_COLS * mm->tchunk + (whole_row ? mm->n : 0);
	if (fixed >= e)
		return 0;
	/* Per column: kp values of B, and one of C unless a whole row. */
	return (e - fixed) / (kp + !whole_row);
}

/* Tiles as even as they can be, at most @max of @len wide. */
static void trn_sim_mm_split(u32 len, size_t max, u32 *count, u32 *width)
{
	*count = DIV_ROUND_UP(len, min_t(size_t, max, len));
	*width = DIV_ROUND_UP(len, *count);
}

/*
 * What a plan costs beyond the multiply-adds, which are the same for all:
 * device accesses, at 256 units each, and values moved.
 */
static u64 trn_sim_mm_cost(const struct trn_sim_mm *mm)
{
	u64 m = mm->m, n = mm->n, k = mm->k, jp = mm->jpanels;
	u64 kp = mm->kpanels, reps = mm->rowwise ? m : 1;
	u64 steps = mm->rowwise ? m : jp * kp * m;
	u64 calls, values, c;

	/* B, staged once (per row if rowwise) */
	calls = (mm->tb ? n * kp * DIV_ROUND_UP(mm->kp, mm->tchunk) :
			  jp * k) * reps;
	values = k * n * reps;
	/* A, per tile and row; transposed, per tile and group of rows */
	if (mm->ta)
		calls += (mm->rowwise && kp > 1 ? m :
			  jp * DIV_ROUND_UP(m, mm->rows)) * k;
	else
		calls += jp * kp * m;
	values += (mm->rowwise ? 1 : jp) * m * k;
	/* C, per step: read unless starting from zero, written */
	if (mm->rowwise)
		c = m * (mm->acc ? 2 : 1);
	else
		c = 2 * steps - (mm->acc ? 0 : jp * m);
	calls += c;
	values += c * (mm->rowwise ? n : mm->jn);
	return calls * 256 + values;
}

/*
 * Lay the MATMUL out in the SRAM of @s. If B fits, it is one tile (as if
 * staged whole). Else tiles of all k rows and as many columns as fit, or
 * tiles of whole rows of B, as many rows as fit, whichever moves less.
 * Where rows of C overlap, each step computes a whole row of C over all
 * tiles, keeping it in the SRAM; else C holds the partial sums between
 * tiles of rows. False if not even one column of B fits, which an SRAM of
 * at least %TRN_SIM_SRAM_MIN rules out.
 */
static bool trn_sim_mm_plan(struct trn_sim_mm *mm,
			    const struct trn_sim_scratch *s)
{
	size_t e = s->size / 4, jmax;
	u64 bytes = (u64)mm->n * 4;
	struct trn_sim_mm split = *mm;
	u32 lo, hi, mid;

	mm->rowwise = false;
	mm->kpanels = 1;
	jmax = trn_sim_mm_room(mm, e, mm->k, false);
	if (jmax >= mm->n) {
		mm->jpanels = 1;
		mm->jn = mm->n;
		goto layout;
	}
	/*
	 * Rows of C that overlap are computed whole, one after the other
	 * (rows all in one place can take tiles of columns in turn).
	 */
	if (!trn_sim_rows_apart(mm->ldc, mm->m, bytes, true)) {
		mm->rowwise = true;
		jmax = trn_sim_mm_room(mm, e, mm->k, true);
	}
	if (jmax)
		trn_sim_mm_split(mm->n, jmax, &mm->jpanels, &mm->jn);

	if (mm->k > 1) {
		/* The most rows of B with which whole rows fit. */
		split.rowwise = !trn_sim_rows_apart(mm->ldc, mm->m, bytes,
						    false);
		for (lo = 0, hi = mm->k - 1; lo < hi;) {
			mid = hi - (hi - lo) / 2;
			if (trn_sim_mm_room(&split, e, mid, split.rowwise) >=
			    mm->n)
				lo = mid;
			else
				hi = mid - 1;
		}
		if (lo) {
			trn_sim_mm_split(mm->k, lo, &split.kpanels, &split.kp);
			if (trn_sim_mm_room(&split, e, split.kp,
					    split.rowwise) < mm->n) {
				split.kpanels = DIV_ROUND_UP(mm->k, lo);
				trn_sim_mm_room(&split, e, lo, split.rowwise);
			}
			split.jpanels = 1;
			split.jn = mm->n;
			if (!jmax || trn_sim_mm_cost(&split) < trn_sim_mm_cost(mm))
				*mm = split;
			jmax = mm->jn;
		}
	}
	if (!jmax)
		return false;

layout:
	mm->tile = s->buf;
	mm->arow = mm->tile + (size_t)mm->kp * mm->jn;
	mm->group = mm->arow;
	mm->cbuf = mm->arow + mm->kp;
	if (mm->rows > 1) {
		mm->group = mm->cbuf;
		mm->cbuf += (size_t)mm->rows * mm->kp;
	}
	mm->tmp = mm->cbuf + (mm->rowwise ? mm->n : mm->jn);
	return true;
}

/* The SRAM holds tiles of this MATMUL from now on. */
static void trn_sim_mm_own(struct trn_sim_exec *x)
{
	struct trn_sim_scratch *s = x->scratch;

	if (s->owner == x->mm_id)
		return;
	s->owner = x->mm_id;
	s->b_tile = U64_MAX;
	s->a_group = U64_MAX;
}

/*
 * Stage tile @t of B, its rows widened to f32 whichever way B is stored,
 * unless the SRAM still holds it.
 */
static int trn_sim_mm_tile(struct trn_sim_exec *x, const struct trn_sim_mm *mm,
			   u64 t, long *budget)
{
	struct trn_sim_scratch *s = x->scratch;
	u32 j0 = (t / mm->kpanels) * mm->jn, jn = min(mm->jn, mm->n - j0);
	u32 k0 = (t % mm->kpanels) * mm->kp, kn = min(mm->kp, mm->k - k0);
	u32 kk, c0, cn, jj, tn, i;
	u32 *row;
	int ret;

	if (s->owner == x->mm_id && s->b_tile == t)
		return TRN_SIM_OP_DONE;
	trn_sim_mm_own(x);
	s->b_tile = U64_MAX;
	if (!mm->tb) {
		for (kk = 0; kk < kn; kk++) {
			ret = trn_sim_read_f32(x, mm->b + (k0 + kk) * mm->ldb +
					       (u64)j0 * mm->es,
					       mm->tile + (size_t)kk * jn, jn,
					       mm->bf16);
			if (ret != TRN_SIM_OP_DONE)
				return ret;
			cond_resched();
		}
		goto staged;
	}

	/*
	 * Stored as n rows of k: read pieces of a few of them (columns of
	 * B) into @tmp, then write them across the tile's rows, a short
	 * contiguous run per row, so that the multiply reads B row-wise.
	 */
	for (jj = 0; jj < jn; jj += tn) {
		tn = min(jn - jj, TRN_SIM_BT_COLS);
		for (c0 = 0; c0 < kn; c0 += cn) {
			cn = min(kn - c0, mm->tchunk);
			for (i = 0; i < tn; i++) {
				ret = trn_sim_read_f32(x, mm->b +
						       (u64)(j0 + jj + i) *
						       mm->ldb +
						       (u64)(k0 + c0) * mm->es,
						       mm->tmp + (size_t)i * cn,
						       cn, mm->bf16);
				if (ret != TRN_SIM_OP_DONE)
					return ret;
			}
			for (kk = 0; kk < cn; kk++) {
				row = mm->tile + (size_t)(c0 + kk) * jn + jj;
				for (i = 0; i < tn; i++)
					row[i] = mm->tmp[(size_t)i * cn + kk];
			}
		}
		cond_resched();
	}
staged:
	*budget -= (long)kn * jn * mm->es;
	s->b_tile = t;
	return TRN_SIM_OP_DONE;
}

/*
 * Transposed A: stage group @g, rows @g * rows on of A (columns of what is
 * stored), for k-tile @pk, unless the SRAM still holds it; one read per
 * stored row.
 */
static int trn_sim_mm_group(struct trn_sim_exec *x,
			    const struct trn_sim_mm *mm, u32 g, u32 pk,
			    long *budget)
{
	struct trn_sim_scratch *s = x->scratch;
	u32 i0 = g * mm->rows, rn = min(mm->rows, mm->m - i0);
	u32 k0 = pk * mm->kp, kn = min(mm->kp, mm->k - k0), kk;
	u64 tag = (u64)g * mm->kpanels + pk;
	int ret;

	if (s->owner == x->mm_id && s->a_group == tag)
		return TRN_SIM_OP_DONE;
	trn_sim_mm_own(x);
	s->a_group = U64_MAX;
	for (kk = 0; kk < kn; kk++) {
		ret = trn_sim_read_f32(x, mm->a + (k0 + kk) * mm->lda +
				       (u64)i0 * mm->es,
				       mm->group + (size_t)kk * mm->rows, rn,
				       mm->bf16);
		if (ret != TRN_SIM_OP_DONE)
			return ret;
	}
	*budget -= (long)kn * rn * mm->es;
	s->a_group = tag;
	return TRN_SIM_OP_DONE;
}

/* Load the part of row @i of A that k-tile @pk needs into @arow. */
static int trn_sim_mm_arow(struct trn_sim_exec *x, const struct trn_sim_mm *mm,
			   u32 i, u32 pk, long *budget)
{
	u32 kn = min(mm->kp, mm->k - pk * mm->kp), kk;
	int ret;

	if (!mm->ta)
		return trn_sim_read_f32(x, mm->a + i * mm->lda +
					(u64)pk * mm->kp * mm->es, mm->arow,
					kn, mm->bf16);
	ret = trn_sim_mm_group(x, mm, i / mm->rows, pk, budget);
	if (ret != TRN_SIM_OP_DONE || mm->rows == 1)
		return ret;
	for (kk = 0; kk < kn; kk++)
		mm->arow[kk] = mm->group[(size_t)kk * mm->rows + i % mm->rows];
	return TRN_SIM_OP_DONE;
}

/*
 * One step at x->cursor: row i of C, for the columns and the part of k of
 * one tile, or, if rowwise, over all tiles. Each C[i][j] goes on from what
 * C holds (at a later k-tile of a step of one tile), from +0.0, or from the
 * old C[i][j] with ACCUMULATE, and adds its products in order of k, in
 * f32, as if B were staged whole. @macs gets the multiply-adds done.
 */
static int trn_sim_mm_step(struct trn_sim_exec *x,
			   const struct trn_sim_mm *mm, u64 *macs,
			   long *budget)
{
	u32 i, pk, c0, cols, j0, jn, kn, k0, k1, step, *crow;
	u64 t, t0, t1, cva;
	int ret;

	if (mm->rowwise) {
		i = x->cursor;
		t0 = 0;
		t1 = (u64)mm->jpanels * mm->kpanels;
	} else {
		i = x->cursor % mm->m;
		t0 = x->cursor / mm->m;
		t1 = t0 + 1;
		/* B before A, as when B is staged whole. */
		ret = trn_sim_mm_tile(x, mm, t0, budget);
		if (ret != TRN_SIM_OP_DONE)
			return ret;
	}
	pk = t0 % mm->kpanels;
	c0 = (t0 / mm->kpanels) * mm->jn;
	cols = mm->rowwise ? mm->n : min(mm->jn, mm->n - c0);

	ret = trn_sim_mm_arow(x, mm, i, pk, budget);
	if (ret != TRN_SIM_OP_DONE)
		return ret;
	cva = mm->c + i * mm->ldc + (u64)c0 * 4;
	if (mm->acc || pk) {
		ret = trn_sim_read_f32(x, cva, mm->cbuf, cols, false);
		if (ret != TRN_SIM_OP_DONE)
			return ret;
	} else {
		memset(mm->cbuf, 0, (size_t)cols * 4);	/* +0.0f */
	}

	*macs = 0;
	for (t = t0; t < t1; t++) {
		ret = trn_sim_mm_tile(x, mm, t, budget);
		if (ret != TRN_SIM_OP_DONE)
			return ret;
		if (t != t0 && t % mm->kpanels != pk) {
			pk = t % mm->kpanels;
			ret = trn_sim_mm_arow(x, mm, i, pk, budget);
			if (ret != TRN_SIM_OP_DONE)
				return ret;
		}
		j0 = (t / mm->kpanels) * mm->jn;
		jn = min(mm->jn, mm->n - j0);
		kn = min(mm->kp, mm->k - pk * mm->kp);
		crow = mm->cbuf + (j0 - c0);
		step = max(TRN_SIM_FPU_MACS / jn, 1U);
		for (k0 = 0; k0 < kn; k0 = k1) {
			k1 = k0 + min(step, kn - k0);
			kernel_fpu_begin();
			trn_sim_math_matmul_row(crow, mm->arow, mm->tile, k0,
						k1, jn);
			kernel_fpu_end();
		}
		*macs += (u64)kn * jn;
	}
	return trn_sim_write_f32(x, cva, mm->cbuf, cols, false);
}

/*
 * MATMUL in steps of one row of C by one tile of B: all rows for the first
 * tile, then all rows for the next, the tiles of one set of columns in
 * order of k. B is staged a tile at a time, transposed A a group of rows
 * at a time; the SRAM keeps them between slices unless another execution
 * used it meanwhile, and then they are staged again. The results are
 * those of staging B whole (Documentation/isa.md).
 */
static int trn_sim_op_matmul(struct trn_sim_exec *x, u32 flags, long *budget)
{
	const struct trn_cmd_matmul *c = &x->cmd.matmul;
	struct trn_sim_mm mm = {
		.a = cmd_u64(c->a), .b = cmd_u64(c->b), .c = cmd_u64(c->c),
		.lda = cmd_u64(c->lda), .ldb = cmd_u64(c->ldb),
		.ldc = cmd_u64(c->ldc),
		.m = cmd_u32(c->m), .n = cmd_u32(c->n), .k = cmd_u32(c->k),
		.bf16 = flags & TRN_MATMUL_BF16,
		.ta = flags & TRN_MATMUL_TRANSPOSE_A,
		.tb = flags & TRN_MATMUL_TRANSPOSE_B,
		.acc = flags & TRN_MATMUL_ACCUMULATE,
	};
	u64 steps, macs;
	int ret;

	mm.es = mm.bf16 ? 2 : 4;
	if (!trn_sim_dims_ok(mm.m, mm.n) || !trn_sim_dims_ok(mm.k, 1) ||
	    (u64)mm.k * mm.n * 4 > TRN_ISA_MAX_MATMUL_B_BYTES)
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ARG);
	if (((mm.a | mm.lda | mm.b | mm.ldb) & (mm.es - 1)) ||
	    ((mm.c | mm.ldc) & 3))
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ALIGN);
	if (!kernel_fpu_available() || !x->scratch->buf ||
	    !trn_sim_mm_plan(&mm, x->scratch))
		return trn_sim_fail(x, DRM_TRN_STATUS_ABORTED);
	if (!x->mm_id)
		x->mm_id = ++x->scratch->last_id;

	steps = mm.rowwise ? mm.m : (u64)mm.jpanels * mm.kpanels * mm.m;
	while (x->cursor < steps) {
		ret = trn_sim_mm_step(x, &mm, &macs, budget);
		if (ret != TRN_SIM_OP_DONE)
			return ret;
		if (!trn_sim_next_row(x, steps, budget, macs))
			return TRN_SIM_OP_MORE;
	}
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
 * @u8: the first operand holds bytes (UNARY's %TRN_ELEM_SRC_U8)
 * @fold: one result per row (REDUCE) rather than one per value
 * @cost: budget units charged per column of a row
 * @fpu_elems: most values per kernel_fpu_begin() section
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
	bool u8;
	bool fold;
	u32 cost;
	u32 fpu_elems;
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
	u64 va;
	int ret;

	if (r->op > r->last_op || !trn_sim_dims_ok(r->rows, r->cols))
		return trn_sim_fail(x, DRM_TRN_STATUS_BAD_ARG);
	if (((r->src[0] | r->spitch[0]) & (r->u8 ? 0 : 3)) ||
	    ((r->src[1] | r->spitch[1]) & 3) ||
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
		va = r->src[0] + x->cursor * r->spitch[0];
		if (r->u8)
			ret = trn_sim_read_u8_f32(x, va, a, r->cols);
		else
			ret = trn_sim_read_f32(x, va, a, r->cols, false);
		if (ret == TRN_SIM_OP_DONE && r->bn)
			ret = trn_sim_read_f32(x, r->src[1] +
					       x->cursor * r->spitch[1],
					       b, r->bn, false);
		if (ret != TRN_SIM_OP_DONE)
			return ret;
		for (i = 0; i < r->cols; i += n) {
			n = min(r->cols - i, r->fpu_elems);
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
	u32 op = cmd_u32(c->op);
	/* ERF and the erf GELUs sum up to a hundred terms per value. */
	bool series = op >= TRN_UNARY_ERF;
	const struct trn_sim_rows r = {
		.dst = cmd_u64(c->dst),
		.dpitch = cmd_u64(c->dst_pitch),
		.src = { cmd_u64(c->src) },
		.spitch = { cmd_u64(c->src_pitch) },
		.rows = cmd_u32(c->rows),
		.cols = cmd_u32(c->cols),
		.op = op,
		.last_op = TRN_UNARY_GELU_ERF_GRAD,
		.bf16 = flags & TRN_ELEM_DST_BF16,
		.u8 = flags & TRN_ELEM_SRC_U8,
		.cost = series ? 8 * TRN_SIM_SERIES_COST : 8,
		.fpu_elems = series ? TRN_SIM_FPU_ELEMS / TRN_SIM_SERIES_COST :
				      TRN_SIM_FPU_ELEMS,
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
		.fpu_elems = TRN_SIM_FPU_ELEMS,
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
		.fpu_elems = TRN_SIM_FPU_ELEMS,
	};

	return trn_sim_rows_run(x, &r, trn_sim_reduce_fpu, budget);
}

/*
 * Fetch and decode the command at the frame's pc into x->cmd, checking
 * what the header alone decides: size, opcode, flags.
 */
static int trn_sim_fetch(struct trn_sim_exec *x, struct trn_sim_frame *f)
{
	u32 hdr, op, words, status;
	__le64 first;
	int ret;

	ret = x->ops->read(x, f->va + f->pc, &first, sizeof(first));
	if (ret)
		return trn_sim_mem_fail(x, ret);
	hdr = lower_32_bits(le64_to_cpu(first));
	op = TRN_CMD_OPCODE(hdr);
	words = TRN_CMD_WORDS(hdr);

	status = trn_isa_check_header(hdr, f->size - f->pc);
	if (status != DRM_TRN_STATUS_OK)
		return trn_sim_fail(x, status);

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
	x->mm_id = 0;
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
 * trn_sim_exec_release() - end an execution, finished or not
 * @x: the execution, finished or abandoned
 *
 * An execution holds no memory: its tiles in the SRAM are simply no longer
 * its own once another one is started.
 */
void trn_sim_exec_release(struct trn_sim_exec *x)
{
	x->mm_id = 0;
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
