// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * Contexts: what an open file is to the device (its address space, its
 * MMU context, its usage figures), and the policy that keeps one tenant
 * from hurting the others: a context whose job hangs (or whose jobs fault
 * too often) is banned, and a closed context's jobs are cancelled.
 *
 * A context is reference counted: the file, each of its queues and each
 * of its mappings hold a reference, so the device context stays until
 * nothing of the file can still touch the device, and closing the file
 * never waits for the device.
 */

#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include <uapi/drm/trn_accel.h>

#include "trn_drv.h"

static void trn_ctx_cancel_work(struct work_struct *work)
{
	struct trn_ctx *ctx = container_of(work, struct trn_ctx, cancel_work);
	bool cookie = dma_fence_begin_signalling();

	trn_rings_cancel(ctx->tdev, ctx);
	trn_uqs_cancel(ctx->tdev, ctx);
	dma_fence_end_signalling(cookie);
	trn_ctx_put(ctx);
}

/**
 * trn_ctx_create() - a new context with an empty address space
 * @tdev: the device
 *
 * Pins the backend module and references the device for as long as the
 * context lives: its teardown calls the backend.
 *
 * Return: the context with one reference, or an ERR_PTR().
 */
struct trn_ctx *trn_ctx_create(struct trn_device *tdev)
{
	struct trn_ctx *ctx;
	int ret;

	/*
	 * The backend's ops and the parent device's release code live in the
	 * backend module: keep it loaded for as long as the context exists.
	 */
	if (!try_module_get(tdev->ops->owner))
		return ERR_PTR(-ENODEV);

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx) {
		ret = -ENOMEM;
		goto err_put_module;
	}
	kref_init(&ctx->refcount);
	ctx->tdev = tdev;
	/* Who opened the file, for post-mortem dumps. */
	ctx->pid = task_tgid_nr(current);
	get_task_comm(ctx->comm, current);
	INIT_WORK(&ctx->cancel_work, trn_ctx_cancel_work);
	ctx->engine_ns = kcalloc(tdev->desc.num_cores, sizeof(*ctx->engine_ns),
				 GFP_KERNEL_ACCOUNT);
	if (!ctx->engine_ns) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = trn_vm_init(ctx);
	if (ret)
		goto err_free_ns;
	drm_dev_get(&tdev->drm);
	return ctx;

err_free_ns:
	kfree(ctx->engine_ns);
err_free:
	kfree(ctx);
err_put_module:
	module_put(tdev->ops->owner);
	return ERR_PTR(ret);
}

static void trn_ctx_release(struct kref *kref)
{
	struct trn_ctx *ctx = container_of(kref, struct trn_ctx, refcount);
	struct trn_device *tdev = ctx->tdev;
	struct module *owner = tdev->ops->owner;

	/* Every queue and mapping is gone: nothing can reach the context. */
	trn_vm_fini(ctx);
	kfree(ctx->engine_ns);
	kfree(ctx);
	drm_dev_put(&tdev->drm);
	module_put(owner);
}

/**
 * trn_ctx_put() - drop a reference to a context
 * @ctx: the context
 *
 * The last reference tears the device context down, which may sleep.
 */
void trn_ctx_put(struct trn_ctx *ctx)
{
	kref_put(&ctx->refcount, trn_ctx_release);
}

/*
 * Flag the context's cancelled jobs on the rings from a work item: the
 * caller holds a ring's lock, or is in atomic context.
 */
static void trn_ctx_cancel_later(struct trn_ctx *ctx)
{
	trn_ctx_get(ctx);
	if (!queue_work(trn_wq, &ctx->cancel_work))
		trn_ctx_put(ctx);	/* queued already, with a reference */
}

static void trn_ctx_ban(struct trn_ctx *ctx, const char *why)
{
	struct trn_device *tdev = ctx->tdev;

	/* Queues created before now refuse jobs; their queued jobs are cancelled. */
	atomic_inc(&ctx->bans);
	atomic64_inc(&tdev->stats.bans);
	trn_event(tdev, TRN_EVENT_BAN);
	/* A tenant can get banned over and over: keep the log bounded. */
	dev_info_ratelimited(tdev->drm.dev, "context %u banned: %s\n",
			     ctx->id, why);
}

/**
 * trn_ctx_job_hung() - a job of a context timed out and was abandoned
 * @ctx: the context
 *
 * The context is banned at once: its other jobs, queued or on the
 * hardware, would most likely hang as well, each costing every context
 * behind it on its ring another timeout. Its jobs are flagged on the rings,
 * and its user-mode queues stopped, before this returns. Called from a
 * timeout handler, which holds no ring lock.
 */
void trn_ctx_job_hung(struct trn_ctx *ctx)
{
	trn_ctx_ban(ctx, "a job timed out");
	trn_rings_cancel(ctx->tdev, ctx);
	trn_uqs_cancel(ctx->tdev, ctx);
}

/**
 * trn_ctx_job_faulted() - a job of a context made an MMU fault
 * @ctx: the context
 *
 * Every TRN_BAN_FAULTS-th fault of the context's jobs bans it: exactly one
 * ban per TRN_BAN_FAULTS faults, however many rings retire faulting jobs
 * at once. May be called with a ring's lock held.
 */
void trn_ctx_job_faulted(struct trn_ctx *ctx)
{
	if (atomic_inc_return(&ctx->faults) != TRN_BAN_FAULTS)
		return;
	atomic_sub(TRN_BAN_FAULTS, &ctx->faults);
	trn_ctx_ban(ctx, "too many MMU faults");
	trn_ctx_cancel_later(ctx);
}

/**
 * trn_ctx_close() - the file of a context is closed: cancel its jobs
 * @ctx: the context
 *
 * Jobs that have not reached the hardware fail with -ESRCH when they
 * would run; jobs on the hardware are flagged, and the device ends them
 * at their next command boundary with the same error. Nothing waits: the
 * context lives on until its last job is freed. A queue that is destroyed
 * cancels its jobs the same way (trn_queue.c).
 */
void trn_ctx_close(struct trn_ctx *ctx)
{
	WRITE_ONCE(ctx->closed, true);
	trn_rings_cancel(ctx->tdev, ctx);
}

/**
 * trn_queue_banned() - whether a queue's context was banned since it was
 * created
 * @queue: the queue
 *
 * Return: true if the queue must refuse jobs and cancel the queued ones.
 */
bool trn_queue_banned(const struct trn_queue *queue)
{
	return atomic_read(&queue->ctx->bans) != queue->bans;
}

/**
 * trn_job_cancel_error() - whether a job must stop, and with what error
 * @job: the job
 *
 * Return: 0 if it may run; -ECANCELED if its context was banned after its
 * queue was created; -ESRCH if its queue was destroyed or its file closed.
 */
int trn_job_cancel_error(const struct trn_job *job)
{
	const struct trn_queue *queue = job->queue;

	if (trn_queue_banned(queue))
		return -ECANCELED;
	if (READ_ONCE(queue->destroyed) || READ_ONCE(queue->ctx->closed))
		return -ESRCH;
	return 0;
}
