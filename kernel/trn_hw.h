/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * The interface between the trn core and its hardware backends.
 *
 * A backend (the simulator, later a PCI driver for real parts) binds a
 * struct device, describes the hardware in a struct trn_device_desc and
 * registers it together with its struct trn_hw_ops. The core owns the DRM
 * device, the uAPI and all policy; it reaches the hardware only through the
 * ops and never asks which backend it is talking to.
 */
#ifndef __TRN_HW_H__
#define __TRN_HW_H__

#include <linux/bits.h>
#include <linux/types.h>

struct device;
struct module;
struct sg_table;
struct trn_device;

/**
 * struct trn_device_desc - what a backend tells the core about its device
 * @generation: one of &enum drm_trn_generation
 * @device_id: backend-defined identifier reported to userspace
 * @num_cores: number of NeuronCores, at least one
 * @queues_per_core: hardware queues per NeuronCore, at least one
 * @hbm_size: bytes of device memory
 * @va_start: first device virtual address a context may use (page aligned)
 * @va_size: size of a context's device virtual address range (page aligned)
 * @capabilities: DRM_TRN_CAP_* bits
 * @hbm_cpu_wc: CPU mappings of device memory must be write-combined (a PCI
 *              BAR); otherwise they are cached (the simulator's memory)
 */
struct trn_device_desc {
	u32 generation;
	u32 device_id;
	u32 num_cores;
	u32 queues_per_core;
	u64 hbm_size;
	u64 va_start;
	u64 va_size;
	u64 capabilities;
	bool hbm_cpu_wc;
};

/* Device access rights of a mapping. */
#define TRN_MMU_READ	BIT(0)
#define TRN_MMU_WRITE	BIT(1)

/**
 * struct trn_mmu_map - one mapping to program into a context's MMU
 * @va: device virtual address, page aligned
 * @size: bytes, page aligned
 * @prot: TRN_MMU_* rights
 * @sgt: host memory, DMA-mapped for the backend's device; or NULL for
 * @hbm_offset: device memory at this offset
 */
struct trn_mmu_map {
	u64 va;
	u64 size;
	u32 prot;
	struct sg_table *sgt;
	u64 hbm_offset;
};

/**
 * struct trn_hw_ops - hardware operations a backend provides
 * @owner: module implementing the ops; pinned while a file is open on one of
 *         its devices so that the backend outlives every user of its ops
 * @hw_init: optional; bring the hardware up, called before the device is
 *           visible to userspace
 * @hw_fini: optional; quiesce the hardware, called after the device was
 *           unplugged (no new hardware access can start)
 * @ctx_init: create MMU context @ctx (an address space with nothing mapped)
 * @ctx_fini: destroy MMU context @ctx; nothing is mapped in it any more
 * @mmu_map: map @map into context @ctx; the range is unmapped before
 * @mmu_unmap: remove the mapping of [@va, @va + @size) from context @ctx
 * @hbm_pfn: store in @pfn the CPU page frame through which the CPU reaches
 *           device memory at @offset (page aligned), for mmap

 * @hbm_clear: zero device memory [@offset, @offset + @size) before it is
 *             handed out again; it must read as zero when this returns
 *
 * The core calls the context, MMU and memory operations only between
 * drm_dev_enter() and drm_dev_exit(), and serialises calls for one context.
 */
struct trn_hw_ops {
	struct module *owner;
	int (*hw_init)(struct trn_device *tdev);
	void (*hw_fini)(struct trn_device *tdev);
	int (*ctx_init)(struct trn_device *tdev, u32 ctx);
	void (*ctx_fini)(struct trn_device *tdev, u32 ctx);
	int (*mmu_map)(struct trn_device *tdev, u32 ctx,
		       const struct trn_mmu_map *map);
	void (*mmu_unmap)(struct trn_device *tdev, u32 ctx, u64 va, u64 size);
	int (*hbm_pfn)(struct trn_device *tdev, u64 offset, unsigned long *pfn);
	void (*hbm_clear)(struct trn_device *tdev, u64 offset, u64 size);
};

struct trn_device *trn_device_register(struct device *parent,
				       const struct trn_device_desc *desc,
				       const struct trn_hw_ops *ops,
				       void *hw_priv);
void trn_device_unregister(struct trn_device *tdev);
void *trn_device_hw_priv(struct trn_device *tdev);
void trn_device_mmu_fault(struct trn_device *tdev, u32 ctx, u64 va,
			  bool write);

#endif /* __TRN_HW_H__ */
