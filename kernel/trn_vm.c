// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Per-context device address spaces: every open file has its own range of
 * device virtual addresses and its own MMU context in the device, and every
 * buffer it holds a handle to is mapped there, followed by an unmapped guard
 * page so that running off the end of a buffer faults.
 */

#include <linux/mm.h>
#include <linux/xarray.h>

#include <drm/drm_drv.h>
#include <drm/drm_mm.h>
#include <drm/drm_print.h>

#include <uapi/drm/trn_accel.h>

#include "trn_drv.h"

#define TRN_VM_GUARD	PAGE_SIZE

/**
 * trn_vm_init() - give a new context its address space
 * @tfile: the context; @tfile->tdev must be set
 *
 * Return: 0 or a negative errno.
 */
int trn_vm_init(struct trn_file *tfile)
{
	struct trn_device *tdev = tfile->tdev;
	int idx, ret;

	mutex_init(&tfile->va_lock);
	drm_mm_init(&tfile->va_mm, tdev->desc.va_start, tdev->desc.va_size);

	ret = xa_alloc_irq(&tdev->contexts, &tfile->ctx, tfile,
			   XA_LIMIT(1, U16_MAX), GFP_KERNEL);
	if (ret)
		goto err_mm;

	if (!drm_dev_enter(&tdev->drm, &idx)) {
		ret = -ENODEV;
		goto err_erase;
	}
	ret = tdev->ops->ctx_init(tdev, tfile->ctx);
	drm_dev_exit(idx);
	if (ret)
		goto err_erase;
	return 0;

err_erase:
	xa_erase_irq(&tdev->contexts, tfile->ctx);
err_mm:
	drm_mm_takedown(&tfile->va_mm);
	mutex_destroy(&tfile->va_lock);
	return ret;
}

/**
 * trn_vm_fini() - tear down a context's address space
 * @tfile: the context, whose buffers are all unmapped already
 */
void trn_vm_fini(struct trn_file *tfile)
{
	struct trn_device *tdev = tfile->tdev;
	int idx;

	if (drm_dev_enter(&tdev->drm, &idx)) {
		tdev->ops->ctx_fini(tdev, tfile->ctx);
		drm_dev_exit(idx);
	}
	/*
	 * Only now may the number be reused, and fault reports no longer find
	 * the context.
	 */
	xa_erase_irq(&tdev->contexts, tfile->ctx);
	drm_mm_takedown(&tfile->va_mm);
	mutex_destroy(&tfile->va_lock);
}

/**
 * trn_vm_map() - map a buffer object into a context
 * @tfile: the context
 * @bo: the buffer
 * @mapping: receives the virtual range; must be zeroed
 *
 * Return: 0, -ENOMEM when the address space is full, -ENODEV when the
 * device is gone, or the backend's error.
 */
int trn_vm_map(struct trn_file *tfile, struct trn_bo *bo,
	       struct trn_mapping *mapping)
{
	struct trn_device *tdev = tfile->tdev;
	const struct trn_device_desc *desc = &tdev->desc;
	struct trn_mmu_map map = {
		.size = bo->base.size,
		.prot = TRN_MMU_READ,
		.sgt = bo->sgt,
		.hbm_offset = bo->hbm.start,
	};
	int idx, ret;

	if (!(bo->flags & DRM_TRN_BO_DEVICE_READ_ONLY))
		map.prot |= TRN_MMU_WRITE;

	mutex_lock(&tfile->va_lock);
	ret = drm_mm_insert_node_in_range(&tfile->va_mm, &mapping->node,
					  bo->base.size + TRN_VM_GUARD,
					  bo->align, 0, desc->va_start,
					  desc->va_start + desc->va_size,
					  DRM_MM_INSERT_BEST);
	if (ret) {
		ret = ret == -ENOSPC ? -ENOMEM : ret;
		goto out_unlock;
	}
	map.va = mapping->node.start;

	if (!drm_dev_enter(&tdev->drm, &idx)) {
		ret = -ENODEV;
		goto err_remove;
	}
	ret = tdev->ops->mmu_map(tdev, tfile->ctx, &map);
	drm_dev_exit(idx);
	if (ret)
		goto err_remove;

	mapping->tfile = tfile;
	mutex_unlock(&tfile->va_lock);
	return 0;

err_remove:
	drm_mm_remove_node(&mapping->node);
out_unlock:
	mutex_unlock(&tfile->va_lock);
	return ret;
}

/**
 * trn_vm_unmap() - remove a buffer object's mapping from its context
 * @tfile: the context
 * @mapping: a mapping made by trn_vm_map()
 */
void trn_vm_unmap(struct trn_file *tfile, struct trn_mapping *mapping)
{
	struct trn_device *tdev = tfile->tdev;
	int idx;

	mutex_lock(&tfile->va_lock);
	if (drm_dev_enter(&tdev->drm, &idx)) {
		tdev->ops->mmu_unmap(tdev, tfile->ctx, mapping->node.start,
				     mapping->node.size - TRN_VM_GUARD);
		drm_dev_exit(idx);
	}
	drm_mm_remove_node(&mapping->node);
	mutex_unlock(&tfile->va_lock);
}

/**
 * trn_device_mmu_fault() - a backend reports a faulting device access
 * @tdev: the device
 * @ctx: the MMU context the access was made in
 * @va: the faulting device virtual address
 * @write: whether the access was a write
 *
 * The fault is charged to its context only. May be called from any
 * context that can take a spinlock.
 */
void trn_device_mmu_fault(struct trn_device *tdev, u32 ctx, u64 va,
			  bool write)
{
	struct trn_file *tfile;
	unsigned long flags;

	xa_lock_irqsave(&tdev->contexts, flags);
	tfile = xa_load(&tdev->contexts, ctx);
	if (tfile) {
		atomic64_inc(&tfile->mmu_faults);
		atomic64_set(&tfile->last_fault_va, va);
	}
	xa_unlock_irqrestore(&tdev->contexts, flags);

	drm_dbg_driver(&tdev->drm, "context %u: MMU fault on %s at 0x%llx\n",
		       ctx, write ? "write" : "read", va);
}
EXPORT_SYMBOL_GPL(trn_device_mmu_fault);
