// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Buffer objects: device memory, pinned host memory, pinned user memory and
 * imported dma-bufs behind one GEM object type; their creation ioctls, CPU
 * mappings, PRIME export, DMA syncs at job boundaries, accounting against
 * per-file limits, RLIMIT_MEMLOCK and cgroups, and fdinfo.
 *
 * A buffer is mapped into the address space of every context that holds a
 * handle to it: the GEM open/close callbacks map it and drop the handle's
 * reference to the mapping (jobs hold their own).
 *
 * A buffer is charged, from its creation until it is freed, to the file
 * that created it (an imported one: that first imported it), whoever holds
 * it last: closing a handle or the file never launders the charge. Host
 * buffers are pages the DMA API gives the device directly (never bounced),
 * charged to the creator's memory cgroup; user
 * memory counts against its owner's RLIMIT_MEMLOCK; device memory is a
 * dmem cgroup region where the kernel has that controller.
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#ifdef CONFIG_X86
#include <asm/set_memory.h>
#endif

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <drm/drm_vma_manager.h>

#include <uapi/drm/trn_accel.h>

#include "trn_compat.h"
#include "trn_drv.h"

#define TRN_BO_CREATE_FLAGS \
	(DRM_TRN_BO_HOST_WC | DRM_TRN_BO_DEVICE_READ_ONLY | \
	 DRM_TRN_BO_ON_STACK | DRM_TRN_BO_STACK_MASK)

/* Host and user memory is tracked in one page array: bound its size. */
#define TRN_BO_MAX_HOST_SIZE \
	((u64)(INT_MAX / sizeof(struct page *)) << PAGE_SHIFT)

static const struct drm_gem_object_funcs trn_gem_funcs;

/**
 * trn_usage_create() - what a new file will be charged for
 *
 * Return: the usage with one reference, or NULL.
 */
struct trn_usage *trn_usage_create(void)
{
	struct trn_usage *usage = kzalloc(sizeof(*usage), GFP_KERNEL_ACCOUNT);

	if (usage)
		kref_init(&usage->refcount);
	return usage;
}

static void trn_usage_release(struct kref *kref)
{
	kfree(container_of(kref, struct trn_usage, refcount));
}

/**
 * trn_usage_put() - drop a reference to a file's usage
 * @usage: the usage
 */
void trn_usage_put(struct trn_usage *usage)
{
	kref_put(&usage->refcount, trn_usage_release);
}

/* Charge @bo, of @hbm device and @pinned host bytes, to @usage. */
static int trn_bo_charge(struct trn_bo *bo, struct trn_usage *usage, u64 hbm,
			 u64 pinned)
{
	if (atomic64_inc_return(&usage->bos) > trn_max_bos_per_file())
		goto err_bos;
	if (pinned && atomic64_add_return(pinned, &usage->pinned_bytes) >
		      trn_max_pinned_per_file())
		goto err_pinned;
	atomic64_add(hbm, &usage->hbm_bytes);
	kref_get(&usage->refcount);
	bo->usage = usage;
	bo->charged_pinned = pinned;
	return 0;

err_pinned:
	atomic64_sub(pinned, &usage->pinned_bytes);
err_bos:
	atomic64_dec(&usage->bos);
	return -EDQUOT;
}

static void trn_bo_uncharge(struct trn_bo *bo)
{
	struct trn_usage *usage = bo->usage;

	if (!usage)
		return;
	if (bo->placement == DRM_TRN_PLACEMENT_HBM)
		atomic64_sub(bo->base.size, &usage->hbm_bytes);
	atomic64_sub(bo->charged_pinned, &usage->pinned_bytes);
	atomic64_dec(&usage->bos);
	bo->usage = NULL;
	trn_usage_put(usage);
}

/*
 * Count @npages of user memory a userptr buffer pins against the caller's
 * RLIMIT_MEMLOCK, per user as io_uring does (so that many processes or
 * files of one user share one limit), unless it may lock memory anyway.
 */
static int trn_bo_account_locked(struct trn_bo *bo, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct user_struct *user;
	unsigned long cur, new;

	if (capable(CAP_IPC_LOCK))
		return 0;
	user = get_current_user();
	cur = atomic_long_read(&user->locked_vm);
	do {
		new = cur + npages;
		if (new < cur || new > limit) {
			free_uid(user);
			return -ENOMEM;
		}
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	bo->user = user;
	return 0;
}

static void trn_bo_unaccount_locked(struct trn_bo *bo)
{
	if (!bo->user)
		return;
	atomic_long_sub(bo->base.size >> PAGE_SHIFT, &bo->user->locked_vm);
	free_uid(bo->user);
	bo->user = NULL;
}

/* A buffer with no memory yet; drm_gem_object_put() undoes every step. */
static struct trn_bo *trn_bo_alloc(u32 placement, u32 flags, u64 align)
{
	struct trn_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);

	if (!bo)
		return NULL;
	bo->base.funcs = &trn_gem_funcs;
	bo->placement = placement;
	bo->flags = flags;
	bo->align = align;
	/* What the device may not write, it only reads. */
	bo->dma_dir = flags & DRM_TRN_BO_DEVICE_READ_ONLY ? DMA_TO_DEVICE :
							   DMA_BIDIRECTIONAL;
	spin_lock_init(&bo->sync_lock);
	mutex_init(&bo->lock);
	INIT_LIST_HEAD(&bo->mappings);
	INIT_LIST_HEAD(&bo->import_link);
	INIT_LIST_HEAD(&bo->dma_link);
	return bo;
}

/* Whether any part of @sgt needs explicit syncs (bounce buffering). */
static bool trn_sgt_needs_sync(struct device *dev, struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i)
		if (dma_need_sync(dev, sg_dma_address(sg)))
			return true;
	return false;
}

static int trn_bo_dma_map(struct trn_bo *bo, unsigned int npages)
{
	struct drm_device *drm = bo->base.dev;
	struct sg_table *sgt;
	int ret;

	sgt = drm_prime_pages_to_sg(drm, bo->pages, npages);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	/*
	 * No sync now: the device gets the memory when a job that lists the
	 * buffer starts (trn_bo_dma_begin()), and several buffers may map the
	 * same pages (userptr ranges overlap), which streaming mappings allow.
	 */
	ret = dma_map_sgtable(drm->dev, sgt, bo->dma_dir,
			      DMA_ATTR_SKIP_CPU_SYNC);
	if (ret) {
		sg_free_table(sgt);
		kfree(sgt);
		return ret;
	}
	bo->sgt = sgt;
	bo->dma_sync = trn_sgt_needs_sync(drm->dev, sgt);
	return 0;
}

static void trn_bo_dma_unmap(struct trn_bo *bo)
{
	/* The last job to finish synced for the CPU already. */
	dma_unmap_sgtable(bo->base.dev->dev, bo->sgt, bo->dma_dir,
			  DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(bo->sgt);
	kfree(bo->sgt);
	bo->sgt = NULL;
}

/*
 * Host buffers come from the DMA API, so the device reaches them without
 * bounce buffers, also under swiotlb=force or in a confidential guest.
 * User and imported buffers are other people's memory and may need syncs
 * (dma_need_sync(): bounce buffers, a device that does not snoop); with
 * bounce buffering the device works on a copy, and a sync copies it whole
 * one way or the other. The rule: the first of the jobs that use such a
 * buffer at a time hands the CPU's writes to the device when it starts;
 * every job hands the device's writes back to the CPU when it ends, before
 * its fence signals. Where nothing needs syncs this costs a flag test.
 */

/**
 * trn_bo_dma_begin() - a job that lists a buffer is handed to the device
 * @bo: the buffer
 *
 * Gives the device the CPU's writes, unless other jobs use the buffer
 * already (the device owns it then; the CPU's later writes reach it only
 * once those finished). Allocates nothing; safe in any context.
 */
void trn_bo_dma_begin(struct trn_bo *bo)
{
	unsigned long flags;

	if (!bo->dma_sync)
		return;
	spin_lock_irqsave(&bo->sync_lock, flags);
	/* Again under the lock: the mapping may have gone with the device. */
	if (bo->dma_sync && !bo->dev_users++)
		dma_sync_sgtable_for_device(bo->base.dev->dev, bo->sgt,
					    bo->dma_dir);
	spin_unlock_irqrestore(&bo->sync_lock, flags);
}

/**
 * trn_bo_dma_end() - a job that listed a buffer is done with the device
 * @bo: the buffer
 *
 * Gives the CPU what the device wrote, at the end of every such job (so
 * that a job's results are visible when its fence signals). Allocates
 * nothing; safe in any context.
 */
void trn_bo_dma_end(struct trn_bo *bo)
{
	unsigned long flags;

	if (!bo->dma_sync)
		return;
	spin_lock_irqsave(&bo->sync_lock, flags);
	if (!bo->dma_sync)
		goto out_unlock;
	if (bo->dma_dir != DMA_TO_DEVICE)
		dma_sync_sgtable_for_cpu(bo->base.dev->dev, bo->sgt,
					 bo->dma_dir);
	if (!WARN_ON_ONCE(!bo->dev_users))
		bo->dev_users--;
out_unlock:
	spin_unlock_irqrestore(&bo->sync_lock, flags);
}

/* Free what trn_bo_host_alloc() allocated, partly or fully. */
static void trn_bo_host_free(struct trn_bo *bo)
{
	struct device *dev = bo->base.dev->dev;
	unsigned int npages = bo->base.size >> PAGE_SHIFT, i;

	if (bo->sgt) {
		/* Built by hand from the DMA API's addresses: not mapped. */
		sg_free_table(bo->sgt);
		kfree(bo->sgt);
		bo->sgt = NULL;
	}
	if (bo->pages && bo->page_dma) {
#ifdef CONFIG_X86
		if (bo->wc)
			set_pages_array_wb(bo->pages, npages);
#endif
		for (i = 0; i < npages && bo->pages[i]; i++) {
			/* Replaced at unplug: the DMA API has it back. */
			if (bo->page_dma[i] == DMA_MAPPING_ERROR)
				__free_page(bo->pages[i]);
			else
				dma_free_pages(dev, PAGE_SIZE, bo->pages[i],
					       bo->page_dma[i], bo->dma_dir);
		}
	}
	kvfree(bo->page_dma);
	kvfree(bo->pages);
	bo->page_dma = NULL;
	bo->pages = NULL;
}

static void trn_gem_free(struct drm_gem_object *obj)
{
	struct trn_device *tdev = to_trn_device(obj->dev);
	struct trn_bo *bo = to_trn_bo(obj);
	unsigned int npages = obj->size >> PAGE_SHIFT;

	/* Every mapping holds a reference: none is left. */
	WARN_ON(!list_empty(&bo->mappings));
	/* Out of trn_gem_unplug()'s reach before anything is freed. */
	if (!list_empty(&bo->dma_link)) {
		mutex_lock(&tdev->import_lock);
		list_del(&bo->dma_link);
		mutex_unlock(&tdev->import_lock);
	}
	if (bo->in_host_pinned)
		atomic64_sub(obj->size, &tdev->host_pinned);

	switch (bo->placement) {
	case DRM_TRN_PLACEMENT_HBM:
		if (drm_mm_node_allocated(&bo->hbm))
			trn_hbm_free(tdev, &bo->hbm);
		trn_dmem_uncharge(bo->dmem_pool, obj->size);
		break;
	case DRM_TRN_PLACEMENT_HOST:
		trn_bo_host_free(bo);
		break;
	case DRM_TRN_PLACEMENT_USERPTR:
		if (bo->sgt)
			trn_bo_dma_unmap(bo);
		if (bo->pages) {
			unpin_user_pages_dirty_lock(bo->pages, npages,
						    !(bo->flags &
						      DRM_TRN_BO_DEVICE_READ_ONLY));
			kvfree(bo->pages);
		}
		trn_bo_unaccount_locked(bo);
		break;
	case DRM_TRN_PLACEMENT_IMPORTED:
		mutex_lock(&tdev->import_lock);
		list_del(&bo->import_link);
		mutex_unlock(&tdev->import_lock);
		drm_prime_gem_destroy(obj, bo->sgt);
		break;
	}
	trn_bo_uncharge(bo);

	drm_gem_object_release(obj);
	mutex_destroy(&bo->lock);
	kfree(bo);
}

static struct trn_mapping *trn_bo_find_mapping(struct trn_bo *bo,
					       struct trn_ctx *ctx)
{
	struct trn_mapping *mapping;

	lockdep_assert_held(&bo->lock);
	list_for_each_entry(mapping, &bo->mappings, link)
		if (mapping->ctx == ctx)
			return mapping;
	return NULL;
}

/**
 * trn_bo_mapping_get() - the mapping of a buffer in a context, for a job
 * @bo: the buffer
 * @ctx: the context, which holds a handle to it
 *
 * Return: the mapping with a new reference, or NULL if the context's
 * handle went away meanwhile.
 */
struct trn_mapping *trn_bo_mapping_get(struct trn_bo *bo, struct trn_ctx *ctx)
{
	struct trn_mapping *mapping;

	mutex_lock(&bo->lock);
	mapping = trn_bo_find_mapping(bo, ctx);
	if (mapping)
		kref_get(&mapping->refcount);
	mutex_unlock(&bo->lock);
	return mapping;
}

/*
 * A new handle in @file: map the buffer into that context. An imported
 * buffer that nobody is charged for yet is charged to this file: it pins
 * the exporter's memory for our device from now on.
 */
static int trn_gem_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct trn_file *tfile = file->driver_priv;
	struct trn_bo *bo = to_trn_bo(obj);
	struct trn_mapping *mapping;
	int ret = 0;

	mapping = trn_vm_map(tfile->ctx, bo);
	if (IS_ERR(mapping))
		return PTR_ERR(mapping);
	mutex_lock(&bo->lock);
	if (!bo->usage && bo->placement == DRM_TRN_PLACEMENT_IMPORTED)
		ret = trn_bo_charge(bo, tfile->usage, 0, obj->size);
	if (!ret)
		list_add_tail(&mapping->link, &bo->mappings);
	mutex_unlock(&bo->lock);
	if (ret)
		trn_mapping_put(mapping);
	return ret;
}

/*
 * The last handle of @file is gone: drop its mapping. Jobs of the context
 * that listed the buffer hold their own references, and the mapping stays
 * until the last of them is freed: nothing waits here.
 */
static void trn_gem_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct trn_file *tfile = file->driver_priv;
	struct trn_bo *bo = to_trn_bo(obj);
	struct trn_mapping *mapping;

	mutex_lock(&bo->lock);
	mapping = trn_bo_find_mapping(bo, tfile->ctx);
	if (mapping)
		list_del_init(&mapping->link);
	mutex_unlock(&bo->lock);

	if (mapping)
		trn_mapping_put(mapping);
}

static vm_fault_t trn_gem_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct drm_gem_object *obj = vma->vm_private_data;
	struct trn_device *tdev = to_trn_device(obj->dev);
	struct trn_bo *bo = to_trn_bo(obj);
	unsigned long pfn;
	pgoff_t pgoff;
	vm_fault_t ret;
	int idx;

	/*
	 * The page within the object: mappings through the device file start
	 * at its fake offset, mappings through a dma-buf at the fake offset
	 * plus the offset the caller asked for (drm_gem_prime_mmap()).
	 */
	pgoff = vmf->pgoff - drm_vma_node_start(&obj->vma_node);
	if (pgoff >= obj->size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	if (bo->placement == DRM_TRN_PLACEMENT_HOST) {
		/* Not while trn_gem_unplug() replaces the pages. */
		mutex_lock(&bo->lock);
		ret = vmf_insert_pfn(vma, vmf->address,
				     page_to_pfn(bo->pages[pgoff]));
		mutex_unlock(&bo->lock);
		return ret;
	}

	/* Device memory: only while the device is there. */
	if (!drm_dev_enter(obj->dev, &idx))
		return VM_FAULT_SIGBUS;
	if (tdev->ops->hbm_pfn(tdev, bo->hbm.start + ((u64)pgoff << PAGE_SHIFT),
			       &pfn))
		ret = VM_FAULT_OOM;
	else
		ret = vmf_insert_pfn(vma, vmf->address, pfn);
	drm_dev_exit(idx);
	return ret;
}

static const struct vm_operations_struct trn_gem_vm_ops = {
	.fault = trn_gem_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static bool trn_bo_mappable(struct trn_bo *bo)
{
	struct trn_device *tdev = to_trn_device(bo->base.dev);

	switch (bo->placement) {
	case DRM_TRN_PLACEMENT_HOST:
		return true;
	case DRM_TRN_PLACEMENT_HBM:
		return tdev->desc.capabilities & DRM_TRN_CAP_HBM_CPU_VISIBLE;
	default:
		return false;
	}
}

static int trn_gem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	struct trn_device *tdev = to_trn_device(obj->dev);
	struct trn_bo *bo = to_trn_bo(obj);
	pgprot_t prot;
	bool wc;

	if (!trn_bo_mappable(bo))
		return -EINVAL;
	/* Pages inserted by pfn cannot be copied on write: shared only. */
	if (vma_is_cow_mapping(vma))
		return -EINVAL;
	/* Completion records are the kernel's to write. */
	if (bo->cpu_read_only) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		vm_flags_clear(vma, VM_MAYWRITE);
	}

	if (bo->placement == DRM_TRN_PLACEMENT_HBM)
		wc = tdev->desc.hbm_cpu_wc;
	else
		wc = bo->flags & DRM_TRN_BO_HOST_WC;

	vm_flags_set(vma, VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	prot = vm_get_page_prot(vma->vm_flags);
	vma->vm_page_prot = wc ? pgprot_writecombine(prot) : prot;
	return 0;
}

static struct sg_table *trn_gem_get_sg_table(struct drm_gem_object *obj)
{
	struct trn_bo *bo = to_trn_bo(obj);

	return drm_prime_pages_to_sg(obj->dev, bo->pages,
				     obj->size >> PAGE_SHIFT);
}

/*
 * Only host buffers are exported: device memory would need peer-to-peer
 * DMA, and user memory belongs to its process.
 */
static struct dma_buf *trn_gem_prime_export(struct drm_gem_object *obj,
					    int flags)
{
	struct trn_bo *bo = to_trn_bo(obj);

	/*
	 * A completion record exported could be mapped writable elsewhere;
	 * a user-mode queue's ring or doorbell would let another process
	 * submit in this one's context.
	 */
	if (bo->placement != DRM_TRN_PLACEMENT_HOST || bo->cpu_read_only ||
	    bo->queue_owned)
		return ERR_PTR(-EOPNOTSUPP);
	return drm_gem_prime_export(obj, flags);
}

static const struct drm_gem_object_funcs trn_gem_funcs = {
	.free = trn_gem_free,
	.open = trn_gem_open,
	.close = trn_gem_close,
	.export = trn_gem_prime_export,
	.get_sg_table = trn_gem_get_sg_table,
	.mmap = trn_gem_mmap,
	.vm_ops = &trn_gem_vm_ops,
};

/**
 * trn_gem_prime_import() - import a dma-buf into a context
 * @drm: our device
 * @dma_buf: the buffer
 *
 * A buffer we exported comes back as itself (drm_gem_prime_import()). A
 * buffer of another driver that some context of this device imported
 * already is shared too: each attachment would be a second DMA mapping of
 * the same memory.
 *
 * Return: the object, with a new reference, or an ERR_PTR().
 */
struct drm_gem_object *trn_gem_prime_import(struct drm_device *drm,
					    struct dma_buf *dma_buf)
{
	struct trn_device *tdev = to_trn_device(drm);
	struct drm_gem_object *obj;
	struct trn_bo *bo;

	mutex_lock(&tdev->import_lock);
	list_for_each_entry(bo, &tdev->imports, import_link) {
		if (bo->base.import_attach->dmabuf == dma_buf &&
		    kref_get_unless_zero(&bo->base.refcount)) {
			obj = &bo->base;
			goto out_unlock;
		}
	}
	obj = drm_gem_prime_import(drm, dma_buf);
	if (!IS_ERR(obj) && obj->import_attach)
		list_add_tail(&to_trn_bo(obj)->import_link, &tdev->imports);
out_unlock:
	mutex_unlock(&tdev->import_lock);
	return obj;
}

/**
 * trn_gem_prime_import_sg_table() - wrap another driver's dma-buf
 * @drm: our device
 * @attach: the attachment of our device to the dma-buf
 * @sgt: the dma-buf's memory, DMA-mapped for our device
 *
 * Return: the new object or an ERR_PTR().
 */
struct drm_gem_object *
trn_gem_prime_import_sg_table(struct drm_device *drm,
			      struct dma_buf_attachment *attach,
			      struct sg_table *sgt)
{
	size_t size = attach->dmabuf->size;
	struct trn_bo *bo;

	if (!size || !PAGE_ALIGNED(size))
		return ERR_PTR(-EINVAL);

	bo = trn_bo_alloc(DRM_TRN_PLACEMENT_IMPORTED, 0, PAGE_SIZE);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	drm_gem_private_object_init(drm, &bo->base, size);
	bo->sgt = sgt;
	/* The attachment was mapped bidirectional by the exporter. */
	bo->dma_sync = trn_sgt_needs_sync(drm->dev, sgt);
	return &bo->base;
}

/* No syncs once the mapping is gone; jobs still holding the buffer skip them. */
static void trn_bo_dma_forget(struct trn_bo *bo)
{
	unsigned long flags;

	spin_lock_irqsave(&bo->sync_lock, flags);
	bo->dma_sync = false;
	spin_unlock_irqrestore(&bo->sync_lock, flags);
}

#define TRN_UNPLUG_CHUNK 32

/*
 * Moves a host buffer to ordinary pages, a chunk at a time: CPU mappings
 * (zapped here, faulted in again from the new pages) and the kernel's
 * writes to a completion record keep their data, and the DMA API gets its
 * pages back while the device is still there to give them to. The pages
 * cannot fail to come: an allocation of the departing device must not
 * outlive its driver, and each chunk's old pages are freed before the
 * next chunk is allocated, so this needs TRN_UNPLUG_CHUNK pages at most.
 * Returns how many pages had to stay: a write-combined buffer's whose new
 * pages could not be made write-combined.
 */
static unsigned int trn_bo_host_unplug(struct trn_device *tdev,
				       struct trn_bo *bo)
{
	unsigned int npages = bo->base.size >> PAGE_SHIFT, i = 0, n, j;
	struct page *fresh[TRN_UNPLUG_CHUNK];
	struct device *dev = tdev->drm.dev;
	unsigned long flags;

	mutex_lock(&bo->lock);
	drm_vma_node_unmap(&bo->base.vma_node,
			   tdev->drm.anon_inode->i_mapping);
	while (i < npages) {
		n = min_t(unsigned int, npages - i, TRN_UNPLUG_CHUNK);
		for (j = 0; j < n; j++) {
			fresh[j] = alloc_page(GFP_KERNEL | __GFP_NOFAIL);
			if (!fresh[j])
				break;
		}
		n = j;
#ifdef CONFIG_X86
		if (n && bo->wc && set_pages_array_wc(fresh, n)) {
			while (j--)
				__free_page(fresh[j]);
			n = 0;
		}
#endif
		if (!n)
			break;
		for (j = 0; j < n; j++) {
			spin_lock_irqsave(&bo->sync_lock, flags);
			copy_highpage(fresh[j], bo->pages[i + j]);
			swap(fresh[j], bo->pages[i + j]);
			spin_unlock_irqrestore(&bo->sync_lock, flags);
		}
		/* fresh[] holds the device's pages now. */
#ifdef CONFIG_X86
		if (bo->wc)
			set_pages_array_wb(fresh, n);
#endif
		for (j = 0; j < n; j++, i++) {
			dma_free_pages(dev, PAGE_SIZE, fresh[j], bo->page_dma[i],
				       bo->dma_dir);
			bo->page_dma[i] = DMA_MAPPING_ERROR;
		}
	}
	if (i == npages) {
		/* Device addresses only; the table never was a mapping. */
		sg_free_table(bo->sgt);
		kfree(bo->sgt);
		bo->sgt = NULL;
	}
	mutex_unlock(&bo->lock);
	return npages - i;
}

/**
 * trn_gem_unplug() - take every buffer's DMA side back from a departing device
 * @tdev: the device, unplugged, its rings stopped and its backend quiet
 *
 * Called before the backend's device is released, so that no DMA mapping
 * or allocation of it outlives its driver (the IOMMU domain may go to
 * another driver next). User memory and other drivers' buffers are
 * unmapped; host buffers move to ordinary pages and keep their contents,
 * for CPU mappings and for the kernel's writes to completion records.
 * Exported host buffers stay as they are: another device may still be
 * using their pages. Files keep their buffers until they close them.
 */
void trn_gem_unplug(struct trn_device *tdev)
{
	unsigned int kept = 0, exported = 0;
	struct trn_bo *bo;

	mutex_lock(&tdev->import_lock);
	list_for_each_entry(bo, &tdev->dma_bos, dma_link) {
		trn_bo_dma_forget(bo);
		if (bo->placement == DRM_TRN_PLACEMENT_USERPTR)
			trn_bo_dma_unmap(bo);
		else if (READ_ONCE(bo->base.dma_buf))
			exported += bo->base.size >> PAGE_SHIFT;
		else
			kept += trn_bo_host_unplug(tdev, bo);
	}
	list_for_each_entry(bo, &tdev->imports, import_link) {
		trn_bo_dma_forget(bo);
		dma_buf_unmap_attachment_unlocked(bo->base.import_attach,
						  bo->sgt, DMA_BIDIRECTIONAL);
		bo->sgt = NULL;
	}
	mutex_unlock(&tdev->import_lock);

	if (kept)
		drm_warn(&tdev->drm, "%u host pages keep their DMA allocation: no write-combined pages for them\n",
			 kept);
	if (exported)
		drm_info(&tdev->drm, "%u pages of exported host buffers stay the device's until their importers let go\n",
			 exported);
}

static u64 trn_bo_default_align(u64 size, u64 align)
{
	/* Big buffers get 2 MiB so that a real MMU can use large pages. */
	if (!align)
		align = size >= SZ_2M ? SZ_2M : PAGE_SIZE;
	return max_t(u64, align, PAGE_SIZE);
}

/* The stack DRM_TRN_BO_STACK() in @flags names, or TRN_HBM_ANY_STACK. */
static int trn_bo_stack(u32 flags)
{
	if (!(flags & DRM_TRN_BO_ON_STACK))
		return TRN_HBM_ANY_STACK;
	return (flags & DRM_TRN_BO_STACK_MASK) >> DRM_TRN_BO_STACK_SHIFT;
}

/* trn_ioctl_bo_create() checked that the memory could ever hold it. */
static int trn_bo_create_hbm(struct trn_device *tdev, struct trn_bo *bo)
{
	u64 size = bo->base.size;
	int ret;

	/* Within the caller's dmem cgroup limit first, then the device. */
	ret = trn_dmem_charge(tdev, size, &bo->dmem_pool);
	if (ret)
		return ret;
	return trn_hbm_alloc(tdev, &bo->hbm, size, bo->align,
			     trn_bo_stack(bo->flags));
}

/*
 * Host memory for the device, a page at a time from the DMA API: zeroed,
 * reachable by the device without bounce buffers, charged to the caller's
 * memory cgroup, and beyond that cgroup's limit an -ENOMEM rather than
 * the OOM killer.
 */
static int trn_bo_create_host(struct trn_device *tdev, struct trn_bo *bo)
{
	const gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN;
	unsigned int npages = bo->base.size >> PAGE_SHIFT, i;
	struct device *dev = tdev->drm.dev;
	struct scatterlist *sg;
	int ret;

	bo->pages = kvcalloc(npages, sizeof(*bo->pages), GFP_KERNEL_ACCOUNT);
	bo->page_dma = kvcalloc(npages, sizeof(*bo->page_dma),
				GFP_KERNEL_ACCOUNT);
	if (!bo->pages || !bo->page_dma)
		return -ENOMEM;
	for (i = 0; i < npages; i++) {
		bo->pages[i] = dma_alloc_pages(dev, PAGE_SIZE, &bo->page_dma[i],
					       bo->dma_dir, gfp);
		if (!bo->pages[i])
			return -ENOMEM;
		if (fatal_signal_pending(current))
			return -EINTR;
	}
#ifdef CONFIG_X86
	/* No cached alias of a write-combined page in the kernel's map. */
	if (bo->flags & DRM_TRN_BO_HOST_WC) {
		ret = set_pages_array_wc(bo->pages, npages);
		if (ret)
			return ret;
		bo->wc = true;
	}
#endif

	bo->sgt = kzalloc(sizeof(*bo->sgt), GFP_KERNEL_ACCOUNT);
	if (!bo->sgt)
		return -ENOMEM;
	ret = sg_alloc_table(bo->sgt, npages, GFP_KERNEL_ACCOUNT);
	if (ret) {
		kfree(bo->sgt);
		bo->sgt = NULL;
		return ret;
	}
	for_each_sgtable_sg(bo->sgt, sg, i) {
		sg_set_page(sg, bo->pages[i], PAGE_SIZE, 0);
		sg_dma_address(sg) = bo->page_dma[i];
		sg_dma_len(sg) = PAGE_SIZE;
	}
	/* Syncs, if any, are cache maintenance: never a copy. */
	bo->dma_sync = trn_sgt_needs_sync(dev, bo->sgt);
	atomic64_add(bo->base.size, &tdev->host_pinned);
	bo->in_host_pinned = true;
	mutex_lock(&tdev->import_lock);
	list_add_tail(&bo->dma_link, &tdev->dma_bos);
	mutex_unlock(&tdev->import_lock);
	return 0;
}

/* A new host or device buffer of @size bytes, charged to @usage. */
static struct trn_bo *trn_bo_new(struct trn_device *tdev,
				 struct trn_usage *usage, u32 placement,
				 u32 flags, u64 size, u64 align)
{
	bool hbm = placement == DRM_TRN_PLACEMENT_HBM;
	struct trn_bo *bo;
	int ret;

	bo = trn_bo_alloc(placement, flags, align);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	drm_gem_private_object_init(&tdev->drm, &bo->base, size);
	/* From here on, drm_gem_object_put() undoes every step. */
	ret = trn_bo_charge(bo, usage, hbm ? size : 0, hbm ? 0 : size);
	if (!ret)
		ret = hbm ? trn_bo_create_hbm(tdev, bo) :
			    trn_bo_create_host(tdev, bo);
	if (ret) {
		drm_gem_object_put(&bo->base);
		return ERR_PTR(ret);
	}
	return bo;
}

/*
 * Give the new buffer @bo its handle in @file, and drop the caller's
 * reference; on failure the buffer is freed, and its charge with it.
 */
static int trn_bo_publish(struct drm_file *file, struct trn_bo *bo,
			  u32 *handle, u64 *va)
{
	struct trn_file *tfile = file->driver_priv;
	struct trn_mapping *mapping;
	int ret;

	ret = drm_gem_handle_create(file, &bo->base, handle);
	if (ret) {
		drm_gem_object_put(&bo->base);
		return ret;
	}

	/* Our reference keeps @bo alive even if the handle is closed now. */
	mutex_lock(&bo->lock);
	mapping = trn_bo_find_mapping(bo, tfile->ctx);
	*va = mapping ? mapping->node.start : 0;
	mutex_unlock(&bo->lock);
	drm_gem_object_put(&bo->base);
	return 0;
}

/**
 * trn_bo_create_status() - create a queue's completion record buffer
 * @file: the queue's file, charged for it
 *
 * One host page, zero-filled, that the device and userspace may only read
 * (mmap() refuses writable mappings, PRIME refuses to export it) and the
 * kernel writes through its linear mapping. It has no handle yet: the
 * queue gives it one as the last step of its creation, and takes it back
 * when it is destroyed.
 *
 * Return: the buffer with a reference for the caller, or an ERR_PTR().
 */
struct trn_bo *trn_bo_create_status(struct drm_file *file)
{
	struct trn_device *tdev = to_trn_device(file->minor->dev);
	struct trn_file *tfile = file->driver_priv;
	struct trn_bo *bo;

	bo = trn_bo_new(tdev, tfile->usage, DRM_TRN_PLACEMENT_HOST,
			DRM_TRN_BO_DEVICE_READ_ONLY, PAGE_SIZE, PAGE_SIZE);
	if (!IS_ERR(bo)) {
		bo->cpu_read_only = true;
		bo->queue_owned = true;
	}
	return bo;
}

/**
 * trn_bo_create_uq() - create a user-mode queue's ring or doorbell buffer
 * @file: the queue's file, charged for it
 * @size: bytes, page aligned
 *
 * Zero-filled host memory that userspace maps writable and the device may
 * only read (the ring through the MMU; the doorbell page the device also
 * writes directly, not through a mapping). PRIME refuses to export it. It
 * has no handle yet, as trn_bo_create_status().
 *
 * Return: the buffer with a reference for the caller, or an ERR_PTR().
 */
struct trn_bo *trn_bo_create_uq(struct drm_file *file, u64 size)
{
	struct trn_device *tdev = to_trn_device(file->minor->dev);
	struct trn_file *tfile = file->driver_priv;
	struct trn_bo *bo;

	bo = trn_bo_new(tdev, tfile->usage, DRM_TRN_PLACEMENT_HOST,
			DRM_TRN_BO_DEVICE_READ_ONLY, size, PAGE_SIZE);
	if (!IS_ERR(bo))
		bo->queue_owned = true;
	return bo;
}

/*
 * A stack number only with DRM_TRN_BO_ON_STACK, which only device memory
 * takes, and only for a stack the device has.
 */
static bool trn_bo_stack_valid(struct trn_device *tdev, u32 placement,
			       u32 flags)
{
	u32 stack = (flags & DRM_TRN_BO_STACK_MASK) >> DRM_TRN_BO_STACK_SHIFT;

	if (!(flags & DRM_TRN_BO_ON_STACK))
		return !stack;
	return placement == DRM_TRN_PLACEMENT_HBM &&
	       stack < tdev->desc.hbm_stacks;
}

/**
 * trn_ioctl_bo_create() - handler of DRM_IOCTL_TRN_BO_CREATE
 * @drm: the device
 * @data: &struct drm_trn_bo_create
 * @file: the caller
 *
 * Return: 0; -EINVAL for bad arguments; -E2BIG for a size the device (or
 * the stack asked for) can never provide; -ENOMEM when memory (of that
 * stack) or address space is exhausted, or the
 * caller's memory cgroup (host) or dmem cgroup (device memory) limit is
 * reached; -EDQUOT beyond the caller's limits.
 */
int trn_ioctl_bo_create(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	struct trn_device *tdev = to_trn_device(drm);
	struct trn_file *tfile = file->driver_priv;
	struct drm_trn_bo_create *args = data;
	bool hbm = args->placement == DRM_TRN_PLACEMENT_HBM;
	struct trn_bo *bo;
	u64 size, align;

	if (args->pad || args->flags & ~TRN_BO_CREATE_FLAGS)
		return -EINVAL;
	if (!hbm && args->placement != DRM_TRN_PLACEMENT_HOST)
		return -EINVAL;
	if (hbm && args->flags & DRM_TRN_BO_HOST_WC)
		return -EINVAL;
	if (!trn_bo_stack_valid(tdev, args->placement, args->flags))
		return -EINVAL;
	if (args->alignment && (!is_power_of_2(args->alignment) ||
				args->alignment > DRM_TRN_BO_MAX_ALIGNMENT))
		return -EINVAL;
	if (!args->size)
		return -EINVAL;
	/* Beyond anything a device or a context could hold. */
	if (args->size > tdev->desc.va_size / 2 ||
	    (!hbm && args->size > TRN_BO_MAX_HOST_SIZE))
		return -E2BIG;

	size = PAGE_ALIGN(args->size);
	align = trn_bo_default_align(size, args->alignment);
	/* Not even the empty memory (stack) would hold it: before any charge. */
	if (hbm && !trn_hbm_could_fit(tdev, size, align,
				      trn_bo_stack(args->flags)))
		return -E2BIG;
	bo = trn_bo_new(tdev, tfile->usage, args->placement, args->flags, size,
			align);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	return trn_bo_publish(file, bo, &args->handle, &args->va);
}

/**
 * trn_ioctl_bo_userptr() - handler of DRM_IOCTL_TRN_BO_USERPTR
 * @drm: the device
 * @data: &struct drm_trn_bo_userptr
 * @file: the caller
 *
 * Return: 0; -EINVAL for bad arguments; -EFAULT if the range cannot be
 * pinned; -EDQUOT beyond the caller's limits; -ENOMEM, also beyond the
 * caller's RLIMIT_MEMLOCK.
 */
int trn_ioctl_bo_userptr(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct trn_device *tdev = to_trn_device(drm);
	struct trn_file *tfile = file->driver_priv;
	struct drm_trn_bo_userptr *args = data;
	unsigned int gup = FOLL_LONGTERM;
	unsigned long npages;
	struct trn_bo *bo;
	u64 end;
	int ret, pinned;

	if (args->flags & ~DRM_TRN_USERPTR_READ_ONLY)
		return -EINVAL;
	if (!args->size || !PAGE_ALIGNED(args->addr) ||
	    !PAGE_ALIGNED(args->size) ||
	    check_add_overflow(args->addr, args->size, &end))
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(args->addr), args->size))
		return -EFAULT;
	if (args->size > TRN_BO_MAX_HOST_SIZE)
		return -E2BIG;
	if (args->size > trn_max_pinned_per_file())
		return -EDQUOT;
	npages = args->size >> PAGE_SHIFT;
	if (!(args->flags & DRM_TRN_USERPTR_READ_ONLY))
		gup |= FOLL_WRITE;

	bo = trn_bo_alloc(DRM_TRN_PLACEMENT_USERPTR,
			  args->flags & DRM_TRN_USERPTR_READ_ONLY ?
			  DRM_TRN_BO_DEVICE_READ_ONLY : 0,
			  trn_bo_default_align(args->size, 0));
	if (!bo)
		return -ENOMEM;
	drm_gem_private_object_init(drm, &bo->base, args->size);
	/* From here on, drm_gem_object_put() undoes every step. */
	ret = trn_bo_charge(bo, tfile->usage, 0, args->size);
	if (ret)
		goto err_put;
	ret = trn_bo_account_locked(bo, npages);
	if (ret)
		goto err_put;

	bo->pages = kvmalloc_array(npages, sizeof(*bo->pages),
				   GFP_KERNEL_ACCOUNT);
	if (!bo->pages) {
		ret = -ENOMEM;
		goto err_put;
	}
	pinned = pin_user_pages_fast(args->addr, npages, gup, bo->pages);
	if (pinned != npages) {
		if (pinned > 0)
			unpin_user_pages(bo->pages, pinned);
		kvfree(bo->pages);
		bo->pages = NULL;
		ret = pinned < 0 ? pinned : -EFAULT;
		goto err_put;
	}
	ret = trn_bo_dma_map(bo, npages);
	if (ret)
		goto err_put;
	atomic64_add(args->size, &tdev->host_pinned);
	bo->in_host_pinned = true;
	mutex_lock(&tdev->import_lock);
	list_add_tail(&bo->dma_link, &tdev->dma_bos);
	mutex_unlock(&tdev->import_lock);

	return trn_bo_publish(file, bo, &args->handle, &args->va);

err_put:
	drm_gem_object_put(&bo->base);
	return ret;
}

/**
 * trn_ioctl_bo_info() - handler of DRM_IOCTL_TRN_BO_INFO
 * @drm: the device
 * @data: &struct drm_trn_bo_info
 * @file: the caller
 *
 * Return: 0, -EINVAL for non-zero flags, -ENOENT for an unknown handle,
 * -ENOMEM.
 */
int trn_ioctl_bo_info(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct trn_file *tfile = file->driver_priv;
	struct drm_trn_bo_info *args = data;
	struct drm_gem_object *obj;
	struct trn_mapping *mapping;
	struct trn_bo *bo;
	u64 offset = 0;
	int ret = 0;

	if (args->flags)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_trn_bo(obj);

	if (trn_bo_mappable(bo)) {
		ret = drm_gem_create_mmap_offset(obj);
		if (ret)
			goto out_put;
		offset = drm_vma_node_offset_addr(&obj->vma_node);
	}

	mutex_lock(&bo->lock);
	mapping = trn_bo_find_mapping(bo, tfile->ctx);
	args->va = mapping ? mapping->node.start : 0;
	mutex_unlock(&bo->lock);
	args->size = obj->size;
	args->mmap_offset = offset;
	args->placement = bo->placement;
	args->bo_flags = bo->flags;

out_put:
	drm_gem_object_put(obj);
	return ret;
}

/**
 * trn_gem_show_fdinfo() - print a file's memory in fdinfo
 * @p: the fdinfo printer
 * @file: the file
 *
 * Prints the drm-usage-stats memory keys per region (``hbm``, ``host``,
 * the latter counting host, user and imported memory), over the file's
 * handles. A buffer is active while a job that lists it is queued or runs
 * (its fences are in the reservation as bookkeeping, which the DRM helper
 * does not look at).
 */
void trn_gem_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct drm_memory_stats hbm = {}, host = {};
	struct drm_gem_object *obj;
	int id;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		struct drm_memory_stats *s;

		s = to_trn_bo(obj)->placement == DRM_TRN_PLACEMENT_HBM ?
		    &hbm : &host;
		if (obj->handle_count > 1)
			s->shared += obj->size;
		else
			s->private += obj->size;
		s->resident += obj->size;
		if (!dma_resv_test_signaled(obj->resv,
					    DMA_RESV_USAGE_BOOKKEEP))
			s->active += obj->size;
	}
	spin_unlock(&file->table_lock);

	drm_print_memory_stats(p, &hbm, DRM_GEM_OBJECT_RESIDENT |
			       TRN_GEM_OBJECT_ACTIVE, "hbm");
	drm_print_memory_stats(p, &host, DRM_GEM_OBJECT_RESIDENT |
			       TRN_GEM_OBJECT_ACTIVE, "host");
}
