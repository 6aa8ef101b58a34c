// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Error and name strings.
 */
#include <errno.h>
#include <string.h>

#include "trnhal.h"
#include "internal.h"

/* Wording for errors whose meaning is specific to trn or to this library. */
static const struct {
	int err;
	const char *text;
} trn_errors[] = {
	{ ENOENT, "no such trn device node" },
	{ ENODEV, "not a trn device, or the device has been removed" },
	{ ECHILD, "device handle was opened before fork() and cannot be used in the child" },
	{ EPROTO, "the driver's uAPI major version is not supported by this libtrnhal" },
	{ EACCES, "permission denied opening the /dev/accel node" },
	{ EPERM, "operation not permitted" },
	{ EINVAL, "invalid argument" },
	{ EFAULT, "bad address (for a job: device access outside the context's mappings)" },
	{ ENOMEM, "out of memory" },
	{ ENOTTY, "ioctl not supported by the driver" },
	{ ETIME, "timed out waiting for a fence" },
	{ ETIMEDOUT, "the job ran longer than the driver's timeout and was stopped; its context is banned" },
	{ EILSEQ, "the device rejected a malformed command" },
	{ ECANCELED, "the queue's context was banned (a job timed out, or too many MMU faults): its jobs are cancelled and refused" },
	{ ESRCH, "the job was cancelled: its queue was destroyed or its device file closed" },
	{ EAGAIN, "the queue is full (queue_depth unfinished jobs); nothing was queued" },
	{ ERANGE, "whether the job failed is too old for the status page to remember" },
	{ EXDEV, "objects of different devices mixed where one device is required" },
	{ ENOSPC, "the command buffer is full" },
	{ E2BIG, "larger than the device could ever hold" },
	{ EDQUOT, "beyond the context's limits (max_bos_per_file, max_pinned_mib_per_file)" },
	{ EOPNOTSUPP, "not supported by this device or for this buffer (a capability bit is clear, or device memory and userptr buffers are not exported)" },
	{ EIO, "the queue's status page disagrees with a signalled fence (a driver bug)" },
};

TRN_PUBLIC const char *trn_strerror(int err)
{
	const char *text;
	size_t i;

	if (err == 0)
		return "success";
	/* Accept plain errno values too; everything here returns -errno. */
	if (err < 0) {
		if (err == -2147483647 - 1)
			return "unknown error";
		err = -err;
	}
	for (i = 0; i < sizeof(trn_errors) / sizeof(trn_errors[0]); i++)
		if (trn_errors[i].err == err)
			return trn_errors[i].text;
	/* strerrordesc_np() is thread-safe and never formats into a buffer. */
	text = strerrordesc_np(err);
	return text ? text : "unknown error";
}

TRN_PUBLIC const char *trn_generation_name(uint32_t generation)
{
	switch (generation) {
	case TRN_GEN_SIM:
		return "sim";
	case TRN_GEN_TRN2:
		return "trn2";
	case TRN_GEN_TRN3:
		return "trn3";
	default:
		return "unknown";
	}
}
