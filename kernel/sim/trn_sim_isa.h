/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * The simulated NeuronCore's command-stream interpreter (trn_sim_isa.c) and
 * its arithmetic (trn_sim_math.c), independent of rings and of the MMU: the
 * interpreter reaches memory only through &struct trn_sim_exec_ops, so that
 * KUnit runs it on a flat test memory. Documentation/isa.md is the contract.
 */
#ifndef __TRN_SIM_ISA_H__
#define __TRN_SIM_ISA_H__

#include <linux/sizes.h>
#include <linux/types.h>

#include <uapi/drm/trn_accel.h>
#include <uapi/drm/trn_isa.h>

struct trn_sim_exec;

/**
 * struct trn_sim_exec_ops - how an interpreter reaches the device
 * @read: copy @len bytes at device address @va into @buf
 * @write: copy @len bytes from @buf to device address @va
 * @clock: the device clock, in ns
 * @copy: optional; copy @len bytes from device address @src to @dst
 *        directly (a DMA engine), without staging them in a bounce buffer
 *
 * @read, @write and @copy return 0, -EFAULT after storing the first address
 * that could not be reached in &trn_sim_exec.fault_va (and reporting the
 * fault), or -ENOMEM. They may sleep.
 */
struct trn_sim_exec_ops {
	int (*read)(struct trn_sim_exec *x, u64 va, void *buf, size_t len);
	int (*write)(struct trn_sim_exec *x, u64 va, const void *buf,
		     size_t len);
	u64 (*clock)(struct trn_sim_exec *x);
	int (*copy)(struct trn_sim_exec *x, u64 dst, u64 src, size_t len);
};

/**
 * struct trn_sim_frame - a command buffer being executed
 * @va: its device address
 * @size: its size in bytes
 * @pc: offset of the next command to fetch (of the current one while
 *      &trn_sim_exec.in_cmd)
 */
struct trn_sim_frame {
	u64 va;
	u64 size;
	u64 pc;
};

/**
 * struct trn_sim_scratch - a NeuronCore's SRAM, through which operands are
 * staged
 * @buf: the memory, allocated once by trn_sim_scratch_init()
 * @size: its size in bytes
 * @last_id: the last MATMUL identity handed out (&trn_sim_exec.mm_id)
 * @owner: the MATMUL whose tiles @buf holds, or 0: what any other use of
 *         the SRAM resets, so that a MATMUL resuming after another
 *         execution used it stages its tiles again
 * @b_tile: the tile of B staged for @owner, or U64_MAX
 * @a_group: the group of rows of transposed A staged for @owner (and the
 *           part of k it covers), or U64_MAX
 *
 * The contents are only valid within one call of trn_sim_exec_run() (or
 * while @owner says they are), so executions that never run at the same
 * time (the rings of one NeuronCore) share one. Executing never allocates:
 * every command works within @size.
 */
struct trn_sim_scratch {
	void *buf;
	size_t size;
	u64 last_id;
	u64 owner;
	u64 b_tile;
	u64 a_group;
};

/* The command being executed, as fetched. */
union trn_sim_cmd {
	u32 header;
	struct trn_cmd_nop nop;
	struct trn_cmd_write write;
	struct trn_cmd_fill fill;
	struct trn_cmd_copy copy;
	struct trn_cmd_timestamp timestamp;
	struct trn_cmd_sem sem;
	struct trn_cmd_call call;
	struct trn_cmd_matmul matmul;
	struct trn_cmd_unary unary;
	struct trn_cmd_binary binary;
	struct trn_cmd_reduce reduce;
	u64 words[8];
};

/**
 * struct trn_sim_exec - execution state of one job
 * @ops: memory and clock of the device
 * @sems: the %TRN_NUM_SEMAPHORES semaphores of the job's context on its
 *        NeuronCore, or NULL if the context does not exist
 * @scratch: bounce buffer, possibly shared (see &struct trn_sim_scratch)
 * @depth: frames on @stack; 0 once the job finished
 * @stack: the job's command buffer, then one frame per CALL in progress
 * @in_cmd: @cmd is fetched and partly executed (resumes at @cursor)
 * @cmd: the current command
 * @cursor: progress within @cmd (row, or bytes)
 * @cursor_off: progress within a row of @cmd (COPY)
 * @mm_id: identity of the MATMUL in @cmd once it started, else 0: which
 *         tiles in the SRAM are its own (&trn_sim_scratch.owner)
 * @retired: commands completed so far
 * @status: &enum drm_trn_job_status, once @depth is 0
 * @error_offset: offset of the failing command in its buffer
 * @error_cmd_va: device address of the failing command
 * @fault_va: address that faulted, for %DRM_TRN_STATUS_MMU_FAULT
 */
struct trn_sim_exec {
	const struct trn_sim_exec_ops *ops;
	u64 *sems;
	struct trn_sim_scratch *scratch;

	unsigned int depth;
	struct trn_sim_frame stack[TRN_ISA_MAX_CALL_DEPTH + 1];
	bool in_cmd;
	union trn_sim_cmd cmd;
	u64 cursor;
	u64 cursor_off;
	u64 mm_id;
	u64 retired;

	u32 status;
	u64 error_offset;
	u64 error_cmd_va;
	u64 fault_va;
};

/**
 * enum trn_sim_run - why trn_sim_exec_run() returned
 * @TRN_SIM_RUN_DONE: the job finished; &trn_sim_exec.status says how
 * @TRN_SIM_RUN_YIELD: the budget is spent; call again to continue
 * @TRN_SIM_RUN_BLOCKED: a SEM_WAIT is not satisfied; call again after a
 *                       semaphore changed
 */
enum trn_sim_run {
	TRN_SIM_RUN_DONE,
	TRN_SIM_RUN_YIELD,
	TRN_SIM_RUN_BLOCKED,
};

/* Work a ring may do per turn, in bytes moved or multiply-adds (roughly). */
#define TRN_SIM_SLICE_BUDGET	SZ_1M

/*
 * SRAM per NeuronCore (module parameter sram_kib): the default is also the
 * least with which every command the ISA allows fits.
 */
#define TRN_SIM_SRAM_MIN	SZ_1M
#define TRN_SIM_SRAM_MAX	SZ_256M

int trn_sim_scratch_init(struct trn_sim_scratch *s);
int trn_sim_scratch_init_size(struct trn_sim_scratch *s, size_t size);
int trn_sim_exec_init(struct trn_sim_exec *x);
void trn_sim_exec_fini(struct trn_sim_exec *x);
void trn_sim_exec_start(struct trn_sim_exec *x, u64 va, u64 size);
enum trn_sim_run trn_sim_exec_run(struct trn_sim_exec *x, long *budget);
void trn_sim_exec_release(struct trn_sim_exec *x);
void trn_sim_scratch_free(struct trn_sim_scratch *s);
u16 trn_sim_f32_to_bf16(u32 f);

/*
 * trn_sim_math.c: the only floating point of the driver, compiled with
 * CC_FLAGS_FPU. Values are f32 bit patterns in CPU byte order. Callers
 * hold kernel_fpu_begin() around every call and keep @n small.
 */
void trn_sim_math_unary(u32 op, u32 *dst, const u32 *src, u32 n);
void trn_sim_math_binary(u32 op, u32 *dst, const u32 *a, const u32 *b,
			 u32 n, bool b_scalar);
u32 trn_sim_math_reduce(u32 op, u32 acc, const u32 *src, u32 n);
void trn_sim_math_matmul_row(u32 *c, const u32 *a, const u32 *b, u32 k0,
			     u32 k1, u32 n);

#endif /* __TRN_SIM_ISA_H__ */
