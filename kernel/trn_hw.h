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

#include <linux/types.h>

struct device;
struct module;
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
};

/**
 * struct trn_hw_ops - hardware operations a backend provides
 * @owner: module implementing the ops; pinned while a file is open on one of
 *         its devices so that the backend outlives every user of its ops
 * @hw_init: optional; bring the hardware up, called before the device is
 *           visible to userspace
 * @hw_fini: optional; quiesce the hardware, called after the device was
 *           unplugged (no new hardware access can start)
 */
struct trn_hw_ops {
	struct module *owner;
	int (*hw_init)(struct trn_device *tdev);
	void (*hw_fini)(struct trn_device *tdev);
};

struct trn_device *trn_device_register(struct device *parent,
				       const struct trn_device_desc *desc,
				       const struct trn_hw_ops *ops,
				       void *hw_priv);
void trn_device_unregister(struct trn_device *tdev);
void *trn_device_hw_priv(struct trn_device *tdev);

#endif /* __TRN_HW_H__ */
