/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn_isa.h - the command-stream ISA of trn devices: what a job's command
 * buffer holds and the device executes.
 *
 * This is a device contract, not an ioctl contract: the kernel never reads
 * command streams (the device does, through the submitting context's MMU),
 * so the ISA is versioned on its own (%TRN_ISA_VERSION) and documented in
 * Documentation/isa.md. The ioctls that submit jobs are in trn_accel.h.
 */
#ifndef _UAPI_TRN_ISA_H_
#define _UAPI_TRN_ISA_H_

#include <linux/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: command-stream ISA v1
 *
 * A command buffer is a sequence of commands, each a whole number of 8-byte
 * words, little endian, starting 8-byte aligned. The first 32-bit word of
 * every command is its header: bits 0-7 opcode (TRN_OP_*), bits 8-15 flags
 * (per opcode; unknown flags are BAD_ARG), bits 16-31 the command's size in
 * 8-byte words including the header. Commands execute in order; each
 * finishes (its writes are visible to the next command) before the next
 * starts. Documentation/isa.md is the full reference (numerics, limits).
 */
#define TRN_ISA_VERSION			1
#define TRN_ISA_MAX_CALL_DEPTH		4
/** TRN_ISA_MAX_DIM - largest rows, cols, m, n or k of an operation */
#define TRN_ISA_MAX_DIM			(1U << 16)
/** TRN_ISA_MAX_MATMUL_B_BYTES - largest MATMUL B operand (k * n * 4) */
#define TRN_ISA_MAX_MATMUL_B_BYTES	(1U << 26)

#define TRN_CMD_HEADER(op, flags, words) \
	((__u32)(op) | ((__u32)(flags) << 8) | ((__u32)(words) << 16))
#define TRN_CMD_OPCODE(hdr)		((hdr) & 0xff)
#define TRN_CMD_FLAGS(hdr)		(((hdr) >> 8) & 0xff)
#define TRN_CMD_WORDS(hdr)		((hdr) >> 16)

enum trn_opcode {
	TRN_OP_NOP = 0x00,
	TRN_OP_WRITE = 0x01,
	TRN_OP_FILL = 0x02,
	TRN_OP_COPY = 0x03,
	TRN_OP_TIMESTAMP = 0x04,
	TRN_OP_SEM_SIGNAL = 0x05,
	TRN_OP_SEM_WAIT = 0x06,
	TRN_OP_CALL = 0x07,
	TRN_OP_MATMUL = 0x10,
	TRN_OP_UNARY = 0x11,
	TRN_OP_BINARY = 0x12,
	TRN_OP_REDUCE = 0x13,
};

/** TRN_NUM_SEMAPHORES - device semaphores of a context on each NeuronCore */
#define TRN_NUM_SEMAPHORES		256

/* Flags of WRITE. */
#define TRN_WRITE_64			(1U << 0)
/* Flags of MATMUL. */
#define TRN_MATMUL_BF16			(1U << 0)
#define TRN_MATMUL_ACCUMULATE		(1U << 1)
/* A is stored transposed: k rows of m elements, row pitch @lda. */
#define TRN_MATMUL_TRANSPOSE_A		(1U << 2)
/* B is stored transposed: n rows of k elements, row pitch @ldb. */
#define TRN_MATMUL_TRANSPOSE_B		(1U << 3)
/* Flags of UNARY and BINARY. */
#define TRN_ELEM_DST_BF16		(1U << 0)
/* Flags of BINARY: B holds one value per row, repeated along the row. */
#define TRN_BINARY_B_PER_ROW		(1U << 1)
/*
 * Flags of UNARY: the operand holds unsigned bytes, each taken as the f32
 * of its value (0 to 255, exact); src and src_pitch need no alignment.
 * Since uAPI 1.7, where the device reports %DRM_TRN_CAP_SRC_U8.
 */
#define TRN_ELEM_SRC_U8			(1U << 2)

/*
 * Operations of UNARY, BINARY and REDUCE. Plain macros, like the flags, so
 * that libtrnhal's identical definitions may coexist with them.
 */
#define TRN_UNARY_COPY	0
#define TRN_UNARY_NEG	1
#define TRN_UNARY_ABS	2
#define TRN_UNARY_RELU	3
#define TRN_UNARY_GELU	4
#define TRN_UNARY_EXP	5
#define TRN_UNARY_RECIP	6
#define TRN_UNARY_SQRT	7
#define TRN_UNARY_TANH	8
#define TRN_UNARY_RELU_GRAD	9
/* Since uAPI 1.5, where the device reports %DRM_TRN_CAP_LOG_ERF. */
#define TRN_UNARY_LOG		10
#define TRN_UNARY_ERF		11
#define TRN_UNARY_GELU_ERF	12
#define TRN_UNARY_GELU_ERF_GRAD	13

#define TRN_BINARY_ADD	0
#define TRN_BINARY_SUB	1
#define TRN_BINARY_MUL	2
#define TRN_BINARY_DIV	3
#define TRN_BINARY_MAX	4
#define TRN_BINARY_MIN	5

#define TRN_REDUCE_SUM	0
#define TRN_REDUCE_MAX	1

/**
 * struct trn_cmd_nop - NOP: 1 or more words, contents ignored
 * @header: opcode TRN_OP_NOP, no flags, the size in words (1 or more)
 * @pad: ignored, like every word after it
 */
struct trn_cmd_nop {
	__u32 header;
	__u32 pad;
};

/**
 * struct trn_cmd_write - WRITE: store an immediate value
 * @header: opcode TRN_OP_WRITE, flags: %TRN_WRITE_64, the size in words
 * @pad: zero
 * @dst: device address, 4-byte aligned (8 with %TRN_WRITE_64)
 * @value: what is stored: its low 32 bits, or all 64 with %TRN_WRITE_64
 */
struct trn_cmd_write {
	__u32 header;
	__u32 pad;
	__u64 dst;
	__u64 value;
};

/**
 * struct trn_cmd_fill - FILL: repeat a 32-bit pattern
 * @header: opcode TRN_OP_FILL, no flags, the size in words
 * @pattern: the pattern, stored as it is in the command (little endian)
 * @dst: device address, 4-byte aligned
 * @size: bytes, a multiple of 4
 */
struct trn_cmd_fill {
	__u32 header;
	__u32 pattern;
	__u64 dst;
	__u64 size;
};

/**
 * struct trn_cmd_copy - COPY: @height rows of @width bytes (1D: @height 1)
 * @header: opcode TRN_OP_COPY, no flags, the size in words
 * @pad: zero
 * @dst: device address of the first destination row
 * @src: device address of the first source row
 * @width: bytes per row
 * @height: rows
 * @dst_pitch: bytes from one destination row to the next
 * @src_pitch: bytes from one source row to the next
 */
struct trn_cmd_copy {
	__u32 header;
	__u32 pad;
	__u64 dst;
	__u64 src;
	__u64 width;
	__u64 height;
	__u64 dst_pitch;
	__u64 src_pitch;
};

/**
 * struct trn_cmd_timestamp - TIMESTAMP: store the device clock
 * @header: opcode TRN_OP_TIMESTAMP, no flags, the size in words
 * @pad: zero
 * @dst: device address, 8-byte aligned, of the u64 time in ns
 */
struct trn_cmd_timestamp {
	__u32 header;
	__u32 pad;
	__u64 dst;
};

/**
 * struct trn_cmd_sem - SEM_SIGNAL and SEM_WAIT on a device semaphore
 * @header: opcode TRN_OP_SEM_SIGNAL or TRN_OP_SEM_WAIT, no flags, the
 *	size in words
 * @sem: the semaphore of the job's context on its NeuronCore, below
 *	%TRN_NUM_SEMAPHORES
 * @value: SEM_SIGNAL adds it (wrapping); SEM_WAIT stalls the job's queue
 *	until the semaphore is at least this
 */
struct trn_cmd_sem {
	__u32 header;
	__u32 sem;
	__u64 value;
};

/**
 * struct trn_cmd_call - CALL: run a second-level command buffer
 * @header: opcode TRN_OP_CALL, no flags, the size in words
 * @pad: zero
 * @va: its device address, 8-byte aligned
 * @size: its bytes, a non-zero multiple of 8; nesting is bounded by
 *	%TRN_ISA_MAX_CALL_DEPTH
 */
struct trn_cmd_call {
	__u32 header;
	__u32 pad;
	__u64 va;
	__u64 size;
};

/**
 * struct trn_cmd_matmul - MATMUL: C[m][n] (+)= A[m][k] * B[k][n]
 * @header: opcode TRN_OP_MATMUL, flags: TRN_MATMUL_*, the size in words
 * @m: rows of A and C
 * @n: columns of B and C
 * @k: columns of A, rows of B
 * @a: device address of A
 * @b: device address of B
 * @c: device address of C
 * @lda: row pitch of A in bytes (of what is stored, with the transpose
 *	flags)
 * @ldb: row pitch of B in bytes (likewise)
 * @ldc: row pitch of C in bytes
 *
 * A and B are f32, or bf16 with %TRN_MATMUL_BF16; C is f32, accumulated
 * in f32. Row-major.
 */
struct trn_cmd_matmul {
	__u32 header;
	__u32 m;
	__u32 n;
	__u32 k;
	__u64 a;
	__u64 b;
	__u64 c;
	__u64 lda;
	__u64 ldb;
	__u64 ldc;
};

/**
 * struct trn_cmd_unary - UNARY: dst[r][c] = op(src[r][c]) on f32
 * @header: opcode TRN_OP_UNARY, flags: %TRN_ELEM_DST_BF16,
 *	%TRN_ELEM_SRC_U8, the size in words
 * @op: TRN_UNARY_*
 * @rows: rows
 * @cols: elements per row
 * @dst: device address of the result
 * @src: device address of the operand (f32, or bytes with %TRN_ELEM_SRC_U8)
 * @dst_pitch: bytes from one result row to the next
 * @src_pitch: bytes from one operand row to the next (0: one row for all)
 */
struct trn_cmd_unary {
	__u32 header;
	__u32 op;
	__u32 rows;
	__u32 cols;
	__u64 dst;
	__u64 src;
	__u64 dst_pitch;
	__u64 src_pitch;
};

/**
 * struct trn_cmd_binary - BINARY: dst[r][c] = a[r][c] op b[r][c] on f32
 * @header: opcode TRN_OP_BINARY, flags: %TRN_ELEM_DST_BF16,
 *	%TRN_BINARY_B_PER_ROW, the size in words
 * @op: TRN_BINARY_*
 * @rows: rows
 * @cols: elements per row
 * @dst: device address of the result
 * @a: device address of the first operand
 * @b: device address of the second operand
 * @dst_pitch: bytes from one result row to the next
 * @a_pitch: bytes from one row of @a to the next (0: one row for all)
 * @b_pitch: bytes from one row of @b to the next (0: one row for all)
 */
struct trn_cmd_binary {
	__u32 header;
	__u32 op;
	__u32 rows;
	__u32 cols;
	__u64 dst;
	__u64 a;
	__u64 b;
	__u64 dst_pitch;
	__u64 a_pitch;
	__u64 b_pitch;
};

/**
 * struct trn_cmd_reduce - REDUCE: dst[r] = op over c of src[r][c], f32
 * @header: opcode TRN_OP_REDUCE, no flags, the size in words
 * @op: TRN_REDUCE_*
 * @rows: rows
 * @cols: elements per row
 * @dst: device address of the @rows results
 * @src: device address of the operand
 * @src_pitch: bytes from one operand row to the next
 */
struct trn_cmd_reduce {
	__u32 header;
	__u32 op;
	__u32 rows;
	__u32 cols;
	__u64 dst;
	__u64 src;
	__u64 src_pitch;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_TRN_ISA_H_ */
