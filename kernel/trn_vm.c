// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Per-context device address spaces: every context (open file) has its own
 * range of device virtual addresses and its own MMU context in the device,
 * and every buffer it holds a handle to is mapped there, followed by an
 * unmapped guard page so that running off the end of a buffer faults.
 *
 * A mapping is reference counted: the handle holds one reference and every
 * job that lists the buffer another, so a buffer stays mapped for the jobs
 * that use it after its handle is closed, and closing a handle never waits
 * for the device.
 */

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_mm.h>
#include <drm/drm_print.h>

#include <uapi/drm/trn_accel.h>

#include "trn_drv.h"

#define TRN_VM_GUARD	PAGE_SIZE

/**
 * trn_vm_init() - give a new context its address space
 * @ctx: the context; @ctx->tdev must be set
 *
 * Return: 0 or a negative errno.
 */
int trn_vm_init(struct trn_ctx *ctx)
{
	struct trn_device *tdev = ctx->tdev;
	int idx, ret;

	mutex_init(&ctx->va_lock);
	drm_mm_init(&ctx->va_mm, tdev->desc.va_start, tdev->desc.va_size);

	ret = xa_alloc_irq(&tdev->contexts, &ctx->id, ctx,
			   XA_LIMIT(1, U16_MAX), GFP_KERNEL);
	if (ret)
		goto err_mm;

	if (!drm_dev_enter(&tdev->drm, &idx)) {
		ret = -ENODEV;
		goto err_erase;
	}
	ret = tdev->ops->ctx_init(tdev, ctx->id);
	drm_dev_exit(idx);
	if (ret)
		goto err_erase;
	return 0;

err_erase:
	xa_erase_irq(&tdev->contexts, ctx->id);
err_mm:
	drm_mm_takedown(&ctx->va_mm);
	mutex_destroy(&ctx->va_lock);
	return ret;
}

/**
 * trn_vm_fini() - tear down a context's address space
 * @ctx: the context, whose buffers are all unmapped already
 */
void trn_vm_fini(struct trn_ctx *ctx)
{
	struct trn_device *tdev = ctx->tdev;
	int idx;

	if (drm_dev_enter(&tdev->drm, &idx)) {
		tdev->ops->ctx_fini(tdev, ctx->id);
		drm_dev_exit(idx);
	}
	/*
	 * Only now may the number be reused, and fault reports no longer find
	 * the context.
	 */
	xa_erase_irq(&tdev->contexts, ctx->id);
	drm_mm_takedown(&ctx->va_mm);
	mutex_destroy(&ctx->va_lock);
}

/**
 * trn_vm_map() - map a buffer object into a context
 * @ctx: the context
 * @bo: the buffer
 *
 * Return: the mapping with one reference (it holds references to @ctx and
 * @bo), or an ERR_PTR(): -ENOMEM when the address space is full, -ENODEV
 * when the device is gone, or the backend's error.
 */
struct trn_mapping *trn_vm_map(struct trn_ctx *ctx, struct trn_bo *bo)
{
	struct trn_device *tdev = ctx->tdev;
	const struct trn_device_desc *desc = &tdev->desc;
	struct trn_mmu_map map = {
		.size = bo->base.size,
		.prot = TRN_MMU_READ,
		.sgt = bo->sgt,
		.hbm_offset = bo->hbm.start,
	};
	struct trn_mapping *mapping;
	int idx, ret;

	if (!(bo->flags & DRM_TRN_BO_DEVICE_READ_ONLY))
		map.prot |= TRN_MMU_WRITE;

	mapping = kzalloc(sizeof(*mapping), GFP_KERNEL_ACCOUNT);
	if (!mapping)
		return ERR_PTR(-ENOMEM);
	kref_init(&mapping->refcount);
	INIT_LIST_HEAD(&mapping->link);

	mutex_lock(&ctx->va_lock);
	ret = drm_mm_insert_node_in_range(&ctx->va_mm, &mapping->node,
					  bo->base.size + TRN_VM_GUARD,
					  bo->align, 0, desc->va_start,
					  desc->va_start + desc->va_size,
					  DRM_MM_INSERT_BEST);
	if (ret) {
		ret = ret == -ENOSPC ? -ENOMEM : ret;
		goto err_unlock;
	}
	map.va = mapping->node.start;

	if (!drm_dev_enter(&tdev->drm, &idx)) {
		ret = -ENODEV;
		goto err_remove;
	}
	ret = tdev->ops->mmu_map(tdev, ctx->id, &map);
	drm_dev_exit(idx);
	if (ret)
		goto err_remove;
	mutex_unlock(&ctx->va_lock);

	mapping->ctx = trn_ctx_get(ctx);
	drm_gem_object_get(&bo->base);
	mapping->bo = bo;
	return mapping;

err_remove:
	drm_mm_remove_node(&mapping->node);
err_unlock:
	mutex_unlock(&ctx->va_lock);
	kfree(mapping);
	return ERR_PTR(ret);
}

static void trn_mapping_release(struct kref *kref)
{
	struct trn_mapping *mapping = container_of(kref, struct trn_mapping,
						   refcount);
	struct trn_ctx *ctx = mapping->ctx;
	struct trn_device *tdev = ctx->tdev;
	int idx;

	mutex_lock(&ctx->va_lock);
	if (drm_dev_enter(&tdev->drm, &idx)) {
		tdev->ops->mmu_unmap(tdev, ctx->id, mapping->node.start,
				     mapping->node.size - TRN_VM_GUARD);
		drm_dev_exit(idx);
	}
	drm_mm_remove_node(&mapping->node);
	mutex_unlock(&ctx->va_lock);

	drm_gem_object_put(&mapping->bo->base);
	trn_ctx_put(ctx);
	kfree(mapping);
}

/**
 * trn_mapping_put() - drop a reference to a mapping
 * @mapping: the mapping
 *
 * The last reference unmaps the buffer from the device, which may sleep,
 * and drops the mapping's references to the buffer and the context.
 */
void trn_mapping_put(struct trn_mapping *mapping)
{
	kref_put(&mapping->refcount, trn_mapping_release);
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
	struct trn_ctx *c;
	unsigned long flags;

	xa_lock_irqsave(&tdev->contexts, flags);
	c = xa_load(&tdev->contexts, ctx);
	if (c) {
		atomic64_inc(&c->mmu_faults);
		atomic64_set(&c->last_fault_va, va);
	}
	xa_unlock_irqrestore(&tdev->contexts, flags);
	atomic64_inc(&tdev->stats.mmu_faults);
	trn_event(tdev, TRN_EVENT_FAULT);

	drm_dbg_driver(&tdev->drm, "context %u: MMU fault on %s at 0x%llx\n",
		       ctx, write ? "write" : "read", va);
}
EXPORT_SYMBOL_GPL(trn_device_mmu_fault);
