// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Device memory (HBM): a best-fit range allocator over the device's memory,
 * one range of offsets whose equal parts are its HBM stacks; a buffer may
 * be placed within one stack, or go wherever it fits (across stacks too).
 * Memory is cleared when it is freed, so that free memory always reads as
 * zero and a new buffer needs no clearing on the allocation path. Where
 * the kernel has the dmem cgroup controller, the device's memory is one of
 * its regions, and every buffer is charged to its creator's cgroup.
 */

#include <linux/err.h>
#include <linux/lockdep.h>
#include <linux/math.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_mm.h>

#include "trn_compat.h"
#include "trn_drv.h"

static void trn_hbm_fini(struct drm_device *drm, void *unused)
{
	struct trn_device *tdev = to_trn_device(drm);

	/* Every buffer holds a reference to the device: nothing is left. */
	if (tdev->dmem)
		dmem_cgroup_unregister_region(tdev->dmem);
	drm_mm_takedown(&tdev->hbm_mm);
}

/**
 * trn_hbm_init() - set up the device memory allocator
 * @tdev: the device, whose description gives the memory size
 *
 * Return: 0 or a negative errno.
 */
int trn_hbm_init(struct trn_device *tdev)
{
	struct dmem_cgroup_region *dmem;
	char name[64];
	int ret;

	ret = drmm_mutex_init(&tdev->drm, &tdev->hbm_lock);
	if (ret)
		return ret;
	tdev->hbm_stack_used = drmm_kcalloc(&tdev->drm, tdev->desc.hbm_stacks,
					    sizeof(*tdev->hbm_stack_used),
					    GFP_KERNEL);
	if (!tdev->hbm_stack_used)
		return -ENOMEM;
	drm_mm_init(&tdev->hbm_mm, 0, tdev->desc.hbm_size);

	/* "trn/<backend device>/hbm" in the cgroup's dmem.* files. */
	snprintf(name, sizeof(name), "trn/%s/hbm", dev_name(tdev->drm.dev));
	dmem = trn_compat_dmem_register(tdev->desc.hbm_size, name);
	if (IS_ERR(dmem)) {
		drm_mm_takedown(&tdev->hbm_mm);
		return PTR_ERR(dmem);
	}
	tdev->dmem = dmem;
	return drmm_add_action_or_reset(&tdev->drm, trn_hbm_fini, NULL);
}

/**
 * trn_dmem_charge() - charge device memory to the caller's dmem cgroup
 * @tdev: the device
 * @size: bytes
 * @pool: out: what to uncharge later (trn_dmem_uncharge()), or NULL where
 *        nothing was charged (no dmem controller)
 *
 * Return: 0, or -ENOMEM beyond the cgroup's dmem.max for the device.
 */
int trn_dmem_charge(struct trn_device *tdev, u64 size,
		    struct dmem_cgroup_pool_state **pool)
{
	struct dmem_cgroup_pool_state *limit = NULL;
	int ret;

	*pool = NULL;
	if (!tdev->dmem)
		return 0;
	ret = dmem_cgroup_try_charge(tdev->dmem, size, pool, &limit);
	/* Nothing here can be evicted to make room: no use for @limit. */
	if (limit)
		dmem_cgroup_pool_state_put(limit);
	return ret == -EAGAIN ? -ENOMEM : ret;
}

/**
 * trn_dmem_uncharge() - undo trn_dmem_charge()
 * @pool: what it returned, may be NULL
 * @size: the bytes charged
 */
void trn_dmem_uncharge(struct dmem_cgroup_pool_state *pool, u64 size)
{
	if (pool)
		dmem_cgroup_uncharge(pool, size);
}

/**
 * trn_hbm_stack_size() - bytes of one HBM stack of a device
 * @tdev: the device
 *
 * Return: the size; stack n holds the offsets [n * size, (n + 1) * size).
 */
u64 trn_hbm_stack_size(const struct trn_device *tdev)
{
	return div_u64(tdev->desc.hbm_size, tdev->desc.hbm_stacks);
}

/* Count @node's bytes as allocated (@add) or freed, in its stacks too. */
static void trn_hbm_count(struct trn_device *tdev,
			  const struct drm_mm_node *node, bool add)
{
	u64 stack_size = trn_hbm_stack_size(tdev);
	u64 start = node->start, end = node->start + node->size;
	u32 n = div64_u64(start, stack_size);

	lockdep_assert_held(&tdev->hbm_lock);
	if (add)
		tdev->hbm_used += node->size;
	else
		tdev->hbm_used -= node->size;
	/* Unplaced buffers may cross from one stack into the next. */
	for (; start < end; n++) {
		u64 part = min(end, (n + 1) * stack_size) - start;

		if (add)
			tdev->hbm_stack_used[n] += part;
		else
			tdev->hbm_stack_used[n] -= part;
		start += part;
	}
}

/* The offsets [*@start, *@end) that @stack (or any stack) covers. */
static void trn_hbm_range(const struct trn_device *tdev, int stack,
			  u64 *start, u64 *end)
{
	*start = 0;
	*end = tdev->desc.hbm_size;
	if (stack != TRN_HBM_ANY_STACK) {
		*start = stack * trn_hbm_stack_size(tdev);
		*end = *start + trn_hbm_stack_size(tdev);
	}
}

/**
 * trn_hbm_could_fit() - whether empty device memory could hold a range
 * @tdev: the device
 * @size: bytes, page aligned
 * @align: alignment of the range's start, a power of two
 * @stack: as for trn_hbm_alloc()
 *
 * Return: false if trn_hbm_alloc() could never succeed for these, however
 * much memory were free (a range larger than the stack, or one whose
 * alignment leaves too little of the stack).
 */
bool trn_hbm_could_fit(const struct trn_device *tdev, u64 size, u64 align,
		       int stack)
{
	u64 start, end;

	trn_hbm_range(tdev, stack, &start, &end);
	start = round_up(start, align);
	return start < end && size <= end - start;
}

/**
 * trn_hbm_alloc() - allocate device memory
 * @tdev: the device
 * @node: receives the range; must be zeroed
 * @size: bytes, page aligned
 * @align: alignment of the range's start, a power of two
 * @stack: the HBM stack the whole range must lie in, below
 *         &trn_device_desc.hbm_stacks, or %TRN_HBM_ANY_STACK
 *
 * The range is populated by the backend (&trn_hw_ops.hbm_populate) before
 * this returns, so that nothing on the way to a fence signalling allocates
 * to reach it.
 *
 * Return: 0, -ENOMEM when no free range (of @stack) is large enough or it
 * cannot be populated, -ENODEV when the device is gone.
 */
int trn_hbm_alloc(struct trn_device *tdev, struct drm_mm_node *node,
		  u64 size, u64 align, int stack)
{
	u64 start, end;
	int idx, ret;

	trn_hbm_range(tdev, stack, &start, &end);
	mutex_lock(&tdev->hbm_lock);
	ret = drm_mm_insert_node_in_range(&tdev->hbm_mm, node, size, align, 0,
					  start, end, DRM_MM_INSERT_BEST);
	if (!ret)
		trn_hbm_count(tdev, node, true);
	mutex_unlock(&tdev->hbm_lock);
	if (ret)
		return ret == -ENOSPC ? -ENOMEM : ret;

	if (!tdev->ops->hbm_populate)
		return 0;
	if (!drm_dev_enter(&tdev->drm, &idx)) {
		ret = -ENODEV;
	} else {
		ret = tdev->ops->hbm_populate(tdev, node->start, size);
		drm_dev_exit(idx);
	}
	if (ret)
		trn_hbm_free(tdev, node);
	return ret;
}

/**
 * trn_hbm_free() - clear and free device memory
 * @tdev: the device
 * @node: a range from trn_hbm_alloc()
 */
void trn_hbm_free(struct trn_device *tdev, struct drm_mm_node *node)
{
	int idx;

	/* A device that is gone keeps nothing for the next user to see. */
	if (drm_dev_enter(&tdev->drm, &idx)) {
		tdev->ops->hbm_clear(tdev, node->start, node->size);
		drm_dev_exit(idx);
	}

	mutex_lock(&tdev->hbm_lock);
	trn_hbm_count(tdev, node, false);
	drm_mm_remove_node(node);
	mutex_unlock(&tdev->hbm_lock);
}

/**
 * trn_hbm_used() - bytes of device memory allocated
 * @tdev: the device
 *
 * Return: the count, a snapshot.
 */
u64 trn_hbm_used(struct trn_device *tdev)
{
	u64 used;

	mutex_lock(&tdev->hbm_lock);
	used = tdev->hbm_used;
	mutex_unlock(&tdev->hbm_lock);
	return used;
}

/**
 * trn_hbm_stacks_usage() - bytes allocated, and largest free range, of
 * each HBM stack
 * @tdev: the device
 * @used: receives &trn_device_desc.hbm_stacks counts
 * @largest_free: NULL, or receives the bytes of each stack's largest free
 *                range (the part of it in the stack, where it spans more)
 *
 * Every figure is taken at one moment.
 */
void trn_hbm_stacks_usage(struct trn_device *tdev, u64 *used,
			  u64 *largest_free)
{
	u64 stack_size = trn_hbm_stack_size(tdev), start, end;
	struct drm_mm_node *hole;
	u32 n;

	mutex_lock(&tdev->hbm_lock);
	memcpy(used, tdev->hbm_stack_used,
	       tdev->desc.hbm_stacks * sizeof(*used));
	if (largest_free) {
		memset(largest_free, 0,
		       tdev->desc.hbm_stacks * sizeof(*largest_free));
		drm_mm_for_each_hole(hole, &tdev->hbm_mm, start, end) {
			for (n = div64_u64(start, stack_size);
			     n < tdev->desc.hbm_stacks &&
			     n * stack_size < end; n++) {
				u64 lo = max(start, n * stack_size);
				u64 hi = min(end, (n + 1) * stack_size);

				largest_free[n] = max(largest_free[n], hi - lo);
			}
		}
	}
	mutex_unlock(&tdev->hbm_lock);
}
