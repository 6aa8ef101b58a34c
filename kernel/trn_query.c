// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * DRM_IOCTL_TRN_QUERY: blocks of information about the device.
 */

#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>

#include <kunit/visibility.h>

#include <uapi/drm/trn_accel.h>

#include "trn_drv.h"

/* The first version of each answer: shorter buffers are refused. */
#define TRN_DEVICE_INFO_V1_SIZE \
	offsetofend(struct drm_trn_device_info, capabilities)
#define TRN_MEMORY_INFO_V1_SIZE \
	offsetofend(struct drm_trn_memory_info, max_ctx_pinned)

/**
 * trn_query_copy_out() - answer a query under the size rules of the uAPI
 * @args: the query; @args->size is only updated on success, so that a
 *        failing call leaves userspace's structure as it was
 * @answer: the answer in kernel memory
 * @size: the kernel's size of the answer
 * @min_size: size of the answer's first version, the least userspace may ask
 *
 * Return: 0, -EINVAL for a @args->size below @min_size, -EFAULT.
 */
VISIBLE_IF_KUNIT int trn_query_copy_out(struct drm_trn_query *args,
					const void *answer, u32 size,
					u32 min_size)
{
	u32 len;

	if (!args->size) {
		args->size = size;
		return 0;
	}
	if (args->size < min_size)
		return -EINVAL;

	len = min(args->size, size);
	if (copy_to_user(u64_to_user_ptr(args->data), answer, len))
		return -EFAULT;
	args->size = len;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(trn_query_copy_out);

static int trn_query_device_info(struct trn_device *tdev,
				 struct drm_trn_query *args)
{
	const struct trn_device_desc *desc = &tdev->desc;
	struct drm_trn_device_info info = {
		.uapi_major = DRM_TRN_UAPI_MAJOR,
		.uapi_minor = DRM_TRN_UAPI_MINOR,
		.generation = desc->generation,
		.num_cores = desc->num_cores,
		.queues_per_core = desc->queues_per_core,
		.device_id = desc->device_id,
		.hbm_size = desc->hbm_size,
		.va_start = desc->va_start,
		.va_size = desc->va_size,
		.capabilities = desc->capabilities,
		.queue_depth = trn_queue_depth(),
		.job_timeout_ms = tdev->job_timeout_ms,
		.ban_faults = TRN_BAN_FAULTS,
		.user_queues = desc->user_queues,
		.hbm_stacks = desc->hbm_stacks,
	};

	return trn_query_copy_out(args, &info, sizeof(info),
				  TRN_DEVICE_INFO_V1_SIZE);
}

static int trn_query_hbm_stacks(struct trn_device *tdev,
				struct drm_trn_query *args)
{
	const u32 entry = sizeof(struct drm_trn_hbm_stack);
	u32 n, stacks = tdev->desc.hbm_stacks;
	struct drm_trn_hbm_stack *answer;
	u64 *used, *largest;
	int ret;

	/* Whole entries only. */
	if (args->size % entry)
		return -EINVAL;
	answer = kcalloc(stacks, entry, GFP_KERNEL);
	used = kcalloc(2 * stacks, sizeof(*used), GFP_KERNEL);
	ret = -ENOMEM;
	if (answer && used) {
		largest = used + stacks;
		trn_hbm_stacks_usage(tdev, used, largest);
		for (n = 0; n < stacks; n++) {
			answer[n].size = trn_hbm_stack_size(tdev);
			answer[n].used = used[n];
			answer[n].largest_free = largest[n];
		}
		ret = trn_query_copy_out(args, answer, stacks * entry, entry);
	}
	kfree(used);
	kfree(answer);
	return ret;
}

static int trn_query_memory(struct trn_device *tdev, struct trn_file *tfile,
			    struct drm_trn_query *args)
{
	struct trn_usage *usage = tfile->usage;
	struct drm_trn_memory_info info = {
		.hbm_total = tdev->desc.hbm_size,
		.hbm_used = trn_hbm_used(tdev),
		.host_pinned = atomic64_read(&tdev->host_pinned),
		.ctx_hbm = atomic64_read(&usage->hbm_bytes),
		.ctx_pinned = atomic64_read(&usage->pinned_bytes),
		.ctx_bos = atomic64_read(&usage->bos),
		.max_ctx_bos = trn_max_bos_per_file(),
		.max_ctx_pinned = trn_max_pinned_per_file(),
	};

	return trn_query_copy_out(args, &info, sizeof(info),
				  TRN_MEMORY_INFO_V1_SIZE);
}

/**
 * trn_ioctl_query() - handler of DRM_IOCTL_TRN_QUERY
 * @drm: the device
 * @data: the ioctl's &struct drm_trn_query, in kernel memory
 * @file: the caller's file
 *
 * Return: 0 on success, -EINVAL for bad arguments or an unknown query,
 * -ENOMEM, -EFAULT if the answer cannot be written.
 */
int trn_ioctl_query(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct trn_device *tdev = to_trn_device(drm);
	struct drm_trn_query *args = data;

	if (args->flags || args->pad)
		return -EINVAL;

	switch (args->query) {
	case DRM_TRN_QUERY_DEVICE_INFO:
		return trn_query_device_info(tdev, args);
	case DRM_TRN_QUERY_MEMORY:
		return trn_query_memory(tdev, file->driver_priv, args);
	case DRM_TRN_QUERY_HBM_STACKS:
		return trn_query_hbm_stacks(tdev, args);
	default:
		return -EINVAL;
	}
}
