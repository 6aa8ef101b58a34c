/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * The ISA's rules for a command header (Documentation/isa.md, "Errors",
 * steps 2 to 5) and for a CALL's arguments, for every backend that
 * executes command streams: the
 * simulator's interpreter and trn_pci's command processor check a header
 * the same way, so a malformed command fails with the same status on both.
 */
#ifndef __TRN_ISA_CHECK_H__
#define __TRN_ISA_CHECK_H__

#include <linux/kernel.h>
#include <linux/types.h>

#include <uapi/drm/trn_accel.h>
#include <uapi/drm/trn_isa.h>

/**
 * trn_isa_check_header() - check a command header against the ISA
 * @hdr: the header word, CPU endian
 * @room: bytes from the command to the end of its buffer
 *
 * Return: %DRM_TRN_STATUS_OK, or the status the command fails with:
 * BAD_SIZE (no size, past the end, or not the opcode's size; NOP takes
 * any), BAD_OPCODE, BAD_ARG (flags the opcode does not define).
 */
static inline u32 trn_isa_check_header(u32 hdr, u64 room)
{
	/* Words of each opcode's command (NOP: at least) and its flags. */
	static const struct {
		u8 words;
		u8 flags;
	} ops[] = {
		[TRN_OP_NOP] = { 1, 0 },
		[TRN_OP_WRITE] = { sizeof(struct trn_cmd_write) / 8,
				   TRN_WRITE_64 },
		[TRN_OP_FILL] = { sizeof(struct trn_cmd_fill) / 8, 0 },
		[TRN_OP_COPY] = { sizeof(struct trn_cmd_copy) / 8, 0 },
		[TRN_OP_TIMESTAMP] = { sizeof(struct trn_cmd_timestamp) / 8, 0 },
		[TRN_OP_SEM_SIGNAL] = { sizeof(struct trn_cmd_sem) / 8, 0 },
		[TRN_OP_SEM_WAIT] = { sizeof(struct trn_cmd_sem) / 8, 0 },
		[TRN_OP_CALL] = { sizeof(struct trn_cmd_call) / 8, 0 },
		[TRN_OP_MATMUL] = { sizeof(struct trn_cmd_matmul) / 8,
				    TRN_MATMUL_BF16 | TRN_MATMUL_ACCUMULATE |
				    TRN_MATMUL_TRANSPOSE_A |
				    TRN_MATMUL_TRANSPOSE_B },
		[TRN_OP_UNARY] = { sizeof(struct trn_cmd_unary) / 8,
				   TRN_ELEM_DST_BF16 | TRN_ELEM_SRC_U8 },
		[TRN_OP_BINARY] = { sizeof(struct trn_cmd_binary) / 8,
				    TRN_ELEM_DST_BF16 | TRN_BINARY_B_PER_ROW },
		[TRN_OP_REDUCE] = { sizeof(struct trn_cmd_reduce) / 8, 0 },
	};
	u32 op = TRN_CMD_OPCODE(hdr), words = TRN_CMD_WORDS(hdr);

	if (!words || words > room / 8)
		return DRM_TRN_STATUS_BAD_SIZE;
	if (op >= ARRAY_SIZE(ops) || !ops[op].words)
		return DRM_TRN_STATUS_BAD_OPCODE;
	if (op != TRN_OP_NOP && words != ops[op].words)
		return DRM_TRN_STATUS_BAD_SIZE;
	if (TRN_CMD_FLAGS(hdr) & ~ops[op].flags)
		return DRM_TRN_STATUS_BAD_ARG;
	return DRM_TRN_STATUS_OK;
}

/**
 * trn_isa_check_call() - check a CALL's arguments against the ISA
 * @va: the called buffer's device address
 * @size: its bytes
 * @pad: the command's pad word
 * @depth: frames on the call stack now, the top-level buffer included
 *
 * Return: %DRM_TRN_STATUS_OK, or BAD_ARG (pad not zero), BAD_ALIGN (an
 * address or size not a multiple of 8, or no size), CALL_DEPTH (the call
 * would nest deeper than %TRN_ISA_MAX_CALL_DEPTH).
 */
static inline u32 trn_isa_check_call(u64 va, u64 size, u32 pad, u32 depth)
{
	if (pad)
		return DRM_TRN_STATUS_BAD_ARG;
	if (((va | size) & 7) || !size)
		return DRM_TRN_STATUS_BAD_ALIGN;
	if (depth > TRN_ISA_MAX_CALL_DEPTH)
		return DRM_TRN_STATUS_CALL_DEPTH;
	return DRM_TRN_STATUS_OK;
}

#endif /* __TRN_ISA_CHECK_H__ */
