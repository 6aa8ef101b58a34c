// SPDX-License-Identifier: GPL-2.0-only
/*
 * fdinfo's drm-active-<region> key is printed only for drivers that say
 * they fill it (DRM_GEM_OBJECT_ACTIVE, newer kernels); before, it was always
 * printed.
 */
#include <drm/drm_gem.h>
#include <linux/module.h>

enum drm_gem_object_status trn_probe(void);
enum drm_gem_object_status trn_probe(void)
{
	return DRM_GEM_OBJECT_ACTIVE;
}
MODULE_LICENSE("GPL");
