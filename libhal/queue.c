// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * Queues and job submission. A queue is the kernel's queue id, its timeline
 * syncobj (point N signals when job N is done) and its status page mapped
 * read-only, so that fences are checked without a system call (fence.c).
 * The kernel bounds a queue to queue_depth unfinished jobs: a submission
 * beyond waits for room, or fails with -EAGAIN when it must not wait.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "trn_accel.h"
#include "trnhal.h"
#include "internal.h"

/* The public constants are the uAPI's, spelled without the DRM prefix. */
_Static_assert(TRN_PRIORITY_LOW == DRM_TRN_PRIORITY_LOW, "priority");
_Static_assert(TRN_PRIORITY_NORMAL == DRM_TRN_PRIORITY_NORMAL, "priority");
_Static_assert(TRN_PRIORITY_HIGH == DRM_TRN_PRIORITY_HIGH, "priority");
_Static_assert(TRN_STATUS_OK == DRM_TRN_STATUS_OK, "status");
_Static_assert(TRN_STATUS_BAD_OPCODE == DRM_TRN_STATUS_BAD_OPCODE, "status");
_Static_assert(TRN_STATUS_BAD_SIZE == DRM_TRN_STATUS_BAD_SIZE, "status");
_Static_assert(TRN_STATUS_BAD_ALIGN == DRM_TRN_STATUS_BAD_ALIGN, "status");
_Static_assert(TRN_STATUS_BAD_ARG == DRM_TRN_STATUS_BAD_ARG, "status");
_Static_assert(TRN_STATUS_CALL_DEPTH == DRM_TRN_STATUS_CALL_DEPTH, "status");
_Static_assert(TRN_STATUS_MMU_FAULT == DRM_TRN_STATUS_MMU_FAULT, "status");
_Static_assert(TRN_STATUS_TIMEOUT == DRM_TRN_STATUS_TIMEOUT, "status");
_Static_assert(TRN_STATUS_ABORTED == DRM_TRN_STATUS_ABORTED, "status");
_Static_assert(TRN_STATUS_UNSUPPORTED == DRM_TRN_STATUS_UNSUPPORTED,
	       "status");
_Static_assert(TRN_STATUS_DEVICE_ERROR == DRM_TRN_STATUS_DEVICE_ERROR,
	       "status");
_Static_assert(TRN_QUEUE_GUILTY == DRM_TRN_QUEUE_GUILTY, "queue state");
_Static_assert(TRN_QUEUE_FAULTED == DRM_TRN_QUEUE_FAULTED, "queue state");
_Static_assert(TRN_QUEUE_BANNED == DRM_TRN_QUEUE_BANNED, "queue state");
_Static_assert(TRN_SUBMIT_MAX_JOBS == DRM_TRN_SUBMIT_MAX_JOBS, "batch size");
/* The first version of the job structure; job_size tells the kernel. */
_Static_assert(sizeof(struct drm_trn_job) == 64, "drm_trn_job");

/*
 * Room on the stack for a submission: one job (or a few) with a handful of
 * buffers and fences, the common case of eager frameworks, needs no malloc.
 */
#define STACK_JOBS	4
#define STACK_HANDLES	64
#define STACK_SYNCS	32

static void syncobj_destroy(trn_device_t *dev, uint32_t handle)
{
	struct drm_syncobj_destroy d;

	memset(&d, 0, sizeof(d));
	d.handle = handle;
	trn_ioctl(dev->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

/* Destroy the kernel's queue, which cancels its unfinished jobs. */
static void queue_ioctl_destroy(trn_device_t *dev, uint32_t id)
{
	struct drm_trn_queue_destroy d;

	memset(&d, 0, sizeof(d));
	d.queue_id = id;
	trn_ioctl(dev->fd, DRM_IOCTL_TRN_QUEUE_DESTROY, &d);
}

/*
 * After QUEUE_DESTROY: from uAPI 1.3 the kernel closed the status buffer
 * handle itself, and closing it again could close a buffer that another
 * thread has been given the same handle number for since. Older drivers
 * leave it open.
 */
static void status_handle_close(trn_device_t *dev, uint32_t handle)
{
	if (dev->uapi_minor < TRN_UAPI_MINOR_BOUNDED)
		trn_gem_close(dev, handle);
}

/* Map the status page of a new queue read-only. */
static int map_status_page(trn_queue_t *q)
{
	struct drm_trn_bo_info bi;
	void *p;
	int ret;

	memset(&bi, 0, sizeof(bi));
	bi.handle = q->status_handle;
	ret = trn_ioctl_errno(q->dev->fd, DRM_IOCTL_TRN_BO_INFO, &bi);
	if (ret)
		return ret;
	if (!bi.mmap_offset ||
	    bi.size < sizeof(struct drm_trn_queue_status_page))
		return -EIO;	/* not what the uAPI promises */
	p = trn_mmap(NULL, bi.size, PROT_READ, MAP_SHARED, q->dev->fd,
		     (off_t)bi.mmap_offset);
	if (p == MAP_FAILED)
		return errno ? -errno : -ENOMEM;
	q->page = p;
	q->page_size = bi.size;
	q->status_va = bi.va;
	return 0;
}

/* Whether a queue made without flags is a user-mode queue. */
static bool want_user_mode(const trn_device_t *dev)
{
	const char *env = getenv("TRNHAL_USER_QUEUES");

	if (!(dev->capabilities & DRM_TRN_CAP_USER_QUEUES) ||
	    dev->uapi_minor < TRN_UAPI_MINOR_USER_QUEUES)
		return false;
	return !env || strcmp(env, "0") != 0;
}

TRN_PUBLIC int trn_queue_create_flags(trn_device_t *dev, uint32_t core,
				      uint32_t priority, uint32_t flags,
				      trn_queue_t **out)
{
	struct drm_trn_queue_create c;
	bool user;
	trn_queue_t *q;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dev || flags & ~(TRN_QUEUE_CREATE_KERNEL | TRN_QUEUE_CREATE_USER) ||
	    flags == (TRN_QUEUE_CREATE_KERNEL | TRN_QUEUE_CREATE_USER))
		return -EINVAL;
	if (trn_handle_stale(dev))
		return -ECHILD;
	if (flags & TRN_QUEUE_CREATE_USER) {
		if (!(dev->capabilities & DRM_TRN_CAP_USER_QUEUES) ||
		    dev->uapi_minor < TRN_UAPI_MINOR_USER_QUEUES)
			return -EOPNOTSUPP;
		user = true;
	} else {
		user = !(flags & TRN_QUEUE_CREATE_KERNEL) &&
		       want_user_mode(dev);
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;

	memset(&c, 0, sizeof(c));
	c.core = core;
	c.priority = priority;
	c.flags = user ? DRM_TRN_QUEUE_USER_MODE : 0;
	ret = trn_ioctl_errno(dev->fd, DRM_IOCTL_TRN_QUEUE_CREATE, &c);
	/* The device runs as many as it can: a kernel queue does the job. */
	if (ret == -ENOSPC && user && !flags) {
		c.flags = 0;
		ret = trn_ioctl_errno(dev->fd, DRM_IOCTL_TRN_QUEUE_CREATE, &c);
	}
	if (ret) {
		free(q);
		return ret;
	}
	q->dev = dev;
	q->id = c.queue_id;
	q->syncobj = c.syncobj;
	q->status_handle = c.status_handle;
	ret = map_status_page(q);
	if (!ret && c.flags & DRM_TRN_QUEUE_USER_MODE)
		ret = trn_uq_open(q, &c);
	if (ret) {
		queue_ioctl_destroy(dev, q->id);
		if (q->page)
			trn_munmap((void *)q->page, q->page_size);
		status_handle_close(dev, q->status_handle);
		syncobj_destroy(dev, q->syncobj);
		free(q);
		return ret;
	}
	pthread_mutex_init(&q->lock, NULL);
	trn_device_get(dev);
	*out = q;
	return 0;
}

TRN_PUBLIC int trn_queue_create(trn_device_t *dev, uint32_t core,
				uint32_t priority, trn_queue_t **out)
{
	return trn_queue_create_flags(dev, core, priority, 0, out);
}

TRN_PUBLIC int trn_queue_is_user_mode(trn_queue_t *q)
{
	return q && q->uq;
}

TRN_PUBLIC void trn_queue_destroy(trn_queue_t *q)
{
	struct trn_queue_import *imp, *next;
	trn_device_t *dev;

	if (!q)
		return;
	dev = q->dev;
	if (trn_handle_stale(dev)) {
		/*
		 * A forked child's copy: the queue and its handles belong to
		 * the parent's file, which the child's descriptor shares, so
		 * nothing may be destroyed there. Only the child's memory.
		 */
		trn_munmap((void *)q->page, q->page_size);
		if (q->uq)
			trn_uq_close(q, true);
		for (imp = q->imports; imp; imp = next) {
			next = imp->next;
			trn_device_close(imp->dev);
			free(imp);
		}
		free(q);
		trn_device_close(dev);
		return;
	}
	/* Waits for nothing; the mapping outlives the handle. */
	queue_ioctl_destroy(dev, q->id);
	trn_munmap((void *)q->page, q->page_size);
	/* The device let go of it: the buffers its jobs held can go. */
	if (q->uq)
		trn_uq_close(q, false);
	status_handle_close(dev, q->status_handle);
	syncobj_destroy(dev, q->syncobj);
	if (q->have_binary_syncobj)
		syncobj_destroy(dev, q->binary_syncobj);
	for (imp = q->imports; imp; imp = next) {
		next = imp->next;
		if (!trn_handle_stale(imp->dev))
			syncobj_destroy(imp->dev, imp->handle);
		trn_device_close(imp->dev);
		free(imp);
	}
	pthread_mutex_destroy(&q->lock);
	free(q);
	trn_device_close(dev);
}

TRN_PUBLIC trn_device_t *trn_queue_device(trn_queue_t *q)
{
	return q ? q->dev : NULL;
}

TRN_PUBLIC uint64_t trn_queue_last_seqno(trn_queue_t *q)
{
	if (!q)
		return 0;
	return __atomic_load_n(&q->last_seqno, __ATOMIC_ACQUIRE);
}

TRN_PUBLIC int trn_queue_wait_idle(trn_queue_t *q, int64_t abs_timeout_ns)
{
	int ret;

	if (!q)
		return -EINVAL;
	if (trn_handle_stale(q->dev))
		return -ECHILD;
	/* Idle is idle: how the last job ended is its fence's business. */
	ret = trn_queue_wait_point(q, trn_queue_last_seqno(q), abs_timeout_ns);
	if (!ret)
		trn_uq_reap(q);
	return ret;
}

TRN_PUBLIC int trn_queue_status(trn_queue_t *q, struct trn_queue_status *st)
{
	struct drm_trn_queue_status s;
	int ret;

	if (!q || !st)
		return -EINVAL;
	if (trn_handle_stale(q->dev))
		return -ECHILD;
	memset(&s, 0, sizeof(s));
	s.queue_id = q->id;
	ret = trn_ioctl_errno(q->dev->fd, DRM_IOCTL_TRN_QUEUE_STATUS, &s);
	if (ret)
		return ret;
	memset(st, 0, sizeof(*st));
	st->submitted_seqno = s.submitted_seqno;
	st->completed_seqno = s.completed_seqno;
	st->jobs_failed = s.jobs_failed;
	st->failed_seqno = s.failed_seqno;
	st->error = -(int32_t)s.error;
	st->status = s.status;
	st->error_offset = s.error_offset;
	st->error_cmd_va = s.error_cmd_va;
	st->fault_va = s.fault_va;
	st->state = s.state;
	st->resets = s.resets;
	return 0;
}

/*
 * The syncobj of @src (a queue of another device) imported into @dev,
 * exported and imported on first use and then cached on @src.
 */
static int import_syncobj(trn_queue_t *src, trn_device_t *dev,
			  uint32_t *handle)
{
	struct trn_queue_import *imp;
	struct drm_syncobj_handle h;
	int ret, fd;

	pthread_mutex_lock(&src->lock);
	for (imp = src->imports; imp; imp = imp->next) {
		if (imp->dev == dev) {
			*handle = imp->handle;
			pthread_mutex_unlock(&src->lock);
			return 0;
		}
	}
	imp = calloc(1, sizeof(*imp));
	if (!imp) {
		ret = -ENOMEM;
		goto out;
	}
	memset(&h, 0, sizeof(h));
	h.handle = src->syncobj;
	h.flags = 0;			/* the syncobj itself, not a sync_file */
	h.fd = -1;
	ret = trn_ioctl_errno(src->dev->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);
	if (ret)
		goto out;
	fd = h.fd;
	memset(&h, 0, sizeof(h));
	h.fd = fd;
	ret = trn_ioctl_errno(dev->fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &h);
	close(fd);
	if (ret)
		goto out;
	imp->dev = dev;
	imp->handle = h.handle;
	imp->next = src->imports;
	src->imports = imp;
	/* Lock order: a queue's lock, then the registry's. */
	trn_device_get(dev);
	*handle = imp->handle;
	imp = NULL;
out:
	pthread_mutex_unlock(&src->lock);
	free(imp);
	return ret;
}

/* One in-fence of a job of @dev from @f; returns 1 if it was added. */
static int fence_sync(trn_device_t *dev, const struct trn_fence *f,
		      struct drm_trn_sync *s)
{
	uint32_t handle;
	int ret;

	if (!f->seqno)
		return 0;		/* always signalled */
	if (!f->queue)
		return -EINVAL;
	if (trn_handle_stale(f->queue->dev))
		return -ECHILD;
	/* A user-mode queue's point exists once it was asked for. */
	ret = trn_queue_need_point(f->queue, f->seqno);
	if (ret)
		return ret;
	if (f->queue->dev == dev) {
		handle = f->queue->syncobj;
	} else {
		ret = import_syncobj(f->queue, dev, &handle);
		if (ret)
			return ret;
	}
	s->handle = handle;
	s->flags = 0;
	s->point = f->seqno;
	return 1;
}

static int raw_sync(const struct trn_syncobj_point *p, struct drm_trn_sync *s)
{
	if (p->reserved)
		return -EINVAL;
	s->handle = p->handle;
	s->flags = 0;
	s->point = p->point;
	return 0;
}

static bool job_reserved_zero(const struct trn_job *j)
{
	size_t i;

	for (i = 0; i < sizeof(j->reserved) / sizeof(j->reserved[0]); i++)
		if (j->reserved[i])
			return false;
	return true;
}

/* Fill the kernel's job @kj from @j, taking arrays from @handles, @syncs. */
static int build_job(trn_queue_t *q, const struct trn_job *j,
		     struct drm_trn_job *kj, uint32_t *handles,
		     struct drm_trn_sync *syncs)
{
	struct drm_trn_sync *in = syncs, *out;
	uint32_t i;
	int ret;

	if (!job_reserved_zero(j) ||
	    (j->bo_count && !j->bos) || (j->wait_count && !j->waits) ||
	    (j->wait_syncobj_count && !j->wait_syncobjs) ||
	    (j->signal_syncobj_count && !j->signal_syncobjs))
		return -EINVAL;
	for (i = 0; i < j->bo_count; i++) {
		if (!j->bos[i])
			return -EINVAL;
		/* A handle is only meaningful in its own device's file. */
		if (trn_bo_device(j->bos[i]) != q->dev)
			return -EXDEV;
		handles[i] = trn_bo_handle(j->bos[i]);
	}
	for (i = 0; i < j->wait_count; i++) {
		ret = fence_sync(q->dev, &j->waits[i], in);
		if (ret < 0)
			return ret;
		in += ret;
	}
	for (i = 0; i < j->wait_syncobj_count; i++, in++) {
		ret = raw_sync(&j->wait_syncobjs[i], in);
		if (ret)
			return ret;
	}
	out = in;
	for (i = 0; i < j->signal_syncobj_count; i++) {
		ret = raw_sync(&j->signal_syncobjs[i], &out[i]);
		if (ret)
			return ret;
	}

	memset(kj, 0, sizeof(*kj));
	kj->cmd_va = j->cmd_va;
	kj->cmd_size = j->cmd_size;
	kj->flags = j->flags;
	kj->bo_handles = j->bo_count ? (uintptr_t)handles : 0;
	kj->bo_count = j->bo_count;
	kj->in_count = (uint32_t)(in - syncs);
	kj->in_syncs = kj->in_count ? (uintptr_t)syncs : 0;
	kj->out_count = j->signal_syncobj_count;
	kj->out_syncs = kj->out_count ? (uintptr_t)out : 0;
	return 0;
}

/* seqno only ever grows, whichever of the racing submitters stores last. */
static void seqno_max(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (cur < v &&
	       !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
}

/*
 * One DRM_IOCTL_TRN_SUBMIT. Not through drmIoctl(), which would retry
 * -EAGAIN, the answer of a full queue to a non-blocking submission,
 * forever. A failed submission queued nothing, so restarting is safe: on
 * -EINTR always (the kernel waits for room, and takes locks,
 * interruptibly), and on -EAGAIN when blocking, as drmIoctl() would.
 */
static int submit_ioctl(trn_device_t *dev, struct drm_trn_submit *s)
{
	int err;

	for (;;) {
		if (trn_ioctl_raw(dev->fd, DRM_IOCTL_TRN_SUBMIT, s) == 0)
			return 0;
		err = errno ? errno : EIO;
		if (err == EINTR ||
		    (err == EAGAIN && !(s->flags & DRM_TRN_SUBMIT_NONBLOCK)))
			continue;
		return -err;
	}
}

static int submit_batch(trn_queue_t *q, const struct trn_job *jobs,
			size_t count, struct trn_fence *fences, bool nonblock)
{
	struct drm_trn_job stack_jobs[STACK_JOBS], *kjobs = stack_jobs;
	struct drm_trn_sync stack_syncs[STACK_SYNCS], *syncs = stack_syncs;
	uint32_t stack_handles[STACK_HANDLES], *handles = stack_handles;
	uint64_t nhandles = 0, nsyncs = 0;
	struct drm_trn_submit s;
	void *heap = NULL;
	size_t i;
	int ret;

	if (!q || !jobs || !count || count > DRM_TRN_SUBMIT_MAX_JOBS)
		return -EINVAL;
	if (trn_handle_stale(q->dev))
		return -ECHILD;
	if (q->uq)
		return trn_uq_submit(q, jobs, count, fences, nonblock);

	/* The kernel's limits, checked before anything is allocated. */
	for (i = 0; i < count; i++) {
		const struct trn_job *j = &jobs[i];

		if (j->bo_count > DRM_TRN_JOB_MAX_BOS ||
		    (uint64_t)j->wait_count + j->wait_syncobj_count >
		    DRM_TRN_JOB_MAX_FENCES ||
		    j->signal_syncobj_count > DRM_TRN_JOB_MAX_FENCES)
			return -EINVAL;
		nhandles += j->bo_count;
		nsyncs += (uint64_t)j->wait_count + j->wait_syncobj_count +
			  j->signal_syncobj_count;
	}
	if (count > STACK_JOBS || nhandles > STACK_HANDLES ||
	    nsyncs > STACK_SYNCS) {
		/* Everything in one block: jobs, then syncs, then handles. */
		uint64_t bytes = (uint64_t)count * sizeof(*kjobs) +
				 nsyncs * sizeof(*syncs) +
				 nhandles * sizeof(*handles);

		if (bytes > SIZE_MAX / 2)
			return -ENOMEM;
		heap = malloc((size_t)bytes ? (size_t)bytes : 1);
		if (!heap)
			return -ENOMEM;
		kjobs = heap;
		syncs = (struct drm_trn_sync *)(kjobs + count);
		handles = (uint32_t *)(syncs + nsyncs);
	}

	for (i = 0; i < count; i++) {
		const struct trn_job *j = &jobs[i];

		ret = build_job(q, j, &kjobs[i], handles, syncs);
		if (ret)
			goto out;
		handles += j->bo_count;
		syncs += (size_t)j->wait_count + j->wait_syncobj_count +
			 j->signal_syncobj_count;
	}

	memset(&s, 0, sizeof(s));
	s.queue_id = q->id;
	s.jobs = (uintptr_t)kjobs;
	s.job_count = (uint32_t)count;
	s.job_size = sizeof(struct drm_trn_job);
	/* Older drivers' queues are unbounded: never full, and no flag. */
	if (nonblock && q->dev->uapi_minor >= TRN_UAPI_MINOR_BOUNDED)
		s.flags = DRM_TRN_SUBMIT_NONBLOCK;
	ret = submit_ioctl(q->dev, &s);
	if (ret)
		goto out;

	seqno_max(&q->last_seqno, kjobs[count - 1].seqno);
	if (fences) {
		for (i = 0; i < count; i++) {
			fences[i].queue = q;
			fences[i].seqno = kjobs[i].seqno;
		}
	}
out:
	free(heap);
	return ret;
}

TRN_PUBLIC int trn_submit_batch(trn_queue_t *q, const struct trn_job *jobs,
				size_t count, struct trn_fence *fences)
{
	return submit_batch(q, jobs, count, fences, false);
}

TRN_PUBLIC int trn_submit(trn_queue_t *q, const struct trn_job *job,
			  struct trn_fence *fence)
{
	return submit_batch(q, job, 1, fence, false);
}

TRN_PUBLIC int trn_try_submit_batch(trn_queue_t *q,
				    const struct trn_job *jobs, size_t count,
				    struct trn_fence *fences)
{
	return submit_batch(q, jobs, count, fences, true);
}

TRN_PUBLIC int trn_try_submit(trn_queue_t *q, const struct trn_job *job,
			      struct trn_fence *fence)
{
	return submit_batch(q, job, 1, fence, true);
}

#ifdef TRNHAL_TESTING
size_t trnhal_test_queue_imports(trn_queue_t *q)
{
	struct trn_queue_import *imp;
	size_t n = 0;

	pthread_mutex_lock(&q->lock);
	for (imp = q->imports; imp; imp = imp->next)
		n++;
	pthread_mutex_unlock(&q->lock);
	return n;
}
#endif
