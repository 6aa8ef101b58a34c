/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * Private state of the trn core, shared by its files.
 */
#ifndef __TRN_DRV_H__
#define __TRN_DRV_H__

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/xarray.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_mm.h>

#include "trn_hw.h"

#define TRN_DRIVER_NAME		"trn"
#define TRN_DRIVER_DESC		"Trainium-class ML accelerators"
#define TRN_DRIVER_MAJOR	1
#define TRN_DRIVER_MINOR	0
#define TRN_DRIVER_PATCHLEVEL	0

/**
 * struct trn_device - one accelerator, as seen by the core
 * @drm: the DRM device; its lifetime is the lifetime of this structure
 * @desc: the backend's description, copied at registration and immutable
 * @ops: the backend's hardware operations
 * @hw_priv: the backend's private data, passed back through the ops
 * @hbm_lock: protects @hbm_mm and @hbm_used
 * @hbm_mm: allocator of device memory; free memory always reads as zero
 * @hbm_used: bytes of device memory allocated
 * @host_pinned: bytes of host memory pinned for the device
 * @contexts: MMU context number -> &struct trn_file; allocates the
 *            numbers, and its lock orders fault reports against teardown
 * @import_lock: protects @imports
 * @imports: buffers imported from other drivers' dma-bufs, so that every
 *           context importing one dma-buf shares one object (and one DMA
 *           mapping of it)
 */
struct trn_device {
	struct drm_device drm;
	struct trn_device_desc desc;
	const struct trn_hw_ops *ops;
	void *hw_priv;

	/* Protects hbm_mm and hbm_used. */
	struct mutex hbm_lock;
	struct drm_mm hbm_mm;
	u64 hbm_used;
	atomic64_t host_pinned;

	struct xarray contexts;

	/* Protects imports. */
	struct mutex import_lock;
	struct list_head imports;
};

/**
 * struct trn_file - one open file: a context with its own address space
 * @tdev: the device this context belongs to
 * @ctx: number of the context's address space in the device MMU
 * @va_lock: protects @va_mm and serialises MMU updates of this context
 * @va_mm: allocator of the context's device virtual addresses
 * @bos: buffers created by this context and charged to it
 * @hbm_bytes: device memory charged to this context
 * @pinned_bytes: host memory pinned on behalf of this context
 * @mmu_faults: device accesses of this context that faulted
 * @last_fault_va: device address of the latest of them
 */
struct trn_file {
	struct trn_device *tdev;
	u32 ctx;

	/* Protects va_mm; serialises MMU updates of the context. */
	struct mutex va_lock;
	struct drm_mm va_mm;

	atomic64_t bos;
	atomic64_t hbm_bytes;
	atomic64_t pinned_bytes;

	atomic64_t mmu_faults;
	atomic64_t last_fault_va;
};

/**
 * struct trn_mapping - a buffer object mapped into one context
 * @link: entry in &trn_bo.mappings
 * @tfile: the context
 * @node: the virtual range, which ends with an unmapped guard page
 */
struct trn_mapping {
	struct list_head link;
	struct trn_file *tfile;
	struct drm_mm_node node;
};

/**
 * struct trn_bo - a buffer object
 * @base: the GEM object
 * @placement: one of &enum drm_trn_placement
 * @flags: DRM_TRN_BO_* creation flags
 * @align: alignment of its device addresses
 * @owner: the context it is charged to, until that context closes its
 *         handle; protected by @lock
 * @hbm: its device memory, for %DRM_TRN_PLACEMENT_HBM
 * @pages: its pinned pages, for host and userptr buffers
 * @sgt: its memory DMA-mapped for the device, for host, userptr and
 *       imported buffers
 * @lock: protects @mappings and @owner
 * @mappings: &struct trn_mapping of every context that has a handle
 * @import_link: entry in &trn_device.imports, for imported buffers
 */
struct trn_bo {
	struct drm_gem_object base;
	u32 placement;
	u32 flags;
	u64 align;
	struct trn_file *owner;
	struct drm_mm_node hbm;
	struct page **pages;
	struct sg_table *sgt;

	/* Protects mappings and owner. */
	struct mutex lock;
	struct list_head mappings;
	struct list_head import_link;
};

static inline struct trn_device *to_trn_device(struct drm_device *drm)
{
	return container_of(drm, struct trn_device, drm);
}

static inline struct trn_bo *to_trn_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct trn_bo, base);
}

extern const struct drm_driver trn_drm_driver;

/* trn_drv.c */
u64 trn_max_bos_per_file(void);
u64 trn_max_pinned_per_file(void);

/* trn_query.c */
int trn_ioctl_query(struct drm_device *drm, void *data, struct drm_file *file);

/* trn_hbm.c */
int trn_hbm_init(struct trn_device *tdev);
int trn_hbm_alloc(struct trn_device *tdev, struct drm_mm_node *node,
		  u64 size, u64 align);
void trn_hbm_free(struct trn_device *tdev, struct drm_mm_node *node);
u64 trn_hbm_used(struct trn_device *tdev);

/* trn_vm.c */
int trn_vm_init(struct trn_file *tfile);
void trn_vm_fini(struct trn_file *tfile);
int trn_vm_map(struct trn_file *tfile, struct trn_bo *bo,
	       struct trn_mapping *mapping);
void trn_vm_unmap(struct trn_file *tfile, struct trn_mapping *mapping);

/* trn_gem.c */
struct drm_gem_object *trn_gem_prime_import(struct drm_device *drm,
					    struct dma_buf *dma_buf);
struct drm_gem_object *
trn_gem_prime_import_sg_table(struct drm_device *drm,
			      struct dma_buf_attachment *attach,
			      struct sg_table *sgt);
int trn_ioctl_bo_create(struct drm_device *drm, void *data,
			struct drm_file *file);
int trn_ioctl_bo_info(struct drm_device *drm, void *data,
		      struct drm_file *file);
int trn_ioctl_bo_userptr(struct drm_device *drm, void *data,
			 struct drm_file *file);
void trn_gem_show_fdinfo(struct drm_printer *p, struct drm_file *file);

/* trn_sysfs.c */
int trn_sysfs_init(struct trn_device *tdev);
void trn_sysfs_fini(struct trn_device *tdev);

#if IS_ENABLED(CONFIG_KUNIT)
struct drm_trn_query;
int trn_query_copy_out(struct drm_trn_query *args, const void *answer,
		       u32 size, u32 min_size);
int trn_desc_validate(struct device *parent,
		      const struct trn_device_desc *desc);
#endif

#endif /* __TRN_DRV_H__ */
