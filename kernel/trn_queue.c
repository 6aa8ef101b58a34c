// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Queues: a context's ordered streams of jobs. A queue is a scheduler
 * entity on one hardware ring of its NeuronCore, a timeline syncobj whose
 * point N is job N, and a completion record that userspace maps to see
 * progress without a system call. A queue holds at most trn_queue_depth()
 * unfinished jobs; submitters beyond that wait for room.
 *
 * Destroying a queue waits for nothing: its unfinished jobs are
 * cancelled, those on the hardware by a flag the device obeys at their next
 * command boundary, the others when they would run, each in its place in
 * the queue's order so that the completion record stays in order; the
 * queue itself goes with its last job.
 */

#include <linux/capability.h>
#include <linux/dma-fence.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>

#include <uapi/drm/trn_accel.h>

#include "trn_drv.h"

/* Queues a context may have at once. */
#define TRN_MAX_QUEUES_PER_FILE	256

static void trn_queue_release(struct kref *kref)
{
	struct trn_queue *queue = container_of(kref, struct trn_queue,
					       refcount);
	u32 i;

	if (queue->uq)
		trn_uq_free(queue);
	else
		/* No job is left, so the scheduler has no use for the entity. */
		drm_sched_entity_fini(&queue->entity);
	for (i = 0; i < queue->gc_count; i++)
		dma_fence_put(queue->gc_points[(queue->gc_first + i) %
					       TRN_QUEUE_GC_POINTS]);
	drm_syncobj_put(queue->syncobj);
	drm_gem_object_put(&queue->status_bo->base);
	mutex_destroy(&queue->submit_lock);
	trn_ctx_put(queue->ctx);
	kfree(queue);
}

/**
 * trn_queue_put() - drop a reference to a queue
 * @queue: the queue
 *
 * The last reference frees the queue, which may sleep.
 */
void trn_queue_put(struct trn_queue *queue)
{
	kref_put(&queue->refcount, trn_queue_release);
}

/**
 * trn_queue_lookup() - find a queue of a context and take a reference
 * @tfile: the context
 * @id: the queue's number
 *
 * Return: the queue, or NULL.
 */
struct trn_queue *trn_queue_lookup(struct trn_file *tfile, u32 id)
{
	struct trn_queue *queue;

	xa_lock(&tfile->queues);
	queue = xa_load(&tfile->queues, id);
	if (queue)
		kref_get(&queue->refcount);
	xa_unlock(&tfile->queues);
	return queue;
}

/**
 * trn_queue_job_done() - record the outcome of a finished job
 * @queue: its queue
 * @job: the job, in completion order
 * @error: 0 or the negative errno its fences get
 *
 * Updates the queue's state and the completion record userspace reads,
 * in the order the uAPI promises: failure entry, failure count, then the
 * completed number. Callable from any context.
 */
void trn_queue_job_done(struct trn_queue *queue, struct trn_job *job,
			int error)
{
	struct trn_bo *status_bo = queue->status_bo;
	struct drm_trn_queue_status_page *page;
	unsigned long flags;

	spin_lock_irqsave(&queue->status_lock, flags);
	/* The record's page changes only at unplug, under the buffer's lock. */
	spin_lock(&status_bo->sync_lock);
	page = page_address(status_bo->pages[0]);
	if (error) {
		struct drm_trn_job_failure *f;

		f = &page->failures[queue->failed %
				    DRM_TRN_STATUS_PAGE_FAILURES];
		WRITE_ONCE(f->seqno, job->seqno);
		/*
		 * A reader that sees the new error sees the new number: the
		 * slot may be rewritten under a reader of the ring's oldest
		 * entry, who re-reads the number after the error.
		 */
		smp_wmb();
		WRITE_ONCE(f->error, -error);
		WRITE_ONCE(f->status, job->hw.status);
		queue->failed++;
		/* Readers that see the count see the entry. */
		smp_store_release(&page->failed_count, queue->failed);

		queue->last_failure.seqno = job->seqno;
		queue->last_failure.error = -error;
		queue->last_failure.status = job->hw.status;
		queue->last_failure.error_offset = job->hw.error_offset;
		queue->last_failure.error_cmd_va = job->hw.error_cmd_va;
		queue->last_failure.fault_va = job->hw.fault_va;
		if (job->hw.status == DRM_TRN_STATUS_MMU_FAULT)
			queue->state |= DRM_TRN_QUEUE_FAULTED;
		if (job->timed_out) {
			queue->state |= DRM_TRN_QUEUE_GUILTY;
			queue->resets++;
		}
	}
	if (job->seqno > queue->completed) {
		/* Also read without the lock (trn_job.c). */
		WRITE_ONCE(queue->completed, job->seqno);
		/* Readers that see the job finished see its failure entry. */
		smp_store_release(&page->completed_seqno, job->seqno);
	}
	spin_unlock(&status_bo->sync_lock);
	spin_unlock_irqrestore(&queue->status_lock, flags);

	/*
	 * Room for a submitter waiting at the queue's depth: woken once a
	 * whole submission's worth is free, not at every job, so that a
	 * producer that keeps the queue full pays a wake-up per 256 jobs.
	 */
	if (wq_has_sleeper(&queue->space) &&
	    READ_ONCE(queue->submitted) - job->seqno + DRM_TRN_SUBMIT_MAX_JOBS <=
	    trn_queue_depth())
		wake_up(&queue->space);
}

static enum drm_sched_priority trn_sched_priority(u32 priority)
{
	switch (priority) {
	case DRM_TRN_PRIORITY_LOW:
		return DRM_SCHED_PRIORITY_LOW;
	case DRM_TRN_PRIORITY_HIGH:
		return DRM_SCHED_PRIORITY_HIGH;
	default:
		return DRM_SCHED_PRIORITY_NORMAL;
	}
}

/**
 * trn_ioctl_queue_create() - handler of DRM_IOCTL_TRN_QUEUE_CREATE
 * @drm: the device
 * @data: &struct drm_trn_queue_create
 * @file: the caller
 *
 * Return: 0; -EINVAL for bad arguments; -EOPNOTSUPP for a user-mode queue
 * on a device without them; -EACCES for a high priority without
 * CAP_SYS_NICE; -EMFILE beyond the per-context number of queues; -ENOSPC
 * beyond the device's number of user-mode queues; -ENOMEM; -ENODEV.
 */
int trn_ioctl_queue_create(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct trn_device *tdev = to_trn_device(drm);
	struct trn_file *tfile = file->driver_priv;
	struct drm_trn_queue_create *args = data;
	bool user = args->flags & DRM_TRN_QUEUE_USER_MODE;
	u32 entries = args->ring_entries;
	struct drm_gpu_scheduler *sched;
	struct trn_queue *queue;
	u32 syncobj_handle, id;
	int ret;

	if (args->flags & ~DRM_TRN_QUEUE_USER_MODE || args->ring_handle ||
	    args->doorbell_handle || args->pad)
		return -EINVAL;
	if (args->core >= tdev->desc.num_cores)
		return -EINVAL;
	if (args->priority > DRM_TRN_PRIORITY_HIGH)
		return -EINVAL;
	if (user) {
		entries = entries ?: DRM_TRN_USER_RING_DEFAULT;
		if (!is_power_of_2(entries) ||
		    entries < DRM_TRN_USER_RING_MIN ||
		    entries > DRM_TRN_USER_RING_MAX)
			return -EINVAL;
		/* A well-formed request the device cannot grant. */
		if (!tdev->desc.user_queues)
			return -EOPNOTSUPP;
	} else if (entries) {
		return -EINVAL;
	}
	if (args->priority == DRM_TRN_PRIORITY_HIGH && !capable(CAP_SYS_NICE))
		return -EACCES;

	queue = kzalloc(sizeof(*queue), GFP_KERNEL_ACCOUNT);
	if (!queue)
		return -ENOMEM;
	kref_init(&queue->refcount);
	queue->ctx = tfile->ctx;
	/* Banned from the next ban of the context on. */
	queue->bans = atomic_read(&queue->ctx->bans);
	mutex_init(&queue->submit_lock);
	spin_lock_init(&queue->status_lock);
	init_waitqueue_head(&queue->space);

	ret = drm_syncobj_create(&queue->syncobj, 0, NULL);
	if (ret)
		goto err_free;
	queue->status_bo = trn_bo_create_status(file);
	if (IS_ERR(queue->status_bo)) {
		ret = PTR_ERR(queue->status_bo);
		goto err_syncobj;
	}

	if (user) {
		/* The device runs it on the core; no scheduler. */
		ret = trn_uq_create(queue, file, args->core, entries);
		if (ret)
			goto err_status;
	} else {
		queue->ring = trn_ring_pick(tdev, args->core);
		sched = &queue->ring->sched;
		ret = drm_sched_entity_init(&queue->entity,
					    trn_sched_priority(args->priority),
					    &sched, 1, NULL);
		if (ret)
			goto err_status;
	}

	/* Reserve the number; the queue is visible only once complete. */
	mutex_lock(&tfile->queue_lock);
	ret = xa_alloc(&tfile->queues, &id, NULL,
		       XA_LIMIT(1, TRN_MAX_QUEUES_PER_FILE), GFP_KERNEL);
	if (ret) {
		ret = ret == -EBUSY ? -EMFILE : ret;
		goto err_unlock;
	}
	/*
	 * The handles last, the syncobj's after the buffers': it cannot be
	 * taken back, the others can (the caller learns their numbers only
	 * when this returns).
	 */
	ret = drm_gem_handle_create(file, &queue->status_bo->base,
				    &queue->status_handle);
	if (ret)
		goto err_erase;
	if (user) {
		ret = trn_uq_start(queue, file);
		if (ret)
			goto err_handles;
	}
	ret = drm_syncobj_get_handle(file, queue->syncobj, &syncobj_handle);
	if (ret)
		goto err_stop;
	kref_get(&queue->ctx->refcount);
	queue->id = id;
	xa_store(&tfile->queues, id, queue, GFP_KERNEL);
	mutex_unlock(&tfile->queue_lock);

	args->queue_id = id;
	args->syncobj = syncobj_handle;
	args->status_handle = queue->status_handle;
	if (user) {
		args->ring_entries = entries;
		args->ring_handle = queue->uq->ring_handle;
		args->doorbell_handle = queue->uq->doorbell_handle;
	}
	return 0;

err_stop:
	if (user)
		trn_uq_stop(queue, -ESRCH);
err_handles:
	if (user)
		trn_uq_close_handles(queue, file);
	drm_gem_handle_delete(file, queue->status_handle);
err_erase:
	xa_erase(&tfile->queues, id);
err_unlock:
	mutex_unlock(&tfile->queue_lock);
	if (!user)
		drm_sched_entity_fini(&queue->entity);
err_status:
	if (queue->uq)
		trn_uq_free(queue);
	drm_gem_object_put(&queue->status_bo->base);
err_syncobj:
	drm_syncobj_put(queue->syncobj);
err_free:
	mutex_destroy(&queue->submit_lock);
	kfree(queue);
	return ret;
}

/*
 * Take @queue out of service, already out of its file's table: no new
 * jobs, its unfinished ones are cancelled (with @sweep, those on the
 * hardware are flagged here; else the caller does it for the whole
 * context), submitters waiting for room give up, and the table's
 * reference goes. The queue lives on while its jobs do.
 */
static void trn_queue_retire(struct trn_queue *queue, bool sweep)
{
	WRITE_ONCE(queue->destroyed, true);
	if (queue->uq) {
		/* The device lets go of it; nothing else to cancel. */
		trn_uq_stop(queue, -ESRCH);
		trn_queue_put(queue);
		return;
	}
	/* Serialise against a submit that looked the queue up already. */
	mutex_lock(&queue->submit_lock);
	mutex_unlock(&queue->submit_lock);
	if (sweep)
		trn_rings_cancel(queue->ctx->tdev, queue->ctx);
	wake_up_all(&queue->space);
	trn_queue_put(queue);
}

/*
 * Close @handle of @file if it is still the queue's status buffer: the
 * caller may have closed it and reused the number for something else.
 */
static void trn_queue_close_status(struct drm_file *file,
				   struct trn_queue *queue)
{
	struct drm_gem_object *obj;

	obj = drm_gem_object_lookup(file, queue->status_handle);
	if (!obj)
		return;
	if (obj == &queue->status_bo->base)
		drm_gem_handle_delete(file, queue->status_handle);
	drm_gem_object_put(obj);
}

/**
 * trn_ioctl_queue_destroy() - handler of DRM_IOCTL_TRN_QUEUE_DESTROY
 * @drm: the device
 * @data: &struct drm_trn_queue_destroy
 * @file: the caller
 *
 * Waits for nothing: the queue's unfinished jobs are cancelled (-ESRCH).
 * Closes the queue's status buffer handle (the buffer goes with the
 * queue; CPU mappings of it stay valid until unmapped).
 *
 * Return: 0; -EINVAL for bad flags; -ENOENT for an unknown queue.
 */
int trn_ioctl_queue_destroy(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct trn_file *tfile = file->driver_priv;
	struct drm_trn_queue_destroy *args = data;
	struct trn_queue *queue;

	if (args->flags)
		return -EINVAL;

	mutex_lock(&tfile->queue_lock);
	queue = xa_erase(&tfile->queues, args->queue_id);
	mutex_unlock(&tfile->queue_lock);
	if (!queue)
		return -ENOENT;

	trn_queue_close_status(file, queue);
	if (queue->uq)
		trn_uq_close_handles(queue, file);
	trn_queue_retire(queue, true);
	return 0;
}

/* A kernel queue's part of DRM_IOCTL_TRN_QUEUE_STATUS. */
static void trn_queue_status_fill(struct trn_queue *queue,
				  struct drm_trn_queue_status *args)
{
	unsigned long flags;

	mutex_lock(&queue->submit_lock);
	args->submitted_seqno = queue->submitted;
	mutex_unlock(&queue->submit_lock);

	spin_lock_irqsave(&queue->status_lock, flags);
	args->completed_seqno = queue->completed;
	args->jobs_failed = queue->failed;
	args->failed_seqno = queue->last_failure.seqno;
	args->error = queue->last_failure.error;
	args->status = queue->last_failure.status;
	args->error_offset = queue->last_failure.error_offset;
	args->error_cmd_va = queue->last_failure.error_cmd_va;
	args->fault_va = queue->last_failure.fault_va;
	args->state = queue->state;
	args->resets = queue->resets;
	spin_unlock_irqrestore(&queue->status_lock, flags);
}

/**
 * trn_ioctl_queue_status() - handler of DRM_IOCTL_TRN_QUEUE_STATUS
 * @drm: the device
 * @data: &struct drm_trn_queue_status
 * @file: the caller
 *
 * Return: 0; -EINVAL for bad flags; -ENOENT for an unknown queue.
 */
int trn_ioctl_queue_status(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct trn_file *tfile = file->driver_priv;
	struct drm_trn_queue_status *args = data;
	struct trn_queue *queue;
	u32 id = args->queue_id;

	if (args->flags)
		return -EINVAL;
	queue = trn_queue_lookup(tfile, id);
	if (!queue)
		return -ENOENT;

	memset(args, 0, sizeof(*args));
	args->queue_id = id;
	if (queue->uq)
		trn_uq_status(queue, args);
	else
		trn_queue_status_fill(queue, args);
	if (trn_queue_banned(queue))
		args->state |= DRM_TRN_QUEUE_BANNED;

	trn_queue_put(queue);
	return 0;
}

/**
 * trn_queues_init() - prepare a new file's queue table
 * @tfile: the file
 *
 * Return: 0.
 */
int trn_queues_init(struct trn_file *tfile)
{
	mutex_init(&tfile->queue_lock);
	xa_init_flags(&tfile->queues, XA_FLAGS_ALLOC1);
	return 0;
}

/**
 * trn_queues_close() - a file closes: cancel its jobs, end its queues
 * @tfile: the file
 *
 * Every job of the file that has not finished is cancelled (-ESRCH): the
 * ones still queued when they would run, the ones on the hardware at
 * their next command boundary. Nothing waits for them.
 */
void trn_queues_close(struct trn_file *tfile)
{
	struct trn_queue *queue;
	unsigned long id;

	/* The last reference to the file is gone: nothing races with us. */
	xa_for_each(&tfile->queues, id, queue) {
		xa_erase(&tfile->queues, id);
		trn_queue_retire(queue, false);
	}
	trn_ctx_close(tfile->ctx);
}

/**
 * trn_queues_fini() - free a closed file's queue table
 * @tfile: the file, closed by trn_queues_close()
 */
void trn_queues_fini(struct trn_file *tfile)
{
	WARN_ON(!xa_empty(&tfile->queues));
	xa_destroy(&tfile->queues);
	mutex_destroy(&tfile->queue_lock);
}
