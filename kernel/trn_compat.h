/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (c) 2026 The trn authors
 *
 * Every difference between the kernels trn supports lives here, as
 * wrappers that let the driver read like current upstream code. Which side
 * of each difference the target kernel is on is decided by the build-time
 * probes in compat/probes/ (see scripts/compat-probe.sh), never by version
 * numbers.
 */
#ifndef __TRN_COMPAT_H__
#define __TRN_COMPAT_H__

#include <linux/module.h>

#include "trn_compat_probed.h"

/*
 * Before 6.13 a symbol namespace was an identifier that the macros
 * stringified; now it is a string literal. Let MODULE_IMPORT_NS() take the
 * literal everywhere.
 */
#ifdef TRN_HAVE_SYMBOL_NS_IDENTIFIER
#undef MODULE_IMPORT_NS
#define MODULE_IMPORT_NS(ns)	MODULE_INFO(import_ns, ns)
#endif

/* Whether a mapping is private and writable, i.e. copied on write. */
#ifndef TRN_HAVE_VMA_IS_COW_MAPPING
#include <linux/mm.h>

static inline bool vma_is_cow_mapping(const struct vm_area_struct *vma)
{
	return is_cow_mapping(vma->vm_flags);
}
#endif

/*
 * drm_sched_init() took its parameters one by one before it took a
 * struct drm_sched_init_args; provide the structure and unpack it.
 */
#ifndef TRN_HAVE_SCHED_INIT_ARGS
#include <drm/gpu_scheduler.h>

struct drm_sched_init_args {
	const struct drm_sched_backend_ops *ops;
	struct workqueue_struct *submit_wq;
	struct workqueue_struct *timeout_wq;
	u32 num_rqs;
	u32 credit_limit;
	unsigned int hang_limit;
	long timeout;
	atomic_t *score;
	const char *name;
	struct device *dev;
};

static inline int trn_compat_sched_init(struct drm_gpu_scheduler *sched,
					const struct drm_sched_init_args *a)
{
	return drm_sched_init(sched, a->ops, a->submit_wq, a->num_rqs,
			      a->credit_limit, a->hang_limit, a->timeout,
			      a->timeout_wq, a->score, a->name, a->dev);
}

#define drm_sched_init(sched, args)	trn_compat_sched_init(sched, args)
#endif

/* drm_sched_job_init() had no client id (for tracing) to take. */
#ifndef TRN_HAVE_SCHED_JOB_CLIENT_ID
#include <drm/gpu_scheduler.h>

static inline int trn_compat_sched_job_init(struct drm_sched_job *job,
					    struct drm_sched_entity *entity,
					    u32 credits, void *owner,
					    u64 client_id)
{
	return drm_sched_job_init(job, entity, credits, owner);
}

#define drm_sched_job_init	trn_compat_sched_job_init
#endif

/* drm_sched_start() had no error to give jobs it could not resubmit. */
#ifndef TRN_HAVE_SCHED_START_ERRNO
#include <drm/gpu_scheduler.h>

static inline void trn_compat_sched_start(struct drm_gpu_scheduler *sched,
					  int errno)
{
	drm_sched_start(sched);
}

#define drm_sched_start		trn_compat_sched_start
#endif

/* A successful reset was called "nominal". */
#ifndef TRN_HAVE_SCHED_STAT_RESET
#define DRM_GPU_SCHED_STAT_RESET	DRM_GPU_SCHED_STAT_NOMINAL
#endif

/*
 * fdinfo's drm-active-<region> keys: newer kernels print them only for a
 * driver that says it fills them; older ones always print them.
 */
#ifdef TRN_HAVE_GEM_OBJECT_ACTIVE
#define TRN_GEM_OBJECT_ACTIVE	DRM_GEM_OBJECT_ACTIVE
#else
#define TRN_GEM_OBJECT_ACTIVE	0
#endif

/*
 * The dmem cgroup controller: device memory as a region whose use cgroups
 * limit. Its registration took the region's size before it took a struct
 * dmem_cgroup_init; kernels without the controller's interface get stubs
 * that register nothing and charge nothing (as the kernel's own stubs do
 * where the controller is configured out).
 */
#if defined(TRN_HAVE_DMEM_CGROUP_INIT) || defined(TRN_HAVE_DMEM_CGROUP_SIZE)
#include <linux/cgroup_dmem.h>

static inline struct dmem_cgroup_region *
trn_compat_dmem_register(u64 size, const char *name)
{
#ifdef TRN_HAVE_DMEM_CGROUP_INIT
	const struct dmem_cgroup_init init = { .size = size };

	return dmem_cgroup_register_region(&init, "%s", name);
#else
	return dmem_cgroup_register_region(size, "%s", name);
#endif
}
#else
struct dmem_cgroup_region;
struct dmem_cgroup_pool_state;

static inline struct dmem_cgroup_region *
trn_compat_dmem_register(u64 size, const char *name)
{
	return NULL;
}

static inline void
dmem_cgroup_unregister_region(struct dmem_cgroup_region *region)
{
}

static inline int
dmem_cgroup_try_charge(struct dmem_cgroup_region *region, u64 size,
		       struct dmem_cgroup_pool_state **ret_pool,
		       struct dmem_cgroup_pool_state **ret_limit_pool)
{
	*ret_pool = NULL;
	if (ret_limit_pool)
		*ret_limit_pool = NULL;
	return 0;
}

static inline void dmem_cgroup_uncharge(struct dmem_cgroup_pool_state *pool,
					u64 size)
{
}

static inline void
dmem_cgroup_pool_state_put(struct dmem_cgroup_pool_state *pool)
{
}
#endif

#endif /* __TRN_COMPAT_H__ */
