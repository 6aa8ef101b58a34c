// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Buffer objects: device memory, pinned host memory, pinned user memory and
 * imported dma-bufs behind one GEM object type; their creation ioctls, CPU
 * mappings, PRIME export, accounting against per-context limits, and fdinfo.
 *
 * A buffer is mapped into the address space of every context that holds a
 * handle to it: the GEM open/close callbacks map and unmap it.
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/mm.h>
#include <linux/overflow.h>
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

#define TRN_BO_CREATE_FLAGS	(DRM_TRN_BO_HOST_WC | DRM_TRN_BO_DEVICE_READ_ONLY)

/* Host and user memory is tracked in one page array: bound its size. */
#define TRN_BO_MAX_HOST_SIZE \
	((u64)(INT_MAX / sizeof(struct page *)) << PAGE_SHIFT)

static const struct drm_gem_object_funcs trn_gem_funcs;

/* Charge a new buffer to @tfile, within its limits. */
static int trn_file_charge(struct trn_file *tfile, u64 hbm, u64 pinned)
{
	if (atomic64_inc_return(&tfile->bos) > trn_max_bos_per_file())
		goto err_bos;
	if (pinned && atomic64_add_return(pinned, &tfile->pinned_bytes) >
		      trn_max_pinned_per_file())
		goto err_pinned;
	atomic64_add(hbm, &tfile->hbm_bytes);
	return 0;

err_pinned:
	atomic64_sub(pinned, &tfile->pinned_bytes);
err_bos:
	atomic64_dec(&tfile->bos);
	return -EDQUOT;
}

static u64 trn_bo_pinned_bytes(struct trn_bo *bo)
{
	switch (bo->placement) {
	case DRM_TRN_PLACEMENT_HOST:
	case DRM_TRN_PLACEMENT_USERPTR:
		return bo->base.size;
	default:
		return 0;
	}
}

static void trn_file_uncharge(struct trn_file *tfile, u64 hbm, u64 pinned)
{
	atomic64_sub(hbm, &tfile->hbm_bytes);
	atomic64_sub(pinned, &tfile->pinned_bytes);
	atomic64_dec(&tfile->bos);
}

static void trn_file_uncharge_bo(struct trn_file *tfile, struct trn_bo *bo)
{
	u64 hbm = bo->placement == DRM_TRN_PLACEMENT_HBM ? bo->base.size : 0;

	trn_file_uncharge(tfile, hbm, trn_bo_pinned_bytes(bo));
}

/* A buffer with no memory yet; drm_gem_object_put() undoes every step. */
static struct trn_bo *trn_bo_alloc(u32 placement, u32 flags, u64 align)
{
	struct trn_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return NULL;
	bo->base.funcs = &trn_gem_funcs;
	bo->placement = placement;
	bo->flags = flags;
	bo->align = align;
	mutex_init(&bo->lock);
	INIT_LIST_HEAD(&bo->mappings);
	INIT_LIST_HEAD(&bo->import_link);
	return bo;
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
	 * Several buffers may map the same pages (userptr ranges overlap):
	 * CPU cache maintenance is the job boundaries' business, not the
	 * mapping's, and overlapping streaming mappings are fine without it.
	 */
	ret = dma_map_sgtable(drm->dev, sgt, DMA_BIDIRECTIONAL,
			      DMA_ATTR_SKIP_CPU_SYNC);
	if (ret) {
		sg_free_table(sgt);
		kfree(sgt);
		return ret;
	}
	bo->sgt = sgt;
	return 0;
}

static void trn_bo_dma_unmap(struct trn_bo *bo)
{
	dma_unmap_sgtable(bo->base.dev->dev, bo->sgt, DMA_BIDIRECTIONAL,
			  DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(bo->sgt);
	kfree(bo->sgt);
	bo->sgt = NULL;
}

static void trn_gem_free(struct drm_gem_object *obj)
{
	struct trn_device *tdev = to_trn_device(obj->dev);
	struct trn_bo *bo = to_trn_bo(obj);
	unsigned int npages = obj->size >> PAGE_SHIFT;

	WARN_ON(!list_empty(&bo->mappings));

	switch (bo->placement) {
	case DRM_TRN_PLACEMENT_HBM:
		if (drm_mm_node_allocated(&bo->hbm))
			trn_hbm_free(tdev, &bo->hbm);
		break;
	case DRM_TRN_PLACEMENT_HOST:
		if (bo->sgt) {
			trn_bo_dma_unmap(bo);
			atomic64_sub(obj->size, &tdev->host_pinned);
		}
		if (bo->pages) {
#ifdef CONFIG_X86
			if (bo->flags & DRM_TRN_BO_HOST_WC)
				set_pages_array_wb(bo->pages, npages);
#endif
			drm_gem_put_pages(obj, bo->pages, true, true);
		}
		break;
	case DRM_TRN_PLACEMENT_USERPTR:
		if (bo->sgt) {
			trn_bo_dma_unmap(bo);
			atomic64_sub(obj->size, &tdev->host_pinned);
		}
		if (bo->pages) {
			unpin_user_pages_dirty_lock(bo->pages, npages,
						    !(bo->flags &
						      DRM_TRN_BO_DEVICE_READ_ONLY));
			kvfree(bo->pages);
		}
		break;
	case DRM_TRN_PLACEMENT_IMPORTED:
		mutex_lock(&tdev->import_lock);
		list_del(&bo->import_link);
		mutex_unlock(&tdev->import_lock);
		drm_prime_gem_destroy(obj, bo->sgt);
		break;
	}

	drm_gem_object_release(obj);
	mutex_destroy(&bo->lock);
	kfree(bo);
}

/* A new handle in @file: map the buffer into that context. */
static int trn_gem_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct trn_file *tfile = file->driver_priv;
	struct trn_bo *bo = to_trn_bo(obj);
	struct trn_mapping *mapping;
	int ret;

	mapping = kzalloc(sizeof(*mapping), GFP_KERNEL);
	if (!mapping)
		return -ENOMEM;
	ret = trn_vm_map(tfile, bo, mapping);
	if (ret) {
		kfree(mapping);
		return ret;
	}
	mutex_lock(&bo->lock);
	list_add_tail(&mapping->link, &bo->mappings);
	mutex_unlock(&bo->lock);
	return 0;
}

static struct trn_mapping *trn_bo_find_mapping(struct trn_bo *bo,
					       struct trn_file *tfile)
{
	struct trn_mapping *mapping;

	lockdep_assert_held(&bo->lock);
	list_for_each_entry(mapping, &bo->mappings, link)
		if (mapping->tfile == tfile)
			return mapping;
	return NULL;
}

/* The last handle of @file is gone: unmap, and uncharge its creator. */
static void trn_gem_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct trn_file *tfile = file->driver_priv;
	struct trn_bo *bo = to_trn_bo(obj);
	struct trn_mapping *mapping;

	/*
	 * Jobs that listed the buffer keep it mapped until they finish; a
	 * hung one is ended by the job timeout.
	 */
	dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_BOOKKEEP, false,
			      MAX_SCHEDULE_TIMEOUT);

	mutex_lock(&bo->lock);
	mapping = trn_bo_find_mapping(bo, tfile);
	if (mapping)
		list_del(&mapping->link);
	if (bo->owner == tfile) {
		trn_file_uncharge_bo(tfile, bo);
		bo->owner = NULL;
	}
	mutex_unlock(&bo->lock);

	if (mapping) {
		trn_vm_unmap(tfile, mapping);
		kfree(mapping);
	}
}

static vm_fault_t trn_gem_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct drm_gem_object *obj = vma->vm_private_data;
	struct trn_device *tdev = to_trn_device(obj->dev);
	struct trn_bo *bo = to_trn_bo(obj);
	pgoff_t pgoff = (vmf->address - vma->vm_start) >> PAGE_SHIFT;
	unsigned long pfn;
	vm_fault_t ret;
	int idx;

	if (pgoff >= obj->size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	if (bo->placement == DRM_TRN_PLACEMENT_HOST)
		return vmf_insert_pfn(vma, vmf->address,
				      page_to_pfn(bo->pages[pgoff]));

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

	/* A completion record exported could be mapped writable elsewhere. */
	if (bo->placement != DRM_TRN_PLACEMENT_HOST || bo->cpu_read_only)
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
	return &bo->base;
}

static u64 trn_bo_default_align(u64 size, u64 align)
{
	/* Big buffers get 2 MiB so that a real MMU can use large pages. */
	if (!align)
		align = size >= SZ_2M ? SZ_2M : PAGE_SIZE;
	return max_t(u64, align, PAGE_SIZE);
}

static int trn_bo_create_hbm(struct trn_device *tdev, struct trn_bo *bo)
{
	u64 size = bo->base.size;

	if (size > tdev->desc.hbm_size)
		return -E2BIG;
	return trn_hbm_alloc(tdev, &bo->hbm, size, bo->align);
}

static int trn_bo_create_host(struct trn_device *tdev, struct trn_bo *bo)
{
	unsigned int npages = bo->base.size >> PAGE_SHIFT;
	struct page **pages;
	int ret;

	pages = drm_gem_get_pages(&bo->base);
	if (IS_ERR(pages))
		return PTR_ERR(pages);
	bo->pages = pages;
#ifdef CONFIG_X86
	/* No cached alias of a write-combined page in the kernel's map. */
	if (bo->flags & DRM_TRN_BO_HOST_WC)
		set_pages_array_wc(pages, npages);
#endif
	ret = trn_bo_dma_map(bo, npages);
	if (ret)
		return ret;
	atomic64_add(bo->base.size, &tdev->host_pinned);
	return 0;
}

/*
 * Give the new buffer @bo, charged to @tfile already, its handle in
 * @file; on failure the buffer is freed and the charge returned.
 */
static int trn_bo_publish(struct drm_file *file, struct trn_bo *bo,
			  u32 *handle, u64 *va)
{
	struct trn_file *tfile = file->driver_priv;
	struct trn_mapping *mapping;
	int ret;

	bo->owner = tfile;
	ret = drm_gem_handle_create(file, &bo->base, handle);
	if (ret) {
		bo->owner = NULL;
		trn_file_uncharge_bo(tfile, bo);
		drm_gem_object_put(&bo->base);
		return ret;
	}

	/* Our reference keeps @bo alive even if the handle is closed now. */
	mutex_lock(&bo->lock);
	mapping = trn_bo_find_mapping(bo, tfile);
	*va = mapping ? mapping->node.start : 0;
	mutex_unlock(&bo->lock);
	drm_gem_object_put(&bo->base);
	return 0;
}

/**
 * trn_bo_create_status() - create a queue's completion record buffer
 * @file: the queue's context, which gets a handle to it
 * @handle: out: the handle
 *
 * One host page, zero-filled, that the device and userspace may only read
 * (mmap() refuses writable mappings, PRIME refuses to export it) and the
 * kernel writes through its linear mapping. Not charged to the context: it
 * lives and dies with a queue.
 *
 * Return: the buffer with a reference for the caller, or an ERR_PTR().
 */
struct trn_bo *trn_bo_create_status(struct drm_file *file, u32 *handle)
{
	struct trn_device *tdev = to_trn_device(file->minor->dev);
	struct trn_bo *bo;
	int ret;

	bo = trn_bo_alloc(DRM_TRN_PLACEMENT_HOST, DRM_TRN_BO_DEVICE_READ_ONLY,
			  PAGE_SIZE);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->cpu_read_only = true;
	ret = drm_gem_object_init(&tdev->drm, &bo->base, PAGE_SIZE);
	if (ret) {
		mutex_destroy(&bo->lock);
		kfree(bo);
		return ERR_PTR(ret == -ENOSPC ? -ENOMEM : ret);
	}
	ret = trn_bo_create_host(tdev, bo);
	if (!ret)
		ret = drm_gem_handle_create(file, &bo->base, handle);
	if (ret) {
		drm_gem_object_put(&bo->base);
		return ERR_PTR(ret);
	}
	return bo;
}

/**
 * trn_ioctl_bo_create() - handler of DRM_IOCTL_TRN_BO_CREATE
 * @drm: the device
 * @data: &struct drm_trn_bo_create
 * @file: the caller
 *
 * Return: 0; -EINVAL for bad arguments; -E2BIG for a size the device can
 * never provide; -ENOMEM when memory or address space is exhausted;
 * -EDQUOT beyond the caller's limits.
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
	int ret;

	if (args->pad || args->flags & ~TRN_BO_CREATE_FLAGS)
		return -EINVAL;
	if (!hbm && args->placement != DRM_TRN_PLACEMENT_HOST)
		return -EINVAL;
	if (hbm && args->flags & DRM_TRN_BO_HOST_WC)
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

	ret = trn_file_charge(tfile, hbm ? size : 0, hbm ? 0 : size);
	if (ret)
		return ret;

	bo = trn_bo_alloc(args->placement, args->flags, align);
	if (!bo) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	if (hbm) {
		drm_gem_private_object_init(drm, &bo->base, size);
		ret = trn_bo_create_hbm(tdev, bo);
	} else {
		ret = drm_gem_object_init(drm, &bo->base, size);
		if (ret) {
			mutex_destroy(&bo->lock);
			kfree(bo);
			/* shmem says ENOSPC when it means memory. */
			ret = ret == -ENOSPC ? -ENOMEM : ret;
			goto err_uncharge;
		}
		ret = trn_bo_create_host(tdev, bo);
	}
	if (ret) {
		drm_gem_object_put(&bo->base);
		goto err_uncharge;
	}

	return trn_bo_publish(file, bo, &args->handle, &args->va);

err_uncharge:
	trn_file_uncharge(tfile, hbm ? size : 0, hbm ? 0 : size);
	return ret;
}

/**
 * trn_ioctl_bo_userptr() - handler of DRM_IOCTL_TRN_BO_USERPTR
 * @drm: the device
 * @data: &struct drm_trn_bo_userptr
 * @file: the caller
 *
 * Return: 0; -EINVAL for bad arguments; -EFAULT if the range cannot be
 * pinned; -EDQUOT beyond the caller's limits; -ENOMEM.
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

	ret = trn_file_charge(tfile, 0, args->size);
	if (ret)
		return ret;

	bo = trn_bo_alloc(DRM_TRN_PLACEMENT_USERPTR,
			  args->flags & DRM_TRN_USERPTR_READ_ONLY ?
			  DRM_TRN_BO_DEVICE_READ_ONLY : 0,
			  trn_bo_default_align(args->size, 0));
	if (!bo) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	drm_gem_private_object_init(drm, &bo->base, args->size);

	bo->pages = kvmalloc_array(npages, sizeof(*bo->pages), GFP_KERNEL);
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

	return trn_bo_publish(file, bo, &args->handle, &args->va);

err_put:
	drm_gem_object_put(&bo->base);
err_uncharge:
	trn_file_uncharge(tfile, 0, args->size);
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
	mapping = trn_bo_find_mapping(bo, tfile);
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
 * trn_gem_show_fdinfo() - print a context's memory in fdinfo
 * @p: the fdinfo printer
 * @file: the context
 *
 * Prints the drm-usage-stats memory keys per region (``hbm``, ``host``,
 * the latter counting host, user and imported memory).
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
	}
	spin_unlock(&file->table_lock);

	drm_print_memory_stats(p, &hbm, DRM_GEM_OBJECT_RESIDENT, "hbm");
	drm_print_memory_stats(p, &host, DRM_GEM_OBJECT_RESIDENT, "host");
}
