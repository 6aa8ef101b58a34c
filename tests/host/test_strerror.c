// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn_strerror() and trn_generation_name() through the shared library.
 */
#include <errno.h>
#include <limits.h>

#include "trnhal.h"
#include "check.h"

int main(void)
{
	int e;

	CHECK_STR(trn_strerror(0), "success");
	CHECK_STR(trn_strerror(-ENODEV),
		  "not a trn device, or the device has been removed");
	CHECK_STR(trn_strerror(-ECHILD),
		  "device handle was opened before fork() and cannot be used in the child");
	CHECK_STR(trn_strerror(-EPROTO),
		  "the driver's uAPI major version is not supported by this libtrnhal");
	CHECK_STR(trn_strerror(-ENOENT), "no such trn device node");
	/* Positive errno values mean the same as negative ones. */
	CHECK_STR(trn_strerror(ENODEV), trn_strerror(-ENODEV));
	/* Generic errnos fall back to the C library's description. */
	CHECK_STR(trn_strerror(-EBUSY), "Device or resource busy");
	CHECK_STR(trn_strerror(-EMFILE), "Too many open files");
	/* Errors of jobs and fences. */
	CHECK_STR(trn_strerror(-ETIME), "timed out waiting for a fence");
	CHECK_STR(trn_strerror(-ETIMEDOUT),
		  "the job ran longer than the driver's timeout and was stopped; its context is banned");
	/* Bans, cancellation and full queues (uAPI 1.3). */
	CHECK_STR(trn_strerror(-ECANCELED),
		  "the queue's context was banned (a job timed out, or too many MMU faults): its jobs are cancelled and refused");
	CHECK_STR(trn_strerror(-ESRCH),
		  "the job was cancelled: its queue was destroyed or its device file closed");
	CHECK_STR(trn_strerror(-EAGAIN),
		  "the queue is full (queue_depth unfinished jobs); nothing was queued");
	CHECK_STR(trn_strerror(-EWOULDBLOCK), trn_strerror(-EAGAIN));
	CHECK_STR(trn_strerror(-EILSEQ),
		  "the device rejected a malformed command");
	CHECK_STR(trn_strerror(-ERANGE),
		  "whether the job failed is too old for the status page to remember");
	CHECK_STR(trn_strerror(-ENOSPC), "the command buffer is full");
	/* Every errno of libtrnhal.md's table has trn's own wording. */
	CHECK_STR(trn_strerror(-E2BIG), "larger than the device could ever hold");
	CHECK_STR(trn_strerror(-EDQUOT),
		  "beyond the context's limits (max_bos_per_file, max_pinned_mib_per_file)");
	CHECK_INT(strncmp(trn_strerror(-EOPNOTSUPP), "not supported by this device", 28), 0);
	CHECK_INT(strncmp(trn_strerror(-EIO), "the queue's status page", 23), 0);
	/* Unknown values still give text, never NULL. */
	CHECK_STR(trn_strerror(-100000), "unknown error");
	CHECK_STR(trn_strerror(INT_MIN), "unknown error");
	CHECK_STR(trn_strerror(INT_MAX), "unknown error");
	for (e = -200; e <= 200; e++)
		CHECK(trn_strerror(e) && trn_strerror(e)[0]);

	CHECK_STR(trn_generation_name(TRN_GEN_SIM), "sim");
	CHECK_STR(trn_generation_name(TRN_GEN_TRN2), "trn2");
	CHECK_STR(trn_generation_name(TRN_GEN_TRN3), "trn3");
	CHECK_STR(trn_generation_name(0), "unknown");
	CHECK_STR(trn_generation_name(4), "unknown");
	return check_exit("test_strerror");
}
