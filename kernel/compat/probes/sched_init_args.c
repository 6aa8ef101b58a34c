// SPDX-License-Identifier: GPL-2.0-only
/*
 * drm_sched_init() takes a struct drm_sched_init_args (6.15, and 6.12
 * stable from 6.12.117 on) instead of a list of ten arguments.
 */
#include <drm/gpu_scheduler.h>
#include <linux/module.h>

int trn_probe(struct drm_gpu_scheduler *sched);
int trn_probe(struct drm_gpu_scheduler *sched)
{
	const struct drm_sched_init_args args = { .num_rqs = 1 };

	return drm_sched_init(sched, &args);
}
MODULE_LICENSE("GPL");
