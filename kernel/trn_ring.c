// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Hardware rings: one per hardware queue of a NeuronCore, each fed by its
 * own drm_gpu_scheduler. A job the scheduler runs becomes a descriptor in
 * the ring and a hardware fence; the device writes the descriptor back,
 * advances the ring's completion record and interrupts, and the interrupt
 * path retires the jobs and signals their fences. A job that outlives the
 * timeout is abandoned through a ring reset that leaves every other job of
 * the ring in place, and its context is banned: the device skips the
 * context's other jobs, which are flagged cancelled in their descriptors.
 *
 * run_job, the interrupt path and the timeout handler are on the way to
 * signalling fences, which memory reclaim may wait for: they allocate
 * nothing and take no lock that is held around an allocation, and they
 * say so to lockdep (dma_fence_begin_signalling()).
 */

#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/gpu_scheduler.h>

#include <uapi/drm/trn_accel.h>

#include "trn_compat.h"
#include "trn_drv.h"

static unsigned int job_timeout_ms = 5000;
module_param(job_timeout_ms, uint, 0644);
MODULE_PARM_DESC(job_timeout_ms,
		 "Time a job may run before its ring is reset, in ms; read when a device is added (default 5000)");

static const char *trn_hw_fence_driver_name(struct dma_fence *fence)
{
	return TRN_DRIVER_NAME;
}

static const char *trn_hw_fence_timeline_name(struct dma_fence *fence)
{
	return "trn-ring";
}

static const struct dma_fence_ops trn_hw_fence_ops = {
	.get_driver_name = trn_hw_fence_driver_name,
	.get_timeline_name = trn_hw_fence_timeline_name,
};

static struct trn_job *to_trn_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct trn_job, base);
}

static struct trn_hw_desc *trn_ring_desc(struct trn_ring *ring,
					 struct trn_job *job)
{
	return &ring->desc[job->ring_seqno & (ring->entries - 1)];
}

/*
 * Copy what the device wrote back for @job out of its descriptor, and
 * return the errno its fences get.
 */
static int trn_ring_read_back(struct trn_ring *ring, struct trn_job *job)
{
	struct trn_hw_desc *desc = trn_ring_desc(ring, job);
	u32 status = le32_to_cpu(READ_ONCE(desc->status));

	if (job->timed_out) {
		/* Abandoned by a ring reset without ever finishing. */
		job->hw.status = DRM_TRN_STATUS_TIMEOUT;
		return -ETIMEDOUT;
	}
	if (status == TRN_DESC_STATUS_PENDING) {
		/* Abandoned by a ring reset, not for its own timeout. */
		job->hw.status = DRM_TRN_STATUS_ABORTED;
		return job->cancel_error ?: -ECANCELED;
	}
	job->hw.status = status;
	job->hw.error_offset = le64_to_cpu(desc->error_offset);
	job->hw.error_cmd_va = le64_to_cpu(desc->error_cmd_va);
	job->hw.fault_va = le64_to_cpu(desc->fault_va);
	job->hw.start_ns = le64_to_cpu(desc->start_ns);
	job->hw.end_ns = le64_to_cpu(desc->end_ns);
	/* Stopped by its cancel flag (it may have finished first). */
	if (status == DRM_TRN_STATUS_ABORTED && job->cancel_error)
		return job->cancel_error;
	return trn_hw_status_errno(status);
}

/* The job left the ring: it no longer counts as on the hardware. */
static void trn_ring_job_off(struct trn_job *job)
{
	list_del_init(&job->link);
	atomic_dec(&job->queue->ctx->on_hw);
}

/*
 * Retire every job of @ring that the device reports finished: record its
 * outcome, then signal its hardware fence. Unless @force, nothing is done
 * while a timeout is being handled: the scheduler's view of the ring must
 * not change between drm_sched_stop() and drm_sched_start(), and the
 * handler retires everything itself afterwards. Jobs are taken off the
 * ring and signalled under the ring's lock, so that the handler never sees
 * one that is neither on the ring nor signalled. Callable from any context.
 */
static void trn_ring_retire(struct trn_ring *ring, bool force)
{
	struct trn_job *job, *tmp;
	unsigned long flags;
	u64 completed;
	bool cookie;
	int error;

	cookie = dma_fence_begin_signalling();
	spin_lock_irqsave(&ring->lock, flags);
	/* No completion record once the device is gone: trn_rings_stop(). */
	if ((ring->resetting && !force) || !ring->status)
		goto out;
	completed = le64_to_cpu(READ_ONCE(ring->status->completed_seqno));
	/* The descriptors were written before the completion record. */
	dma_rmb();
	list_for_each_entry_safe(job, tmp, &ring->pending, link) {
		if (job->ring_seqno > completed)
			break;
		error = trn_ring_read_back(ring, job);
		trn_ring_job_off(job);
		trn_job_retire(job, error);
	}
out:
	spin_unlock_irqrestore(&ring->lock, flags);
	dma_fence_end_signalling(cookie);
}

/*
 * Fail every job on @ring with @error, recording @status: the device will
 * not finish them (it is gone or wedged). Under the ring's lock.
 */
static void trn_ring_fail_pending(struct trn_ring *ring, u32 status,
				  int error)
{
	struct trn_job *job, *tmp;

	lockdep_assert_held(&ring->lock);
	list_for_each_entry_safe(job, tmp, &ring->pending, link) {
		trn_ring_job_off(job);
		job->hw.status = status;
		trn_job_retire(job, error);
	}
}

/**
 * trn_device_ring_irq() - a backend reports progress on a ring
 * @tdev: the device
 * @index: the ring
 *
 * The device's interrupt: retires the finished jobs of the ring. May be
 * called from any context, also hard interrupt context.
 */
void trn_device_ring_irq(struct trn_device *tdev, u32 index)
{
	if (WARN_ON_ONCE(index >= tdev->num_rings))
		return;
	trn_ring_retire(&tdev->rings[index], false);
}
EXPORT_SYMBOL_GPL(trn_device_ring_irq);

static struct dma_fence *trn_ring_run_job(struct drm_sched_job *sched_job)
{
	struct trn_job *job = to_trn_job(sched_job);
	struct trn_ring *ring = job->ring;
	struct trn_device *tdev = ring->tdev;
	struct trn_ctx *ctx = job->queue->ctx;
	struct trn_hw_desc *desc;
	struct dma_fence *fence;
	unsigned long flags;
	bool cookie;
	u32 i;
	int idx;

	cookie = dma_fence_begin_signalling();
	if (!drm_dev_enter(&tdev->drm, &idx)) {
		trn_job_fail_unrun(job, -ENODEV);
		dma_fence_end_signalling(cookie);
		return ERR_PTR(-ENODEV);
	}

	/* Nothing reaches a device whose reset failed. */
	if (READ_ONCE(tdev->wedged)) {
		trn_job_fail_unrun(job, -EIO);
		drm_dev_exit(idx);
		dma_fence_end_signalling(cookie);
		return ERR_PTR(-EIO);
	}

	/* Not yet run: a ring reset that resubmits never calls us again. */
	fence = job->hw_fence;
	job->hw_fence = NULL;

	spin_lock_irqsave(&ring->lock, flags);
	atomic_inc(&ctx->on_hw);
	/* Counted before the ban or close is looked at: trn_rings_cancel(). */
	smp_mb__after_atomic();
	/*
	 * Decided under the ring's lock, which trn_rings_cancel() takes
	 * after a ban or close: either that sees the job, or this sees why.
	 */
	job->cancel_error = trn_job_cancel_error(job);

	job->ring_seqno = ++ring->last_seqno;
	dma_fence_init(fence, &trn_hw_fence_ops, &ring->fence_lock,
		       ring->fence_context, job->ring_seqno);
	job->hw.fence = fence;

	/*
	 * A cancelled job still takes its place on the ring, flagged, so
	 * that it completes in order with the queue's other jobs. One that
	 * runs gets its buffers handed to the device first.
	 */
	if (!job->cancel_error && job->dma_sync) {
		for (i = 0; i < job->bo_count; i++)
			trn_bo_dma_begin(to_trn_bo(job->bos[i]));
		job->dma_begun = true;
	}

	desc = trn_ring_desc(ring, job);
	memset(desc, 0, sizeof(*desc));
	desc->seqno = cpu_to_le64(job->ring_seqno);
	desc->cmd_va = cpu_to_le64(job->cmd_va);
	desc->cmd_size = cpu_to_le32(job->cmd_size);
	desc->ctx = cpu_to_le32(ctx->id);
	desc->status = cpu_to_le32(TRN_DESC_STATUS_PENDING);
	if (job->cancel_error)
		desc->flags = cpu_to_le32(TRN_HW_DESC_CANCEL);
	list_add_tail(&job->link, &ring->pending);
	/* The descriptor is complete before the device hears of it. */
	dma_wmb();
	if (!ring->resetting)
		tdev->ops->ring_doorbell(tdev, ring->index, ring->last_seqno);
	spin_unlock_irqrestore(&ring->lock, flags);

	drm_dev_exit(idx);
	dma_fence_end_signalling(cookie);
	/* One reference for the scheduler; the job keeps its own. */
	return dma_fence_get(fence);
}

/**
 * trn_rings_cancel() - flag the cancelled jobs of a context on the rings
 * @tdev: the device
 * @ctx: the context, just banned or closed
 *
 * Every job of @ctx on the hardware that must stop (trn_job_cancel_error())
 * gets %TRN_HW_DESC_CANCEL, and the rings concerned are rung so that the
 * device notices. Jobs the scheduler has not run yet are flagged by
 * run_job. Takes each ring's lock in turn, so not with one held.
 */
void trn_rings_cancel(struct trn_device *tdev, struct trn_ctx *ctx)
{
	struct trn_job *job;
	unsigned long flags;
	bool present, rung;
	int idx, error;
	u32 i;

	/* The ban or close before the count (see run_job). */
	smp_mb();
	if (!atomic_read(&ctx->on_hw))
		return;

	present = drm_dev_enter(&tdev->drm, &idx);
	for (i = 0; i < tdev->num_rings; i++) {
		struct trn_ring *ring = &tdev->rings[i];

		rung = false;
		spin_lock_irqsave(&ring->lock, flags);
		list_for_each_entry(job, &ring->pending, link) {
			struct trn_hw_desc *desc = trn_ring_desc(ring, job);

			if (job->queue->ctx != ctx || job->cancel_error ||
			    job->timed_out)
				continue;
			error = trn_job_cancel_error(job);
			if (!error)
				continue;
			job->cancel_error = error;
			WRITE_ONCE(desc->flags,
				   desc->flags | cpu_to_le32(TRN_HW_DESC_CANCEL));
			rung = true;
		}
		if (rung && present && !ring->resetting) {
			dma_wmb();
			tdev->ops->ring_doorbell(tdev, ring->index,
						 ring->last_seqno);
		}
		spin_unlock_irqrestore(&ring->lock, flags);
	}
	if (present)
		drm_dev_exit(idx);
}

/*
 * A ring could not be reset (its engine does not respond): reset the whole
 * device, from @held's timeout handler. Every ring's timeout handler runs
 * on tdev->reset_wq, one at a time, so no ring reset runs meanwhile; the
 * other rings are held as @held is (resetting: no doorbell, nothing
 * retired) while the backend resets. Afterwards each ring goes on after
 * the job the device abandoned on it, which fails -ECANCELED unless it is
 * the one that timed out. If the reset fails, or the backend has none, the
 * device is wedged: every job on it, and every later one, fails with -EIO.
 * Return: 1 if the device was reset, -EIO if it is wedged.
 */
static int trn_device_reset(struct trn_device *tdev, struct trn_ring *held,
			    int why)
{
	int ret = -EOPNOTSUPP;
	unsigned long flags;
	u32 i;

	drm_err(&tdev->drm, "ring %u could not be reset (%d): resetting the device\n",
		held->index, why);
	for (i = 0; i < tdev->num_rings; i++) {
		struct trn_ring *ring = &tdev->rings[i];

		spin_lock_irqsave(&ring->lock, flags);
		ring->resetting = true;
		spin_unlock_irqrestore(&ring->lock, flags);
	}
	if (tdev->ops->device_reset)
		ret = tdev->ops->device_reset(tdev);
	if (ret) {
		drm_err(&tdev->drm, "device reset failed (%d): the device is wedged, its jobs fail with -EIO\n",
			ret);
		WRITE_ONCE(tdev->wedged, true);
		trn_event(tdev, TRN_EVENT_HEALTH);
	} else {
		atomic64_inc(&tdev->stats.device_resets);
		trn_health_trouble(tdev, TRN_TROUBLE_DEVICE_RESET);
	}
	for (i = 0; i < tdev->num_rings; i++) {
		struct trn_ring *ring = &tdev->rings[i];

		spin_lock_irqsave(&ring->lock, flags);
		if (ret)
			trn_ring_fail_pending(ring, DRM_TRN_STATUS_DEVICE_ERROR,
					      -EIO);
		/* @held's handler goes on with it itself. */
		if (ring != held) {
			ring->resetting = false;
			if (!ret && ring->last_seqno)
				tdev->ops->ring_doorbell(tdev, ring->index,
							 ring->last_seqno);
		}
		spin_unlock_irqrestore(&ring->lock, flags);
		if (ring != held)
			trn_ring_retire(ring, false);
	}
	return ret ? -EIO : 1;
}

/*
 * The oldest job of the ring ran too long. Abandon it with a ring reset,
 * ban its context (whose other jobs the device then skips: they would
 * most likely hang too, each costing everyone behind them another
 * timeout), retire what did finish, and let the device run the rest of
 * the ring (other contexts' jobs included) from where it was. If the job
 * finished after all while this ran, the device leaves the ring alone
 * (the next job may have started and must not run twice) and nobody is
 * guilty. A job that was cancelled already (its context banned or closed)
 * but hangs the device is abandoned without blame. A ring that cannot be
 * reset takes the device with it (trn_device_reset()).
 */
static enum drm_gpu_sched_stat
trn_ring_timedout_job(struct drm_sched_job *sched_job)
{
	struct trn_job *bad = to_trn_job(sched_job);
	struct trn_ring *ring = bad->ring;
	struct trn_device *tdev = ring->tdev;
	struct trn_coredump *dump = NULL;
	struct trn_job *job, *head;
	bool present, reset = false, cookie;
	const char *how = "ring reset";
	unsigned long flags;
	int abandoned = 0, idx;

	cookie = dma_fence_begin_signalling();
	present = drm_dev_enter(&tdev->drm, &idx);

	spin_lock_irqsave(&ring->lock, flags);
	ring->resetting = true;
	head = list_first_entry_or_null(&ring->pending, struct trn_job, link);
	if (present && head == bad) {
		head->timed_out = !head->cancel_error;
		reset = true;
	}
	spin_unlock_irqrestore(&ring->lock, flags);

	/* The ring as the hang left it, for a post-mortem dump. */
	if (reset)
		dump = trn_coredump_capture(ring, bad);
	if (reset)
		abandoned = tdev->ops->ring_reset(tdev, ring->index,
						  bad->ring_seqno);
	if (abandoned < 0) {
		how = "device reset";
		abandoned = trn_device_reset(tdev, ring, abandoned);
		if (abandoned < 0)
			how = "device wedged";
	}
	/* Counted before the abandoned job's fence tells its owner. */
	if (abandoned > 0)
		atomic64_inc(&tdev->stats.resets);
	if (abandoned && bad->timed_out) {
		drm_warn(&tdev->drm, "ring %u: job %llu of context %u timed out, %s\n",
			 ring->index, bad->seqno, bad->queue->ctx->id, how);
		trn_ctx_job_hung(bad->queue->ctx);
		atomic64_inc(&tdev->cores[ring->core].timed_out);
	} else if (reset && !abandoned) {
		spin_lock_irqsave(&ring->lock, flags);
		bad->timed_out = false;
		spin_unlock_irqrestore(&ring->lock, flags);
		drm_dbg_driver(&tdev->drm, "ring %u: job %llu finished as it timed out\n",
			       ring->index, bad->seqno);
	}
	/* A hang, whatever ended it (a cancelled job's too): dump it. */
	if (abandoned)
		trn_coredump_submit(dump, how);
	else
		trn_coredump_discard(dump);

	/*
	 * Nothing is retired from here to drm_sched_start(): drm_sched_stop()
	 * detaches the scheduler from the jobs still on the ring, which keep
	 * running (the timed-out one included, until it is retired below),
	 * so their fences are given back to it before it restarts.
	 */
	drm_sched_stop(&ring->sched, sched_job);
	spin_lock_irqsave(&ring->lock, flags);
	list_for_each_entry(job, &ring->pending, link)
		if (!job->base.s_fence->parent)
			job->base.s_fence->parent = dma_fence_get(job->hw.fence);
	spin_unlock_irqrestore(&ring->lock, flags);
	drm_sched_start(&ring->sched, 0);

	spin_lock_irqsave(&ring->lock, flags);
	ring->resetting = false;
	/* Also makes the device look at jobs flagged by the ban. */
	if (present && ring->last_seqno)
		tdev->ops->ring_doorbell(tdev, ring->index, ring->last_seqno);
	spin_unlock_irqrestore(&ring->lock, flags);
	/* The abandoned job, and whatever finished while we held it up. */
	trn_ring_retire(ring, false);

	if (present)
		drm_dev_exit(idx);
	if (abandoned)
		trn_event(tdev, TRN_EVENT_RESET);
	dma_fence_end_signalling(cookie);
	return present ? DRM_GPU_SCHED_STAT_RESET : DRM_GPU_SCHED_STAT_ENODEV;
}

static void trn_ring_free_job(struct drm_sched_job *sched_job)
{
	trn_job_free(to_trn_job(sched_job));
}

static const struct drm_sched_backend_ops trn_ring_sched_ops = {
	.run_job = trn_ring_run_job,
	.timedout_job = trn_ring_timedout_job,
	.free_job = trn_ring_free_job,
};

/**
 * trn_ring_pick() - the ring a new queue on @core gets
 * @tdev: the device
 * @core: a NeuronCore of it
 *
 * Spreads queues over the hardware queues of the core, round robin.
 *
 * Return: the ring.
 */
struct trn_ring *trn_ring_pick(struct trn_device *tdev, u32 core)
{
	u32 n = tdev->desc.queues_per_core;
	u32 q = (u32)atomic_inc_return(&tdev->next_ring[core]) % n;

	return &tdev->rings[core * n + q];
}

/* The ring's coherent memory, unless trn_rings_stop() freed it already. */
static void trn_ring_free_dma(struct trn_ring *ring)
{
	struct device *dev = ring->tdev->drm.dev;
	struct trn_hw_ring_status *status;
	struct trn_hw_desc *desc;
	unsigned long flags;

	spin_lock_irqsave(&ring->lock, flags);
	desc = ring->desc;
	status = ring->status;
	ring->desc = NULL;
	ring->status = NULL;
	spin_unlock_irqrestore(&ring->lock, flags);
	if (desc)
		dma_free_coherent(dev, ring->entries * sizeof(*desc), desc,
				  ring->desc_dma);
	if (status)
		dma_free_coherent(dev, sizeof(*status), status,
				  ring->status_dma);
}

static void trn_rings_release(struct drm_device *drm, void *arg)
{
	struct trn_device *tdev = to_trn_device(drm);
	u32 i;

	for (i = 0; i < tdev->num_rings; i++) {
		drm_sched_fini(&tdev->rings[i].sched);
		trn_ring_free_dma(&tdev->rings[i]);
	}
	/* After the schedulers, whose timeout work ran on it. */
	if (tdev->reset_wq)
		destroy_workqueue(tdev->reset_wq);
	tdev->reset_wq = NULL;
}

static int trn_ring_init(struct trn_device *tdev, struct trn_ring *ring,
			 u32 index, long timeout)
{
	struct device *dev = tdev->drm.dev;
	struct drm_sched_init_args args = {
		.ops = &trn_ring_sched_ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = tdev->desc.ring_entries,
		.timeout = timeout,
		.timeout_wq = tdev->reset_wq,
		.name = ring->name,
		.dev = dev,
	};
	int ret;

	ring->tdev = tdev;
	ring->index = index;
	ring->core = index / tdev->desc.queues_per_core;
	ring->entries = tdev->desc.ring_entries;
	spin_lock_init(&ring->lock);
	spin_lock_init(&ring->fence_lock);
	INIT_LIST_HEAD(&ring->pending);
	ring->fence_context = dma_fence_context_alloc(1);
	snprintf(ring->name, sizeof(ring->name), "trn-c%uq%u", ring->core,
		 index % tdev->desc.queues_per_core);

	ring->desc = dma_alloc_coherent(dev, ring->entries * sizeof(*ring->desc),
					&ring->desc_dma, GFP_KERNEL);
	if (!ring->desc)
		return -ENOMEM;
	ring->status = dma_alloc_coherent(dev, sizeof(*ring->status),
					  &ring->status_dma, GFP_KERNEL);
	if (!ring->status) {
		ret = -ENOMEM;
		goto err_desc;
	}
	ret = drm_sched_init(&ring->sched, &args);
	if (ret)
		goto err_status;
	return 0;

err_status:
	dma_free_coherent(dev, sizeof(*ring->status), ring->status,
			  ring->status_dma);
err_desc:
	dma_free_coherent(dev, ring->entries * sizeof(*ring->desc), ring->desc,
			  ring->desc_dma);
	return ret;
}

/**
 * trn_rings_init() - create the rings and schedulers of a new device
 * @tdev: the device, not yet visible to userspace
 *
 * They live as long as the DRM device; the hardware learns of them in
 * trn_rings_start().
 *
 * Return: 0 or a negative errno.
 */
int trn_rings_init(struct trn_device *tdev)
{
	u32 n = tdev->desc.num_cores * tdev->desc.queues_per_core;
	long timeout;
	u32 i;
	int ret;

	tdev->job_timeout_ms = max(READ_ONCE(job_timeout_ms), 1U);
	timeout = msecs_to_jiffies(tdev->job_timeout_ms);

	tdev->rings = drmm_kcalloc(&tdev->drm, n, sizeof(*tdev->rings),
				   GFP_KERNEL);
	tdev->next_ring = drmm_kcalloc(&tdev->drm, tdev->desc.num_cores,
				       sizeof(*tdev->next_ring), GFP_KERNEL);
	if (!tdev->rings || !tdev->next_ring)
		return -ENOMEM;

	/* Timeouts of all rings in turn: a device reset takes all rings. */
	tdev->reset_wq = alloc_ordered_workqueue("trn-reset", WQ_MEM_RECLAIM);
	if (!tdev->reset_wq)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ret = trn_ring_init(tdev, &tdev->rings[i], i, timeout);
		if (ret)
			goto err_fini;
		tdev->num_rings = i + 1;
	}
	return drmm_add_action_or_reset(&tdev->drm, trn_rings_release, NULL);

err_fini:
	trn_rings_release(&tdev->drm, NULL);
	tdev->num_rings = 0;
	return ret;
}

/**
 * trn_rings_start() - hand the rings to the hardware
 * @tdev: the device, not yet visible to userspace
 *
 * Return: 0 or a negative errno; on failure no ring is started.
 */
int trn_rings_start(struct trn_device *tdev)
{
	u32 i;
	int ret;

	for (i = 0; i < tdev->num_rings; i++) {
		struct trn_ring *ring = &tdev->rings[i];
		struct trn_hw_ring hw = {
			.index = i,
			.entries = ring->entries,
			.desc = ring->desc,
			.desc_dma = ring->desc_dma,
			.status = ring->status,
			.status_dma = ring->status_dma,
		};

		ret = tdev->ops->ring_init(tdev, &hw);
		if (ret)
			goto err_stop;
	}
	return 0;

err_stop:
	while (i--)
		tdev->ops->ring_fini(tdev, i);
	return ret;
}

/**
 * trn_rings_stop() - the device is gone: stop the rings, fail their jobs
 * @tdev: the device, already unplugged
 *
 * Every job on the hardware fails with -ENODEV; jobs the schedulers still
 * hold fail the same way when they would run. The rings' coherent memory
 * goes now, not with the DRM device: no DMA allocation of the backend's
 * device may outlive its driver (files may keep the DRM device for long).
 */
void trn_rings_stop(struct trn_device *tdev)
{
	unsigned long flags;
	u32 i;

	for (i = 0; i < tdev->num_rings; i++) {
		struct trn_ring *ring = &tdev->rings[i];

		tdev->ops->ring_fini(tdev, i);
		/* Jobs the device finished before it stopped still count. */
		trn_ring_retire(ring, true);
		spin_lock_irqsave(&ring->lock, flags);
		trn_ring_fail_pending(ring, DRM_TRN_STATUS_ABORTED, -ENODEV);
		spin_unlock_irqrestore(&ring->lock, flags);
		trn_ring_free_dma(ring);
	}
}
