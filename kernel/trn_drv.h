/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * Private state of the trn core, shared by its files.
 */
#ifndef __TRN_DRV_H__
#define __TRN_DRV_H__

#include <drm/drm_device.h>
#include <drm/drm_file.h>

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
 */
struct trn_device {
	struct drm_device drm;
	struct trn_device_desc desc;
	const struct trn_hw_ops *ops;
	void *hw_priv;
};

/**
 * struct trn_file - one open file: a context with its own handles
 * @tdev: the device this context belongs to
 */
struct trn_file {
	struct trn_device *tdev;
};

static inline struct trn_device *to_trn_device(struct drm_device *drm)
{
	return container_of(drm, struct trn_device, drm);
}

extern const struct drm_driver trn_drm_driver;

int trn_ioctl_query(struct drm_device *drm, void *data, struct drm_file *file);

#if IS_ENABLED(CONFIG_KUNIT)
struct drm_trn_query;
int trn_query_copy_out(struct drm_trn_query *args, const void *answer,
		       u32 size, u32 min_size);
int trn_desc_validate(struct device *parent,
		      const struct trn_device_desc *desc);
#endif

#endif /* __TRN_DRV_H__ */
