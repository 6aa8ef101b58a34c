// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Jobs: DRM_IOCTL_TRN_SUBMIT and a job's life until it is freed.
 *
 * A submission is checked and prepared completely (every lookup, every
 * allocation, every reservation) before the first job is armed, so a call
 * that fails queues nothing; what follows cannot fail. The jobs of one call
 * take consecutive numbers on their queue and enter its scheduler entity in
 * that order under the queue's submit lock. A queue holds at most
 * trn_queue_depth() unfinished jobs: a submit beyond that waits, or fails
 * with -EAGAIN with %DRM_TRN_SUBMIT_NONBLOCK.
 *
 * A job holds everything it uses (its queue and so its context, its
 * buffers and their mappings) until it is freed, which happens outside the
 * scheduler's work items, in trn_jobs_free_work(). The list of jobs to
 * free and that work are the module's, not a device's (see trn_free_jobs).
 */

#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/llist.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/gpu_scheduler.h>

#include <uapi/drm/trn_accel.h>

#include "trn_compat.h"
#include "trn_drv.h"

/* The first version of struct drm_trn_job; later ones only grow. */
#define TRN_JOB_SIZE_V1		64
/* Larger strides are surely a mistake. */
#define TRN_JOB_SIZE_MAX	4096
/* Submissions of up to this many jobs keep their job array on the stack. */
#define TRN_SUBMIT_FEW_JOBS	8

#define TRN_SUBMIT_FLAGS	DRM_TRN_SUBMIT_NONBLOCK

/* A timeline node, charged to the submitter's memory cgroup. */
static struct dma_fence_chain *trn_chain_alloc(void)
{
	return kmalloc(sizeof(struct dma_fence_chain), GFP_KERNEL_ACCOUNT);
}

/* Drop a node: our reference once it is in a timeline, else the memory. */
static void trn_chain_put(struct dma_fence_chain *chain, bool armed)
{
	if (!chain)
		return;
	if (armed)
		dma_fence_put(&chain->base);
	else
		dma_fence_chain_free(chain);
}

/* Release what a job holds and free it; may sleep. */
static void trn_job_release(struct trn_job *job)
{
	bool armed = job->armed;
	u32 i;

	drm_sched_job_cleanup(&job->base);
	for (i = 0; i < job->bo_count; i++) {
		/* The mapping first: it may be the buffer's last user. */
		if (job->maps[i])
			trn_mapping_put(job->maps[i]);
		drm_gem_object_put(job->bos[i]);
	}
	if (job->bos != job->bos_inline) {
		kvfree(job->bos);
		kvfree(job->maps);
	}
	for (i = 0; i < job->out_count; i++) {
		struct trn_job_out *out = &job->outs[i];

		if (out->syncobj)
			drm_syncobj_put(out->syncobj);
		dma_fence_chain_free(out->chain);
		dma_fence_put(out->point_fence);
	}
	kfree(job->outs);
	trn_chain_put(job->queue_chain, armed);
	if (job->hw.fence)
		dma_fence_put(job->hw.fence);
	/* Never ran: the preallocated fence was never initialised. */
	kfree(job->hw_fence);
	trn_queue_put(job->queue);
	kmem_cache_free(trn_job_cache, job);
}

/*
 * Jobs the schedulers are done with, of every device, and the work that
 * releases them. They are the module's rather than a device's because a
 * job may be released, by a run of the work already under way, as soon as
 * it is on the list; its release can drop the last reference to its
 * device, so trn_job_free() must not touch the device after llist_add()
 * (a per-device work item, queued after that, was queued in freed memory).
 */
static LLIST_HEAD(trn_free_jobs);
static void trn_jobs_free_work(struct work_struct *work);
static DECLARE_DELAYED_WORK(trn_free_work, trn_jobs_free_work);

/*
 * Releasing a job may free buffers, unmap them from the device and tear
 * down its context and device, all of which may sleep and allocate; none
 * of it may hold up the scheduler's own work items, which run the jobs
 * that fences (and so memory reclaim) wait for.
 */
static void trn_jobs_free_work(struct work_struct *work)
{
	struct llist_node *jobs = llist_del_all(&trn_free_jobs);
	struct trn_job *job, *tmp;

	llist_for_each_entry_safe(job, tmp, jobs, free_node)
		trn_job_release(job);
}

/**
 * trn_job_free() - the scheduler is done with a job
 * @job: the job, armed or not
 *
 * Defers the release to trn_jobs_free_work(), which runs a jiffy later, so
 * that a stream of jobs costs one wake-up of the freeing worker per jiffy
 * rather than one per job. Callable from any context.
 */
void trn_job_free(struct trn_job *job)
{
	/* Cancelled before it was even handed to the ring. */
	if (job->armed && !job->retired)
		atomic64_inc(&job->ring->tdev->stats.failed);
	/* From here on the job, and maybe its device, may be gone. */
	llist_add(&job->free_node, &trn_free_jobs);
	queue_delayed_work(trn_wq, &trn_free_work, 1);
}

/**
 * trn_jobs_flush() - release every job the schedulers are done with, and
 * wait for a release under way
 *
 * For module unload, when no device is left: a run of the work may be
 * pending with nothing to release (its jobs were taken by the run before).
 */
void trn_jobs_flush(void)
{
	flush_delayed_work(&trn_free_work);
}

/*
 * Give the job's failure to its timeline points too: a dma_fence_chain
 * node does not take its fence's error, so without this a point of a
 * failed job would read as a success. The job's fences are not signalled
 * yet, so neither are the nodes.
 */
static void trn_job_fail_points(struct trn_job *job, int error)
{
	u32 i;

	if (!job->armed)
		return;
	for (i = 0; i < job->out_count; i++)
		if (job->outs[i].point_fence)
			dma_fence_set_error(job->outs[i].point_fence, error);
	dma_fence_set_error(&job->queue_chain->base, error);
}

/**
 * trn_job_count_failure() - count a failed job by its status
 * @tdev: the device
 * @status: the job's &enum drm_trn_job_status
 *
 * For sysfs jobs_failed_by_status/; a job the device failed itself makes
 * the device degraded. Callable from any context.
 */
void trn_job_count_failure(struct trn_device *tdev, u32 status)
{
	if (status >= TRN_STATUS_COUNT)
		return;
	atomic64_inc(&tdev->stats.failed_by[status]);
	if (status == DRM_TRN_STATUS_DEVICE_ERROR && !READ_ONCE(tdev->wedged))
		trn_health_trouble(tdev, TRN_TROUBLE_DEVICE_ERROR);
}

/**
 * trn_job_retire() - the device is done with a job
 * @job: the job, off its ring, with &trn_job.hw filled in
 * @error: 0 or the negative errno its fences get
 *
 * Gives the CPU the job's buffers, accounts for the job, applies the ban
 * policy to a faulting context and signals the hardware fence, which is
 * the last thing done with it here: the scheduler may free it right
 * after. Called with the ring's lock held, the job just taken off the
 * ring; allocates nothing.
 */
void trn_job_retire(struct trn_job *job, int error)
{
	struct trn_queue *queue = job->queue;
	struct trn_ring *ring = job->ring;
	struct trn_device *tdev = ring->tdev;
	struct trn_core_stats *core = &tdev->cores[ring->core];
	struct dma_fence *fence = job->hw.fence;
	struct trn_ring_record *rec;
	u64 run_ns = 0;
	u32 i;

	lockdep_assert_held(&ring->lock);

	if (job->dma_begun)
		for (i = 0; i < job->bo_count; i++)
			trn_bo_dma_end(to_trn_bo(job->bos[i]));
	if (job->hw.end_ns > job->hw.start_ns) {
		run_ns = job->hw.end_ns - job->hw.start_ns;
		atomic64_add(run_ns, &queue->ctx->engine_ns[ring->core]);
		atomic64_add(run_ns, &core->busy_ns);
	}
	atomic64_inc(error ? &tdev->stats.failed : &tdev->stats.completed);
	atomic64_inc(error ? &core->failed : &core->completed);
	atomic64_inc(error ? &queue->ctx->jobs_failed :
			     &queue->ctx->jobs_completed);
	/* For post-mortem dumps (trn_coredump.c). */
	rec = &ring->history[ring->history_next++ % TRN_RING_HISTORY];
	rec->ring_seqno = job->ring_seqno;
	rec->seqno = job->seqno;
	rec->ctx = queue->ctx->id;
	rec->queue = queue->id;
	rec->status = job->hw.status;
	rec->run_ns = run_ns;
	if (error)
		trn_job_count_failure(tdev, job->hw.status);
	job->retired = true;
	trn_queue_job_done(queue, job, error);
	if (job->hw.status == DRM_TRN_STATUS_MMU_FAULT)
		trn_ctx_job_faulted(queue->ctx);

	if (error) {
		trn_job_fail_points(job, error);
		dma_fence_set_error(fence, error);
	}
	dma_fence_signal(fence);
}

/**
 * trn_job_fail_unrun() - record a job that will never reach the hardware
 * @job: the job, in run_job
 * @error: the negative errno its fences get
 *
 * For a job the scheduler runs on a device that is gone (-ENODEV) or
 * wedged (-EIO).
 */
void trn_job_fail_unrun(struct trn_job *job, int error)
{
	job->hw.status = error == -EIO ? DRM_TRN_STATUS_DEVICE_ERROR :
					 DRM_TRN_STATUS_ABORTED;
	job->retired = true;
	atomic64_inc(&job->ring->tdev->stats.failed);
	atomic64_inc(&job->ring->tdev->cores[job->ring->core].failed);
	atomic64_inc(&job->queue->ctx->jobs_failed);
	trn_job_count_failure(job->ring->tdev, job->hw.status);
	trn_queue_job_done(job->queue, job, error);
	trn_job_fail_points(job, error);
}

static int trn_ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A job's few buffers, looked up one by one into the job itself: most jobs
 * list a buffer or two, and the general lookup costs two allocations.
 */
static int trn_job_lookup_few_bos(struct trn_job *job, struct drm_file *file,
				  const struct drm_trn_job *uj)
{
	u32 handles[TRN_JOB_INLINE_BOS];
	u32 i;

	if (WARN_ON_ONCE(uj->bo_count > ARRAY_SIZE(handles)))
		return -EINVAL;
	if (copy_from_user(handles, u64_to_user_ptr(uj->bo_handles),
			   uj->bo_count * sizeof(u32)))
		return -EFAULT;
	for (i = 0; i < uj->bo_count; i++) {
		job->bos[i] = drm_gem_object_lookup(file, handles[i]);
		if (!job->bos[i])
			return -ENOENT;
		job->bo_count = i + 1;
	}
	return 0;
}

/* Buffer lists up to this long are checked for duplicates pair by pair. */
#define TRN_JOB_FEW_BOS		16

/* -EINVAL if a buffer appears twice among the @n of @bos, else 0. */
static int trn_bos_check_unique(struct drm_gem_object **bos, u32 n)
{
	struct drm_gem_object **sorted;
	int ret = 0;
	u32 i, j;

	/* Few: compare each pair rather than allocate and sort. */
	if (n <= TRN_JOB_FEW_BOS) {
		for (i = 1; i < n; i++)
			for (j = 0; j < i; j++)
				if (bos[i] == bos[j])
					return -EINVAL;
		return 0;
	}
	sorted = kmemdup_array(bos, n, sizeof(*sorted), GFP_KERNEL);
	if (!sorted)
		return -ENOMEM;
	sort(sorted, n, sizeof(*sorted), trn_ptr_cmp, NULL);
	for (i = 1; i < n; i++)
		if (sorted[i] == sorted[i - 1])
			ret = -EINVAL;
	kfree(sorted);
	return ret;
}

/*
 * Look up the job's buffers (each may appear once) and take a reference
 * to each one's mapping in the job's context.
 */
static int trn_job_lookup_bos(struct trn_job *job, struct drm_file *file,
			      const struct drm_trn_job *uj)
{
	struct trn_ctx *ctx = job->queue->ctx;
	int ret;
	u32 i;

	if (!uj->bo_count)
		return 0;
	if (uj->bo_count <= TRN_JOB_INLINE_BOS) {
		ret = trn_job_lookup_few_bos(job, file, uj);
	} else {
		job->maps = kvcalloc(uj->bo_count, sizeof(*job->maps),
				     GFP_KERNEL_ACCOUNT);
		if (!job->maps)
			return -ENOMEM;
		job->bos = NULL;
		ret = drm_gem_objects_lookup(file,
					     u64_to_user_ptr(uj->bo_handles),
					     uj->bo_count, &job->bos);
		/* On failure the lookup may leave an array to put. */
		if (job->bos) {
			job->bo_count = uj->bo_count;
		} else {
			kvfree(job->maps);
			job->maps = job->maps_inline;
			job->bos = job->bos_inline;
		}
	}
	if (ret)
		return ret;
	ret = trn_bos_check_unique(job->bos, job->bo_count);
	if (ret)
		return ret;
	for (i = 0; i < job->bo_count; i++) {
		struct trn_bo *bo = to_trn_bo(job->bos[i]);

		job->maps[i] = trn_bo_mapping_get(bo, ctx);
		/* The handle was closed since the lookup. */
		if (!job->maps[i])
			return -ENOENT;
		job->dma_sync |= bo->dma_sync;
	}
	return 0;
}

static int trn_job_add_in_syncs(struct trn_job *job, struct drm_file *file,
				const struct drm_trn_job *uj)
{
	struct drm_trn_sync __user *usyncs = u64_to_user_ptr(uj->in_syncs);
	struct drm_trn_sync sync;
	u32 i;
	int ret;

	for (i = 0; i < uj->in_count; i++) {
		if (copy_from_user(&sync, &usyncs[i], sizeof(sync)))
			return -EFAULT;
		if (sync.flags)
			return -EINVAL;
		ret = drm_sched_job_add_syncobj_dependency(&job->base, file,
							   sync.handle,
							   sync.point);
		if (ret)
			return ret;
	}
	return 0;
}

static int trn_job_get_out_syncs(struct trn_job *job, struct drm_file *file,
				 const struct drm_trn_job *uj)
{
	struct drm_trn_sync __user *usyncs = u64_to_user_ptr(uj->out_syncs);
	struct drm_trn_sync sync;
	u32 i;

	if (!uj->out_count)
		return 0;
	job->outs = kcalloc(uj->out_count, sizeof(*job->outs),
			    GFP_KERNEL_ACCOUNT);
	if (!job->outs)
		return -ENOMEM;
	job->out_count = uj->out_count;

	for (i = 0; i < uj->out_count; i++) {
		struct trn_job_out *out = &job->outs[i];

		if (copy_from_user(&sync, &usyncs[i], sizeof(sync)))
			return -EFAULT;
		if (sync.flags)
			return -EINVAL;
		out->syncobj = drm_syncobj_find(file, sync.handle);
		if (!out->syncobj)
			return -ENOENT;
		out->point = sync.point;
		if (sync.point) {
			out->chain = trn_chain_alloc();
			if (!out->chain)
				return -ENOMEM;
		}
	}
	return 0;
}

static int trn_job_check(struct trn_device *tdev, const struct drm_trn_job *uj)
{
	u64 va_end = tdev->desc.va_start + tdev->desc.va_size;

	if (uj->flags || uj->pad)
		return -EINVAL;
	if (!uj->cmd_size || !IS_ALIGNED(uj->cmd_size, 8) ||
	    uj->cmd_size > DRM_TRN_JOB_MAX_CMD_SIZE)
		return -EINVAL;
	if (!IS_ALIGNED(uj->cmd_va, 8) || uj->cmd_va < tdev->desc.va_start ||
	    uj->cmd_va > va_end - uj->cmd_size)
		return -EINVAL;
	if (uj->bo_count > DRM_TRN_JOB_MAX_BOS ||
	    uj->in_count > DRM_TRN_JOB_MAX_FENCES ||
	    uj->out_count > DRM_TRN_JOB_MAX_FENCES)
		return -EINVAL;
	return 0;
}

/* Free a job that was never armed, at once; may sleep. */
static void trn_job_discard(struct trn_job *job)
{
	trn_job_release(job);
}

/* Build one job from its uAPI description; nothing is visible yet. */
static struct trn_job *trn_job_create(struct trn_queue *queue,
				      struct drm_file *file,
				      const struct drm_trn_job *uj)
{
	struct trn_file *tfile = file->driver_priv;
	struct trn_job *job;
	int ret;

	ret = trn_job_check(tfile->tdev, uj);
	if (ret)
		return ERR_PTR(ret);

	job = kmem_cache_zalloc(trn_job_cache, GFP_KERNEL);
	if (!job)
		return ERR_PTR(-ENOMEM);
	kref_get(&queue->refcount);
	job->queue = queue;
	job->ring = queue->ring;
	job->cmd_va = uj->cmd_va;
	job->cmd_size = uj->cmd_size;
	job->bos = job->bos_inline;
	job->maps = job->maps_inline;
	INIT_LIST_HEAD(&job->link);

	ret = drm_sched_job_init(&job->base, &queue->entity, 1, queue->ctx,
				 file->client_id);
	if (ret) {
		trn_queue_put(queue);
		kmem_cache_free(trn_job_cache, job);
		return ERR_PTR(ret);
	}

	job->hw_fence = kzalloc(sizeof(*job->hw_fence), GFP_KERNEL_ACCOUNT);
	job->queue_chain = trn_chain_alloc();
	if (!job->hw_fence || !job->queue_chain) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = trn_job_lookup_bos(job, file, uj);
	if (ret)
		goto err_free;
	ret = trn_job_add_in_syncs(job, file, uj);
	if (ret)
		goto err_free;
	ret = trn_job_get_out_syncs(job, file, uj);
	if (ret)
		goto err_free;
	return job;

err_free:
	trn_job_discard(job);
	return ERR_PTR(ret);
}

/*
 * Every distinct buffer of the submission, for locking: the job's own array
 * for a single job (its buffers are distinct), else an allocation that the
 * caller frees.
 */
static int trn_submit_collect_bos(struct trn_job **jobs, u32 count,
				  struct drm_gem_object ***out, u32 *nout)
{
	struct drm_gem_object **objs;
	u32 i, j, n = 0, total = 0;

	for (i = 0; i < count; i++)
		total += jobs[i]->bo_count;
	*out = NULL;
	*nout = 0;
	if (!total)
		return 0;
	if (count == 1) {
		*out = jobs[0]->bos;
		*nout = total;
		return 0;
	}
	objs = kvmalloc_array(total, sizeof(*objs), GFP_KERNEL);
	if (!objs)
		return -ENOMEM;
	for (i = 0; i < count; i++)
		for (j = 0; j < jobs[i]->bo_count; j++)
			objs[n++] = jobs[i]->bos[j];
	sort(objs, n, sizeof(*objs), trn_ptr_cmp, NULL);
	for (i = 0, j = 0; i < n; i++)
		if (!j || objs[j - 1] != objs[i])
			objs[j++] = objs[i];
	*out = objs;
	*nout = j;
	return 0;
}

/* Lock the buffers and make room for one fence per job in each. */
static int trn_submit_reserve(struct drm_gem_object **objs, u32 n,
			      u32 fences, struct ww_acquire_ctx *ctx)
{
	u32 i;
	int ret;

	ret = drm_gem_lock_reservations(objs, n, ctx);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		ret = dma_resv_reserve_fences(objs[i]->resv, fences);
		if (ret) {
			drm_gem_unlock_reservations(objs, n, ctx);
			return ret;
		}
	}
	return 0;
}

/* Collect the signalled links of a queue's timeline this often. */
#define TRN_QUEUE_GC_INTERVAL	64

/* Whether the job behind timeline point @point finished. */
static bool trn_point_done(struct dma_fence *point)
{
	/* The job's own fence: the chain's would check every older point. */
	return dma_fence_is_signaled(to_dma_fence_chain(point)->fence);
}

/*
 * Free the signalled part of a queue's timeline, and maybe remember @point,
 * the newest, as a place to start from later. A queue's jobs finish in
 * order, so what signalled is the oldest part of the chain, and a walk from
 * the newest point would first cross every job in flight (thousands in a
 * deep pipeline: a fifth of the CPU time when every submit did it).
 * dma_fence_chain_walk() from a point whose job finished unlinks every
 * signalled point behind it; the saved points, oldest first, give the
 * newest such place at a cost that does not grow with the queue's depth.
 *
 * Saved points are spread over the jobs in flight (at least
 * TRN_QUEUE_GC_INTERVAL apart, at most a TRN_QUEUE_GC_POINTS-th of the
 * depth), so that one is always close behind the device: what signalled
 * and is not freed yet stays below about that spacing.
 */
static void trn_queue_collect(struct trn_queue *queue, struct dma_fence *point)
{
	struct dma_fence **points = queue->gc_points;
	struct dma_fence *from = NULL, *last;
	u64 depth, spacing;
	u32 slot;

	lockdep_assert_held(&queue->submit_lock);
	while (queue->gc_count && trn_point_done(points[queue->gc_first])) {
		dma_fence_put(from);
		from = points[queue->gc_first];
		queue->gc_first = (queue->gc_first + 1) % TRN_QUEUE_GC_POINTS;
		queue->gc_count--;
	}
	/* The walk consumes our reference and returns one. */
	if (from)
		dma_fence_put(dma_fence_chain_walk(from));

	if (queue->gc_count == TRN_QUEUE_GC_POINTS)
		return;		/* the saved ones finish first */
	if (queue->gc_count) {
		/* Racy read of the completion count: only a hint. */
		depth = point->seqno - READ_ONCE(queue->completed);
		spacing = max_t(u64, TRN_QUEUE_GC_INTERVAL,
				depth / TRN_QUEUE_GC_POINTS);
		slot = (queue->gc_first + queue->gc_count - 1) %
		       TRN_QUEUE_GC_POINTS;
		last = points[slot];
		if (point->seqno - last->seqno < spacing)
			return;
	}
	slot = (queue->gc_first + queue->gc_count) % TRN_QUEUE_GC_POINTS;
	points[slot] = dma_fence_get(point);
	queue->gc_count++;
}

/*
 * Add point @job->seqno to the queue's timeline syncobj.
 * drm_syncobj_add_point() walks every unsignalled point on each call, which
 * made a deep pipeline quadratic. The queue's timeline only gets increasing
 * points, from here under the submit lock, so the link goes on directly;
 * signalled links are freed every TRN_QUEUE_GC_INTERVAL jobs. The job
 * keeps a reference to its link, to give it its failure.
 */
static void trn_queue_add_point(struct trn_queue *queue, struct trn_job *job,
				struct dma_fence *fence)
{
	struct dma_fence_chain *chain = job->queue_chain;

	lockdep_assert_held(&queue->submit_lock);
	/* The chain takes over both references. */
	dma_fence_chain_init(chain, drm_syncobj_fence_get(queue->syncobj),
			     dma_fence_get(fence), job->seqno);
	drm_syncobj_replace_fence(queue->syncobj, &chain->base);
	if (job->seqno % TRN_QUEUE_GC_INTERVAL == 0)
		trn_queue_collect(queue, &chain->base);
}

/*
 * Make @job visible: its scheduler fence, in its buffers' reservations and
 * in the syncobjs. Called with the buffers locked; cannot fail.
 */
static void trn_job_arm(struct trn_queue *queue, struct trn_job *job)
{
	struct dma_fence *fence;
	u32 i;

	lockdep_assert_held(&queue->submit_lock);

	drm_sched_job_arm(&job->base);
	job->armed = true;
	fence = &job->base.s_fence->finished;

	/* For fdinfo's drm-active and other drivers' bookkeeping. */
	for (i = 0; i < job->bo_count; i++)
		dma_resv_add_fence(job->bos[i]->resv, fence,
				   DMA_RESV_USAGE_BOOKKEEP);
	for (i = 0; i < job->out_count; i++) {
		struct trn_job_out *out = &job->outs[i];

		if (out->chain) {
			/*
			 * The syncobj takes the node; the job takes a
			 * reference to it as soon as it is in, if it still is
			 * (another thread may replace the syncobj's fence at
			 * once): RCU keeps its memory until we looked.
			 */
			rcu_read_lock();
			drm_syncobj_add_point(out->syncobj, out->chain, fence,
					      out->point);
			out->point_fence = dma_fence_get_rcu(&out->chain->base);
			rcu_read_unlock();
			out->chain = NULL;
		} else {
			drm_syncobj_replace_fence(out->syncobj, fence);
		}
	}
	trn_queue_add_point(queue, job, fence);
	queue->submitted = job->seqno;
}

/*
 * Hand an armed job to the scheduler, in number order. From here on it may
 * run, finish and be freed at any moment, and with it its references to
 * its buffers: nothing of it, its buffers included, may be touched after.
 */
static void trn_job_push(struct trn_queue *queue, struct trn_job *job)
{
	lockdep_assert_held(&queue->submit_lock);
	drm_sched_entity_push_job(&job->base);
}

static u64 __user *trn_job_seqno_ptr(struct drm_trn_job __user *ujobs,
				     u32 i, u32 job_size)
{
	return (u64 __user *)((void __user *)ujobs + (size_t)i * job_size +
			      offsetof(struct drm_trn_job, seqno));
}

/* Make the jobs' seqno fields present and writable, without writing. */
static int trn_submit_fault_in(struct drm_trn_job __user *ujobs, u32 n,
			       u32 job_size)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (fault_in_writeable((char __user *)
				       trn_job_seqno_ptr(ujobs, i, job_size),
				       sizeof(u64)))
			return -EFAULT;
	return 0;
}

/* Store the jobs' numbers; never faults, -EFAULT if a page is missing. */
static int trn_submit_write_seqnos(struct drm_trn_job __user *ujobs, u32 n,
				   u32 job_size, u64 first)
{
	int ret = 0;
	u32 i;

	pagefault_disable();
	for (i = 0; i < n && !ret; i++)
		if (put_user(first + i, trn_job_seqno_ptr(ujobs, i, job_size)))
			ret = -EFAULT;
	pagefault_enable();
	return ret;
}

/* Whether @n more jobs fit below the queue's depth (a hint unlocked). */
static bool trn_queue_has_room(struct trn_queue *queue, u32 n)
{
	return READ_ONCE(queue->submitted) - READ_ONCE(queue->completed) + n <=
	       trn_queue_depth();
}

/* Why @queue takes no jobs, or 0. */
static int trn_queue_refuses(struct trn_file *tfile, struct trn_queue *queue)
{
	if (trn_queue_banned(queue))
		return -ECANCELED;
	if (READ_ONCE(queue->destroyed) ||
	    xa_load(&tfile->queues, queue->id) != queue)
		return -ENOENT;
	return 0;
}

/*
 * Wait until @n jobs fit in @queue, unless @nonblock. Returns 0, -EAGAIN,
 * -ERESTARTSYS, or why the queue takes no more jobs.
 */
static int trn_submit_wait_room(struct trn_file *tfile,
				struct trn_queue *queue, u32 n, bool nonblock)
{
	int ret;

	for (;;) {
		ret = trn_queue_refuses(tfile, queue);
		if (ret || trn_queue_has_room(queue, n))
			return ret;
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(queue->space,
					       trn_queue_has_room(queue, n) ||
					       trn_queue_refuses(tfile, queue));
		if (ret)
			return ret;
	}
}

/**
 * trn_ioctl_submit() - handler of DRM_IOCTL_TRN_SUBMIT
 * @drm: the device
 * @data: &struct drm_trn_submit
 * @file: the caller
 *
 * Return: 0 with every job queued; on failure nothing is queued: -EINVAL
 * for bad arguments, -ENOENT for an unknown queue, buffer or syncobj,
 * -ECANCELED for a queue of a banned context, -EAGAIN for a full queue
 * with %DRM_TRN_SUBMIT_NONBLOCK, -EFAULT for bad pointers, -ENOMEM,
 * -EINTR, -ENODEV.
 */
int trn_ioctl_submit(struct drm_device *drm, void *data,
		     struct drm_file *file)
{
	struct trn_device *tdev = to_trn_device(drm);
	struct trn_file *tfile = file->driver_priv;
	struct drm_trn_submit *args = data;
	bool nonblock = args->flags & DRM_TRN_SUBMIT_NONBLOCK;
	struct trn_job *few[TRN_SUBMIT_FEW_JOBS], **jobs = few;
	struct drm_trn_job __user *ujobs;
	struct drm_gem_object **objs;
	struct ww_acquire_ctx ctx;
	struct trn_queue *queue;
	struct drm_trn_job uj;
	u32 i, n = 0, nobjs, tries = 0;
	bool objs_owned;
	u64 first;
	int idx, ret;

	if (args->flags & ~TRN_SUBMIT_FLAGS || !args->job_count ||
	    args->job_count > DRM_TRN_SUBMIT_MAX_JOBS ||
	    args->job_size < TRN_JOB_SIZE_V1 ||
	    args->job_size > TRN_JOB_SIZE_MAX)
		return -EINVAL;

	queue = trn_queue_lookup(tfile, args->queue_id);
	if (!queue)
		return -ENOENT;
	/* A user-mode queue's jobs go through its ring, never through here. */
	if (queue->uq) {
		ret = -EINVAL;
		goto out_put_queue;
	}
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out_put_queue;
	}
	/* Before anything is allocated: a full queue holds nothing more. */
	ret = trn_submit_wait_room(tfile, queue, args->job_count, nonblock);
	if (ret)
		goto out_exit;

	if (args->job_count > ARRAY_SIZE(few)) {
		jobs = kcalloc(args->job_count, sizeof(*jobs),
			       GFP_KERNEL_ACCOUNT);
		if (!jobs) {
			ret = -ENOMEM;
			goto out_exit;
		}
	}

	ujobs = u64_to_user_ptr(args->jobs);
	for (n = 0; n < args->job_count; n++) {
		void __user *src = (void __user *)ujobs +
				   (size_t)n * args->job_size;

		ret = copy_struct_from_user(&uj, sizeof(uj), src,
					    args->job_size);
		if (ret) {
			/* Unknown non-zero bytes are bad arguments. */
			ret = ret == -E2BIG ? -EINVAL : ret;
			goto out_free_jobs;
		}
		jobs[n] = trn_job_create(queue, file, &uj);
		if (IS_ERR(jobs[n])) {
			ret = PTR_ERR(jobs[n]);
			goto out_free_jobs;
		}
	}

	ret = trn_submit_collect_bos(jobs, n, &objs, &nobjs);
	if (ret)
		goto out_free_jobs;
	/* A single job's own array is not ours to free (nor to touch later). */
	objs_owned = n > 1;

	for (;;) {
		/*
		 * The numbers are written back under the reservation locks,
		 * where a page fault must not happen: bring the pages in
		 * first, then write with faults disabled, and start over in
		 * the rare case that a page went away meanwhile.
		 */
		ret = trn_submit_fault_in(ujobs, n, args->job_size);
		if (ret)
			goto out_free_objs;

		mutex_lock(&queue->submit_lock);
		/* Destroyed or banned meanwhile: no more jobs. */
		ret = trn_queue_refuses(tfile, queue);
		if (ret)
			goto out_unlock;
		/* Another submitter took the room: wait for more. */
		if (!trn_queue_has_room(queue, n)) {
			mutex_unlock(&queue->submit_lock);
			ret = trn_submit_wait_room(tfile, queue, n, nonblock);
			if (ret)
				goto out_free_objs;
			continue;
		}
		if (nobjs) {
			ret = trn_submit_reserve(objs, nobjs, n, &ctx);
			if (ret)
				goto out_unlock;
		}
		first = queue->submitted + 1;
		ret = trn_submit_write_seqnos(ujobs, n, args->job_size, first);
		if (!ret)
			break;
		if (nobjs)
			drm_gem_unlock_reservations(objs, nobjs, &ctx);
		mutex_unlock(&queue->submit_lock);
		if (++tries == 4)
			goto out_free_objs;
	}

	for (i = 0; i < n; i++) {
		jobs[i]->seqno = first + i;
		trn_job_arm(queue, jobs[i]);
	}
	/*
	 * Unlock before the jobs can run: a finished job drops its buffer
	 * references, and the last one would free a buffer still locked.
	 */
	if (nobjs)
		drm_gem_unlock_reservations(objs, nobjs, &ctx);
	for (i = 0; i < n; i++)
		trn_job_push(queue, jobs[i]);
	atomic64_add(n, &tdev->stats.submitted);
	n = 0;
	ret = 0;

out_unlock:
	mutex_unlock(&queue->submit_lock);
out_free_objs:
	if (objs_owned)
		kvfree(objs);
out_free_jobs:
	while (n--)
		trn_job_discard(jobs[n]);
	if (jobs != few)
		kfree(jobs);
out_exit:
	drm_dev_exit(idx);
out_put_queue:
	trn_queue_put(queue);
	return ret;
}

/**
 * trn_job_show_fdinfo() - the engine time of a file, for fdinfo
 * @p: where to print
 * @tfile: the file
 *
 * One drm-engine-core<N> key per NeuronCore, in nanoseconds of device time
 * the file's jobs ran; the number of queues the file has, and the jobs of
 * its context that completed and failed.
 */
void trn_job_show_fdinfo(struct drm_printer *p, struct trn_file *tfile)
{
	struct trn_ctx *ctx = tfile->ctx;
	struct trn_queue *queue;
	unsigned long id;
	u32 i, queues = 0;

	/* What user-mode queues did since the device last interrupted. */
	mutex_lock(&tfile->queue_lock);
	xa_for_each(&tfile->queues, id, queue) {
		if (queue->uq)
			trn_uq_harvest(queue->uq);
		queues++;
	}
	mutex_unlock(&tfile->queue_lock);
	for (i = 0; i < tfile->tdev->desc.num_cores; i++)
		drm_printf(p, "drm-engine-core%u:\t%lld ns\n", i,
			   atomic64_read(&ctx->engine_ns[i]));
	drm_printf(p, "trn-queues:\t%u\n", queues);
	drm_printf(p, "trn-jobs-completed:\t%lld\n",
		   atomic64_read(&ctx->jobs_completed));
	drm_printf(p, "trn-jobs-failed:\t%lld\n",
		   atomic64_read(&ctx->jobs_failed));
}
