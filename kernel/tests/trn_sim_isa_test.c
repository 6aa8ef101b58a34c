// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * KUnit tests of the simulated NeuronCore's command-stream interpreter
 * (ISA v1, Documentation/isa.md) on a flat test memory, without a device:
 * the decoder's errors, every operation on small inputs, the numerics that
 * the ISA fixes exactly (bf16 rounding, summation order, NaN and signed
 * zero rules), CALL nesting and the slicing of long commands; MATMULs
 * larger than the SRAM, tiled, against a reference that stages B whole,
 * also when they resume after another execution used the SRAM.
 *
 * Commands are built as arrays of 64-bit words in CPU order, which is the
 * device's little-endian order on the hosts KUnit runs on.
 */

#include <kunit/test.h>
#include <linux/fpu.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../trn_compat.h"
#include "../sim/trn_sim_isa.h"

#define BASE		0x100000000ULL
#define MEM_SIZE	0x20000U
#define CLOCK_NS	123456789ULL

/* f32 bit patterns. */
#define F_ZERO		0x00000000U
#define F_NZERO		0x80000000U
#define F_ONE		0x3f800000U
#define F_TWO		0x40000000U
#define F_NTWO		0xc0000000U
#define F_FOUR		0x40800000U
#define F_HALF		0x3f000000U
#define F_QUARTER	0x3e800000U
#define F_INF		0x7f800000U
#define F_NINF		0xff800000U
#define F_SNAN		0x7fa00000U	/* signalling */
#define F_QNAN		0x7fc00000U

struct isa_env {
	struct trn_sim_exec x;
	struct trn_sim_scratch scratch;
	u64 sems[TRN_NUM_SEMAPHORES];
	u8 *mem;
	size_t size;
	u64 hole;
};

static struct isa_env *to_env(struct trn_sim_exec *x)
{
	return container_of(x, struct isa_env, x);
}

/*
 * [BASE, BASE + size) is mapped; everything else faults. The page at hole,
 * if set, is mapped but has no memory behind it.
 */
static int flat_check(struct trn_sim_exec *x, u64 va, size_t len)
{
	struct isa_env *env = to_env(x);
	size_t size = env->size;

	if (env->hole && va < env->hole + PAGE_SIZE && va + len > env->hole)
		return -ENOMEM;
	if (va < BASE) {
		x->fault_va = va;
		return -EFAULT;
	}
	if (va - BASE > size || len > size - (va - BASE)) {
		x->fault_va = max_t(u64, va, BASE + size);
		return -EFAULT;
	}
	return 0;
}

static int flat_read(struct trn_sim_exec *x, u64 va, void *buf, size_t len)
{
	int ret = flat_check(x, va, len);

	if (!ret)
		memcpy(buf, to_env(x)->mem + (va - BASE), len);
	return ret;
}

static int flat_write(struct trn_sim_exec *x, u64 va, const void *buf,
		      size_t len)
{
	int ret = flat_check(x, va, len);

	if (!ret)
		memcpy(to_env(x)->mem + (va - BASE), buf, len);
	return ret;
}

static u64 flat_clock(struct trn_sim_exec *x)
{
	return CLOCK_NS;
}

static const struct trn_sim_exec_ops flat_ops = {
	.read = flat_read,
	.write = flat_write,
	.clock = flat_clock,
};

static void isa_env_free(void *data)
{
	struct isa_env *env = data;

	trn_sim_exec_release(&env->x);
	trn_sim_exec_fini(&env->x);
	trn_sim_scratch_free(&env->scratch);
	kvfree(env->mem);
}

/*
 * A job's world: @size bytes of memory at BASE and an SRAM of @sram bytes,
 * or of the device's default size if 0, prepared as the engine prepares a
 * ring's.
 */
static struct isa_env *isa_env_new_sized(struct kunit *test, size_t size,
					 size_t sram)
{
	struct isa_env *env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, env);
	env->mem = kvzalloc(size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, env->mem);
	env->size = size;
	env->x.ops = &flat_ops;
	env->x.sems = env->sems;
	env->x.scratch = &env->scratch;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, isa_env_free,
							env), 0);
	if (sram)
		KUNIT_ASSERT_EQ(test, trn_sim_scratch_init_size(&env->scratch,
								sram), 0);
	else
		KUNIT_ASSERT_EQ(test, trn_sim_scratch_init(&env->scratch), 0);
	KUNIT_ASSERT_EQ(test, trn_sim_exec_init(&env->x), 0);
	return env;
}

static struct isa_env *isa_env_new(struct kunit *test)
{
	return isa_env_new_sized(test, MEM_SIZE, 0);
}

static void *at(struct isa_env *env, u64 va)
{
	return env->mem + (va - BASE);
}

static u32 get32(struct isa_env *env, u64 va)
{
	u32 v;

	memcpy(&v, at(env, va), sizeof(v));
	return v;
}

static void put32s(struct isa_env *env, u64 va, const u32 *v, size_t n)
{
	memcpy(at(env, va), v, n * sizeof(*v));
}

/*
 * Run a job to its end in slices of @slice budget units, at most @max of
 * them; returns how many it took.
 */
static int run_slices(struct kunit *test, struct isa_env *env, u64 va,
		      u64 size, long slice, int max)
{
	enum trn_sim_run run;
	int slices = 0;
	long budget;

	trn_sim_exec_start(&env->x, va, size);
	do {
		budget = slice;
		run = trn_sim_exec_run(&env->x, &budget);
		slices++;
	} while (run == TRN_SIM_RUN_YIELD && slices < max);
	KUNIT_EXPECT_EQ(test, run, TRN_SIM_RUN_DONE);
	return slices;
}

/* Run a job to its end with the normal slice budget; returns its status. */
static u32 run_job(struct kunit *test, struct isa_env *env, u64 va, u64 size)
{
	run_slices(test, env, va, size, TRN_SIM_SLICE_BUDGET, 10000);
	return env->x.status;
}

/* Commands as 64-bit words. */
#define HDR(op, flags, words)	((u64)TRN_CMD_HEADER(op, flags, words))
#define HI(v)			((u64)(v) << 32)
#define NOP1			HDR(TRN_OP_NOP, 0, 1)

/* Append @n words at *@va. */
static void emit(struct isa_env *env, u64 *va, const u64 *w, size_t n)
{
	memcpy(at(env, *va), w, n * 8);
	*va += n * 8;
}

struct decode_case {
	const char *name;
	u64 cmd[8];
	u32 words;	/* words of @cmd in the buffer */
	u32 status;
	u64 fault_va;
};

#define D	(BASE + 0x1000)	/* a mapped, aligned data address */

static const struct decode_case decode_cases[] = {
	{ "size_zero", { HDR(TRN_OP_WRITE, 0, 0) }, 1,
	  DRM_TRN_STATUS_BAD_SIZE },
	{ "past_end", { HDR(TRN_OP_WRITE, 0, 3), D }, 2,
	  DRM_TRN_STATUS_BAD_SIZE },
	{ "nop_past_end", { HDR(TRN_OP_NOP, 0, 2) }, 1,
	  DRM_TRN_STATUS_BAD_SIZE },
	{ "unknown_opcode", { HDR(0x08, 0, 1) }, 1,
	  DRM_TRN_STATUS_BAD_OPCODE },
	{ "opcode_ff", { HDR(0xff, 0, 1) }, 1, DRM_TRN_STATUS_BAD_OPCODE },
	{ "write_short", { HDR(TRN_OP_WRITE, 0, 2), D }, 2,
	  DRM_TRN_STATUS_BAD_SIZE },
	{ "matmul_long", { HDR(TRN_OP_MATMUL, 0, 9) }, 8 + 1,
	  DRM_TRN_STATUS_BAD_SIZE },
	{ "unknown_flag", { HDR(TRN_OP_WRITE, 2, 3), D, 0 }, 3,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "nop_flag", { HDR(TRN_OP_NOP, 1, 1) }, 1, DRM_TRN_STATUS_BAD_ARG },
	{ "write_pad", { HDR(TRN_OP_WRITE, 0, 3) | HI(1), D, 0 }, 3,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "write32_high_bits", { HDR(TRN_OP_WRITE, 0, 3), D, HI(1) }, 3,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "write32_misaligned", { HDR(TRN_OP_WRITE, 0, 3), D + 2, 0 }, 3,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "write64_misaligned",
	  { HDR(TRN_OP_WRITE, TRN_WRITE_64, 3), D + 4, 0 }, 3,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "write_fault", { HDR(TRN_OP_WRITE, 0, 3), 0x1000, 0 }, 3,
	  DRM_TRN_STATUS_MMU_FAULT, 0x1000 },
	{ "fill_size_misaligned", { HDR(TRN_OP_FILL, 0, 3), D, 6 }, 3,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "fill_dst_misaligned", { HDR(TRN_OP_FILL, 0, 3), D + 1, 4 }, 3,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "fill_past_memory",
	  { HDR(TRN_OP_FILL, 0, 3), BASE + MEM_SIZE - 4, 8 }, 3,
	  DRM_TRN_STATUS_MMU_FAULT, BASE + MEM_SIZE },
	{ "copy_pad", { HDR(TRN_OP_COPY, 0, 7) | HI(1), D, D, 1, 1 }, 7,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "copy_src_fault", { HDR(TRN_OP_COPY, 0, 7), D, 0x2000, 4, 1 }, 7,
	  DRM_TRN_STATUS_MMU_FAULT, 0x2000 },
	{ "timestamp_misaligned", { HDR(TRN_OP_TIMESTAMP, 0, 2), D + 4 }, 2,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "sem_out_of_range",
	  { HDR(TRN_OP_SEM_SIGNAL, 0, 2) | HI(TRN_NUM_SEMAPHORES), 1 }, 2,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "call_misaligned", { HDR(TRN_OP_CALL, 0, 3), D + 4, 8 }, 3,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "call_size_misaligned", { HDR(TRN_OP_CALL, 0, 3), D, 12 }, 3,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "call_size_zero", { HDR(TRN_OP_CALL, 0, 3), D, 0 }, 3,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "call_pad", { HDR(TRN_OP_CALL, 0, 3) | HI(1), D, 8 }, 3,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "matmul_m_zero",
	  { HDR(TRN_OP_MATMUL, 0, 8), 1 | HI(1), D, D, D, 4, 4, 4 }, 8,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "matmul_k_too_big",
	  { HDR(TRN_OP_MATMUL, 0, 8) | HI(1), 1 | HI(TRN_ISA_MAX_DIM + 1),
	    D, D, D, 4, 4, 4 }, 8, DRM_TRN_STATUS_BAD_ARG },
	{ "matmul_b_too_big",
	  { HDR(TRN_OP_MATMUL, 0, 8) | HI(1), 4097 | HI(4096),
	    D, D, D, 4, 4, 4 }, 8, DRM_TRN_STATUS_BAD_ARG },
	{ "matmul_bf16_a_misaligned",
	  { HDR(TRN_OP_MATMUL, TRN_MATMUL_BF16, 8) | HI(1), 1 | HI(1),
	    D + 1, D, D, 2, 2, 4 }, 8, DRM_TRN_STATUS_BAD_ALIGN },
	{ "matmul_ldc_misaligned",
	  { HDR(TRN_OP_MATMUL, 0, 8) | HI(1), 1 | HI(1),
	    D, D, D, 4, 4, 2 }, 8, DRM_TRN_STATUS_BAD_ALIGN },
	{ "matmul_flag",
	  { HDR(TRN_OP_MATMUL, 0x10, 8) | HI(1), 1 | HI(1), D, D, D, 4, 4, 4 },
	  8, DRM_TRN_STATUS_BAD_ARG },
	{ "matmul_transposed_b_too_big",
	  { HDR(TRN_OP_MATMUL, TRN_MATMUL_BF16 | TRN_MATMUL_TRANSPOSE_B, 8) |
	    HI(1), 4097 | HI(4096), D, D, D, 2, 2, 4 }, 8,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "matmul_transposed_lda_misaligned",
	  { HDR(TRN_OP_MATMUL, TRN_MATMUL_BF16 | TRN_MATMUL_TRANSPOSE_A, 8) |
	    HI(1), 1 | HI(1), D, D, D, 3, 2, 4 }, 8,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "unary_bad_op",
	  { HDR(TRN_OP_UNARY, 0, 6) | HI(TRN_UNARY_GELU_ERF_GRAD + 1),
	    1 | HI(1), D, D, 4, 4 }, 6,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "unary_cols_zero",
	  { HDR(TRN_OP_UNARY, 0, 6), 1, D, D, 4, 4 }, 6,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "unary_f32_dst_misaligned",
	  { HDR(TRN_OP_UNARY, 0, 6), 1 | HI(1), D + 2, D, 4, 4 }, 6,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "unary_src_pitch_misaligned",
	  { HDR(TRN_OP_UNARY, 0, 6), 1 | HI(1), D, D, 4, 6 }, 6,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "unary_u8_dst_misaligned",
	  { HDR(TRN_OP_UNARY, TRN_ELEM_SRC_U8, 6), 1 | HI(1), D + 2, D + 1,
	    4, 1 }, 6, DRM_TRN_STATUS_BAD_ALIGN },
	{ "unary_u8_bf16_dst_odd",
	  { HDR(TRN_OP_UNARY, TRN_ELEM_SRC_U8 | TRN_ELEM_DST_BF16, 6),
	    1 | HI(1), D + 1, D, 2, 1 }, 6, DRM_TRN_STATUS_BAD_ALIGN },
	{ "unary_flag",
	  { HDR(TRN_OP_UNARY, 0x8, 6), 1 | HI(1), D, D, 4, 4 }, 6,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "binary_src_u8",
	  { HDR(TRN_OP_BINARY, TRN_ELEM_SRC_U8, 8), 1 | HI(1), D, D, D,
	    4, 4, 4 }, 8, DRM_TRN_STATUS_BAD_ARG },
	{ "binary_bad_op",
	  { HDR(TRN_OP_BINARY, 0, 8) | HI(6), 1 | HI(1), D, D, D, 4, 4, 4 },
	  8, DRM_TRN_STATUS_BAD_ARG },
	{ "binary_b_misaligned",
	  { HDR(TRN_OP_BINARY, 0, 8), 1 | HI(1), D, D, D + 2, 4, 4, 4 }, 8,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "reduce_flag",
	  { HDR(TRN_OP_REDUCE, TRN_ELEM_DST_BF16, 5), 1 | HI(1), D, D, 4 }, 5,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "reduce_bad_op",
	  { HDR(TRN_OP_REDUCE, 0, 5) | HI(2), 1 | HI(1), D, D, 4 }, 5,
	  DRM_TRN_STATUS_BAD_ARG },
	{ "reduce_dims_too_big",
	  { HDR(TRN_OP_REDUCE, 0, 5), (TRN_ISA_MAX_DIM + 1) | HI(1), D, D, 4 },
	  5, DRM_TRN_STATUS_BAD_ARG },
	{ "reduce_dst_misaligned",
	  { HDR(TRN_OP_REDUCE, 0, 5), 1 | HI(1), D + 2, D, 4 }, 5,
	  DRM_TRN_STATUS_BAD_ALIGN },
	{ "binary_bf16_dst_odd",
	  { HDR(TRN_OP_BINARY, TRN_ELEM_DST_BF16, 8), 1 | HI(1), D + 1, D, D,
	    2, 4, 4 }, 8, DRM_TRN_STATUS_BAD_ALIGN },
	/* Faults name the first address that failed, operand by operand. */
	{ "unary_src_fault",
	  { HDR(TRN_OP_UNARY, 0, 6), 1 | HI(1), D, 0x3000, 4, 4 }, 6,
	  DRM_TRN_STATUS_MMU_FAULT, 0x3000 },
	{ "unary_u8_src_fault",
	  { HDR(TRN_OP_UNARY, TRN_ELEM_SRC_U8, 6), 2 | HI(3), D, 0x3001, 12,
	    1 }, 6, DRM_TRN_STATUS_MMU_FAULT, 0x3001 },
	{ "unary_u8_last_byte_fault",
	  { HDR(TRN_OP_UNARY, TRN_ELEM_SRC_U8, 6), 1 | HI(3),
	    D, BASE + MEM_SIZE - 2, 12, 1 }, 6, DRM_TRN_STATUS_MMU_FAULT,
	  BASE + MEM_SIZE },
	{ "unary_second_row_fault",
	  { HDR(TRN_OP_UNARY, 0, 6), 2 | HI(1), D, BASE + MEM_SIZE - 4, 4, 4 },
	  6, DRM_TRN_STATUS_MMU_FAULT, BASE + MEM_SIZE },
	{ "binary_b_fault",
	  { HDR(TRN_OP_BINARY, 0, 8), 1 | HI(1), D, D, 0x4000, 4, 4, 4 }, 8,
	  DRM_TRN_STATUS_MMU_FAULT, 0x4000 },
	{ "binary_dst_fault",
	  { HDR(TRN_OP_BINARY, 0, 8), 1 | HI(1), 0x5000, D, D, 4, 4, 4 }, 8,
	  DRM_TRN_STATUS_MMU_FAULT, 0x5000 },
	{ "reduce_dst_fault",
	  { HDR(TRN_OP_REDUCE, 0, 5), 1 | HI(1), 0x6000, D, 4 }, 5,
	  DRM_TRN_STATUS_MMU_FAULT, 0x6000 },
	{ "matmul_accumulate_c_fault",
	  { HDR(TRN_OP_MATMUL, TRN_MATMUL_ACCUMULATE, 8) | HI(1), 1 | HI(1),
	    D, D, 0x7000, 4, 4, 4 }, 8, DRM_TRN_STATUS_MMU_FAULT, 0x7000 },
};

KUNIT_ARRAY_PARAM_DESC(decode, decode_cases, name);

/* A NOP, then the case's command: the error is at offset 8. */
static void decode_errors(struct kunit *test)
{
	const struct decode_case *c = test->param_value;
	struct isa_env *env = isa_env_new(test);
	u64 nop = NOP1, va = BASE;

	emit(env, &va, &nop, 1);
	emit(env, &va, c->cmd, min_t(u32, c->words, ARRAY_SIZE(c->cmd)));
	va += (c->words > ARRAY_SIZE(c->cmd)) ? 8 : 0;

	KUNIT_EXPECT_EQ(test, run_job(test, env, BASE, va - BASE), c->status);
	KUNIT_EXPECT_EQ(test, env->x.error_offset, 8);
	KUNIT_EXPECT_EQ(test, env->x.error_cmd_va, BASE + 8);
	KUNIT_EXPECT_EQ(test, env->x.fault_va, c->fault_va);
}

static void job_buffer_checked(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 nop = NOP1, va = BASE;

	emit(env, &va, &nop, 1);
	KUNIT_EXPECT_EQ(test, run_job(test, env, BASE + 4, 8),
			DRM_TRN_STATUS_BAD_ALIGN);
	KUNIT_EXPECT_EQ(test, env->x.error_cmd_va, BASE + 4);
	KUNIT_EXPECT_EQ(test, run_job(test, env, BASE, 0),
			DRM_TRN_STATUS_BAD_ALIGN);
	KUNIT_EXPECT_EQ(test, run_job(test, env, BASE, 12),
			DRM_TRN_STATUS_BAD_ALIGN);
	/* The command buffer itself faults: reported at offset 0. */
	KUNIT_EXPECT_EQ(test, run_job(test, env, 0x3000, 8),
			DRM_TRN_STATUS_MMU_FAULT);
	KUNIT_EXPECT_EQ(test, env->x.fault_va, 0x3000);
	KUNIT_EXPECT_EQ(test, env->x.error_offset, 0);
	KUNIT_EXPECT_EQ(test, run_job(test, env, BASE, 8), DRM_TRN_STATUS_OK);
}

static void write_fill_copy_timestamp(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 va = BASE, d = BASE + 0x1000, i;
	const u64 cmds[] = {
		HDR(TRN_OP_NOP, 0, 3), 0xdead, 0xbeef,	/* body ignored */
		HDR(TRN_OP_WRITE, 0, 3), d, 0x11223344,
		HDR(TRN_OP_WRITE, TRN_WRITE_64, 3), d + 8, 0x0102030405060708,
		HDR(TRN_OP_FILL, 0, 3) | HI(0xa5a5a5a5), d + 0x100, 0x40,
		/* 3 rows of 5 bytes, source pitch 16, destination pitch 8 */
		HDR(TRN_OP_COPY, 0, 7), d + 0x200, d + 0x300, 5, 3, 8, 16,
		HDR(TRN_OP_COPY, 0, 7), d + 0x400, d + 0x300, 0, 3, 8, 16,
		HDR(TRN_OP_TIMESTAMP, 0, 2), d + 0x500,
	};

	for (i = 0; i < 48; i++)
		*(u8 *)at(env, d + 0x300 + i) = i;
	emit(env, &va, cmds, ARRAY_SIZE(cmds));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	KUNIT_EXPECT_EQ(test, get32(env, d), 0x11223344);
	KUNIT_EXPECT_EQ(test, get32(env, d + 4), 0);
	KUNIT_EXPECT_EQ(test, *(u64 *)at(env, d + 8), 0x0102030405060708);
	for (i = 0; i < 0x40; i += 4)
		KUNIT_EXPECT_EQ(test, get32(env, d + 0x100 + i), 0xa5a5a5a5);
	KUNIT_EXPECT_EQ(test, get32(env, d + 0x140), 0);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, memcmp(at(env, d + 0x200 + i * 8),
					     at(env, d + 0x300 + i * 16), 5), 0);
		KUNIT_EXPECT_EQ(test, *(u8 *)at(env, d + 0x200 + i * 8 + 5), 0);
	}
	KUNIT_EXPECT_EQ(test, *(u64 *)at(env, d + 0x400), 0);
	KUNIT_EXPECT_EQ(test, *(u64 *)at(env, d + 0x500), CLOCK_NS);
	KUNIT_EXPECT_EQ(test, env->x.retired, 7);
}

static void semaphores(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 va = BASE, d = BASE + 0x1000;
	const u64 cmds[] = {
		HDR(TRN_OP_SEM_SIGNAL, 0, 2) | HI(7), U64_MAX,
		HDR(TRN_OP_SEM_SIGNAL, 0, 2) | HI(7), 2,	/* wraps to 1 */
		HDR(TRN_OP_SEM_WAIT, 0, 2) | HI(7), 1,
		HDR(TRN_OP_SEM_WAIT, 0, 2) | HI(255), 5,
		HDR(TRN_OP_WRITE, 0, 3), d, 1,
	};
	long budget = TRN_SIM_SLICE_BUDGET;

	emit(env, &va, cmds, ARRAY_SIZE(cmds));
	trn_sim_exec_start(&env->x, BASE, va - BASE);
	KUNIT_EXPECT_EQ(test, trn_sim_exec_run(&env->x, &budget),
			TRN_SIM_RUN_BLOCKED);
	KUNIT_EXPECT_EQ(test, env->sems[7], 1);
	KUNIT_EXPECT_EQ(test, env->x.retired, 3);
	/* Still blocked without a change; not after one. */
	env->sems[255] = 4;
	KUNIT_EXPECT_EQ(test, trn_sim_exec_run(&env->x, &budget),
			TRN_SIM_RUN_BLOCKED);
	env->sems[255] = 5;
	KUNIT_EXPECT_EQ(test, trn_sim_exec_run(&env->x, &budget),
			TRN_SIM_RUN_DONE);
	KUNIT_EXPECT_EQ(test, env->x.status, DRM_TRN_STATUS_OK);
	KUNIT_EXPECT_EQ(test, get32(env, d), 1);
}

/*
 * Buffer i (at BASE + i * 0x100) writes i + 1 to D + 4 i, then calls
 * buffer i + 1 up to @levels; the last one holds @last.
 */
static u64 call_chain(struct isa_env *env, int levels, const u64 *last,
		      size_t nlast)
{
	int i;

	for (i = 0; i < levels; i++) {
		u64 va = BASE + i * 0x100;
		const u64 cmds[] = {
			HDR(TRN_OP_WRITE, 0, 3), D + 4 * i, i + 1,
			HDR(TRN_OP_CALL, 0, 3), BASE + (i + 1) * 0x100,
			i + 1 < levels ? 48 : nlast * 8,
		};

		emit(env, &va, cmds, ARRAY_SIZE(cmds));
	}
	emit(env, &(u64){ BASE + levels * 0x100 }, last, nlast);
	return 48;
}

static void call_nesting(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	const u64 leaf[] = { HDR(TRN_OP_WRITE, 0, 3), D + 0x80, 0x77 };
	u64 size;

	/* Top level plus TRN_ISA_MAX_CALL_DEPTH nested CALLs: fine. */
	size = call_chain(env, TRN_ISA_MAX_CALL_DEPTH, leaf, ARRAY_SIZE(leaf));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, size),
			DRM_TRN_STATUS_OK);
	KUNIT_EXPECT_EQ(test, get32(env, D + 4 * (TRN_ISA_MAX_CALL_DEPTH - 1)),
			TRN_ISA_MAX_CALL_DEPTH);
	KUNIT_EXPECT_EQ(test, get32(env, D + 0x80), 0x77);
}

static void call_too_deep(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	const u64 leaf[] = { NOP1 };
	u64 size, last = BASE + TRN_ISA_MAX_CALL_DEPTH * 0x100;

	size = call_chain(env, TRN_ISA_MAX_CALL_DEPTH + 1, leaf, 1);
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, size),
			DRM_TRN_STATUS_CALL_DEPTH);
	/* The CALL of the deepest buffer, after its WRITE. */
	KUNIT_EXPECT_EQ(test, env->x.error_offset, 24);
	KUNIT_EXPECT_EQ(test, env->x.error_cmd_va, last + 24);
	KUNIT_EXPECT_EQ(test, get32(env, D + 4 * TRN_ISA_MAX_CALL_DEPTH),
			TRN_ISA_MAX_CALL_DEPTH + 1);
}

static void error_in_called_buffer(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	const u64 callee[] = { NOP1, NOP1, HDR(0x42, 0, 1) };
	const u64 top[] = {
		NOP1, HDR(TRN_OP_CALL, 0, 3), BASE + 0x800, sizeof(callee),
		HDR(TRN_OP_WRITE, 0, 3), D, 1,
	};
	u64 va = BASE;

	emit(env, &va, top, ARRAY_SIZE(top));
	va = BASE + 0x800;
	emit(env, &va, callee, ARRAY_SIZE(callee));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, sizeof(top)),
			DRM_TRN_STATUS_BAD_OPCODE);
	KUNIT_EXPECT_EQ(test, env->x.error_offset, 16);
	KUNIT_EXPECT_EQ(test, env->x.error_cmd_va, BASE + 0x800 + 16);
	KUNIT_EXPECT_EQ(test, get32(env, D), 0);	/* never reached */
}

static void matmul_f32(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 a = BASE + 0x1000, b = BASE + 0x2000, c = BASE + 0x3000;
	/* A 2x3 (pitch 16 bytes), B 3x2 (pitch 12 bytes), small integers. */
	const u32 arow0[] = { 0x3f800000, 0x40000000, 0x40400000 }; /* 1 2 3 */
	const u32 arow1[] = { 0x40800000, 0x40a00000, 0x40c00000 }; /* 4 5 6 */
	const u32 brows[] = {
		0x40e00000, 0x41000000,		/* 7 8 */
		0x41100000, 0x41200000,		/* 9 10 */
		0x41300000, 0x41400000,		/* 11 12 */
	};
	u64 va = BASE;
	const u64 cmds[] = {
		HDR(TRN_OP_MATMUL, 0, 8) | HI(2), 2 | HI(3), a, b, c, 16, 8, 8,
		HDR(TRN_OP_MATMUL, TRN_MATMUL_ACCUMULATE, 8) | HI(2), 2 | HI(3),
		a, b, c + 0x100, 16, 8, 8,
	};
	const u32 init[] = { F_ONE, F_ONE, F_ONE, F_ONE };

	put32s(env, a, arow0, 3);
	put32s(env, a + 16, arow1, 3);
	put32s(env, b, brows, 2);
	put32s(env, b + 8, brows + 2, 2);
	put32s(env, b + 16, brows + 4, 2);
	put32s(env, c + 0x100, init, 4);
	emit(env, &va, cmds, ARRAY_SIZE(cmds));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	/* [58 64; 139 154], then + 1 each */
	KUNIT_EXPECT_EQ(test, get32(env, c), 0x42680000);
	KUNIT_EXPECT_EQ(test, get32(env, c + 4), 0x42800000);
	KUNIT_EXPECT_EQ(test, get32(env, c + 8), 0x430b0000);
	KUNIT_EXPECT_EQ(test, get32(env, c + 12), 0x431a0000);
	KUNIT_EXPECT_EQ(test, get32(env, c + 0x100), 0x426c0000);
	KUNIT_EXPECT_EQ(test, get32(env, c + 0x10c), 0x431b0000);
}

static void matmul_order_and_bf16(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 a = BASE + 0x1000, b = BASE + 0x2000, c = BASE + 0x3000;
	/* 1x4 times 4x1 in f32: 1e8 * 1 + 1 * 1 + -1e8 * 1 + 1 * 1 = 1. */
	const u32 av[] = { 0x4cbebc20, F_ONE, 0xccbebc20, F_ONE };
	const u32 bv[] = { F_ONE, F_ONE, F_ONE, F_ONE };
	/* bf16: A = [1.5, -2], B = [[2], [0.5]] -> 2. */
	const u16 ah[] = { 0x3fc0, 0xc000 }, bh[] = { 0x4000, 0x3f00 };
	u64 va = BASE;
	const u64 cmds[] = {
		HDR(TRN_OP_MATMUL, 0, 8) | HI(1), 1 | HI(4), a, b, c, 16, 4, 4,
		HDR(TRN_OP_MATMUL, TRN_MATMUL_BF16, 8) | HI(1), 1 | HI(2),
		a + 0x100, b + 0x100, c + 8, 4, 2, 4,
	};

	put32s(env, a, av, 4);
	put32s(env, b, bv, 4);
	memcpy(at(env, a + 0x100), ah, sizeof(ah));
	memcpy(at(env, b + 0x100), bh, sizeof(bh));
	emit(env, &va, cmds, ARRAY_SIZE(cmds));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	KUNIT_EXPECT_EQ(test, get32(env, c), F_ONE);
	KUNIT_EXPECT_EQ(test, get32(env, c + 8), F_TWO);
}

/* f32 bits of an integer of magnitude below 2^24. */
static u32 int_f32(int v)
{
	u32 sign = v < 0 ? F_NZERO : 0, u = v < 0 ? -v : v, e;

	if (!u)
		return 0;
	e = fls(u) - 1;
	return sign | (e + 127) << 23 | ((u << (23 - e)) & 0x7fffff);
}

/* Store f32 bits @v at @va, as f32 or as bf16 (exact for small integers). */
static void put_elem(struct isa_env *env, u64 va, u32 v, bool bf16)
{
	u16 h = v >> 16;

	if (bf16)
		memcpy(at(env, va), &h, sizeof(h));
	else
		memcpy(at(env, va), &v, sizeof(v));
}

#define MT_M	5
#define MT_N	21	/* more than one batch of staged B^T columns */
#define MT_K	7

static int mt_a(u32 i, u32 p)
{
	return (int)((i + 2 * p) % 5) - 2;
}

static int mt_b(u32 p, u32 j)
{
	return (int)((3 * p + j) % 7) - 3;
}

/*
 * Every combination of TRANSPOSE_A, TRANSPOSE_B, BF16 and ACCUMULATE on
 * small integers (exact in any order), operands stored with padded
 * pitches in the layout the flags name.
 */
static void matmul_transpose(struct kunit *test)
{
	u64 a = BASE + 0x1000, b = BASE + 0x2000, c = BASE + 0x4000;
	u32 v, i, j, p, flags, es, lda, ldb, ldc = MT_N * 4 + 12;
	int want;

	for (v = 0; v < 16; v++) {
		struct isa_env *env = isa_env_new(test);
		bool ta = v & 1, tb = v & 2, bf16 = v & 4, acc = v & 8;
		u64 va = BASE;
		u64 cmd[8];

		flags = (ta ? TRN_MATMUL_TRANSPOSE_A : 0) |
			(tb ? TRN_MATMUL_TRANSPOSE_B : 0) |
			(bf16 ? TRN_MATMUL_BF16 : 0) |
			(acc ? TRN_MATMUL_ACCUMULATE : 0);
		es = bf16 ? 2 : 4;
		lda = ((ta ? MT_M : MT_K) + 3) * es;
		ldb = ((tb ? MT_K : MT_N) + 1) * es;
		for (i = 0; i < MT_M; i++)
			for (p = 0; p < MT_K; p++)
				put_elem(env, ta ? a + p * lda + i * es :
						   a + i * lda + p * es,
					 int_f32(mt_a(i, p)), bf16);
		for (p = 0; p < MT_K; p++)
			for (j = 0; j < MT_N; j++)
				put_elem(env, tb ? b + j * ldb + p * es :
						   b + p * ldb + j * es,
					 int_f32(mt_b(p, j)), bf16);
		for (i = 0; i < MT_M; i++)
			for (j = 0; j < MT_N; j++)
				put_elem(env, c + i * ldc + j * 4,
					 int_f32(i + j), false);
		cmd[0] = HDR(TRN_OP_MATMUL, flags, 8) | HI(MT_M);
		cmd[1] = MT_N | HI(MT_K);
		cmd[2] = a;
		cmd[3] = b;
		cmd[4] = c;
		cmd[5] = lda;
		cmd[6] = ldb;
		cmd[7] = ldc;
		emit(env, &va, cmd, ARRAY_SIZE(cmd));
		KUNIT_ASSERT_EQ_MSG(test, run_job(test, env, BASE, va - BASE),
				    DRM_TRN_STATUS_OK, "flags %#x", flags);
		for (i = 0; i < MT_M; i++)
			for (j = 0; j < MT_N; j++) {
				want = acc ? i + j : 0;
				for (p = 0; p < MT_K; p++)
					want += mt_a(i, p) * mt_b(p, j);
				KUNIT_EXPECT_EQ_MSG(test,
						    get32(env, c + i * ldc + j * 4),
						    int_f32(want),
						    "flags %#x C[%u][%u]", flags,
						    i, j);
			}
	}
}

/*
 * A transposed with k = TRN_ISA_MAX_DIM is staged a row at a time (a
 * group of rows takes at most an eighth of the SRAM). With a budget of
 * one row per slice, every row runs in a later slice. lda 0 makes
 * A[i][p] = s[i] for every p, and ldb 0 B[p][j] = t[j], so that
 * C[i][j] = k * s[i] * t[j] exactly.
 */
static void matmul_transpose_a_slices(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 a = BASE + 0x1000, b = BASE + 0x2000, c = BASE + 0x3000;
	const u32 s[] = { F_ONE, F_TWO, F_NTWO, F_HALF, F_FOUR, F_QUARTER };
	const u32 t[] = { F_ONE, F_NTWO };
	/* 65536 * s[i] * t[j] */
	const u32 want[][2] = {
		{ 0x47800000, 0xc8000000 }, { 0x48000000, 0xc8800000 },
		{ 0xc8000000, 0x48800000 }, { 0x47000000, 0xc7800000 },
		{ 0x48800000, 0xc9000000 }, { 0x46800000, 0xc7000000 },
	};
	u64 va = BASE;
	const u64 cmds[] = {
		HDR(TRN_OP_MATMUL, TRN_MATMUL_TRANSPOSE_A, 8) | HI(6),
		2 | HI(TRN_ISA_MAX_DIM), a, b, c, 0, 0, 8,
		HDR(TRN_OP_WRITE, 0, 3), c + 0x100, 9,
	};
	int slices;
	u32 i;

	put32s(env, a, s, ARRAY_SIZE(s));
	put32s(env, b, t, ARRAY_SIZE(t));
	emit(env, &va, cmds, ARRAY_SIZE(cmds));
	slices = run_slices(test, env, BASE, va - BASE, 100, 100);
	KUNIT_EXPECT_GE(test, slices, 6);
	KUNIT_ASSERT_EQ(test, env->x.status, DRM_TRN_STATUS_OK);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		KUNIT_EXPECT_EQ_MSG(test, get32(env, c + i * 8), want[i][0],
				    "C[%u][0]", i);
		KUNIT_EXPECT_EQ_MSG(test, get32(env, c + i * 8 + 4),
				    want[i][1], "C[%u][1]", i);
	}
	KUNIT_EXPECT_EQ(test, get32(env, c + 0x100), 9);
}

/* ---- MATMUL larger than the SRAM ---- */

/* An SRAM small enough that the MATMULs below take several tiles. */
#define TILE_SRAM	SZ_8K
#define TILE_MEM	SZ_256K
/* Budget per slice for slicing nearly every step. */
#define TILE_SLICE	1500

struct mm_job {
	u32 flags;
	u32 m, n, k;
	u64 a, b, c;
	u64 lda, ldb, ldc;
};

static u64 mm_a(const struct mm_job *j, u32 i, u32 p)
{
	u32 es = j->flags & TRN_MATMUL_BF16 ? 2 : 4;

	if (j->flags & TRN_MATMUL_TRANSPOSE_A)
		return j->a + p * j->lda + (u64)i * es;
	return j->a + i * j->lda + (u64)p * es;
}

static u64 mm_b(const struct mm_job *j, u32 p, u32 col)
{
	u32 es = j->flags & TRN_MATMUL_BF16 ? 2 : 4;

	if (j->flags & TRN_MATMUL_TRANSPOSE_B)
		return j->b + col * j->ldb + (u64)p * es;
	return j->b + p * j->ldb + (u64)col * es;
}

static u64 mm_c(const struct mm_job *j, u32 i, u32 col)
{
	return j->c + i * j->ldc + (u64)col * 4;
}

/*
 * Place the operands of @j one after the other from @va in the layout its
 * flags name, rows padded; C's pitch is kept if set. Returns their end.
 */
static u64 mm_layout(struct mm_job *j, u64 va)
{
	u32 es = j->flags & TRN_MATMUL_BF16 ? 2 : 4;
	bool ta = j->flags & TRN_MATMUL_TRANSPOSE_A;
	bool tb = j->flags & TRN_MATMUL_TRANSPOSE_B;

	j->lda = ((ta ? j->m : j->k) + 3) * es;
	j->ldb = ((tb ? j->k : j->n) + 1) * es;
	if (!j->ldc)
		j->ldc = (u64)j->n * 4 + 12;
	j->a = va;
	va += round_up(j->lda * (ta ? j->k : j->m), 8);
	j->b = va;
	va += round_up(j->ldb * (tb ? j->n : j->k), 8);
	j->c = va;
	return va + j->ldc * j->m;
}

static u32 xorshift(u32 *state)
{
	u32 v = *state;

	v ^= v << 13;
	v ^= v >> 17;
	v ^= v << 5;
	*state = v;
	return v;
}

/*
 * Random f32 bits of either sign, magnitude from 2^-8 to 2^8: their sums
 * of products round differently in almost any other order.
 */
static u32 rnd_f32(u32 *state)
{
	u32 r = xorshift(state);

	return (r & F_NZERO) | (119 + r % 16) << 23 | (xorshift(state) >> 9);
}

/* Random values at every element of A, B and C, as the flags store them. */
static void mm_fill(struct isa_env *env, const struct mm_job *j, u32 *seed)
{
	bool bf16 = j->flags & TRN_MATMUL_BF16;
	u32 i, p, col;

	for (i = 0; i < j->m; i++)
		for (p = 0; p < j->k; p++)
			put_elem(env, mm_a(j, i, p), rnd_f32(seed), bf16);
	for (p = 0; p < j->k; p++)
		for (col = 0; col < j->n; col++)
			put_elem(env, mm_b(j, p, col), rnd_f32(seed), bf16);
	for (i = 0; i < j->m; i++)
		for (col = 0; col < j->n; col++)
			put_elem(env, mm_c(j, i, col), rnd_f32(seed), false);
}

static void mm_emit(struct isa_env *env, u64 *va, const struct mm_job *j)
{
	const u64 cmd[] = {
		HDR(TRN_OP_MATMUL, j->flags, 8) | HI(j->m), j->n | HI(j->k),
		j->a, j->b, j->c, j->lda, j->ldb, j->ldc,
	};

	emit(env, va, cmd, ARRAY_SIZE(cmd));
}

/* An element of a memory image as the device reads it, widened to f32. */
static u32 mem_elem(const u8 *mem, u64 va, bool bf16)
{
	u16 h;
	u32 v;

	if (bf16) {
		memcpy(&h, mem + (va - BASE), sizeof(h));
		return (u32)h << 16;
	}
	memcpy(&v, mem + (va - BASE), sizeof(v));
	return v;
}

/*
 * What the MATMUL does to the memory image @mem, as Documentation/isa.md
 * has it and as the engine computed it before it had tiles: B staged whole,
 * widened, then row by row A's row, C's row (with ACCUMULATE), the sums
 * over all of k in order, with the engine's f32 kernel, C's row written.
 */
static void mm_reference(struct kunit *test, u8 *mem, const struct mm_job *j)
{
	bool bf16 = j->flags & TRN_MATMUL_BF16;
	bool acc = j->flags & TRN_MATMUL_ACCUMULATE;
	u32 *bw, *arow, *crow, i, p, col;

	bw = kunit_kmalloc_array(test, (size_t)j->k * j->n, 4, GFP_KERNEL);
	arow = kunit_kmalloc_array(test, j->k, 4, GFP_KERNEL);
	crow = kunit_kmalloc_array(test, j->n, 4, GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, bw && arow && crow);
	for (p = 0; p < j->k; p++)
		for (col = 0; col < j->n; col++)
			bw[(size_t)p * j->n + col] = mem_elem(mem, mm_b(j, p, col),
							      bf16);
	for (i = 0; i < j->m; i++) {
		for (p = 0; p < j->k; p++)
			arow[p] = mem_elem(mem, mm_a(j, i, p), bf16);
		for (col = 0; col < j->n; col++)
			crow[col] = acc ? mem_elem(mem, mm_c(j, i, col), false) :
					  0;
		kernel_fpu_begin();
		trn_sim_math_matmul_row(crow, arow, bw, 0, j->k, j->n);
		kernel_fpu_end();
		for (col = 0; col < j->n; col++)
			memcpy(mem + (mm_c(j, i, col) - BASE), &crow[col], 4);
	}
	kunit_kfree(test, crow);
	kunit_kfree(test, arow);
	kunit_kfree(test, bw);
}

/* The memory of @env equals @ref, bit for bit. */
static void mm_expect_mem(struct kunit *test, struct isa_env *env,
			  const u8 *ref, const char *what, u32 flags)
{
	size_t off;
	u32 got, want;

	for (off = 0; off < env->size; off += 4)
		if (memcmp(env->mem + off, ref + off, 4))
			break;
	if (off == env->size)
		return;
	memcpy(&got, env->mem + off, 4);
	memcpy(&want, ref + off, 4);
	KUNIT_FAIL(test, "%s, flags %#x: at %#llx %#x, want %#x", what, flags,
		   BASE + off, got, want);
}

static u8 *mem_copy(struct kunit *test, struct isa_env *env)
{
	u8 *copy = kunit_kmalloc(test, env->size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, copy);
	memcpy(copy, env->mem, env->size);
	return copy;
}

struct tile_case {
	const char *name;
	u32 m, n, k;
};

/*
 * Shapes whose B is several times the SRAM; the SRAM's plan (one tile
 * per set of columns over all of k, or tiles of whole rows of B with
 * partial sums in C) depends on the shape and the flags.
 */
static const struct tile_case tile_cases[] = {
	{ "9x37x150", 9, 150, 37 },
	{ "6x37x150", 6, 150, 37 },
	{ "3x700x5", 3, 5, 700 },
	{ "5x9x600", 5, 600, 9 },
	{ "2x400x64", 2, 64, 400 },
	{ "17x21x40_fits", 17, 40, 21 },
};

KUNIT_ARRAY_PARAM_DESC(tile, tile_cases, name);

/*
 * Every combination of the flags, on random values: the same bits as B
 * staged whole, run in slices of a step or two and in one go.
 */
static void matmul_tiled(struct kunit *test)
{
	const struct tile_case *tc = test->param_value;
	struct isa_env *env = isa_env_new_sized(test, TILE_MEM, TILE_SRAM);
	u8 *init, *ref;
	u32 v, seed = 1;

	for (v = 0; v < 16; v++) {
		struct mm_job j = {
			.flags = (v & 1 ? TRN_MATMUL_TRANSPOSE_A : 0) |
				 (v & 2 ? TRN_MATMUL_TRANSPOSE_B : 0) |
				 (v & 4 ? TRN_MATMUL_BF16 : 0) |
				 (v & 8 ? TRN_MATMUL_ACCUMULATE : 0),
			.m = tc->m, .n = tc->n, .k = tc->k,
		};
		u64 va = BASE;
		int slices;

		memset(env->mem, 0, env->size);
		KUNIT_ASSERT_LE(test, mm_layout(&j, BASE + 0x100),
				BASE + env->size);
		mm_fill(env, &j, &seed);
		mm_emit(env, &va, &j);
		init = mem_copy(test, env);
		ref = mem_copy(test, env);
		mm_reference(test, ref, &j);

		slices = run_slices(test, env, BASE, va - BASE, TILE_SLICE,
				    100000);
		KUNIT_EXPECT_EQ(test, env->x.status, DRM_TRN_STATUS_OK);
		if ((u64)tc->k * tc->n * 4 > 2 * TILE_SRAM)
			KUNIT_EXPECT_GT(test, slices, (int)tc->m);
		mm_expect_mem(test, env, ref, "in slices", j.flags);

		memcpy(env->mem, init, env->size);
		KUNIT_EXPECT_EQ(test, run_job(test, env, BASE, va - BASE),
				DRM_TRN_STATUS_OK);
		mm_expect_mem(test, env, ref, "at once", j.flags);
		kunit_kfree(test, ref);
		kunit_kfree(test, init);
	}
}

/*
 * Rows of C that overlap, forwards, backwards (a pitch that wraps), all
 * in one place, or four bytes apart: still written in order of rows, each
 * read (ACCUMULATE) after the one before was written, as without tiles.
 */
static void matmul_tiled_overlapping_c(struct kunit *test)
{
	static const u32 flags[] = {
		0, TRN_MATMUL_ACCUMULATE,
		TRN_MATMUL_TRANSPOSE_B | TRN_MATMUL_ACCUMULATE,
		TRN_MATMUL_TRANSPOSE_A | TRN_MATMUL_TRANSPOSE_B |
		TRN_MATMUL_BF16 | TRN_MATMUL_ACCUMULATE,
	};
	static const s64 pitches[] = { 150 * 4 - 8, 0, -(150 * 4 - 8), 4,
				       -(150 * 4 + 8) };
	struct isa_env *env = isa_env_new_sized(test, TILE_MEM, TILE_SRAM);
	u32 f, p, seed = 2;
	u8 *ref;

	for (f = 0; f < ARRAY_SIZE(flags); f++)
		for (p = 0; p < ARRAY_SIZE(pitches); p++) {
			struct mm_job j = {
				.flags = flags[f], .m = 6, .n = 150, .k = 37,
				.ldc = (u64)pitches[p],
			};
			u64 va = BASE, end;

			memset(env->mem, 0, env->size);
			/* A and B first, then room for C either way. */
			j.ldc = 4;
			end = mm_layout(&j, BASE + 0x100);
			j.ldc = (u64)pitches[p];
			j.c = end + 6 * (150 * 4 + 8);
			KUNIT_ASSERT_LE(test, j.c + 6 * (150 * 4 + 8),
					BASE + env->size);
			mm_fill(env, &j, &seed);
			mm_emit(env, &va, &j);
			ref = mem_copy(test, env);
			mm_reference(test, ref, &j);
			run_slices(test, env, BASE, va - BASE, TILE_SLICE,
				   100000);
			KUNIT_EXPECT_EQ(test, env->x.status,
					DRM_TRN_STATUS_OK);
			mm_expect_mem(test, env, ref, "overlapping C",
				      j.flags | (u32)p << 16);
			kunit_kfree(test, ref);
		}
}

/*
 * Two jobs on one SRAM, a slice of each in turn, like two rings of a
 * NeuronCore: each finds its tiles gone when it resumes, stages them
 * again, and comes to the same bits as alone.
 */
static void matmul_tiled_interleaved(struct kunit *test)
{
	struct isa_env *one = isa_env_new_sized(test, TILE_MEM, TILE_SRAM);
	struct isa_env *two = isa_env_new_sized(test, TILE_MEM, TILE_SRAM);
	struct mm_job j1[] = {
		{ TRN_MATMUL_TRANSPOSE_A | TRN_MATMUL_TRANSPOSE_B |
		  TRN_MATMUL_ACCUMULATE, 9, 150, 37 },
		{ TRN_MATMUL_BF16, 3, 5, 700 },
	};
	struct mm_job j2[] = {
		{ TRN_MATMUL_TRANSPOSE_B | TRN_MATMUL_BF16, 6, 150, 37 },
		{ TRN_MATMUL_TRANSPOSE_A, 5, 600, 9 },
	};
	u64 va1 = BASE, va2 = BASE, end1 = BASE + 0x200, end2 = end1;
	u64 fill = BASE + TILE_MEM - TILE_SRAM;
	const u64 fill_cmd[] = {
		HDR(TRN_OP_FILL, 0, 3) | HI(0xdeadbeef), fill, TILE_SRAM,
	};
	enum trn_sim_run r1 = TRN_SIM_RUN_YIELD, r2 = TRN_SIM_RUN_YIELD;
	u32 i, seed = 3, *f;
	u8 *ref1, *ref2;
	int turns = 0;
	long budget;

	/* Both run on the first one's SRAM. */
	two->x.scratch = &one->scratch;
	emit(two, &va2, fill_cmd, ARRAY_SIZE(fill_cmd));
	for (i = 0; i < ARRAY_SIZE(j1); i++) {
		end1 = mm_layout(&j1[i], end1);
		mm_fill(one, &j1[i], &seed);
		mm_emit(one, &va1, &j1[i]);
		end2 = mm_layout(&j2[i], end2);
		mm_fill(two, &j2[i], &seed);
		mm_emit(two, &va2, &j2[i]);
	}
	KUNIT_ASSERT_LE(test, max(end1, end2), fill);
	ref1 = mem_copy(test, one);
	ref2 = mem_copy(test, two);
	for (i = 0; i < ARRAY_SIZE(j1); i++) {
		mm_reference(test, ref1, &j1[i]);
		mm_reference(test, ref2, &j2[i]);
	}
	f = (u32 *)(ref2 + (fill - BASE));
	for (i = 0; i < TILE_SRAM / 4; i++)
		f[i] = 0xdeadbeef;

	trn_sim_exec_start(&one->x, BASE, va1 - BASE);
	trn_sim_exec_start(&two->x, BASE, va2 - BASE);
	while ((r1 == TRN_SIM_RUN_YIELD || r2 == TRN_SIM_RUN_YIELD) &&
	       turns++ < 100000) {
		budget = TILE_SLICE;
		if (r1 == TRN_SIM_RUN_YIELD)
			r1 = trn_sim_exec_run(&one->x, &budget);
		budget = TILE_SLICE;
		if (r2 == TRN_SIM_RUN_YIELD)
			r2 = trn_sim_exec_run(&two->x, &budget);
	}
	KUNIT_EXPECT_EQ(test, r1, TRN_SIM_RUN_DONE);
	KUNIT_EXPECT_EQ(test, r2, TRN_SIM_RUN_DONE);
	KUNIT_EXPECT_GT(test, turns, 20);
	KUNIT_EXPECT_EQ(test, one->x.status, DRM_TRN_STATUS_OK);
	KUNIT_EXPECT_EQ(test, two->x.status, DRM_TRN_STATUS_OK);
	mm_expect_mem(test, one, ref1, "first job", 0);
	mm_expect_mem(test, two, ref2, "second job", 0);
}

/*
 * A job released in the middle of a tiled MATMUL (a ring reset) holds
 * nothing; the next job on the SRAM, and the same job started again,
 * compute what they should.
 */
static void matmul_tiled_released(struct kunit *test)
{
	struct isa_env *env = isa_env_new_sized(test, TILE_MEM, TILE_SRAM);
	struct mm_job j1 = { TRN_MATMUL_TRANSPOSE_B, 9, 150, 37 };
	struct mm_job j2 = { TRN_MATMUL_TRANSPOSE_A | TRN_MATMUL_ACCUMULATE,
			     6, 150, 37 };
	void *sram = env->scratch.buf;
	u64 va = BASE, cmd2, end;
	long budget = TILE_SLICE;
	u32 seed = 4;
	u8 *ref;

	end = mm_layout(&j1, BASE + 0x200);
	mm_layout(&j2, end);
	mm_fill(env, &j1, &seed);
	mm_fill(env, &j2, &seed);
	mm_emit(env, &va, &j1);
	cmd2 = va;
	mm_emit(env, &va, &j2);

	trn_sim_exec_start(&env->x, BASE, cmd2 - BASE);
	KUNIT_ASSERT_EQ(test, trn_sim_exec_run(&env->x, &budget),
			TRN_SIM_RUN_YIELD);
	KUNIT_EXPECT_TRUE(test, env->x.in_cmd);
	KUNIT_EXPECT_NE(test, env->x.mm_id, 0);
	trn_sim_exec_release(&env->x);
	KUNIT_EXPECT_EQ(test, env->x.depth, 0);
	KUNIT_EXPECT_FALSE(test, env->x.in_cmd);
	KUNIT_EXPECT_EQ(test, env->x.mm_id, 0);
	KUNIT_EXPECT_PTR_EQ(test, env->scratch.buf, sram);
	KUNIT_EXPECT_EQ(test, env->scratch.size, TILE_SRAM);

	ref = mem_copy(test, env);
	mm_reference(test, ref, &j2);
	run_slices(test, env, cmd2, va - cmd2, TILE_SLICE, 100000);
	KUNIT_EXPECT_EQ(test, env->x.status, DRM_TRN_STATUS_OK);
	mm_expect_mem(test, env, ref, "next job", j2.flags);

	mm_reference(test, ref, &j1);
	run_slices(test, env, BASE, cmd2 - BASE, TILE_SLICE, 100000);
	KUNIT_EXPECT_EQ(test, env->x.status, DRM_TRN_STATUS_OK);
	mm_expect_mem(test, env, ref, "released job again", j1.flags);
	KUNIT_EXPECT_PTR_EQ(test, env->scratch.buf, sram);
}

/*
 * Only a test's SRAM can be too small for a command: it fails with
 * ABORTED, before touching memory.
 */
static void sram_too_small(struct kunit *test)
{
	struct isa_env *env = isa_env_new_sized(test, MEM_SIZE, SZ_4K);
	u64 d = BASE + 0x1000, va = BASE;
	const u64 cmds[] = {
		/* Rows of C 4 bytes apart, each wider than the SRAM. */
		HDR(TRN_OP_MATMUL, 0, 8) | HI(2), 1100 | HI(1), d, d, d + 0x100,
		4, 4, 4,
	};
	const u64 unary[] = {
		HDR(TRN_OP_UNARY, 0, 6), 1 | HI(2000), d, d, 0, 0,
	};

	put32s(env, d, (u32[]){ F_ONE }, 1);
	emit(env, &va, cmds, ARRAY_SIZE(cmds));
	KUNIT_EXPECT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_ABORTED);
	KUNIT_EXPECT_EQ(test, env->x.error_offset, 0);
	KUNIT_EXPECT_EQ(test, get32(env, d + 0x100), 0);
	va = BASE;
	emit(env, &va, unary, ARRAY_SIZE(unary));
	KUNIT_EXPECT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_ABORTED);
}

/* f32 bits of +-2^e. */
static u32 pow2_f32(int e, bool neg)
{
	return (neg ? F_NZERO : 0) | (u32)(127 + e) << 23;
}

/*
 * The largest B the ISA allows, k * n * 4 = 64 MiB, both ways round, in
 * the device's own SRAM. Pitches of 0 (or one element) keep the operands
 * small, and the values make the sums exact in order of k only: 2^25
 * first, then ones that each round away.
 */
static void matmul_largest(struct kunit *test)
{
	struct isa_env *env = isa_env_new_sized(test, SZ_1M, 0);
	u64 a = BASE + 0x1000, b = a + SZ_256K + 0x1000;
	u64 c = b + SZ_256K + 0x1000, va = BASE;
	const u64 plain[] = {
		HDR(TRN_OP_MATMUL, 0, 8) | HI(2), 256 | HI(65536),
		a, b, c, 0, 0, 1024,
	};
	const u64 both_acc[] = {
		HDR(TRN_OP_MATMUL, TRN_MATMUL_TRANSPOSE_A |
		    TRN_MATMUL_TRANSPOSE_B | TRN_MATMUL_ACCUMULATE, 8) | HI(2),
		256 | HI(65536), a, b, c, 0, 0, 1024,
	};
	const u64 wide_bf16[] = {
		HDR(TRN_OP_MATMUL, TRN_MATMUL_TRANSPOSE_B | TRN_MATMUL_BF16, 8) |
		HI(1), 65536 | HI(256), a, b, c, 0, 2, 0,
	};
	u32 *av = at(env, a), *bv = at(env, b);
	u16 *bh = at(env, b);
	u32 i, col, p, q, r, want;

	/* A[i][p] = 2^25 (p = 0) or 1, B[p][j] = +-2^(j % 7 - 3). */
	for (p = 0; p < 65536; p++)
		av[p] = p ? F_ONE : 0x4c000000;
	for (col = 0; col < 256; col++)
		bv[col] = pow2_f32(col % 7 - 3, col & 1);
	emit(env, &va, plain, ARRAY_SIZE(plain));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	for (i = 0; i < 2; i++)
		for (col = 0; col < 256; col++)
			KUNIT_EXPECT_EQ_MSG(test, get32(env, c + i * 1024 +
							col * 4),
					    pow2_f32(col % 7 + 22, col & 1),
					    "C[%u][%u]", i, col);

	/*
	 * Both transposed, accumulating: A[i][p] = s[i], B[p][j] = u[p]
	 * (2^25, then ones), C = -2^25 s[i] first, so 65535 s[i] exactly.
	 */
	av[0] = F_ONE;
	av[1] = 0xbf000000;		/* -0.5 */
	for (p = 0; p < 65536; p++)
		bv[p] = p ? F_ONE : 0x4c000000;
	for (col = 0; col < 256; col++) {
		put32s(env, c + col * 4, (u32[]){ 0xcc000000 }, 1);
		put32s(env, c + 1024 + col * 4, (u32[]){ 0x4b800000 }, 1);
	}
	va = BASE;
	emit(env, &va, both_acc, ARRAY_SIZE(both_acc));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	for (col = 0; col < 256; col++) {
		KUNIT_EXPECT_EQ(test, get32(env, c + col * 4), 0x477fff00);
		KUNIT_EXPECT_EQ(test, get32(env, c + 1024 + col * 4),
				0xc6ffff00);
	}

	/*
	 * n = 65536, k = 256, bf16, B transposed with a pitch of one
	 * element: B[p][j] = w[j + p], 2^25 where j + p is a multiple of
	 * 256, else 1. Column j meets its 2^25 at p = -j mod 256, after
	 * that many ones: C[0][j] is 2^25 plus them rounded to a multiple
	 * of 4 (ties to even), and the ones after round away.
	 */
	for (p = 0; p < 256; p++)
		((u16 *)av)[p] = 0x3f80;
	for (q = 0; q < 65536 + 255; q++)
		bh[q] = q % 256 ? 0x3f80 : 0x4c00;
	va = BASE;
	emit(env, &va, wide_bf16, ARRAY_SIZE(wide_bf16));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	for (col = 0; col < 65536; col++) {
		p = (256 - col % 256) % 256;
		q = p / 4;
		r = p % 4;
		if (r > 2 || (r == 2 && (q & 1)))
			q++;
		want = 0x4c000000 + q;
		if (get32(env, c + col * 4) != want)
			break;
	}
	KUNIT_EXPECT_EQ_MSG(test, col, 65536, "C[0][%u] = %#x", col,
			    col < 65536 ? get32(env, c + col * 4) : 0);
}

/*
 * Memory with nothing behind it (which a device that backs every buffer
 * never meets) fails the job with ABORTED, not with an MMU fault.
 */
static void unbacked_memory_aborts(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 d = BASE + 0x2000, va;
	const u64 matmul[] = {
		HDR(TRN_OP_MATMUL, 0, 8) | HI(1), 1 | HI(1), d, d + 0x10, d,
		4, 4, 4,
	};
	const u64 unary[] = {
		HDR(TRN_OP_UNARY, 0, 6), 1 | HI(4), d + 0x40, d, 16, 16,
	};
	const u64 write[] = { HDR(TRN_OP_WRITE, 0, 3), d + 0x80, 7 };

	env->hole = d;
	va = BASE;
	emit(env, &va, matmul, ARRAY_SIZE(matmul));
	KUNIT_EXPECT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_ABORTED);
	KUNIT_EXPECT_EQ(test, env->x.fault_va, 0);
	va = BASE;
	emit(env, &va, unary, ARRAY_SIZE(unary));
	KUNIT_EXPECT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_ABORTED);
	va = BASE;
	emit(env, &va, write, ARRAY_SIZE(write));
	KUNIT_EXPECT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_ABORTED);
	env->hole = 0;
	KUNIT_EXPECT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	KUNIT_EXPECT_EQ(test, get32(env, d + 0x80), 7);
}

struct unary_case {
	u32 op;
	u32 in;
	u32 out;
};

static const struct unary_case unary_cases[] = {
	{ TRN_UNARY_COPY, F_SNAN, F_SNAN },
	{ TRN_UNARY_NEG, F_ONE, 0xbf800000 },
	{ TRN_UNARY_NEG, F_ZERO, F_NZERO },
	{ TRN_UNARY_ABS, F_NTWO, F_TWO },
	{ TRN_UNARY_RELU, F_NTWO, F_ZERO },
	{ TRN_UNARY_RELU, F_NZERO, F_ZERO },
	{ TRN_UNARY_RELU, F_TWO, F_TWO },
	{ TRN_UNARY_RELU, F_SNAN, F_SNAN | 0x00400000 },
	{ TRN_UNARY_RELU_GRAD, F_TWO, F_ONE },
	{ TRN_UNARY_RELU_GRAD, F_ZERO, F_ZERO },
	{ TRN_UNARY_RELU_GRAD, F_NTWO, F_ZERO },
	{ TRN_UNARY_RELU_GRAD, F_QNAN, F_ZERO },
	{ TRN_UNARY_EXP, F_ZERO, F_ONE },
	{ TRN_UNARY_EXP, F_ONE, 0x402df854 },
	{ TRN_UNARY_EXP, 0xbf800000, 0x3ebc5ab2 },
	{ TRN_UNARY_EXP, F_NINF, F_ZERO },
	{ TRN_UNARY_EXP, 0x42b20000, F_INF },		/* e^89 */
	{ TRN_UNARY_TANH, F_HALF, 0x3eec9a9f },
	{ TRN_UNARY_TANH, F_NINF, 0xbf800000 },
	{ TRN_UNARY_TANH, F_NZERO, F_NZERO },
	{ TRN_UNARY_GELU, F_ONE, 0x3f57585c },
	{ TRN_UNARY_GELU, 0xbf800000, 0xbe229e91 },
	{ TRN_UNARY_GELU, F_NINF, F_NZERO },
	{ TRN_UNARY_GELU, F_INF, F_INF },
	{ TRN_UNARY_RECIP, F_FOUR, F_QUARTER },
	{ TRN_UNARY_RECIP, 0x40400000, 0x3eaaaaab },
	{ TRN_UNARY_RECIP, F_NZERO, F_NINF },
	{ TRN_UNARY_SQRT, F_TWO, 0x3fb504f3 },
	{ TRN_UNARY_SQRT, F_NZERO, F_NZERO },
	{ TRN_UNARY_SQRT, F_NTWO, F_QNAN },
	{ TRN_UNARY_EXP, F_SNAN, F_SNAN | 0x00400000 },
	{ TRN_UNARY_LOG, F_TWO, 0x3f317218 },
	{ TRN_UNARY_LOG, F_ONE, F_ZERO },
	{ TRN_UNARY_LOG, F_NZERO, F_NINF },
	{ TRN_UNARY_LOG, F_NTWO, F_QNAN },
	{ TRN_UNARY_LOG, F_INF, F_INF },
	{ TRN_UNARY_LOG, 0x00000001, 0xc2ce8ed0 },	/* smallest subnormal */
	{ TRN_UNARY_LOG, F_SNAN, F_SNAN | 0x00400000 },
	{ TRN_UNARY_ERF, F_ONE, 0x3f57bb3d },
	{ TRN_UNARY_ERF, F_NINF, 0xbf800000 },
	{ TRN_UNARY_ERF, F_NZERO, F_NZERO },
	{ TRN_UNARY_ERF, F_FOUR, F_ONE },
	{ TRN_UNARY_GELU_ERF, F_ONE, 0x3f57625f },
	{ TRN_UNARY_GELU_ERF, 0xbf800000, 0xbe227686 },
	{ TRN_UNARY_GELU_ERF, 0xc1200000, 0x9ab83c9b },	/* the tail at -10 */
	{ TRN_UNARY_GELU_ERF, F_NINF, F_NZERO },
	{ TRN_UNARY_GELU_ERF, F_INF, F_INF },
	{ TRN_UNARY_GELU_ERF_GRAD, F_ZERO, F_HALF },
	{ TRN_UNARY_GELU_ERF_GRAD, F_ONE, 0x3f8aaa15 },
	{ TRN_UNARY_GELU_ERF_GRAD, 0xc2c80000, F_NZERO },	/* -100 */
	{ TRN_UNARY_GELU_ERF_GRAD, F_NINF, F_NZERO },
	{ TRN_UNARY_GELU_ERF_GRAD, F_INF, F_ONE },
};

static void unary_ops(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 src = BASE + 0x1000, dst = BASE + 0x2000, va = BASE;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(unary_cases); i++) {
		const u64 cmd[] = {
			HDR(TRN_OP_UNARY, 0, 6) | HI(unary_cases[i].op),
			1 | HI(1), dst + 4 * i, src + 4 * i, 4, 4,
		};

		put32s(env, src + 4 * i, &unary_cases[i].in, 1);
		emit(env, &va, cmd, ARRAY_SIZE(cmd));
	}
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	for (i = 0; i < ARRAY_SIZE(unary_cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, get32(env, dst + 4 * i),
				    unary_cases[i].out, "case %zu op %u in %#x",
				    i, unary_cases[i].op, unary_cases[i].in);
}

/*
 * TRN_ELEM_SRC_U8: every byte value becomes its f32 exactly, from odd
 * addresses and pitches; with an op and bf16 results; a pitch of 0.
 */
static void unary_u8_source(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 src = BASE + 0x1001, dst = BASE + 0x2000, va = BASE;
	u64 small = BASE + 0x1201, d2 = BASE + 0x3000, d3 = BASE + 0x3100;
	const u8 three[] = { 0, 7, 255 };
	const u64 widen[] = {
		HDR(TRN_OP_UNARY, TRN_ELEM_SRC_U8, 6) | HI(TRN_UNARY_COPY),
		2 | HI(128), dst, src, 512, 129,
	};
	const u64 neg[] = {
		HDR(TRN_OP_UNARY, TRN_ELEM_SRC_U8 | TRN_ELEM_DST_BF16, 6) |
		HI(TRN_UNARY_NEG), 1 | HI(3), d2, small, 6, 3,
	};
	const u64 repeat[] = {
		HDR(TRN_OP_UNARY, TRN_ELEM_SRC_U8, 6) | HI(TRN_UNARY_COPY),
		2 | HI(3), d3, small, 12, 0,
	};
	u16 h[3];
	u32 r, c;

	for (r = 0; r < 2; r++)
		for (c = 0; c < 128; c++)
			*(u8 *)at(env, src + r * 129 + c) = r * 128 + c;
	memcpy(at(env, small), three, sizeof(three));
	emit(env, &va, widen, ARRAY_SIZE(widen));
	emit(env, &va, neg, ARRAY_SIZE(neg));
	emit(env, &va, repeat, ARRAY_SIZE(repeat));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	for (r = 0; r < 2; r++)
		for (c = 0; c < 128; c++)
			KUNIT_EXPECT_EQ_MSG(test,
					    get32(env, dst + r * 512 + c * 4),
					    int_f32(r * 128 + c), "byte %u",
					    r * 128 + c);
	KUNIT_EXPECT_EQ(test, get32(env, dst + 4), F_ONE);
	KUNIT_EXPECT_EQ(test, get32(env, dst + 512 + 127 * 4), 0x437f0000);
	memcpy(h, at(env, d2), sizeof(h));
	KUNIT_EXPECT_EQ(test, h[0], 0x8000);	/* -(+0) */
	KUNIT_EXPECT_EQ(test, h[1], 0xc0e0);	/* -7 */
	KUNIT_EXPECT_EQ(test, h[2], 0xc37f);	/* -255 */
	for (r = 0; r < 2; r++)
		for (c = 0; c < 3; c++)
			KUNIT_EXPECT_EQ(test, get32(env, d3 + r * 12 + c * 4),
					int_f32(three[c]));
}

static void binary_ops(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 a = BASE + 0x1000, b = BASE + 0x2000, d = BASE + 0x3000;
	u64 va = BASE;
	const u32 av[] = { F_ONE, F_ZERO, F_QNAN, F_TWO };
	const u32 bv[] = { F_FOUR, F_NZERO, F_ONE, F_QNAN };
	u32 op;

	put32s(env, a, av, 4);
	put32s(env, b, bv, 4);
	for (op = TRN_BINARY_ADD; op <= TRN_BINARY_MIN; op++) {
		const u64 cmd[] = {
			HDR(TRN_OP_BINARY, 0, 8) | HI(op), 1 | HI(4),
			d + 16 * op, a, b, 16, 16, 16,
		};

		emit(env, &va, cmd, ARRAY_SIZE(cmd));
	}
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	KUNIT_EXPECT_EQ(test, get32(env, d + 0), 0x40a00000);		/* 5 */
	KUNIT_EXPECT_EQ(test, get32(env, d + 4), F_ZERO);		/* 0 + -0 */
	KUNIT_EXPECT_EQ(test, get32(env, d + 16), 0xc0400000);	/* -3 */
	KUNIT_EXPECT_EQ(test, get32(env, d + 32), F_FOUR);
	KUNIT_EXPECT_EQ(test, get32(env, d + 36), F_NZERO);		/* 0 * -0 */
	KUNIT_EXPECT_EQ(test, get32(env, d + 48), F_QUARTER);
	/* MAX: NaN wins, +0 > -0 */
	KUNIT_EXPECT_EQ(test, get32(env, d + 64), F_FOUR);
	KUNIT_EXPECT_EQ(test, get32(env, d + 68), F_ZERO);
	KUNIT_EXPECT_EQ(test, get32(env, d + 72), F_QNAN);
	KUNIT_EXPECT_EQ(test, get32(env, d + 76), F_QNAN);
	/* MIN */
	KUNIT_EXPECT_EQ(test, get32(env, d + 80), F_ONE);
	KUNIT_EXPECT_EQ(test, get32(env, d + 84), F_NZERO);
	KUNIT_EXPECT_EQ(test, get32(env, d + 88), F_QNAN);
	KUNIT_EXPECT_EQ(test, get32(env, d + 92), F_QNAN);
}

static void binary_broadcast(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 a = BASE + 0x1000, b = BASE + 0x2000, d = BASE + 0x3000;
	u64 va = BASE;
	/* a: 2 rows of [1 2]; b: one row [4 4] (pitch 0); per-row [1], [2]. */
	const u32 av[] = { F_ONE, F_TWO, F_ONE, F_TWO };
	const u32 bv[] = { F_FOUR, F_FOUR, F_ONE, F_TWO };
	const u64 cmds[] = {
		HDR(TRN_OP_BINARY, 0, 8) | HI(TRN_BINARY_MUL), 2 | HI(2),
		d, a, b, 8, 8, 0,
		HDR(TRN_OP_BINARY, TRN_BINARY_B_PER_ROW, 8) | HI(TRN_BINARY_ADD),
		2 | HI(2), d + 0x100, a, b + 8, 8, 8, 4,
	};

	put32s(env, a, av, 4);
	put32s(env, b, bv, 4);
	emit(env, &va, cmds, ARRAY_SIZE(cmds));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	KUNIT_EXPECT_EQ(test, get32(env, d), F_FOUR);
	KUNIT_EXPECT_EQ(test, get32(env, d + 4), 0x41000000);		/* 8 */
	KUNIT_EXPECT_EQ(test, get32(env, d + 8), F_FOUR);
	KUNIT_EXPECT_EQ(test, get32(env, d + 12), 0x41000000);
	KUNIT_EXPECT_EQ(test, get32(env, d + 0x100), F_TWO);		/* 1+1 */
	KUNIT_EXPECT_EQ(test, get32(env, d + 0x104), 0x40400000);	/* 2+1 */
	KUNIT_EXPECT_EQ(test, get32(env, d + 0x108), 0x40400000);	/* 1+2 */
	KUNIT_EXPECT_EQ(test, get32(env, d + 0x10c), F_FOUR);		/* 2+2 */
}

static void reduce_ops(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 s = BASE + 0x1000, d = BASE + 0x2000, va = BASE;
	/* Row 0: summed in order gives 1 (any other order 0 or 2). */
	const u32 rows[] = {
		0x4cbebc20, F_ONE, 0xccbebc20, F_ONE,
		F_NZERO, F_ZERO, F_NZERO, F_NZERO,
		F_ONE, F_QNAN, F_FOUR, F_TWO,
	};
	const u64 cmds[] = {
		HDR(TRN_OP_REDUCE, 0, 5) | HI(TRN_REDUCE_SUM), 3 | HI(4),
		d, s, 16,
		HDR(TRN_OP_REDUCE, 0, 5) | HI(TRN_REDUCE_MAX), 3 | HI(4),
		d + 16, s, 16,
		/* Rows of one value: a signalling NaN comes out quieted. */
		HDR(TRN_OP_REDUCE, 0, 5) | HI(TRN_REDUCE_MAX), 2 | HI(1),
		d + 32, s + 0x100, 4,
	};
	const u32 single[] = { 0x7f800001, F_NZERO };

	put32s(env, s, rows, ARRAY_SIZE(rows));
	put32s(env, s + 0x100, single, ARRAY_SIZE(single));
	emit(env, &va, cmds, ARRAY_SIZE(cmds));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	KUNIT_EXPECT_EQ(test, get32(env, d + 32), 0x7fc00001);
	KUNIT_EXPECT_EQ(test, get32(env, d + 36), F_NZERO);
	KUNIT_EXPECT_EQ(test, get32(env, d), F_ONE);
	KUNIT_EXPECT_EQ(test, get32(env, d + 4), F_ZERO);	/* +0 start */
	KUNIT_EXPECT_EQ(test, get32(env, d + 16), 0x4cbebc20);
	KUNIT_EXPECT_EQ(test, get32(env, d + 20), F_ZERO);	/* +0 > -0 */
	KUNIT_EXPECT_EQ(test, get32(env, d + 24), F_QNAN);
}

/* Columns of the long rows below: more than one FPU section (4096). */
#define LONG_COLS	4099

/*
 * Rows longer than an FPU section: REDUCE carries its sum and maximum
 * across sections in column order, BINARY finds b at the same column.
 */
static void long_rows(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 s = BASE + 0x1000, pitch = LONG_COLS * 4, va = BASE;
	u64 b = s + 2 * pitch, d = b + pitch, r = d + pitch;
	const u64 cmds[] = {
		HDR(TRN_OP_REDUCE, 0, 5) | HI(TRN_REDUCE_SUM), 2 | HI(LONG_COLS),
		r, s, pitch,
		HDR(TRN_OP_REDUCE, 0, 5) | HI(TRN_REDUCE_MAX), 2 | HI(LONG_COLS),
		r + 8, s, pitch,
		HDR(TRN_OP_BINARY, 0, 8) | HI(TRN_BINARY_ADD), 1 | HI(LONG_COLS),
		d, b, b, pitch, pitch, pitch,
	};
	u32 *row0 = at(env, s), *row1 = at(env, s + pitch), *bv = at(env, b);
	u32 c, v, *out = at(env, d);

	/*
	 * Row 0: 2^25, then ones, each of which rounds away (to even) when
	 * added in order, and past the first section a 4, which does not:
	 * only the sum in column order is 2^25 + 4. Row 1: ones, and a
	 * signalling NaN in the last column.
	 */
	for (c = 0; c < LONG_COLS; c++) {
		row0[c] = c ? F_ONE : 0x4c000000;
		row1[c] = F_ONE;
		bv[c] = c < 4096 ? F_ONE : F_FOUR;
	}
	row0[4097] = F_FOUR;
	row1[LONG_COLS - 1] = F_SNAN;
	emit(env, &va, cmds, ARRAY_SIZE(cmds));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	KUNIT_EXPECT_EQ(test, get32(env, r), 0x4c000001);
	v = get32(env, r + 4);			/* a NaN, payload unspecified */
	KUNIT_EXPECT_GT(test, v & 0x7fffffff, F_INF);
	KUNIT_EXPECT_EQ(test, get32(env, r + 8), 0x4c000000);
	KUNIT_EXPECT_EQ(test, get32(env, r + 12), F_SNAN | 0x00400000);
	/* b + b: 1 + 1, then 4 + 4 past the first section. */
	for (c = 0; c < LONG_COLS; c++)
		if (out[c] != (c < 4096 ? F_TWO : 0x41000000))
			break;
	KUNIT_EXPECT_EQ(test, c, LONG_COLS);
}

/* UNARY, BINARY and REDUCE resume at the right row after every slice. */
static void elementwise_slices(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 s = BASE + 0x1000, d = BASE + 0x3000, va = BASE;
	const u64 cmds[] = {
		HDR(TRN_OP_UNARY, 0, 6) | HI(TRN_UNARY_NEG), 16 | HI(8),
		d, s, 32, 32,
		HDR(TRN_OP_BINARY, TRN_BINARY_B_PER_ROW, 8) | HI(TRN_BINARY_SUB),
		16 | HI(8), d + 0x1000, s, s, 32, 32, 32,
		HDR(TRN_OP_REDUCE, 0, 5) | HI(TRN_REDUCE_SUM), 16 | HI(8),
		d + 0x2000, s, 32,
	};
	u32 *src = at(env, s), i;
	int slices;

	for (i = 0; i < 16 * 8; i++)
		src[i] = i / 8 % 2 ? F_TWO : F_ONE;
	emit(env, &va, cmds, ARRAY_SIZE(cmds));
	slices = run_slices(test, env, BASE, va - BASE, 100, 1000);
	KUNIT_EXPECT_GT(test, slices, 16);
	KUNIT_EXPECT_EQ(test, env->x.status, DRM_TRN_STATUS_OK);
	for (i = 0; i < 16 * 8; i++) {
		KUNIT_EXPECT_EQ(test, get32(env, d + 4 * i),
				(i / 8 % 2 ? F_TWO : F_ONE) | F_NZERO);
		KUNIT_EXPECT_EQ(test, get32(env, d + 0x1000 + 4 * i), F_ZERO);
	}
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_EQ(test, get32(env, d + 0x2000 + 4 * i),
				i % 2 ? 0x41800000 : 0x41000000);
}

struct bf16_case {
	u32 in;
	u16 out;
};

static const struct bf16_case bf16_cases[] = {
	{ 0x3f800000, 0x3f80 },		/* exact */
	{ 0x3f808000, 0x3f80 },		/* tie, even below */
	{ 0x3f818000, 0x3f82 },		/* tie, even above */
	{ 0x3f808001, 0x3f81 },		/* above the tie */
	{ 0x3f807fff, 0x3f80 },		/* below the tie */
	{ 0xbf818000, 0xbf82 },		/* negative tie */
	{ 0x7f7fffff, 0x7f80 },		/* overflow to infinity */
	{ 0xff800000, 0xff80 },		/* -inf */
	{ 0x7f800001, 0x7fc0 },		/* signalling NaN, quieted */
	{ 0xffc12345, 0xffc1 },		/* quiet NaN keeps sign, payload */
	{ 0x00008000, 0x0000 },		/* subnormal tie to even zero */
	{ 0x80018000, 0x8002 },
};

static void bf16_rounding(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 s = BASE + 0x1000, d = BASE + 0x2000, va = BASE;
	u32 in[ARRAY_SIZE(bf16_cases)];
	const u64 cmd[] = {
		HDR(TRN_OP_UNARY, TRN_ELEM_DST_BF16, 6) | HI(TRN_UNARY_COPY),
		1 | HI(ARRAY_SIZE(bf16_cases)), d + 2, s, 0, 0,
	};
	u16 out;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bf16_cases); i++) {
		KUNIT_EXPECT_EQ_MSG(test, trn_sim_f32_to_bf16(bf16_cases[i].in),
				    bf16_cases[i].out, "in %#x", bf16_cases[i].in);
		in[i] = bf16_cases[i].in;
	}
	/* The same through UNARY COPY, to a 2-aligned destination. */
	put32s(env, s, in, ARRAY_SIZE(in));
	emit(env, &va, cmd, ARRAY_SIZE(cmd));
	KUNIT_ASSERT_EQ(test, run_job(test, env, BASE, va - BASE),
			DRM_TRN_STATUS_OK);
	for (i = 0; i < ARRAY_SIZE(bf16_cases); i++) {
		memcpy(&out, at(env, d + 2 + 2 * i), sizeof(out));
		KUNIT_EXPECT_EQ(test, out, bf16_cases[i].out);
	}
}

/* A long FILL runs in many slices and still finishes exactly. */
static void slices_resume(struct kunit *test)
{
	struct isa_env *env = isa_env_new(test);
	u64 va = BASE;
	const u64 cmds[] = {
		HDR(TRN_OP_FILL, 0, 3) | HI(0x01020304), BASE + 0x1000, 0x18000,
		HDR(TRN_OP_WRITE, 0, 3), BASE + 0x1000, 9,
	};
	int slices;

	emit(env, &va, cmds, ARRAY_SIZE(cmds));
	slices = run_slices(test, env, BASE, va - BASE, 100, 100);
	KUNIT_EXPECT_GT(test, slices, 2);
	KUNIT_EXPECT_EQ(test, env->x.status, DRM_TRN_STATUS_OK);
	KUNIT_EXPECT_EQ(test, get32(env, BASE + 0x1000), 9);
	KUNIT_EXPECT_EQ(test, get32(env, BASE + 0x1004), 0x01020304);
	KUNIT_EXPECT_EQ(test, get32(env, BASE + 0x18ffc), 0x01020304);
	KUNIT_EXPECT_EQ(test, get32(env, BASE + 0x19000), 0);
}

static struct kunit_case trn_sim_isa_cases[] = {
	KUNIT_CASE_PARAM(decode_errors, decode_gen_params),
	KUNIT_CASE(job_buffer_checked),
	KUNIT_CASE(write_fill_copy_timestamp),
	KUNIT_CASE(semaphores),
	KUNIT_CASE(call_nesting),
	KUNIT_CASE(call_too_deep),
	KUNIT_CASE(error_in_called_buffer),
	KUNIT_CASE(matmul_f32),
	KUNIT_CASE(matmul_order_and_bf16),
	KUNIT_CASE(matmul_transpose),
	KUNIT_CASE(matmul_transpose_a_slices),
	KUNIT_CASE_PARAM(matmul_tiled, tile_gen_params),
	KUNIT_CASE(matmul_tiled_overlapping_c),
	KUNIT_CASE(matmul_tiled_interleaved),
	KUNIT_CASE(matmul_tiled_released),
	KUNIT_CASE(sram_too_small),
	KUNIT_CASE(matmul_largest),
	KUNIT_CASE(unbacked_memory_aborts),
	KUNIT_CASE(unary_ops),
	KUNIT_CASE(unary_u8_source),
	KUNIT_CASE(binary_ops),
	KUNIT_CASE(binary_broadcast),
	KUNIT_CASE(reduce_ops),
	KUNIT_CASE(long_rows),
	KUNIT_CASE(elementwise_slices),
	KUNIT_CASE(bf16_rounding),
	KUNIT_CASE(slices_resume),
	{}
};

static struct kunit_suite trn_sim_isa_suite = {
	.name = "trn_sim_isa",
	.test_cases = trn_sim_isa_cases,
};

kunit_test_suite(trn_sim_isa_suite);
