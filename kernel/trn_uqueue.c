// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * User-mode queues. The process writes job descriptors into a ring it has
 * mapped and stores the new job's number in a doorbell page it has mapped;
 * the device watches that write pointer and runs the jobs in the queue's
 * context, whose MMU checks every address, so the kernel sees no job at
 * all. The device writes the queue's completion record (the same status
 * page as other queues have) and reports counters in a state page only
 * the kernel reads.
 *
 * What the kernel still does is what userspace cannot: DMA fences for
 * syncobj interoperation (DRM_IOCTL_TRN_QUEUE_FENCE), a guarantee that
 * each of them signals in bounded time, bans, accounting, and teardown.
 * A fence is made only for a job already announced by the write pointer,
 * never for future work; the device interrupts when the first pending
 * fence's job completes (and after every failed job), and a watchdog runs
 * while fences are pending: a queue that completes nothing for a job
 * timeout has its running job abandoned, its context banned, and a fence
 * still pending one more timeout later fails. So no fence waits for
 * anything but the device, for a bounded time (Documentation/
 * execution.md, "User-mode queues").
 *
 * Locking: &trn_device.uq_lock serialises starting, stopping and
 * removing queues and the backend's uq_init/fini/stop, and is taken on
 * the way to signalling fences (bans, the watchdog), so nothing allocates
 * under it. &trn_uq.lock (a spinlock, interrupts off) protects the fence
 * list and the accounting; the interrupt takes it under the xarray lock of
 * &trn_device.uqs, which is what keeps a queue alive there.
 */

#include <linux/dma-fence.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-mapping.h>
#include <linux/jiffies.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>

#include <uapi/drm/trn_accel.h>

#include "trn_drv.h"

/**
 * struct trn_uq_fence - a fence for a job of a user-mode queue
 * @base: the fence; its seqno is the job's number
 * @lock: the fence's lock, its own: the fence may outlive its queue
 * @link: entry in &trn_uq.fences while pending
 */
struct trn_uq_fence {
	struct dma_fence base;
	/* The fence's lock (dma_fence.lock); nothing else. */
	spinlock_t lock;
	struct list_head link;
};

static const char *trn_uq_fence_driver_name(struct dma_fence *fence)
{
	return TRN_DRIVER_NAME;
}

static const char *trn_uq_fence_timeline_name(struct dma_fence *fence)
{
	return "trn-user-queue";
}

static const struct dma_fence_ops trn_uq_fence_ops = {
	.get_driver_name = trn_uq_fence_driver_name,
	.get_timeline_name = trn_uq_fence_timeline_name,
};

/* Watchdog period: a quarter of the job timeout, at least a jiffy. */
static unsigned long trn_uq_watch_period(struct trn_device *tdev)
{
	return max(msecs_to_jiffies(tdev->job_timeout_ms) / 4, 1UL);
}

static struct drm_trn_doorbell *trn_uq_doorbell(struct trn_uq *uq)
{
	return page_address(uq->doorbell_bo->pages[0]);
}

/*
 * Set DRM_TRN_QUEUE_* @bits in the completion record's state, where the
 * submitter looks before it writes a job. Any context.
 */
static void trn_uq_page_state(struct trn_uq *uq, u32 bits)
{
	struct trn_bo *bo = uq->queue->status_bo;
	struct drm_trn_queue_status_page *page;
	unsigned long flags;

	/* The record's page changes only at unplug, under this lock. */
	spin_lock_irqsave(&bo->sync_lock, flags);
	page = page_address(bo->pages[0]);
	WRITE_ONCE(page->state, READ_ONCE(page->state) | bits);
	spin_unlock_irqrestore(&bo->sync_lock, flags);
}

/* The number of the latest job the device completed; under @uq->lock. */
static u64 trn_uq_completed(struct trn_uq *uq)
{
	u64 completed;

	lockdep_assert_held(&uq->lock);
	if (!uq->state)
		return uq->progress_seqno;
	completed = le64_to_cpu(READ_ONCE(uq->state->completed_seqno));
	/* What the device wrote before it, we read after it. */
	dma_rmb();
	return completed;
}

/*
 * The errno job @seqno (completed) ended with, from the failures the
 * device recorded in the status page: 0, its error, or -EIO if 64 later
 * failures overwrote its entry. Readers of the page follow the uAPI's
 * order: completed_seqno (our caller), failed_count, then the entries.
 */
static int trn_uq_job_error(struct trn_uq *uq, u64 seqno)
{
	const struct drm_trn_queue_status_page *page;
	const struct drm_trn_job_failure *f;
	u64 failed, n, k, s;
	u32 error;

	page = page_address(uq->queue->status_bo->pages[0]);
	/* Pairs with the device's release: the entries counted are written. */
	failed = smp_load_acquire(&page->failed_count);
	n = min_t(u64, failed, DRM_TRN_STATUS_PAGE_FAILURES);
	for (k = 0; k < n; k++) {
		f = &page->failures[(failed - 1 - k) %
				    DRM_TRN_STATUS_PAGE_FAILURES];
		s = READ_ONCE(f->seqno);
		if (s == seqno) {
			/* The device writes the number before the error. */
			smp_rmb();
			error = READ_ONCE(f->error);
			return error ? -(int)min_t(u32, error, MAX_ERRNO) : -EIO;
		}
		if (s < seqno)
			return 0;
	}
	return failed > DRM_TRN_STATUS_PAGE_FAILURES ? -EIO : 0;
}

/*
 * Account for what the device did since the last look: jobs, device time,
 * failures by status and MMU faults (each fault counts towards the
 * context's ban, as a kernel queue's job does). Under @uq->lock; any
 * context.
 */
static void trn_uq_harvest_locked(struct trn_uq *uq)
{
	struct trn_device *tdev = uq->tdev;
	struct trn_ctx *ctx = uq->queue->ctx;
	struct trn_core_stats *core = &tdev->cores[uq->core];
	const struct drm_trn_queue_status_page *page;
	u64 ok, failed, faults, busy, count, k;

	lockdep_assert_held(&uq->lock);
	if (!uq->state)
		return;
	ok = le64_to_cpu(READ_ONCE(uq->state->jobs_ok));
	failed = le64_to_cpu(READ_ONCE(uq->state->jobs_failed));
	faults = le64_to_cpu(READ_ONCE(uq->state->fault_jobs));
	busy = le64_to_cpu(READ_ONCE(uq->state->busy_ns));
	dma_rmb();

	if (ok > uq->seen.ok) {
		atomic64_add(ok - uq->seen.ok, &tdev->stats.submitted);
		atomic64_add(ok - uq->seen.ok, &tdev->stats.completed);
		atomic64_add(ok - uq->seen.ok, &core->completed);
		atomic64_add(ok - uq->seen.ok, &ctx->jobs_completed);
		uq->seen.ok = ok;
	}
	if (failed > uq->seen.failed) {
		atomic64_add(failed - uq->seen.failed, &tdev->stats.submitted);
		atomic64_add(failed - uq->seen.failed, &tdev->stats.failed);
		atomic64_add(failed - uq->seen.failed, &core->failed);
		atomic64_add(failed - uq->seen.failed, &ctx->jobs_failed);
		uq->seen.failed = failed;
	}
	if (busy > uq->seen.busy_ns) {
		atomic64_add(busy - uq->seen.busy_ns, &core->busy_ns);
		atomic64_add(busy - uq->seen.busy_ns, &ctx->engine_ns[uq->core]);
		uq->seen.busy_ns = busy;
	}
	if (faults > uq->seen.faults)
		trn_uq_page_state(uq, DRM_TRN_QUEUE_FAULTED);
	for (; uq->seen.faults < faults; uq->seen.faults++)
		trn_ctx_job_faulted(ctx);

	/* Failures by status, from the entries the page still holds. */
	page = page_address(uq->queue->status_bo->pages[0]);
	/* As in trn_uq_job_error(). */
	count = smp_load_acquire(&page->failed_count);
	k = max_t(u64, uq->seen.failures,
		  count > DRM_TRN_STATUS_PAGE_FAILURES ?
		  count - DRM_TRN_STATUS_PAGE_FAILURES : 0);
	for (; k < count; k++)
		trn_job_count_failure(tdev, READ_ONCE(page->failures
				[k % DRM_TRN_STATUS_PAGE_FAILURES].status));
	if (count > uq->seen.failures)
		uq->seen.failures = count;
}

/**
 * trn_uq_harvest() - account for what a user-mode queue's device did
 * @uq: the queue
 *
 * Before its counters are shown (fdinfo, sysfs, queue status). Any
 * context.
 */
void trn_uq_harvest(struct trn_uq *uq)
{
	unsigned long flags;

	spin_lock_irqsave(&uq->lock, flags);
	trn_uq_harvest_locked(uq);
	spin_unlock_irqrestore(&uq->lock, flags);
}

/* Tell the device when to interrupt: at the first pending fence's job. */
static void trn_uq_arm_locked(struct trn_uq *uq)
{
	struct trn_uq_fence *first;

	lockdep_assert_held(&uq->lock);
	if (!uq->running)
		return;
	first = list_first_entry_or_null(&uq->fences, struct trn_uq_fence,
					 link);
	uq->tdev->ops->uq_irq_at(uq->tdev, uq->hw_id,
				 first ? first->base.seqno : U64_MAX);
}

/* A pending fence is done: off the list, its error, signalled. */
static void trn_uq_fence_done(struct trn_uq *uq, struct trn_uq_fence *f,
			      int error)
{
	lockdep_assert_held(&uq->lock);
	list_del_init(&f->link);
	uq->nr_fences--;
	if (error)
		dma_fence_set_error(&f->base, error);
	dma_fence_signal(&f->base);
	dma_fence_put(&f->base);
}

/*
 * Signal the pending fences whose jobs completed, then re-arm the
 * interrupt for the next one. The completion is read again after the
 * interrupt is armed, so a job that completed while it was being armed is
 * not missed. Under @uq->lock; allocates nothing.
 */
static void trn_uq_signal_locked(struct trn_uq *uq)
{
	struct trn_uq_fence *f, *tmp;
	u64 completed, armed = 0;

	lockdep_assert_held(&uq->lock);
	for (;;) {
		completed = trn_uq_completed(uq);
		list_for_each_entry_safe(f, tmp, &uq->fences, link) {
			if (f->base.seqno > completed)
				break;
			trn_uq_fence_done(uq, f, trn_uq_job_error(uq,
								  f->base.seqno));
		}
		f = list_first_entry_or_null(&uq->fences, struct trn_uq_fence,
					     link);
		if (!f || f->base.seqno == armed || !uq->running)
			break;
		armed = f->base.seqno;
		trn_uq_arm_locked(uq);
	}
}

/* Fail every pending fence with @error, and every new one from now on. */
static void trn_uq_fail_all_locked(struct trn_uq *uq, int error)
{
	struct trn_uq_fence *f, *tmp;

	lockdep_assert_held(&uq->lock);
	uq->failed_all = true;
	uq->fail_error = error;
	list_for_each_entry_safe(f, tmp, &uq->fences, link)
		trn_uq_fence_done(uq, f, error);
}

/**
 * trn_device_uq_irq() - a backend reports progress on a user-mode queue
 * @tdev: the device
 * @id: the device's number of the queue
 *
 * The device's interrupt: a job with a pending fence completed, or a job
 * failed. Accounts for the queue's work and signals the fences of the
 * jobs that completed. May be called from any context; a queue the core
 * no longer runs is ignored.
 */
void trn_device_uq_irq(struct trn_device *tdev, u32 id)
{
	unsigned long flags;
	struct trn_uq *uq;
	bool cookie;

	cookie = dma_fence_begin_signalling();
	xa_lock_irqsave(&tdev->uqs, flags);
	uq = xa_load(&tdev->uqs, id);
	if (uq) {
		spin_lock(&uq->lock);
		trn_uq_harvest_locked(uq);
		trn_uq_signal_locked(uq);
		spin_unlock(&uq->lock);
	}
	xa_unlock_irqrestore(&tdev->uqs, flags);
	dma_fence_end_signalling(cookie);
}
EXPORT_SYMBOL_GPL(trn_device_uq_irq);

/*
 * Stop the device running @uq and forget it; under &trn_device.uq_lock.
 * The state page goes with it: no DMA allocation of the backend's device
 * may outlive the device. Returns whether it was running.
 */
static bool trn_uq_halt_locked(struct trn_uq *uq)
{
	struct trn_device *tdev = uq->tdev;
	struct trn_hw_uq_state *state;
	unsigned long flags;

	lockdep_assert_held(&tdev->uq_lock);
	if (!uq->running)
		return false;
	spin_lock_irqsave(&uq->lock, flags);
	uq->running = false;
	spin_unlock_irqrestore(&uq->lock, flags);
	/* The number goes back only once the device let go of it. */
	tdev->ops->uq_fini(tdev, uq->hw_id);
	xa_erase_irq(&tdev->uqs, uq->hw_id);
	uq->id_held = false;

	/* Its last word: what it did, and which jobs it completed. */
	spin_lock_irqsave(&uq->lock, flags);
	trn_uq_harvest_locked(uq);
	trn_uq_signal_locked(uq);
	uq->progress_seqno = trn_uq_completed(uq);
	state = uq->state;
	uq->state = NULL;
	spin_unlock_irqrestore(&uq->lock, flags);
	dma_free_coherent(tdev->drm.dev, sizeof(*state), state,
			  uq->state_dma);
	return true;
}

/*
 * A job of @uq hangs: nothing completed for a job timeout while a fence
 * was pending. The device abandons the job (%DRM_TRN_STATUS_TIMEOUT); the
 * first time, the queue is guilty and its context banned, so the jobs
 * behind it complete as aborted. If the queue still completes nothing a
 * timeout later (a job that ignores its cancellation, a write pointer
 * moved back), its pending fences fail: none waits longer than that.
 */
static void trn_uq_hung(struct trn_uq *uq)
{
	struct trn_queue *queue = uq->queue;
	struct trn_device *tdev = uq->tdev;
	unsigned long flags;
	bool first = false;
	int idx;

	if (!drm_dev_enter(&tdev->drm, &idx))
		return;		/* trn_uqs_unplug() fails the fences */
	/* Claimed as stopped here: the ban below leaves it to us. */
	mutex_lock(&tdev->uq_lock);
	if (uq->running && !uq->stopped) {
		uq->stopped = true;
		first = true;
	}
	mutex_unlock(&tdev->uq_lock);

	/*
	 * Guilty and banned before the device lets go of the job: whoever
	 * sees the jobs behind it aborted sees why.
	 */
	if (first) {
		drm_warn(&tdev->drm, "user-mode queue %u of context %u: job %llu timed out, abandoned\n",
			 queue->id, queue->ctx->id, uq->progress_seqno + 1);
		spin_lock_irqsave(&queue->status_lock, flags);
		queue->state |= DRM_TRN_QUEUE_GUILTY;
		queue->resets++;
		spin_unlock_irqrestore(&queue->status_lock, flags);
		trn_uq_page_state(uq, DRM_TRN_QUEUE_GUILTY);
		trn_ctx_job_hung(queue->ctx);
	}
	mutex_lock(&tdev->uq_lock);
	if (uq->running)
		tdev->ops->uq_stop(tdev, uq->hw_id, true);
	mutex_unlock(&tdev->uq_lock);
	if (first) {
		atomic64_inc(&tdev->stats.resets);
		atomic64_inc(&tdev->cores[uq->core].timed_out);
		trn_event(tdev, TRN_EVENT_RESET);
	}

	spin_lock_irqsave(&uq->lock, flags);
	/* The abandoned job completed. */
	trn_uq_harvest_locked(uq);
	trn_uq_signal_locked(uq);
	if (first) {
		/* Watch the rest drain. */
		uq->progress_seqno = trn_uq_completed(uq);
		uq->progress_at = jiffies;
		if (uq->nr_fences && !uq->failed_all)
			queue_delayed_work(tdev->reset_wq, &uq->watchdog,
					   trn_uq_watch_period(tdev));
	} else {
		trn_uq_fail_all_locked(uq, -ECANCELED);
		/* Fences made later get their own timeout. */
		uq->failed_all = false;
	}
	spin_unlock_irqrestore(&uq->lock, flags);
	drm_dev_exit(idx);
}

/*
 * Runs every quarter of a job timeout while the queue has pending fences
 * (on the device's reset workqueue, with the rings' timeout handlers):
 * a queue whose completions did not move for a whole timeout hangs.
 */
static void trn_uq_watchdog(struct work_struct *work)
{
	struct trn_uq *uq = container_of(to_delayed_work(work), struct trn_uq,
					 watchdog);
	struct trn_device *tdev = uq->tdev;
	unsigned long timeout = msecs_to_jiffies(tdev->job_timeout_ms);
	unsigned long flags;
	bool hung = false, cookie;
	u64 completed;

	cookie = dma_fence_begin_signalling();
	spin_lock_irqsave(&uq->lock, flags);
	if (!uq->nr_fences || uq->failed_all)
		goto out;
	completed = trn_uq_completed(uq);
	if (completed != uq->progress_seqno) {
		uq->progress_seqno = completed;
		uq->progress_at = jiffies;
	} else if (time_after_eq(jiffies, uq->progress_at + timeout)) {
		hung = true;
	}
	if (!hung)
		queue_delayed_work(tdev->reset_wq, &uq->watchdog,
				   trn_uq_watch_period(tdev));
out:
	spin_unlock_irqrestore(&uq->lock, flags);
	if (hung)
		trn_uq_hung(uq);
	dma_fence_end_signalling(cookie);
}

/**
 * trn_uq_create() - make a new queue a user-mode queue
 * @queue: the queue, being created
 * @file: its file, charged for the ring and the doorbell page
 * @core: its NeuronCore
 * @entries: descriptors in its ring, checked by the caller
 *
 * Allocates the ring, the doorbell page and a number of the device's; the
 * device learns of the queue in trn_uq_start(). trn_uq_free() undoes it.
 *
 * Return: 0; -ENOSPC when the device runs as many user-mode queues as it
 * can; -ENOMEM.
 */
int trn_uq_create(struct trn_queue *queue, struct drm_file *file, u32 core,
		  u32 entries)
{
	struct trn_device *tdev = queue->ctx->tdev;
	struct trn_uq *uq;
	int ret;

	uq = kzalloc(sizeof(*uq), GFP_KERNEL_ACCOUNT);
	if (!uq)
		return -ENOMEM;
	uq->queue = queue;
	uq->tdev = tdev;
	uq->core = core;
	uq->entries = entries;
	spin_lock_init(&uq->lock);
	INIT_LIST_HEAD(&uq->fences);
	INIT_DELAYED_WORK(&uq->watchdog, trn_uq_watchdog);
	mutex_init(&uq->timeline_lock);
	uq->fence_context = dma_fence_context_alloc(1);
	/* Reserved now, published once the device runs it. */
	ret = xa_alloc_irq(&tdev->uqs, &uq->hw_id, NULL,
			   XA_LIMIT(0, tdev->desc.user_queues - 1),
			   GFP_KERNEL);
	if (ret) {
		mutex_destroy(&uq->timeline_lock);
		kfree(uq);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	uq->id_held = true;
	queue->uq = uq;

	uq->ring_bo = trn_bo_create_uq(file,
				       PAGE_ALIGN((u64)entries *
						  sizeof(struct drm_trn_user_desc)));
	if (IS_ERR(uq->ring_bo)) {
		ret = PTR_ERR(uq->ring_bo);
		uq->ring_bo = NULL;
		return ret;
	}
	uq->doorbell_bo = trn_bo_create_uq(file, PAGE_SIZE);
	if (IS_ERR(uq->doorbell_bo)) {
		ret = PTR_ERR(uq->doorbell_bo);
		uq->doorbell_bo = NULL;
		return ret;
	}
	return 0;
}

/**
 * trn_uq_start() - give a user-mode queue its handles and start it
 * @queue: the queue, with its status buffer's handle in @file already
 * @file: its file
 *
 * Creates the ring's and the doorbell's handles (which map the ring into
 * the context, where the device reads it) and hands the queue to the
 * device. On failure trn_uq_close_handles() and trn_uq_free() undo it.
 *
 * Return: 0; -ENOENT if a racing GEM_CLOSE took the ring's handle; -ENODEV;
 * -ENOMEM; the backend's error.
 */
int trn_uq_start(struct trn_queue *queue, struct drm_file *file)
{
	struct trn_uq *uq = queue->uq;
	struct trn_device *tdev = uq->tdev;
	struct trn_bo *status = queue->status_bo;
	struct trn_hw_uq hw = {
		.id = uq->hw_id,
		.core = uq->core,
		.ctx = queue->ctx->id,
		.entries = uq->entries,
	};
	unsigned long flags;
	int idx, ret;

	ret = drm_gem_handle_create(file, &uq->ring_bo->base,
				    &uq->ring_handle);
	if (ret)
		return ret;
	ret = drm_gem_handle_create(file, &uq->doorbell_bo->base,
				    &uq->doorbell_handle);
	if (ret)
		return ret;
	uq->ring_map = trn_bo_mapping_get(uq->ring_bo, queue->ctx);
	if (!uq->ring_map)
		return -ENOENT;

	hw.ring_va = uq->ring_map->node.start;
	hw.doorbell = trn_uq_doorbell(uq);
	hw.doorbell_dma = uq->doorbell_bo->page_dma[0];
	hw.page = page_address(status->pages[0]);
	hw.page_dma = status->page_dma[0];

	if (!drm_dev_enter(&tdev->drm, &idx))
		return -ENODEV;
	uq->state = dma_alloc_coherent(tdev->drm.dev, sizeof(*uq->state),
				       &uq->state_dma, GFP_KERNEL);
	if (!uq->state) {
		ret = -ENOMEM;
		goto out;
	}
	hw.state = uq->state;
	hw.state_dma = uq->state_dma;
	xa_store_irq(&tdev->uqs, uq->hw_id, uq, GFP_KERNEL);
	/* Not under uq_lock: the backend may allocate here. */
	ret = tdev->ops->uq_init(tdev, &hw);
	if (ret) {
		xa_store_irq(&tdev->uqs, uq->hw_id, NULL, GFP_KERNEL);
		dma_free_coherent(tdev->drm.dev, sizeof(*uq->state), uq->state,
				  uq->state_dma);
		uq->state = NULL;
		goto out;
	}

	mutex_lock(&tdev->uq_lock);
	spin_lock_irqsave(&uq->lock, flags);
	uq->running = true;
	spin_unlock_irqrestore(&uq->lock, flags);
	/* A ban since the queue was made, which trn_uqs_cancel() missed. */
	if (trn_queue_banned(queue)) {
		tdev->ops->uq_stop(tdev, uq->hw_id, false);
		uq->stopped = true;
		trn_uq_page_state(uq, DRM_TRN_QUEUE_BANNED);
	}
	mutex_unlock(&tdev->uq_lock);
out:
	drm_dev_exit(idx);
	return ret;
}

/*
 * Close @handle of @file if it still names @bo: the caller may have closed
 * it and been given the number for something else since.
 */
static void trn_uq_close_handle(struct drm_file *file, u32 handle,
				struct trn_bo *bo)
{
	struct drm_gem_object *obj;

	if (!handle || !bo)
		return;
	obj = drm_gem_object_lookup(file, handle);
	if (!obj)
		return;
	if (obj == &bo->base)
		drm_gem_handle_delete(file, handle);
	drm_gem_object_put(obj);
}

/**
 * trn_uq_close_handles() - close a user-mode queue's ring and doorbell
 * handles in the creating file
 * @queue: the queue
 * @file: the file
 *
 * CPU mappings of them stay valid until unmapped.
 */
void trn_uq_close_handles(struct trn_queue *queue, struct drm_file *file)
{
	struct trn_uq *uq = queue->uq;

	trn_uq_close_handle(file, uq->ring_handle, uq->ring_bo);
	trn_uq_close_handle(file, uq->doorbell_handle, uq->doorbell_bo);
}

/**
 * trn_uq_stop() - a user-mode queue is destroyed or its file closed
 * @queue: the queue
 * @error: the errno its pending fences fail with (-ESRCH)
 *
 * The device stops running it: jobs it has not completed never will, and
 * their fences, pending or made later, fail with @error. Waits for no
 * job, only for the device to let go of the queue.
 */
void trn_uq_stop(struct trn_queue *queue, int error)
{
	struct trn_uq *uq = queue->uq;
	struct trn_device *tdev = uq->tdev;
	unsigned long flags;

	mutex_lock(&tdev->uq_lock);
	trn_uq_halt_locked(uq);
	mutex_unlock(&tdev->uq_lock);

	spin_lock_irqsave(&uq->lock, flags);
	trn_uq_fail_all_locked(uq, error);
	spin_unlock_irqrestore(&uq->lock, flags);
	/* Nothing queues it again: failed_all. */
	cancel_delayed_work_sync(&uq->watchdog);
}

/**
 * trn_uq_free() - free the user-mode side of a queue
 * @queue: the queue, stopped (or never started)
 */
void trn_uq_free(struct trn_queue *queue)
{
	struct trn_uq *uq = queue->uq;
	struct trn_device *tdev = uq->tdev;

	WARN_ON(uq->running || !list_empty(&uq->fences));
	/* The number, reserved or published, unless given back already. */
	if (uq->id_held)
		xa_erase_irq(&tdev->uqs, uq->hw_id);
	if (uq->ring_map)
		trn_mapping_put(uq->ring_map);
	if (uq->ring_bo)
		drm_gem_object_put(&uq->ring_bo->base);
	if (uq->doorbell_bo)
		drm_gem_object_put(&uq->doorbell_bo->base);
	mutex_destroy(&uq->timeline_lock);
	kfree(uq);
	queue->uq = NULL;
}

/**
 * trn_uq_status() - a user-mode queue's part of DRM_IOCTL_TRN_QUEUE_STATUS
 * @queue: the queue
 * @st: the answer, cleared; the queue's id is set
 *
 * The device's counters and latest failure; the submitted number is the
 * doorbell's write pointer (never below the completed number).
 */
void trn_uq_status(struct trn_queue *queue, struct drm_trn_queue_status *st)
{
	struct trn_uq *uq = queue->uq;
	unsigned long flags;

	spin_lock_irqsave(&uq->lock, flags);
	trn_uq_harvest_locked(uq);
	st->completed_seqno = trn_uq_completed(uq);
	if (uq->state) {
		st->jobs_failed = le64_to_cpu(READ_ONCE(uq->state->jobs_failed));
		st->failed_seqno = le64_to_cpu(uq->state->failed_seqno);
		st->status = le32_to_cpu(uq->state->status);
		st->error = -trn_hw_status_errno(st->status);
		st->error_offset = le64_to_cpu(uq->state->error_offset);
		st->error_cmd_va = le64_to_cpu(uq->state->error_cmd_va);
		st->fault_va = le64_to_cpu(uq->state->fault_va);
		if (le64_to_cpu(uq->state->fault_jobs))
			st->state |= DRM_TRN_QUEUE_FAULTED;
	} else {
		st->jobs_failed = uq->seen.failed;
	}
	spin_unlock_irqrestore(&uq->lock, flags);
	st->submitted_seqno = max(READ_ONCE(trn_uq_doorbell(uq)->wptr),
				  st->completed_seqno);

	spin_lock_irqsave(&queue->status_lock, flags);
	st->state |= queue->state;
	st->resets = queue->resets;
	spin_unlock_irqrestore(&queue->status_lock, flags);
}

/**
 * trn_uqs_harvest() - account for the work of every user-mode queue
 * @tdev: the device
 *
 * Before device-wide counters are shown (sysfs).
 */
void trn_uqs_harvest(struct trn_device *tdev)
{
	unsigned long flags, id;
	struct trn_uq *uq;

	xa_lock_irqsave(&tdev->uqs, flags);
	xa_for_each(&tdev->uqs, id, uq) {
		spin_lock(&uq->lock);
		trn_uq_harvest_locked(uq);
		spin_unlock(&uq->lock);
	}
	xa_unlock_irqrestore(&tdev->uqs, flags);
}

/**
 * trn_uqs_cancel() - a context was banned: stop its user-mode queues
 * @tdev: the device
 * @ctx: the context
 *
 * Every user-mode queue of @ctx created before the ban runs nothing more:
 * the job it runs ends at its next command boundary, and every later job
 * completes as aborted (-ECANCELED). On the way to signalling fences:
 * allocates nothing.
 */
void trn_uqs_cancel(struct trn_device *tdev, struct trn_ctx *ctx)
{
	struct trn_uq *uq;
	unsigned long id;
	int idx;

	if (!drm_dev_enter(&tdev->drm, &idx))
		return;
	mutex_lock(&tdev->uq_lock);
	xa_for_each(&tdev->uqs, id, uq) {
		if (uq->queue->ctx != ctx || !uq->running ||
		    !trn_queue_banned(uq->queue))
			continue;
		/* A queue that hung is stopped by trn_uq_hung() itself. */
		if (!uq->stopped)
			tdev->ops->uq_stop(tdev, uq->hw_id, false);
		uq->stopped = true;
		trn_uq_page_state(uq, DRM_TRN_QUEUE_BANNED);
	}
	mutex_unlock(&tdev->uq_lock);
	drm_dev_exit(idx);
}

/**
 * trn_uqs_unplug() - the device is gone: stop its user-mode queues
 * @tdev: the device, unplugged
 *
 * The device stops every queue; their pending fences, and any made later,
 * fail with -ENODEV. Their state pages are freed now, with the backend's
 * device still there.
 */
void trn_uqs_unplug(struct trn_device *tdev)
{
	unsigned long flags, id;
	struct trn_uq *uq;

	mutex_lock(&tdev->uq_lock);
	xa_for_each(&tdev->uqs, id, uq) {
		trn_uq_halt_locked(uq);
		spin_lock_irqsave(&uq->lock, flags);
		trn_uq_fail_all_locked(uq, -ENODEV);
		spin_unlock_irqrestore(&uq->lock, flags);
	}
	mutex_unlock(&tdev->uq_lock);
}

/**
 * trn_uqs_init() - no user-mode queues yet
 * @tdev: the new device
 */
void trn_uqs_init(struct trn_device *tdev)
{
	xa_init_flags(&tdev->uqs, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
}

/*
 * The fence of job @seqno of @uq, with a reference for the caller: the
 * pending one if there is one, else @f (which the caller gave up), made
 * pending, or signalled at once if the job completed already. NULL with
 * -EINVAL for a job the write pointer has not announced, -ENOSPC beyond
 * one pending fence per ring slot. Wakes the device up.
 */
static struct dma_fence *trn_uq_fence_get(struct trn_uq *uq, u64 seqno,
					  struct trn_uq_fence *f, int *err)
{
	struct trn_device *tdev = uq->tdev;
	struct trn_uq_fence *pos, *old = NULL;
	u64 wptr, completed;
	unsigned long flags;
	int error = 0;

	/* The write pointer is the caller's: read once, trusted for nothing. */
	wptr = READ_ONCE(trn_uq_doorbell(uq)->wptr);
	spin_lock_irqsave(&uq->lock, flags);
	completed = trn_uq_completed(uq);
	if (seqno > wptr && seqno > completed) {
		spin_unlock_irqrestore(&uq->lock, flags);
		kfree(f);
		*err = -EINVAL;
		return NULL;
	}
	if (uq->running)
		tdev->ops->uq_wake(tdev, uq->hw_id);

	if (uq->failed_all || seqno <= completed) {
		error = uq->failed_all && seqno > completed ?
			uq->fail_error : trn_uq_job_error(uq, seqno);
		goto signalled;
	}
	list_for_each_entry(pos, &uq->fences, link) {
		if (pos->base.seqno == seqno) {
			dma_fence_get(&pos->base);
			spin_unlock_irqrestore(&uq->lock, flags);
			kfree(f);
			return &pos->base;
		}
		if (pos->base.seqno > seqno)
			break;
		old = pos;
	}
	if (uq->nr_fences >= uq->entries) {
		spin_unlock_irqrestore(&uq->lock, flags);
		kfree(f);
		*err = -ENOSPC;
		return NULL;
	}
	dma_fence_init(&f->base, &trn_uq_fence_ops, &f->lock,
		       uq->fence_context, seqno);
	/* After @old: the list stays sorted by job number. */
	list_add(&f->link, old ? &old->link : &uq->fences);
	if (!uq->nr_fences++) {
		uq->progress_seqno = completed;
		uq->progress_at = jiffies;
		queue_delayed_work(tdev->reset_wq, &uq->watchdog,
				   trn_uq_watch_period(tdev));
	}
	/* One reference for the list, one for the caller. */
	dma_fence_get(&f->base);
	trn_uq_signal_locked(uq);
	spin_unlock_irqrestore(&uq->lock, flags);
	return &f->base;

signalled:
	spin_unlock_irqrestore(&uq->lock, flags);
	dma_fence_init(&f->base, &trn_uq_fence_ops, &f->lock,
		       uq->fence_context, seqno);
	if (error)
		dma_fence_set_error(&f->base, error);
	dma_fence_signal(&f->base);
	return &f->base;
}

/**
 * trn_ioctl_queue_fence() - handler of DRM_IOCTL_TRN_QUEUE_FENCE
 * @drm: the device
 * @data: &struct drm_trn_queue_fence
 * @file: the caller
 *
 * Return: 0; -EINVAL for bad flags, padding, a job number of 0 or beyond
 * the write pointer, a queue that is not user-mode; -ENOENT for an unknown
 * queue or syncobj; -ENOSPC with a pending fence for every ring slot;
 * -ENOMEM; -ENODEV.
 */
int trn_ioctl_queue_fence(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct trn_file *tfile = file->driver_priv;
	struct drm_trn_queue_fence *args = data;
	bool own = args->flags & DRM_TRN_QUEUE_FENCE_OWN_TIMELINE;
	struct dma_fence_chain *chain = NULL;
	struct drm_syncobj *syncobj = NULL;
	struct dma_fence *fence;
	struct trn_queue *queue;
	struct trn_uq_fence *f;
	u64 point;
	int ret = 0, idx;

	if (args->flags & ~DRM_TRN_QUEUE_FENCE_OWN_TIMELINE || args->pad ||
	    !args->seqno)
		return -EINVAL;
	if (own && (args->syncobj || args->point))
		return -EINVAL;
	queue = trn_queue_lookup(tfile, args->queue_id);
	if (!queue)
		return -ENOENT;
	if (!queue->uq) {
		ret = -EINVAL;
		goto out_queue;
	}
	if (own) {
		syncobj = queue->syncobj;
		drm_syncobj_get(syncobj);
	} else {
		syncobj = drm_syncobj_find(file, args->syncobj);
		if (!syncobj) {
			ret = -ENOENT;
			goto out_queue;
		}
	}
	point = own ? args->seqno : args->point;
	if (point) {
		chain = dma_fence_chain_alloc();
		if (!chain) {
			ret = -ENOMEM;
			goto out_syncobj;
		}
	}
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f) {
		ret = -ENOMEM;
		goto out_chain;
	}
	spin_lock_init(&f->lock);
	INIT_LIST_HEAD(&f->link);

	if (!drm_dev_enter(drm, &idx)) {
		kfree(f);
		ret = -ENODEV;
		goto out_chain;
	}
	fence = trn_uq_fence_get(queue->uq, args->seqno, f, &ret);
	drm_dev_exit(idx);
	if (!fence)
		goto out_chain;

	if (own) {
		/* The queue's timeline only grows. */
		mutex_lock(&queue->uq->timeline_lock);
		if (point > queue->uq->timeline_point) {
			drm_syncobj_add_point(syncobj, chain, fence, point);
			chain = NULL;
			queue->uq->timeline_point = point;
		}
		mutex_unlock(&queue->uq->timeline_lock);
	} else if (point) {
		drm_syncobj_add_point(syncobj, chain, fence, point);
		chain = NULL;
	} else {
		drm_syncobj_replace_fence(syncobj, fence);
	}
	dma_fence_put(fence);
out_chain:
	dma_fence_chain_free(chain);
out_syncobj:
	drm_syncobj_put(syncobj);
out_queue:
	trn_queue_put(queue);
	return ret;
}

/**
 * trn_ioctl_queue_wake() - handler of DRM_IOCTL_TRN_QUEUE_WAKE
 * @drm: the device
 * @data: &struct drm_trn_queue_wake
 * @file: the caller
 *
 * Return: 0; -EINVAL for bad flags or a queue that is not user-mode;
 * -ENOENT for an unknown queue; -ENODEV.
 */
int trn_ioctl_queue_wake(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct trn_file *tfile = file->driver_priv;
	struct drm_trn_queue_wake *args = data;
	struct trn_queue *queue;
	unsigned long flags;
	struct trn_uq *uq;
	int ret = 0, idx;

	if (args->flags)
		return -EINVAL;
	queue = trn_queue_lookup(tfile, args->queue_id);
	if (!queue)
		return -ENOENT;
	uq = queue->uq;
	if (!uq) {
		ret = -EINVAL;
	} else if (drm_dev_enter(drm, &idx)) {
		spin_lock_irqsave(&uq->lock, flags);
		if (uq->running)
			uq->tdev->ops->uq_wake(uq->tdev, uq->hw_id);
		spin_unlock_irqrestore(&uq->lock, flags);
		drm_dev_exit(idx);
	} else {
		ret = -ENODEV;
	}
	trn_queue_put(queue);
	return ret;
}
