// SPDX-License-Identifier: GPL-2.0-only
/*
 * drm_sched_start() takes the error to set on fences of jobs it cannot
 * resubmit (6.13).
 */
#include <drm/gpu_scheduler.h>
#include <linux/module.h>

void trn_probe(struct drm_gpu_scheduler *sched);
void trn_probe(struct drm_gpu_scheduler *sched)
{
	drm_sched_start(sched, 0);
}
MODULE_LICENSE("GPL");
