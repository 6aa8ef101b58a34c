// SPDX-License-Identifier: GPL-2.0-only
/*
 * drm_sched_job_init() takes the submitting client's id, for tracing.
 */
#include <drm/gpu_scheduler.h>
#include <linux/module.h>

int trn_probe(struct drm_sched_job *job, struct drm_sched_entity *entity);
int trn_probe(struct drm_sched_job *job, struct drm_sched_entity *entity)
{
	return drm_sched_job_init(job, entity, 1, NULL, 0);
}
MODULE_LICENSE("GPL");
