// SPDX-License-Identifier: GPL-2.0-only
/*
 * The timeout handler reports a successful reset as
 * DRM_GPU_SCHED_STAT_RESET; it was DRM_GPU_SCHED_STAT_NOMINAL before 6.17.
 */
#include <drm/gpu_scheduler.h>
#include <linux/module.h>

enum drm_gpu_sched_stat trn_probe(void);
enum drm_gpu_sched_stat trn_probe(void)
{
	return DRM_GPU_SCHED_STAT_RESET;
}
MODULE_LICENSE("GPL");
